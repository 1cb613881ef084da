/* polybench_atax_o3_simd.c: polybench_atax.c built with `clang -O3
 * -msimd128`: as polybench_atax_simd.c, and clang versions the i loop
 * for n >= 1, so the region's guard n < 1 stands before the nest
 * (kernels/kn_lanes_region.c guard_outside) and the sum's copies sit
 * behind the bounds check of tmp[i] = 0; the same two parts, the same
 * calls. */
/* clang-flags: -O3 -msimd128 */
/* expect-gpu-launches: 4 */
#include "polybench_atax.c"
