/* simd_inlined.c: maps that clang's loop vectoriser turns into a v128
 * loop and a scalar remainder, inlined into their caller between other
 * code (as clang's inliner and wasm-opt leave small kernels), several of
 * one count n, so that jump threading shares the guard `n > 3` of one
 * loop with the next and the guard's compare follows a printf in its
 * block (issue 19 item 4).  Each map of n is one region, from its guard
 * to where its paths meet again (kernels/kn_recog_top.c blocks_between),
 * launched once: axpb, scale_i32, mix_f64 (3 launches a round).  The two
 * maps of h = n / 2 + 1 are not yet (their remainder counts `(n/2 - s) +
 * 1` and nothing in the region proves h below 2^31): each is its v128
 * loop and its remainder, two launches when both run.  Round one (n =
 * 1000003) launches 7, round two (n = 3, h = 2: no v128 iterations of h)
 * 5: 12 under TWASM_DEVICE=gpu. */
/* clang-flags: -O2 -msimd128 */
/* expect-gpu-launches: 12 */
#include "e2e.h"

static void axpb(int n, float a, float b, const float *x, float *y) {
  for (int i = 0; i < n; i++) y[i] = a * x[i] + b;
}

static void scale_i32(int n, int k, const int *p, int *q) {
  for (int i = 0; i < n; i++) q[i] = p[i] * k + 7;
}

static void mix_f64(int n, double c, const double *d, double *e) {
  for (int i = 0; i < n; i++) e[i] = d[i] * c - 0.5;
}

static void round_of(int n, uint32_t seed) {
  float *x = e2e_alloc((size_t)n * sizeof *x), *y = e2e_alloc((size_t)n * sizeof *y);
  int *p = e2e_alloc((size_t)n * sizeof *p), *q = e2e_alloc((size_t)n * sizeof *q);
  double *d = e2e_alloc((size_t)n * sizeof *d), *e = e2e_alloc((size_t)n * sizeof *e);
  for (int i = 0; i < n; i++) {
    x[i] = e2e_unit(&seed);
    p[i] = (int)e2e_next(&seed);
    d[i] = (double)e2e_unit(&seed) * 3.0;
  }
  axpb(n, 1.75f, -0.25f, x, y);
  printf("n %d: y[0] %a\n", n, (double)y[0]);
  scale_i32(n, -3, p, q);
  mix_f64(n, 1.0 / 3.0, d, e);
  int h = n / 2 + 1;
  axpb(h, -0.5f, 2.0f, y, x);
  scale_i32(h, 5, q, p);
  e2e_print_f32("y", y, (size_t)n);
  e2e_print_i32("q", q, (size_t)n);
  e2e_print_f64("e", e, (size_t)n);
  e2e_print_f32("x", x, (size_t)n);
  e2e_print_i32("p", p, (size_t)n);
  free(x), free(y), free(p), free(q), free(d), free(e);
}

int main(int argc, char **argv) {
  round_of(e2e_arg(argc, argv, 1, 1000003), 0x2545f491u);
  round_of(e2e_arg(argc, argv, 2, 3), 0x9e3779b9u);
  return 0;
}
