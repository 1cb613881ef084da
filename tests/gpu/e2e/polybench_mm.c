/* polybench_mm.c: PolyBench's 3mm and doitgen as its users write them:
 * plain C, no `restrict`, arrays from an allocation function of their
 * own, run-time sizes, built with plain `clang -O2`.  3mm (f32): E = A B,
 * F = C D, G = E F, each sum kept in memory after `E[i][j] = 0`; doitgen
 * (f64): for every (r, q), sum[p] = A[r][q][:] . C4[:][p], then the row
 * A[r][q][:] = sum, a product over a batch of rows through a buffer.
 * Sizes from argv (default ni 180, nj 170, nk 190, nl 160, nm 150; nr 20,
 * nq 24, np 40). */
/* clang-flags: -O2 */
/* expect-gpu-launches: 3 */
#include "polybench.h"

#define NI 200
#define NJ 200
#define NK 200
#define NL 200
#define NM 200
#define NR 32
#define NQ 32
#define NP 64

/* G = (A B) (C D). */
__attribute__((noinline)) void kernel_3mm(int ni, int nj, int nk, int nl, int nm, float E[NI][NJ],
                                          float A[NI][NK], float B[NK][NJ], float F[NJ][NL], float C[NJ][NM],
                                          float D[NM][NL], float G[NI][NL]) {
  int i, j, k;
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++) {
      E[i][j] = 0.0f;
      for (k = 0; k < nk; ++k) E[i][j] += A[i][k] * B[k][j];
    }
  for (i = 0; i < nj; i++)
    for (j = 0; j < nl; j++) {
      F[i][j] = 0.0f;
      for (k = 0; k < nm; ++k) F[i][j] += C[i][k] * D[k][j];
    }
  for (i = 0; i < ni; i++)
    for (j = 0; j < nl; j++) {
      G[i][j] = 0.0f;
      for (k = 0; k < nj; ++k) G[i][j] += E[i][k] * F[k][j];
    }
}

/* A[r][q][:] = A[r][q][:] C4, through sum. */
__attribute__((noinline)) void kernel_doitgen(int nr, int nq, int np, double A[NR][NQ][NP], double C4[NP][NP],
                                              double sum[NP]) {
  int r, q, p, s;
  for (r = 0; r < nr; r++)
    for (q = 0; q < nq; q++) {
      for (p = 0; p < np; p++) {
        sum[p] = 0.0;
        for (s = 0; s < np; s++) sum[p] += A[r][q][s] * C4[s][p];
      }
      for (p = 0; p < np; p++) A[r][q][p] = sum[p];
    }
}

int main(int argc, char **argv) {
  int ni = e2e_arg(argc, argv, 1, 180), nj = e2e_arg(argc, argv, 2, 170), nk = e2e_arg(argc, argv, 3, 190);
  int nl = e2e_arg(argc, argv, 4, 160), nm = e2e_arg(argc, argv, 5, 150);
  int nr = e2e_arg(argc, argv, 6, 20), nq = e2e_arg(argc, argv, 7, 24), np = e2e_arg(argc, argv, 8, 40);
  if (ni > NI || nj > NJ || nk > NK || nl > NL || nm > NM || nr > NR || nq > NQ || np > NP) return 2;
  float(*E)[NJ] = new_array(sizeof(float) * NI * NJ), (*A)[NK] = new_array(sizeof(float) * NI * NK);
  float(*B)[NJ] = new_array(sizeof(float) * NK * NJ), (*F)[NL] = new_array(sizeof(float) * NJ * NL);
  float(*C)[NM] = new_array(sizeof(float) * NJ * NM), (*D)[NL] = new_array(sizeof(float) * NM * NL);
  float(*G)[NL] = new_array(sizeof(float) * NI * NL);
  double(*X)[NQ][NP] = new_array(sizeof(double) * NR * NQ * NP), (*C4)[NP] = new_array(sizeof(double) * NP * NP);
  double *sum = new_array(sizeof(double) * NP);
  fill_f32(&A[0][0], (size_t)NI * NK, 41);
  fill_f32(&B[0][0], (size_t)NK * NJ, 42);
  fill_f32(&C[0][0], (size_t)NJ * NM, 43);
  fill_f32(&D[0][0], (size_t)NM * NL, 44);
  fill_f64(&X[0][0][0], (size_t)NR * NQ * NP, 45);
  fill_f64(&C4[0][0], (size_t)NP * NP, 46);
  kernel_3mm(ni, nj, nk, nl, nm, E, A, B, F, C, D, G);
  e2e_print_f32("3mm_E", &E[0][0], (size_t)NI * NJ);
  e2e_print_f32("3mm_F", &F[0][0], (size_t)NJ * NL);
  e2e_print_f32("3mm_G", &G[0][0], (size_t)NI * NL);
  kernel_doitgen(nr, nq, np, X, C4, sum);
  e2e_print_f64("doitgen_A", &X[0][0][0], (size_t)NR * NQ * NP);
  e2e_print_f64("doitgen_sum", sum, NP);
  return 0;
}
