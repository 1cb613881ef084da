/* simd_products.c: ikj products whose j loop clang vectorises at -O2
 * -msimd128 inside the i and k loops (a v128 loop, a peeled iteration and
 * a scalar remainder unrolled by two, copied by the bounds pass), as users
 * write them: arrays from a separate allocation, no `restrict`.  Each nest
 * is offloaded as the one product the plain -O2 build offloads
 * (kernels/kn_lanes_region.c): polybench's gemm with its `C *= beta` loop
 * (itself a vector loop and its remainder, the product's prologue), the
 * same without it, and in f64 (f64x2 lanes); an i32 row sum kept in
 * i32x4 lanes (mv_i32, a matrix-vector product); an int8 ikj product in
 * narrow lanes (qmm_ikj); an int8 row sum in narrow lanes (mv_i8).  Sizes from argv (default
 * 64 x 48 x 40, multiples of 4: the peel and remainder do not run), then
 * odd ones (n = 4q + 3: the peel and the remainder run).  6 products, 2
 * calls each: 12 launches, as the plain build. */
/* clang-flags: -O2 -msimd128 */
/* expect-gpu-launches: 12 */
#include "e2e.h"

__attribute__((noinline)) void gemm_beta(int ni, int nj, int nk, float alpha, float beta, float *C, const float *A,
                                         const float *B) {
  for (int i = 0; i < ni; i++) {
    for (int j = 0; j < nj; j++) C[i * nj + j] *= beta;
    for (int k = 0; k < nk; k++)
      for (int j = 0; j < nj; j++) C[i * nj + j] += alpha * A[i * nk + k] * B[k * nj + j];
  }
}

__attribute__((noinline)) void gemm_acc(int ni, int nj, int nk, float *C, const float *A, const float *B) {
  for (int i = 0; i < ni; i++)
    for (int k = 0; k < nk; k++)
      for (int j = 0; j < nj; j++) C[i * nj + j] += A[i * nk + k] * B[k * nj + j];
}

__attribute__((noinline)) void gemm_f64(int ni, int nj, int nk, double *C, const double *A, const double *B) {
  for (int i = 0; i < ni; i++)
    for (int k = 0; k < nk; k++)
      for (int j = 0; j < nj; j++) C[i * nj + j] += A[i * nk + k] * B[k * nj + j];
}

/* an i32 row sum: clang keeps it in i32x4 lanes, adds the lanes up after
 * the vector loop and continues in a scalar remainder (a sum region,
 * exact in any order: integer addition wraps); the plain build's
 * matrix-vector product.  Its data overflows i32 on purpose. */
__attribute__((noinline)) void mv_i32(int m, int k, const int32_t *w, const int32_t *x, int32_t *y) {
  for (int i = 0; i < m; i++) {
    int32_t s = 0;
    for (int j = 0; j < k; j++) s += w[i * k + j] * x[j];
    y[i] = s;
  }
}

/* an int8 ikj product: clang widens 4 bytes of B's row to i16x8 lanes,
 * multiplies them by a splat of A[i][k] there and widens the products to
 * i32x4 (narrow lanes, each i16 product exact); the plain build's int8
 * product */
__attribute__((noinline)) void qmm_ikj(int ni, int nj, int nk, int32_t *C, const signed char *A,
                                       const signed char *B) {
  for (int i = 0; i < ni; i++)
    for (int k = 0; k < nk; k++)
      for (int j = 0; j < nj; j++) C[i * nj + j] += A[i * nk + k] * B[k * nj + j];
}

static void run_i8(int ni, int nj, int nk, uint32_t seed) {
  signed char *A = e2e_alloc((size_t)ni * nk), *B = e2e_alloc((size_t)nk * nj);
  int32_t *C = e2e_alloc((size_t)ni * nj * sizeof(int32_t));
  for (int i = 0; i < ni * nk; i++) A[i] = (signed char)(e2e_next(&seed) >> 24);
  for (int i = 0; i < nk * nj; i++) B[i] = (signed char)(e2e_next(&seed) >> 24);
  for (int i = 0; i < ni * nj; i++) C[i] = (int32_t)e2e_next(&seed);
  qmm_ikj(ni, nj, nk, C, A, B);
  e2e_print_i32("qmm_ikj", C, (size_t)ni * nj);
  free(A), free(B), free(C);
}

/* an int8 row sum: bytes widened and multiplied in i16x8 lanes, the
 * products widened and summed in i32x4 lanes (a sum region of narrow
 * lanes); the plain build's int8 matrix-vector product */
__attribute__((noinline)) void mv_i8(int m, int k, const signed char *w, const signed char *x, int32_t *y) {
  for (int i = 0; i < m; i++) {
    int32_t s = 0;
    for (int j = 0; j < k; j++) s += w[i * k + j] * x[j];
    y[i] = s;
  }
}

static void run_mv_i8(int m, int k, uint32_t seed) {
  signed char *w = e2e_alloc((size_t)m * k), *x = e2e_alloc((size_t)k);
  int32_t *y = e2e_alloc((size_t)m * sizeof(int32_t));
  for (int i = 0; i < m * k; i++) w[i] = (signed char)(e2e_next(&seed) >> 24);
  for (int i = 0; i < k; i++) x[i] = (signed char)(e2e_next(&seed) >> 24);
  mv_i8(m, k, w, x, y);
  e2e_print_i32("mv_i8", y, (size_t)m);
  free(w), free(x), free(y);
}

static void run_i32(int m, int k, uint32_t seed) {
  int32_t *w = e2e_alloc((size_t)m * k * sizeof(int32_t)), *x = e2e_alloc((size_t)k * sizeof(int32_t));
  int32_t *y = e2e_alloc((size_t)m * sizeof(int32_t));
  for (int i = 0; i < m * k; i++) w[i] = (int32_t)e2e_next(&seed);
  for (int i = 0; i < k; i++) x[i] = (int32_t)(e2e_next(&seed) >> 12);
  mv_i32(m, k, w, x, y);
  e2e_print_i32("mv_i32", y, (size_t)m);
  free(w), free(x), free(y);
}

static void run(int ni, int nj, int nk, uint32_t seed) {
  float *A = e2e_alloc((size_t)ni * nk * sizeof(float)), *B = e2e_alloc((size_t)nk * nj * sizeof(float));
  float *C = e2e_alloc((size_t)ni * nj * sizeof(float)), *D = e2e_alloc((size_t)ni * nj * sizeof(float));
  double *Ad = e2e_alloc((size_t)ni * nk * sizeof(double)), *Bd = e2e_alloc((size_t)nk * nj * sizeof(double));
  double *Cd = e2e_alloc((size_t)ni * nj * sizeof(double));
  for (int i = 0; i < ni * nk; i++) A[i] = e2e_unit(&seed), Ad[i] = e2e_unit(&seed);
  for (int i = 0; i < nk * nj; i++) B[i] = e2e_unit(&seed), Bd[i] = e2e_unit(&seed);
  for (int i = 0; i < ni * nj; i++) C[i] = e2e_unit(&seed), D[i] = e2e_unit(&seed), Cd[i] = e2e_unit(&seed);
  gemm_beta(ni, nj, nk, 1.5f, 1.2f, C, A, B);
  gemm_acc(ni, nj, nk, D, A, B);
  gemm_f64(ni, nj, nk, Cd, Ad, Bd);
  e2e_print_f32("gemm_beta", C, (size_t)ni * nj);
  e2e_print_f32("gemm_acc", D, (size_t)ni * nj);
  e2e_print_f64("gemm_f64", Cd, (size_t)ni * nj);
  free(A), free(B), free(C), free(D), free(Ad), free(Bd), free(Cd);
}

int main(int argc, char **argv) {
  int ni = e2e_arg(argc, argv, 1, 64), nj = e2e_arg(argc, argv, 2, 48), nk = e2e_arg(argc, argv, 3, 40);
  run(ni, nj, nk, 3);
  run(ni + 3, nj + 3, nk + 1, 5);
  run_i32(ni * 4, nk * 8, 7);         /* k a multiple of 4: no remainder */
  run_i32(ni * 4 + 1, nk * 8 + 3, 9); /* the remainder runs 3 times a row */
  run_i8(ni, nj, nk, 11);
  run_i8(ni + 3, nj + 3, nk + 1, 13); /* the peel and the remainder run */
  run_mv_i8(ni * 4, nk * 8, 15);
  run_mv_i8(ni * 4 + 1, nk * 8 + 3, 17); /* the remainder runs 3 times a row */
  return 0;
}
