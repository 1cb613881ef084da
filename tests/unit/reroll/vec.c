/* vec.c: vector loops clang unrolled completely (a constant j loop that
 * -O2 -msimd128 vectorises into straight-line f32x4/i32x4 copies behind
 * its alias check); the re-roll (ir_reroll_vec.c) puts them back in a
 * loop where it proves them one loop's iterations.  The functions are
 * built for simd128 (target attribute), the rest of the program not. */
#include <stdio.h>

#define SIMD __attribute__((noinline, target("simd128")))

/* c[i][0:48] += a[i][k] * b[k][0:48] (ikj, as tests/gpu/detect/matmul_ikj_f32.c):
 * twelve f32x4 copies a (i, k) */
SIMD void rows_f32(const float *a, const float *b, float *c) {
  for (int i = 0; i < 16; i++)
    for (int k = 0; k < 32; k++) {
      float x = a[i * 32 + k];
      for (int j = 0; j < 48; j++) c[i * 48 + j] += x * b[k * 48 + j];
    }
}

/* the same over 20 i32 columns: clang loads a[i][k] again before the
 * last copies (a copy of its own: kept) */
SIMD void rows_i32(const int *a, const int *b, int *c) {
  for (int i = 0; i < 16; i++)
    for (int k = 0; k < 32; k++) {
      int x = a[i * 32 + k];
      for (int j = 0; j < 20; j++) c[i * 20 + j] += x * b[k * 20 + j];
    }
}

/* c[i][0:24] = a[i] * b[0:24] + 1: six copies storing a map */
SIMD void scale_f32(int n, const float *a, const float *b, float *c) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 24; j++) c[i * 24 + j] = a[i] * b[j] + 1.0f;
}

static float fa[512], fb[32 * 48], fc[16 * 48];
static int ia[512], ib[32 * 20], ic[16 * 20];

static double fsum(const float *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s = s * 1.0001 + v[i];
  return s;
}

int main(void) {
  unsigned s = 11;
  for (int i = 0; i < 512; i++) fa[i] = (float)((s = s * 1103515245u + 12345u) >> 20) / 4096.0f - 0.5f;
  for (int i = 0; i < 32 * 48; i++) fb[i] = (float)((s = s * 1103515245u + 12345u) >> 20) / 4096.0f - 0.5f;
  for (int i = 0; i < 512; i++) ia[i] = (int)((s = s * 1103515245u + 12345u) >> 8);
  for (int i = 0; i < 32 * 20; i++) ib[i] = (int)((s = s * 1103515245u + 12345u) >> 8);
  rows_f32(fa, fb, fc);
  printf("rows_f32 %.9g %a %a\n", fsum(fc, 16 * 48), fc[0], fc[16 * 48 - 1]);
  /* b overlapping c's rows: the scalar alternative runs */
  rows_f32(fa, fc + 40, fc);
  printf("rows_f32 overlapping %.9g\n", fsum(fc, 16 * 48));
  rows_i32(ia, ib, ic);
  long long sum = 0;
  for (int i = 0; i < 16 * 20; i++) sum = sum * 31 + ic[i];
  printf("rows_i32 %lld %d\n", sum, ic[16 * 20 - 1]);
  scale_f32(5, fa, fb, fc);
  printf("scale_f32 %.9g %a\n", fsum(fc, 16 * 48), fc[5 * 24 - 1]);
  return 0;
}
