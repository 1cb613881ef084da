/* dot_f32.c: float add reductions (an f32 dot product, an f64 sum) built
 * without --fp-reassociate: the order of the additions is the program's,
 * so on the GPU they are exact in-order sums (one thread adding every
 * term in order, ptx_seqsum.c), bit-identical to the CPU's; under
 * TWASM_DEVICE=gpu both launch (auto mode takes them only where their
 * data lies on the device: here the CPU wrote a and b).  The map k_square
 * (f32 -> f64) of the same data launches too: 3 launches (counted with
 * tests/fake_cuda, FAKE_CUDA=any). */
/* expect-gpu-launches: 3 */
#include "e2e.h"

__attribute__((noinline)) float k_dot_f32(int n, const float *a, const float *b) {
  float s = 0.0f;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

__attribute__((noinline)) double k_sum_f64(int n, const double *a) {
  double s = 0.0;
  for (int i = 0; i < n; i++) s += a[i];
  return s;
}

__attribute__((noinline)) void k_square(int n, const float *a, double *d) {
  for (int i = 0; i < n; i++) d[i] = (double)a[i] * (double)a[i];
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 1 << 20);
  float *a = e2e_alloc(n * sizeof(float)), *b = e2e_alloc(n * sizeof(float));
  double *d = e2e_alloc(n * sizeof(double));
  uint32_t s = 2024;
  for (int i = 0; i < n; i++) {
    a[i] = e2e_unit(&s);
    b[i] = e2e_unit(&s);
  }
  k_square(n, a, d);
  printf("dot_f32 %a\n", (double)k_dot_f32(n, a, b));
  printf("sum_f64 %a\n", k_sum_f64(n, d));
  return 0;
}
