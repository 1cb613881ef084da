/* polybench_syrk_o3_simd.c: polybench_syrk.c built with `clang -O3
 * -msimd128`: as polybench_syrk_simd.c, and -O3 unswitches `m > 0` out of
 * the i loop, so the `*= beta` region's exits fall through the k loop's
 * preheader into its header (kernels/kn_lanes_region.c
 * kr_region_before); the same products over a triangle as the plain -O2
 * build, the same calls.  The copy of the i loop for m <= 0 (the scaling
 * alone) stays on the CPU; no call here takes it. */
/* clang-flags: -O3 -msimd128 */
/* expect-gpu-launches: 3 */
#include "polybench_syrk.c"
