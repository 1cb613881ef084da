/* Mixed element types, strides, an unsigned count, hashes: loops of every
 * kind clang unrolls by two, checked on n from -3 to 70. */
#include <stdio.h>
#include <string.h>
#include <stdint.h>
#define NOI __attribute__((noinline))
NOI void f1(int n, signed char *a, const signed char *b) { for (int i = 0; i < n; i++) a[i] = (signed char)(a[i] * 3 + b[i] - (a[i] >> 2)); }
NOI void f2(unsigned n, short *a, const short *b) { for (unsigned i = 0; i < n; i++) a[i] = (short)(a[i] * b[i] + (short)i * 5 - (a[i] ^ b[i])); }
NOI long long f3(int n, const long long *a) { long long s = 7; for (int i = 0; i < n; i++) s = s * 31 + (a[i] ^ (a[i] >> 7)) - i; return s; }
NOI void f4(int n, float *y, const float *x) { for (int i = 0; i < n; i++) y[i] = x[i] > 0.5f ? x[i] * y[i] + 1.0f : y[i] - x[i] / 3.0f; }
NOI void f5(int n, double *a) { for (int i = 1; i < n; i++) a[i] = a[i - 1] * 0.5 + a[i] * 0.25 + 1.0 / (a[i] + 3.0); }
NOI void f6(int n, int *a, const int *b) { for (int i = 0; i < n; i++) a[2 * i] = b[i] * b[i] - a[2 * i + 1] * 3 + (b[i] >> 3); }
NOI void f7(int n, int *a) { for (int i = n - 1; i >= 0; i--) a[i] = a[i] * 7 + i * i - (a[i] >> 5); }
NOI int f8(int n, const unsigned char *s) { int h = 0; for (int i = 0; i < n; i++) h = (h ^ s[i]) * 16777619 + (s[i] >> 1) * i; return h; }
NOI void f9(int n, int k, float *a, const float *b) { for (int i = 0; i < n; i++) a[i * k] = b[i * k] * 2.0f + a[i * k] * b[i] - 1.0f; }
NOI double f10(int n, const double *a, const double *b) { double s = 0, t = 1; for (int i = 0; i < n; i++) { s += a[i] * b[i] + t; t = t * 0.999 + a[i]; } return s + t; }
NOI void f11(int m, int n, int *c) { for (int i = 0; i < m; i++) for (int j = 0; j < n; j++) c[i * n + j] = c[i * n + j] * 3 + i - j * 5 + (c[i*n+j] >> 4); }
NOI void f12(int n, unsigned *a, const unsigned *b) { for (int i = 0; i < n; i++) { unsigned v = b[i]; a[i] = (v << 3) ^ (v >> 5) ^ a[i] ^ (v * 2654435761u) ^ (a[i] >> 9); } }
static signed char ca[300], cb[300]; static short sa[300], sb[300]; static long long la[300];
static float fa[300], fb[300]; static double da[300], db[300]; static int ia[700], ib[700]; static unsigned char us[300];
static unsigned ua[300], ub[300];
static uint32_t H;
static void mix(const void *p, int len) { const unsigned char *c = p; for (int i = 0; i < len; i++) H = (H ^ c[i]) * 16777619u; }
int main(void) {
  for (int n = -3; n <= 70; n++) {
    for (int i = 0; i < 300; i++) {
      ca[i] = (signed char)(i * 37); cb[i] = (signed char)(i * 11 + 3); sa[i] = (short)(i * 1237); sb[i] = (short)(9000 - i * 77);
      la[i] = (long long)i * 0x123456789LL; fa[i] = (float)(i % 17) / 16.0f; fb[i] = (float)(i % 5) - 2.0f;
      da[i] = (i % 11) * 0.3; db[i] = 1.0 / (i + 1); us[i] = (unsigned char)(i * 73); ua[i] = i * 99991u; ub[i] = i * 7u + 1;
    }
    for (int i = 0; i < 700; i++) ia[i] = i * 31 - 500, ib[i] = i * i;
    H = 2166136261u;
    f1(n, ca, cb); mix(ca, sizeof ca);
    f2(n < 0 ? 0 : (unsigned)n, sa, sb); mix(sa, sizeof sa);
    long long r3 = f3(n, la); mix(&r3, 8);
    f4(n, fb, fa); mix(fb, sizeof fb);
    f5(n, da); mix(da, sizeof da);
    f6(n, ia, ib); mix(ia, sizeof ia);
    f7(n, ib); mix(ib, sizeof ib);
    int r8 = f8(n, us); mix(&r8, 4);
    f9(n, 3, fa, fb); mix(fa, sizeof fa);
    double r10 = f10(n, da, db); mix(&r10, 8);
    f11(n / 7, n, ia); mix(ia, sizeof ia);
    f12(n, ua, ub); mix(ua, sizeof ua);
    printf("%d %08x\n", n, H);
  }
  return 0;
}
