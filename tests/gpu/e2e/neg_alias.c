/* neg_alias.c: one map called with its output aliasing its input at run
 * time: in place (exactly the elements read are written: the GPU may take
 * it), output one element ahead of the input (each iteration reads what
 * the previous one wrote: a serial recurrence, must stay on the CPU) and
 * one element behind (overlapping, refused by the run-time check). */
/* expect-gpu-launches: 1 */
#include "e2e.h"

__attribute__((noinline)) void k_affine(int n, float a, float b, const float *x, float *y) {
  for (int i = 0; i < n; i++) y[i] = a * x[i] + b;
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 1 << 20);
  float *buf = e2e_alloc((n + 2) * sizeof(float));
  uint32_t s = 3;
  for (int i = 0; i < n + 2; i++) buf[i] = e2e_unit(&s);
  k_affine(n, 0.5f, 0.25f, buf, buf); /* in place */
  e2e_print_f32("in_place", buf, n + 2);
  k_affine(n, 1.0f, 0x1p-10f, buf, buf + 1); /* ahead by one: a running recurrence */
  e2e_print_f32("ahead", buf, n + 2);
  k_affine(n, -1.5f, 1.0f, buf + 1, buf); /* behind by one */
  e2e_print_f32("behind", buf, n + 2);
  return 0;
}
