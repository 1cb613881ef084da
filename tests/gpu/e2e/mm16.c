/* mm16.c: one lone 16x16x16 f32 product and one i8 -> i32 product: under
 * TWASM_DEVICE=auto the cost model keeps them on the CPU, under
 * TWASM_DEVICE=gpu they launch (one tile, one block). */
/* expect-gpu-launches: 2 */
#include "e2e.h"

__attribute__((noinline)) void k_mm16_f32(const float *a, const float *b, float *c) {
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++) {
      float s = 0.0f;
      for (int p = 0; p < 16; p++) s += a[i * 16 + p] * b[p * 16 + j];
      c[i * 16 + j] = s;
    }
}

__attribute__((noinline)) void k_mm16_i8(const signed char *a, const signed char *b, int *c) {
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++) {
      int s = 0;
      for (int p = 0; p < 16; p++) s += a[i * 16 + p] * b[p * 16 + j];
      c[i * 16 + j] = s;
    }
}

int main(int argc, char **argv) {
  uint32_t s = (uint32_t)e2e_arg(argc, argv, 1, 1616);
  float *a = e2e_alloc(256 * 4), *b = e2e_alloc(256 * 4), *c = e2e_alloc(256 * 4);
  signed char *qa = e2e_alloc(256), *qb = e2e_alloc(256);
  int *qc = e2e_alloc(256 * 4);
  for (int i = 0; i < 256; i++) {
    a[i] = e2e_unit(&s);
    b[i] = e2e_unit(&s);
    qa[i] = (signed char)e2e_next(&s);
    qb[i] = (signed char)e2e_next(&s);
  }
  k_mm16_f32(a, b, c);
  k_mm16_i8(qa, qb, qc);
  e2e_print_f32("c", c, 256);
  e2e_print_i32("qc", qc, 256);
  return 0;
}
