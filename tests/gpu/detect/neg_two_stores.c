/* neg_two_stores.c: one loop writing two arrays. */
void split(const float *a, float *b, float *c, int n) {
  for (int i = 0; i < n; i++) {
    b[i] = a[i] + 1.0f;
    c[i] = a[i] * 2.0f;
  }
}
