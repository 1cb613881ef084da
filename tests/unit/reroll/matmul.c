/* Matrix products with run-time sizes, ijk and ikj, and 2-D stencils. */
#include <stdio.h>

__attribute__((noinline)) void mm_ijk(int n, const float *a, const float *b, float *c) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      float s = 0;
      for (int k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
      c[i * n + j] = s;
    }
}

__attribute__((noinline)) void mm_ikj(int n, const float *a, const float *b, float *c) {
  for (int i = 0; i < n; i++)
    for (int k = 0; k < n; k++) {
      float t = a[i * n + k];
      for (int j = 0; j < n; j++) c[i * n + j] += t * b[k * n + j];
    }
}

__attribute__((noinline)) void mm_rect(int m, int n, int kk, const double *a, const double *b,
                                       double *c) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int k = 0; k < kk; k++) s += a[i * kk + k] * b[k * n + j];
      c[i * n + j] = s;
    }
}

__attribute__((noinline)) void jacobi(int n, const float *u, float *v) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++)
      v[i * n + j] = 0.25f * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1]);
}

__attribute__((noinline)) void blur(int rows, int cols, const float *u, float *v) {
  for (int i = 1; i < rows - 1; i++)
    for (int j = 0; j < cols; j++)
      v[i * cols + j] = 0.5f * u[i * cols + j] + 0.25f * (u[(i - 1) * cols + j] + u[(i + 1) * cols + j]);
}

/* In place: each element reads the one just written. */
__attribute__((noinline)) void smooth(int n, float *a) {
  for (int j = 1; j < n - 1; j++) a[j] = (a[j - 1] + a[j] + a[j + 1]) * (1.0f / 3);
}

#define N 13
static float fa[N * N], fb[N * N], fc[N * N];
static double da[N * N], db[N * N], dc[N * N];

static void fill(void) {
  for (int i = 0; i < N * N; i++) {
    fa[i] = (float)((i * 7) % 11) - 4.5f, fb[i] = 1.0f / (float)(i + 2), fc[i] = 0.5f;
    da[i] = (i % 5) * 0.3 - 0.1, db[i] = 1.0 / (i + 3), dc[i] = -1;
  }
}

static double fhash(const float *x) {
  double h = 0;
  for (int i = 0; i < N * N; i++) h = h * 1.000001 + x[i];
  return h;
}

int main(void) {
  for (int n = 0; n <= N; n++) {
    fill();
    mm_ijk(n, fa, fb, fc);
    double h1 = fhash(fc);
    fill();
    mm_ikj(n, fa, fb, fc);
    double h2 = fhash(fc);
    fill();
    jacobi(n, fa, fc);
    double h3 = fhash(fc);
    fill();
    blur(n, N - n, fa, fc);
    double h4 = fhash(fc);
    fill();
    smooth(n * n / 2, fa);
    printf("%d %.17g %.17g %.17g %.17g %.17g\n", n, h1, h2, h3, h4, fhash(fa));
  }
  for (int m = 0; m <= 4; m++)
    for (int n = 0; n <= 5; n++)
      for (int k = 0; k <= 5; k++) {
        fill();
        mm_rect(m, n, k, da, db, dc);
        double h = 0;
        for (int i = 0; i < N * N; i++) h = h * 1.000001 + dc[i];
        printf("rect %d %d %d %.17g\n", m, n, k, h);
      }
  return 0;
}
