/* matmul_ijk_i32.c: C = A * B, i32, i-j-k order, sizes passed at run time. */
void matmul(const int *a, const int *b, int *c, int m, int n, int k) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      int s = 0;
      for (int p = 0; p < k; p++) s += a[i * k + p] * b[p * n + j];
      c[i * n + j] = s;
    }
}
