/* post_clamp.c: dense layers whose sums the source clamps as it stores
 * them (kn_mm_act then act2, issue 19 round 7), as their users write
 * them: plain C, no `restrict`, arrays from an allocation function,
 * run-time sizes, plain `clang -O2`.  dense_relu6: y = fminf(fmaxf(W x,
 * 0), 6) (libc's fmaxf and fminf inlined: a NaN sum stores 6, fmaxf's 0
 * then fminf); dense_clamp: y = `s < -1 ? -1 : s > 1 ? 1 : s` from the
 * bias (f64: the inner `s > 1` first, then `< -1` on its result, which
 * the recogniser proves the same); dense_hardtanh: two ifs on the sum
 * (`if (s > 4) s = 4; if (s < -4) s = -4;`, f32, bias added after the
 * sum).  Each one launch of the exact kernel, which repeats the
 * source's compares and selects in order: a row of W of zeros times a
 * negative x from a -0 bias sums to -0 in dense_clamp (kept: -0 is
 * inside), a NaN row only through relu6 (stored 6: fmaxf's 0 would be
 * stored 0; no NaN reaches the store, whose payload would be the
 * hardware's); about a sixth of relu6's rows store 6, half of clamp's
 * rows a bound.  Calls: the three apart (three
 * launches); small odd sizes of relu6 (one launch).  Sizes from argv
 * (default n 300, m 200). */
/* clang-flags: -O2 */
/* expect-gpu-launches: 4 */
#include <math.h>

#include "polybench.h"

__attribute__((noinline)) void dense_relu6(int m, int n, float *y, const float *W, const float *x) {
  for (int o = 0; o < m; o++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    y[o] = fminf(fmaxf(s, 0.0f), 6.0f);
  }
}

__attribute__((noinline)) void dense_clamp(int m, int n, double *y, const double *W, const double *x,
                                           const double *bias) {
  for (int o = 0; o < m; o++) {
    double s = bias[o];
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    y[o] = s < -1.0 ? -1.0 : s > 1.0 ? 1.0 : s;
  }
}

__attribute__((noinline)) void dense_hardtanh(int m, int n, float *y, const float *W, const float *x,
                                              const float *bias) {
  for (int o = 0; o < m; o++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    s = s + bias[o];
    if (s > 4.0f) s = 4.0f;
    if (s < -4.0f) s = -4.0f;
    y[o] = s;
  }
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 300), m = e2e_arg(argc, argv, 2, 200);
  if (n < 8 || m < 8 || n > 4096 || m > 4096) return 2;
  float *W = new_array(sizeof(float) * m * n), *x = new_array(sizeof(float) * n);
  float *bias = new_array(sizeof(float) * m), *y = new_array(sizeof(float) * m);
  double *Wd = new_array(sizeof(double) * m * n), *xd = new_array(sizeof(double) * n);
  double *bd = new_array(sizeof(double) * m), *yd = new_array(sizeof(double) * m);
  fill_f32(W, (size_t)m * n, 91);
  fill_f32(x, (size_t)n, 92);
  fill_f32(bias, (size_t)m, 93);
  fill_f64(Wd, (size_t)m * n, 95);
  fill_f64(xd, (size_t)n, 96);
  fill_f64(bd, (size_t)m, 97);
  /* row 1: zeros times a negative x: -0 (the sum from a -0 bias) */
  for (int k = 0; k < n; k++) {
    W[n + k] = 0.0f;
    x[k] = x[k] > 0.0f ? -x[k] : x[k];
    if (x[k] == 0.0f) x[k] = -1.0f;
    Wd[n + k] = 0.0;
    xd[k] = (double)x[k];
  }
  bias[1] = -0.0f;
  bd[1] = -0.0;
  float keep = W[2 * n + 3];
  W[2 * n + 3] = NAN; /* row 2's sum NaN: relu6 stores 6 */
  dense_relu6(m, n, y, W, x);
  e2e_print_f32("dense_relu6", y, (size_t)m);
  W[2 * n + 3] = keep;
  dense_clamp(m, n, yd, Wd, xd, bd);
  e2e_print_f64("dense_clamp", yd, (size_t)m);
  dense_hardtanh(m, n, y, W, x, bias);
  e2e_print_f32("dense_hardtanh", y, (size_t)m);
  /* odd sizes: a short k, a partial block of rows */
  fill_f32(y, (size_t)m, 94);
  dense_relu6(m / 4 + 3, n / 16 + 3, y, W, x);
  e2e_print_f32("dense_relu6_small", y, (size_t)m);
  return 0;
}
