/* shapes.c: loops in the shapes plain C code has, none written for
 * twasmc, each result checked against the CPU: a ramp from the counter,
 * a 5-point Jacobi step and a 3x3 u8 blur over w x h, dot products (i32
 * offloaded; f32 stays on the CPU without --fp-reassociate), products in
 * ijk and ikj order (f32, and i32 with m, n, p all different), ReLU and
 * clamps, a 2-D scale and a transpose, a 5-tap 1-D convolution, an i64
 * sum, a max, an f64 add, a matrix-vector product.  w x h from argv
 * (default 613 x 419). */
/* expect-gpu-launches: 12 */
#include <stdint.h>
#include "e2e.h"

__attribute__((noinline)) void iota(float *a, int n) { for (int i = 0; i < n; i++) a[i] = (float)i * 0.5f; }
__attribute__((noinline)) void jac(int w, int h, const float *in, float *out) {
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++)
      out[y * w + x] = 0.25f * (in[(y - 1) * w + x] + in[(y + 1) * w + x] + in[y * w + x - 1] + in[y * w + x + 1]);
}
__attribute__((noinline)) void blur(int w, int h, const uint8_t *in, uint8_t *out) {
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++) {
      int s = 0;
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) s += in[(y + dy) * w + x + dx];
      out[y * w + x] = (uint8_t)(s / 9);
    }
}
__attribute__((noinline)) float dot(const float *a, const float *b, int n) { float s = 0; for (int i = 0; i < n; i++) s += a[i] * b[i]; return s; }
__attribute__((noinline)) int idot(const int *a, const int *b, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i] * b[i]; return s; }
__attribute__((noinline)) void mm_ijk(int n, const float *a, const float *b, float *c) {
  for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) { float s = 0; for (int k = 0; k < n; k++) s += a[i*n+k]*b[k*n+j]; c[i*n+j] = s; }
}
__attribute__((noinline)) void mm_ikj(int n, const float *a, const float *b, float *c) {
  for (int i = 0; i < n; i++) for (int k = 0; k < n; k++) { float r = a[i*n+k]; for (int j = 0; j < n; j++) c[i*n+j] += r*b[k*n+j]; }
}
__attribute__((noinline)) void mmi(int m, int n, int p, const int *a, const int *b, int *c) {
  for (int i = 0; i < m; i++) for (int j = 0; j < p; j++) { int s = 0; for (int k = 0; k < n; k++) s += a[i*n+k]*b[k*p+j]; c[i*p+j] = s; }
}
__attribute__((noinline)) void relu(float *a, int n) { for (int i = 0; i < n; i++) a[i] = a[i] > 0 ? a[i] : 0; }
__attribute__((noinline)) void clampi(int *a, int n, int lo, int hi) { for (int i = 0; i < n; i++) { int v = a[i]; a[i] = v < lo ? lo : v > hi ? hi : v; } }
__attribute__((noinline)) void scale2d(int r, int c, float *m, float s) { for (int i = 0; i < r; i++) for (int j = 0; j < c; j++) m[i*c+j] *= s; }
__attribute__((noinline)) void transpose(int n, const float *a, float *b) { for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) b[j*n+i] = a[i*n+j]; }
__attribute__((noinline)) long long sumi64(const long long *a, int n) { long long s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }
__attribute__((noinline)) int maxi(const int *a, int n) { int m = a[0]; for (int i = 1; i < n; i++) if (a[i] > m) m = a[i]; return m; }
__attribute__((noinline)) void matvec(int m, int n, const float *a, const float *x, float *y) { for (int i = 0; i < m; i++) { float s = 0; for (int j = 0; j < n; j++) s += a[i*n+j]*x[j]; y[i] = s; } }
__attribute__((noinline)) void conv1d(int n, const float *x, float *y) { for (int i = 2; i < n - 2; i++) y[i] = 0.1f*x[i-2] + 0.2f*x[i-1] + 0.4f*x[i] + 0.2f*x[i+1] + 0.1f*x[i+2]; }
__attribute__((noinline)) void add3(int n, const double *a, const double *b, double *c) { for (int i = 0; i < n; i++) c[i] = a[i] + b[i]; }

int main(int argc, char **argv) {
  int w = e2e_arg(argc, argv, 1, 613), h = e2e_arg(argc, argv, 2, 419), n = w * h, sq = 157;
  float *f1 = e2e_alloc((size_t)n * 4), *f2 = e2e_alloc((size_t)n * 4), *f3 = e2e_alloc((size_t)n * 4);
  int *i1 = e2e_alloc((size_t)n * 4), *i2 = e2e_alloc((size_t)n * 4), *i3 = e2e_alloc((size_t)n * 4);
  uint8_t *u1 = e2e_alloc((size_t)n), *u2 = e2e_alloc((size_t)n);
  long long *l = e2e_alloc((size_t)n * 8);
  double *d1 = e2e_alloc((size_t)n * 8), *d2 = e2e_alloc((size_t)n * 8), *d3 = e2e_alloc((size_t)n * 8);
  uint32_t s = 77;
  for (int i = 0; i < n; i++) {
    f1[i] = e2e_unit(&s);
    f2[i] = e2e_unit(&s);
    f3[i] = 0.0f;
    i1[i] = (int)e2e_next(&s);
    i2[i] = (int)e2e_next(&s);
    u1[i] = (uint8_t)e2e_next(&s);
    u2[i] = 0;
    l[i] = (long long)e2e_next(&s) << 20;
    d1[i] = e2e_unit(&s);
    d2[i] = e2e_unit(&s);
  }
  iota(f3, n);
  e2e_print_f32("iota", f3, (size_t)n);
  jac(w, h, f1, f3);
  e2e_print_f32("jac", f3, (size_t)n);
  blur(w, h, u1, u2);
  e2e_print_bytes("blur", u2, (size_t)n);
  printf("dot %a idot %d sum %lld max %d\n", dot(f1, f2, n), idot(i1, i2, n), sumi64(l, n), maxi(i1, n));
  mm_ijk(sq, f1, f2, f3);
  e2e_print_f32("mm_ijk", f3, (size_t)sq * sq);
  mm_ikj(sq, f1, f2, f3);
  e2e_print_f32("mm_ikj", f3, (size_t)sq * sq);
  mmi(sq - 20, sq + 3, sq - 7, i1, i2, i3);
  e2e_print_i32("mmi", i3, (size_t)(sq - 20) * (sq - 7));
  relu(f1, n);
  clampi(i1, n, -1000000, 1000000);
  e2e_print_f32("relu", f1, (size_t)n);
  e2e_print_i32("clamp", i1, (size_t)n);
  scale2d(h, w, f2, 1.5f);
  e2e_print_f32("scale2d", f2, (size_t)n);
  transpose(sq * 2, f2, f3);
  e2e_print_f32("transpose", f3, (size_t)sq * sq * 4);
  matvec(h, w, f2, f1, f3);
  e2e_print_f32("matvec", f3, (size_t)h);
  conv1d(n, f2, f3);
  e2e_print_f32("conv1d", f3, (size_t)n);
  add3(n, d1, d2, d3);
  e2e_print_f64("add3", d3, (size_t)n);
  return 0;
}
