/* polybench_syr2k.c: PolyBench's syr2k (C = alpha A B^T + alpha B A^T +
 * beta C on the lower triangle, j <= i) as its users write it: plain C, no
 * `restrict`, arrays from an allocation function, run-time sizes, plain
 * `clang -O2`.  Each term is two products added, `A[j][k] * alpha *
 * B[i][k] + B[j][k] * alpha * A[i][k]`, rounded once, then added to C: the
 * nest (each row scaled by beta, then k outer, j <= i inner) is one
 * product over a triangle with a second product per term (kn_mm_second),
 * one launch per call: f64 as PolyBench has it, and f32, whose sums must
 * keep the CPU's order.  Calls: C, A and B apart (one launch each, f64 and
 * f32); C inside B (no launch: the output overlaps an input, the nest runs
 * on the CPU as compiled); small odd sizes (one launch).  The elements
 * above the diagonal must keep their values.  Sizes from argv (default n
 * 150, m 170). */
/* clang-flags: -O2 */
/* expect-gpu-launches: 3 */
#include "polybench.h"

#define N 192
#define M 192

__attribute__((noinline)) void kernel_syr2k(int n, int m, double alpha, double beta, double C[N][N],
                                            double A[N][M], double B[N][M]) {
  int i, j, k;
  for (i = 0; i < n; i++) {
    for (j = 0; j <= i; j++) C[i][j] *= beta;
    for (k = 0; k < m; k++)
      for (j = 0; j <= i; j++) C[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k];
  }
}

__attribute__((noinline)) void kernel_ssyr2k(int n, int m, float alpha, float beta, float C[N][N],
                                             float A[N][M], float B[N][M]) {
  int i, j, k;
  for (i = 0; i < n; i++) {
    for (j = 0; j <= i; j++) C[i][j] *= beta;
    for (k = 0; k < m; k++)
      for (j = 0; j <= i; j++) C[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k];
  }
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 150), m = e2e_arg(argc, argv, 2, 170);
  if (n > N || m > M || n < 8 || m < 8) return 2;
  double(*A)[M] = new_array(sizeof(double) * N * M), (*B)[M] = new_array(sizeof(double) * N * M);
  double(*C)[N] = new_array(sizeof(double) * N * N);
  float(*As)[M] = new_array(sizeof(float) * N * M), (*Bs)[M] = new_array(sizeof(float) * N * M);
  float(*Cs)[N] = new_array(sizeof(float) * N * N);
  fill_f64(&A[0][0], (size_t)N * M, 71);
  fill_f64(&B[0][0], (size_t)N * M, 72);
  fill_f64(&C[0][0], (size_t)N * N, 73);
  kernel_syr2k(n, m, 1.5, 1.2, C, A, B);
  e2e_print_f64("syr2k", &C[0][0], (size_t)N * N);
  fill_f32(&As[0][0], (size_t)N * M, 74);
  fill_f32(&Bs[0][0], (size_t)N * M, 75);
  fill_f32(&Cs[0][0], (size_t)N * N, 76);
  kernel_ssyr2k(n, m, 1.5f, 1.2f, Cs, As, Bs);
  e2e_print_f32("ssyr2k", &Cs[0][0], (size_t)N * N);
  /* C is B shifted by 5 rows: the product writes what it reads */
  double(*big)[M] = new_array(sizeof(double) * (N + 8) * M);
  fill_f64(&big[0][0], (size_t)(N + 8) * M, 77);
  kernel_syr2k(n, m, 1.5, 1.2, (double(*)[N])&big[5][0], A, big);
  e2e_print_f64("syr2k_in_b", &big[0][0], (size_t)(N + 8) * M);
  /* odd sizes: a row count that leaves partial tiles, a short k */
  fill_f64(&C[0][0], (size_t)N * N, 78);
  kernel_syr2k(n / 4 + 3, m / 16 + 1, -0.75, 0.5, C, A, B);
  e2e_print_f64("syr2k_small", &C[0][0], (size_t)N * N);
  return 0;
}
