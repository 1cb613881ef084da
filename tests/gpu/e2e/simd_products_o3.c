/* simd_products_o3.c: simd_products.c built with `clang -O3 -msimd128`:
 * -O3 tests every count of an ikj nest once before it (`m < 1 || p < 1
 * || n < 1`) and no `n < 1` stands in the k loop, so each j region's
 * guard is that or'ed test before the nest (kernels/kn_lanes_region.c
 * guard_outside); the same products as the -O2 build, the same calls
 * (gemm_beta's extra map, clang's copy for nk <= 0, does not run). */
/* clang-flags: -O3 -msimd128 */
/* expect-gpu-launches: 12 */
#include "simd_products.c"
