/* textbook_lstm.c: one LSTM cell step over a sequence and a batch, as a
 * tutorial writes it in plain C, not written for twasmc (no `restrict`,
 * arrays from a separate allocation function, row-major matrices, the four
 * gates i, f, g, o stacked in one 4H x K weight matrix): the gate
 * pre-activations over the concatenated [x; h] (one matrix-vector product
 * from the bias), the same with W x and U h as two k loops into one sum,
 * the four gates as four calls of a dense helper through an array of
 * gate structs (`gate->W`, `gate->b`), the batch of sequences' gates as
 * one product (`Z = XH W^T + b`), a leaky-ReLU projection of the hidden
 * state, an fmaxf-clamped output head, the cell update (`c = f c + i g`
 * with expf and tanhf), and an iterator-style dot product (a helper
 * returning the sum, called per row).  Compile-only survey for issue 19
 * (`bash tests/gpu/suite_report.sh tests/gpu/survey/textbook_lstm.c`,
 * docs/PERFORMANCE.md); each kernel noinline so that the report names it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define NI __attribute__((noinline))

typedef struct {
  int rows, cols;
  float *W;        /* rows x cols */
  float *b;        /* rows */
} gate;

static float sigmoidf(float v) { return 1.0f / (1.0f + expf(-v)); }

/* z = W [x; h] + b: the four gates' pre-activations (4H rows) */
NI void kernel_gates_concat(int rows, int k, const float *W, const float *b, const float *xh, float *z) {
  for (int r = 0; r < rows; r++) {
    float s = b[r];
    for (int j = 0; j < k; j++) s += W[r * k + j] * xh[j];
    z[r] = s;
  }
}

/* z = b + W x + U h, the two products into one sum */
NI void kernel_gates_split(int rows, int in, int hid, const float *W, const float *U, const float *b,
                           const float *x, const float *h, float *z) {
  for (int r = 0; r < rows; r++) {
    float s = b[r];
    for (int j = 0; j < in; j++) s += W[r * in + j] * x[j];
    for (int j = 0; j < hid; j++) s += U[r * hid + j] * h[j];
    z[r] = s;
  }
}

/* one gate: out = g->W xh + g->b, through the struct */
NI void kernel_gate_struct(const gate *g, const float *xh, float *out) {
  for (int r = 0; r < g->rows; r++) {
    float s = g->b[r];
    for (int j = 0; j < g->cols; j++) s += g->W[r * g->cols + j] * xh[j];
    out[r] = s;
  }
}

/* the four gates, one struct each */
NI void kernel_gates_structs(const gate *gates, const float *xh, float *z) {
  for (int q = 0; q < 4; q++) kernel_gate_struct(&gates[q], xh, z + q * gates[q].rows);
}

/* Z[b][r] = b[r] + sum_j XH[b][j] W[r][j]: the batch's gates at once */
NI void kernel_gates_batch(int batch, int rows, int k, const float *W, const float *bias, const float *XH,
                           float *Z) {
  for (int n = 0; n < batch; n++)
    for (int r = 0; r < rows; r++) {
      float s = bias[r];
      for (int j = 0; j < k; j++) s += XH[n * k + j] * W[r * k + j];
      Z[n * rows + r] = s;
    }
}

/* c = sigmoid(f) c + sigmoid(i) tanh(g); h = sigmoid(o) tanh(c) */
NI void kernel_cell(int hid, const float *z, float *c, float *h) {
  for (int j = 0; j < hid; j++) {
    float i = sigmoidf(z[j]), f = sigmoidf(z[hid + j]), g = tanhf(z[2 * hid + j]), o = sigmoidf(z[3 * hid + j]);
    c[j] = f * c[j] + i * g;
    h[j] = o * tanhf(c[j]);
  }
}

/* p = leaky_relu(P h) */
NI void kernel_proj_leaky(int out, int hid, const float *P, const float *h, float *p) {
  for (int r = 0; r < out; r++) {
    float s = 0.0f;
    for (int j = 0; j < hid; j++) s += P[r * hid + j] * h[j];
    p[r] = s > 0.0f ? s : 0.01f * s;
  }
}

/* y = fmaxf(V p + c, 0) */
NI void kernel_head_fmax(int out, int in, const float *V, const float *c, const float *p, float *y) {
  for (int r = 0; r < out; r++) {
    float s = c[r];
    for (int j = 0; j < in; j++) s += V[r * in + j] * p[j];
    y[r] = fmaxf(s, 0.0f);
  }
}

/* an iterator-style dot product: a helper folding a zip of two slices */
typedef struct {
  const float *p;
  int len;
} slice;

static inline float dot(slice a, slice b) {
  float acc = 0.0f;
  for (int i = 0; i < a.len && i < b.len; i++) acc += a.p[i] * b.p[i];
  return acc;
}

NI void kernel_rows_dot(int rows, int k, const float *W, const float *x, float *y) {
  for (int r = 0; r < rows; r++) y[r] = dot((slice){W + r * k, k}, (slice){x, k});
}

static float *alloc_vec(int n, unsigned seed) {
  float *p = malloc(sizeof(float) * n);
  for (int i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    p[i] = (float)((seed >> 9) % 1000) / 1000.0f - 0.5f;
  }
  return p;
}

int main(int argc, char **argv) {
  int in = argc > 1 ? atoi(argv[1]) : 64, hid = argc > 2 ? atoi(argv[2]) : 128, batch = 8, out = 32;
  int k = in + hid, rows = 4 * hid;
  float *W = alloc_vec(rows * k, 1), *Wx = alloc_vec(rows * in, 2), *U = alloc_vec(rows * hid, 3);
  float *b = alloc_vec(rows, 4), *xh = alloc_vec(k, 5), *z = alloc_vec(rows, 6), *c = alloc_vec(hid, 7);
  float *XH = alloc_vec(batch * k, 8), *Z = alloc_vec(batch * rows, 9), *P = alloc_vec(out * hid, 10);
  float *p = alloc_vec(out, 11), *V = alloc_vec(out * out, 12), *cv = alloc_vec(out, 13), *y = alloc_vec(out, 14);
  float *h = xh + in;
  gate gates[4];
  for (int q = 0; q < 4; q++) gates[q] = (gate){hid, k, W + q * hid * k, b + q * hid};
  for (int t = 0; t < 4; t++) {
    kernel_gates_concat(rows, k, W, b, xh, z);
    kernel_gates_split(rows, in, hid, Wx, U, b, xh, h, z);
    kernel_gates_structs(gates, xh, z);
    kernel_cell(hid, z, c, h);
  }
  kernel_gates_batch(batch, rows, k, W, b, XH, Z);
  kernel_proj_leaky(out, hid, P, h, p);
  kernel_head_fmax(out, out, V, cv, p, y);
  kernel_rows_dot(rows, k, W, xh, z);
  printf("%.9g %.9g %.9g %.9g\n", h[0], Z[rows + 1], y[3], z[5]);
  return 0;
}
