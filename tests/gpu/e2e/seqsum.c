/* seqsum.c: exact float sums in source order after a kernel wrote their
 * data (issue 19 item 7): a map writes y (1M f32, 4 MiB), then rmsnorm's
 * sum of squares of y, a dot product of y and x, and an f64 sum of a
 * map's output, all without --fp-reassociate, each a sequential sum (one
 * GPU thread adding the terms in the loop's order: bit-identical).  Under
 * TWASM_DEVICE=gpu the maps and the sums launch (2 maps and 3 sums a
 * round, 5 rounds: 25); in auto mode the sums run on the GPU only where their data
 * lies there (managed memory a launch moved), the CPU's loop elsewhere:
 * on the lent H200's pinned memory with its device copy the host holds the
 * same bytes, so the CPU's. */
/* expect-gpu-launches: 25 */
#include "e2e.h"

__attribute__((noinline)) void k_scale(int n, float a, const float *x, float *y) {
  for (int i = 0; i < n; i++) y[i] = a * x[i] + 0.25f;
}

__attribute__((noinline)) float k_sum_squares(int n, const float *x) {
  float ss = 0.0f;
  for (int i = 0; i < n; i++) ss += x[i] * x[i];
  return ss;
}

__attribute__((noinline)) float k_dot(int n, const float *x, const float *y) {
  float s = 0.0f;
  for (int i = 0; i < n; i++) s += x[i] * y[i];
  return s;
}

__attribute__((noinline)) void k_widen(int n, const float *x, double *d) {
  for (int i = 0; i < n; i++) d[i] = (double)x[i] * 1.5;
}

__attribute__((noinline)) double k_sum_f64(int n, const double *d) {
  double s = 0.0;
  for (int i = 0; i < n; i++) s += d[i];
  return s;
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 1 << 20);
  float *x = e2e_alloc(n * sizeof(float)), *y = e2e_alloc(n * sizeof(float));
  double *d = e2e_alloc(n * sizeof(double));
  uint32_t s = 7;
  for (int i = 0; i < n; i++) x[i] = e2e_unit(&s);
  for (int r = 0; r < 5; r++) {
    k_scale(n, 0.5f + (float)r, x, y);
    float ss = k_sum_squares(n, y);
    float dot = k_dot(n, x, y);
    k_widen(n, y, d);
    printf("round %d: sum_squares %a dot %a sum_f64 %a\n", r, (double)ss, (double)dot, k_sum_f64(n, d));
  }
  return 0;
}
