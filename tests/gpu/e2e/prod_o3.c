/* prod_o3.c: prod_plain.c's products built with plain `clang -O3`. */
/* clang-flags: -O3 */
/* expect-gpu-launches: 8 */
#include "prod_plain.c"
