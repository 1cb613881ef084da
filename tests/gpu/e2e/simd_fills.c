/* simd_fills.c: maps at the top of their functions that clang's loop
 * vectoriser writes in shapes the region reader took apart before
 * session 56 (issue 19 item 4, SIMD_SPLIT), each now one region,
 * offloaded as the scalar loop's map from j = 0:
 *   - fill_half `x[i] = 0.5f`: the v128 loop stores the constant as
 *     `<2 x i64>` (f32 pairs), its remainder as i32 (kn_lanes_region.c
 *     const_stores_as_rep);
 *   - ramp and ramp_i32 `3 i + from`, `7 i - from`: a vector counter
 *     `<0, 1, 2, 3>` times a splat plus a splat, against the remainder's
 *     scalar counter from `3 s + from` (kn_lanes.c lane_form);
 *   - round_of's own fill after its printf: the guard shares the call's
 *     block, cut by the heads pass (ir_split_head.c), whose test of "a
 *     loop computing vectors" now counts a loop that only stores a
 *     constant vector (ir_loop_has_vectors).
 * In round_of the inlined ramp and ramp_i32 regions follow each other:
 * ramp_i32's base in V is GVN's phi of copies of `zext b` (kn_recog_affine.c
 * live_value reads it as b).  Four regions a round; rounds of n = 1000003 and 7
 * launch 4 each, n = 0 none: 8 under TWASM_DEVICE=gpu. */
/* clang-flags: -O2 -msimd128 */
/* expect-gpu-launches: 8 */
#include "e2e.h"

__attribute__((noinline)) void fill_half(int n, float *x) {
  for (int i = 0; i < n; i++) x[i] = 0.5f;
}

__attribute__((noinline)) void ramp(int n, int from, float *a) {
  for (int i = 0; i < n; i++) a[i] = (float)(3 * i + from) * 0.5f;
}

__attribute__((noinline)) void ramp_i32(int n, int from, int *a) {
  for (int i = 0; i < n; i++) a[i] = 7 * i - from;
}

static void round_of(int n, uint32_t seed) {
  size_t k = n > 0 ? (size_t)n : 1;
  float *x = e2e_alloc(k * sizeof *x), *a = e2e_alloc(k * sizeof *a), *q = e2e_alloc(k * sizeof *q);
  int *b = e2e_alloc(k * sizeof *b);
  for (size_t i = 0; i < k; i++) {
    x[i] = a[i] = q[i] = e2e_unit(&seed);
    b[i] = (int)e2e_next(&seed);
  }
  printf("n %d\n", n);
  for (int i = 0; i < n; i++) q[i] = 0.25f;
  fill_half(n, x);
  ramp(n, -12345, a);
  ramp_i32(n, (int)seed, b);
  e2e_print_f32("quarter", q, k);
  e2e_print_f32("half", x, k);
  e2e_print_f32("ramp", a, k);
  e2e_print_i32("ramp_i32", b, k);
  free(x);
  free(a);
  free(q);
  free(b);
}

int main(void) {
  round_of(1000003, 7u);
  round_of(7, 11u);
  round_of(0, 13u);
  return 0;
}
