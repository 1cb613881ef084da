/* Counters as LLVM's loop strength reduction leaves them in the producer
 * (clang -O2): gramschmidt's upper product, `s += A[k][i] * A[k][j]` over
 * k, unrolled by 4 with a main counter running from 0 down to -(n & ~3)
 * and a remainder loop counting a byte offset up to (n & 3) * row bytes
 * (ir_reroll_canon.c); rows of 24 doubles, so the offset steps by 192. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define N 24

__attribute__((noinline)) void gram(int m, int n, double C[N][N], double A[N][N]) {
  for (int i = 0; i < m; i++)
    for (int j = i; j < m; j++) {
      double s = 0.0;
      for (int k = 0; k < n; k++) s += A[k][i] * A[k][j];
      C[i][j] = s;
    }
}

static double a[N][N], c[N][N];

int main(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) a[i][j] = (double)((i * 7 + j * 3) % 11) * 0.37 - 1.3 + 1.0 / (i + j + 1);
  for (int n = -1; n <= N; n++) {
    memset(c, 0, sizeof c);
    gram(n < 0 ? 3 : 9, n, c, a);
    uint64_t h = 0, w;
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) memcpy(&w, &c[i][j], 8), h = h * 1000003 + w;
    printf("n=%d %016llx %.17g\n", n, (unsigned long long)h, c[1][7]);
  }
  return 0;
}
