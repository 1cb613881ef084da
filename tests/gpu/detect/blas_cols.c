/* blas_cols.c: reference SGEMM as ported from Netlib's Fortran
 * (column-major, leading dimensions, C's column zeroed or scaled by beta
 * before the j-l-i product).  The zeroing is a memset call, so the whole
 * j nest is no kernel; the l-i nest inside it, C(:,j) += (alpha*B(l,j)) *
 * A(:,l), is a matrix-vector product of column j, whose arrays start at
 * `C + 4*j*ldc` and `B + 4*j*ldb`: offsets of two live values each. */
void sgemm_nn(int m, int n, int k, float alpha, const float *A, int lda, const float *B, int ldb, float beta,
              float *C, int ldc) {
  for (int j = 0; j < n; j++) {
    if (beta == 0.0f) {
      for (int i = 0; i < m; i++) C[i + j * ldc] = 0.0f;
    } else if (beta != 1.0f) {
      for (int i = 0; i < m; i++) C[i + j * ldc] = beta * C[i + j * ldc];
    }
    for (int l = 0; l < k; l++) {
      float temp = alpha * B[l + j * ldb];
      for (int i = 0; i < m; i++) C[i + j * ldc] += temp * A[i + l * lda];
    }
  }
}

/* SSYRK 'U', 'N': the same over the upper triangle, i <= j */
void ssyrk_un(int n, int k, float alpha, const float *A, int lda, float beta, float *C, int ldc) {
  for (int j = 0; j < n; j++) {
    if (beta == 0.0f) {
      for (int i = 0; i <= j; i++) C[i + j * ldc] = 0.0f;
    } else if (beta != 1.0f) {
      for (int i = 0; i <= j; i++) C[i + j * ldc] = beta * C[i + j * ldc];
    }
    for (int l = 0; l < k; l++) {
      float temp = alpha * A[j + l * lda];
      for (int i = 0; i <= j; i++) C[i + j * ldc] += temp * A[i + l * lda];
    }
  }
}
