/* rows_o3.c: rows.c's routines and main built with plain `clang -O3`
 * (docs/PERFORMANCE.md "Issue 19 round 14: row-pointer products at -O3,
 * transposed, ikj").  At -O3 clang hoists the bounds pass's test of
 * mm_rows's row `A[i]` out of the j loop; the product is the same as at
 * -O2.  Its output is rows.c's (rows_o3.expected a copy of rows.expected,
 * equal to a native gcc -O2 build's). */
/* clang-flags: -O3 */
/* expect-gpu-launches: 138 */
#include "rows.c"
