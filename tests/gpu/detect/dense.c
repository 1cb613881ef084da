/* dense.c: a dense layer whose sums start from a bias row. */
void dense(int m, int n, int k, const float *x, const float *w, const float *bias, float *y) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float acc = bias[j];
      for (int p = 0; p < k; p++) acc += x[i * k + p] * w[p * n + j];
      y[i * n + j] = acc;
    }
}
