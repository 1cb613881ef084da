/* neg_call.c: loops that call a function in their body (an indirect call,
 * and a call to a libm function) are not offloaded; their results must be
 * the same either way.  A plain map beside them is. */
/* expect-gpu-launches: 1 */
#include <math.h>
#include "e2e.h"

/* halve makes a call, so it is no small leaf that twasmc's devirtualisation
 * of sealed tables would inline into the loop: the loop keeps its call */
__attribute__((noinline)) float half_of(float v) { return v * 0.5f; }
static float halve(float v) { return half_of(v) + 0.0f * v; }
static float (*volatile op)(float) = halve;

__attribute__((noinline)) void k_indirect(int n, const float *x, float *y) {
  float (*f)(float) = op;
  for (int i = 0; i < n; i++) y[i] = f(x[i]) + 1.0f;
}

__attribute__((noinline)) void k_libm(int n, const float *x, float *y) {
  for (int i = 0; i < n; i++) y[i] = sinf(x[i]) * 2.0f;
}

__attribute__((noinline)) void k_plain(int n, const float *x, float *y) {
  for (int i = 0; i < n; i++) y[i] = x[i] * x[i] - 0.5f;
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 1 << 20);
  float *x = e2e_alloc(n * 4), *y1 = e2e_alloc(n * 4), *y2 = e2e_alloc(n * 4), *y3 = e2e_alloc(n * 4);
  uint32_t s = 77;
  for (int i = 0; i < n; i++) x[i] = e2e_unit(&s);
  k_indirect(n, x, y1);
  k_libm(n, x, y2);
  k_plain(n, x, y3);
  e2e_print_f32("indirect", y1, n);
  e2e_print_f32("libm", y2, n);
  e2e_print_f32("plain", y3, n);
  return 0;
}
