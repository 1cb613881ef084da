/* polybench_cov_wasmopt.c: polybench_cov.c built with `clang -O2` and
 * linked with -O2, which runs binaryen's wasm-opt (names stripped, blocks
 * reshaped): the same products (gemver's two matrix-vector products
 * not found after inlining), the same calls. */
/* clang-flags: -O2 */
/* clang-link-flags: -O2 */
/* expect-gpu-launches: 4 */
#include "polybench_cov.c"
