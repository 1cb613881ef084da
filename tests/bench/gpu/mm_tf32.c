/* mm_tf32.c: mm.c with f32 products on tf32 tensor cores (inexact). */
/* twasmc-flags: --tensor-cores=tf32 */
#include "mm.c"
