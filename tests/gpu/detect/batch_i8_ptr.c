/* batch_i8_ptr.c: 64 int8 products of 16x32 by 32x8 (i8 x i8 summed in
 * i32), pointers advanced per product by run-time strides sa, sb, sc, and
 * B shared by every product (batch stride 0). */
void batch(const signed char *a, const signed char *b, int *c, int sa, int sc) {
  for (int t = 0; t < 64; t++) {
    const signed char *pa = a + t * sa;
    int *pc = c + t * sc;
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 8; j++) {
        int s = 0;
        for (int p = 0; p < 32; p++) s += pa[i * 32 + p] * b[p * 8 + j];
        pc[i * 8 + j] = s;
      }
  }
}
