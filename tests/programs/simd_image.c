/* simd_image.c: byte image kernels whose -msimd128 loops twasmc's lanes
 * pass rewrites (sums of bytes in i32 lanes, their multiplies, absolute
 * differences widened to i32 and i64), over widths that leave remainders,
 * with all-255 and all-0 images at the edges of the proofs; prints a hash
 * of each result. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define W 203
#define H 61

static uint8_t a[W * H], b[W * H], out[W * H];
static uint32_t wide[W * H];

static uint32_t seed = 4242;
static uint8_t rnd(void) {
  seed = seed * 1664525u + 1013904223u;
  return (uint8_t)(seed >> 24);
}

static uint32_t hash(const void *p, size_t n) {
  const uint8_t *s = p;
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 16777619u;
  return h;
}

/* 3x3 box blur: nine bytes summed, times 7282, >> 16 (/ 9). */
static void blur(uint8_t *dst, const uint8_t *src) {
  for (int y = 1; y < H - 1; y++)
    for (int x = 1; x < W - 1; x++) {
      const uint8_t *p = src + y * W + x;
      unsigned s = p[-W - 1] + p[-W] + p[-W + 1] + p[-1] + p[0] + p[1] + p[W - 1] + p[W] + p[W + 1];
      dst[y * W + x] = (uint8_t)((s * 7282) >> 16);
    }
}

/* The same nine-byte sum kept in 32 bits, squared (both operands of the
 * multiply the sum). */
static void blur_squared(uint32_t *dst, const uint8_t *src) {
  for (int y = 1; y < H - 1; y++)
    for (int x = 1; x < W - 1; x++) {
      const uint8_t *p = src + y * W + x;
      unsigned s = p[-W - 1] + p[-W] + p[-W + 1] + p[-1] + p[0] + p[1] + p[W - 1] + p[W] + p[W + 1];
      dst[y * W + x] = s * s;
    }
}

/* A weighted sum that passes 2^15 (129 * 255 + ...): its multiply by 7
 * must stay a 32-bit one. */
static void weighted(uint32_t *dst, const uint8_t *x, const uint8_t *y, int n) {
  for (int i = 0; i < n; i++) dst[i] = (x[i] * 129u + y[i]) * 7u;
}

/* 5-tap horizontal sum of 16-bit pixels: lanes wider than bytes. */
static void taps16(uint32_t *dst, const uint8_t *src, int n) {
  for (int i = 2; i < n - 2; i++) {
    unsigned v = (unsigned)(src[i - 2] | src[i - 1] << 8) + (unsigned)(src[i] | src[i + 1] << 8) +
                 (unsigned)(src[i + 2] << 8);
    dst[i] = v * 3u;
  }
}

static uint64_t sad64(const uint8_t *x, const uint8_t *y, int n) {
  uint64_t s = 0;
  for (int i = 0; i < n; i++) s += x[i] > y[i] ? x[i] - y[i] : y[i] - x[i];
  return s;
}

static uint32_t sad32(const uint8_t *x, const uint8_t *y, int n) {
  uint32_t s = 0;
  for (int i = 0; i < n; i++) s += x[i] > y[i] ? x[i] - y[i] : y[i] - x[i];
  return s;
}

/* Signed differences of bytes read as signed: not |a - b| of unsigned
 * bytes. */
static int64_t signed_diff(const int8_t *x, const int8_t *y, int n) {
  int64_t s = 0;
  for (int i = 0; i < n; i++) s += x[i] > y[i] ? x[i] - y[i] : (y[i] - x[i]) * 2;
  return s;
}

static void report(const char *what) {
  blur(out, a);
  printf("%s blur %08x", what, (unsigned)hash(out, sizeof out));
  blur_squared(wide, a);
  printf(" squared %08x", (unsigned)hash(wide, sizeof wide));
  weighted(wide, a, b, W * H - 3);
  printf(" weighted %08x", (unsigned)hash(wide, sizeof wide));
  taps16(wide, a, W * H - 1);
  printf(" taps %08x", (unsigned)hash(wide, sizeof wide));
  printf(" sad64 %llu sad32 %u signed %lld\n", (unsigned long long)sad64(a, b, W * H - 5),
         (unsigned)sad32(a, b, W * H), (long long)signed_diff((const int8_t *)a, (const int8_t *)b, W * H - 1));
}

int main(void) {
  for (int i = 0; i < W * H; i++) a[i] = rnd(), b[i] = rnd();
  report("random");
  for (int i = 0; i < W * H; i++) a[i] = 255, b[i] = 0;
  report("255/0");
  for (int i = 0; i < W * H; i++) a[i] = 0, b[i] = 255;
  report("0/255");
  for (int i = 0; i < W * H; i++) a[i] = (uint8_t)(i % 3 ? 255 : 0), b[i] = (uint8_t)(i * 7);
  report("stripes");
  return 0;
}
