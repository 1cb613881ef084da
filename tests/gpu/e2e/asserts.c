/* asserts.c: a product and a map whose indices C's assert() checks
 * (built the way users build: plain -O2, NDEBUG unset).  Each assert is a
 * guard exit to __assert_fail, which never returns: the host checks
 * before each launch that no guard fires anywhere in the loop's box
 * (kn_recog_guard.c, off_guard.c).  The last product is called with a
 * bound one element short: the check fails, the CPU loop runs and the
 * assert aborts with the same message under cpu, gpu and auto. */
/* clang-flags: -O2 */
/* expect-gpu-launches: 2 */
/* expect-status: 134 */
#include <assert.h>

#include "e2e.h"

/* C = A B, n x n, each index asserted below len */
__attribute__((noinline)) void k_mm_assert(const float *a, const float *b, float *c, unsigned n, unsigned len) {
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

typedef struct {
  int len;
  float *data;
} vec;

/* y = 2 x, i asserted below both lengths (fields) */
__attribute__((noinline)) void k_scale_vec(const vec *x, vec *y, int n) {
  for (int i = 0; i < n; i++) {
    assert(i < x->len && i < y->len);
    y->data[i] = 2.0f * x->data[i];
  }
}

int main(int argc, char **argv) {
  unsigned n = (unsigned)e2e_arg(argc, argv, 1, 96);
  float *a = e2e_alloc(n * n * sizeof(float)), *b = e2e_alloc(n * n * sizeof(float));
  float *c = e2e_alloc(n * n * sizeof(float));
  uint32_t s = 19;
  for (unsigned i = 0; i < n * n; i++) a[i] = e2e_unit(&s), b[i] = e2e_unit(&s);
  k_mm_assert(a, b, c, n, n * n);
  e2e_print_f32("c", c, n * n);
  int len = (int)(n * n);
  vec x = {len, a}, y = {len, c};
  k_scale_vec(&x, &y, len);
  e2e_print_f32("y", c, n * n);
  printf("calling k_mm_assert with len %u for %u elements\n", n * n - 1, n * n);
  fflush(stdout);
  k_mm_assert(a, b, c, n, n * n - 1);
  printf("not reached: %a\n", (double)c[0]);
  return 0;
}
