/* polybench.c: PolyBench's gemm and 2mm kernels as its users write them:
 * plain C, no `restrict`, arrays of #defined sizes from an allocation
 * function of their own, run-time trip counts, built with plain `clang
 * -O2`.  gemm (PolyBench 4) scales a row of C by beta in a loop of its
 * own before the k loop and multiplies alpha * A[i][k] * B[k][j] in i-k-j
 * order; gemm_ijk (PolyBench 3, f64) scales C[i][j] before summing into
 * it; 2mm computes tmp = alpha * A * B, then D = beta * D + tmp * C.  Each
 * nest is one product on the exact kernel, which scales each A element
 * and each start once, as the source does: 4 launches.  Sizes from argv
 * (default ni 200, nj 190, nk 210, nl 180: not multiples of the unroll
 * factors, below the #defined bounds). */
/* clang-flags: -O2 */
/* expect-gpu-launches: 4 */
#include "polybench.h"

#define NI 256
#define NJ 256
#define NK 256
#define NL 256

/* C = alpha * A * B + beta * C, i-k-j order. */
__attribute__((noinline)) void kernel_gemm(int ni, int nj, int nk, float alpha, float beta, float C[NI][NJ],
                                           float A[NI][NK], float B[NK][NJ]) {
  int i, j, k;
  for (i = 0; i < ni; i++) {
    for (j = 0; j < nj; j++) C[i][j] *= beta;
    for (k = 0; k < nk; k++)
      for (j = 0; j < nj; j++) C[i][j] += alpha * A[i][k] * B[k][j];
  }
}

/* The same in i-j-k order, in f64, the sum kept in C. */
__attribute__((noinline)) void kernel_gemm_ijk(int ni, int nj, int nk, double alpha, double beta,
                                               double C[NI][NJ], double A[NI][NK], double B[NK][NJ]) {
  int i, j, k;
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++) {
      C[i][j] *= beta;
      for (k = 0; k < nk; k++) C[i][j] += alpha * A[i][k] * B[k][j];
    }
}

/* D = alpha * A * B * C + beta * D, through tmp. */
__attribute__((noinline)) void kernel_2mm(int ni, int nj, int nk, int nl, float alpha, float beta,
                                          float tmp[NI][NJ], float A[NI][NK], float B[NK][NJ],
                                          float C[NJ][NL], float D[NI][NL]) {
  int i, j, k;
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++) {
      tmp[i][j] = 0.0f;
      for (k = 0; k < nk; ++k) tmp[i][j] += alpha * A[i][k] * B[k][j];
    }
  for (i = 0; i < ni; i++)
    for (j = 0; j < nl; j++) {
      D[i][j] *= beta;
      for (k = 0; k < nj; ++k) D[i][j] += tmp[i][k] * C[k][j];
    }
}

int main(int argc, char **argv) {
  int ni = e2e_arg(argc, argv, 1, 200), nj = e2e_arg(argc, argv, 2, 190);
  int nk = e2e_arg(argc, argv, 3, 210), nl = e2e_arg(argc, argv, 4, 180);
  if (ni > NI || nj > NJ || nk > NK || nl > NL) return 2;
  float(*C)[NJ] = new_array(sizeof(float) * NI * NJ), (*A)[NK] = new_array(sizeof(float) * NI * NK);
  float(*B)[NJ] = new_array(sizeof(float) * NK * NJ), (*tmp)[NJ] = new_array(sizeof(float) * NI * NJ);
  float(*C2)[NL] = new_array(sizeof(float) * NJ * NL), (*D)[NL] = new_array(sizeof(float) * NI * NL);
  double(*Cd)[NJ] = new_array(sizeof(double) * NI * NJ), (*Ad)[NK] = new_array(sizeof(double) * NI * NK);
  double(*Bd)[NJ] = new_array(sizeof(double) * NK * NJ);
  fill_f32(&C[0][0], (size_t)NI * NJ, 21);
  fill_f32(&A[0][0], (size_t)NI * NK, 22);
  fill_f32(&B[0][0], (size_t)NK * NJ, 23);
  fill_f32(&C2[0][0], (size_t)NJ * NL, 24);
  fill_f32(&D[0][0], (size_t)NI * NL, 25);
  fill_f64(&Cd[0][0], (size_t)NI * NJ, 26);
  fill_f64(&Ad[0][0], (size_t)NI * NK, 27);
  fill_f64(&Bd[0][0], (size_t)NK * NJ, 28);
  kernel_gemm(ni, nj, nk, 1.5f, 1.2f, C, A, B);
  kernel_gemm_ijk(ni, nj, nk, 1.5, 1.2, Cd, Ad, Bd);
  kernel_2mm(ni, nj, nk, nl, 1.5f, 1.2f, tmp, A, B, C2, D);
  e2e_print_f32("gemm", &C[0][0], (size_t)NI * NJ);
  e2e_print_f64("gemm_ijk", &Cd[0][0], (size_t)NI * NJ);
  e2e_print_f32("2mm_tmp", &tmp[0][0], (size_t)NI * NJ);
  e2e_print_f32("2mm", &D[0][0], (size_t)NI * NL);
  return 0;
}
