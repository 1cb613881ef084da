/* simd_transpose_o3.c: simd_transpose.c built with `clang -O3 -msimd128`:
 * the same map (kernels/kn_lanes_region.c reads ldt as 1 on the vector
 * loop's path, as at -O2), the same calls. */
/* clang-flags: -O3 -msimd128 */
/* expect-gpu-launches: 2 */
#include "simd_transpose.c"
