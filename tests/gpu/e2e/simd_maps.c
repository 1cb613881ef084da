/* simd_maps.c: maps that clang vectorises at -O2 -msimd128 (a v128 loop of
 * f32x4, i32x4 or f64x2 operations, then a scalar remainder loop), as
 * users build them.  Each vector loop is offloaded as the scalar map it
 * implements (kernels/kn_lanes.c): n from argv (default 1 << 20, a
 * multiple of 4: the remainder loops do not run), then n - 3 (they run 3
 * iterations, on the GPU too when it is forced).  The plain -O2 build
 * launches 6 kernels (three maps, twice); this build the same 6: since
 * issue 19's top regions (kernels/kn_recog_top.c) each function's vector
 * loop, its remainder (and scale_add_i32's prologue loop) are one nest,
 * launched once a call (scale_add_i32's vector loop and its remainder
 * were two nests before, its prologue loop refused as too little work);
 * launch counts not measured again on the GPU for this change.  (A vector
 * loop inside another loop, next to its remainder loop, is not offloaded
 * yet: docs/PERFORMANCE.md, issue 19.) */
/* clang-flags: -O2 -msimd128 */
/* expect-gpu-launches: 6 */
#include "e2e.h"

__attribute__((noinline)) void saxpy(int n, float a, const float *x, const float *y, float *out) {
  for (int i = 0; i < n; i++) out[i] = a * x[i] + y[i];
}

__attribute__((noinline)) void scale_add_i32(int n, int k, const int *x, int *out) {
  for (int i = 0; i < n; i++) out[i] = x[i] * k + 7;
}

__attribute__((noinline)) void axpy_f64(int n, double a, const double *x, double *y) {
  for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}

static void run(int n, uint32_t seed) {
  float *x = e2e_alloc(n * sizeof(float)), *y = e2e_alloc(n * sizeof(float)), *o = e2e_alloc(n * sizeof(float));
  int *p = e2e_alloc(n * sizeof(int)), *q = e2e_alloc(n * sizeof(int));
  double *d = e2e_alloc(n * sizeof(double)), *e = e2e_alloc(n * sizeof(double));
  for (int i = 0; i < n; i++) {
    x[i] = e2e_unit(&seed);
    y[i] = e2e_unit(&seed);
    p[i] = (int)e2e_next(&seed);
    d[i] = e2e_unit(&seed);
    e[i] = e2e_unit(&seed) * 3.0;
  }
  saxpy(n, 1.75f, x, y, o);
  scale_add_i32(n, -3, p, q);
  axpy_f64(n, 0.3, d, e);
  e2e_print_f32("saxpy", o, (size_t)n);
  e2e_print_i32("scale_add_i32", q, (size_t)n);
  e2e_print_f64("axpy_f64", e, (size_t)n);
  free(x), free(y), free(o), free(p), free(q), free(d), free(e);
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 1 << 20);
  run(n, 7);
  run(n - 3, 11);
  return 0;
}
