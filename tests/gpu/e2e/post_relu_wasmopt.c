/* post_relu_wasmopt.c: post_relu.c built with `clang -O2` and linked with
 * -O2, which runs binaryen's wasm-opt (names stripped, blocks reshaped):
 * the same products, the same calls. */
/* clang-flags: -O2 */
/* clang-link-flags: -O2 */
/* expect-gpu-launches: 4 */
#include "post_relu.c"
