/* textbook_gru.c: one GRU cell step over a sequence and a small conv
 * net's layers, as a tutorial writes them in plain C, not written for
 * twasmc (no `restrict`, arrays from malloc, row-major matrices): the
 * gates with both products summed in one loop (`s = b[i] + W[i] . x + U[i]
 * . h`, then a sigmoid), the same gates through a matvec helper and an
 * elementwise combine, the candidate state (`tanhf`), the state update; a
 * 2-D convolution over channels as six loops, a dense head with its bias
 * and a ReLU after the sum (`y[o] = fmaxf`-free `s > 0 ? s : 0`), a batch
 * of products described by an array of structs (`jobs[b].a`, `.b`, `.c`).
 * Compile-only survey for issue 19 (`bash tests/gpu/suite_report.sh
 * tests/gpu/survey/textbook_gru.c`, docs/PERFORMANCE.md); each kernel
 * noinline so that the report names it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define NI __attribute__((noinline))

static float sigmoidf(float v) { return 1.0f / (1.0f + expf(-v)); }

/* z = sigmoid(Wz x + Uz h + bz), both sums in one accumulator */
NI void kernel_gate_fused(int in, int hid, const float *W, const float *U, const float *b, const float *x,
                          const float *h, float *z) {
  for (int i = 0; i < hid; i++) {
    float s = b[i];
    for (int j = 0; j < in; j++) s += W[i * in + j] * x[j];
    for (int j = 0; j < hid; j++) s += U[i * hid + j] * h[j];
    z[i] = sigmoidf(s);
  }
}

NI void kernel_matvec(int m, int n, const float *W, const float *x, float *y) {
  for (int i = 0; i < m; i++) {
    float s = 0.0f;
    for (int j = 0; j < n; j++) s += W[i * n + j] * x[j];
    y[i] = s;
  }
}

NI void kernel_gate_combine(int hid, const float *wx, const float *uh, const float *b, float *z) {
  for (int i = 0; i < hid; i++) z[i] = sigmoidf(wx[i] + uh[i] + b[i]);
}

NI void kernel_candidate(int hid, const float *wx, const float *uh, const float *r, const float *b, float *n) {
  for (int i = 0; i < hid; i++) n[i] = tanhf(wx[i] + b[i] + r[i] * uh[i]);
}

NI void kernel_state(int hid, const float *z, const float *n, float *h) {
  for (int i = 0; i < hid; i++) h[i] = (1.0f - z[i]) * n[i] + z[i] * h[i];
}

/* out[co][y][x] = bias[co] + sum over ci, ky, kx of w[co][ci][ky][kx] *
 * in[ci][y + ky][x + kx] (valid padding) */
NI void kernel_conv2d(int cin, int cout, int h, int w, int k, const float *in, const float *wt, const float *bias,
                      float *out) {
  int oh = h - k + 1, ow = w - k + 1;
  for (int co = 0; co < cout; co++)
    for (int y = 0; y < oh; y++)
      for (int x = 0; x < ow; x++) {
        float s = bias[co];
        for (int ci = 0; ci < cin; ci++)
          for (int ky = 0; ky < k; ky++)
            for (int kx = 0; kx < k; kx++)
              s += wt[((co * cin + ci) * k + ky) * k + kx] * in[(ci * h + y + ky) * w + x + kx];
        out[(co * oh + y) * ow + x] = s;
      }
}

NI void kernel_dense_relu(int in, int out, const float *W, const float *b, const float *x, float *y) {
  for (int o = 0; o < out; o++) {
    float s = 0.0f;
    for (int i = 0; i < in; i++) s += W[o * in + i] * x[i];
    s += b[o];
    y[o] = s > 0.0f ? s : 0.0f;
  }
}

typedef struct {
  int m, n, k;
  const float *a, *b;
  float *c;
} mm_job;

NI void kernel_jobs(int count, const mm_job *jobs) {
  for (int t = 0; t < count; t++) {
    const mm_job *jb = &jobs[t];
    for (int i = 0; i < jb->m; i++)
      for (int j = 0; j < jb->n; j++) {
        float s = 0.0f;
        for (int p = 0; p < jb->k; p++) s += jb->a[i * jb->k + p] * jb->b[p * jb->n + j];
        jb->c[i * jb->n + j] = s;
      }
  }
}

static float *randv(int n, unsigned seed) {
  float *v = malloc(sizeof(float) * (size_t)n);
  for (int i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    v[i] = (float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
  }
  return v;
}

int main(int argc, char **argv) {
  int in = argc > 1 ? atoi(argv[1]) : 64, hid = argc > 2 ? atoi(argv[2]) : 128, steps = 8;
  float *W = randv(hid * in, 1), *U = randv(hid * hid, 2), *b = randv(hid, 3), *xs = randv(steps * in, 4);
  float *h = calloc((size_t)hid, sizeof(float)), *z = malloc(sizeof(float) * hid), *r = malloc(sizeof(float) * hid);
  float *wx = malloc(sizeof(float) * hid), *uh = malloc(sizeof(float) * hid), *n = malloc(sizeof(float) * hid);
  for (int t = 0; t < steps; t++) {
    const float *x = xs + t * in;
    kernel_gate_fused(in, hid, W, U, b, x, h, z);
    kernel_matvec(hid, in, W, x, wx);
    kernel_matvec(hid, hid, U, h, uh);
    kernel_gate_combine(hid, wx, uh, b, r);
    kernel_candidate(hid, wx, uh, r, b, n);
    kernel_state(hid, z, n, h);
  }
  int cin = 3, cout = 8, side = 32, k = 3, o = side - k + 1;
  float *img = randv(cin * side * side, 5), *wt = randv(cout * cin * k * k, 6), *cb = randv(cout, 7);
  float *fm = malloc(sizeof(float) * (size_t)(cout * o * o));
  kernel_conv2d(cin, cout, side, side, k, img, wt, cb, fm);
  float *Wd = randv(10 * cout * o * o, 8), *bd = randv(10, 9), *y = malloc(sizeof(float) * 10);
  kernel_dense_relu(cout * o * o, 10, Wd, bd, fm, y);
  mm_job jobs[4];
  for (int t = 0; t < 4; t++)
    jobs[t] = (mm_job){16 + t, 24, 32, randv((16 + t) * 32, 10 + t), randv(32 * 24, 20 + t),
                       malloc(sizeof(float) * (size_t)((16 + t) * 24))};
  kernel_jobs(4, jobs);
  printf("%.9g %.9g %.9g %.9g\n", h[0], h[hid - 1], y[9], jobs[3].c[5]);
  return 0;
}
