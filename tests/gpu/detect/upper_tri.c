/* upper_tri.c: products over an upper triangle (kn_mm_tri's upper), in
 * plain C (no `restrict`, fixed row lengths, run-time counts), as
 * test_recog reads them at plain -O2, -O3 and with -fno-unroll-loops.
 * cov_tri: covariance's product, j from i to m, the sum kept in memory
 * after `C[i][j] = 0`, divided in place, then mirrored, `C[j][i] =
 * C[i][j]`; gram_upper: the same without a division or a mirror, the
 * sum in a register.  neg_mirror_shift mirrors to C[j][i + 1] (not the
 * transposed element), neg_upper_bound runs j to p, not the row loop's m,
 * neg_mirror_other mirrors into another array: none is taken as an upper
 * triangle.  corr_tri: correlation's product, the strict triangle j > i
 * over rows i < m - 1, `C[i][i] = 1.0` before each row's j loop, the sum
 * kept in memory and mirrored (kn_mm_tri's diag); neg_diag_shift stores
 * its constant at C[i][i + 1] (an output), neg_diag_value a value read
 * from memory: neither is taken with a diagonal. */
#define N 256

void cov_tri(int m, int n, double d, double C[N][N], double D[N][N]) {
  for (int i = 0; i < m; i++)
    for (int j = i; j < m; j++) {
      C[i][j] = 0.0;
      for (int k = 0; k < n; k++) C[i][j] += D[k][i] * D[k][j];
      C[i][j] /= d;
      C[j][i] = C[i][j];
    }
}

void gram_upper(int m, int n, double C[N][N], double A[N][N]) {
  for (int i = 0; i < m; i++)
    for (int j = i; j < m; j++) {
      double s = 0.0;
      for (int k = 0; k < n; k++) s += A[k][i] * A[k][j];
      C[i][j] = s;
    }
}

void neg_mirror_shift(int m, int n, double d, double C[N][N], double D[N][N]) {
  for (int i = 0; i < m; i++)
    for (int j = i; j < m; j++) {
      C[i][j] = 0.0;
      for (int k = 0; k < n; k++) C[i][j] += D[k][i] * D[k][j];
      C[i][j] /= d;
      C[j][i + 1] = C[i][j];
    }
}

void neg_upper_bound(int m, int p, int n, double C[N][N], double A[N][N]) {
  for (int i = 0; i < m; i++)
    for (int j = i; j < p; j++) {
      double s = 0.0;
      for (int k = 0; k < n; k++) s += A[k][i] * A[k][j];
      C[i][j] = s;
    }
}

void neg_mirror_other(int m, int n, double C[N][N], double E[N][N], double D[N][N]) {
  for (int i = 0; i < m; i++)
    for (int j = i; j < m; j++) {
      double s = 0.0;
      for (int k = 0; k < n; k++) s += D[k][i] * D[k][j];
      C[i][j] = s;
      E[j][i] = s;
    }
}

void corr_tri(int m, int n, double C[N][N], double D[N][N]) {
  for (int i = 0; i < m - 1; i++) {
    C[i][i] = 1.0;
    for (int j = i + 1; j < m; j++) {
      C[i][j] = 0.0;
      for (int k = 0; k < n; k++) C[i][j] += D[k][i] * D[k][j];
      C[j][i] = C[i][j];
    }
  }
  C[m - 1][m - 1] = 1.0;
}

void neg_diag_shift(int m, int n, double C[N][N], double D[N][N]) {
  for (int i = 0; i < m - 1; i++) {
    C[i][i + 1] = 1.0;
    for (int j = i + 1; j < m; j++) {
      C[i][j] = 0.0;
      for (int k = 0; k < n; k++) C[i][j] += D[k][i] * D[k][j];
      C[j][i] = C[i][j];
    }
  }
}

void neg_diag_value(int m, int n, double C[N][N], double D[N][N]) {
  for (int i = 0; i < m - 1; i++) {
    C[i][i] = D[0][i];
    for (int j = i + 1; j < m; j++) {
      C[i][j] = 0.0;
      for (int k = 0; k < n; k++) C[i][j] += D[k][i] * D[k][j];
      C[j][i] = C[i][j];
    }
  }
}
