/* polybench_scaled_wasmopt.c: polybench_scaled.c built with `clang -O2`
 * and linked with -O2, which runs binaryen's wasm-opt (names stripped,
 * blocks reshaped): the same products, the same calls and launches. */
/* clang-flags: -O2 */
/* clang-link-flags: -O2 */
/* expect-gpu-launches: 4 */
#include "polybench_scaled.c"
