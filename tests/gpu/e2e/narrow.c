/* narrow.c: byte and short arithmetic that LLVM narrows to i8/i16 and
 * integer division by constants: a 3x3 u8 box blur (sum in i16, / 9), a
 * signed 8-bit scale and shift, 16-bit saturating-style selects, i32
 * quotients and remainders of negative values, an i64 quotient.  w x h
 * from argv (default 1280 x 720). */
/* expect-gpu-launches: 6 */
#include "e2e.h"

/* The sum of nine bytes fits 16 bits: LLVM computes it and / 9 in i16. */
__attribute__((noinline)) void k_blur(int w, int h, const unsigned char *in, unsigned char *out) {
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++) {
      const unsigned char *p = in + (y - 1) * w + x - 1, *m = p + w, *q = m + w;
      out[y * w + x] = (unsigned char)((p[0] + p[1] + p[2] + m[0] + m[1] + m[2] + q[0] + q[1] + q[2]) / 9);
    }
}

__attribute__((noinline)) void k_s8(int n, const signed char *a, signed char *b) {
  for (int i = 0; i < n; i++) b[i] = (signed char)((a[i] * 3) >> 1);
}

__attribute__((noinline)) void k_s16(int n, const short *a, const short *b, short *c) {
  for (int i = 0; i < n; i++) {
    short d = (short)(a[i] - b[i]);
    c[i] = d < -1000 ? -1000 : d > 1000 ? 1000 : d;
  }
}

__attribute__((noinline)) void k_div(int n, const int *a, int *q) {
  for (int i = 0; i < n; i++) q[i] = a[i] / 7 + (int)((unsigned)a[i] / 10u);
}

__attribute__((noinline)) void k_rem(int n, const int *a, int *r) {
  for (int i = 0; i < n; i++) r[i] = a[i] % 10 - (int)((unsigned)a[i] % 3u);
}

__attribute__((noinline)) void k_div64(int n, const long long *a, long long *q) {
  for (int i = 0; i < n; i++) q[i] = a[i] / 1000003 + a[i] % 17;
}

int main(int argc, char **argv) {
  int w = e2e_arg(argc, argv, 1, 1280), h = e2e_arg(argc, argv, 2, 720);
  int n = w * h;
  unsigned char *img = e2e_alloc((size_t)n), *blur = e2e_alloc((size_t)n);
  signed char *s8 = e2e_alloc((size_t)n), *t8 = e2e_alloc((size_t)n);
  short *a16 = e2e_alloc((size_t)n * 2), *b16 = e2e_alloc((size_t)n * 2), *c16 = e2e_alloc((size_t)n * 2);
  int *a = e2e_alloc((size_t)n * 4), *q = e2e_alloc((size_t)n * 4), *r = e2e_alloc((size_t)n * 4);
  long long *l = e2e_alloc((size_t)n * 8), *lq = e2e_alloc((size_t)n * 8);
  uint32_t s = 31337;
  for (int i = 0; i < n; i++) {
    uint32_t x = e2e_next(&s);
    img[i] = (unsigned char)x;
    blur[i] = 0;
    s8[i] = (signed char)(x >> 8);
    a16[i] = (short)(x >> 16);
    b16[i] = (short)x;
    a[i] = (int)e2e_next(&s);
    l[i] = (long long)(((uint64_t)e2e_next(&s) << 32) | e2e_next(&s));
  }
  k_blur(w, h, img, blur);
  k_s8(n, s8, t8);
  k_s16(n, a16, b16, c16);
  k_div(n, a, q);
  k_rem(n, a, r);
  k_div64(n, l, lq);
  e2e_print_bytes("blur", blur, (size_t)n);
  e2e_print_bytes("s8", t8, (size_t)n);
  e2e_print_bytes("s16", c16, (size_t)n * 2);
  e2e_print_i32("q", q, (size_t)n);
  e2e_print_i32("r", r, (size_t)n);
  e2e_print_i64("lq", (const int64_t *)lq, (size_t)n);
  return 0;
}
