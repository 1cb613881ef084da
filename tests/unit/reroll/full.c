/* Sums over a short constant range that clang -O2 unrolls completely (the
 * k loop of a 16x16x16 product: 16 terms added in a chain): re-rolled
 * where every term is the first with its addresses moved by a constant
 * per copy, kept where the sum runs in another order, a copy stores, an
 * address is not affine in the copy number or a constant differs.  The
 * inputs hold -0.0 and a NaN, so that the first addition (0.0 + t0) and
 * the order of the float sums show in the output. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

__attribute__((noinline)) void mm16(const float *a, const float *b, float *c) {
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++) {
      float s = 0.0f;
      for (int p = 0; p < 16; p++) s += a[i * 16 + p] * b[p * 16 + j];
      c[i * 16 + j] = s;
    }
}

__attribute__((noinline)) void mm16_i8(const signed char *a, const signed char *b, int *c) {
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++) {
      int s = 0;
      for (int p = 0; p < 16; p++) s += a[i * 16 + p] * b[p * 16 + j];
      c[i * 16 + j] = s;
    }
}

/* the sum starts from a bias element */
__attribute__((noinline)) void dense8(int m, const double *x, const double *w, const double *bias,
                                      double *y) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < 8; j++) {
      double s = bias[j];
      for (int p = 0; p < 8; p++) s += x[i * 8 + p] * w[p * 8 + j];
      y[i * 8 + j] = s;
    }
}

/* the terms added in the order 3, 1, 0, 2: kept */
__attribute__((noinline)) void perm(int m, const float *a, const float *b, float *c) {
  for (int i = 0; i < m; i++)
    c[i] = ((a[i * 4 + 3] * b[3] + a[i * 4 + 1] * b[1]) + a[i * 4 + 0] * b[0]) + a[i * 4 + 2] * b[2];
}

/* every copy also stores: kept */
__attribute__((noinline)) void extra_store(int m, const float *a, const float *b, float *c, float *t) {
  for (int i = 0; i < m; i++) {
    float s = 0.0f;
    for (int p = 0; p < 8; p++) {
      s += a[i * 8 + p] * b[p];
      t[i * 8 + p] = b[p] + 1.0f;
    }
    c[i] = s;
  }
}

/* a[i * 64 + p * p]: not affine in p: kept */
__attribute__((noinline)) void squares(int m, const float *a, const float *b, float *c) {
  for (int i = 0; i < m; i++) {
    float s = 0.0f;
    for (int p = 0; p < 8; p++) s += a[i * 64 + p * p] * b[p];
    c[i] = s;
  }
}

/* a weight per copy folded to a constant that is not affine: kept */
__attribute__((noinline)) void coeffs(int m, const float *a, float *c) {
  for (int i = 0; i < m; i++) {
    float s = 0.0f;
    for (int p = 0; p < 8; p++) s += a[i * 8 + p] * (float)(p * p + 1);
    c[i] = s;
  }
}

static uint32_t seed = 7;
static float unit(void) {
  seed = seed * 1664525u + 1013904223u;
  return (float)(seed >> 8) / 16777216.0f - 0.5f;
}

static float fa[512], fb[512], fc[256], ft[256];
static double da[256], dw[64], db[8], dy[256];
static signed char qa[256], qb[256];
static int qc[256];

static void print_f32(const char *name, const float *x, int n) {
  uint32_t h = 2166136261u;
  for (int i = 0; i < n; i++) {
    uint32_t bits;
    memcpy(&bits, &x[i], 4);
    h = (h ^ bits) * 16777619u;
  }
  printf("%s %08x %.9g %.9g %.9g\n", name, h, x[0], x[1], x[n - 1]);
}

int main(void) {
  for (int i = 0; i < 512; i++) fa[i] = unit(), fb[i] = unit();
  fa[5] = -0.0f;
  fb[5 * 16] = 0.0f; /* c[0][0] gets -0.0 * 0.0 as its sixth term */
  fa[3 * 16] = -0.0f;
  fb[0] = -0.0f;
  uint32_t nan = 0x7fa00001u; /* signalling NaNs */
  memcpy(&fa[7 * 16], &nan, 4); /* the first term of row 7 */
  memcpy(&fa[9 * 16 + 2], &nan, 4);
  for (int i = 0; i < 256; i++) {
    qa[i] = (signed char)(i * 37 + 11);
    qb[i] = (signed char)(i * 91 + 3);
    da[i] = (double)unit();
  }
  for (int i = 0; i < 64; i++) dw[i] = (double)unit();
  for (int i = 0; i < 8; i++) db[i] = (double)unit();
  mm16(fa, fb, fc);
  print_f32("mm16", fc, 256);
  for (int i = 0; i < 256; i += 37) printf(" %.9g", fc[i]);
  printf("\n");
  mm16_i8(qa, qb, qc);
  int64_t qs = 0;
  for (int i = 0; i < 256; i++) qs = qs * 31 + qc[i];
  printf("mm16_i8 %lld %d %d\n", (long long)qs, qc[0], qc[255]);
  dense8(32, da, dw, db, dy);
  printf("dense8 %.17g %.17g %.17g\n", dy[0], dy[100], dy[255]);
  perm(64, fa, fb, fc);
  print_f32("perm", fc, 64);
  extra_store(32, fa, fb, fc, ft);
  print_f32("extra_store", fc, 32);
  print_f32("extra_store t", ft, 256);
  squares(4, fa, fb, fc);
  print_f32("squares", fc, 4);
  coeffs(32, fa, fc);
  print_f32("coeffs", fc, 32);
  return 0;
}
