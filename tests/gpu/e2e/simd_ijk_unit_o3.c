/* simd_ijk_unit_o3.c: simd_ijk_unit.c built with `clang -O3 -msimd128`:
 * the same products (kernels/kn_lanes_region.c reads B's stride n as 1 on
 * the vector loop's path, as at -O2), the same calls. */
/* clang-flags: -O3 -msimd128 */
/* expect-gpu-launches: 4 */
#include "simd_ijk_unit.c"
