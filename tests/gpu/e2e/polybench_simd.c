/* polybench_simd.c: polybench.c's gemm (ikj with `C *= beta`, whose j
 * loops clang vectorises inside the i and k loops), gemm_ijk and 2mm
 * built with `clang -O2 -msimd128`: the same 4 products as the plain -O2
 * build (gemm's through kernels/kn_lanes_region.c). */
/* clang-flags: -O2 -msimd128 */
/* expect-gpu-launches: 4 */
#include "polybench.c"
