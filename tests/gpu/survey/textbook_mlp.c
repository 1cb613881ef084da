/* textbook_mlp.c: a small neural network's forward pass as a tutorial
 * writes it in plain C, not written for twasmc: dense layers (weights
 * row-major out x in, a bias, ReLU), a batch of inputs, softmax at the end,
 * and a convolution layer (one channel, valid, 3x3) before them.
 * Compile-only survey for issue 19 (`bash tests/gpu/suite_report.sh
 * tests/gpu/survey/textbook_mlp.c`, docs/PERFORMANCE.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  int in, out;
  float *w, *b;
} layer;

void kernel_dense(const layer *l, const float *x, float *y) {
  for (int o = 0; o < l->out; o++) {
    float s = l->b[o];
    for (int i = 0; i < l->in; i++) s += l->w[o * l->in + i] * x[i];
    y[o] = s > 0.0f ? s : 0.0f;
  }
}

void kernel_dense_batch(int batch, int in, int out, const float *w, const float *bias, const float *x,
                        float *y) {
  for (int n = 0; n < batch; n++)
    for (int o = 0; o < out; o++) {
      float s = bias[o];
      for (int i = 0; i < in; i++) s += x[n * in + i] * w[o * in + i];
      y[n * out + o] = s;
    }
}

void kernel_conv3x3(int h, int w, const float *img, const float k[3][3], float *out) {
  for (int y = 0; y < h - 2; y++)
    for (int x = 0; x < w - 2; x++) {
      float s = 0.0f;
      for (int dy = 0; dy < 3; dy++)
        for (int dx = 0; dx < 3; dx++) s += img[(y + dy) * w + x + dx] * k[dy][dx];
      out[y * (w - 2) + x] = s;
    }
}

void kernel_softmax(int n, float *v) {
  float m = v[0];
  for (int i = 1; i < n; i++)
    if (v[i] > m) m = v[i];
  float s = 0.0f;
  for (int i = 0; i < n; i++) {
    v[i] = expf(v[i] - m);
    s += v[i];
  }
  for (int i = 0; i < n; i++) v[i] /= s;
}

static float *weights(int n, int seed) {
  float *p = malloc(sizeof(float) * n);
  for (int i = 0; i < n; i++) p[i] = (float)((i * 37 + seed) % 19) / 19.0f - 0.5f;
  return p;
}

int main(int argc, char **argv) {
  int batch = argc > 1 ? atoi(argv[1]) : 16, h = 30, w = 30, in = (h - 2) * (w - 2), hid = 64, out = 10;
  float *img = weights(h * w, 1), *feat = malloc(sizeof(float) * in * batch);
  float k[3][3] = {{0.1f, 0.2f, 0.1f}, {0.0f, -0.3f, 0.0f}, {0.1f, 0.2f, 0.1f}};
  for (int n = 0; n < batch; n++) kernel_conv3x3(h, w, img, k, feat + n * in);
  layer l1 = {in, hid, weights(in * hid, 2), weights(hid, 3)};
  float *h1 = malloc(sizeof(float) * hid * batch), *y = malloc(sizeof(float) * out * batch);
  for (int n = 0; n < batch; n++) kernel_dense(&l1, feat + n * in, h1 + n * hid);
  kernel_dense_batch(batch, hid, out, weights(hid * out, 4), weights(out, 5), h1, y);
  kernel_softmax(out, y);
  printf("%.9g %.9g\n", y[0], y[out - 1]);
  return 0;
}
