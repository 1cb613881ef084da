/* matvec_heads.c: attention over every head in one launch each, a batch
 * of exact matrix-vector products whose vector moves with the head (the
 * LLM's heads_scores and heads_mix, tests/bench/gpu/llm.c): scores over
 * N cached rows (W's rows `stride` apart), then the weighted sums of the
 * values (W read along the outputs).  12 heads of 64 (rows 16-byte
 * aligned: the vector body) and 13 heads of 37 (the element body), N
 * from argv (default 101: no multiple of the kernel's 16 rows). */
/* expect-gpu-launches: 4 */
#include "e2e.h"

__attribute__((noinline)) void heads_scores(float *scores, const float *q, const float *keys, int heads, int size,
                                            int stride, int seq, int n) {
  for (int h = 0; h < heads; h++)
    for (int t = 0; t < n; t++) {
      float sum = 0.0f;
      for (int i = 0; i < size; i++) sum += keys[t * stride + h * size + i] * q[h * size + i];
      scores[h * seq + t] = sum;
    }
}

__attribute__((noinline)) void heads_mix(float *out, const float *att, const float *values, int heads, int size,
                                         int stride, int seq, int n) {
  for (int h = 0; h < heads; h++)
    for (int i = 0; i < size; i++) {
      float sum = 0.0f;
      for (int t = 0; t < n; t++) sum += att[h * seq + t] * values[t * stride + h * size + i];
      out[h * size + i] = sum;
    }
}

static void attend(int heads, int size, int n, uint32_t seed) {
  int stride = heads * size, seq = 128;
  if (n > seq) n = seq;
  float *keys = e2e_alloc((size_t)seq * stride * 4), *values = e2e_alloc((size_t)seq * stride * 4);
  float *q = e2e_alloc((size_t)stride * 4), *att = e2e_alloc((size_t)heads * seq * 4);
  float *out = e2e_alloc((size_t)stride * 4);
  for (size_t i = 0; i < (size_t)seq * stride; i++) keys[i] = e2e_unit(&seed), values[i] = e2e_unit(&seed);
  for (int i = 0; i < stride; i++) q[i] = e2e_unit(&seed) * 8.0f;
  for (int i = 0; i < heads * seq; i++) att[i] = -1.0f; /* past n: kept */
  heads_scores(att, q, keys, heads, size, stride, seq, n);
  e2e_print_f32(size == 64 ? "scores64" : "scores37", att, (size_t)heads * seq);
  heads_mix(out, att, values, heads, size, stride, seq, n);
  e2e_print_f32(size == 64 ? "mix64" : "mix37", out, (size_t)stride);
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 101);
  attend(12, 64, n, 7);
  attend(13, 37, n, 11);
  return 0;
}
