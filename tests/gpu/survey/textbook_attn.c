/* textbook_attn.c: one transformer block's attention for a single query
 * and a 1-D convolution, as a tutorial writes them in plain C, not
 * written for twasmc (no `restrict`, arrays from malloc, row-major
 * matrices): q = Wq x, scores against the cached keys scaled by
 * 1/sqrt(d), softmax, the softmax-weighted sum of the values (out[j] +=
 * att[t] * V[t][j], t outer), the output projection added to the input
 * (x[i] += Wo[i] . out, a residual connection), a conv1d with a bias.
 * Compile-only survey for issue 19 (`bash tests/gpu/suite_report.sh
 * tests/gpu/survey/textbook_attn.c`, docs/PERFORMANCE.md); each kernel
 * noinline so that the report names it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define NI __attribute__((noinline))

NI void kernel_proj(int d, const float *W, const float *x, float *q) {
  for (int i = 0; i < d; i++) {
    float s = 0.0f;
    for (int j = 0; j < d; j++) s += W[i * d + j] * x[j];
    q[i] = s;
  }
}

NI void kernel_scores(int t, int d, const float *q, const float *K, float *att) {
  float scale = 1.0f / sqrtf((float)d);
  for (int p = 0; p < t; p++) {
    float s = 0.0f;
    for (int j = 0; j < d; j++) s += q[j] * K[p * d + j];
    att[p] = s * scale;
  }
}

NI void kernel_softmax(int n, float *v) {
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

NI void kernel_weighted_sum(int t, int d, const float *att, const float *V, float *out) {
  for (int j = 0; j < d; j++) out[j] = 0.0f;
  for (int p = 0; p < t; p++)
    for (int j = 0; j < d; j++) out[j] += att[p] * V[p * d + j];
}

NI void kernel_out_residual(int d, const float *Wo, const float *o, float *x) {
  for (int i = 0; i < d; i++) {
    float s = 0.0f;
    for (int j = 0; j < d; j++) s += Wo[i * d + j] * o[j];
    x[i] += s;
  }
}

NI void kernel_conv1d(int n, int taps, const float *in, const float *w, float bias, float *out) {
  for (int i = 0; i + taps <= n; i++) {
    float s = 0.0f;
    for (int k = 0; k < taps; k++) s += in[i + k] * w[k];
    out[i] = s + bias;
  }
}

static float *randv(int n, unsigned seed) {
  float *p = malloc(sizeof(float) * n);
  for (int i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    p[i] = (float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
  }
  return p;
}

int main(int argc, char **argv) {
  int d = argc > 1 ? atoi(argv[1]) : 128, t = argc > 2 ? atoi(argv[2]) : 256, n = 4096, taps = 31;
  float *x = randv(d, 1), *Wq = randv(d * d, 2), *Wo = randv(d * d, 3), *K = randv(t * d, 4), *V = randv(t * d, 5);
  float *q = malloc(sizeof(float) * d), *att = malloc(sizeof(float) * t), *o = malloc(sizeof(float) * d);
  kernel_proj(d, Wq, x, q);
  kernel_scores(t, d, q, K, att);
  kernel_softmax(t, att);
  kernel_weighted_sum(t, d, att, V, o);
  kernel_out_residual(d, Wo, o, x);
  float *sig = randv(n, 6), *w = randv(taps, 7), *y = malloc(sizeof(float) * n);
  kernel_conv1d(n, taps, sig, w, 0.25f, y);
  printf("%.9g %.9g %.9g\n", x[0], x[d - 1], y[n - taps]);
  return 0;
}
