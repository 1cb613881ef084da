/* prod_plain.c: matrix products written the textbook way, as code found in
 * the wild has them: no `restrict`, matrices from an allocation function of
 * their own, sums kept in C itself (`C[i][j] += ...`, after `C[i][j] = 0`
 * or accumulating into C) or in a local, matrix-vector products in both
 * orientations; built with plain `clang -O2` (clang unrolls the k loops by
 * 2, 4 or 8 with a remainder loop and stores the running sum on every k
 * iteration).  Each product sits in a function of its own (noinline, as
 * in a library; inlined into main the shapes differ, not handled yet).
 * Every product is one launch.  M, N, K from argv (default
 * 300 x 200 x 250: not multiples of the unroll factors). */
/* clang-flags: -O2 */
/* expect-gpu-launches: 8 */
#include "e2e.h"

float *new_matrix(int rows, int cols) {
  float *m = malloc(sizeof(float) * (size_t)rows * (size_t)cols);
  if (!m) exit(2);
  return m;
}

void fill(float *m, int n, uint32_t seed) {
  for (int i = 0; i < n; i++) m[i] = e2e_unit(&seed);
}

/* C = A B, the sum in C. */
__attribute__((noinline)) void matmul(int m, int n, int k, float *a, float *b, float *c) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      c[i * n + j] = 0;
      for (int p = 0; p < k; p++) c[i * n + j] += a[i * k + p] * b[p * n + j];
    }
}

/* C += A B, the sum in C. */
__attribute__((noinline)) void matmul_acc(int m, int n, int k, float *a, float *b, float *c) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      for (int p = 0; p < k; p++) c[i * n + j] += a[i * k + p] * b[p * n + j];
}

/* C = A B, the sum in a local. */
__attribute__((noinline)) void matmul_local(int m, int n, int k, float *a, float *b, float *c) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float s = 0;
      for (int p = 0; p < k; p++) s += a[i * k + p] * b[p * n + j];
      c[i * n + j] = s;
    }
}

/* y = A x, the sum in y. */
__attribute__((noinline)) void matvec(int m, int k, float *a, float *x, float *y) {
  for (int i = 0; i < m; i++) {
    y[i] = 0;
    for (int p = 0; p < k; p++) y[i] += a[i * k + p] * x[p];
  }
}

/* y = A x, the sum in a local. */
__attribute__((noinline)) void matvec_local(int m, int k, float *a, float *x, float *y) {
  for (int i = 0; i < m; i++) {
    float s = 0;
    for (int p = 0; p < k; p++) s += a[i * k + p] * x[p];
    y[i] = s;
  }
}

/* y = A^T x, column by column, the sum in y. */
__attribute__((noinline)) void matvec_t(int m, int k, float *a, float *x, float *y) {
  for (int j = 0; j < m; j++) {
    y[j] = 0;
    for (int p = 0; p < k; p++) y[j] += a[p * m + j] * x[p];
  }
}

/* y += x^T A, row by row: each y[j] summed over p in order. */
__attribute__((noinline)) void vecmat(int m, int k, float *a, float *x, float *y) {
  for (int p = 0; p < k; p++)
    for (int j = 0; j < m; j++) y[j] += x[p] * a[p * m + j];
}

int main(int argc, char **argv) {
  int m = e2e_arg(argc, argv, 1, 300), n = e2e_arg(argc, argv, 2, 200), k = e2e_arg(argc, argv, 3, 250);
  float *a = new_matrix(m, k), *b = new_matrix(k, n), *c = new_matrix(m, n), *d = new_matrix(m, n);
  float *e = new_matrix(m, n), *x = new_matrix(k, 1), *y = new_matrix(m, 1), *z = new_matrix(m, 1);
  float *at = new_matrix(k, m), *w = new_matrix(m, 1), *v = new_matrix(m, 1);
  fill(a, m * k, 11);
  fill(b, k * n, 12);
  fill(x, k, 13);
  fill(at, k * m, 14);
  fill(d, m * n, 15);
  fill(v, m, 16);
  matmul(m, n, k, a, b, c);
  matmul_acc(m, n, k, a, b, d);
  matmul_local(m, n, k, a, b, e);
  matvec(m, k, a, x, y);
  matvec_local(m, k, a, x, z);
  matvec_t(m, k, at, x, w);
  vecmat(m, k, at, x, v);
  e2e_print_f32("c", c, (size_t)m * n);
  e2e_print_f32("c_acc", d, (size_t)m * n);
  e2e_print_f32("c_local", e, (size_t)m * n);
  e2e_print_f32("y", y, (size_t)m);
  e2e_print_f32("y_local", z, (size_t)m);
  e2e_print_f32("y_t", w, (size_t)m);
  e2e_print_f32("y_vecmat", v, (size_t)m);
  /* the same sums in the same order: the same bits */
  printf("c == c_local: %s\n", memcmp(c, e, (size_t)m * n * 4) ? "no" : "yes");
  printf("y == y_local: %s\n", memcmp(y, z, (size_t)m * 4) ? "no" : "yes");
  matvec(m, k, a, x, y);
  printf("y again: %s\n", memcmp(y, z, (size_t)m * 4) ? "no" : "yes");
  return 0;
}
