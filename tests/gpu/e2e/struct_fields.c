/* struct_fields.c: products through a struct `{rows, cols, stride,
 * data}` read as `m->data[i*m->stride+j]` (tests/gpu/survey/
 * styles_matmul.c's struct routines), built with plain `clang -O2`, each
 * routine a function of its own (noinline), no `restrict`.  clang loads
 * `m->data` and `m->stride` inside the nest (a store may change them); the
 * host loads them before the launch and the runtime checks C against
 * their bytes (docs/PERFORMANCE.md "Issue 19 round 12: struct-field and
 * row-table products").  Four products, each launched once: y = A x over
 * a padded A (stride > cols), y = A x with the structs on the stack,
 * C = A B, C = A^T B.  n from argv (default 128): A is (n + 5) x (n - 3).
 * .expected: the CPU run's, equal to a native gcc -O2 build's. */
/* clang-flags: -O2 */
/* expect-gpu-launches: 4 */
#include "e2e.h"

typedef struct {
  int rows, cols, stride;
  float *data;
} matrix;

__attribute__((noinline)) void mv_struct(const matrix *a, const float *x, float *y) {
  for (int i = 0; i < a->rows; i++) {
    float s = 0.0f;
    for (int j = 0; j < a->cols; j++) s += a->data[i * a->stride + j] * x[j];
    y[i] = s;
  }
}

__attribute__((noinline)) void mm_struct(const matrix *a, const matrix *b, matrix *c) {
  for (int i = 0; i < a->rows; i++)
    for (int j = 0; j < b->cols; j++) {
      float s = 0.0f;
      for (int l = 0; l < a->cols; l++) s += a->data[i * a->stride + l] * b->data[l * b->stride + j];
      c->data[i * c->stride + j] = s;
    }
}

__attribute__((noinline)) void mtm_struct(const matrix *a, const matrix *b, matrix *c) {
  for (int i = 0; i < a->cols; i++)
    for (int j = 0; j < b->cols; j++) {
      float s = 0.0f;
      for (int l = 0; l < a->rows; l++) s += a->data[l * a->stride + i] * b->data[l * b->stride + j];
      c->data[i * c->stride + j] = s;
    }
}

static matrix *new_matrix(int rows, int cols, int stride, uint32_t *seed) {
  matrix *m = e2e_alloc(sizeof *m);
  m->rows = rows;
  m->cols = cols;
  m->stride = stride;
  m->data = e2e_alloc((size_t)rows * stride * sizeof(float));
  for (int i = 0; i < rows * stride; i++) m->data[i] = e2e_unit(seed);
  return m;
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 128), m = n + 5, k = n - 3 > 0 ? n - 3 : 1;
  uint32_t seed = 0x5eed1234u;
  matrix *a = new_matrix(m, k, k + 7, &seed); /* padded rows */
  matrix *b = new_matrix(k, n, n, &seed);
  matrix *at = new_matrix(k, m, m, &seed);    /* A^T's source: k x m */
  float *x = e2e_alloc((size_t)k * sizeof(float));
  float *y = e2e_alloc((size_t)m * sizeof(float));
  for (int i = 0; i < k; i++) x[i] = e2e_unit(&seed);

  mv_struct(a, x, y);
  e2e_print_f32("mv_padded", y, (size_t)m);

  /* the structs on the (linear-memory) stack */
  matrix flat = {m, k, k, e2e_alloc((size_t)m * k * sizeof(float))};
  for (int i = 0; i < m * k; i++) flat.data[i] = e2e_unit(&seed);
  float *y2 = e2e_alloc((size_t)m * sizeof(float));
  mv_struct(&flat, x, y2);
  e2e_print_f32("mv_stack", y2, (size_t)m);

  matrix *c = new_matrix(m, n, n, &seed);
  mm_struct(a, b, c);
  e2e_print_f32("mm", c->data, (size_t)m * n);

  matrix *c2 = new_matrix(m, n, n + 1, &seed);
  mtm_struct(at, b, c2);
  e2e_print_f32("mtm", c2->data, (size_t)m * (n + 1));
  return 0;
}
