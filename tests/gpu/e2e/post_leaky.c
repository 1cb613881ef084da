/* post_leaky.c: dense layers whose sums the source passes through a leaky
 * ReLU, fmaxf or Wasm's f32.max as it stores them (kn_mm_act's mul and
 * nan_add, issue 19 round 6), as their users write them: plain C, no
 * `restrict`, arrays from an allocation function, run-time sizes, plain
 * `clang -O2`.  dense_leaky: y = W x, then `s > 0 ? s : 0.01f * s` (f32);
 * dense_fmax: y = fmaxf(bias + W x, 0) (libc's fmaxf, inlined by twasmc
 * or wasm-opt: a NaN sum stores 0); dense_wmax: y = f32.max(W x, 0)
 * (`__builtin_wasm_max_f32`, what AssemblyScript's Mathf.max and
 * -ffast-math builds emit: -0 stores +0).  Each one launch of the exact
 * kernel, which repeats the source's compare, select, multiply and NaN
 * add: a row of W made of zeros times a negative x from a -0 bias sums
 * to -0 (leaky keeps -0 = 0.01f * -0, f32.max and fmaxf store +0), a row
 * with a NaN only where the result is no NaN (fmaxf: 0), since a NaN's
 * payload is the hardware's.  Calls: the three apart (three launches);
 * small odd sizes of the leaky layer (one launch).  Sizes from argv
 * (default n 300, m 200). */
/* clang-flags: -O2 */
/* expect-gpu-launches: 4 */
#include <math.h>

#include "polybench.h"

__attribute__((noinline)) void dense_leaky(int m, int n, float *y, const float *W, const float *x) {
  for (int o = 0; o < m; o++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    y[o] = s > 0.0f ? s : 0.01f * s;
  }
}

__attribute__((noinline)) void dense_fmax(int m, int n, float *y, const float *W, const float *x, const float *bias) {
  for (int o = 0; o < m; o++) {
    float s = bias[o];
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    y[o] = fmaxf(s, 0.0f);
  }
}

__attribute__((noinline)) void dense_wmax(int m, int n, float *y, const float *W, const float *x) {
  for (int o = 0; o < m; o++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    y[o] = __builtin_wasm_max_f32(s, 0.0f);
  }
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 300), m = e2e_arg(argc, argv, 2, 200);
  if (n < 8 || m < 8 || n > 4096 || m > 4096) return 2;
  float *W = new_array(sizeof(float) * m * n), *x = new_array(sizeof(float) * n);
  float *bias = new_array(sizeof(float) * m), *y = new_array(sizeof(float) * m);
  fill_f32(W, (size_t)m * n, 81);
  fill_f32(x, (size_t)n, 82);
  fill_f32(bias, (size_t)m, 83);
  /* row 1: zeros times a negative x: -0 (from the -0 bias too) */
  for (int k = 0; k < n; k++) {
    W[n + k] = 0.0f;
    x[k] = x[k] > 0.0f ? -x[k] : x[k];
    if (x[k] == 0.0f) x[k] = -1.0f;
  }
  bias[1] = -0.0f;
  dense_leaky(m, n, y, W, x);
  e2e_print_f32("dense_leaky", y, (size_t)m);
  dense_wmax(m, n, y, W, x);
  e2e_print_f32("dense_wmax", y, (size_t)m);
  float keep = W[2 * n + 3];
  W[2 * n + 3] = NAN; /* row 2's sum NaN: fmaxf stores 0 */
  dense_fmax(m, n, y, W, x, bias);
  e2e_print_f32("dense_fmax", y, (size_t)m);
  W[2 * n + 3] = keep;
  /* odd sizes: a short k, a partial block of rows */
  fill_f32(y, (size_t)m, 84);
  dense_leaky(m / 4 + 3, n / 16 + 3, y, W, x);
  e2e_print_f32("dense_leaky_small", y, (size_t)m);
  return 0;
}
