/* post_clamp_o3.c: post_clamp.c built with plain `clang -O3`: the same
 * products, the same calls. */
/* clang-flags: -O3 */
/* expect-gpu-launches: 4 */
#include "post_clamp.c"
