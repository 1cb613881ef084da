/* qlayer_i8.c: a quantised dense layer: i8 activations (M x K) times i8
 * weights (K x N) into i32 accumulators, then bias add and requantisation
 * back to i8 (a 2-D map with saturation).  K is long (default 160000) and
 * the inputs mostly +-127/-128, so many i32 sums wrap: the GPU must wrap
 * the same way.  The product is taken twice, in ijk and in ikj order.
 * M, N, K from argv (default 20 x 72 x 160000: 14 MB of inputs). */
/* expect-gpu-launches: 3 */
#include "e2e.h"

__attribute__((noinline)) void k_qmm_ijk(int m, int n, int k, const signed char *a,
                                         const signed char *b, int *c) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      int s = 0;
      for (int p = 0; p < k; p++) s += a[i * k + p] * b[p * n + j];
      c[i * n + j] = s;
    }
}

__attribute__((noinline)) void k_qmm_ikj(int m, int n, int k, const signed char *a,
                                         const signed char *b, int *c) {
  for (int i = 0; i < m; i++)
    for (int p = 0; p < k; p++)
      for (int j = 0; j < n; j++) c[i * n + j] += a[i * k + p] * b[p * n + j];
}

/* out = sat8(((c + bias[j]) * mul) >> 20) (arithmetic shift of the i64). */
__attribute__((noinline)) void k_requant(int m, int n, const int *c, const int *bias, int mul,
                                         signed char *out) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      long long v = ((long long)(c[i * n + j] + bias[j]) * mul) >> 20;
      out[i * n + j] = (signed char)(v > 127 ? 127 : v < -128 ? -128 : v);
    }
}

int main(int argc, char **argv) {
  int m = e2e_arg(argc, argv, 1, 20), n = e2e_arg(argc, argv, 2, 72), k = e2e_arg(argc, argv, 3, 160000);
  signed char *a = e2e_alloc((size_t)m * k), *b = e2e_alloc((size_t)k * n);
  int *c1 = e2e_alloc((size_t)m * n * 4), *c2 = e2e_alloc((size_t)m * n * 4);
  int *bias = e2e_alloc((size_t)n * 4);
  signed char *out = e2e_alloc((size_t)m * n);
  uint32_t s = 8;
  /* Mostly the extremes, signs correlated by row/column so sums grow. */
  for (size_t i = 0; i < (size_t)m * k; i++) {
    uint32_t r = e2e_next(&s);
    a[i] = (r & 31) ? ((i / k) & 1 ? -128 : 127) : (signed char)(r >> 24);
  }
  for (size_t i = 0; i < (size_t)k * n; i++) {
    uint32_t r = e2e_next(&s);
    b[i] = (r & 15) ? ((i % n) % 3 ? -128 : 127) : (signed char)(r >> 24);
  }
  for (int j = 0; j < n; j++) bias[j] = (int)(e2e_next(&s) >> 12) - (1 << 19);
  k_qmm_ijk(m, n, k, a, b, c1);
  k_qmm_ikj(m, n, k, a, b, c2);
  k_requant(m, n, c1, bias, 3, out);
  int wrapped = 0;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      long long exact = 0;
      for (int p = 0; p < k; p++) exact += a[(size_t)i * k + p] * b[(size_t)p * n + j];
      wrapped += exact != (long long)c1[i * n + j];
    }
  printf("sums that wrapped: %d of %d\n", wrapped, m * n);
  e2e_print_i32("c", c1, (size_t)m * n);
  printf("ijk == ikj: %s\n", memcmp(c1, c2, (size_t)m * n * 4) == 0 ? "yes" : "no");
  e2e_print_bytes("out", out, (size_t)m * n);
  return 0;
}
