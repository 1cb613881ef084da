/* mm_large.c: a large f32 product C = A * B (N from argv, default 512; A
 * and B with leading dimension N + 8) in ikj order, checked against a
 * reference summed in f64 on a path that cannot be offloaded (each product
 * goes through an indirect call).  Built as is, the product is exact and
 * its hash is printed; mm_large_tf32.c builds the same source with
 * --tensor-cores=tf32, where only the documented bound is checked:
 *   |C - C_exact| <= (2^-10 + K * 2^-24) * sum_k |A[i][k] * B[k][j]|
 * so stdout is the same on the CPU and the GPU in both builds (the largest
 * error ratio goes to stderr). */
#ifndef MM_TF32
/* expect-gpu-launches: 1 */
#endif
#include <math.h>
#include "e2e.h"

__attribute__((noinline)) void k_mm_ikj(int n, int ld, const float *a, const float *b, float *c) {
  for (int i = 0; i < n; i++)
    for (int p = 0; p < n; p++)
      for (int j = 0; j < n; j++) c[i * ld + j] += a[i * ld + p] * b[p * ld + j];
}

static double mul_f64(double x, double y) { return x * y; }
/* volatile: the call stays indirect, so the reference loop never becomes
 * a kernel. */
static double (*volatile ref_mul)(double, double) = mul_f64;

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 512), ld = n + 8;
  size_t sz = (size_t)n * ld;
  float *a = e2e_alloc(sz * 4), *b = e2e_alloc(sz * 4), *c = e2e_alloc(sz * 4);
  uint32_t s = 1024;
  for (size_t i = 0; i < sz; i++) {
    a[i] = e2e_unit(&s);
    b[i] = e2e_unit(&s);
  }
  k_mm_ikj(n, ld, a, b, c);
  double (*mul)(double, double) = ref_mul;
  double worst = 0.0;
  double *exact = e2e_alloc((size_t)n * 8), *mag = e2e_alloc((size_t)n * 8);
  double rel = 0x1p-10 + n * 0x1p-24;
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) exact[j] = mag[j] = 0.0;
    for (int p = 0; p < n; p++)
      for (int j = 0; j < n; j++) {
        double t = mul(a[i * ld + p], b[p * ld + j]);
        exact[j] += t;
        mag[j] += fabs(t);
      }
    for (int j = 0; j < n; j++) {
      double bound = rel * mag[j], err = fabs((double)c[i * ld + j] - exact[j]);
      double ratio = bound > 0 ? err / bound : (err > 0 ? INFINITY : 0.0);
      if (ratio > worst) worst = ratio;
    }
  }
  fprintf(stderr, "mm_large: n %d, largest error / bound = %.3g\n", n, worst);
  if (worst <= 1.0)
    printf("mm_large %d: within bound\n", n);
  else
    printf("mm_large %d: OUT OF BOUND (largest error / bound = %.3g)\n", n, worst);
#ifndef MM_TF32
  e2e_print_f32("c", c, sz);
#endif
  return 0;
}
