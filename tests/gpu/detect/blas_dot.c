/* blas_dot.c: the dot-product forms of reference BLAS ported from Netlib's
 * Fortran (column-major, leading dimensions), whose store after the sum
 * is two operations: `C = alpha*temp + beta*C` (SGEMM 'T','N', SSYRK
 * 'L','T', SGEMV 'T' with `long` indices) and `y[j] += alpha*temp` (SGEMV
 * 'T').  test_recog's blas_epilogues. */

void sgemm_tn(int m, int n, int k, float alpha, const float *A, int lda, const float *B, int ldb, float beta, float *C,
              int ldc) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      float temp = 0.0f;
      for (int l = 0; l < k; l++) temp += A[l + i * lda] * B[l + j * ldb];
      if (beta == 0.0f)
        C[i + j * ldc] = alpha * temp;
      else
        C[i + j * ldc] = alpha * temp + beta * C[i + j * ldc];
    }
}

/* the same without the `beta == 0` arm */
void sgemm_tn_beta(int m, int n, int k, float alpha, const float *A, int lda, const float *B, int ldb, float beta,
                   float *C, int ldc) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      float temp = 0.0f;
      for (int l = 0; l < k; l++) temp += A[l + i * lda] * B[l + j * ldb];
      C[i + j * ldc] = alpha * temp + beta * C[i + j * ldc];
    }
}

void sgemv_t(int m, int n, float alpha, const float *A, int lda, const float *x, float *y) {
  for (int j = 0; j < n; j++) {
    float temp = 0.0f;
    for (int i = 0; i < m; i++) temp += A[i + j * lda] * x[i];
    y[j] += alpha * temp;
  }
}

void sgemv_t_long(long m, long n, float alpha, const float *A, long lda, const float *x, float beta, float *y) {
  for (long j = 0; j < n; j++) {
    float temp = 0.0f;
    for (long i = 0; i < m; i++) temp += A[i + j * lda] * x[i];
    y[j] = alpha * temp + beta * y[j];
  }
}

void ssyrk_lt(int n, int k, float alpha, const float *A, int lda, float beta, float *C, int ldc) {
  for (int j = 0; j < n; j++)
    for (int i = j; i < n; i++) {
      float temp = 0.0f;
      for (int l = 0; l < k; l++) temp += A[l + i * lda] * A[l + j * lda];
      if (beta == 0.0f)
        C[i + j * ldc] = alpha * temp;
      else
        C[i + j * ldc] = alpha * temp + beta * C[i + j * ldc];
    }
}

/* look-alike: the arm taken depends on C's element itself, not on a
 * value computed before the nest: no product with a guarded epilogue */
void neg_blend_cond(int m, int n, int k, float alpha, const float *A, int lda, const float *B, int ldb, float beta,
                    float *C, int ldc) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      float temp = 0.0f;
      for (int l = 0; l < k; l++) temp += A[l + i * lda] * B[l + j * ldb];
      if (C[i + j * ldc] == 0.0f)
        C[i + j * ldc] = alpha * temp;
      else
        C[i + j * ldc] = alpha * temp + beta * C[i + j * ldc];
    }
}
