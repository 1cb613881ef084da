/* mm_i8.c: an int8 product C (i32) = A (i8) * B (i8), N x N (argv[1],
 * default 4096), ikj order; best of argv[2] calls (default 3) after one
 * untimed call; prints TOPS (2 N^3 / t) and a checksum of C. */
#include <string.h>
#include "bench.h"

__attribute__((noinline)) void k_mm_i8(int n, const signed char *a, const signed char *b, int *c) {
  for (int i = 0; i < n; i++)
    for (int p = 0; p < n; p++)
      for (int j = 0; j < n; j++) c[i * n + j] += a[i * n + p] * b[p * n + j];
}

int main(int argc, char **argv) {
  int n = bench_arg(argc, argv, 1, 4096), reps = bench_arg(argc, argv, 2, 3);
  size_t nn = (size_t)n * n;
  signed char *a = bench_alloc(nn), *b = bench_alloc(nn);
  int *c = bench_alloc(nn * 4);
  uint32_t s = 8;
  for (size_t i = 0; i < nn; i++) {
    a[i] = (signed char)bench_next(&s);
    b[i] = (signed char)bench_next(&s);
  }
  memset(c, 0, nn * 4);
  k_mm_i8(n, a, b, c);
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    memset(c, 0, nn * 4);
    double t0 = bench_now();
    k_mm_i8(n, a, b, c);
    double t = bench_now() - t0;
    if (t < best) best = t;
  }
  printf("mm i8 %d: %.3f ms, %.2f TOPS, checksum %016llx\n", n, best * 1e3,
         2.0 * n * n * (double)n / best / 1e12, (unsigned long long)bench_fnv(c, nn * 4));
  return 0;
}
