/* polybench_syr2k_simd.c: polybench_syr2k.c built with `clang -O2
 * -msimd128`: its j <= i loops are vector loops inside the i and k loops
 * whose count is the row's i + 1 (kernels/kn_lanes_region.c, a
 * triangle's row); the same products over a triangle as the plain -O2
 * build, the same calls. */
/* clang-flags: -O2 -msimd128 */
/* expect-gpu-launches: 3 */
#include "polybench_syr2k.c"
