/* matvec.c: y = A x (row-major A), each y[i] summed in k order: a product
 * with one column. */
void matvec(int m, int n, const float *a, const float *x, float *y) {
  for (int i = 0; i < m; i++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += a[i * n + k] * x[k];
    y[i] = s;
  }
}
