/* mm.c: an exact f32 product C = A * B, N x N (argv[1], default 1024), in
 * ikj order; times the product call (best of argv[2] calls, default 1,
 * after one untimed call when more than one) and prints TFLOP/s (2 N^3 /
 * t) and a checksum of C.  Built with --tensor-cores=tf32 (mm_tf32) the
 * same source measures the tf32 tensor-core path. */
#include <string.h>
#include "bench.h"

#ifdef MM_IJK
#define MM_NAME "mm_ijk"
__attribute__((noinline)) void k_mm(int n, const float *a, const float *b, float *c) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      float s = 0.0f;
      for (int k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
      c[i * n + j] = s;
    }
}
#else
#define MM_NAME "mm"
__attribute__((noinline)) void k_mm(int n, const float *a, const float *b, float *c) {
  for (int i = 0; i < n; i++)
    for (int p = 0; p < n; p++)
      for (int j = 0; j < n; j++) c[i * n + j] += a[i * n + p] * b[p * n + j];
}
#endif

int main(int argc, char **argv) {
  int n = bench_arg(argc, argv, 1, 1024), reps = bench_arg(argc, argv, 2, 1);
  size_t nn = (size_t)n * n;
  float *a = bench_alloc(nn * 4), *b = bench_alloc(nn * 4), *c = bench_alloc(nn * 4);
  uint32_t s = 7;
  for (size_t i = 0; i < nn; i++) {
    a[i] = bench_unit(&s);
    b[i] = bench_unit(&s);
  }
  if (reps > 1) {
    memset(c, 0, nn * 4);
    k_mm(n, a, b, c);
  }
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    memset(c, 0, nn * 4);
    double t0 = bench_now();
    k_mm(n, a, b, c);
    double t = bench_now() - t0;
    if (t < best) best = t;
  }
  printf(MM_NAME " f32 %d: %.3f ms, %.3f TFLOP/s, checksum %016llx\n", n, best * 1e3,
         2.0 * n * n * (double)n / best / 1e12, (unsigned long long)bench_fnv(c, nn * 4));
  return 0;
}
