/* post_relu.c: matrix-vector products and a product whose sums the source
 * passes through a ReLU as it stores them (kn_mm_post's act: a compare
 * with a constant and a select of the sum or the constant), in plain C (no
 * `restrict`, pointers from the caller, run-time counts), as test_recog
 * reads them at plain -O2, -O3 and with -fno-unroll-loops.
 * relu_start: y = relu(W x) from the bias as the sum's start (f32);
 * relu_bias: y = relu(W x + bias), the bias added after the sum, then
 * the ReLU (two operations: kn_mm_post's add, then its act); relu_matrix:
 * C = max(A B, 0) written `s < 0 ? 0 : s` (f64); leaky: a leaky ReLU
 * (`s > 0 ? s : 0.01f * s`: kn_mm_act's mul); fmax_lib: libc's fmaxf(s, 0)
 * inlined (a NaN s gives 0, else f32.max); wasm_max: Wasm's f32.max(s, 0)
 * (a NaN s gives s + 0: nan_add); fmin_cap: libc's fminf(s, 1) inlined
 * (`s < 1 ? s : 1`, LLVM's NaN test `fcmp uno s, 0.0`); neg_leaky_var: the slope a run-time
 * value (not a constant: not taken). */
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

void leaky(int m, int n, float *y, const float *W, const float *x) {
  for (int o = 0; o < m; o++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    y[o] = s > 0.0f ? s : 0.01f * s;
  }
}

/* wasi-libc's fmaxf, as the module's own code (test_recog links no libc) */
static float lib_fmaxf(float a, float b) {
  if (a != a) return b;
  if (b != b) return a;
  return __builtin_wasm_max_f32(a, b);
}

void fmax_lib(int m, int n, float *y, const float *W, const float *x, const float *bias) {
  for (int o = 0; o < m; o++) {
    float s = bias[o];
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    y[o] = lib_fmaxf(s, 0.0f);
  }
}

void wasm_max(int m, int n, float *y, const float *W, const float *x) {
  for (int o = 0; o < m; o++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    y[o] = __builtin_wasm_max_f32(s, 0.0f);
  }
}

/* wasi-libc's fminf, as the module's own code */
static float lib_fminf(float a, float b) {
  if (a != a) return b;
  if (b != b) return a;
  return __builtin_wasm_min_f32(a, b);
}

void fmin_cap(int m, int n, float *y, const float *W, const float *x) {
  for (int o = 0; o < m; o++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    y[o] = lib_fminf(s, 1.0f);
  }
}

void neg_leaky_var(int m, int n, float *y, const float *W, const float *x, float slope) {
  for (int o = 0; o < m; o++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    y[o] = s > 0.0f ? s : slope * s;
  }
}
