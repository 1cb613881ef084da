/* simd_top_sums.c: integer reductions at the top of their functions that
 * clang's loop vectoriser keeps in v128 lanes (an i32x4 or i64x2
 * accumulator, the lanes combined after the vector loop by adds or
 * smax/smin and shuffles, a scalar remainder going on from there): each
 * is one region, offloaded as the scalar loop's reduction from j = 0
 * (kernels/kn_recog_top.c (g), issue 19 item 4).  Sums wrap (the terms
 * take the whole i32 range), sum_from starts at a run-time value (clang
 * puts it in one lane of zeros), sum_widen adds i32 terms into an i64
 * (two i32 lanes loaded and sign-extended to i64x2), and the counts leave
 * 3, 1 and 0 scalar iterations after the lanes.  Eight regions a round;
 * rounds of n = 1000003 and 7 launch 8 each, n = 0 none (the guard skips
 * the region): 16 under TWASM_DEVICE=gpu. */
/* clang-flags: -O2 -msimd128 */
/* expect-gpu-launches: 16 */
#include "e2e.h"

__attribute__((noinline)) int sum_i32(int n, const int *a) {
  int s = 0;
  for (int i = 0; i < n; i++) s += a[i];
  return s;
}

__attribute__((noinline)) int sum_from(int n, const int *a, int base) {
  int s = base;
  for (int i = 0; i < n; i++) s += a[i];
  return s;
}

__attribute__((noinline)) long long sum_i64(int n, const long long *a) {
  long long s = 0;
  for (int i = 0; i < n; i++) s += a[i];
  return s;
}

__attribute__((noinline)) long long sum_widen(int n, const int *a) {
  long long s = 0;
  for (int i = 0; i < n; i++) s += a[i];
  return s;
}

__attribute__((noinline)) int dot_i32(int n, const int *a, const int *b) {
  int s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

__attribute__((noinline)) long long dot_i64(int n, const long long *a, const long long *b) {
  long long s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

__attribute__((noinline)) int max_i32(int n, const int *a) {
  int m = -2147483647 - 1;
  for (int i = 0; i < n; i++) m = a[i] > m ? a[i] : m;
  return m;
}

__attribute__((noinline)) int min_i32(int n, const int *a) {
  int m = 2147483647;
  for (int i = 0; i < n; i++) m = a[i] < m ? a[i] : m;
  return m;
}

static void round_of(int n, uint32_t seed) {
  size_t k = n > 0 ? (size_t)n : 1;
  int *a = e2e_alloc(k * sizeof *a), *b = e2e_alloc(k * sizeof *b);
  long long *p = e2e_alloc(k * sizeof *p), *q = e2e_alloc(k * sizeof *q);
  for (int i = 0; i < n; i++) {
    a[i] = (int)e2e_next(&seed);
    b[i] = (int)e2e_next(&seed);
    p[i] = (long long)(((uint64_t)e2e_next(&seed) << 32) | e2e_next(&seed));
    q[i] = (long long)e2e_next(&seed) - 0x7fffffffll;
  }
  printf("n %d\n", n);
  printf("  sum_i32 %d\n", sum_i32(n, a));
  printf("  sum_from %d\n", sum_from(n, b, -123456789));
  printf("  sum_i64 %lld\n", sum_i64(n, p));
  printf("  sum_widen %lld\n", sum_widen(n, a));
  printf("  dot_i32 %d\n", dot_i32(n, a, b));
  printf("  dot_i64 %lld\n", dot_i64(n, p, q));
  printf("  max_i32 %d\n", max_i32(n, a));
  printf("  min_i32 %d\n", min_i32(n, b));
  free(a);
  free(b);
  free(p);
  free(q);
}

int main(void) {
  round_of(1000003, 7u);
  round_of(7, 11u);
  round_of(0, 13u);
  return 0;
}
