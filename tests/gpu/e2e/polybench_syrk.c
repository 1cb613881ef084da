/* polybench_syrk.c: PolyBench's syrk (C = alpha A A^T + beta C on the
 * lower triangle, j <= i) as its users write it: plain C, no `restrict`,
 * arrays from an allocation function, run-time sizes, plain `clang -O2`.
 * The nest (each row scaled by beta, then k outer, j <= i inner) is one
 * product over a triangle, one launch per call (kn_mm_tri): f64 as
 * PolyBench has it, and f32, whose sums must keep the CPU's order.  Calls:
 * C and A apart (one launch each, f64 and f32); C inside A (no launch:
 * the output overlaps an input, the nest runs on the CPU as compiled);
 * small odd sizes (one launch).  The elements above the diagonal must
 * keep their values.  Sizes from argv (default n 150, m 170). */
/* clang-flags: -O2 */
/* expect-gpu-launches: 3 */
#include "polybench.h"

#define N 192
#define M 192

__attribute__((noinline)) void kernel_syrk(int n, int m, double alpha, double beta, double C[N][N],
                                           double A[N][M]) {
  int i, j, k;
  for (i = 0; i < n; i++) {
    for (j = 0; j <= i; j++) C[i][j] *= beta;
    for (k = 0; k < m; k++)
      for (j = 0; j <= i; j++) C[i][j] += alpha * A[i][k] * A[j][k];
  }
}

__attribute__((noinline)) void kernel_ssyrk(int n, int m, float alpha, float beta, float C[N][N],
                                            float A[N][M]) {
  int i, j, k;
  for (i = 0; i < n; i++) {
    for (j = 0; j <= i; j++) C[i][j] *= beta;
    for (k = 0; k < m; k++)
      for (j = 0; j <= i; j++) C[i][j] += alpha * A[i][k] * A[j][k];
  }
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 150), m = e2e_arg(argc, argv, 2, 170);
  if (n > N || m > M || n < 8 || m < 8) return 2;
  double(*A)[M] = new_array(sizeof(double) * N * M), (*C)[N] = new_array(sizeof(double) * N * N);
  float(*As)[M] = new_array(sizeof(float) * N * M), (*Cs)[N] = new_array(sizeof(float) * N * N);
  fill_f64(&A[0][0], (size_t)N * M, 61);
  fill_f64(&C[0][0], (size_t)N * N, 62);
  kernel_syrk(n, m, 1.5, 1.2, C, A);
  e2e_print_f64("syrk", &C[0][0], (size_t)N * N);
  fill_f32(&As[0][0], (size_t)N * M, 63);
  fill_f32(&Cs[0][0], (size_t)N * N, 64);
  kernel_ssyrk(n, m, 1.5f, 1.2f, Cs, As);
  e2e_print_f32("ssyrk", &Cs[0][0], (size_t)N * N);
  /* C is A shifted by 7 rows: the product writes what it reads */
  double(*big)[M] = new_array(sizeof(double) * (N + 8) * M);
  fill_f64(&big[0][0], (size_t)(N + 8) * M, 65);
  kernel_syrk(n, m, 1.5, 1.2, (double(*)[N])&big[7][0], big);
  e2e_print_f64("syrk_in_a", &big[0][0], (size_t)(N + 8) * M);
  /* odd sizes: a row count that leaves partial tiles, a short k */
  fill_f64(&C[0][0], (size_t)N * N, 66);
  kernel_syrk(n / 4 + 3, m / 16 + 1, -0.75, 0.5, C, A);
  e2e_print_f64("syrk_small", &C[0][0], (size_t)N * N);
  return 0;
}
