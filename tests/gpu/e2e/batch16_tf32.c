/* batch16_tf32.c: a batch of 16x16x16 f32 products on tf32 tensor cores
 * (inexact, asked for): prints only whether every element is within the
 * tf32 bound of ptx.h against a double reference. */
/* twasmc-flags: --tensor-cores=tf32 */
/* expect-gpu-launches: 1 */
#include <math.h>
#include "e2e.h"

__attribute__((noinline)) void k_batch_f32(int nb, const float *a, const float *b, float *c) {
  for (int t = 0; t < nb; t++)
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 16; j++) {
        float s = 0.0f;
        for (int p = 0; p < 16; p++) s += a[t * 256 + i * 16 + p] * b[t * 256 + p * 16 + j];
        c[t * 256 + i * 16 + j] = s;
      }
}

static double mul_f64(double x, double y) { return x * y; }
/* volatile: the call stays indirect, so the reference loop never becomes
 * a kernel. */
static double (*volatile ref_mul)(double, double) = mul_f64;

int main(int argc, char **argv) {
  int nb = e2e_arg(argc, argv, 1, 4096);
  size_t n = (size_t)nb * 256;
  float *a = e2e_alloc(n * 4), *b = e2e_alloc(n * 4), *c = e2e_alloc(n * 4);
  uint32_t s = 77;
  for (size_t i = 0; i < n; i++) {
    a[i] = e2e_unit(&s);
    b[i] = e2e_unit(&s);
  }
  k_batch_f32(nb, a, b, c);
  double (*mul)(double, double) = ref_mul;
  double worst = 0.0, rel = 0x1p-10 + 16 * 0x1p-24;
  for (int t = 0; t < nb; t++)
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 16; j++) {
        double exact = 0.0, mag = 0.0;
        for (int p = 0; p < 16; p++) {
          double x = mul(a[t * 256 + i * 16 + p], b[t * 256 + p * 16 + j]);
          exact += x;
          mag += fabs(x);
        }
        double bound = rel * mag, err = fabs((double)c[t * 256 + i * 16 + j] - exact);
        double ratio = bound > 0 ? err / bound : (err > 0 ? INFINITY : 0.0);
        if (ratio > worst) worst = ratio;
      }
  fprintf(stderr, "batch16_tf32: largest error / bound = %.3g\n", worst);
  if (worst <= 1.0)
    printf("batch16_tf32 %d: within bound\n", nb);
  else
    printf("batch16_tf32 %d: OUT OF BOUND (largest error / bound = %.3g)\n", nb, worst);
  return 0;
}
