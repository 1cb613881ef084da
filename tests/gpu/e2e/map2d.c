/* map2d.c: 2-D maps over a sub-block of row-major matrices whose leading
 * dimension (row stride) is larger than the block width: an f32 blend with
 * a per-row and a per-column term, and an i32 one writing a transposed
 * layout, and one using the loop counters as values.  rows x cols from argv (default 1000 x 1500 of ld 1536). */
/* expect-gpu-launches: 3 */
#include "e2e.h"

__attribute__((noinline)) void k_blend(int rows, int cols, int ld, const float *a, const float *rowv,
                                       const float *colv, float *b) {
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) b[i * ld + j] = a[i * ld + j] * rowv[i] + colv[j];
}

__attribute__((noinline)) void k_transpose_i32(int rows, int cols, int lda, int ldt, const int *a,
                                               int *t) {
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) t[j * ldt + i] = a[i * lda + j] * 3 - 5;
}

/* The row and column numbers as values. */
__attribute__((noinline)) void k_iota(int rows, int cols, int ld, float *c) {
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) c[i * ld + j] = (float)(i * cols + j) * 0.5f;
}

int main(int argc, char **argv) {
  int rows = e2e_arg(argc, argv, 1, 1000), cols = e2e_arg(argc, argv, 2, 1500);
  int ld = cols + 36, ldt = rows + 24;
  size_t sz = (size_t)rows * ld;
  float *a = e2e_alloc(sz * sizeof(float)), *b = e2e_alloc(sz * sizeof(float));
  float *rowv = e2e_alloc(rows * sizeof(float)), *colv = e2e_alloc(cols * sizeof(float));
  int *ai = e2e_alloc(sz * sizeof(int)), *t = e2e_alloc((size_t)cols * ldt * sizeof(int));
  uint32_t s = 777;
  for (size_t i = 0; i < sz; i++) {
    a[i] = e2e_unit(&s);
    ai[i] = (int)e2e_next(&s);
    b[i] = -1.0f; /* the gaps between rows must stay untouched */
  }
  for (int i = 0; i < rows; i++) rowv[i] = e2e_unit(&s);
  for (int j = 0; j < cols; j++) colv[j] = e2e_unit(&s);
  k_blend(rows, cols, ld, a, rowv, colv, b);
  k_transpose_i32(rows, cols, ld, ldt, ai, t);
  k_iota(rows, cols, ld, a);
  e2e_print_f32("b", b, sz);
  e2e_print_i32("t", t, (size_t)cols * ldt);
  e2e_print_f32("iota", a, sz);
  return 0;
}
