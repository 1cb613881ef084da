/* reduce_int.c: integer reductions over n elements (argv, default 1 << 21:
 * 8 MB of i32 and 16 MB of i64): wrapping i32 and i64 sums, max, min,
 * xor, an i32 dot product and a widened i32 -> i64 sum.  Inputs make the
 * sums wrap. */
/* expect-gpu-launches: 8 */
#include "e2e.h"

__attribute__((noinline)) int k_sum_i32(int n, const int *a) {
  int s = 0;
  for (int i = 0; i < n; i++) s += a[i];
  return s;
}

__attribute__((noinline)) long long k_sum_i64(int n, const long long *a) {
  long long s = 0;
  for (int i = 0; i < n; i++) s += a[i];
  return s;
}

__attribute__((noinline)) long long k_sum_widen(int n, const int *a) {
  long long s = 0;
  for (int i = 0; i < n; i++) s += a[i];
  return s;
}

__attribute__((noinline)) int k_max_i32(int n, const int *a) {
  int m = -2147483647 - 1;
  for (int i = 0; i < n; i++) m = a[i] > m ? a[i] : m;
  return m;
}

__attribute__((noinline)) int k_min_i32(int n, const int *a) {
  int m = 2147483647;
  for (int i = 0; i < n; i++) m = a[i] < m ? a[i] : m;
  return m;
}

__attribute__((noinline)) unsigned long long k_max_u64(int n, const long long *a) {
  unsigned long long m = 0;
  for (int i = 0; i < n; i++) m = (unsigned long long)a[i] > m ? (unsigned long long)a[i] : m;
  return m;
}

__attribute__((noinline)) unsigned k_xor_u32(int n, const int *a) {
  unsigned x = 0x12345678u;
  for (int i = 0; i < n; i++) x ^= (unsigned)a[i];
  return x;
}

__attribute__((noinline)) int k_dot_i32(int n, const int *a, const int *b) {
  int s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 1 << 21);
  int *a = e2e_alloc(n * sizeof(int)), *b = e2e_alloc(n * sizeof(int));
  long long *l = e2e_alloc(n * sizeof(long long));
  uint32_t s = 31337;
  for (int i = 0; i < n; i++) {
    a[i] = (int)e2e_next(&s);
    b[i] = (int)e2e_next(&s);
    l[i] = (long long)(((uint64_t)e2e_next(&s) << 32) | e2e_next(&s));
  }
  printf("sum_i32 0x%08x\n", (unsigned)k_sum_i32(n, a));
  printf("sum_i64 0x%016llx\n", (unsigned long long)k_sum_i64(n, l));
  printf("sum_widen 0x%016llx\n", (unsigned long long)k_sum_widen(n, a));
  printf("max_i32 0x%08x\n", (unsigned)k_max_i32(n, a));
  printf("min_i32 0x%08x\n", (unsigned)k_min_i32(n, b));
  printf("max_u64 0x%016llx\n", k_max_u64(n, l));
  printf("xor_u32 0x%08x\n", k_xor_u32(n, b));
  printf("dot_i32 0x%08x\n", (unsigned)k_dot_i32(n, a, b));
  return 0;
}
