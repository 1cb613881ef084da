/* copies.c: loops whose copies clang unrolls completely are loops
 * themselves (the j loop of a small product, each copy a k loop and the
 * store of its sum); the re-roll (ir_reroll_copies.c) puts them back in a
 * loop where it proves them one loop's iterations. */
#include <stdio.h>

/* 16 rows of 8 i8 x i8 sums of 32 terms each: the j loop unrolled (8 k
 * loops, each by two), as tests/gpu/detect/batch_i8_ptr.c */
__attribute__((noinline)) void rows_i8(const signed char *a, const signed char *b, int *c) {
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 8; j++) {
      int s = 0;
      for (int p = 0; p < 32; p++) s += a[i * 32 + p] * b[p * 8 + j];
      c[i * 8 + j] = s;
    }
}

/* a batch of them, pointers advanced per product */
__attribute__((noinline)) void batch_i8(int nb, const signed char *a, const signed char *b, int *c, int sa, int sc) {
  for (int t = 0; t < nb; t++) {
    const signed char *pa = a + t * sa;
    int *pc = c + t * sc;
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 8; j++) {
        int s = 0;
        for (int p = 0; p < 32; p++) s += pa[i * 32 + p] * b[p * 8 + j];
        pc[i * 8 + j] = s;
      }
  }
}

/* kept: copy j sums j + 30 terms (the copies' trip counts differ) */
__attribute__((noinline)) void tri_i8(const signed char *a, const signed char *b, int *c) {
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 8; j++) {
      int s = 0;
      for (int p = 0; p < j + 30; p++) s += a[i * 40 + p] * b[p * 8 + j];
      c[i * 8 + j] = s;
    }
}

/* kept: copy j stores at j ^ 1 (not one step from copy to copy) */
__attribute__((noinline)) void swap_i8(const signed char *a, const signed char *b, int *c) {
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 8; j++) {
      int s = 0;
      for (int p = 0; p < 32; p++) s += a[i * 32 + p] * b[p * 8 + j];
      c[i * 8 + (j ^ 1)] = s;
    }
}

/* kept: copy j's sum starts from j (the inits differ) */
__attribute__((noinline)) void bias_i8(const signed char *a, const signed char *b, int *c) {
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 8; j++) {
      int s = j;
      for (int p = 0; p < 32; p++) s += a[i * 32 + p] * b[p * 8 + j];
      c[i * 8 + j] = s;
    }
}

static signed char qa[4 * 16 * 40], qb[40 * 8];
static int qc[4 * 16 * 64];

int main(void) {
  unsigned s = 7;
  for (int i = 0; i < (int)sizeof qa; i++) qa[i] = (signed char)((s = s * 1103515245u + 12345u) >> 24);
  for (int i = 0; i < (int)sizeof qb; i++) qb[i] = (signed char)((s = s * 1103515245u + 12345u) >> 24);
  long long sum = 0;
  rows_i8(qa, qb, qc);
  for (int i = 0; i < 128; i++) sum = sum * 31 + qc[i];
  printf("rows_i8 %lld %d %d\n", sum, qc[0], qc[127]);
  batch_i8(4, qa, qb, qc, 16 * 32, 16 * 8);
  sum = 0;
  for (int i = 0; i < 4 * 128; i++) sum = sum * 31 + qc[i];
  printf("batch_i8 %lld %d %d\n", sum, qc[1], qc[511]);
  tri_i8(qa, qb, qc);
  sum = 0;
  for (int i = 0; i < 128; i++) sum = sum * 31 + qc[i];
  printf("tri_i8 %lld\n", sum);
  swap_i8(qa, qb, qc);
  sum = 0;
  for (int i = 0; i < 128; i++) sum = sum * 31 + qc[i];
  printf("swap_i8 %lld\n", sum);
  bias_i8(qa, qb, qc);
  sum = 0;
  for (int i = 0; i < 128; i++) sum = sum * 31 + qc[i];
  printf("bias_i8 %lld\n", sum);
  return 0;
}
