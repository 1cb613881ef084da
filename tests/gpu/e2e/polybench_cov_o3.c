/* polybench_cov_o3.c: polybench_cov.c built with plain `clang -O3` (more
 * maps found than at -O2; "at least" 7 launches): the
 * same products (covariance's and correlation's over their upper
 * triangles, mirrored), the
 * same calls. */
/* clang-flags: -O3 */
/* expect-gpu-launches: 7 */
#include "polybench_cov.c"
