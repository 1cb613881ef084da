/* textbook_blas.c: Level 2 and 3 routines of the reference BLAS as people
 * port Netlib's Fortran to C, not written for twasmc: column-major arrays
 * with leading dimensions (`A[i + l*lda]`), alpha and beta with their early
 * outs (`if (beta == 0) C = 0; else if (beta != 1) C *= beta`), SGEMM's j-l-i
 * loop order (`temp = alpha*B(l,j)`, then an axpy down column j of C), the
 * dot-product form of the transposed variants, SGEMV in both orientations,
 * SSYRK and SSYR2K over a triangle, SSYMM, STRMM, and the same with `long`
 * and `long long` indices.  Netlib's code skips a column when `B(l,j) == 0`
 * in some versions (sgemm_nn_skip, strmm_lun); that changes what NaN and
 * Inf give, so it is written both ways.  No `restrict`, arrays from an
 * allocation function, sizes from argv (default 256, leading dimensions
 * larger than the rows).  Compile-only survey for issue 19 (`SUITE_CFLAGS=
 * -fno-inline bash tests/gpu/suite_report.sh tests/gpu/survey/textbook_blas.c`,
 * docs/PERFORMANCE.md, "Issue 19 round 9: reference BLAS"). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* tests/gpu/e2e/blas_ref.c defines it as noinline: each routine a
 * function of its own, as a BLAS library's are */
#ifndef BLAS_API
#define BLAS_API
#endif

/* C = alpha*A*B + beta*C, A m x k, B k x n: reference SGEMM, 'N', 'N'
 * without the zero test on B(l,j) */
BLAS_API void kernel_sgemm_nn(int m, int n, int k, float alpha, const float *A, int lda, const float *B, int ldb,
                     float beta, float *C, int ldc) {
  if (m == 0 || n == 0 || ((alpha == 0.0f || k == 0) && beta == 1.0f)) return;
  for (int j = 0; j < n; j++) {
    if (beta == 0.0f) {
      for (int i = 0; i < m; i++) C[i + j * ldc] = 0.0f;
    } else if (beta != 1.0f) {
      for (int i = 0; i < m; i++) C[i + j * ldc] = beta * C[i + j * ldc];
    }
    for (int l = 0; l < k; l++) {
      float temp = alpha * B[l + j * ldb];
      for (int i = 0; i < m; i++) C[i + j * ldc] += temp * A[i + l * lda];
    }
  }
}

/* the same with Netlib's `IF (B(L,J).NE.ZERO)` */
BLAS_API void kernel_sgemm_nn_skip(int m, int n, int k, float alpha, const float *A, int lda, const float *B, int ldb,
                          float beta, float *C, int ldc) {
  if (m == 0 || n == 0 || ((alpha == 0.0f || k == 0) && beta == 1.0f)) return;
  for (int j = 0; j < n; j++) {
    if (beta == 0.0f) {
      for (int i = 0; i < m; i++) C[i + j * ldc] = 0.0f;
    } else if (beta != 1.0f) {
      for (int i = 0; i < m; i++) C[i + j * ldc] = beta * C[i + j * ldc];
    }
    for (int l = 0; l < k; l++) {
      if (B[l + j * ldb] != 0.0f) {
        float temp = alpha * B[l + j * ldb];
        for (int i = 0; i < m; i++) C[i + j * ldc] += temp * A[i + l * lda];
      }
    }
  }
}

/* C = alpha*A^T*B + beta*C: 'T', 'N', a dot product per element */
BLAS_API void kernel_sgemm_tn(int m, int n, int k, float alpha, const float *A, int lda, const float *B, int ldb,
                     float beta, float *C, int ldc) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      float temp = 0.0f;
      for (int l = 0; l < k; l++) temp += A[l + i * lda] * B[l + j * ldb];
      if (beta == 0.0f)
        C[i + j * ldc] = alpha * temp;
      else
        C[i + j * ldc] = alpha * temp + beta * C[i + j * ldc];
    }
}

/* C = alpha*A*B^T + beta*C: 'N', 'T', j-l-i with temp = alpha*B(j,l) */
BLAS_API void kernel_sgemm_nt(int m, int n, int k, float alpha, const float *A, int lda, const float *B, int ldb,
                     float beta, float *C, int ldc) {
  for (int j = 0; j < n; j++) {
    if (beta == 0.0f) {
      for (int i = 0; i < m; i++) C[i + j * ldc] = 0.0f;
    } else if (beta != 1.0f) {
      for (int i = 0; i < m; i++) C[i + j * ldc] = beta * C[i + j * ldc];
    }
    for (int l = 0; l < k; l++) {
      float temp = alpha * B[j + l * ldb];
      for (int i = 0; i < m; i++) C[i + j * ldc] += temp * A[i + l * lda];
    }
  }
}

/* y = alpha*A*x + beta*y, A m x n: SGEMV 'N', y scaled first, then an axpy
 * per column */
BLAS_API void kernel_sgemv_n(int m, int n, float alpha, const float *A, int lda, const float *x, float beta, float *y) {
  if (beta != 1.0f) {
    if (beta == 0.0f)
      for (int i = 0; i < m; i++) y[i] = 0.0f;
    else
      for (int i = 0; i < m; i++) y[i] = beta * y[i];
  }
  if (alpha == 0.0f) return;
  for (int j = 0; j < n; j++) {
    float temp = alpha * x[j];
    for (int i = 0; i < m; i++) y[i] += temp * A[i + j * lda];
  }
}

/* y = alpha*A^T*x + beta*y: SGEMV 'T', a dot product per column */
BLAS_API void kernel_sgemv_t(int m, int n, float alpha, const float *A, int lda, const float *x, float beta, float *y) {
  if (beta != 1.0f) {
    if (beta == 0.0f)
      for (int j = 0; j < n; j++) y[j] = 0.0f;
    else
      for (int j = 0; j < n; j++) y[j] = beta * y[j];
  }
  if (alpha == 0.0f) return;
  for (int j = 0; j < n; j++) {
    float temp = 0.0f;
    for (int i = 0; i < m; i++) temp += A[i + j * lda] * x[i];
    y[j] += alpha * temp;
  }
}

/* C = alpha*A*A^T + beta*C, upper triangle, A n x k: SSYRK 'U', 'N' */
BLAS_API void kernel_ssyrk_un(int n, int k, float alpha, const float *A, int lda, float beta, float *C, int ldc) {
  for (int j = 0; j < n; j++) {
    if (beta == 0.0f) {
      for (int i = 0; i <= j; i++) C[i + j * ldc] = 0.0f;
    } else if (beta != 1.0f) {
      for (int i = 0; i <= j; i++) C[i + j * ldc] = beta * C[i + j * ldc];
    }
    for (int l = 0; l < k; l++) {
      float temp = alpha * A[j + l * lda];
      for (int i = 0; i <= j; i++) C[i + j * ldc] += temp * A[i + l * lda];
    }
  }
}

/* C = alpha*A^T*A + beta*C, lower triangle, A k x n: SSYRK 'L', 'T' */
BLAS_API void kernel_ssyrk_lt(int n, int k, float alpha, const float *A, int lda, float beta, float *C, int ldc) {
  for (int j = 0; j < n; j++)
    for (int i = j; i < n; i++) {
      float temp = 0.0f;
      for (int l = 0; l < k; l++) temp += A[l + i * lda] * A[l + j * lda];
      if (beta == 0.0f)
        C[i + j * ldc] = alpha * temp;
      else
        C[i + j * ldc] = alpha * temp + beta * C[i + j * ldc];
    }
}

/* C = alpha*A*B^T + alpha*B*A^T + beta*C, upper: SSYR2K 'U', 'N' */
BLAS_API void kernel_ssyr2k_un(int n, int k, float alpha, const float *A, int lda, const float *B, int ldb, float beta,
                      float *C, int ldc) {
  for (int j = 0; j < n; j++) {
    if (beta == 0.0f) {
      for (int i = 0; i <= j; i++) C[i + j * ldc] = 0.0f;
    } else if (beta != 1.0f) {
      for (int i = 0; i <= j; i++) C[i + j * ldc] = beta * C[i + j * ldc];
    }
    for (int l = 0; l < k; l++) {
      float temp1 = alpha * B[j + l * ldb];
      float temp2 = alpha * A[j + l * lda];
      for (int i = 0; i <= j; i++) C[i + j * ldc] += A[i + l * lda] * temp1 + B[i + l * ldb] * temp2;
    }
  }
}

/* C = alpha*A*B + beta*C, A symmetric held in its upper triangle: SSYMM
 * 'L', 'U' */
BLAS_API void kernel_ssymm_lu(int m, int n, float alpha, const float *A, int lda, const float *B, int ldb, float beta,
                     float *C, int ldc) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      float temp1 = alpha * B[i + j * ldb];
      float temp2 = 0.0f;
      for (int l = 0; l < i; l++) {
        C[l + j * ldc] += temp1 * A[l + i * lda];
        temp2 += B[l + j * ldb] * A[l + i * lda];
      }
      if (beta == 0.0f)
        C[i + j * ldc] = temp1 * A[i + i * lda] + alpha * temp2;
      else
        C[i + j * ldc] = beta * C[i + j * ldc] + temp1 * A[i + i * lda] + alpha * temp2;
    }
}

/* B = alpha*A*B, A upper triangular (non-unit), in place: STRMM 'L', 'U',
 * 'N', 'N' with Netlib's zero test */
BLAS_API void kernel_strmm_lun(int m, int n, float alpha, const float *A, int lda, float *B, int ldb) {
  for (int j = 0; j < n; j++)
    for (int l = 0; l < m; l++) {
      if (B[l + j * ldb] != 0.0f) {
        float temp = alpha * B[l + j * ldb];
        for (int i = 0; i < l; i++) B[i + j * ldb] += temp * A[i + l * lda];
        temp *= A[l + l * lda];
        B[l + j * ldb] = temp;
      }
    }
}

/* kernel_sgemm_nn and kernel_sgemv_t with `long` indices (32 bits on
 * wasm32, as int) and `long long` ones (64 bits) */
BLAS_API void kernel_sgemm_nn_long(long m, long n, long k, float alpha, const float *A, long lda, const float *B, long ldb,
                          float beta, float *C, long ldc) {
  for (long j = 0; j < n; j++) {
    if (beta == 0.0f) {
      for (long i = 0; i < m; i++) C[i + j * ldc] = 0.0f;
    } else if (beta != 1.0f) {
      for (long i = 0; i < m; i++) C[i + j * ldc] = beta * C[i + j * ldc];
    }
    for (long l = 0; l < k; l++) {
      float temp = alpha * B[l + j * ldb];
      for (long i = 0; i < m; i++) C[i + j * ldc] += temp * A[i + l * lda];
    }
  }
}

BLAS_API void kernel_sgemm_nn_ll(long long m, long long n, long long k, float alpha, const float *A, long long lda,
                        const float *B, long long ldb, float beta, float *C, long long ldc) {
  for (long long j = 0; j < n; j++) {
    if (beta == 0.0f) {
      for (long long i = 0; i < m; i++) C[i + j * ldc] = 0.0f;
    } else if (beta != 1.0f) {
      for (long long i = 0; i < m; i++) C[i + j * ldc] = beta * C[i + j * ldc];
    }
    for (long long l = 0; l < k; l++) {
      float temp = alpha * B[l + j * ldb];
      for (long long i = 0; i < m; i++) C[i + j * ldc] += temp * A[i + l * lda];
    }
  }
}

BLAS_API void kernel_sgemv_t_long(long m, long n, float alpha, const float *A, long lda, const float *x, float beta,
                         float *y) {
  for (long j = 0; j < n; j++) {
    float temp = 0.0f;
    for (long i = 0; i < m; i++) temp += A[i + j * lda] * x[i];
    y[j] = alpha * temp + beta * y[j];
  }
}

static float *new_matrix(long rows, long cols, int seed) {
  float *p = malloc(sizeof(float) * (size_t)(rows * cols));
  for (long i = 0; i < rows * cols; i++) p[i] = (float)((i * 37 + seed) % 19) / 19.0f - 0.5f;
  return p;
}

/* a sum of the values and a hash of their bits: equal only when every
 * float is */
static void checksum(const char *name, const float *p, long count) {
  double sum = 0.0;
  uint32_t h = 2166136261u;
  for (long i = 0; i < count; i++) {
    uint32_t bits;
    memcpy(&bits, &p[i], sizeof bits);
    sum += p[i];
    h = (h ^ bits) * 16777619u;
  }
  printf("%-16s %.6e %08x\n", name, sum, (unsigned)h);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 256;
  if (n < 1 || n > 4096) return 2;
  int m = n + 5, k = n - 3, ld = n + 9;
  float *A = new_matrix(ld, ld, 1), *B = new_matrix(ld, ld, 2), *C = new_matrix(ld, ld, 3);
  float *x = new_matrix(ld, 1, 4), *y = new_matrix(ld, 1, 5);
  float *C0 = new_matrix(ld, ld, 3);
  long cc = (long)ld * ld;

  kernel_sgemm_nn(m, n, k, 1.5f, A, ld, B, ld, 0.5f, C, ld);
  checksum("sgemm_nn", C, cc);
  memcpy(C, C0, sizeof(float) * cc);
  kernel_sgemm_nn(m, n, k, 1.0f, A, ld, B, ld, 0.0f, C, ld);
  checksum("sgemm_nn_b0", C, cc);
  memcpy(C, C0, sizeof(float) * cc);
  kernel_sgemm_nn_skip(m, n, k, 1.5f, A, ld, B, ld, 0.5f, C, ld);
  checksum("sgemm_nn_skip", C, cc);
  memcpy(C, C0, sizeof(float) * cc);
  kernel_sgemm_tn(m, n, k, 1.5f, A, ld, B, ld, 0.5f, C, ld);
  checksum("sgemm_tn", C, cc);
  memcpy(C, C0, sizeof(float) * cc);
  kernel_sgemm_nt(m, n, k, 1.5f, A, ld, B, ld, 0.5f, C, ld);
  checksum("sgemm_nt", C, cc);
  kernel_sgemv_n(m, n, 1.5f, A, ld, x, 0.5f, y);
  checksum("sgemv_n", y, ld);
  kernel_sgemv_t(m, n, 1.5f, A, ld, x, 0.5f, y);
  checksum("sgemv_t", y, ld);
  memcpy(C, C0, sizeof(float) * cc);
  kernel_ssyrk_un(n, k, 1.5f, A, ld, 0.5f, C, ld);
  checksum("ssyrk_un", C, cc);
  memcpy(C, C0, sizeof(float) * cc);
  kernel_ssyrk_lt(n, k, 1.5f, A, ld, 0.5f, C, ld);
  checksum("ssyrk_lt", C, cc);
  memcpy(C, C0, sizeof(float) * cc);
  kernel_ssyr2k_un(n, k, 1.5f, A, ld, B, ld, 0.5f, C, ld);
  checksum("ssyr2k_un", C, cc);
  memcpy(C, C0, sizeof(float) * cc);
  kernel_ssymm_lu(m, n, 1.5f, A, ld, B, ld, 0.5f, C, ld);
  checksum("ssymm_lu", C, cc);
  memcpy(C, C0, sizeof(float) * cc);
  kernel_strmm_lun(m, n, 1.5f, A, ld, C, ld);
  checksum("strmm_lun", C, cc);
  memcpy(C, C0, sizeof(float) * cc);
  kernel_sgemm_nn_long(m, n, k, 1.5f, A, ld, B, ld, 0.5f, C, ld);
  checksum("sgemm_nn_long", C, cc);
  memcpy(C, C0, sizeof(float) * cc);
  kernel_sgemm_nn_ll(m, n, k, 1.5f, A, ld, B, ld, 0.5f, C, ld);
  checksum("sgemm_nn_ll", C, cc);
  kernel_sgemv_t_long(m, n, 1.5f, A, ld, x, 0.5f, y);
  checksum("sgemv_t_long", y, ld);
  return 0;
}
