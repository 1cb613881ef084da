/* neg_oob.c: a map whose input runs past the end of linear memory at run
 * time: the run-time range check keeps it off the GPU and the CPU loop
 * traps at the first bad address, with the same message and status as
 * without a GPU.  What was printed (and flushed) before stays the same. */
/* expect-gpu-launches: 1 */
/* expect-status: 134 */
#include "e2e.h"

__attribute__((noinline)) void k_scale(int n, float a, const float *x, float *y) {
  for (int i = 0; i < n; i++) y[i] = a * x[i];
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 1 << 20);
  float *x = e2e_alloc(n * sizeof(float)), *y = e2e_alloc(n * sizeof(float));
  uint32_t s = 404;
  for (int i = 0; i < n; i++) x[i] = e2e_unit(&s);
  k_scale(n, 3.0f, x, y); /* in bounds: may run on the GPU */
  e2e_print_f32("y", y, n);
  /* The last n / 2 elements of memory, then n / 2 past its end. */
  size_t end = (size_t)__builtin_wasm_memory_size(0) * 65536;
  const float *tail = (const float *)(end - (size_t)(n / 2) * sizeof(float));
  printf("reading %d floats from 0x%zx, memory ends at 0x%zx\n", n, (size_t)tail, end);
  fflush(stdout);
  k_scale(n, 2.0f, tail, y);
  printf("not reached: %a\n", (double)y[n - 1]);
  return 0;
}
