/* syrk_sub.c: PolyBench's syrk and syr2k with their products subtracted
 * from C, as test_recog's subtracted_products reads them at plain -O2 and
 * with -fno-unroll-loops (kr_matmul's negate_product). */
#define N 256

/* syrk with a negative constant alpha (PolyBench's call inlined with its
 * constants): LLVM folds `C + (-0.75 * A) * A'` into `C - (A * 0.75) *
 * A'`; and `C -= A A^T` with no factor: both products over the triangle,
 * the subtraction as a negated factor (-0.75, -1). */
void syrk_neg(int n, int m, double beta, double C[N][N], double A[N][N]) {
  for (int i = 0; i < n; i++) {
    for (int j = 0; j <= i; j++) C[i][j] *= beta;
    for (int k = 0; k < m; k++)
      for (int j = 0; j <= i; j++) C[i][j] += -0.75 * A[i][k] * A[j][k];
  }
}

void syrk_sub(int n, int m, double beta, double C[N][N], double A[N][N]) {
  for (int i = 0; i < n; i++) {
    for (int j = 0; j <= i; j++) C[i][j] *= beta;
    for (int k = 0; k < m; k++)
      for (int j = 0; j <= i; j++) C[i][j] -= A[i][k] * A[j][k];
  }
}

/* syr2k with a negative constant alpha: the second product arrives
 * subtracted (`P1 - (B * 0.75) * A`), the first keeps its -0.75. */
void syr2k_neg(int n, int m, double C[N][N], double A[N][N], double B[N][N]) {
  for (int i = 0; i < n; i++)
    for (int k = 0; k < m; k++)
      for (int j = 0; j <= i; j++) C[i][j] += A[j][k] * -0.75 * B[i][k] + B[j][k] * -0.75 * A[i][k];
}
