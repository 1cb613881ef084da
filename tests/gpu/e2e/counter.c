/* counter.c: maps whose values use the loop counters: a ramp from a live
 * start, a[i] = a[i-1] + 1 (which LLVM turns into a[0] + i), and a 2-D
 * grid whose loops start at 1 with both counters in the value.  n from
 * argv (default 1 << 20). */
/* expect-gpu-launches: 3 */
#include "e2e.h"

__attribute__((noinline)) void k_ramp(int n, int from, float *a) {
  for (int i = 0; i < n; i++) a[i] = (float)(3 * i + from) * 0.5f;
}

__attribute__((noinline)) void k_prefix(int n, int *a) {
  for (int i = 1; i < n; i++) a[i] = a[i - 1] + 1;
}

__attribute__((noinline)) void k_grid(int rows, int cols, int *g) {
  for (int y = 1; y < rows; y++)
    for (int x = 1; x < cols; x++) g[y * cols + x] = y * 1000003 - x * 7 + (x ^ 5);
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 1 << 20);
  int rows = 1000, cols = n / 1000;
  float *a = e2e_alloc((size_t)n * sizeof(float));
  int *p = e2e_alloc((size_t)n * sizeof(int)), *g = e2e_alloc((size_t)n * sizeof(int));
  uint32_t s = 99;
  for (int i = 0; i < n; i++) p[i] = g[i] = (int)e2e_next(&s);
  k_ramp(n, -12345, a);
  k_prefix(n, p);
  k_grid(rows, cols, g);
  e2e_print_f32("ramp", a, (size_t)n);
  e2e_print_i32("prefix", p, (size_t)n);
  e2e_print_i32("grid", g, (size_t)n);
  return 0;
}
