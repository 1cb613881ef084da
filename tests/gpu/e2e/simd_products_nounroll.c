/* simd_products_nounroll.c: simd_products.c built with `clang -O2
 * -msimd128 -fno-unroll-loops`: the remainders not unrolled (no peel),
 * GVN's block on the skip's edge and its phis of the memory size and of
 * the int8 splat's address (kernels/kn_lanes_region.c): the same eight
 * products, launched as often as at -O2 -msimd128. */
/* clang-flags: -O2 -msimd128 -fno-unroll-loops */
/* expect-gpu-launches: 12 */
#include "simd_products.c"
