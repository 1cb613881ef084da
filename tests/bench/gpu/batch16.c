/* batch16.c: batched 16x16x16 products, f32 and i8 -> i32, argv[1]
 * products per batch (default 65536: 64 MiB per f32 operand array), best
 * of argv[2] batches (default 5) after one untimed; prints products per
 * second. */
#include "bench.h"

__attribute__((noinline)) void k_batch_f32(int nb, const float *a, const float *b, float *c) {
  for (int t = 0; t < nb; t++)
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 16; j++) {
        float s = 0.0f;
        for (int p = 0; p < 16; p++) s += a[t * 256 + i * 16 + p] * b[t * 256 + p * 16 + j];
        c[t * 256 + i * 16 + j] = s;
      }
}

__attribute__((noinline)) void k_batch_i8(int nb, const signed char *a, const signed char *b, int *c) {
  for (int t = 0; t < nb; t++)
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 16; j++) {
        int s = 0;
        for (int p = 0; p < 16; p++) s += a[t * 256 + i * 16 + p] * b[t * 256 + p * 16 + j];
        c[t * 256 + i * 16 + j] = s;
      }
}

int main(int argc, char **argv) {
  int nb = bench_arg(argc, argv, 1, 65536), reps = bench_arg(argc, argv, 2, 5);
  size_t n = (size_t)nb * 256;
  float *a = bench_alloc(n * 4), *b = bench_alloc(n * 4), *c = bench_alloc(n * 4);
  signed char *qa = bench_alloc(n), *qb = bench_alloc(n);
  int *qc = bench_alloc(n * 4);
  uint32_t s = 16;
  for (size_t i = 0; i < n; i++) {
    a[i] = bench_unit(&s);
    b[i] = bench_unit(&s);
    qa[i] = (signed char)bench_next(&s);
    qb[i] = (signed char)bench_next(&s);
  }
  double best_f = 1e30, best_q = 1e30;
  for (int r = 0; r <= reps; r++) {
    double t0 = bench_now();
    k_batch_f32(nb, a, b, c);
    double t1 = bench_now();
    k_batch_i8(nb, qa, qb, qc);
    double t2 = bench_now();
    if (r && t1 - t0 < best_f) best_f = t1 - t0;
    if (r && t2 - t1 < best_q) best_q = t2 - t1;
  }
  printf("batch16 f32 %d products: %.3f ms, %.3g products/s\n", nb, best_f * 1e3, nb / best_f);
  printf("batch16 i8 %d products: %.3f ms, %.3g products/s\n", nb, best_q * 1e3, nb / best_q);
  printf("checksum %016llx %016llx\n", (unsigned long long)bench_fnv(c, n * 4),
         (unsigned long long)bench_fnv(qc, n * 4));
  return 0;
}
