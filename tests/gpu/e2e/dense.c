/* dense.c: dense layers as plain C writes them, each sum starting from a
 * bias: f32 (exact kernel: the bias, then the products in k order), a
 * batch of 16x16x16 f32 products with a per-product bias row (the small-
 * product kernel), int8 weights with an i32 bias on tensor cores, and the
 * bias overlapping the output, which the runtime must refuse; matrix-
 * vector products (f32 from a bias, i32 wrapping) as products with one
 * column.  M, N, K
 * from argv (default 200 x 96 x 333). */
/* expect-gpu-launches: 5 */
#include <stdint.h>
#include "e2e.h"

__attribute__((noinline)) void k_dense_f32(int m, int n, int k, const float *x, const float *w,
                                           const float *bias, float *y) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float acc = bias[j];
      for (int p = 0; p < k; p++) acc += x[i * k + p] * w[p * n + j];
      y[i * n + j] = acc;
    }
}

__attribute__((noinline)) void k_batch_bias(int nb, const float *a, const float *b, const float *bias,
                                            float *c) {
  for (int t = 0; t < nb; t++)
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 16; j++) {
        float s = bias[t * 16 + j];
        for (int p = 0; p < 16; p++) s += a[t * 256 + i * 16 + p] * b[t * 256 + p * 16 + j];
        c[t * 256 + i * 16 + j] = s;
      }
}

__attribute__((noinline)) void k_dense_i8(int m, int n, int k, const int8_t *x, const int8_t *w,
                                          const int32_t *bias, int32_t *y) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      int32_t acc = bias[j];
      for (int p = 0; p < k; p++) acc += x[i * k + p] * w[p * n + j];
      y[i * n + j] = acc;
    }
}

__attribute__((noinline)) void k_matvec_f32(int m, int k, const float *a, const float *x,
                                            const float *bias, float *y) {
  for (int i = 0; i < m; i++) {
    float s = bias[i];
    for (int p = 0; p < k; p++) s += a[i * k + p] * x[p];
    y[i] = s;
  }
}

__attribute__((noinline)) void k_matvec_i32(int m, int k, const int32_t *a, const int32_t *x, int32_t *y) {
  for (int i = 0; i < m; i++) {
    int32_t s = 0;
    for (int p = 0; p < k; p++) s += a[i * k + p] * x[p];
    y[i] = s;
  }
}

int main(int argc, char **argv) {
  int m = e2e_arg(argc, argv, 1, 200), n = e2e_arg(argc, argv, 2, 96), k = e2e_arg(argc, argv, 3, 333);
  int nb = 300;
  float *x = e2e_alloc((size_t)m * k * 4), *w = e2e_alloc((size_t)k * n * 4);
  float *bias = e2e_alloc((size_t)(nb * 16 + m * n) * 4), *y = e2e_alloc((size_t)m * n * 4);
  float *a = e2e_alloc((size_t)nb * 256 * 4), *b = e2e_alloc((size_t)nb * 256 * 4), *c = e2e_alloc((size_t)nb * 256 * 4);
  int8_t *x8 = e2e_alloc((size_t)m * k), *w8 = e2e_alloc((size_t)k * n);
  int32_t *bias32 = e2e_alloc((size_t)n * 4), *y32 = e2e_alloc((size_t)m * n * 4);
  uint32_t s = 515;
  for (size_t i = 0; i < (size_t)m * k; i++) {
    x[i] = e2e_unit(&s);
    x8[i] = (int8_t)e2e_next(&s);
  }
  for (size_t i = 0; i < (size_t)k * n; i++) {
    w[i] = e2e_unit(&s);
    w8[i] = (int8_t)e2e_next(&s);
  }
  for (int i = 0; i < nb * 16 + m * n; i++) bias[i] = e2e_unit(&s) * 100.0f;
  for (int i = 0; i < nb * 256; i++) {
    a[i] = e2e_unit(&s);
    b[i] = e2e_unit(&s);
  }
  for (int j = 0; j < n; j++) bias32[j] = (int32_t)e2e_next(&s);
  k_dense_f32(m, n, k, x, w, bias, y);
  e2e_print_f32("dense_f32", y, (size_t)m * n);
  k_batch_bias(nb, a, b, bias, c);
  e2e_print_f32("batch_bias", c, (size_t)nb * 256);
  k_dense_i8(m, n, k, x8, w8, bias32, y32);
  e2e_print_i32("dense_i8", y32, (size_t)m * n);
  k_matvec_f32(m, k, x, w, bias, y);
  e2e_print_f32("matvec_f32", y, (size_t)m);
  int32_t *ai = e2e_alloc((size_t)m * k * 4), *xi = e2e_alloc((size_t)k * 4);
  for (size_t i = 0; i < (size_t)m * k; i++) ai[i] = (int32_t)e2e_next(&s);
  for (int p = 0; p < k; p++) xi[p] = (int32_t)e2e_next(&s);
  k_matvec_i32(m, k, ai, xi, y32);
  e2e_print_i32("matvec_i32", y32, (size_t)m);
  /* the output starts inside the bias row it reads: the CPU loop runs */
  float *ov = bias + 7;
  k_dense_f32(m, n, k, x, w, bias, ov);
  e2e_print_f32("overlap", ov, (size_t)m * n);
  return 0;
}
