/* matvec.c: exact matrix-vector products of odd sizes (no multiple of the
 * kernel's 8 outputs or 512-element chunks), each output the in-order sum
 * of the CPU loop: W x (rows contiguous: the 16-byte vector body where
 * they are aligned, the element body where K is odd), x W in ikj order
 * accumulating into y, x W as a sum per column (W read along the
 * outputs), a bias start, f64 and i32.  OUT x K from argv (default
 * 1001 x 1037). */
/* expect-gpu-launches: 8 */
#include "e2e.h"

/* out[i] = sum_j w[i * k + j] * x[j]: one output column */
__attribute__((noinline)) void k_mv(int m, int k, const float *w, const float *x, float *out) {
  for (int i = 0; i < m; i++) {
    float s = 0.0f;
    for (int j = 0; j < k; j++) s += w[i * k + j] * x[j];
    out[i] = s;
  }
}

/* y[j] += x[i] * w[i * n + j] in i, j order: one output row */
__attribute__((noinline)) void k_vm_ikj(int k, int n, const float *x, const float *w, float *y) {
  for (int i = 0; i < k; i++)
    for (int j = 0; j < n; j++) y[j] += x[i] * w[i * n + j];
}

/* out[j] = sum_i x[i] * w[i * n + j], one sum per column */
__attribute__((noinline)) void k_vm_cols(int k, int n, const float *x, const float *w, float *out) {
  for (int j = 0; j < n; j++) {
    float s = 0.0f;
    for (int i = 0; i < k; i++) s += x[i] * w[i * n + j];
    out[j] = s;
  }
}

/* out[i] = bias[i] + sum_j w[i * k + j] * x[j] */
__attribute__((noinline)) void k_mv_bias(int m, int k, const float *w, const float *x, const float *bias,
                                         float *out) {
  for (int i = 0; i < m; i++) {
    float s = bias[i];
    for (int j = 0; j < k; j++) s += w[i * k + j] * x[j];
    out[i] = s;
  }
}

__attribute__((noinline)) void k_mv_f64(int m, int k, const double *w, const double *x, double *out) {
  for (int i = 0; i < m; i++) {
    double s = 0.0;
    for (int j = 0; j < k; j++) s += w[i * k + j] * x[j];
    out[i] = s;
  }
}

__attribute__((noinline)) void k_mv_i32(int m, int k, const int32_t *w, const int32_t *x, int32_t *out) {
  for (int i = 0; i < m; i++) {
    int32_t s = 0;
    for (int j = 0; j < k; j++) s += w[i * k + j] * x[j];
    out[i] = s;
  }
}

int main(int argc, char **argv) {
  int m = e2e_arg(argc, argv, 1, 1001), k = e2e_arg(argc, argv, 2, 1037);
  int k4 = (k + 3) & ~3;   /* rows of 16 bytes: the vector body */
  size_t wn = (size_t)m * k4;
  float *w = e2e_alloc(wn * 4), *x = e2e_alloc((size_t)k4 * 4), *bias = e2e_alloc((size_t)m * 4);
  float *out = e2e_alloc((size_t)(m > k4 ? m : k4) * 4);
  double *wd = e2e_alloc(wn * 8), *xd = e2e_alloc((size_t)k * 8), *outd = e2e_alloc((size_t)m * 8);
  int32_t *wi = e2e_alloc(wn * 4), *xi = e2e_alloc((size_t)k * 4), *outi = e2e_alloc((size_t)m * 4);
  uint32_t s = 77;
  for (size_t i = 0; i < wn; i++) {
    w[i] = e2e_unit(&s);
    wd[i] = (double)e2e_unit(&s) * (1.0 + 1e-9 * (double)(i & 1023));
    wi[i] = (int32_t)e2e_next(&s);
  }
  for (int i = 0; i < k4; i++) x[i] = e2e_unit(&s) * 64.0f;
  for (int i = 0; i < k; i++) {
    xd[i] = (double)e2e_unit(&s);
    xi[i] = (int32_t)e2e_next(&s);
  }
  for (int i = 0; i < m; i++) bias[i] = e2e_unit(&s) * 1000.0f;
  k_mv(m, k, w, x, out);
  e2e_print_f32("mv", out, (size_t)m);
  k_mv(m, k4, w, x, out);
  e2e_print_f32("mv_k4", out, (size_t)m);
  for (int j = 0; j < m; j++) out[j] = 0.5f;
  k_vm_ikj(k, m, x, w, out);
  e2e_print_f32("vm_ikj", out, (size_t)m);
  k_vm_cols(k, m, x, w, out);
  e2e_print_f32("vm_cols", out, (size_t)m);
  k_mv_bias(m, k, w, x, bias, out);
  e2e_print_f32("mv_bias", out, (size_t)m);
  k_mv_f64(m, k, wd, xd, outd);
  e2e_print_f64("mv_f64", outd, (size_t)m);
  k_mv_i32(m, k, wi, xi, outi);
  e2e_print_i32("mv_i32", outi, (size_t)m);
  return 0;
}
