/* simd_counter.c: maps whose values use the loop counter, built with
 * `clang -O2 -msimd128`: clang's vector loop counts in an induction vector
 * <0, 1, 2, 3> stepped by a splat of 4, each lane its own iteration's i
 * (kernels/kn_lanes.c vector_counter), a float ramp from a live start
 * (counter.c's k_ramp) and an i32 one.  n from argv (default 1 << 20, a
 * multiple of 4: the vector loop alone runs, one launch per call; the
 * scalar remainder, a map of its own, does not run). */
/* clang-flags: -O2 -msimd128 */
/* expect-gpu-launches: 2 */
#include "e2e.h"

__attribute__((noinline)) void k_ramp(int n, int from, float *a) {
  for (int i = 0; i < n; i++) a[i] = (float)(3 * i + from) * 0.5f;
}

__attribute__((noinline)) void k_ramp_i32(int n, int from, int *a) {
  for (int i = 0; i < n; i++) a[i] = 7 * i - from;
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 1 << 20);
  if (n % 4) return 2;
  float *a = e2e_alloc((size_t)n * sizeof(float));
  int *b = e2e_alloc((size_t)n * sizeof(int));
  k_ramp(n, -12345, a);
  k_ramp_i32(n, 99, b);
  e2e_print_f32("ramp", a, (size_t)n);
  e2e_print_i32("ramp_i32", b, (size_t)n);
  return 0;
}
