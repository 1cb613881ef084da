/* styles.c: products written with row pointers (`float **`) and through a
 * struct with a stride field, no `restrict` (tests/gpu/survey/
 * styles_matmul.c's style routines).  A store of the nest may change the
 * row table or the struct, so clang loads them inside the nest, and the
 * bounds pass versions the inner loop on every outer iteration.  Through
 * the struct: products whose fields the host loads before the launch
 * (mv_struct, mm_struct, mtm_struct); through row pointers: no product,
 * with a reason naming the load.  The flat control (mv_flat) is a
 * product. */
typedef struct {
  int rows, cols, stride;
  float *data;
} matrix;

void mv_rows(int m, int n, float **A, const float *x, float *y) {
  for (int i = 0; i < m; i++) {
    const float *a = A[i];
    float s = 0.0f;
    for (int j = 0; j < n; j++) s += a[j] * x[j];
    y[i] = s;
  }
}

void mm_rows(int m, int n, int k, float **A, float **B, float **C) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float s = 0.0f;
      for (int l = 0; l < k; l++) s += A[i][l] * B[l][j];
      C[i][j] = s;
    }
}

/* y = A^T x through row pointers (round 14): y[j] accumulated in memory
 * over i; the bounds pass's fast and checked copies of the j loop each
 * store y */
void mtv_rows(int m, int n, float **A, const float *x, float *y) {
  for (int j = 0; j < n; j++) y[j] = 0.0f;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) y[j] += A[i][j] * x[i];
}

/* C = A B in i-k-j order through row pointers (round 14): C's row cleared
 * (a memset at -O2) before the k loop */
void mm_rows_ikj(int m, int n, int k, float **A, float **B, float **C) {
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

void mv_struct(const matrix *a, const float *x, float *y) {
  for (int i = 0; i < a->rows; i++) {
    float s = 0.0f;
    for (int j = 0; j < a->cols; j++) s += a->data[i * a->stride + j] * x[j];
    y[i] = s;
  }
}

void mm_struct(const matrix *a, const matrix *b, matrix *c) {
  for (int i = 0; i < a->rows; i++)
    for (int j = 0; j < b->cols; j++) {
      float s = 0.0f;
      for (int l = 0; l < a->cols; l++) s += a->data[i * a->stride + l] * b->data[l * b->stride + j];
      c->data[i * c->stride + j] = s;
    }
}

void mv_flat(int m, int n, const float *A, const float *x, float *y) {
  for (int i = 0; i < m; i++) {
    float s = 0.0f;
    for (int j = 0; j < n; j++) s += A[i * n + j] * x[j];
    y[i] = s;
  }
}

void mtm_struct(const matrix *a, const matrix *b, matrix *c) {
  for (int i = 0; i < a->cols; i++)
    for (int j = 0; j < b->cols; j++) {
      float s = 0.0f;
      for (int l = 0; l < a->rows; l++) s += a->data[l * a->stride + i] * b->data[l * b->stride + j];
      c->data[i * c->stride + j] = s;
    }
}

/* The sums stored over the struct's own stride field (type-punned, as
 * Wasm allows): the output is a field the nest reads its layout from, so
 * no product (a written range of the field's form would pass the
 * runtime's overlap check as the output read in place). */
void mv_struct_punned(matrix *a, const float *x) {
  for (int i = 0; i < a->rows; i++) {
    float s = 0.0f;
    for (int j = 0; j < a->cols; j++) s += a->data[i * a->stride + j] * x[j];
    *(float *)&a->stride = s;
  }
}

/* Every row's sum stored to one element, *y: the CPU keeps the last
 * row's; threads of a kernel would race for it.  No product. */
void mv_one_out(int m, int n, const float *A, const float *x, float *y) {
  for (int i = 0; i < m; i++) {
    float s = 0.0f;
    for (int j = 0; j < n; j++) s += A[i * n + j] * x[j];
    *y = s;
  }
}
