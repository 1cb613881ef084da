/* mm_large_tf32.c: mm_large.c built with f32 products on tf32 tensor
 * cores (inexact): prints only whether the result is within the bound. */
/* twasmc-flags: --tensor-cores=tf32 */
/* expect-gpu-launches: 1 */
#define MM_TF32 1
#include "mm_large.c"
