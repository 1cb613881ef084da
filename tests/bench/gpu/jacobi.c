/* jacobi.c: one five-point Jacobi step over an n x n f32 grid (argv[1],
 * default 8192: 256 MiB a grid) into a second grid, the 2-D map kernel's
 * figure; repeated (argv[2], default 10) after a first step that migrates
 * the pages, ping-pong; prints the best time and GB/s counting each
 * interior element read once and written once (2 * 4 * (n-2)^2 a step:
 * neighbours come from caches), as map.c counts. */
#include "bench.h"

__attribute__((noinline)) void k_jacobi(int n, const float *a, float *b) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++)
      b[i * n + j] = 0.2f * (a[i * n + j] + a[(i - 1) * n + j] + a[(i + 1) * n + j] +
                             a[i * n + j - 1] + a[i * n + j + 1]);
}

int main(int argc, char **argv) {
  int n = bench_arg(argc, argv, 1, 8192), reps = bench_arg(argc, argv, 2, 10);
  size_t nn = (size_t)n * n;
  float *a = bench_alloc(nn * 4), *b = bench_alloc(nn * 4);
  uint32_t s = 7;
  for (size_t i = 0; i < nn; i++) a[i] = b[i] = bench_unit(&s);
  double t0 = bench_now();
  k_jacobi(n, a, b);
  double first = bench_now() - t0, best = 1e30;
  for (int r = 0; r < reps; r++) {
    t0 = bench_now();
    k_jacobi(n, b, a);
    double t = bench_now() - t0;
    if (t < best) best = t;
    float *tmp = a;
    a = b;
    b = tmp;
  }
  double bytes = 2.0 * 4.0 * (double)(n - 2) * (double)(n - 2);
  printf("jacobi %d x %d: first %.3f ms, best %.3f ms, %.1f GB/s\n", n, n, first * 1e3,
         best * 1e3, bytes / best / 1e9);
  printf("check %a\n", (double)a[nn / 3]);
  return 0;
}
