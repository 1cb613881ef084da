/* polybench_tri.c: PolyBench's symmetric and triangular products as its
 * users write them: plain C, no `restrict`, f64 arrays from an allocation
 * function of their own, run-time sizes, built with plain `clang -O2`.
 * syrk: C = alpha A A^T + beta C on the lower triangle (j <= i), the row
 * scaled by beta first, k-j order; syr2k: the same with A B^T + B A^T;
 * symm: C = alpha A B + beta C with A symmetric, only its lower triangle
 * read; trmm: B = alpha A^T B with A unit lower triangular, B updated in
 * place.  syrk and syr2k are one launch each (products over the triangle,
 * syr2k with two products per term); symm and trmm stay on the CPU.
 * Sizes from argv (default n 150, m 170). */
/* clang-flags: -O2 */
/* expect-gpu-launches: 2 */
#include "polybench.h"

#define N 192
#define M 192

/* C (n x n, lower) = alpha A A^T + beta C, A n x m. */
__attribute__((noinline)) void kernel_syrk(int n, int m, double alpha, double beta, double C[N][N],
                                           double A[N][M]) {
  int i, j, k;
  for (i = 0; i < n; i++) {
    for (j = 0; j <= i; j++) C[i][j] *= beta;
    for (k = 0; k < m; k++)
      for (j = 0; j <= i; j++) C[i][j] += alpha * A[i][k] * A[j][k];
  }
}

/* C (n x n, lower) = alpha (A B^T + B A^T) + beta C. */
__attribute__((noinline)) void kernel_syr2k(int n, int m, double alpha, double beta, double C[N][N],
                                            double A[N][M], double B[N][M]) {
  int i, j, k;
  for (i = 0; i < n; i++) {
    for (j = 0; j <= i; j++) C[i][j] *= beta;
    for (k = 0; k < m; k++)
      for (j = 0; j <= i; j++) C[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k];
  }
}

/* C (m x n) = alpha A B + beta C, A (m x m) symmetric, its lower half. */
__attribute__((noinline)) void kernel_symm(int m, int n, double alpha, double beta, double C[M][N],
                                           double A[M][M], double B[M][N]) {
  int i, j, k;
  double temp2;
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      temp2 = 0;
      for (k = 0; k < i; k++) {
        C[k][j] += alpha * B[i][j] * A[i][k];
        temp2 += B[k][j] * A[i][k];
      }
      C[i][j] = beta * C[i][j] + alpha * B[i][j] * A[i][i] + alpha * temp2;
    }
}

/* B (m x n) = alpha A^T B, A (m x m) unit lower triangular. */
__attribute__((noinline)) void kernel_trmm(int m, int n, double alpha, double A[M][M], double B[M][N]) {
  int i, j, k;
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      for (k = i + 1; k < m; k++) B[i][j] += A[k][i] * B[k][j];
      B[i][j] = alpha * B[i][j];
    }
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 150), m = e2e_arg(argc, argv, 2, 170);
  if (n > N || m > M) return 2;
  double(*A)[M] = new_array(sizeof(double) * N * M), (*B)[M] = new_array(sizeof(double) * N * M);
  double(*C)[N] = new_array(sizeof(double) * N * N), (*C2)[N] = new_array(sizeof(double) * N * N);
  double(*S)[M] = new_array(sizeof(double) * M * M), (*Bs)[N] = new_array(sizeof(double) * M * N);
  double(*Cs)[N] = new_array(sizeof(double) * M * N), (*Bt)[N] = new_array(sizeof(double) * M * N);
  fill_f64(&A[0][0], (size_t)N * M, 51);
  fill_f64(&B[0][0], (size_t)N * M, 52);
  fill_f64(&C[0][0], (size_t)N * N, 53);
  fill_f64(&C2[0][0], (size_t)N * N, 54);
  fill_f64(&S[0][0], (size_t)M * M, 55);
  fill_f64(&Bs[0][0], (size_t)M * N, 56);
  fill_f64(&Cs[0][0], (size_t)M * N, 57);
  fill_f64(&Bt[0][0], (size_t)M * N, 58);
  kernel_syrk(n, m, 1.5, 1.2, C, A);
  e2e_print_f64("syrk", &C[0][0], (size_t)N * N);
  kernel_syr2k(n, m, 1.5, 1.2, C2, A, B);
  e2e_print_f64("syr2k", &C2[0][0], (size_t)N * N);
  kernel_symm(m, n, 1.5, 1.2, Cs, S, Bs);
  e2e_print_f64("symm", &Cs[0][0], (size_t)M * N);
  kernel_trmm(m, n, 1.5, S, Bt);
  e2e_print_f64("trmm", &Bt[0][0], (size_t)M * N);
  return 0;
}
