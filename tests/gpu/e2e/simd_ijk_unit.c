/* simd_ijk_unit.c: ijk integer products built with `clang -O2 -msimd128`:
 * clang vectorises the k sum only where B's column stride n is 1 (its
 * skip `n != 1 | k < 4`, computed before the nest; the lanes read w[p +
 * j] where the remainder reads w[p * n + j]), and the remainder, unrolled
 * by 2, adds copy 1's term before copy 0's; kernels/kn_lanes_region.c
 * reads n as 1 on the vector loop's path, so each nest is the plain
 * build's product.  Each kernel called twice: n = 37 (the vector loop
 * never runs on the CPU) and n = 1 (a matrix-vector product: the vector
 * loop, the peel (k odd) and the remainder run on the CPU).  m, k from
 * argv (default 150 x 203). */
/* clang-flags: -O2 -msimd128 */
/* expect-gpu-launches: 4 */
#include "e2e.h"

__attribute__((noinline)) void k_dense_i8(int m, int n, int k, const int8_t *x, const int8_t *w,
                                          const int32_t *bias, int32_t *y) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      int32_t acc = bias[j];
      for (int p = 0; p < k; p++) acc += x[i * k + p] * w[p * n + j];
      y[i * n + j] = acc;
    }
}

__attribute__((noinline)) void k_mm_i32(int m, int n, int k, const int32_t *a, const int32_t *b, int32_t *c) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      int32_t acc = 0;
      for (int p = 0; p < k; p++) acc += a[i * k + p] * b[p * n + j];
      c[i * n + j] = acc;
    }
}

int main(int argc, char **argv) {
  int m = e2e_arg(argc, argv, 1, 150), k = e2e_arg(argc, argv, 2, 203), n = 37;
  int8_t *x = e2e_alloc((size_t)m * k), *w = e2e_alloc((size_t)k * n);
  int32_t *a = e2e_alloc((size_t)m * k * 4), *b = e2e_alloc((size_t)k * n * 4);
  int32_t *bias = e2e_alloc((size_t)n * 4), *y = e2e_alloc((size_t)m * n * 4), *y1 = e2e_alloc((size_t)m * 4);
  int32_t *c = e2e_alloc((size_t)m * n * 4), *c1 = e2e_alloc((size_t)m * 4);
  uint32_t s = 9001;
  for (int i = 0; i < m * k; i++) {
    x[i] = (int8_t)e2e_next(&s);
    a[i] = (int32_t)e2e_next(&s);
  }
  for (int i = 0; i < k * n; i++) {
    w[i] = (int8_t)e2e_next(&s);
    b[i] = (int32_t)e2e_next(&s);
  }
  for (int j = 0; j < n; j++) bias[j] = (int32_t)(e2e_next(&s) >> 12);
  k_dense_i8(m, n, k, x, w, bias, y);
  k_dense_i8(m, 1, k, x, w, bias, y1);
  k_mm_i32(m, n, k, a, b, c);
  k_mm_i32(m, 1, k, a, b, c1);
  e2e_print_i32("dense_i8", y, (size_t)m * n);
  e2e_print_i32("dense_i8 n=1", y1, (size_t)m);
  e2e_print_i32("mm_i32", c, (size_t)m * n);
  e2e_print_i32("mm_i32 n=1", c1, (size_t)m);
  return 0;
}
