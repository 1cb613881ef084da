/* mm_exact.c: exact matrix products with run-time sizes that are not
 * multiples of 16, non-square, each with leading dimensions larger than
 * the logical width: f32 in ijk (dot-product) order, f32 in ikj (axpy)
 * order, f64 ijk and i32 ijk (wrapping).  M, N, K from argv (default
 * 600 x 400 x 500). */
/* expect-gpu-launches: 4 */
#include "e2e.h"

__attribute__((noinline)) void k_mm_f32_ijk(int m, int n, int k, int lda, int ldb, int ldc,
                                            const float *a, const float *b, float *c) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float s = 0.0f;
      for (int p = 0; p < k; p++) s += a[i * lda + p] * b[p * ldb + j];
      c[i * ldc + j] = s;
    }
}

/* C must be zero first; the sum for each element runs in k order too. */
__attribute__((noinline)) void k_mm_f32_ikj(int m, int n, int k, int lda, int ldb, int ldc,
                                            const float *a, const float *b, float *c) {
  for (int i = 0; i < m; i++)
    for (int p = 0; p < k; p++)
      for (int j = 0; j < n; j++) c[i * ldc + j] += a[i * lda + p] * b[p * ldb + j];
}

__attribute__((noinline)) void k_mm_f64_ijk(int m, int n, int k, int lda, int ldb, int ldc,
                                            const double *a, const double *b, double *c) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double s = 0.0;
      for (int p = 0; p < k; p++) s += a[i * lda + p] * b[p * ldb + j];
      c[i * ldc + j] = s;
    }
}

__attribute__((noinline)) void k_mm_i32_ijk(int m, int n, int k, int lda, int ldb, int ldc,
                                            const int *a, const int *b, int *c) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      int s = 0;
      for (int p = 0; p < k; p++) s += a[i * lda + p] * b[p * ldb + j];
      c[i * ldc + j] = s;
    }
}

int main(int argc, char **argv) {
  int m = e2e_arg(argc, argv, 1, 600), n = e2e_arg(argc, argv, 2, 400), k = e2e_arg(argc, argv, 3, 500);
  int lda = k + 5, ldb = n + 3, ldc = n + 7;
  size_t sa = (size_t)m * lda, sb = (size_t)k * ldb, sc = (size_t)m * ldc;
  float *af = e2e_alloc(sa * 4), *bf = e2e_alloc(sb * 4), *c1 = e2e_alloc(sc * 4), *c2 = e2e_alloc(sc * 4);
  double *ad = e2e_alloc(sa * 8), *bd = e2e_alloc(sb * 8), *cd = e2e_alloc(sc * 8);
  int *ai = e2e_alloc(sa * 4), *bi = e2e_alloc(sb * 4), *ci = e2e_alloc(sc * 4);
  uint32_t s = 5;
  for (size_t i = 0; i < sa; i++) {
    af[i] = e2e_unit(&s);
    ad[i] = (double)e2e_unit(&s) * 3.0;
    ai[i] = (int)e2e_next(&s);
  }
  for (size_t i = 0; i < sb; i++) {
    bf[i] = e2e_unit(&s);
    bd[i] = (double)e2e_unit(&s) / 7.0;
    bi[i] = (int)e2e_next(&s);
  }
  for (size_t i = 0; i < sc; i++) c1[i] = cd[i] = ci[i] = 42; /* gaps stay 42 */
  k_mm_f32_ijk(m, n, k, lda, ldb, ldc, af, bf, c1);
  k_mm_f32_ikj(m, n, k, lda, ldb, ldc, af, bf, c2);
  k_mm_f64_ijk(m, n, k, lda, ldb, ldc, ad, bd, cd);
  k_mm_i32_ijk(m, n, k, lda, ldb, ldc, ai, bi, ci);
  e2e_print_f32("c_f32_ijk", c1, sc);
  e2e_print_f32("c_f32_ikj", c2, sc);
  e2e_print_f64("c_f64", cd, sc);
  e2e_print_i32("c_i32", ci, sc);
  /* ijk and ikj sum in the same order: the same bits. */
  int same = 1;
  for (int i = 0; i < m; i++) same &= memcmp(c1 + (size_t)i * ldc, c2 + (size_t)i * ldc, (size_t)n * 4) == 0;
  printf("ijk == ikj: %s\n", same ? "yes" : "no");
  return 0;
}
