/* textbook_mobilenet.c: one MobileNet-style block as a tutorial writes it
 * in plain C, not written for twasmc (issue 19 round 7): a pointwise (1x1)
 * convolution written as loops over pixels and channels with a bias and
 * ReLU6 (`fminf(fmaxf(s, 0), 6)`), a depthwise 3x3 convolution (padding
 * by an `if` on the borders) with ReLU6, a projection 1x1 convolution
 * whose sum is clamped by hand (`s < -8 ? -8 : s > 8 ? 8 : s`), a global
 * average pool and a classifier through a `model *` (weights reached
 * through a struct pointer).  Tensors are HWC, weights from a separate
 * allocation function, no `restrict`.  Compile-only survey
 * (`SUITE_CFLAGS=-fno-inline bash tests/gpu/suite_report.sh
 * tests/gpu/survey/textbook_mobilenet.c`, docs/PERFORMANCE.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  int classes, features;
  float *fc_w, *fc_b;
} model;

/* out[p][co] = relu6(b[co] + sum_ci in[p][ci] * w[co][ci]) */
void kernel_expand(int pixels, int cin, int cout, const float *in, const float *w, const float *b, float *out) {
  for (int p = 0; p < pixels; p++)
    for (int co = 0; co < cout; co++) {
      float s = b[co];
      for (int ci = 0; ci < cin; ci++) s += in[p * cin + ci] * w[co * cin + ci];
      out[p * cout + co] = fminf(fmaxf(s, 0.0f), 6.0f);
    }
}

void kernel_depthwise(int h, int wd, int c, const float *in, const float *k, const float *b, float *out) {
  for (int y = 0; y < h; y++)
    for (int x = 0; x < wd; x++)
      for (int ch = 0; ch < c; ch++) {
        float s = b[ch];
        for (int dy = -1; dy <= 1; dy++)
          for (int dx = -1; dx <= 1; dx++) {
            int yy = y + dy, xx = x + dx;
            if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
            s += in[(yy * wd + xx) * c + ch] * k[((dy + 1) * 3 + dx + 1) * c + ch];
          }
        out[(y * wd + x) * c + ch] = fminf(fmaxf(s, 0.0f), 6.0f);
      }
}

/* the projection, its sum clamped by hand (no activation in MobileNetV2;
 * a quantisation-friendly clamp here) */
void kernel_project(int pixels, int cin, int cout, const float *in, const float *w, float *out) {
  for (int p = 0; p < pixels; p++)
    for (int co = 0; co < cout; co++) {
      float s = 0.0f;
      for (int ci = 0; ci < cin; ci++) s += in[p * cin + ci] * w[co * cin + ci];
      out[p * cout + co] = s < -8.0f ? -8.0f : s > 8.0f ? 8.0f : s;
    }
}

/* the residual connection: out += in (a map) */
void kernel_residual(int n, const float *in, float *out) {
  for (int i = 0; i < n; i++) out[i] += in[i];
}

void kernel_pool(int pixels, int c, const float *in, float *out) {
  for (int ch = 0; ch < c; ch++) {
    float s = 0.0f;
    for (int p = 0; p < pixels; p++) s += in[p * c + ch];
    out[ch] = s / (float)pixels;
  }
}

void kernel_classify(const model *m, const float *f, float *logits) {
  for (int o = 0; o < m->classes; o++) {
    float s = m->fc_b[o];
    for (int i = 0; i < m->features; i++) s += m->fc_w[o * m->features + i] * f[i];
    logits[o] = s;
  }
}

static float *weights(int n, int seed) {
  float *p = malloc(sizeof(float) * n);
  for (int i = 0; i < n; i++) p[i] = (float)((i * 37 + seed) % 23) / 23.0f - 0.45f;
  return p;
}

int main(int argc, char **argv) {
  int h = argc > 1 ? atoi(argv[1]) : 14, w = h, c = 16, e = 64, pixels = h * w, classes = 10;
  float *img = weights(pixels * c, 1), *t1 = malloc(sizeof(float) * pixels * e);
  float *t2 = malloc(sizeof(float) * pixels * e), *t3 = malloc(sizeof(float) * pixels * c);
  kernel_expand(pixels, c, e, img, weights(e * c, 2), weights(e, 3), t1);
  kernel_depthwise(h, w, e, t1, weights(9 * e, 4), weights(e, 5), t2);
  kernel_project(pixels, e, c, t2, weights(c * e, 6), t3);
  kernel_residual(pixels * c, img, t3);
  float pooled[16], logits[10];
  kernel_pool(pixels, c, t3, pooled);
  model m = {classes, c, weights(classes * c, 7), weights(classes, 8)};
  kernel_classify(&m, pooled, logits);
  printf("%.9g %.9g\n", logits[0], logits[classes - 1]);
  return 0;
}
