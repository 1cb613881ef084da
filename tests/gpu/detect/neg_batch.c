/* neg_batch.c: loops around a 16x16x16 product that are no batch: outputs
 * of different products overlap (stride 128 < 256 elements), another
 * store per product, a call per product, every product adding into one C
 * (a sum over t). */
void overlap(int nb, const float *a, const float *b, float *c) {
  for (int t = 0; t < nb; t++)
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 16; j++) {
        float s = 0.0f;
        for (int p = 0; p < 16; p++) s += a[t * 256 + i * 16 + p] * b[t * 256 + p * 16 + j];
        c[t * 128 + i * 16 + j] = s;
      }
}

void other_store(int nb, const float *a, const float *b, float *c, int *done) {
  for (int t = 0; t < nb; t++) {
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 16; j++) {
        float s = 0.0f;
        for (int p = 0; p < 16; p++) s += a[t * 256 + i * 16 + p] * b[t * 256 + p * 16 + j];
        c[t * 256 + i * 16 + j] = s;
      }
    done[t] = 1;
  }
}

void report(int t);

void with_call(int nb, const float *a, const float *b, float *c) {
  for (int t = 0; t < nb; t++) {
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 16; j++) {
        float s = 0.0f;
        for (int p = 0; p < 16; p++) s += a[t * 256 + i * 16 + p] * b[t * 256 + p * 16 + j];
        c[t * 256 + i * 16 + j] = s;
      }
    report(t);
  }
}

void same_c_ijk(int nb, const float *a, const float *b, float *c) {
  for (int t = 0; t < nb; t++)
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 16; j++) {
        float s = c[i * 16 + j];
        for (int p = 0; p < 16; p++) s += a[t * 256 + i * 16 + p] * b[t * 256 + p * 16 + j];
        c[i * 16 + j] = s;
      }
}
