/* simd_nested.c: vector loops inside other loops, at -O2 -msimd128: an ikj
 * product whose j loop clang vectorises (next to its peeled iteration and
 * scalar remainder loop, read together as the scalar j loop:
 * kernels/kn_lanes_region.c),
 * and row sums in lanes, which must stay on the CPU with their reason: a
 * float sum in four lanes is not the scalar loop's order, whatever the
 * accumulator's v128 type says (an <2 x i64> phi holding f32 lanes). */
#include <wasm_simd128.h>

void gemm_ikj(int m, int n, int p, float alpha, float *C, const float *A, const float *B) {
  for (int i = 0; i < m; i++)
    for (int k = 0; k < p; k++)
      for (int j = 0; j < n; j++) C[i * n + j] += alpha * A[i * p + k] * B[k * n + j];
}

typedef float f4 __attribute__((vector_size(16)));

/* y[i] = the lanes of A's row times x summed: each lane over its own j */
void rows_dot_lanes(int m, int n, const f4 *A, const f4 *x, float *y) {
  for (int i = 0; i < m; i++) {
    f4 s = {0, 0, 0, 0};
    for (int j = 0; j < n; j++) s += A[i * n + j] * x[j];
    y[i] = s[0] + s[1] + s[2] + s[3];
  }
}

/* the same from a splat of bias[i], made before the j loop */
void rows_dot_bias(int m, int n, const f4 *A, const f4 *x, const float *bias, float *y) {
  for (int i = 0; i < m; i++) {
    float b = bias[i];
    f4 s = {b, b, b, b};
    for (int j = 0; j < n; j++) s += A[i * n + j] * x[j];
    y[i] = s[0] + s[1] + s[2] + s[3];
  }
}

/* an i32 row sum clang vectorises itself (exact in any order) */
void rows_dot_i32(int m, int n, const int *A, const int *x, int *y) {
  for (int i = 0; i < m; i++) {
    int s = 0;
    for (int j = 0; j < n; j++) s += A[i * n + j] * x[j];
    y[i] = s;
  }
}

/* an int8 ikj product: clang loads 4 bytes of B's row a trip, widens them
 * to i16x8, multiplies by a splat of A[i][k] there and widens the i16
 * products to i32x4 (narrow lanes: each i16 product of two i8 is exact) */
void qmm_ikj_i8(int m, int n, int p, int *C, const signed char *A, const signed char *B) {
  for (int i = 0; i < m; i++)
    for (int k = 0; k < p; k++)
      for (int j = 0; j < n; j++) C[i * n + j] += A[i * p + k] * B[k * n + j];
}

/* the same with A's byte read into an int before the j loop (quant.c's
 * k_ikj): clang then multiplies in i32x4 lanes, a splat of that int by
 * B's bytes widened twice (i8x16 -> i16x8 -> i32x4) */
void qmm_ikj_x(int m, int n, int p, int *C, const signed char *A, const signed char *B) {
  for (int i = 0; i < m; i++)
    for (int k = 0; k < p; k++) {
      int x = A[i * p + k];
      for (int j = 0; j < n; j++) C[i * n + j] += x * B[k * n + j];
    }
}

/* an int8 row sum: bytes widened and multiplied in i16x8 lanes, the
 * products widened to i32x4 and summed there; the remainder unrolled by 2
 * after a peeled iteration, each adding to the sum */
void rows_dot_i8(int m, int n, const signed char *A, const signed char *x, int *y) {
  for (int i = 0; i < m; i++) {
    int s = 0;
    for (int j = 0; j < n; j++) s += A[i * n + j] * x[j];
    y[i] = s;
  }
}

/* syrk over the lower triangle (j <= i), PolyBench's rows of 64: both j
 * loops are vector loops whose count is the row's i + 1, which LLVM
 * widens to an i64 counter of the i loop (a triangle's row,
 * kn_lanes_region.c); B's lanes are A's rows j and j + 1, loaded one by
 * one */
void syrk_tri(int m, int p, float alpha, float beta, float C[][64], float A[][64]) {
  for (int i = 0; i < m; i++) {
    for (int j = 0; j <= i; j++) C[i][j] *= beta;
    for (int k = 0; k < p; k++)
      for (int j = 0; j <= i; j++) C[i][j] += alpha * A[i][k] * A[j][k];
  }
}

/* atax's i loop (PolyBench, rows of 64): the sum in memory tmp[i] of the
 * first j loop stays scalar, the second, y[j] += A[i][j] * tmp[i], is a
 * vector region beside it whose splat is the sum as the first loop left
 * it in a register, where its peel and remainder load tmp[i]: two parts,
 * in order (kernels/kn_recog_split.c split_region) */
void atax_rows(int m, int n, float A[][64], const float *x, float *y, float *tmp) {
  for (int i = 0; i < m; i++) {
    tmp[i] = 0.0f;
    for (int j = 0; j < n; j++) tmp[i] = tmp[i] + A[i][j] * x[j];
    for (int j = 0; j < n; j++) y[j] = y[j] + A[i][j] * tmp[i];
  }
}

/* the lower triangle scaled alone (j <= i): a vector region whose count
 * is the row's i + 1, as in syrk_tri, but no product to take it; a map
 * over a triangle is none (the region's count varies with the i loop) */
void scale_tri(int m, float beta, float C[][64]) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j <= i; j++) C[i][j] *= beta;
}

/* a transposed i32 map: clang vectorises the j loop only where ldt == 1
 * (the skip S tests `~zext(n >u 3 & ldt == 1)` truncated, or'ed with its
 * alias check: the vector loop's lanes store t[j + i], the remainder
 * t[j * ldt + i]); kn_lanes_region.c reads ldt as 1 on V's path */
void transpose_i32(int rows, int cols, int lda, int ldt, const int *a, int *t) {
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) t[j * ldt + i] = a[i * lda + j] * 3 - 5;
}

/* ijk integer products: the k sum is vectorised only where B's column
 * stride n is 1 (the skip `n != 1 | k < 4`, computed before the nest: the
 * vector loop's lanes read w[p + j], the remainder w[p * n + j]); its
 * remainder, unrolled by 2, adds copy 1's term before copy 0's */
void dense_i8_ijk(int m, int n, int k, const signed char *x, const signed char *w, const int *bias, int *y) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      int acc = bias[j];
      for (int p = 0; p < k; p++) acc += x[i * k + p] * w[p * n + j];
      y[i * n + j] = acc;
    }
}

void mm_i32_ijk(int m, int n, int k, const int *a, const int *b, int *c) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      int acc = 0;
      for (int p = 0; p < k; p++) acc += a[i * k + p] * b[p * n + j];
      c[i * n + j] = acc;
    }
}

/* covariance's centring (polybench): the j loop vectorised inside the i
 * loop, its scalar rest unrolled by 4 behind a loop of its own for the
 * m & 3 (f32x4) or (m - s) & 3 (f64x2) leftover iterations: the region's
 * prologue loop P (kn_lanes_region.c prol_shape) */
void center_f32(int m, int n, float *data, const float *mean) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) data[i * m + j] -= mean[j];
}

void center_f64(int m, int n, double data[][192], const double *mean) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) data[i][j] -= mean[j];
}
