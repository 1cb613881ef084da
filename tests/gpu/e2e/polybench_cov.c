/* polybench_cov.c: PolyBench's covariance, correlation and gemver as its
 * users write them: plain C, no `restrict`, f64 arrays from an allocation
 * function of their own, run-time sizes, built with plain `clang -O2`.
 * covariance: column means subtracted, then cov = data^T data / (n - 1)
 * over the upper triangle (j >= i), each element mirrored below;
 * correlation: the same on data normalised by its columns' deviations,
 * the diagonal set to 1; gemver: A += u1 v1^T + u2 v2^T, x += beta A^T y,
 * x += z, w += alpha A x.  Launches: covariance's centring map and its
 * product over the upper triangle, divided and mirrored (kn_mm_tri's
 * upper and mirror), correlation's product over the strict triangle (j
 * from i + 1, mirrored, `corr[i][i] = 1.0` its diagonal: kn_mm_tri's
 * diag), gemver's two maps and two matrix-vector products.  Sizes from
 * argv (default n 160, m 140). */
/* clang-flags: -O2 */
/* expect-gpu-launches: 7 */
#include <math.h>
#include "polybench.h"

#define N 192
#define M 192

/* cov (m x m) = data^T data / (n - 1), data (n x m) centred first. */
__attribute__((noinline)) void kernel_covariance(int m, int n, double float_n, double data[N][M],
                                                 double cov[M][M], double mean[M]) {
  int i, j, k;
  for (j = 0; j < m; j++) {
    mean[j] = 0.0;
    for (i = 0; i < n; i++) mean[j] += data[i][j];
    mean[j] /= float_n;
  }
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++) data[i][j] -= mean[j];
  for (i = 0; i < m; i++)
    for (j = i; j < m; j++) {
      cov[i][j] = 0.0;
      for (k = 0; k < n; k++) cov[i][j] += data[k][i] * data[k][j];
      cov[i][j] /= (float_n - 1.0);
      cov[j][i] = cov[i][j];
    }
}

/* corr (m x m): data^T data on data centred and scaled by its columns. */
__attribute__((noinline)) void kernel_correlation(int m, int n, double float_n, double data[N][M],
                                                  double corr[M][M], double mean[M], double stddev[M]) {
  int i, j, k;
  double eps = 0.1;
  for (j = 0; j < m; j++) {
    mean[j] = 0.0;
    for (i = 0; i < n; i++) mean[j] += data[i][j];
    mean[j] /= float_n;
  }
  for (j = 0; j < m; j++) {
    stddev[j] = 0.0;
    for (i = 0; i < n; i++) stddev[j] += (data[i][j] - mean[j]) * (data[i][j] - mean[j]);
    stddev[j] /= float_n;
    stddev[j] = sqrt(stddev[j]);
    stddev[j] = stddev[j] <= eps ? 1.0 : stddev[j];
  }
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++) {
      data[i][j] -= mean[j];
      data[i][j] /= sqrt(float_n) * stddev[j];
    }
  for (i = 0; i < m - 1; i++) {
    corr[i][i] = 1.0;
    for (j = i + 1; j < m; j++) {
      corr[i][j] = 0.0;
      for (k = 0; k < n; k++) corr[i][j] += (data[k][i] * data[k][j]);
      corr[j][i] = corr[i][j];
    }
  }
  corr[m - 1][m - 1] = 1.0;
}

/* A += u1 v1^T + u2 v2^T; x += beta A^T y + z; w += alpha A x. */
__attribute__((noinline)) void kernel_gemver(int n, double alpha, double beta, double A[N][N], double u1[N],
                                             double v1[N], double u2[N], double v2[N], double w[N],
                                             double x[N], double y[N], double z[N]) {
  int i, j;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) A[i][j] = A[i][j] + u1[i] * v1[j] + u2[i] * v2[j];
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) x[i] = x[i] + beta * A[j][i] * y[j];
  for (i = 0; i < n; i++) x[i] = x[i] + z[i];
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) w[i] = w[i] + alpha * A[i][j] * x[j];
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 160), m = e2e_arg(argc, argv, 2, 140);
  if (n > N || m > M || n < 2 || m < 2) return 2;
  double(*data)[M] = new_array(sizeof(double) * N * M), (*cov)[M] = new_array(sizeof(double) * M * M);
  double *mean = new_array(sizeof(double) * M), *stddev = new_array(sizeof(double) * M);
  fill_f64(&data[0][0], (size_t)N * M, 71);
  fill_f64(&cov[0][0], (size_t)M * M, 72);
  kernel_covariance(m, n, (double)n, data, cov, mean);
  e2e_print_f64("covariance", &cov[0][0], (size_t)M * M);
  e2e_print_f64("cov_data", &data[0][0], (size_t)N * M);
  fill_f64(&data[0][0], (size_t)N * M, 73);
  fill_f64(&cov[0][0], (size_t)M * M, 74);
  kernel_correlation(m, n, (double)n, data, cov, mean, stddev);
  e2e_print_f64("correlation", &cov[0][0], (size_t)M * M);
  e2e_print_f64("corr_stddev", stddev, M);
  double(*A)[N] = new_array(sizeof(double) * N * N);
  double *v[8];
  for (int i = 0; i < 8; i++) {
    v[i] = new_array(sizeof(double) * N);
    fill_f64(v[i], N, 80 + i);
  }
  fill_f64(&A[0][0], (size_t)N * N, 79);
  kernel_gemver(n, 1.5, 1.2, A, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
  e2e_print_f64("gemver_A", &A[0][0], (size_t)N * N);
  e2e_print_f64("gemver_x", v[5], N);
  e2e_print_f64("gemver_w", v[4], N);
  return 0;
}
