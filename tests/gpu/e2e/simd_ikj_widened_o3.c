/* simd_ikj_widened_o3.c: simd_ikj_widened.c built with `clang -O3
 * -msimd128` (the region's guard m < 1 || k < 1 || n < 1 before the
 * nest, kernels/kn_lanes_region.c guard_outside); one launch. */
/* clang-flags: -O3 -msimd128 */
/* expect-gpu-launches: 1 */
#include "simd_ikj_widened.c"
