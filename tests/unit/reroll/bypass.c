/* Loops clang unrolls by two whose bypass of the unrolled loop tests
 * another value than the count x: `x - 1 != 0` (a sum kept in memory,
 * x1[i] += A[i][j] * y[j] without `restrict`), and `i == 0` for a loop
 * `j <= i` whose count is i + 1, a second phi of the outer loop (syrk's
 * lower triangle); by 4 with a remainder loop, `j <= i` bypassed for
 * i < 3 and counted down from (i + 1) & 3 of a third twin phi (syrk's
 * row scaled by beta).  Sizes 0 to 9 reach every bypass and odd count. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define N 12

__attribute__((noinline)) void acc_rows(int n, double *x, double A[N][N], double *y) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) x[i] = x[i] + A[i][j] * y[j];
}

__attribute__((noinline)) void tri_rows(int n, int m, double C[N][N], double A[N][N], double B[N][N]) {
  for (int i = 0; i < n; i++)
    for (int k = 0; k < m; k++)
      for (int j = 0; j <= i; j++) C[i][j] += A[i][k] * B[j][k];
}

__attribute__((noinline)) void tri_scale(int n, double beta, double C[N][N]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) C[i][j] *= beta;
}

/* Called through these, so that the one-step build's wasm-opt keeps them
 * functions of their own (it inlines `noinline` ones into main). */
static void (*volatile acc)(int, double *, double[N][N], double *) = acc_rows;
static void (*volatile rows)(int, int, double[N][N], double[N][N], double[N][N]) = tri_rows;
static void (*volatile scale)(int, double, double[N][N]) = tri_scale;

static double a[N][N], b[N][N], c[N][N], x[N], y[N];

static uint64_t hash(const void *p, size_t n) {
  const unsigned char *s = p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
  return h;
}

int main(void) {
  for (int i = 0; i < N; i++) {
    y[i] = (double)i * 0.37 - 2.0;
    for (int j = 0; j < N; j++) a[i][j] = (double)((i * 7 + j) % 13) * 0.3 - 1.7, b[i][j] = 1.0 / (i + j + 3);
  }
  for (int n = 0; n < 10; n++) {
    memset(x, 0, sizeof x);
    memset(c, 0, sizeof c);
    acc(n, x, a, y);
    rows(n, 9 - n, c, a, b);
    scale(n, 1.25, c);
    printf("n=%d %016llx %016llx\n", n, (unsigned long long)hash(x, sizeof x), (unsigned long long)hash(c, sizeof c));
  }
  return 0;
}
