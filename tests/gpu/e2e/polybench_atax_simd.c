/* polybench_atax_simd.c: polybench_atax.c built with `clang -O2
 * -msimd128`: the second j loop (`y[j] += A[i][j] * tmp[i]`) is a vector
 * region of the i loop beside the scalar sum in memory of the first
 * (kernels/kn_recog_split.c, split_region); the same two matrix-vector
 * parts as the plain -O2 build, the same calls. */
/* clang-flags: -O2 -msimd128 */
/* expect-gpu-launches: 4 */
#include "polybench_atax.c"
