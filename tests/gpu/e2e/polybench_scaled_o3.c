/* polybench_scaled_o3.c: polybench_scaled.c built with plain `clang -O3`
 * (which unswitches `n > 0` out of cov_rect's nest): the same products,
 * the same calls. */
/* clang-flags: -O3 */
/* expect-gpu-launches: 4 */
#include "polybench_scaled.c"
