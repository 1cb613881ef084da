/* scaled_products.c: PolyBench's gemm and 2mm as users write them (plain
 * C, no `restrict`, sizes as #defines for the arrays and run-time trip
 * counts): products whose operand is scaled (`alpha * A[i][k] * B[k][j]`)
 * or whose sums start from C scaled (`C[i][j] *= beta` before the k loop,
 * in ikj order a loop of its own), and look-alikes that are not. */
#define NI 64
#define NJ 72
#define NK 80

/* gemm of PolyBench 4: C = alpha*A*B + beta*C, i-k-j order. */
void gemm(int ni, int nj, int nk, float alpha, float beta, float C[NI][NJ], float A[NI][NK],
          float B[NK][NJ]) {
  for (int i = 0; i < ni; i++) {
    for (int j = 0; j < nj; j++) C[i][j] *= beta;
    for (int k = 0; k < nk; k++)
      for (int j = 0; j < nj; j++) C[i][j] += alpha * A[i][k] * B[k][j];
  }
}

/* The same without alpha, on pointers with a run-time row length. */
void gemm_beta(int ni, int nj, int nk, float beta, float *C, const float *A, const float *B) {
  for (int i = 0; i < ni; i++) {
    for (int j = 0; j < nj; j++) C[i * nj + j] *= beta;
    for (int k = 0; k < nk; k++)
      for (int j = 0; j < nj; j++) C[i * nj + j] += A[i * nk + k] * B[k * nj + j];
  }
}

/* gemm of PolyBench 3: i-j-k, the sum kept in C. */
void gemm_ijk(int ni, int nj, int nk, double alpha, double beta, double C[NI][NJ], double A[NI][NK],
              double B[NK][NJ]) {
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nj; j++) {
      C[i][j] *= beta;
      for (int k = 0; k < nk; k++) C[i][j] += alpha * A[i][k] * B[k][j];
    }
}

/* 2mm's first product: tmp = alpha*A*B. */
void mm2_first(int ni, int nj, int nk, float alpha, float tmp[NI][NJ], float A[NI][NK], float B[NK][NJ]) {
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nj; j++) {
      tmp[i][j] = 0.0f;
      for (int k = 0; k < nk; ++k) tmp[i][j] += alpha * A[i][k] * B[k][j];
    }
}

/* 2mm's second: D = beta*D + tmp*C. */
void mm2_second(int ni, int nj, int nl, float beta, float tmp[NI][NJ], float C[NJ][NK], float D[NI][NK]) {
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nl; j++) {
      D[i][j] *= beta;
      for (int k = 0; k < nj; ++k) D[i][j] += tmp[i][k] * C[k][j];
    }
}

/* Not a product: the loop before the k loop scales another matrix. */
void neg_other_scaled(int ni, int nj, int nk, float beta, float C[NI][NJ], float E[NI][NJ], float A[NI][NK],
                      float B[NK][NJ]) {
  for (int i = 0; i < ni; i++) {
    for (int j = 0; j < nj; j++) E[i][j] *= beta;
    for (int k = 0; k < nk; k++)
      for (int j = 0; j < nj; j++) C[i][j] += A[i][k] * B[k][j];
  }
}

/* Not a product: the scaling runs over another count than the product's
 * columns (all NJ, not nj). */
void neg_other_count(int ni, int nj, int nk, float beta, float C[NI][NJ], float A[NI][NK], float B[NK][NJ]) {
  for (int i = 0; i < ni; i++) {
    for (int j = 0; j < NJ; j++) C[i][j] *= beta;
    for (int k = 0; k < nk; k++)
      for (int j = 0; j < nj; j++) C[i][j] += A[i][k] * B[k][j];
  }
}

/* Not a product: the loop before the k loop adds, it does not scale. */
void neg_shifted(int ni, int nj, int nk, float beta, float C[NI][NJ], float A[NI][NK], float B[NK][NJ]) {
  for (int i = 0; i < ni; i++) {
    for (int j = 0; j < nj; j++) C[i][j] += beta;
    for (int k = 0; k < nk; k++)
      for (int j = 0; j < nj; j++) C[i][j] += A[i][k] * B[k][j];
  }
}

/* Not a scaled product: the factor is read per row (x[i] * A[i][k]). */
void neg_row_factor(int ni, int nj, int nk, const float *x, float C[NI][NJ], float A[NI][NK], float B[NK][NJ]) {
  for (int i = 0; i < ni; i++)
    for (int k = 0; k < nk; k++)
      for (int j = 0; j < nj; j++) C[i][j] += x[i] * A[i][k] * B[k][j];
}

/* Not a scaled product: C is scaled after the k loop, not before. */
void neg_scaled_after(int ni, int nj, int nk, float beta, float C[NI][NJ], float A[NI][NK], float B[NK][NJ]) {
  for (int i = 0; i < ni; i++) {
    for (int k = 0; k < nk; k++)
      for (int j = 0; j < nj; j++) C[i][j] += A[i][k] * B[k][j];
    for (int j = 0; j < nj; j++) C[i][j] *= beta;
  }
}

/* A scaled product, but not taken yet: in i-j-k order the scaling loop
 * stands before the j loop (sums kept in C start from C * beta); only an
 * i-k-j product takes such a loop.  It must not be taken as `C += A*B`
 * with the scaling left out. */
void neg_ijk_prologue(int ni, int nj, int nk, float beta, float C[NI][NJ], float A[NI][NK], float B[NK][NJ]) {
  for (int i = 0; i < ni; i++) {
    for (int j = 0; j < nj; j++) C[i][j] *= beta;
    for (int j = 0; j < nj; j++)
      for (int k = 0; k < nk; k++) C[i][j] += A[i][k] * B[k][j];
  }
}

/* Not a product: the scaling loop may stop early (a break). */
void neg_scale_break(int ni, int nj, int nk, float beta, float C[NI][NJ], float A[NI][NK], float B[NK][NJ]) {
  for (int i = 0; i < ni; i++) {
    for (int j = 0; j < nj; j++) {
      if (C[i][j] > 100.0f) break;
      C[i][j] *= beta;
    }
    for (int k = 0; k < nk; k++)
      for (int j = 0; j < nj; j++) C[i][j] += A[i][k] * B[k][j];
  }
}
