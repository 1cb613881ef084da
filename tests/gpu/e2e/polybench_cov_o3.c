/* polybench_cov_o3.c: polybench_cov.c built with plain `clang -O3` (more
 * maps found than at -O2; "at least" 6 launches): the
 * same products (covariance's over its upper triangle, mirrored), the
 * same calls. */
/* clang-flags: -O3 */
/* expect-gpu-launches: 6 */
#include "polybench_cov.c"
