/* styles_matmul.c: the same four products (C = A*B, y = A*x, y = A^T*x,
 * C = A^T*B) written in the styles ported C code uses, not the flat
 * `a[i*n+k]` of the other surveys: row-pointer matrices (`float **A`, rows
 * from one malloc or each its own), a struct with rows/cols/stride fields,
 * pointer-walking inner loops (`s += *a++ * b[k*n+j]`, `c[j] += aik *
 * *bp++`), unsigned and size_t indices, double versions, a 2-D VLA and a
 * `float (*A)[N]` parameter, a sum into a local then one store, and `int`
 * indices with `long` strides.  No `restrict`, arrays from an allocation
 * function, sizes from argv (non-square, so a transposed index shows).
 * Compile-only survey for issue 19 (`SUITE_CFLAGS=-fno-inline bash
 * tests/gpu/suite_report.sh tests/gpu/survey/styles_matmul.c`,
 * docs/PERFORMANCE.md, "Issue 19 round 11: matrix products in other coding
 * styles" and "Issue 19 round 12: struct-field and row-table products"). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef STYLES_API
#define STYLES_API
#endif

#define NF 40 /* the fixed column count of the `float (*A)[NF]` routines */

typedef struct {
  int rows, cols, stride;
  float *data;
} matrix;

/* --- row pointers ------------------------------------------------------ */

/* C = A*B, A m x k, B k x n, every matrix an array of row pointers */
STYLES_API void kernel_mm_rows(int m, int n, int k, float **A, float **B, float **C) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float s = 0.0f;
      for (int l = 0; l < k; l++) s += A[i][l] * B[l][j];
      C[i][j] = s;
    }
}

/* y = A*x over row pointers, the row fetched once */
STYLES_API void kernel_mv_rows(int m, int n, float **A, const float *x, float *y) {
  for (int i = 0; i < m; i++) {
    const float *a = A[i];
    float s = 0.0f;
    for (int j = 0; j < n; j++) s += a[j] * x[j];
    y[i] = s;
  }
}

/* y = A^T*x over row pointers: y[j] accumulated in memory, i outermost */
STYLES_API void kernel_mtv_rows(int m, int n, float **A, const float *x, float *y) {
  for (int j = 0; j < n; j++) y[j] = 0.0f;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) y[j] += A[i][j] * x[i];
}

/* C = A*B, i-k-j order over row pointers: `c[j] += aik * b[j]` */
STYLES_API void kernel_mm_rows_ikj(int m, int n, int k, float **A, float **B, float **C) {
  for (int i = 0; i < m; i++) {
    float *c = C[i];
    for (int j = 0; j < n; j++) c[j] = 0.0f;
    for (int l = 0; l < k; l++) {
      float aik = A[i][l];
      const float *b = B[l];
      for (int j = 0; j < n; j++) c[j] += aik * b[j];
    }
  }
}

/* --- a struct with rows, cols and a stride -------------------------------- */

STYLES_API void kernel_mm_struct(const matrix *a, const matrix *b, matrix *c) {
  for (int i = 0; i < a->rows; i++)
    for (int j = 0; j < b->cols; j++) {
      float s = 0.0f;
      for (int l = 0; l < a->cols; l++) s += a->data[i * a->stride + l] * b->data[l * b->stride + j];
      c->data[i * c->stride + j] = s;
    }
}

STYLES_API void kernel_mv_struct(const matrix *a, const float *x, float *y) {
  for (int i = 0; i < a->rows; i++) {
    float s = 0.0f;
    for (int j = 0; j < a->cols; j++) s += a->data[i * a->stride + j] * x[j];
    y[i] = s;
  }
}

/* C = A^T*B, A k x m, B k x n, C m x n, all through the struct */
STYLES_API void kernel_mtm_struct(const matrix *a, const matrix *b, matrix *c) {
  for (int i = 0; i < a->cols; i++)
    for (int j = 0; j < b->cols; j++) {
      float s = 0.0f;
      for (int l = 0; l < a->rows; l++) s += a->data[l * a->stride + i] * b->data[l * b->stride + j];
      c->data[i * c->stride + j] = s;
    }
}

/* --- pointer-walking inner loops ------------------------------------------ */

STYLES_API void kernel_mm_walk(int m, int n, int k, const float *A, const float *B, float *C) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      const float *a = A + i * k;
      const float *b = B + j;
      float s = 0.0f;
      for (int l = 0; l < k; l++) {
        s += *a++ * *b;
        b += n;
      }
      C[i * n + j] = s;
    }
}

/* the row walked, the column indexed: `s += *a++ * B[l*n+j]` */
STYLES_API void kernel_mm_walk_row(int m, int n, int k, const float *A, const float *B, float *C) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      const float *a = A + i * k;
      float s = 0.0f;
      for (int l = 0; l < k; l++) s += *a++ * B[l * n + j];
      C[i * n + j] = s;
    }
}

/* i-k-j with walking pointers: `*cp++ += aik * *bp++` */
STYLES_API void kernel_mm_walk_ikj(int m, int n, int k, const float *A, const float *B, float *C) {
  for (int i = 0; i < m; i++) {
    float *c = C + i * n;
    for (int j = 0; j < n; j++) c[j] = 0.0f;
    for (int l = 0; l < k; l++) {
      float aik = A[i * k + l];
      const float *bp = B + l * n;
      float *cp = c;
      for (int j = 0; j < n; j++) *cp++ += aik * *bp++;
    }
  }
}

STYLES_API void kernel_mv_walk(int m, int n, const float *A, const float *x, float *y) {
  const float *a = A;
  for (int i = 0; i < m; i++) {
    const float *xp = x;
    float s = 0.0f;
    for (int j = 0; j < n; j++) s += *a++ * *xp++;
    *y++ = s;
  }
}

/* --- unsigned and size_t indices ------------------------------------------ */

STYLES_API void kernel_mm_unsigned(unsigned m, unsigned n, unsigned k, const float *A, const float *B, float *C) {
  for (unsigned i = 0; i < m; i++)
    for (unsigned j = 0; j < n; j++) {
      float s = 0.0f;
      for (unsigned l = 0; l < k; l++) s += A[i * k + l] * B[l * n + j];
      C[i * n + j] = s;
    }
}

STYLES_API void kernel_mv_size(size_t m, size_t n, const float *A, const float *x, float *y) {
  for (size_t i = 0; i < m; i++) {
    float s = 0.0f;
    for (size_t j = 0; j < n; j++) s += A[i * n + j] * x[j];
    y[i] = s;
  }
}

/* y = A^T*x, dot form with size_t indices: a column of A per element */
STYLES_API void kernel_mtv_size(size_t m, size_t n, const float *A, const float *x, float *y) {
  for (size_t j = 0; j < n; j++) {
    float s = 0.0f;
    for (size_t i = 0; i < m; i++) s += A[i * n + j] * x[i];
    y[j] = s;
  }
}

/* --- double ---------------------------------------------------------------- */

STYLES_API void kernel_dmm(int m, int n, int k, const double *A, const double *B, double *C) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double s = 0.0;
      for (int l = 0; l < k; l++) s += A[i * k + l] * B[l * n + j];
      C[i * n + j] = s;
    }
}

STYLES_API void kernel_dmv(int m, int n, const double *A, const double *x, double *y) {
  for (int i = 0; i < m; i++) {
    double s = 0.0;
    for (int j = 0; j < n; j++) s += A[i * n + j] * x[j];
    y[i] = s;
  }
}

STYLES_API void kernel_dmtv(int m, int n, const double *A, const double *x, double *y) {
  for (int j = 0; j < n; j++) {
    double s = 0.0;
    for (int i = 0; i < m; i++) s += A[i * n + j] * x[i];
    y[j] = s;
  }
}

/* --- a 2-D VLA, and a pointer to rows of a fixed length -------------------- */

STYLES_API void kernel_mm_vla(int m, int n, int k, float A[m][k], float B[k][n], float C[m][n]) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float s = 0.0f;
      for (int l = 0; l < k; l++) s += A[i][l] * B[l][j];
      C[i][j] = s;
    }
}

STYLES_API void kernel_mtv_vla(int m, int n, float A[m][n], const float *x, float *y) {
  for (int j = 0; j < n; j++) {
    float s = 0.0f;
    for (int i = 0; i < m; i++) s += A[i][j] * x[i];
    y[j] = s;
  }
}

/* C = A*B, every matrix NF columns wide */
STYLES_API void kernel_mm_fixed(int m, float (*A)[NF], float (*B)[NF], float (*C)[NF]) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < NF; j++) {
      float s = 0.0f;
      for (int l = 0; l < NF; l++) s += A[i][l] * B[l][j];
      C[i][j] = s;
    }
}

/* --- the sum kept in memory, and a local with one store -------------------- */

/* C = A*B summed into C itself (no local) */
STYLES_API void kernel_mm_inplace(int m, int n, int k, const float *A, const float *B, float *C) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      C[i * n + j] = 0.0f;
      for (int l = 0; l < k; l++) C[i * n + j] += A[i * k + l] * B[l * n + j];
    }
}

/* C = A^T*B, A k x m, a local then one store */
STYLES_API void kernel_mtm_local(int m, int n, int k, const float *A, const float *B, float *C) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float s = 0.0f;
      for (int l = 0; l < k; l++) s += A[l * m + i] * B[l * n + j];
      C[i * n + j] = s;
    }
}

/* --- int indices, long strides --------------------------------------------- */

STYLES_API void kernel_mm_lstride(int m, int n, int k, const float *A, long lda, const float *B, long ldb, float *C,
                                  long ldc) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float s = 0.0f;
      for (int l = 0; l < k; l++) s += A[i * lda + l] * B[l * ldb + j];
      C[i * ldc + j] = s;
    }
}

STYLES_API void kernel_mtv_lstride(int m, int n, const float *A, long lda, const float *x, float *y) {
  for (int j = 0; j < n; j++) {
    float s = 0.0f;
    for (int i = 0; i < m; i++) s += A[i * lda + j] * x[i];
    y[j] = s;
  }
}

/* --- data ------------------------------------------------------------------ */

static float *new_floats(long count, int seed) {
  float *p = malloc(sizeof(float) * (size_t)count);
  for (long i = 0; i < count; i++) p[i] = (float)((i * 37 + seed) % 19) / 19.0f - 0.5f;
  return p;
}

static double *new_doubles(long count, int seed) {
  double *p = malloc(sizeof(double) * (size_t)count);
  for (long i = 0; i < count; i++) p[i] = (double)((i * 41 + seed) % 23) / 23.0 - 0.5;
  return p;
}

/* rows of one block, each row pointing into it */
static float **rows_of_block(int rows, int cols, int seed) {
  float **r = malloc(sizeof(float *) * (size_t)rows);
  float *block = new_floats((long)rows * cols, seed);
  for (int i = 0; i < rows; i++) r[i] = block + (long)i * cols;
  return r;
}

/* every row its own allocation */
static float **rows_each(int rows, int cols, int seed) {
  float **r = malloc(sizeof(float *) * (size_t)rows);
  for (int i = 0; i < rows; i++) r[i] = new_floats(cols, seed + i);
  return r;
}

static matrix *new_matrix(int rows, int cols, int stride, int seed) {
  matrix *m = malloc(sizeof *m);
  m->rows = rows;
  m->cols = cols;
  m->stride = stride;
  m->data = new_floats((long)rows * stride, seed);
  return m;
}

/* a sum of the values and a hash of their bits: equal only when every
 * value is */
static void checksum(const char *name, const void *p, long count, int is_double) {
  double sum = 0.0;
  uint32_t h = 2166136261u;
  for (long i = 0; i < count; i++) {
    uint32_t bits[2] = {0, 0};
    if (is_double) {
      memcpy(bits, (const double *)p + i, 8);
      sum += ((const double *)p)[i];
    } else {
      memcpy(bits, (const float *)p + i, 4);
      sum += ((const float *)p)[i];
    }
    h = (h ^ bits[0]) * 16777619u;
    h = (h ^ bits[1]) * 16777619u;
  }
  printf("%-14s %.9e %08x\n", name, sum, (unsigned)h);
}

static void rows_sum(const char *name, float **r, int rows, int cols) {
  float *flat = malloc(sizeof(float) * (size_t)rows * cols);
  for (int i = 0; i < rows; i++) memcpy(flat + (long)i * cols, r[i], sizeof(float) * cols);
  checksum(name, flat, (long)rows * cols, 0);
  free(flat);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 48;
  if (n < 36 || n > 2048) return 2;
  int m = n + 5, k = n - 3, mk = m > k ? m : k, big = mk > n ? mk : n;
  float *A = new_floats((long)big * big, 1), *B = new_floats((long)big * big, 2);
  float *C = new_floats((long)big * big, 3), *x = new_floats(big, 4), *y = new_floats(big, 5);

  float **Ar = rows_of_block(m, k, 1), **Br = rows_each(k, n, 2), **Cr = rows_of_block(m, n, 3);
  kernel_mm_rows(m, n, k, Ar, Br, Cr);
  rows_sum("mm_rows", Cr, m, n);
  kernel_mm_rows_ikj(m, n, k, Ar, Br, Cr);
  rows_sum("mm_rows_ikj", Cr, m, n);
  kernel_mv_rows(m, k, Ar, x, y);
  checksum("mv_rows", y, m, 0);
  kernel_mtv_rows(m, k, Ar, x, y);
  checksum("mtv_rows", y, k, 0);

  matrix *ma = new_matrix(m, k, k + 3, 1), *mb = new_matrix(k, n, n + 1, 2), *mc = new_matrix(m, n, n + 2, 3);
  kernel_mm_struct(ma, mb, mc);
  checksum("mm_struct", mc->data, (long)m * mc->stride, 0);
  kernel_mv_struct(ma, x, y);
  checksum("mv_struct", y, m, 0);
  matrix *mt = new_matrix(m, k, k + 3, 4); /* A^T*B: A m x k (rows l), B m x n */
  matrix *mb2 = new_matrix(m, n, n + 1, 5), *mc2 = new_matrix(k, n, n + 2, 6);
  kernel_mtm_struct(mt, mb2, mc2);
  checksum("mtm_struct", mc2->data, (long)k * mc2->stride, 0);

  kernel_mm_walk(m, n, k, A, B, C);
  checksum("mm_walk", C, (long)m * n, 0);
  kernel_mm_walk_row(m, n, k, A, B, C);
  checksum("mm_walk_row", C, (long)m * n, 0);
  kernel_mm_walk_ikj(m, n, k, A, B, C);
  checksum("mm_walk_ikj", C, (long)m * n, 0);
  kernel_mv_walk(m, k, A, x, y);
  checksum("mv_walk", y, m, 0);

  kernel_mm_unsigned((unsigned)m, (unsigned)n, (unsigned)k, A, B, C);
  checksum("mm_unsigned", C, (long)m * n, 0);
  kernel_mv_size((size_t)m, (size_t)k, A, x, y);
  checksum("mv_size", y, m, 0);
  kernel_mtv_size((size_t)m, (size_t)k, A, x, y);
  checksum("mtv_size", y, k, 0);

  double *dA = new_doubles((long)big * big, 1), *dB = new_doubles((long)big * big, 2);
  double *dC = new_doubles((long)big * big, 3), *dx = new_doubles(big, 4), *dy = new_doubles(big, 5);
  kernel_dmm(m, n, k, dA, dB, dC);
  checksum("dmm", dC, (long)m * n, 1);
  kernel_dmv(m, k, dA, dx, dy);
  checksum("dmv", dy, m, 1);
  kernel_dmtv(m, k, dA, dx, dy);
  checksum("dmtv", dy, k, 1);

  kernel_mm_vla(m, n, k, (float (*)[k])A, (float (*)[n])B, (float (*)[n])C);
  checksum("mm_vla", C, (long)m * n, 0);
  kernel_mtv_vla(m, k, (float (*)[k])A, x, y);
  checksum("mtv_vla", y, k, 0);
  kernel_mm_fixed(NF, (float (*)[NF])A, (float (*)[NF])B, (float (*)[NF])C);
  checksum("mm_fixed", C, (long)NF * NF, 0);

  kernel_mm_inplace(m, n, k, A, B, C);
  checksum("mm_inplace", C, (long)m * n, 0);
  kernel_mtm_local(m, n, k, A, B, C);
  checksum("mtm_local", C, (long)m * n, 0);

  kernel_mm_lstride(m, n, k, A, k + 2, B, n + 1, C, n + 3);
  checksum("mm_lstride", C, (long)m * (n + 3), 0);
  kernel_mtv_lstride(m, k, A, k + 2, x, y);
  checksum("mtv_lstride", y, k, 0);
  return 0;
}
