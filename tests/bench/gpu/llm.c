/* llm.c: greedy generation with a small transformer at transformer-110M
 * shapes (dim 768, hidden 2048, 12 layers of 12 heads, vocabulary 32000,
 * 128 positions; 110M f32 weights and an untied classifier of 25M, 530 MB) whose weights are
 * pseudo-random numbers made here: rmsnorm, matrix-vector products (W
 * row-major, out[i] = sum_j W[i][j] * x[j] in j order), RoPE from tables,
 * attention with softmax, a SwiGLU feed-forward layer, argmax sampling.
 *   llm [TOKENS [small|full [times|phases]]]  TOKENS generated (default 8, at most 128)
 * `small` takes shapes for quick checks (dim 64, hidden 176, 2 layers of
 * 4 heads, vocabulary 1000).  Prints the token ids (the same on every
 * device: the products are exact) on a `tokens:` line and the speed on an
 * `llm:` line. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "bench.h"

typedef struct {
  int dim, hidden, layers, heads, vocab, seq;
} llm_shape;

static const llm_shape full_shape = {768, 2048, 12, 12, 32000, 128};
static const llm_shape small_shape = {64, 176, 2, 4, 1000, 128};

typedef struct {
  float *embed;                    /* vocab x dim */
  float *classifier;               /* vocab x dim: not tied to embed, or every
                                    * token would predict itself */
  float *rms_att, *rms_ffn;        /* layers x dim */
  float *wq, *wk, *wv, *wo;        /* layers x dim x dim */
  float *w1, *w3;                  /* layers x hidden x dim */
  float *w2;                       /* layers x dim x hidden */
  float *rms_final;                /* dim */
  float *rope_cos, *rope_sin;      /* seq x dim / 2 */
} llm_weights;

/* `phases`: the time of each kind of step summed over the second half of
 * the tokens (where auto mode runs the products on the GPU), so that the
 * CPU work between launches shows by loop (issue 20). */
enum { PH_MATVEC, PH_RMSNORM, PH_ROPE, PH_SCORES, PH_SOFTMAX, PH_MIX, PH_SWIGLU, PH_ADD, PH_ARGMAX, PH_N };
static const char *const phase_name[PH_N] = {"matvec", "rmsnorm", "rope", "scores", "softmax",
                                             "mix", "swiglu", "add", "argmax"};
static bool phases_on;
static double phase_sum[PH_N], phase_at;

/* Charges the time since the last lap to phase ph. */
static void lap(int ph) {
  if (!phases_on) return;
  double t = bench_now();
  phase_sum[ph] += t - phase_at;
  phase_at = t;
}

typedef struct {
  float *x, *xb, *xb2, *q, *hb, *hb2, *att, *logits;
  float *key_cache, *value_cache;  /* layers x seq x dim */
} llm_state;

/* n weights uniform in [-scale, scale). */
static float *random_weights(size_t n, float scale, uint32_t *seed) {
  float *w = bench_alloc(n * sizeof *w);
  for (size_t i = 0; i < n; i++) w[i] = bench_unit(seed) * scale;
  return w;
}

static float *ones(size_t n) {
  float *w = bench_alloc(n * sizeof *w);
  for (size_t i = 0; i < n; i++) w[i] = 1.0f;
  return w;
}

static void weights_make(const llm_shape *s, llm_weights *w) {
  uint32_t seed = 20;
  size_t d = (size_t)s->dim, h = (size_t)s->hidden, l = (size_t)s->layers;
  float in_d = 1.0f / sqrtf((float)s->dim), in_h = 1.0f / sqrtf((float)s->hidden);
  w->embed = random_weights((size_t)s->vocab * d, 1.0f, &seed);
  w->rms_att = ones(l * d);
  w->rms_ffn = ones(l * d);
  w->wq = random_weights(l * d * d, in_d, &seed);
  w->wk = random_weights(l * d * d, in_d, &seed);
  w->wv = random_weights(l * d * d, in_d, &seed);
  w->wo = random_weights(l * d * d, in_d, &seed);
  w->w1 = random_weights(l * h * d, in_d, &seed);
  w->w3 = random_weights(l * h * d, in_d, &seed);
  w->w2 = random_weights(l * d * h, in_h, &seed);
  w->rms_final = ones(d);
  w->classifier = random_weights((size_t)s->vocab * d, in_d, &seed);
  int half = s->dim / 2, head = s->dim / s->heads;
  w->rope_cos = bench_alloc((size_t)s->seq * half * sizeof(float));
  w->rope_sin = bench_alloc((size_t)s->seq * half * sizeof(float));
  for (int p = 0; p < s->seq; p++)
    for (int i = 0; i < half; i++) {
      float freq = 1.0f / powf(10000.0f, (float)(2 * (i % (head / 2))) / (float)head);
      w->rope_cos[p * half + i] = cosf((float)p * freq);
      w->rope_sin[p * half + i] = sinf((float)p * freq);
    }
}

static void state_make(const llm_shape *s, llm_state *st) {
  size_t d = (size_t)s->dim, kv = (size_t)s->layers * s->seq * d;
  st->x = bench_alloc(d * 4);
  st->xb = bench_alloc(d * 4);
  st->xb2 = bench_alloc(d * 4);
  st->q = bench_alloc(d * 4);
  st->hb = bench_alloc((size_t)s->hidden * 4);
  st->hb2 = bench_alloc((size_t)s->hidden * 4);
  st->att = bench_alloc((size_t)s->heads * s->seq * 4);
  st->logits = bench_alloc((size_t)s->vocab * 4);
  st->key_cache = bench_alloc(kv * 4);
  st->value_cache = bench_alloc(kv * 4);
  memset(st->key_cache, 0, kv * 4);
  memset(st->value_cache, 0, kv * 4);
}

/* out[i] = sum_j w[i * n + j] * x[j], j in order: d outputs, n inputs. */
__attribute__((noinline)) void matvec(float *out, const float *x, const float *w, int n, int d) {
  for (int i = 0; i < d; i++) {
    float sum = 0.0f;
    for (int j = 0; j < n; j++) sum += w[i * n + j] * x[j];
    out[i] = sum;
  }
}

__attribute__((noinline)) void rmsnorm(float *out, const float *x, const float *weight, int n) {
  float ss = 0.0f;
  for (int i = 0; i < n; i++) ss += x[i] * x[i];
  float scale = 1.0f / sqrtf(ss / (float)n + 1e-5f);
  for (int i = 0; i < n; i++) out[i] = weight[i] * (scale * x[i]);
}

__attribute__((noinline)) void softmax(float *x, int n) {
  float max = x[0];
  for (int i = 1; i < n; i++)
    if (x[i] > max) max = x[i];
  float sum = 0.0f;
  for (int i = 0; i < n; i++) {
    x[i] = expf(x[i] - max);
    sum += x[i];
  }
  for (int i = 0; i < n; i++) x[i] /= sum;
}

/* Rotates the pairs of q and k by the angles of position pos. */
__attribute__((noinline)) void rope(float *q, float *k, const float *cos_p, const float *sin_p, int dim) {
  for (int i = 0; i < dim / 2; i++) {
    float c = cos_p[i], s = sin_p[i];
    float q0 = q[2 * i], q1 = q[2 * i + 1], k0 = k[2 * i], k1 = k[2 * i + 1];
    q[2 * i] = q0 * c - q1 * s;
    q[2 * i + 1] = q0 * s + q1 * c;
    k[2 * i] = k0 * c - k1 * s;
    k[2 * i + 1] = k0 * s + k1 * c;
  }
}

/* scores[h * seq + t] = sum_i keys[t * stride + h * size + i] * q[h * size
 * + i], t < n, i in order: every head's scores over the cached keys (rows
 * `stride` apart, head h's slice at h * size), llama2.c's scores with the
 * head loop inside (one batch of matrix-vector products: one launch a
 * layer, where a head's own product is too small to pay for one). */
__attribute__((noinline)) void heads_scores(float *scores, const float *q, const float *keys, int heads, int size,
                                            int stride, int seq, int n) {
  for (int h = 0; h < heads; h++)
    for (int t = 0; t < n; t++) {
      float sum = 0.0f;
      for (int i = 0; i < size; i++) sum += keys[t * stride + h * size + i] * q[h * size + i];
      scores[h * seq + t] = sum;
    }
}

/* out[h * size + i] = sum_t att[h * seq + t] * values[t * stride + h * size
 * + i], t in order, for every head: the sums llama2.c's weighted values
 * make (out zeroed, then each cached value row, weighted, added to it),
 * element by element the same additions from 0 in the same order, written
 * as one sum per output. */
__attribute__((noinline)) void heads_mix(float *out, const float *att, const float *values, int heads, int size,
                                         int stride, int seq, int n) {
  for (int h = 0; h < heads; h++)
    for (int i = 0; i < size; i++) {
      float sum = 0.0f;
      for (int t = 0; t < n; t++) sum += att[h * seq + t] * values[t * stride + h * size + i];
      out[h * size + i] = sum;
    }
}

__attribute__((noinline)) void scale_by(float *x, float f, int n) {
  for (int i = 0; i < n; i++) x[i] *= f;
}

__attribute__((noinline)) void add_to(float *x, const float *y, int n) {
  for (int i = 0; i < n; i++) x[i] += y[i];
}

__attribute__((noinline)) void swiglu(float *h, const float *g, int n) {
  for (int i = 0; i < n; i++) h[i] = h[i] / (1.0f + expf(-h[i])) * g[i];
}

/* Every head's scores, then each head's scaled softmax, then every
 * head's weighted values; the scores of head h in att + h * seq
 * (llama2.c's layout).  The scale and softmax count as `softmax`. */
static void attention(const llm_shape *s, llm_state *st, int layer, int pos) {
  int d = s->dim, head = d / s->heads;
  size_t base = (size_t)layer * s->seq * d;
  float *keys = st->key_cache + base, *values = st->value_cache + base;
  heads_scores(st->att, st->q, keys, s->heads, head, d, s->seq, pos + 1);
  lap(PH_SCORES);
  for (int h = 0; h < s->heads; h++) {
    float *att = st->att + (size_t)h * s->seq;
    scale_by(att, 1.0f / sqrtf((float)head), pos + 1);
    softmax(att, pos + 1);
  }
  lap(PH_SOFTMAX);
  heads_mix(st->xb, st->att, values, s->heads, head, d, s->seq, pos + 1);
  lap(PH_MIX);
}

/* The logits of the token after `token` at position pos. */
static void forward(const llm_shape *s, const llm_weights *w, llm_state *st, int token, int pos) {
  int d = s->dim, hid = s->hidden;
  size_t dd = (size_t)d * d, hd = (size_t)hid * d;
  memcpy(st->x, w->embed + (size_t)token * d, (size_t)d * 4);
  lap(PH_ADD);
  for (int l = 0; l < s->layers; l++) {
    float *k = st->key_cache + ((size_t)l * s->seq + pos) * d;
    float *v = st->value_cache + ((size_t)l * s->seq + pos) * d;
    rmsnorm(st->xb, st->x, w->rms_att + (size_t)l * d, d);
    lap(PH_RMSNORM);
    matvec(st->q, st->xb, w->wq + l * dd, d, d);
    matvec(k, st->xb, w->wk + l * dd, d, d);
    matvec(v, st->xb, w->wv + l * dd, d, d);
    lap(PH_MATVEC);
    rope(st->q, k, w->rope_cos + (size_t)pos * (d / 2), w->rope_sin + (size_t)pos * (d / 2), d);
    lap(PH_ROPE);
    attention(s, st, l, pos);
    matvec(st->xb2, st->xb, w->wo + l * dd, d, d);
    lap(PH_MATVEC);
    add_to(st->x, st->xb2, d);
    lap(PH_ADD);
    rmsnorm(st->xb, st->x, w->rms_ffn + (size_t)l * d, d);
    lap(PH_RMSNORM);
    matvec(st->hb, st->xb, w->w1 + l * hd, d, hid);
    matvec(st->hb2, st->xb, w->w3 + l * hd, d, hid);
    lap(PH_MATVEC);
    swiglu(st->hb, st->hb2, hid);
    lap(PH_SWIGLU);
    matvec(st->xb, st->hb, w->w2 + l * hd, hid, d);
    lap(PH_MATVEC);
    add_to(st->x, st->xb, d);
    lap(PH_ADD);
  }
  rmsnorm(st->x, st->x, w->rms_final, d);
  lap(PH_RMSNORM);
  matvec(st->logits, st->x, w->classifier, d, s->vocab);
  lap(PH_MATVEC);
}

static int argmax(const float *x, int n) {
  int best = 0;
  for (int i = 1; i < n; i++)
    if (x[i] > x[best]) best = i;
  return best;
}

int main(int argc, char **argv) {
  bool small = argc > 2 && !strcmp(argv[2], "small");
  /* `llm N full|small times`: each token's milliseconds too */
  bool times = argc > 3 && !strcmp(argv[3], "times");
  /* `llm N full|small phases`: the second half's time by kind of step */
  bool phases = argc > 3 && !strcmp(argv[3], "phases");
  const llm_shape *s = small ? &small_shape : &full_shape;
  int ntokens = bench_arg(argc, argv, 1, 8);
  if (ntokens > s->seq) ntokens = s->seq;
  llm_weights w;
  llm_state st;
  weights_make(s, &w);
  state_make(s, &st);
  int token = 1;
  int *out = bench_alloc((size_t)ntokens * sizeof *out);
  double *at = bench_alloc((size_t)(ntokens + 1) * sizeof *at);
  double t0 = bench_now(), first = 0, half = 0;
  at[0] = 0;
  for (int pos = 0; pos < ntokens; pos++) {
    if (pos == ntokens / 2) {
      half = bench_now() - t0;
      phases_on = phases;
      phase_at = bench_now();
    }
    forward(s, &w, &st, token, pos);
    token = argmax(st.logits, s->vocab);
    lap(PH_ARGMAX);
    out[pos] = token;
    at[pos + 1] = bench_now() - t0;
    if (pos == 0) first = at[1];
  }
  double t = bench_now() - t0;
  if (times) {
    printf("ms:");
    for (int i = 0; i < ntokens; i++) printf(" %.2f", (at[i + 1] - at[i]) * 1e3);
    printf("\n");
  }
  /* The second half: where auto mode has the GPU going, if it ever does. */
  int late = ntokens - ntokens / 2;
  if (phases) {
    double all = 0;
    for (int i = 0; i < PH_N; i++) all += phase_sum[i];
    printf("phases (ms a token over the last %d, %.3f in all; the timer's own calls included):", late,
           all * 1e3 / late);
    for (int i = 0; i < PH_N; i++) printf(" %s %.3f", phase_name[i], phase_sum[i] * 1e3 / late);
    printf("\n");
  }
  printf("tokens:");
  for (int i = 0; i < ntokens; i++) printf(" %d", out[i]);
  printf("\nllm %s dim %d: %d tokens in %.3f s, first %.1f ms, %.2f tokens/s (%.2f after the first, "
         "%.2f over the last %d)\n",
         small ? "small" : "110M", s->dim, ntokens, t, first * 1e3, ntokens / t,
         ntokens > 1 ? (ntokens - 1) / (t - first) : 0.0, late / (t - half), late);
  return 0;
}
