/* polybench_mv_o3.c: polybench_mv.c's mvt, atax, bicg and gesummv built
 * with plain `clang -O3` (unrolled, unswitched): mvt's two products, atax's two
 * parts and bicg's two as at -O2. */
/* clang-flags: -O3 */
/* expect-gpu-launches: 9 */
#include "polybench_mv.c"
