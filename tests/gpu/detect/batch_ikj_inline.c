/* batch_ikj_inline.c: a leaf 12x20x24 i32 product C += A * B in ikj order,
 * inlined into a loop over n products stored one after another. */
static void mm(const int *a, const int *b, int *c) {
  for (int i = 0; i < 12; i++)
    for (int k = 0; k < 24; k++) {
      int aik = a[i * 24 + k];
      for (int j = 0; j < 20; j++) c[i * 20 + j] += aik * b[k * 20 + j];
    }
}

void batch(int n, const int *a, const int *b, int *c) {
  for (int t = 0; t < n; t++) mm(a + t * 288, b + t * 480, c + t * 240);
}
