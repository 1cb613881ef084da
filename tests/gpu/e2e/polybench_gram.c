/* polybench_gram.c: a Gram matrix's upper triangle, G = A^T A for j >= i
 * (gramschmidt's and the normal equations' product, `s += A[k][i] *
 * A[k][j]` over k in a register, then `G[i][j] = s`), as its users write
 * it: plain C, no `restrict`, arrays from an allocation function, run-time
 * sizes, plain `clang -O2`, which unrolls the k loop by 4 with the
 * counters LLVM's strength reduction leaves (ir_reroll_canon.c).  The nest
 * is one product over an upper triangle, one launch per call (kn_mm_tri's
 * upper): f64, and f32, whose sums must keep the CPU's order.  Calls: G
 * and A apart (one launch each, f64 and f32); G inside A (no launch: the
 * output overlaps an input, the nest runs on the CPU as compiled); small
 * odd sizes (one launch).  The elements below the diagonal must keep
 * their values.  Sizes from argv (default n 150, m 170). */
/* clang-flags: -O2 */
/* expect-gpu-launches: 3 */
#include "polybench.h"

#define N 192
#define M 192

__attribute__((noinline)) void kernel_gram(int n, int m, double G[N][N], double A[M][N]) {
  for (int i = 0; i < n; i++)
    for (int j = i; j < n; j++) {
      double s = 0.0;
      for (int k = 0; k < m; k++) s += A[k][i] * A[k][j];
      G[i][j] = s;
    }
}

__attribute__((noinline)) void kernel_sgram(int n, int m, float G[N][N], float A[M][N]) {
  for (int i = 0; i < n; i++)
    for (int j = i; j < n; j++) {
      float s = 0.0f;
      for (int k = 0; k < m; k++) s += A[k][i] * A[k][j];
      G[i][j] = s;
    }
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 150), m = e2e_arg(argc, argv, 2, 170);
  if (n > N || m > M || n < 8 || m < 8) return 2;
  double(*A)[N] = new_array(sizeof(double) * M * N), (*G)[N] = new_array(sizeof(double) * N * N);
  float(*As)[N] = new_array(sizeof(float) * M * N), (*Gs)[N] = new_array(sizeof(float) * N * N);
  fill_f64(&A[0][0], (size_t)M * N, 71);
  fill_f64(&G[0][0], (size_t)N * N, 72);
  kernel_gram(n, m, G, A);
  e2e_print_f64("gram", &G[0][0], (size_t)N * N);
  fill_f32(&As[0][0], (size_t)M * N, 73);
  fill_f32(&Gs[0][0], (size_t)N * N, 74);
  kernel_sgram(n, m, Gs, As);
  e2e_print_f32("sgram", &Gs[0][0], (size_t)N * N);
  /* G is A shifted by 5 rows: the product writes what it reads */
  double(*big)[N] = new_array(sizeof(double) * (M + 8) * N);
  fill_f64(&big[0][0], (size_t)(M + 8) * N, 75);
  kernel_gram(n, m, &big[5], big);
  e2e_print_f64("gram_in_a", &big[0][0], (size_t)(M + 8) * N);
  /* odd sizes: a row count that leaves partial tiles, a short k (a
   * remainder of 3 after the unrolled trips) */
  fill_f64(&G[0][0], (size_t)N * N, 76);
  kernel_gram(n / 4 + 3, m / 16 + 4, G, A);
  e2e_print_f64("gram_small", &G[0][0], (size_t)N * N);
  return 0;
}
