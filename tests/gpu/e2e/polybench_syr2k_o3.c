/* polybench_syr2k_o3.c: polybench_syr2k.c built with plain `clang -O3`:
 * the same products over a triangle, the same four calls. */
/* clang-flags: -O3 */
/* expect-gpu-launches: 3 */
#include "polybench_syr2k.c"
