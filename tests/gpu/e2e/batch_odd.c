/* batch_odd.c: batches of odd shapes and layouts, each one launch: a live
 * count with live per-product strides (pointers advanced per product,
 * padded), i32 products inlined into the batch loop (ikj, accumulating),
 * u8 x u8 -> i32 accumulating into C near INT32_MAX (the sums wrap), f64,
 * and products too large for the small-product kernel (the exact kernel,
 * products along grid z).  Then a batch whose outputs overlap at run time
 * (the stride is a live value): the runtime refuses it ("two iterations
 * would write the same element"), the CPU runs it. */
/* expect-gpu-launches: 5 */
#include "e2e.h"

__attribute__((noinline)) void k_live(int nb, int sa, int sb, int sc, const float *a, const float *b,
                                      float *c) {
  for (int t = 0; t < nb; t++) {
    const float *pa = a + t * sa, *pb = b + t * sb;
    float *pc = c + t * sc;
    for (int i = 0; i < 7; i++)
      for (int j = 0; j < 13; j++) {
        float s = 0.0f;
        for (int p = 0; p < 5; p++) s += pa[i * 5 + p] * pb[p * 13 + j];
        pc[i * 13 + j] = s;
      }
  }
}

static void mm_i32(const int *a, const int *b, int *c) {
  for (int i = 0; i < 12; i++)
    for (int k = 0; k < 24; k++) {
      int aik = a[i * 24 + k];
      for (int j = 0; j < 20; j++) c[i * 20 + j] += aik * b[k * 20 + j];
    }
}

__attribute__((noinline)) void k_inline(int nb, const int *a, const int *b, int *c) {
  for (int t = 0; t < nb; t++) mm_i32(a + t * 288, b + t * 480, c + t * 240);
}

/* C column-major (c[j * 9 + i]), products 160 elements apart */
__attribute__((noinline)) void k_u8(int nb, const unsigned char *a, const unsigned char *b, int *c) {
  for (int t = 0; t < nb; t++)
    for (int i = 0; i < 9; i++)
      for (int j = 0; j < 17; j++) {
        int s = c[t * 160 + j * 9 + i];
        for (int p = 0; p < 23; p++) s += a[t * 207 + i * 23 + p] * b[t * 391 + p * 17 + j];
        c[t * 160 + j * 9 + i] = s;
      }
}

__attribute__((noinline)) void k_f64(int nb, const double *a, const double *b, double *c) {
  for (int t = 0; t < nb; t++)
    for (int i = 0; i < 8; i++)
      for (int k = 0; k < 8; k++) {
        double aik = a[t * 64 + i * 8 + k];
        for (int j = 0; j < 8; j++) c[t * 64 + i * 8 + j] += aik * b[t * 64 + k * 8 + j];
      }
}

__attribute__((noinline)) void k_big(int nb, const float *a, const float *b, float *c) {
  for (int t = 0; t < nb; t++)
    for (int i = 0; i < 40; i++)
      for (int j = 0; j < 36; j++) {
        float s = 0.0f;
        for (int p = 0; p < 44; p++) s += a[t * 1760 + i * 44 + p] * b[t * 1584 + p * 36 + j];
        c[t * 1440 + i * 36 + j] = s;
      }
}

int main(int argc, char **argv) {
  int nb = e2e_arg(argc, argv, 1, 3000);
  int sa = 7 * 5 + 3, sb = 5 * 13 + 1, sc = 7 * 13 + 2;
  float *a = e2e_alloc((size_t)nb * sa * 4), *b = e2e_alloc((size_t)nb * sb * 4);
  float *c = e2e_alloc((size_t)nb * sc * 4);
  int *ia = e2e_alloc((size_t)nb * 288 * 4), *ib = e2e_alloc((size_t)nb * 480 * 4);
  int *ic = e2e_alloc((size_t)nb * 240 * 4);
  unsigned char *qa = e2e_alloc((size_t)nb * 207), *qb = e2e_alloc((size_t)nb * 391);
  int *qc = e2e_alloc((size_t)nb * 160 * 4);
  double *da = e2e_alloc((size_t)nb * 64 * 8), *db = e2e_alloc((size_t)nb * 64 * 8);
  double *dc = e2e_alloc((size_t)nb * 64 * 8);
  int nbig = 6;
  float *ga = e2e_alloc((size_t)nbig * 1760 * 4), *gb = e2e_alloc((size_t)nbig * 1584 * 4);
  float *gc = e2e_alloc((size_t)nbig * 1440 * 4);
  uint32_t s = 99;
  for (size_t i = 0; i < (size_t)nb * sa; i++) a[i] = e2e_unit(&s);
  for (size_t i = 0; i < (size_t)nb * sb; i++) b[i] = e2e_unit(&s);
  for (size_t i = 0; i < (size_t)nb * sc; i++) c[i] = -1.0f; /* padding stays -1 */
  for (size_t i = 0; i < (size_t)nb * 288; i++) ia[i] = (int)e2e_next(&s);
  for (size_t i = 0; i < (size_t)nb * 480; i++) ib[i] = (int)e2e_next(&s);
  for (size_t i = 0; i < (size_t)nb * 240; i++) ic[i] = (int)e2e_next(&s);
  for (size_t i = 0; i < (size_t)nb * 207; i++) qa[i] = (unsigned char)e2e_next(&s);
  for (size_t i = 0; i < (size_t)nb * 391; i++) qb[i] = (unsigned char)e2e_next(&s);
  for (size_t i = 0; i < (size_t)nb * 160; i++) qc[i] = 0x7fff0000 + (int)(e2e_next(&s) & 0xffff);
  for (size_t i = 0; i < (size_t)nb * 64; i++) {
    da[i] = e2e_unit(&s);
    db[i] = e2e_unit(&s);
    dc[i] = e2e_unit(&s);
  }
  for (size_t i = 0; i < (size_t)nbig * 1760; i++) ga[i] = e2e_unit(&s);
  for (size_t i = 0; i < (size_t)nbig * 1584; i++) gb[i] = e2e_unit(&s);
  k_live(nb, sa, sb, sc, a, b, c);
  k_inline(nb, ia, ib, ic);
  k_u8(nb, qa, qb, qc);
  k_f64(nb, da, db, dc);
  k_big(nbig, ga, gb, gc);
  e2e_print_f32("c", c, (size_t)nb * sc);
  e2e_print_i32("ic", ic, (size_t)nb * 240);
  e2e_print_i32("qc", qc, (size_t)nb * 160);
  e2e_print_f64("dc", dc, (size_t)nb * 64);
  e2e_print_f32("gc", gc, (size_t)nbig * 1440);
  /* outputs 50 elements apart (a live value: argv[2], default 50), 91
   * each: the products overlap, the runtime refuses the kernel */
  int overlap = e2e_arg(argc, argv, 2, 50);
  k_live(nb / 2, sa, sb, overlap, a, b, c);
  e2e_print_f32("overlap", c, (size_t)nb * sc);
  return 0;
}
