/* post_elem.c: matrix-vector products and a product whose sums the source
 * combines with an element of another array at the output's own index as
 * it stores them (kn_mm_post's elem), in plain C (no `restrict`, pointers
 * from the caller, run-time counts), as test_recog reads them at plain
 * -O2, -O3 and with -fno-unroll-loops.  residual: r = b - A x (f64, the
 * sum the right operand); bias_after: y = W x + bias, the bias added
 * after the sum (not its start: another rounding order); plus_matrix: C
 * = A B + D elementwise after each sum (f32); neg_two_ops: y[i] = s +
 * b[i] * c (two operations after the sum: no element post; since issue
 * 19 round 10 an element added, scaled: kn_mm_blend); neg_two_consts:
 * y[i] = s / d + 1.0f (no element: no product); residual_add:
 * x[i] += W o after the sum (C's own element: no read range of its own). */
void residual(int n, double *r, const double *b, const double *A, const double *x) {
  for (int i = 0; i < n; i++) {
    double s = 0.0;
    for (int k = 0; k < n; k++) s += A[i * n + k] * x[k];
    r[i] = b[i] - s;
  }
}

void bias_after(int m, int n, float *y, const float *W, const float *x, const float *bias) {
  for (int o = 0; o < m; o++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    y[o] = s + bias[o];
  }
}

void plus_matrix(int m, int n, int p, float *C, const float *A, const float *B, const float *D) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float s = 0.0f;
      for (int k = 0; k < p; k++) s += A[i * p + k] * B[k * n + j];
      C[i * n + j] = s + D[i * n + j];
    }
}

void neg_two_ops(int m, int n, float c, float *y, const float *W, const float *x, const float *b) {
  for (int i = 0; i < m; i++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[i * n + k] * x[k];
    y[i] = s + b[i] * c;
  }
}

void neg_two_consts(int m, int n, float d, float *y, const float *W, const float *x) {
  for (int i = 0; i < m; i++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[i * n + k] * x[k];
    y[i] = s / d + 1.0f;
  }
}

/* x += W o after the sum (a residual connection): the output's own
 * element, read by the thread that stores it. */
void residual_add(int m, int n, float *xv, const float *W, const float *o) {
  for (int i = 0; i < m; i++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[i * n + k] * o[k];
    xv[i] += s;
  }
}

/* A conv1d with its bias added after the sum (a live value: kn_mm_post's
 * add), its input a Toeplitz matrix (row and column strides 1). */
void conv1d_bias(int n, int taps, const float *in, const float *w, float bias, float *out) {
  for (int i = 0; i < n - taps + 1; i++) {
    float s = 0.0f;
    for (int k = 0; k < taps; k++) s += in[i + k] * w[k];
    out[i] = s + bias;
  }
}
