/* polybench_gram_o3.c: polybench_gram.c built with plain `clang -O3`: the
 * same products over an upper triangle, the same four calls. */
/* clang-flags: -O3 */
/* expect-gpu-launches: 3 */
#include "polybench_gram.c"
