/* polybench_scaled.c: products whose sums the source divides or scales as
 * it stores them after the k loop (kn_mm_post), in PolyBench's style:
 * plain C, no `restrict`, arrays from an allocation function, run-time
 * sizes, plain `clang -O2`.  cov_rect: covariance's product over the
 * whole square, cov = data^T data / (n - 1), the sum kept in memory after
 * `cov[i][j] = 0` and divided in place; scores: attention scores, q . K[j]
 * summed in a register and stored times a scale (f32, a matrix-vector
 * product).  One launch per call, the exact kernel dividing or scaling
 * each sum once as the Wasm does.  Calls: apart (f64 /, f32 *); cov
 * inside data (no launch: the output overlaps an input); a negative
 * divisor on odd sizes with zero rows (sums of +0 divided: -0); a divisor
 * of 0 (infinities and NaNs as the CPU makes them).  Sizes from argv
 * (default n 150, m 130). */
/* clang-flags: -O2 */
/* expect-gpu-launches: 4 */
#include "polybench.h"

#define N 192
#define M 192

__attribute__((noinline)) void kernel_cov_rect(int m, int n, double float_n, double data[N][M],
                                               double cov[M][M]) {
  int i, j, k;
  for (i = 0; i < m; i++)
    for (j = 0; j < m; j++) {
      cov[i][j] = 0.0;
      for (k = 0; k < n; k++) cov[i][j] += data[k][i] * data[k][j];
      cov[i][j] /= (float_n - 1.0);
    }
}

__attribute__((noinline)) void kernel_scores(int t, int hs, float scale, float *att, float *q, float K[N][M]) {
  for (int j = 0; j < t; j++) {
    float s = 0.0f;
    for (int k = 0; k < hs; k++) s += q[k] * K[j][k];
    att[j] = s * scale;
  }
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 150), m = e2e_arg(argc, argv, 2, 130);
  if (n > N || m > M || n < 8 || m < 8) return 2;
  double(*data)[M] = new_array(sizeof(double) * N * M), (*cov)[M] = new_array(sizeof(double) * M * M);
  fill_f64(&data[0][0], (size_t)N * M, 91);
  fill_f64(&cov[0][0], (size_t)M * M, 92);
  kernel_cov_rect(m, n, (double)n, data, cov);
  e2e_print_f64("cov_rect", &cov[0][0], (size_t)M * M);
  float(*K)[M] = new_array(sizeof(float) * N * M), *q = new_array(sizeof(float) * M), *att = new_array(sizeof(float) * N);
  fill_f32(&K[0][0], (size_t)N * M, 93);
  fill_f32(q, M, 94);
  kernel_scores(n, m, 0.125f, att, q, K);
  e2e_print_f32("scores", att, N);
  /* cov inside data: the product writes what it reads */
  double(*big)[M] = new_array(sizeof(double) * (N + M) * M);
  fill_f64(&big[0][0], (size_t)(N + M) * M, 95);
  kernel_cov_rect(m, n, (double)n, big, (double(*)[M])&big[5][0]);
  e2e_print_f64("cov_in_data", &big[0][0], (size_t)(N + M) * M);
  /* odd sizes, zero rows of data past n / 3: a negative divisor */
  memset(&data[n / 3][0], 0, sizeof(double) * (size_t)(N - n / 3) * M);
  fill_f64(&cov[0][0], (size_t)M * M, 96);
  kernel_cov_rect(m / 3 + 5, n / 5 + 1, -2.5, data, cov);
  e2e_print_f64("cov_negative", &cov[0][0], (size_t)M * M);
  /* a divisor of 0: float_n - 1.0 == 0 */
  fill_f64(&cov[0][0], (size_t)M * M, 97);
  kernel_cov_rect(m / 2, n / 2, 1.0, data, cov);
  e2e_print_f64("cov_by_zero", &cov[0][0], (size_t)M * M);
  return 0;
}
