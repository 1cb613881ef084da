/* sums_in_memory.c: products whose running sum clang keeps in memory (no
 * `restrict`: C may alias A or B, so C[i][j] is stored on every k
 * iteration), and two that are not products. */
void matmul_zeroed(int m, int n, int k, const float *a, const float *b, float *c) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      c[i * n + j] = 0;
      for (int p = 0; p < k; p++) c[i * n + j] += a[i * k + p] * b[p * n + j];
    }
}

/* y += A x: the sum starts from y itself. */
void matvec_acc(int m, int k, const float *a, const float *x, float *y) {
  for (int i = 0; i < m; i++)
    for (int p = 0; p < k; p++) y[i] += a[i * k + p] * x[p];
}

/* y = bias, then y += A^T x column by column: the sum starts from bias. */
void matvec_t_bias(int m, int k, const float *a, const float *x, const float *bias, float *y) {
  for (int j = 0; j < m; j++) {
    y[j] = bias[j];
    for (int p = 0; p < k; p++) y[j] += a[p * m + j] * x[p];
  }
}

/* y += x^T A row by row: a product with one row, y[j] summed over p. */
void vecmat(int m, int k, const float *a, const float *x, float *y) {
  for (int p = 0; p < k; p++)
    for (int j = 0; j < m; j++) y[j] += x[p] * a[p * m + j];
}

/* The element scaled after the sum (a third store): a product only with
 * that factor after its sum (kn_mm_post). */
void neg_scaled_after(int m, int k, const float *a, const float *x, float *y) {
  for (int i = 0; i < m; i++) {
    y[i] = 0;
    for (int p = 0; p < k; p++) y[i] += a[i * k + p] * x[p];
    y[i] *= 0.5f;
  }
}

/* Not a product: the stored sum moves with p (a prefix sum). */
void neg_prefix(int m, int k, const float *a, float *y) {
  for (int i = 0; i < m; i++) {
    float s = 0;
    for (int p = 0; p < k; p++) {
      s += a[i * k + p];
      y[i * k + p] = s;
    }
  }
}
