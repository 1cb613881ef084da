/* post_clamp_wasmopt.c: post_clamp.c built with `clang -O2` and linked with
 * -O2, which runs binaryen's wasm-opt (names stripped, fminf and fmaxf
 * inlined into their caller, blocks reshaped): the same products, the
 * same calls. */
/* clang-flags: -O2 */
/* clang-link-flags: -O2 */
/* expect-gpu-launches: 4 */
#include "post_clamp.c"
