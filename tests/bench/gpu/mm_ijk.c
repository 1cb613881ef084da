/* mm_ijk.c: mm.c with the textbook ijk order, C[i][j] = sum over k of
 * A[i][k] * B[k][j] with the sum in a local: on the CPU this order walks B
 * by columns and cannot be vectorised without reassociating the sum; the
 * GPU kernel is the same exact one as for ikj.  gpu.sh compares the whole
 * program's wall time at 2048 between TWASM_DEVICE=cpu and gpu. */
#define MM_IJK
#include "mm.c"
