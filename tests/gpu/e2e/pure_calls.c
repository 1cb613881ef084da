/* pure_calls.c: maps that call the module's own libm (issue 19 item 6),
 * as an LLM's activations and a softmax's exponentials do: expf, exp,
 * tanhf and powf are wasi-libc's (musl's) Wasm code; expf and exp are
 * pure (arithmetic and reads of their constant tables), so each of their
 * maps is a kernel calling that same code (kernels/kn_recog_call.c), its
 * tables a read range checked before the launch.  Inputs cover the callees' special paths (overflow
 * to inf, underflow to 0, infinities, denormals; no NaN, whose payload is
 * the hardware's), so the GPU runs every branch of the code the CPU runs.
 * Offloaded: exp_map, exp_f64, swiglu (expf), softmax's division, and
 * round_of's copy of the special values: five launches a round, two
 * rounds, 10 under TWASM_DEVICE=gpu.  On the CPU: gelu (tanhf calls
 * expm1f, whose float-to-int conversion may trap), rope_freq (clang's
 * unrolled copies, told apart by the re-roller), softmax's exponentials
 * (the sum read after the loop) and cos_map (__rem_pio2f's large
 * arguments read a table at an unbounded index). */
/* clang-flags: -O2 */
/* expect-gpu-launches: 10 */
#include <math.h>

#include "e2e.h"

__attribute__((noinline)) void exp_map(int n, float *y, const float *x) {
  for (int i = 0; i < n; i++) y[i] = expf(x[i]);
}

__attribute__((noinline)) void exp_f64(int n, double *y, const double *x) {
  for (int i = 0; i < n; i++) y[i] = exp(x[i]);
}

/* SwiGLU: h = silu(h) * g, in place */
__attribute__((noinline)) void swiglu(int n, float *h, const float *g) {
  for (int i = 0; i < n; i++) {
    float v = h[i];
    v *= 1.0f / (1.0f + expf(-v));
    h[i] = v * g[i];
  }
}

/* GELU, tanh form */
__attribute__((noinline)) void gelu(int n, float *y, const float *x) {
  for (int i = 0; i < n; i++) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
  }
}

/* RoPE's frequencies, heads of 64 */
__attribute__((noinline)) void rope_freq(int n, float *f) {
  for (int i = 0; i < n; i++) f[i] = 1.0f / powf(10000.0f, (float)(i % 64) / 64.0f);
}

/* llama2.c's softmax */
__attribute__((noinline)) void softmax(float *x, int size) {
  float max_val = x[0];
  for (int i = 1; i < size; i++)
    if (x[i] > max_val) max_val = x[i];
  float sum = 0.0f;
  for (int i = 0; i < size; i++) {
    x[i] = expf(x[i] - max_val);
    sum += x[i];
  }
  for (int i = 0; i < size; i++) x[i] /= sum;
}

__attribute__((noinline)) void cos_map(int n, float *y, const float *x) {
  for (int i = 0; i < n; i++) y[i] = cosf(x[i]);
}

static void round_of(int n, uint32_t seed) {
  size_t k = (size_t)n;
  float *x = e2e_alloc(k * sizeof *x), *y = e2e_alloc(k * sizeof *y), *g = e2e_alloc(k * sizeof *g);
  double *xd = e2e_alloc(k * sizeof *xd), *yd = e2e_alloc(k * sizeof *yd);
  for (size_t i = 0; i < k; i++) {
    x[i] = e2e_unit(&seed) * 20.0f;
    g[i] = e2e_unit(&seed);
    xd[i] = (double)e2e_unit(&seed) * 100.0;
  }
  /* the special paths */
  /* no NaN in or out: a NaN's payload is the hardware's */
  const float sp[] = {100.0f, -200.0f, INFINITY, 89.5f, -1e30f, 88.72f, -103.97f, 0.0f, -0.0f, 1e-40f};
  for (size_t i = 0; i < sizeof sp / sizeof *sp && i < k; i++) x[i] = sp[i], xd[i] = (double)sp[i] * 8.0;
  printf("n %d\n", n);
  exp_map(n, y, x);
  e2e_print_f32("expf", y, k);
  exp_f64(n, yd, xd);
  e2e_print_f64("exp", yd, k);
  gelu(n, y, x);
  e2e_print_f32("gelu", y, k);
  swiglu(n, x, g);
  e2e_print_f32("swiglu", x, k);
  rope_freq(n, y);
  e2e_print_f32("rope", y, k);
  cos_map(n, y, g);
  e2e_print_f32("cosf", y, k);
  softmax(g, n);
  e2e_print_f32("softmax", g, k);
  free(x);
  free(y);
  free(g);
  free(xd);
  free(yd);
}

int main(void) {
  round_of(1 << 20, 7u);
  round_of(100003, 11u);
  return 0;
}
