/* post_leaky_wasmopt.c: post_leaky.c built with `clang -O2` and linked with
 * -O2, which runs binaryen's wasm-opt (names stripped, fmaxf inlined into
 * its caller, blocks reshaped): the same products, the same calls. */
/* clang-flags: -O2 */
/* clang-link-flags: -O2 */
/* expect-gpu-launches: 4 */
#include "post_leaky.c"
