/* post_scaled.c: products whose sums the source divides or scales as it
 * stores them after the k loop (kn_mm_post), in plain C (no `restrict`,
 * fixed row lengths, run-time counts), as test_recog reads them at plain
 * -O2, -O3 and with -fno-unroll-loops.  cov_rect: covariance's product
 * over the whole square, C = D^T D / d, the sum kept in memory after
 * `C[i][j] = 0` and divided in place after the loop; scores: attention
 * scores, a matrix-vector product summed in a register and stored times a
 * scale; scaled_first: `alpha * sum` (LLVM moves the sum first: the
 * multiply commutes); neg_div_by_elem divides by A's diagonal element
 * of C's row (a load: refused before kn_mm_post's elem, an element post
 * since; the name kept), neg_div_then_add adds to
 * the divided sum (no store of sum OP factor). */
#define N 256

void cov_rect(int m, int n, double d, double C[N][N], double D[N][N]) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) {
      C[i][j] = 0.0;
      for (int k = 0; k < n; k++) C[i][j] += D[k][i] * D[k][j];
      C[i][j] /= d;
    }
}

void scores(int t, int hs, float scale, float *att, float *q, float K[N][N]) {
  for (int j = 0; j < t; j++) {
    float s = 0.0f;
    for (int k = 0; k < hs; k++) s += q[k] * K[j][k];
    att[j] = s * scale;
  }
}

void scaled_first(int m, int n, int p, float alpha, float *restrict C, const float *restrict A,
                  const float *restrict B) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float s = 0.0f;
      for (int k = 0; k < p; k++) s += A[i * p + k] * B[k * n + j];
      C[i * n + j] = alpha * s;
    }
}

void neg_div_by_elem(int m, int n, double C[N][N], double A[N][N], double B[N][N]) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) {
      C[i][j] = 0.0;
      for (int k = 0; k < n; k++) C[i][j] += A[i][k] * B[k][j];
      C[i][j] /= A[i][i];
    }
}

void neg_div_then_add(int m, int n, double d, double C[N][N], double A[N][N], double B[N][N]) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) {
      C[i][j] = 0.0;
      for (int k = 0; k < n; k++) C[i][j] += A[i][k] * B[k][j];
      C[i][j] = C[i][j] / d + 1.0;
    }
}
