/* post_elem_o3.c: post_elem.c built with plain `clang -O3`: the same
 * products, the same calls. */
/* clang-flags: -O3 */
/* expect-gpu-launches: 5 */
#include "post_elem.c"
