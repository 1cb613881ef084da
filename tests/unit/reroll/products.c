/* Products and sums as code without `restrict` has them: clang -O2 unrolls
 * their k loops by 4 or 8 with a remainder loop after them (and stores a
 * sum kept in memory on every iteration).  Lengths 0 to 19 cover every
 * remainder and the bypass of the unrolled loop. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

__attribute__((noinline)) float dot(int n, const float *x, const float *y) {
  float s = 0;
  for (int i = 0; i < n; i++) s += x[i] * y[i];
  return s;
}

__attribute__((noinline)) int isum(int n, const int *x) {
  int s = 0;
  for (int i = 0; i < n; i++) s += x[i];
  return s;
}

__attribute__((noinline)) void matvec(int m, int k, const float *a, const float *x, float *y) {
  for (int i = 0; i < m; i++) {
    y[i] = 0;
    for (int p = 0; p < k; p++) y[i] += a[i * k + p] * x[p];
  }
}

__attribute__((noinline)) void matmul(int m, int n, int k, const float *a, const float *b, float *c) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      c[i * n + j] = 0;
      for (int p = 0; p < k; p++) c[i * n + j] += a[i * k + p] * b[p * n + j];
    }
}

/* A sum whose term reads the previous element: still one iteration per
 * copy, the re-roll must keep the order of loads and the sum. */
__attribute__((noinline)) long long lsum(int n, const int *x) {
  long long s = 0;
  for (int i = 1; i < n; i++) s += (long long)x[i] * x[i - 1];
  return s;
}

static float fa[20 * 20], fb[20 * 20], fc[20 * 20], fx[20], fy[20];
static int ix[20];

int main(void) {
  for (int i = 0; i < 400; i++) fa[i] = (float)(i % 13) * 0.3f - 1.7f, fb[i] = 1.0f / (float)(i + 3);
  for (int i = 0; i < 20; i++) fx[i] = (float)i * 0.37f - 2.0f, ix[i] = i * 1000003 - 17;
  /* lengths from a table: a length that is the loop counter itself
   * becomes, once wasm-opt inlines the products, a stride LLVM
   * strength-reduces into an induction variable of this loop */
  static const int lengths[] = {-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
  for (unsigned t = 0; t < sizeof lengths / sizeof *lengths; t++) {
    int n = lengths[t];
    matvec(n < 0 ? 0 : 7, n, fa, fx, fy);
    matmul(3, 5, n, fa, fb, fc);
    uint32_t h = 0, w;
    for (int i = 0; i < 20; i++) memcpy(&w, &fy[i], 4), h = h * 31 + w;
    for (int i = 0; i < 15; i++) memcpy(&w, &fc[i], 4), h = h * 31 + w;
    float d = dot(n, fa, fb);
    memcpy(&w, &d, 4);
    printf("n=%d %08x %08x %d %lld\n", n, h, w, isum(n, ix), lsum(n, ix));
  }
  return 0;
}
