/* simd_transpose.c: a transposed i32 map built with `clang -O2 -msimd128`:
 * clang vectorises the j loop only for ldt == 1 (the vector loop then
 * stores four consecutive elements), its skip testing `ldt == 1` with the
 * count and the alias check; kernels/kn_lanes_region.c reads ldt as 1 on
 * the vector loop's path, so the region is the plain build's map.  Two
 * calls: a real transpose (ldt = rows + 3: the vector loop never runs on
 * the CPU), and one row into a column of stride 1 (ldt == 1: the vector
 * loop, the peel (cols odd) and the remainder run on the CPU).  rows x
 * cols from argv (default 300 x 517). */
/* clang-flags: -O2 -msimd128 */
/* expect-gpu-launches: 2 */
#include "e2e.h"

__attribute__((noinline)) void k_transpose_i32(int rows, int cols, int lda, int ldt, const int *a, int *t) {
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) t[j * ldt + i] = a[i * lda + j] * 3 - 5;
}

int main(int argc, char **argv) {
  int rows = e2e_arg(argc, argv, 1, 300), cols = e2e_arg(argc, argv, 2, 517);
  int lda = cols + 5, ldt = rows + 3;
  size_t sz = (size_t)rows * lda, szt = (size_t)cols * ldt;
  int *a = e2e_alloc(sz * sizeof(int)), *t = e2e_alloc(szt * sizeof(int));
  int *row = e2e_alloc((size_t)cols * sizeof(int));
  uint32_t s = 4242;
  for (size_t i = 0; i < sz; i++) a[i] = (int)e2e_next(&s);
  for (size_t i = 0; i < szt; i++) t[i] = -1; /* the gaps must stay untouched */
  for (int j = 0; j < cols; j++) row[j] = -1;
  k_transpose_i32(rows, cols, lda, ldt, a, t);
  k_transpose_i32(1, cols, lda, 1, a + lda, row);
  e2e_print_i32("t", t, szt);
  e2e_print_i32("row", row, (size_t)cols);
  return 0;
}
