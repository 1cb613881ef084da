/* quant.c: plain C quantised products in the shapes inference code uses,
 * each checked against the CPU: s8 x s8 and u8 x u8 (tensor cores on
 * sm_80+), u8 x s8 (mixed signedness), zero points subtracted inside the
 * sum, a bias as the sum's start with B stored transposed, the ikj order,
 * and int16 inputs.  Sizes are multiples of 16 and odd ones; inputs mostly
 * at the extremes so that the i32 sums wrap.  M, N, K from argv (default
 * 144 x 80 x 4099). */
/* expect-gpu-launches: 4 */
#include <stdint.h>
#include "e2e.h"

#define PRODUCT(NAME, TA, TB)                                                                  \
  __attribute__((noinline)) void NAME(int m, int n, int k, const TA *a, const TB *b, int32_t *c) { \
    for (int i = 0; i < m; i++)                                                                \
      for (int j = 0; j < n; j++) {                                                            \
        int32_t acc = 0;                                                                       \
        for (int p = 0; p < k; p++) acc += a[i * k + p] * b[p * n + j];                        \
        c[i * n + j] = acc;                                                                    \
      }                                                                                        \
  }
PRODUCT(k_ss, int8_t, int8_t)
PRODUCT(k_uu, uint8_t, uint8_t)
PRODUCT(k_us, uint8_t, int8_t)
PRODUCT(k_s16, int16_t, int16_t)

__attribute__((noinline)) void k_zp(int m, int n, int k, const uint8_t *a, const uint8_t *b,
                                    int32_t *c, int za, int zb) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      int32_t acc = 0;
      for (int p = 0; p < k; p++) acc += (a[i * k + p] - za) * (b[p * n + j] - zb);
      c[i * n + j] = acc;
    }
}

__attribute__((noinline)) void k_bias_bt(int m, int n, int k, const int8_t *a, const int8_t *bt,
                                         const int32_t *bias, int32_t *c) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      int32_t acc = bias[j];
      for (int p = 0; p < k; p++) acc += a[i * k + p] * bt[j * k + p];
      c[i * n + j] = acc;
    }
}

__attribute__((noinline)) void k_ikj(int m, int n, int k, const int8_t *a, const int8_t *b,
                                     int32_t *c) {
  for (int i = 0; i < m; i++)
    for (int p = 0; p < k; p++) {
      int32_t x = a[i * k + p];
      for (int j = 0; j < n; j++) c[i * n + j] += x * b[p * n + j];
    }
}

static void fill(uint8_t *p, size_t n, uint32_t *s) {
  for (size_t i = 0; i < n; i++) {
    uint32_t r = e2e_next(s);
    p[i] = (r & 7) ? (uint8_t)((r >> 8) & 1 ? 0x80 : 0x7f) : (uint8_t)(r >> 16);
  }
}

#ifndef QUANT_M /* quant_tc.c sets other defaults */
#define QUANT_M 144
#define QUANT_N 80
#define QUANT_K 4099
#endif

int main(int argc, char **argv) {
  int m = e2e_arg(argc, argv, 1, QUANT_M), n = e2e_arg(argc, argv, 2, QUANT_N);
  int k = e2e_arg(argc, argv, 3, QUANT_K);
  size_t sa = (size_t)m * k, sb = (size_t)k * n, sc = (size_t)m * n;
  uint8_t *a = e2e_alloc(sa), *b = e2e_alloc(sb);
  int16_t *a16 = e2e_alloc(sa * 2), *b16 = e2e_alloc(sb * 2);
  int32_t *c = e2e_alloc(sc * 4), *bias = e2e_alloc((size_t)n * 4);
  uint32_t s = 2024;
  fill(a, sa, &s);
  fill(b, sb, &s);
  for (size_t i = 0; i < sa; i++) a16[i] = (int16_t)(e2e_next(&s) | 0x7000);
  for (size_t i = 0; i < sb; i++) b16[i] = (int16_t)e2e_next(&s);
  for (int j = 0; j < n; j++) bias[j] = (int32_t)e2e_next(&s);
  k_ss(m, n, k, (const int8_t *)a, (const int8_t *)b, c);
  e2e_print_i32("ss", c, sc);
  k_uu(m, n, k, a, b, c);
  e2e_print_i32("uu", c, sc);
  k_us(m, n, k, a, (const int8_t *)b, c);
  e2e_print_i32("us", c, sc);
  k_s16(m, n, k, a16, b16, c);
  e2e_print_i32("s16", c, sc);
  k_zp(m, n, k, a, b, c, 128, 3);
  e2e_print_i32("zp", c, sc);
  k_bias_bt(m, n, k, (const int8_t *)a, (const int8_t *)b, bias, c);
  e2e_print_i32("bias_bt", c, sc);
  for (size_t i = 0; i < sc; i++) c[i] = (int32_t)(i * 2654435761u);
  k_ikj(m, n, k, (const int8_t *)a, (const int8_t *)b, c);
  e2e_print_i32("ikj", c, sc);
  k_ss(m - 1, n - 3, k - 5, (const int8_t *)a, (const int8_t *)b, c);
  e2e_print_i32("ss_odd", c, sc);
  return 0;
}
