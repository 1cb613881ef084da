/* polybench_gesummv_wasmopt.c: polybench_gesummv.c built with `clang -O2`
 * and linked with -O2, which runs binaryen's wasm-opt (names stripped,
 * blocks reshaped): the same three kernels in order, the same four calls
 * and launches. */
/* clang-flags: -O2 */
/* clang-link-flags: -O2 */
/* expect-gpu-launches: 6 */
#include "polybench_gesummv.c"
