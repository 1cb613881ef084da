/* Loops clang unrolls whose proof needed more than the re-roller had
 * (issue 19's re-roller): a by-two inner loop whose odd count x = w & ~1
 * == 0 is kept out only by the outer loop's hoisted guard
 * `(on == 0 | w < 1)`, an or with a value unknown at x (scale_if, the
 * inner loop of a 2-D map); and counters stepping down, -10 by two
 * copies and -28 by four with a remainder loop (grid_down, xor_down):
 * their one-iteration step is -5 and -7, not 2^31 - 5 or 2^30 - 7,
 * which also double or quadruple to the step.  By four with a remainder, in order: rows_if, whose bypass
 * `w - 1 <u 3` (hoisted out of the row loop) is read as x + K <u C, so
 * that the remainder loop goes; scale_ld, whose copies each load
 * scale[0] (an address the step leaves alone), chained in order.  By two
 * inside a 2-D nest: dots_i64's i64 sum over p < k with k = max(k0, 1),
 * which clang counts as x = select(k0 > 1, k0, 1) behind the bypass
 * `k0 >= 2` (qlayer_i8.c's check of its products): the odd x = 1 is kept
 * out for every k0 <= 1 (the interval the select gives 1 on).  Sizes
 * -3 to 40 reach every bypass and remainder. */
#include <stdint.h>
#include <stdio.h>

#define N 48

__attribute__((noinline)) void scale_if(int w, int h, int on, const float *in, float *out) {
  for (int y = 0; y < h; y++)
    if (on)
      for (int x = 0; x < w; x++) out[y * w + x] = in[y * w + x] * 3.0f - 1.0f;
}

__attribute__((noinline)) void grid_down(int m, int n, int *c) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) c[i * n + j] = c[i * n + j] * 3 + i - j * 5 + (c[i * n + j] >> 4);
}

__attribute__((noinline)) int xor_down(int n, int from, const int *b) {
  int s = 0;
  for (int i = 0; i < n; i++) s += b[i] ^ (from - 7 * i);
  return s;
}

__attribute__((noinline)) void rows_if(int w, int h, const int *flag, const float *in, float *out) {
  for (int y = 0; y < h; y++)
    if (flag[y])
      for (int x = 0; x < w; x++) out[y * w + x] = in[y * w + x] + 0.5f;
}

__attribute__((noinline)) void scale_ld(int n, const float *scale, const float *x, float *y) {
  for (int i = 0; i < n; i++) y[i] = x[i] * scale[0];
}

__attribute__((noinline)) int dots_i64(int m, int n, int k0, const int *a, const int *b, const int *c) {
  int k = k0 > 0 ? k0 : 1, wrapped = 0;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      long long exact = 0;
      for (int p = 0; p < k; p++) exact += (long long)a[i * k + p] * b[p * n + j];
      wrapped += exact != (long long)c[i * n + j];
    }
  return wrapped;
}

static int flags[N];
static float fin[N * N], fout[N * N];
static int ic[N * N];
static uint32_t H;

static void mix(const void *p, int len) {
  const unsigned char *c = p;
  for (int i = 0; i < len; i++) H = (H ^ c[i]) * 16777619u;
}

int main(void) {
  for (int n = -3; n <= 40; n++) {
    for (int i = 0; i < N * N; i++) fin[i] = (float)(i % 13) * 0.25f, fout[i] = -1.0f, ic[i] = i * 7 - 300;
    H = 2166136261u;
    scale_if(n, n / 3 + 1, 1, fin, fout);
    scale_if(n, 2, 0, fin, fout);
    mix(fout, sizeof fout);
    for (int i = 0; i < N; i++) flags[i] = (i * 5 + n) % 3 != 0;
    rows_if(n, n / 4 + 1, flags, fin, fout);
    mix(fout, sizeof fout);
    scale_ld(n, fin + 7, fin, fout);
    scale_ld(n > 4 ? n - 4 : n, fout + 2, fout + 3, fout); /* scale[0] written by the loop */
    mix(fout, sizeof fout);
    grid_down(n / 5 + 1, n, ic);
    mix(ic, sizeof ic);
    int x = xor_down(n, 77 - n, ic);
    mix(&x, sizeof x);
    x = dots_i64(n / 8 + 1, n / 6 + 1, n / 2, ic, ic + 3, ic + 100);
    mix(&x, sizeof x);
    printf("%d %08x\n", n, H);
  }
  return 0;
}
