/* asserts.c: products and maps whose indices C's assert() checks (plain
 * -O2, NDEBUG unset): each failing assert calls __assert_fail, which
 * never returns.  Guard exits the runtime checks before a launch
 * (kn_recog_guard.c). */
#include <assert.h>

typedef struct {
  int rows, cols;
  float *v;
} mat;

static float get(const mat *m, int r, int c) {
  assert(r >= 0 && r < m->rows && c >= 0 && c < m->cols);
  return m->v[r * m->cols + c];
}

static void set(mat *m, int r, int c, float x) {
  assert(r < m->rows && c < m->cols);
  m->v[r * m->cols + c] = x;
}

/* C = A B through checked accessors */
void mm_get_set(const mat *a, const mat *b, mat *c) {
  for (int i = 0; i < a->rows; i++)
    for (int j = 0; j < b->cols; j++) {
      float s = 0;
      for (int k = 0; k < a->cols; k++) s += get(a, i, k) * get(b, k, j);
      set(c, i, j, s);
    }
}

/* y = A x, each index asserted against a bound passed in */
void mv_assert(const float *a, const float *x, float *y, int m, int n, int len) {
  for (int i = 0; i < m; i++) {
    float s = 0;
    for (int j = 0; j < n; j++) {
      assert(i * n + j < len);
      s += a[i * n + j] * x[j];
    }
    y[i] = s;
  }
}

/* C = A B with plain arrays, each index asserted unsigned */
void mm_assert(const float *a, const float *b, float *c, unsigned n, unsigned len) {
  for (unsigned i = 0; i < n; i++)
    for (unsigned j = 0; j < n; j++) {
      float s = 0;
      for (unsigned k = 0; k < n; k++) {
        assert(i * n + k < len && k * n + j < len);
        s += a[i * n + k] * b[k * n + j];
      }
      c[i * n + j] = s;
    }
}

/* a map: y[i] = 2 x[i] with i asserted below a field */
typedef struct {
  int len;
  float *data;
} vec;

void scale_vec(const vec *x, vec *y, int n) {
  for (int i = 0; i < n; i++) {
    assert(i < x->len && i < y->len);
    y->data[i] = 2.0f * x->data[i];
  }
}

/* not a guard: the assert tests an element, not an index */
void neg_assert_value(const float *x, float *y, int n) {
  for (int i = 0; i < n; i++) {
    assert(x[i] >= 0.0f);
    y[i] = 2.0f * x[i];
  }
}
