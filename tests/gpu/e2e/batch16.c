/* batch16.c: a batch of independent 16x16x16 products (a loop around one
 * product), f32 and i8 -> i32, batch count from argv (default 4096: 4 MB
 * per f32 operand array). */
/* expect-gpu-launches: 2 */
/* Each batch is one launch of the small-product kernel (ptx_batch.c):
 * f32 exact, int8 on tensor cores (mma.sync) on sm_80+. */
#include "e2e.h"

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
  int nb = e2e_arg(argc, argv, 1, 4096);
  size_t n = (size_t)nb * 256;
  float *a = e2e_alloc(n * 4), *b = e2e_alloc(n * 4), *c = e2e_alloc(n * 4);
  signed char *qa = e2e_alloc(n), *qb = e2e_alloc(n);
  int *qc = e2e_alloc(n * 4);
  uint32_t s = 16;
  for (size_t i = 0; i < n; i++) {
    a[i] = e2e_unit(&s);
    b[i] = e2e_unit(&s);
    qa[i] = (signed char)e2e_next(&s);
    qb[i] = (signed char)e2e_next(&s);
  }
  k_batch_f32(nb, a, b, c);
  k_batch_i8(nb, qa, qb, qc);
  e2e_print_f32("c", c, n);
  e2e_print_i32("qc", qc, n);
  return 0;
}
