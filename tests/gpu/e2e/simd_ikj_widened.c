/* simd_ikj_widened.c: an int8 ikj product whose A element is read into
 * an int before the j loop (quant.c's k_ikj), built with `clang -O2
 * -msimd128`: clang multiplies in i32x4 lanes, a splat of that int by
 * B's bytes widened twice (i8x16 -> i16x8 -> i32x4), next to a peeled
 * iteration and a scalar remainder (kernels/kn_lanes.c widened_bytes, a
 * region of kn_lanes_region.c).  One launch; n odd, so the peel and the
 * remainder run on every row.  Sizes from argv (default 200 x 203 x 150). */
/* clang-flags: -O2 -msimd128 */
/* expect-gpu-launches: 1 */
#include "e2e.h"

__attribute__((noinline)) void k_ikj(int m, int n, int k, const int8_t *a, const int8_t *b, int32_t *c) {
  for (int i = 0; i < m; i++)
    for (int p = 0; p < k; p++) {
      int32_t x = a[i * k + p];
      for (int j = 0; j < n; j++) c[i * n + j] += x * b[p * n + j];
    }
}

int main(int argc, char **argv) {
  int m = e2e_arg(argc, argv, 1, 200), n = e2e_arg(argc, argv, 2, 203), k = e2e_arg(argc, argv, 3, 150);
  int8_t *a = e2e_alloc((size_t)m * k), *b = e2e_alloc((size_t)k * n);
  int32_t *c = e2e_alloc((size_t)m * n * 4);
  uint32_t s = 5;
  for (size_t i = 0; i < (size_t)m * k; i++) a[i] = (int8_t)e2e_next(&s);
  for (size_t i = 0; i < (size_t)k * n; i++) b[i] = (int8_t)e2e_next(&s);
  for (size_t i = 0; i < (size_t)m * n; i++) c[i] = (int32_t)e2e_next(&s);
  k_ikj(m, n, k, a, b, c);
  e2e_print_i32("ikj", c, (size_t)m * n);
  return 0;
}
