/* map1d.c: 1-D maps over f32, f64, i32 and i64 arrays with conversions
 * between them and selects, n from argv (default 1 << 20: 4-8 MB per
 * array), one shape per function. */
/* expect-gpu-launches: 5 */
/* Not offloaded yet, meant to be: k_f32_const and k_f64_widen ("unsupported
 * float compare": the NaN-propagating select twasmc puts around an added
 * constant and an f32 -> f64 promotion), k_f32_to_i32 ("may trap: integer
 * division": the range check of i32.trunc_f32_s), k_u8_to_f32 ("narrow
 * integer arithmetic": uitofp i8). */
#include "e2e.h"

__attribute__((noinline)) void k_f32_select(int n, float a, float b, const float *x, float *y) {
  for (int i = 0; i < n; i++) y[i] = x[i] > 0.0f ? a * x[i] + b : x[i] * 0.5f - b;
}

/* Constants added and multiplied. */
__attribute__((noinline)) void k_f32_const(int n, const float *x, float *z) {
  for (int i = 0; i < n; i++) z[i] = x[i] * 2.0f + 1.0f;
}

/* f32 -> f64 widening, f64 arithmetic and division. */
__attribute__((noinline)) void k_f64_widen(int n, double c, const float *x, const double *d,
                                           double *out) {
  for (int i = 0; i < n; i++) out[i] = ((double)x[i] * c + d[i]) / 3.0;
}

/* An f64 compare feeding a select. */
__attribute__((noinline)) void k_f64_select(int n, const double *d, double *out) {
  for (int i = 0; i < n; i++) out[i] = out[i] < d[i] ? d[i] - out[i] : out[i] * 0.25;
}

__attribute__((noinline)) void k_i32_select(int n, int k, const int *p, int *q) {
  for (int i = 0; i < n; i++) {
    int v = p[i] * k + (p[i] >> 7);
    q[i] = v > 250 ? v - (p[i] >> 3) : v ^ 0x5a5a;
  }
}

/* f32 -> i32 (trapping truncation in Wasm; inputs are in range). */
__attribute__((noinline)) void k_f32_to_i32(int n, const float *x, const int *p, int *r) {
  for (int i = 0; i < n; i++) r[i] = (int)(x[i] * 1000.0f) + p[i];
}

__attribute__((noinline)) void k_i64_select(int n, long long m, const int *q, const unsigned *u,
                                            long long *l) {
  for (int i = 0; i < n; i++) {
    long long v = (long long)q[i] * m + (long long)u[i];
    l[i] = v < 0 ? v >> 5 : (long long)((unsigned long long)v << 3);
  }
}

/* i64 -> f32 and i32 -> f32. */
__attribute__((noinline)) void k_int_to_f32(int n, const long long *l, const int *q, float *f) {
  for (int i = 0; i < n; i++) f[i] = (float)l[i] * 0x1p-40f + (float)q[i];
}

/* u8 -> f32. */
__attribute__((noinline)) void k_u8_to_f32(int n, const unsigned char *g, const float *f, float *h) {
  for (int i = 0; i < n; i++) h[i] = (float)g[i] * (1.0f / 255.0f) + f[i];
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 1 << 20);
  float *x = e2e_alloc(n * sizeof(float)), *y = e2e_alloc(n * sizeof(float));
  float *f = e2e_alloc(n * sizeof(float)), *h = e2e_alloc(n * sizeof(float));
  float *z = e2e_alloc(n * sizeof(float));
  double *d = e2e_alloc(n * sizeof(double)), *out = e2e_alloc(n * sizeof(double));
  int *p = e2e_alloc(n * sizeof(int)), *q = e2e_alloc(n * sizeof(int));
  int *r = e2e_alloc(n * sizeof(int));
  unsigned *u = e2e_alloc(n * sizeof(unsigned));
  long long *l = e2e_alloc(n * sizeof(long long));
  unsigned char *g = e2e_alloc(n);
  uint32_t s = 12345;
  for (int i = 0; i < n; i++) {
    x[i] = e2e_unit(&s);
    d[i] = e2e_unit(&s) * 1e3;
    p[i] = (int)e2e_next(&s);
    u[i] = e2e_next(&s);
    g[i] = (unsigned char)e2e_next(&s);
  }
  k_f32_select(n, 1.75f, -0.125f, x, y);
  k_f32_const(n, y, z);
  k_f64_widen(n, 3.0e-3, y, d, out);
  k_f64_select(n, d, out);
  k_i32_select(n, 7, p, q);
  k_f32_to_i32(n, y, p, r);
  k_i64_select(n, -0x9e3779b1LL, q, u, l);
  k_int_to_f32(n, l, r, f);
  k_u8_to_f32(n, g, f, h);
  e2e_print_f32("y", y, n);
  e2e_print_f32("z", z, n);
  e2e_print_f64("out", out, n);
  e2e_print_i32("q", q, n);
  e2e_print_i32("r", r, n);
  e2e_print_i64("l", (const int64_t *)l, n);
  e2e_print_f32("f", f, n);
  e2e_print_f32("h", h, n);
  return 0;
}
