/* jacobi.c: a 2-D five-point Jacobi stencil iterated between two grids
 * (ping-pong), n x n from argv (default 1024: 4 MB a grid), iterations
 * from argv (default 20).  Only the interior is written; the boundary
 * holds fixed values. */
/* expect-gpu-launches: 20 */
#include "e2e.h"

__attribute__((noinline)) void k_jacobi(int n, const float *a, float *b) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++)
      b[i * n + j] = 0.2f * (a[i * n + j] + a[(i - 1) * n + j] + a[(i + 1) * n + j] +
                             a[i * n + j - 1] + a[i * n + j + 1]);
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 1024), iters = e2e_arg(argc, argv, 2, 20);
  size_t nn = (size_t)n * n;
  float *a = e2e_alloc(nn * sizeof(float)), *b = e2e_alloc(nn * sizeof(float));
  uint32_t s = 4242;
  for (size_t i = 0; i < nn; i++) a[i] = b[i] = e2e_unit(&s);
  for (int it = 0; it < iters; it++) {
    k_jacobi(n, a, b);
    float *t = a;
    a = b;
    b = t;
  }
  e2e_print_f32("grid", a, nn);
  return 0;
}
