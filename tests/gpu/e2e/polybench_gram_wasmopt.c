/* polybench_gram_wasmopt.c: polybench_gram.c built with `clang -O2` and
 * linked with -O2, which runs binaryen's wasm-opt (names stripped, blocks
 * reshaped): the same products over an upper triangle, the same four
 * calls. */
/* clang-flags: -O2 */
/* clang-link-flags: -O2 */
/* expect-gpu-launches: 3 */
#include "polybench_gram.c"
