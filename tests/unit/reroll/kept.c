/* Loops the re-roll must leave alone (a call, a volatile access, an early
 * exit), each with a run-time length; the output must not change. */
#include <stdio.h>

__attribute__((noinline)) int twice(int v) { return v * 2 + 1; }

__attribute__((noinline)) void calls(int n, int *x) {
  for (int i = 0; i < n; i++) x[i] = twice(x[i]);
}

__attribute__((noinline)) void vol(int n, volatile int *x) {
  for (int i = 0; i < n; i++) x[i] += i;
}

__attribute__((noinline)) int find(int n, const int *x, int key) {
  for (int i = 0; i < n; i++)
    if (x[i] == key) return i;
  return -1;
}

static int xs[32];
static volatile int vs[32];

int main(void) {
  for (int n = -1; n <= 32; n++) {
    for (int i = 0; i < 32; i++) xs[i] = i * 3, vs[i] = i;
    calls(n, xs);
    vol(n, vs);
    int h = 0;
    for (int i = 0; i < 32; i++) h = h * 31 + xs[i] + vs[i];
    printf("%d %d %d\n", n, h, find(n, xs, 2 * 3 * 7 + 1));
  }
  return 0;
}
