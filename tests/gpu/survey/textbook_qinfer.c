/* textbook_qinfer.c: pieces of a small quantised inference program and an
 * image filter as tutorials write them in plain C, not written for
 * twasmc: an int8 matrix-vector product with a float scale per row, a
 * softmax followed by a weighted sum of value rows (one attention head's
 * output), and a 3x3 box blur of an 8-bit grey image.  Compile-only survey
 * for issue 19 item 4 (the -O2, -O2 -msimd128 and -O3 -msimd128 builds
 * compared in docs/PERFORMANCE.md, "versioning on a stride of 1"). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* y[i] = scale[i] * sum_j w[i][j] * x[j], w and x int8 */
void qmatvec(int rows, int cols, const int8_t *w, const int8_t *x, const float *scale, float *y) {
  for (int i = 0; i < rows; i++) {
    int32_t acc = 0;
    for (int j = 0; j < cols; j++) acc += (int32_t)w[i * cols + j] * (int32_t)x[j];
    y[i] = scale[i] * (float)acc;
  }
}

/* out = softmax(scores) . v, v of n rows of d */
void softmax_weighted(int n, int d, float *scores, const float *v, float *out) {
  float max = scores[0];
  for (int i = 1; i < n; i++)
    if (scores[i] > max) max = scores[i];
  float sum = 0.0f;
  for (int i = 0; i < n; i++) {
    scores[i] = expf(scores[i] - max);
    sum += scores[i];
  }
  for (int i = 0; i < n; i++) scores[i] /= sum;
  for (int k = 0; k < d; k++) out[k] = 0.0f;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < d; k++) out[k] += scores[i] * v[i * d + k];
}

/* 3x3 box blur of the interior, rounding to nearest */
void blur_u8(int h, int w, const uint8_t *in, uint8_t *out) {
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++) {
      int s = 0;
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) s += in[(y + dy) * w + (x + dx)];
      out[y * w + x] = (uint8_t)((s + 4) / 9);
    }
}

int main(int argc, char **argv) {
  int rows = argc > 1 ? atoi(argv[1]) : 256, cols = argc > 2 ? atoi(argv[2]) : 320;
  int8_t *w = malloc((size_t)rows * cols), *x = malloc(cols);
  float *scale = malloc(rows * sizeof(float)), *y = malloc(rows * sizeof(float));
  for (int i = 0; i < rows * cols; i++) w[i] = (int8_t)(i * 37 % 255 - 127);
  for (int j = 0; j < cols; j++) x[j] = (int8_t)(j * 11 % 200 - 100);
  for (int i = 0; i < rows; i++) scale[i] = 1.0f / (float)(i + 1);
  qmatvec(rows, cols, w, x, scale, y);
  float *v = malloc((size_t)rows * 64 * sizeof(float)), out[64];
  for (int i = 0; i < rows * 64; i++) v[i] = (float)(i % 97) * 0.01f;
  softmax_weighted(rows, 64, y, v, out);
  uint8_t *img = malloc((size_t)rows * cols), *blur = calloc((size_t)rows * cols, 1);
  for (int i = 0; i < rows * cols; i++) img[i] = (uint8_t)(i * 7);
  blur_u8(rows, cols, img, blur);
  long sum = 0;
  for (int i = 0; i < rows * cols; i++) sum += blur[i];
  printf("%f %f %ld\n", out[0], out[63], sum);
  return 0;
}
