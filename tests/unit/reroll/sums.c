/* Reductions and a running sum with a run-time length. */
#include <stdint.h>
#include <stdio.h>

__attribute__((noinline)) int isum(int n, const int *x) {
  int s = 0;
  for (int i = 0; i < n; i++) s += x[i];
  return s;
}

/* A larger body: unrolled by two, not four. */
__attribute__((noinline)) int isum2(int n, const int *x, const int *y) {
  int s = 0;
  for (int i = 0; i < n; i++) s += (x[i] ^ (x[i] >> 3)) * 7 + y[i] * x[i] - (y[i] >> 2);
  return s;
}

__attribute__((noinline)) long long lsum(int n, const long long *x) {
  long long s = 1;
  for (int i = 0; i < n; i++) s = s * 3 + x[i];
  return s;
}

__attribute__((noinline)) float fsum(int n, const float *x) {
  float s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return s;
}

__attribute__((noinline)) void prefix(int n, const int *x, int *out) {
  int s = 0;
  for (int i = 0; i < n; i++) out[i] = s += x[i];
}

__attribute__((noinline)) int dot(int n, const short *a, const short *b) {
  int s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

static int xs[64], out[64];
static long long ls[64];
static float fs[64];
static short sa[64], sb[64];

int main(void) {
  for (int i = 0; i < 64; i++) {
    xs[i] = i * 2654435761u, ls[i] = (long long)i * -1234567891011LL;
    fs[i] = 1.0f / (float)(3 + i), sa[i] = (short)(i * 1237), sb[i] = (short)(40000 - i * 999);
  }
  for (int n = -2; n <= 64; n++) {
    for (int i = 0; i < 64; i++) out[i] = -1;
    prefix(n, xs, out);
    int h = 0;
    for (int i = 0; i < 64; i++) h = h * 33 + out[i];
    printf("%d %d %d %lld %a %d %d\n", n, isum(n, xs), isum2(n, xs, out), lsum(n, ls),
           (double)fsum(n, fs), dot(n, sa, sb), h);
  }
  return 0;
}
