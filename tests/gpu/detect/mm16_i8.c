/* mm16_i8.c: int8 products (i8 x i8 summed in i32) of constant sizes small
 * enough for clang -O2 to unroll the k loop completely: 16x16x16, and
 * 16x8x32 whose j loop it unrolls too.  At -O2 -msimd128 its SLP
 * vectoriser makes each sum i32x4 products of bytes widened twice, added
 * vector by vector, then across the lanes (ir_reroll_full.c re-rolls
 * them into a loop of lanes, ir_reroll_copies.c the copies of j). */
void mm16_i8(const signed char *a, const signed char *b, int *c) {
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++) {
      int s = 0;
      for (int p = 0; p < 16; p++) s += a[i * 16 + p] * b[p * 16 + j];
      c[i * 16 + j] = s;
    }
}

void rows_i8(const signed char *a, const signed char *b, int *c) {
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 8; j++) {
      int s = 0;
      for (int p = 0; p < 32; p++) s += a[i * 32 + p] * b[p * 8 + j];
      c[i * 8 + j] = s;
    }
}
