/* post_relu.c: matrix-vector products and a product whose sums the source
 * passes through a ReLU as it stores them (kn_mm_post's act: a compare
 * with a constant and a select of the sum or the constant), in plain C (no
 * `restrict`, pointers from the caller, run-time counts), as test_recog
 * reads them at plain -O2, -O3 and with -fno-unroll-loops.
 * relu_start: y = relu(W x) from the bias as the sum's start (f32);
 * relu_bias: y = relu(W x + bias), the bias added after the sum, then
 * the ReLU (two operations: kn_mm_post's add, then its act); relu_matrix:
 * C = max(A B, 0) written `s < 0 ? 0 : s` (f64); neg_leaky: a leaky ReLU
 * (`s > 0 ? s : 0.01f * s`: the other arm no constant, not a product). */
void relu_start(int m, int n, float *y, const float *W, const float *x, const float *bias) {
  for (int o = 0; o < m; o++) {
    float s = bias[o];
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    y[o] = s > 0.0f ? s : 0.0f;
  }
}

void relu_bias(int m, int n, float *y, const float *W, const float *x, const float *bias) {
  for (int o = 0; o < m; o++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    s += bias[o];
    y[o] = s > 0.0f ? s : 0.0f;
  }
}

void relu_matrix(int m, int n, int p, double *C, const double *A, const double *B) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double s = 0.0;
      for (int k = 0; k < p; k++) s += A[i * p + k] * B[k * n + j];
      C[i * n + j] = s < 0.0 ? 0.0 : s;
    }
}

void neg_leaky(int m, int n, float *y, const float *W, const float *x) {
  for (int o = 0; o < m; o++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    y[o] = s > 0.0f ? s : 0.01f * s;
  }
}
