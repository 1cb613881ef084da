/* textbook_lu.c: dense linear algebra as a textbook (Numerical Recipes,
 * Golub & Van Loan) writes it in plain C, not written for twasmc: LU
 * without pivoting (Doolittle, in place), Cholesky (in place, lower), the
 * triangular solves after them, and a matrix-vector residual.  Compile-only
 * survey for issue 19 (`bash tests/gpu/suite_report.sh
 * tests/gpu/survey/textbook_lu.c`, docs/PERFORMANCE.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void kernel_lu(int n, double **a) {
  for (int k = 0; k < n; k++) {
    for (int i = k + 1; i < n; i++) {
      a[i][k] /= a[k][k];
      for (int j = k + 1; j < n; j++) a[i][j] -= a[i][k] * a[k][j];
    }
  }
}

void kernel_cholesky(int n, double *a) {
  for (int j = 0; j < n; j++) {
    double s = a[j * n + j];
    for (int k = 0; k < j; k++) s -= a[j * n + k] * a[j * n + k];
    a[j * n + j] = sqrt(s);
    for (int i = j + 1; i < n; i++) {
      double t = a[i * n + j];
      for (int k = 0; k < j; k++) t -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = t / a[j * n + j];
    }
  }
}

void kernel_forward(int n, double *l, double *b, double *y) {
  for (int i = 0; i < n; i++) {
    double s = b[i];
    for (int j = 0; j < i; j++) s -= l[i * n + j] * y[j];
    y[i] = s / l[i * n + i];
  }
}

void kernel_residual(int n, double *a, double *x, double *b, double *r) {
  for (int i = 0; i < n; i++) {
    double s = 0.0;
    for (int j = 0; j < n; j++) s += a[i * n + j] * x[j];
    r[i] = b[i] - s;
  }
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 64;
  double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n);
  double *x = malloc(sizeof(double) * n), *r = malloc(sizeof(double) * n);
  double **rows = malloc(sizeof(double *) * n);
  for (int i = 0; i < n; i++) {
    rows[i] = a + i * n;
    b[i] = 1.0 + i % 7;
    for (int j = 0; j < n; j++) a[i * n + j] = (i == j ? n : 0) + 1.0 / (1 + i + j);
  }
  kernel_residual(n, a, b, b, r);
  kernel_cholesky(n, a);
  kernel_forward(n, a, b, x);
  kernel_lu(n, rows);
  printf("%.17g %.17g %.17g\n", r[n / 2], x[n - 1], a[n * n - 1]);
  return 0;
}
