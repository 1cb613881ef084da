/* polybench_cov_wasmopt.c: polybench_cov.c built with `clang -O2` and
 * linked with -O2, which runs binaryen's wasm-opt (names stripped, blocks
 * reshaped): covariance's and correlation's products and three maps
 * (gemver's two matrix-vector products are not found after inlining). */
/* clang-flags: -O2 */
/* clang-link-flags: -O2 */
/* expect-gpu-launches: 5 */
#include "polybench_cov.c"
