/* textbook_dsp.c: signal and image loops as tutorials write them in plain
 * C, not written for twasmc: a Q15 FIR filter of 16-bit audio samples, an
 * RGB to grey conversion of 8-bit pixels, a layer normalisation, a
 * transposed matrix-vector product (y = A^T x, walking A by rows) and an
 * integer dot product with a sum of squares.  Compile-only survey for
 * issue 19 item 4 (the -O2, -O2 -msimd128 and -O3 -msimd128 builds
 * compared in docs/PERFORMANCE.md, "round 9"); tests/gpu/e2e/simd_dsp.c
 * and simd_dsp_o3.c run it as it is. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* y[n] = saturate((sum_k h[k] * x[n + k]) >> 15), Q15 taps */
void fir_q15(int len, int taps, const int16_t *x, const int16_t *h, int16_t *y) {
  for (int n = 0; n + taps <= len; n++) {
    int32_t acc = 0;
    for (int k = 0; k < taps; k++) acc += (int32_t)h[k] * (int32_t)x[n + k];
    acc >>= 15;
    if (acc > 32767) acc = 32767;
    if (acc < -32768) acc = -32768;
    y[n] = (int16_t)acc;
  }
}

/* ITU-R 601 luma in 8-bit fixed point, interleaved RGB in */
void rgb_to_grey(int pixels, const uint8_t *rgb, uint8_t *grey) {
  for (int i = 0; i < pixels; i++) {
    int r = rgb[3 * i], g = rgb[3 * i + 1], b = rgb[3 * i + 2];
    grey[i] = (uint8_t)((77 * r + 150 * g + 29 * b + 128) >> 8);
  }
}

/* y = (x - mean) / sqrt(var + eps) * gamma + beta, over one row of n */
void layer_norm(int n, const float *x, const float *gamma, const float *beta, float *y) {
  float mean = 0.0f;
  for (int i = 0; i < n; i++) mean += x[i];
  mean /= (float)n;
  float var = 0.0f;
  for (int i = 0; i < n; i++) var += (x[i] - mean) * (x[i] - mean);
  var /= (float)n;
  float inv = 1.0f / sqrtf(var + 1e-5f);
  for (int i = 0; i < n; i++) y[i] = (x[i] - mean) * inv * gamma[i] + beta[i];
}

/* y = A^T x, A of rows x cols, walked row by row */
void matvec_t(int rows, int cols, const float *a, const float *x, float *y) {
  for (int j = 0; j < cols; j++) y[j] = 0.0f;
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) y[j] += a[i * cols + j] * x[i];
}

/* sum a[i] * b[i] and sum a[i]^2, 32-bit integers (wrapping) */
int32_t dot_i32(int n, const int32_t *a, const int32_t *b, int32_t *sumsq) {
  int32_t dot = 0, sq = 0;
  for (int i = 0; i < n; i++) {
    dot += a[i] * b[i];
    sq += a[i] * a[i];
  }
  *sumsq = sq;
  return dot;
}

int main(int argc, char **argv) {
  int len = argc > 1 ? atoi(argv[1]) : 4099, taps = 31, rows = 129, cols = 203;
  int16_t *x = malloc(len * sizeof(int16_t)), h[31], *y = calloc(len, sizeof(int16_t));
  for (int i = 0; i < len; i++) x[i] = (int16_t)(i * 2731 % 65536 - 32768);
  for (int k = 0; k < taps; k++) h[k] = (int16_t)(1057 * (k + 1) - 16000);
  fir_q15(len, taps, x, h, y);
  uint8_t *rgb = malloc(3 * (size_t)len), *grey = malloc(len);
  for (int i = 0; i < 3 * len; i++) rgb[i] = (uint8_t)(i * 13);
  rgb_to_grey(len, rgb, grey);
  float *fx = malloc(len * sizeof(float)), *g = malloc(len * sizeof(float));
  float *be = malloc(len * sizeof(float)), *fy = malloc(len * sizeof(float));
  for (int i = 0; i < len; i++) fx[i] = (float)(i % 101) * 0.25f, g[i] = 1.0f + (float)(i % 7) * 0.125f,
                                be[i] = (float)(i % 5) - 2.0f;
  layer_norm(len, fx, g, be, fy);
  float *a = malloc((size_t)rows * cols * sizeof(float)), *mv = malloc(cols * sizeof(float));
  for (int i = 0; i < rows * cols; i++) a[i] = (float)(i % 19) - 9.0f;
  matvec_t(rows, cols, a, fx, mv);
  int32_t *ia = malloc(len * sizeof(int32_t)), *ib = malloc(len * sizeof(int32_t)), sq;
  for (int i = 0; i < len; i++) ia[i] = i * 7919 - 12345, ib[i] = 3 - i * 31;
  int32_t dot = dot_i32(len, ia, ib, &sq);
  long s = 0;
  for (int i = 0; i < len; i++) s += y[i] + grey[i];
  printf("%ld %a %a %d %d\n", s, (double)fy[len / 2], (double)mv[cols - 1], dot, sq);
  return 0;
}
