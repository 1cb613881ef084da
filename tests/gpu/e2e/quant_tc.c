/* quant_tc.c: quant.c at 250 x 500 x 1037, a shape the sm_90a packed
 * tensor-core product takes (its 128 x 256 tiles filled past 80 %): A's
 * 1037-byte rows and the transposed B of the bias product go through the
 * pack's element gathers, the edge tiles through its zero padding and the
 * product's element stores; s8 x s8, u8 x u8, u8 x s8 (PTX ISA 8.4), a
 * bias start, the ikj order (C += A B) and an odd sub-product, each
 * bit-identical to the CPU with sums that wrap. */
/* expect-gpu-launches: 4 */
/* expect-packed: 4 */
#define QUANT_M 250
#define QUANT_N 500
#define QUANT_K 1037
#include "quant.c"
