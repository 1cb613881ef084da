/* rows.c: matrix-vector products over row pointers (`float **A`, each row
 * from an allocation function: tests/gpu/survey/styles_matmul.c's
 * mv_rows), built with plain `clang -O2`, each routine a function of its
 * own (noinline), no `restrict`.  clang loads `A[i]` inside the i loop;
 * the product reads its rows through that table (kn_layout's row_table,
 * ABI 14), and before a launch the runtime reads the row pointers and
 * checks every row (docs/PERFORMANCE.md "Issue 19 round 13: row-pointer
 * products").  Launched: y = A x over rows each malloc'd on its own, and
 * over rows of one block; C = A B (mm_rows, A, B and C through tables)
 * over rows each its own.  On the CPU (the runtime's checks refuse): y =
 * A x with y over one of A's rows (the output overlaps an input row), and
 * C = A B with two of C's rows the same row.  n from argv (default 128):
 * A is (n + 5) x (n - 3).  Round 14 ("Issue 19 round 14: row-pointer
 * products at -O3, transposed, ikj"): y = A^T x (mtv_rows, y kept in
 * memory over A's rows: a product with one output row summed from y) over
 * rows each their own and over rows of one block, launched; y over one
 * of A's rows, on the CPU.  C = A B in i-k-j order (mm_rows_ikj, C's row
 * cleared by a memset in the i loop): its k-j nest a vector-matrix
 * product per row of C, launched m times (once per row).
 * .expected: the CPU run's, equal to a native gcc -O2 build's. */
/* clang-flags: -O2 */
/* expect-gpu-launches: 138 */
#include "e2e.h"

__attribute__((noinline)) void mv_rows(int m, int n, float **A, const float *x, float *y) {
  for (int i = 0; i < m; i++) {
    const float *a = A[i];
    float s = 0.0f;
    for (int j = 0; j < n; j++) s += a[j] * x[j];
    y[i] = s;
  }
}

__attribute__((noinline)) void mm_rows(int m, int n, int k, float **A, float **B, float **C) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float s = 0.0f;
      for (int l = 0; l < k; l++) s += A[i][l] * B[l][j];
      C[i][j] = s;
    }
}

__attribute__((noinline)) void mtv_rows(int m, int n, float **A, const float *x, float *y) {
  for (int j = 0; j < n; j++) y[j] = 0.0f;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) y[j] += A[i][j] * x[i];
}

__attribute__((noinline)) void mm_rows_ikj(int m, int n, int k, float **A, float **B, float **C) {
  for (int i = 0; i < m; i++) {
    float *c = C[i];
    for (int j = 0; j < n; j++) c[j] = 0.0f;
    for (int l = 0; l < k; l++) {
      float aik = A[i][l];
      const float *b = B[l];
      for (int j = 0; j < n; j++) c[j] += aik * b[j];
    }
  }
}

/* rows each malloc'd on its own, with a few bytes between them */
static float **rows_each(int rows, int cols, uint32_t *seed) {
  float **r = e2e_alloc(sizeof(float *) * (size_t)rows);
  for (int i = 0; i < rows; i++) {
    r[i] = e2e_alloc(sizeof(float) * (size_t)cols);
    for (int j = 0; j < cols; j++) r[i][j] = e2e_unit(seed);
  }
  return r;
}

/* rows of one block, each pointing into it */
static float **rows_of_block(int rows, int cols, uint32_t *seed) {
  float **r = e2e_alloc(sizeof(float *) * (size_t)rows);
  float *block = e2e_alloc(sizeof(float) * (size_t)rows * cols);
  for (int i = 0; i < rows * cols; i++) block[i] = e2e_unit(seed);
  for (int i = 0; i < rows; i++) r[i] = block + (size_t)i * cols;
  return r;
}

static void print_rows(const char *name, float **r, int rows, int cols) {
  float *flat = e2e_alloc(sizeof(float) * (size_t)rows * cols);
  for (int i = 0; i < rows; i++) memcpy(flat + (size_t)i * cols, r[i], sizeof(float) * (size_t)cols);
  e2e_print_f32(name, flat, (size_t)rows * cols);
  free(flat);
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 128), m = n + 5, k = n - 3 > 0 ? n - 3 : 1;
  uint32_t seed = 0x5eed4321u;
  float *x = e2e_alloc((size_t)k * sizeof(float));
  for (int i = 0; i < k; i++) x[i] = e2e_unit(&seed);
  float *y = e2e_alloc((size_t)m * sizeof(float));

  float **a = rows_each(m, k, &seed);
  mv_rows(m, k, a, x, y);
  e2e_print_f32("mv_each", y, (size_t)m);

  float **ab = rows_of_block(m, k, &seed);
  mv_rows(m, k, ab, x, y);
  e2e_print_f32("mv_block", y, (size_t)m);

  /* y over A's last row (m <= k + 8 floats: y's first k floats are that
   * row, the rest past it): the output overlaps an input, the CPU's */
  float **ao = rows_each(m, k, &seed);
  float *over = e2e_alloc(sizeof(float) * (size_t)(m > k ? m : k));
  memcpy(over, ao[m - 1], sizeof(float) * (size_t)k);
  ao[m - 1] = over;
  mv_rows(m, k, ao, x, over);
  e2e_print_f32("mv_over_a_row", over, (size_t)m);

  /* C = A B over rows of their own, then with C's rows 1 and 2 the same
   * row: row 2's sums overwrite row 1's, as the CPU stores them */
  float **b = rows_each(k, n, &seed);
  float **c = rows_each(m, n, &seed);
  mm_rows(m, n, k, a, b, c);
  print_rows("mm_each", c, m, n);
  c[2] = c[1];
  mm_rows(m, n, k, ab, b, c);
  print_rows("mm_alias", c, m, n);

  /* y = A^T x (A m x k, x over m, y over k): over rows each their own,
   * over rows of one block, then with y over A's last row (the CPU's) */
  float *xm = e2e_alloc((size_t)m * sizeof(float));
  for (int i = 0; i < m; i++) xm[i] = e2e_unit(&seed);
  mtv_rows(m, k, a, xm, y);
  e2e_print_f32("mtv_each", y, (size_t)k);
  mtv_rows(m, k, ab, xm, y);
  e2e_print_f32("mtv_block", y, (size_t)k);
  float **at = rows_each(m, k, &seed);
  float *tover = e2e_alloc(sizeof(float) * (size_t)k);
  memcpy(tover, at[m - 1], sizeof(float) * (size_t)k);
  at[m - 1] = tover;
  mtv_rows(m, k, at, xm, tover);
  e2e_print_f32("mtv_over_a_row", tover, (size_t)k);

  /* C = A B in i-k-j order over rows of their own */
  float **ci = rows_each(m, n, &seed);
  mm_rows_ikj(m, n, k, a, b, ci);
  print_rows("mm_ikj_each", ci, m, n);
  return 0;
}
