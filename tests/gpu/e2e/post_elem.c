/* post_elem.c: matrix-vector products and a product whose sums the source
 * combines with an element of another array at the output's own index as
 * it stores them (kn_mm_post's elem), as their users write them: plain C,
 * no `restrict`, arrays from an allocation function, run-time sizes,
 * plain `clang -O2`.  residual: r = b - A x (f64, an iterative solver's
 * residual); dense: y = W x + bias, the bias added after the sum (f32,
 * not the sum's start: another rounding order); residual_add: y += W x
 * after the sum (f32, a residual connection: the output's own element);
 * plus: C = A B + D (f32).
 * Each one launch of the exact kernel, which combines each sum with its
 * element in the source's operand order.  Calls: the four apart (four
 * launches); r over b itself (`r = r - A x`: the output is the element's
 * array, no launch, the CPU loop as compiled); small odd sizes of the
 * product (one launch).  Sizes from argv (default n 300, m 200). */
/* clang-flags: -O2 */
/* expect-gpu-launches: 5 */
#include "polybench.h"

__attribute__((noinline)) void residual(int n, double *r, const double *b, const double *A, const double *x) {
  for (int i = 0; i < n; i++) {
    double s = 0.0;
    for (int k = 0; k < n; k++) s += A[i * n + k] * x[k];
    r[i] = b[i] - s;
  }
}

__attribute__((noinline)) void dense(int m, int n, float *y, const float *W, const float *x, const float *bias) {
  for (int o = 0; o < m; o++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[o * n + k] * x[k];
    y[o] = s + bias[o];
  }
}

__attribute__((noinline)) void plus(int m, int n, int p, float *C, const float *A, const float *B, const float *D) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float s = 0.0f;
      for (int k = 0; k < p; k++) s += A[i * p + k] * B[k * n + j];
      C[i * n + j] = s + D[i * n + j];
    }
}

__attribute__((noinline)) void residual_add(int m, int n, float *xv, const float *W, const float *o) {
  for (int i = 0; i < m; i++) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += W[i * n + k] * o[k];
    xv[i] += s;
  }
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 300), m = e2e_arg(argc, argv, 2, 200);
  if (n < 8 || m < 8 || n > 4096 || m > 4096) return 2;
  double *A = new_array(sizeof(double) * n * n), *x = new_array(sizeof(double) * n);
  double *b = new_array(sizeof(double) * n), *r = new_array(sizeof(double) * n);
  fill_f64(A, (size_t)n * n, 81);
  fill_f64(x, (size_t)n, 82);
  fill_f64(b, (size_t)n, 83);
  fill_f64(r, (size_t)n, 84);
  residual(n, r, b, A, x);
  e2e_print_f64("residual", r, (size_t)n);
  /* r = r - A x in place: the element's array is the output */
  residual(n, b, b, A, x);
  e2e_print_f64("residual_in_place", b, (size_t)n);
  float *W = new_array(sizeof(float) * m * n), *xs = new_array(sizeof(float) * n);
  float *bias = new_array(sizeof(float) * m), *y = new_array(sizeof(float) * m);
  fill_f32(W, (size_t)m * n, 85);
  fill_f32(xs, (size_t)n, 86);
  fill_f32(bias, (size_t)m, 87);
  dense(m, n, y, W, xs, bias);
  e2e_print_f32("dense", y, (size_t)m);
  /* a residual connection: y += W x after the sum (y's own element) */
  residual_add(m, n, y, W, xs);
  e2e_print_f32("residual_add", y, (size_t)m);
  float *Am = new_array(sizeof(float) * m * n), *Bm = new_array(sizeof(float) * n * m);
  float *D = new_array(sizeof(float) * m * m), *C = new_array(sizeof(float) * m * m);
  fill_f32(Am, (size_t)m * n, 88);
  fill_f32(Bm, (size_t)n * m, 89);
  fill_f32(D, (size_t)m * m, 90);
  plus(m, m, n, C, Am, Bm, D);
  e2e_print_f32("plus", C, (size_t)m * m);
  /* odd sizes: partial tiles, a short k */
  fill_f32(C, (size_t)m * m, 91);
  plus(m / 4 + 3, m / 8 + 5, n / 16 + 3, C, Am, Bm, D);
  e2e_print_f32("plus_small", C, (size_t)m * m);
  return 0;
}
