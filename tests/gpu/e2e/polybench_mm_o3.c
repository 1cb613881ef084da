/* polybench_mm_o3.c: polybench_mm.c's 3mm and doitgen built with plain
 * `clang -O3`: 3mm's three products as at -O2. */
/* clang-flags: -O3 */
/* expect-gpu-launches: 3 */
#include "polybench_mm.c"
