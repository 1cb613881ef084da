/* polybench_wasmopt.c: polybench.c's gemm and 2mm built with `clang -O2`
 * and linked with -O2, which runs binaryen's wasm-opt (it may inline the
 * kernels into main and reshapes their blocks). */
/* clang-flags: -O2 */
/* clang-link-flags: -O2 */
/* expect-gpu-launches: 4 */
#include "polybench.c"
