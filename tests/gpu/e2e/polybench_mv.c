/* polybench_mv.c: PolyBench's matrix-vector kernels as its users write
 * them: plain C, no `restrict`, f64 arrays from an allocation function of
 * their own, run-time sizes, built with plain `clang -O2`.  mvt: x1 += A
 * y1 and x2 += A^T y2, each a nest of its own, the sums kept in memory;
 * atax: y = A^T (A x), tmp[i] and the update of y in one i loop (two
 * kernels in order, kn_recog_split.c's kr_split_loops); bicg: s =
 * A^T r and q = A p, both in one j loop; gesummv: y = alpha A x + beta B
 * x, two sums in one j loop.  Sizes from argv (default n 300, m 280). */
/* clang-flags: -O2 */
/* expect-gpu-launches: 9 */
#include "polybench.h"

#define N 320
#define M 320

/* x1 = x1 + A y1; x2 = x2 + A^T y2. */
__attribute__((noinline)) void kernel_mvt(int n, double x1[N], double x2[N], double y_1[N], double y_2[N],
                                          double A[N][N]) {
  int i, j;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) x1[i] = x1[i] + A[i][j] * y_1[j];
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) x2[i] = x2[i] + A[j][i] * y_2[j];
}

/* y = A^T (A x), A of m rows and n columns. */
__attribute__((noinline)) void kernel_atax(int m, int n, double A[M][N], double x[N], double y[N],
                                           double tmp[M]) {
  int i, j;
  for (i = 0; i < n; i++) y[i] = 0;
  for (i = 0; i < m; i++) {
    tmp[i] = 0.0;
    for (j = 0; j < n; j++) tmp[i] = tmp[i] + A[i][j] * x[j];
    for (j = 0; j < n; j++) y[j] = y[j] + A[i][j] * tmp[i];
  }
}

/* s = A^T r, q = A p, A of n rows and m columns. */
__attribute__((noinline)) void kernel_bicg(int m, int n, double A[N][M], double s[M], double q[N],
                                           double p[M], double r[N]) {
  int i, j;
  for (i = 0; i < m; i++) s[i] = 0;
  for (i = 0; i < n; i++) {
    q[i] = 0.0;
    for (j = 0; j < m; j++) {
      s[j] = s[j] + r[i] * A[i][j];
      q[i] = q[i] + A[i][j] * p[j];
    }
  }
}

/* y = alpha A x + beta B x. */
__attribute__((noinline)) void kernel_gesummv(int n, double alpha, double beta, double A[N][N], double B[N][N],
                                              double tmp[N], double x[N], double y[N]) {
  int i, j;
  for (i = 0; i < n; i++) {
    tmp[i] = 0.0;
    y[i] = 0.0;
    for (j = 0; j < n; j++) {
      tmp[i] = A[i][j] * x[j] + tmp[i];
      y[i] = B[i][j] * x[j] + y[i];
    }
    y[i] = alpha * tmp[i] + beta * y[i];
  }
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 300), m = e2e_arg(argc, argv, 2, 280);
  if (n > N || m > M) return 2;
  double(*A)[N] = new_array(sizeof(double) * M * N), (*B)[N] = new_array(sizeof(double) * N * N);
  double *x1 = new_array(sizeof(double) * N), *x2 = new_array(sizeof(double) * N);
  double *y1 = new_array(sizeof(double) * N), *y2 = new_array(sizeof(double) * N);
  double *x = new_array(sizeof(double) * N), *y = new_array(sizeof(double) * N);
  double *tmp = new_array(sizeof(double) * M), *s = new_array(sizeof(double) * M);
  double *q = new_array(sizeof(double) * N), *p = new_array(sizeof(double) * M);
  double *r = new_array(sizeof(double) * N);
  fill_f64(&A[0][0], (size_t)M * N, 31);
  fill_f64(&B[0][0], (size_t)N * N, 32);
  fill_f64(x1, N, 33);
  fill_f64(x2, N, 34);
  fill_f64(y1, N, 35);
  fill_f64(y2, N, 36);
  fill_f64(x, N, 37);
  fill_f64(p, M, 38);
  fill_f64(r, N, 39);
  kernel_mvt(n, x1, x2, y1, y2, A);
  e2e_print_f64("mvt_x1", x1, N);
  e2e_print_f64("mvt_x2", x2, N);
  kernel_atax(m, n, A, x, y, tmp);
  e2e_print_f64("atax_y", y, N);
  e2e_print_f64("atax_tmp", tmp, M);
  /* bicg's A: n rows of m columns, the same bytes read another way */
  kernel_bicg(m, n, (double(*)[M])&A[0][0], s, q, p, r);
  e2e_print_f64("bicg_s", s, M);
  e2e_print_f64("bicg_q", q, N);
  kernel_gesummv(n, 1.5, 1.2, A, B, tmp, x, y);
  e2e_print_f64("gesummv_y", y, N);
  e2e_print_f64("gesummv_tmp", tmp, N);
  return 0;
}
