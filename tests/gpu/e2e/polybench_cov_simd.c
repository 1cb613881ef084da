/* polybench_cov_simd.c: polybench_cov.c built with `clang -O2 -msimd128`:
 * covariance's centring `data[i][j] -= mean[j]` is an f64x2 vector loop
 * inside the i loop whose scalar rest clang unrolls by 4 behind a loop of
 * its own for the m & 3 leftover iterations (kernels/kn_lanes_region.c,
 * a prologue loop P), read as the one 2-D map of the plain -O2 build. */
/* clang-flags: -O2 -msimd128 */
/* expect-gpu-launches: 7 */
#include "polybench_cov.c"
