/* polybench_gesummv_o3.c: polybench_gesummv.c built with plain `clang
 * -O3`: the same three kernels in order, the same four calls. */
/* clang-flags: -O3 */
/* expect-gpu-launches: 6 */
#include "polybench_gesummv.c"
