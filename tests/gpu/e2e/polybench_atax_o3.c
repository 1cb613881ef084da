/* polybench_atax_o3.c: polybench_atax.c built with plain `clang -O3`:
 * the same two kernels in order, the same four calls. */
/* clang-flags: -O3 */
/* expect-gpu-launches: 4 */
#include "polybench_atax.c"
