/* Sums clamped to a range as they are stored (issue 19 round 7: ReLU6
 * and clamp posts, two of kn_mm_act's compare and selects in a row).
 * relu6_lib: fminf(fmaxf(s, 0), 6) through wasi-libc's fmaxf/fminf (the
 * module's own code); relu6_mixed: fmaxf then f32.min; relu6_wasm:
 * Wasm's f32.min(f32.max(s, 0), 6);
 * clamp_tern: `s < -1 ? -1 : s > 1 ? 1 : s` (f64); clamp_if: the same in
 * two ifs on the sum, from the bias; neg_clamp_var: the bound a run-time
 * value, neg_clamp_cross: the bounds crossed (neither taken). */
static float lib_fmaxf(float a, float b) {
  if (a != a) return b;
  if (b != b) return a;
  return __builtin_wasm_max_f32(a, b);
}

static float lib_fminf(float a, float b) {
  if (a != a) return b;
  if (b != b) return a;
  return __builtin_wasm_min_f32(a, b);
}

void relu6_lib(int m, int n, float *y, const float *W, const float *x) {
  for (int o = 0; o < m; o++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    y[o] = lib_fminf(lib_fmaxf(s, 0.0f), 6.0f);
  }
}

/* libc's fmaxf, then Wasm's f32.min (its NaN test kept: nan_add on the
 * second alone) */
void relu6_mixed(int m, int n, float *y, const float *W, const float *x) {
  for (int o = 0; o < m; o++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    y[o] = __builtin_wasm_min_f32(lib_fmaxf(s, 0.0f), 6.0f);
  }
}

void relu6_wasm(int m, int n, float *y, const float *W, const float *x) {
  for (int o = 0; o < m; o++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    y[o] = __builtin_wasm_min_f32(__builtin_wasm_max_f32(s, 0.0f), 6.0f);
  }
}

void clamp_tern(int m, int n, double *y, const double *W, const double *x) {
  for (int o = 0; o < m; o++) {
    double s = 0.0;
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    y[o] = s < -1.0 ? -1.0 : s > 1.0 ? 1.0 : s;
  }
}

void clamp_if(int m, int n, float *y, const float *W, const float *x, const float *bias) {
  for (int o = 0; o < m; o++) {
    float s = bias[o];
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    if (s > 4.0f) s = 4.0f;
    if (s < -4.0f) s = -4.0f;
    y[o] = s;
  }
}

void neg_clamp_var(int m, int n, float *y, const float *W, const float *x, float hi) {
  for (int o = 0; o < m; o++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    y[o] = s < 0.0f ? 0.0f : s > hi ? hi : s;
  }
}

/* the bounds crossed (`s < 2 ? 2 : s > 1 ? 1 : s`: s = 3 stores 1, which
 * the inner select's 1 then compared with 2 would make 2): not the two
 * compares in a row, no product */
void neg_clamp_cross(int m, int n, float *y, const float *W, const float *x) {
  for (int o = 0; o < m; o++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    y[o] = s < 2.0f ? 2.0f : s > 1.0f ? 1.0f : s;
  }
}
