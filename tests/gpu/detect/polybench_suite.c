/* polybench_suite.c: PolyBench's matrix-vector and triangular kernels in
 * plain C (no `restrict`, fixed row lengths, run-time counts), as
 * test_recog reads them at plain -O2 and with -fno-unroll-loops.  mvt's
 * two products and syrk's k-j product per row are products; bicg's one
 * nest is two (s = A^T r and q = A p: one kernel each,
 * kernels/kn_recog_split.c), and so is atax's without unrolling (tmp =
 * A x, then y += A^T tmp in a second j loop of the same i loop: two
 * kernels in order, tmp's read in the second forwarded from the first;
 * at plain -O2 the re-roller leaves a straight copy of both loops for n =
 * 1 in the nest, whose stores no part takes); gesummv's is three (tmp =
 * A x and y = B x in one j loop, then y = alpha tmp + beta y after it: a
 * map over i last, reading both parts' outputs forwarded, its write of y
 * forwarded too); syr2k's nest is one product over the triangle with
 * two products summed per term (kn_mm_second, the source's order of
 * adds); the neg_ ones add the two products to C one after the other
 * (neg_syr2k_chain: two roundings into C, no product kernel's order
 * either way), or update the matrix they read (trmm, symm), and no nest
 * of theirs may be taken as a product.  atax_ahead and atax_before are atax reading tmp[i + 1], and
 * tmp[i] as it was before the first loop: two parts as well, but no read
 * of theirs is forwarded (the runtime then refuses them, tmp being
 * written by the first part); gesummv_ahead (tmp[i + 1] after the loop)
 * and gesummv_over_x (x[i], which both products read, written after it)
 * are three parts, with that read, or that write, not forwarded. */
#define N 256

void mvt_x1(int n, double *x1, double A[N][N], double *y1) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) x1[i] = x1[i] + A[i][j] * y1[j];
}

void mvt_x2(int n, double *x2, double A[N][N], double *y2) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) x2[i] = x2[i] + A[j][i] * y2[j];
}

void syrk(int n, int m, double alpha, double beta, double C[N][N], double A[N][N]) {
  for (int i = 0; i < n; i++) {
    for (int j = 0; j <= i; j++) C[i][j] *= beta;
    for (int k = 0; k < m; k++)
      for (int j = 0; j <= i; j++) C[i][j] += alpha * A[i][k] * A[j][k];
  }
}

void bicg(int m, int n, double A[N][N], double *s, double *q, double *p, double *r) {
  for (int i = 0; i < m; i++) s[i] = 0;
  for (int i = 0; i < n; i++) {
    q[i] = 0.0;
    for (int j = 0; j < m; j++) {
      s[j] = s[j] + r[i] * A[i][j];
      q[i] = q[i] + A[i][j] * p[j];
    }
  }
}

void gesummv(int n, double alpha, double beta, double A[N][N], double B[N][N], double *tmp, double *x,
             double *y) {
  for (int i = 0; i < n; i++) {
    tmp[i] = 0.0;
    y[i] = 0.0;
    for (int j = 0; j < n; j++) {
      tmp[i] = A[i][j] * x[j] + tmp[i];
      y[i] = B[i][j] * x[j] + y[i];
    }
    y[i] = alpha * tmp[i] + beta * y[i];
  }
}

void gesummv_ahead(int n, double alpha, double beta, double A[N][N], double B[N][N], double *tmp, double *x,
                   double *y) {
  for (int i = 0; i < n; i++) {
    tmp[i] = 0.0;
    y[i] = 0.0;
    for (int j = 0; j < n; j++) {
      tmp[i] = A[i][j] * x[j] + tmp[i];
      y[i] = B[i][j] * x[j] + y[i];
    }
    y[i] = alpha * tmp[i + 1] + beta * y[i];
  }
}

void gesummv_over_x(int n, double alpha, double beta, double A[N][N], double B[N][N], double *tmp, double *x,
                    double *y) {
  for (int i = 0; i < n; i++) {
    tmp[i] = 0.0;
    y[i] = 0.0;
    for (int j = 0; j < n; j++) {
      tmp[i] = A[i][j] * x[j] + tmp[i];
      y[i] = B[i][j] * x[j] + y[i];
    }
    x[i] = alpha * tmp[i] + beta * y[i];
  }
}

/* bicg with `restrict`: q's sum in a register, stored after the j loop,
 * a product's own store there (no epilogue).  At plain -O2 clang splits
 * the nest's loops (not a single chain): -fno-unroll-loops only. */
void bicg_restrict(int n, double A[restrict N][N], double *restrict s, double *restrict q,
                   const double *restrict p, const double *restrict r) {
  for (int i = 0; i < n; i++) {
    double sum = 0;
    for (int j = 0; j < n; j++) {
      s[j] = s[j] + r[i] * A[i][j];
      sum = sum + A[i][j] * p[j];
    }
    q[i] = sum;
  }
}

void atax(int m, int n, double A[N][N], double *x, double *y, double *tmp) {
  for (int i = 0; i < m; i++) {
    tmp[i] = 0.0;
    for (int j = 0; j < n; j++) tmp[i] = tmp[i] + A[i][j] * x[j];
    for (int j = 0; j < n; j++) y[j] = y[j] + A[i][j] * tmp[i];
  }
}

void atax_ahead(int m, int n, double A[N][N], double *x, double *y, double *tmp) {
  for (int i = 0; i < m; i++) {
    tmp[i] = 0.0;
    for (int j = 0; j < n; j++) tmp[i] = tmp[i] + A[i][j] * x[j];
    for (int j = 0; j < n; j++) y[j] = y[j] + A[i][j] * tmp[i + 1];
  }
}

void atax_before(int m, int n, double A[N][N], double *x, double *y, double *tmp) {
  for (int i = 0; i < m; i++) {
    double old = tmp[i];
    tmp[i] = 0.0;
    for (int j = 0; j < n; j++) tmp[i] = tmp[i] + A[i][j] * x[j];
    for (int j = 0; j < n; j++) y[j] = y[j] + A[i][j] * old;
  }
}

void syr2k(int n, int m, double alpha, double C[N][N], double A[N][N], double B[N][N]) {
  for (int i = 0; i < n; i++)
    for (int k = 0; k < m; k++)
      for (int j = 0; j <= i; j++) C[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k];
}

void neg_syr2k_chain(int n, int m, double alpha, double C[N][N], double A[N][N], double B[N][N]) {
  for (int i = 0; i < n; i++)
    for (int k = 0; k < m; k++)
      for (int j = 0; j <= i; j++) C[i][j] = C[i][j] + A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k];
}

/* Look-alikes of syrk's triangle: j past the diagonal (j <= i + 1) and a
 * j bound from k instead of i: neither is a product over a triangle.
 * (The strict triangle j < i, also refused, is left out here: its rows'
 * products are offloaded without the bounds pass but not with it, which
 * test_offload_modes forbids for this file.) */
void neg_tri_past(int n, int m, double alpha, double C[N][N], double A[N][N]) {
  for (int i = 0; i < n; i++)
    for (int k = 0; k < m; k++)
      for (int j = 0; j <= i + 1; j++) C[i][j] += alpha * A[i][k] * A[j][k];
}

void neg_tri_k_bound(int n, int m, double alpha, double C[N][N], double A[N][N]) {
  for (int i = 0; i < n; i++)
    for (int k = 0; k < m; k++)
      for (int j = 0; j <= k; j++) C[i][j] += alpha * A[i][k] * A[j][k];
}

void neg_trmm(int m, int n, double alpha, double A[N][N], double B[N][N]) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      for (int k = i + 1; k < m; k++) B[i][j] += A[k][i] * B[k][j];
      B[i][j] = alpha * B[i][j];
    }
}

/* symm: C = alpha A B + beta C, A symmetric (its lower half read).  With
 * the bounds pass its nests exist only as their bounds-checked copies
 * (no fast copy): the report still has a line for each (test_offload). */
void neg_symm(int m, int n, double alpha, double beta, double C[N][N], double A[N][N], double B[N][N]) {
  double temp2;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      temp2 = 0;
      for (int k = 0; k < i; k++) {
        C[k][j] += alpha * B[i][j] * A[i][k];
        temp2 += B[k][j] * A[i][k];
      }
      C[i][j] = beta * C[i][j] + alpha * B[i][j] * A[i][i] + alpha * temp2;
    }
}
