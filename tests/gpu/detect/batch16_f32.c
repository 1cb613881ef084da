/* batch16_f32.c: nb independent 16x16x16 f32 products, ijk order, the
 * matrices of product t at t * 256 elements (a live batch count). */
void batch(int nb, const float *a, const float *b, float *c) {
  for (int t = 0; t < nb; t++)
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 16; j++) {
        float s = 0.0f;
        for (int p = 0; p < 16; p++) s += a[t * 256 + i * 16 + p] * b[t * 256 + p * 16 + j];
        c[t * 256 + i * 16 + j] = s;
      }
}
