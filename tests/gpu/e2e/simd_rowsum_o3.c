/* simd_rowsum_o3.c: an i32 matrix-vector product (matvec.c's k_mv_i32)
 * built with `clang -O3 -msimd128`:
 * each row's sum is an i32x4 accumulator with a scalar remainder (a sum
 * region, kernels/kn_lanes_region.c), and -O3 versions the nest for
 * k >= 1 (a memset of y for k < 1), so the region's guard stands before
 * the nest (guard_outside).  One launch; k odd, so every row's remainder
 * runs.  (The int8 form, rows_dot_i8 in test_recog_lanes, is left out:
 * twasmc inlines it into main, where that copy's region is not found and
 * each row is a reduce.)  Sizes from argv (default m 1000, k 1003). */
/* clang-flags: -O3 -msimd128 */
/* expect-gpu-launches: 1 */
#include "e2e.h"

__attribute__((noinline)) void k_mv_i32(int m, int k, const int32_t *w, const int32_t *x, int32_t *out) {
  for (int i = 0; i < m; i++) {
    int32_t s = 0;
    for (int j = 0; j < k; j++) s += w[i * k + j] * x[j];
    out[i] = s;
  }
}

int main(int argc, char **argv) {
  int m = e2e_arg(argc, argv, 1, 1000), k = e2e_arg(argc, argv, 2, 1003);
  int32_t *w = e2e_alloc((size_t)m * k * 4), *x = e2e_alloc((size_t)k * 4), *y = e2e_alloc((size_t)m * 4);
  uint32_t s = 7;
  for (size_t i = 0; i < (size_t)m * k; i++) w[i] = (int32_t)e2e_next(&s);
  for (int j = 0; j < k; j++) x[j] = (int32_t)e2e_next(&s);
  k_mv_i32(m, k, w, x, y);
  e2e_print_i32("mv_i32", y, (size_t)m);
  return 0;
}
