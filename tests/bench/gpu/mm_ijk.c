/* mm_ijk.c: the textbook matrix product, C[i][j] = sum over k of
 * A[i][k] * B[k][j] in ijk order with the sum in a local, N x N f32
 * (argv[1], default 1024): a whole program (generate, multiply once,
 * checksum) whose wall time gpu.sh compares between TWASM_DEVICE=cpu and
 * gpu.  On the CPU this order walks B by columns and cannot be
 * vectorised without reassociating the sum; the GPU kernel is the same
 * exact one as for ikj. */
#include "bench.h"

__attribute__((noinline)) void k_mm(int n, const float *a, const float *b, float *c) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      float s = 0.0f;
      for (int k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
      c[i * n + j] = s;
    }
}

int main(int argc, char **argv) {
  int n = bench_arg(argc, argv, 1, 1024);
  size_t nn = (size_t)n * n;
  float *a = bench_alloc(nn * 4), *b = bench_alloc(nn * 4), *c = bench_alloc(nn * 4);
  uint32_t s = 7;
  for (size_t i = 0; i < nn; i++) {
    a[i] = bench_unit(&s);
    b[i] = bench_unit(&s);
  }
  double t0 = bench_now();
  k_mm(n, a, b, c);
  double t = bench_now() - t0;
  printf("mm_ijk f32 %d: %.3f ms, %.3f TFLOP/s, checksum %016llx\n", n, t * 1e3,
         2.0 * n * n * (double)n / t / 1e12, (unsigned long long)bench_fnv(c, nn * 4));
  return 0;
}
