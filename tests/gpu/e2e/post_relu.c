/* post_relu.c: dense layers and a product whose sums the source passes
 * through a ReLU as it stores them (kn_mm_act), as their users write
 * them: plain C, no `restrict`, arrays from an allocation function,
 * run-time sizes, plain `clang -O2`.  dense_relu: y = relu(W x) from the
 * bias as the sum's start (f32); dense_bias_relu: y = relu(W x + bias),
 * the bias added after the sum, then the ReLU (f32); relu_matrix: C =
 * max(A B, 0) written `s < 0 ? 0 : s` (f64).  Each one launch of the
 * exact kernel, which repeats the source's compare and select: a row of
 * W made of zeros times a negative x from a -0 bias sums to -0, which the
 * ReLU stores as +0 (max.f32 may keep -0), a row with a NaN stores 0
 * (the fnv hash of every byte shows a sign).
 * Calls: the three apart (three launches); small odd sizes of the
 * product (one launch).  Sizes from argv (default n 300, m 200). */
/* clang-flags: -O2 */
/* expect-gpu-launches: 4 */
#include <math.h>

#include "polybench.h"

__attribute__((noinline)) void dense_relu(int m, int n, float *y, const float *W, const float *x, const float *bias) {
  for (int o = 0; o < m; o++) {
    float s = bias[o];
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    y[o] = s > 0.0f ? s : 0.0f;
  }
}

__attribute__((noinline)) void dense_bias_relu(int m, int n, float *y, const float *W, const float *x,
                                               const float *bias) {
  for (int o = 0; o < m; o++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    s += bias[o];
    y[o] = s > 0.0f ? s : 0.0f;
  }
}

__attribute__((noinline)) void relu_matrix(int m, int n, int p, double *C, const double *A, const double *B) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double s = 0.0;
      for (int k = 0; k < p; k++) s += A[i * p + k] * B[k * n + j];
      C[i * n + j] = s < 0.0 ? 0.0 : s;
    }
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 300), m = e2e_arg(argc, argv, 2, 200);
  if (n < 8 || m < 8 || n > 4096 || m > 4096) return 2;
  float *W = new_array(sizeof(float) * m * n), *x = new_array(sizeof(float) * n);
  float *bias = new_array(sizeof(float) * m), *y = new_array(sizeof(float) * m);
  fill_f32(W, (size_t)m * n, 91);
  fill_f32(x, (size_t)n, 92);
  fill_f32(bias, (size_t)m, 93);
  /* row 1: zeros times a negative x from a -0 bias: -0; row 2: a NaN */
  for (int k = 0; k < n; k++) {
    W[n + k] = 0.0f;
    x[k] = x[k] > 0.0f ? -x[k] : x[k];
    if (x[k] == 0.0f) x[k] = -1.0f;
  }
  bias[1] = -0.0f;
  W[2 * n + 3] = NAN;
  dense_relu(m, n, y, W, x, bias);
  e2e_print_f32("dense_relu", y, (size_t)m);
  dense_bias_relu(m, n, y, W, x, bias);
  e2e_print_f32("dense_bias_relu", y, (size_t)m);
  double *A = new_array(sizeof(double) * m * n), *B = new_array(sizeof(double) * n * m);
  double *C = new_array(sizeof(double) * m * m);
  fill_f64(A, (size_t)m * n, 94);
  fill_f64(B, (size_t)n * m, 95);
  relu_matrix(m, m, n, C, A, B);
  e2e_print_f64("relu_matrix", C, (size_t)m * m);
  /* odd sizes: partial tiles, a short k */
  fill_f64(C, (size_t)m * m, 96);
  relu_matrix(m / 4 + 3, m / 8 + 5, n / 16 + 3, C, A, B);
  e2e_print_f64("relu_matrix_small", C, (size_t)m * m);
  return 0;
}
