/* prod_wasmopt.c: prod_plain.c's products built with `clang -O2` and
 * linked with -O2, which runs binaryen's wasm-opt (it inlines the products
 * into main and reshapes their blocks, noinline or not). */
/* clang-flags: -O2 */
/* clang-link-flags: -O2 */
/* expect-gpu-launches: 8 */
#include "prod_plain.c"
