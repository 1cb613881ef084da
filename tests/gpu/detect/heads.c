/* heads.c: attention over every head at once, as a transformer's layer
 * does it (keys and values rows `stride` floats apart, head h's slice at
 * h * size): a batch of matrix-vector products whose vector moves with
 * the head loop, each sum in source order. */
void heads_scores(float *scores, const float *q, const float *keys, int heads, int size, int stride, int seq,
                  int n) {
  for (int h = 0; h < heads; h++)
    for (int t = 0; t < n; t++) {
      float sum = 0.0f;
      for (int i = 0; i < size; i++) sum += keys[t * stride + h * size + i] * q[h * size + i];
      scores[h * seq + t] = sum;
    }
}

void heads_mix(float *out, const float *att, const float *values, int heads, int size, int stride, int seq,
               int n) {
  for (int h = 0; h < heads; h++)
    for (int i = 0; i < size; i++) {
      float sum = 0.0f;
      for (int t = 0; t < n; t++) sum += att[h * seq + t] * values[t * stride + h * size + i];
      out[h * size + i] = sum;
    }
}

/* the vector moving with the outer loop by a constant: the same batch */
void rows_dot(float *out, const float *a, const float *x) {
  for (int b = 0; b < 8; b++)
    for (int i = 0; i < 32; i++) {
      float sum = 0.0f;
      for (int k = 0; k < 16; k++) sum += a[b * 512 + i * 16 + k] * x[b * 16 + k];
      out[b * 32 + i] = sum;
    }
}
