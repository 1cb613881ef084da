/* imgproc.c: byte image processing that vectorises: alpha blending, a 3x3
 * box blur, brightness with saturation, thresholding and a difference of
 * frames, over 1024x1024 greyscale images, 300 frames. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define W 1024
#define H 1024

static uint8_t a[W * H], b[W * H], out[W * H], tmp[W * H];

static uint32_t seed = 99;
static uint8_t rnd(void) {
  seed = seed * 1664525u + 1013904223u;
  return (uint8_t)(seed >> 24);
}

static void blend(uint8_t *dst, const uint8_t *x, const uint8_t *y, unsigned alpha, int n) {
  for (int i = 0; i < n; i++) dst[i] = (uint8_t)((x[i] * alpha + y[i] * (256 - alpha)) >> 8);
}

static void blur(uint8_t *dst, const uint8_t *src) {
  for (int y = 1; y < H - 1; y++)
    for (int x = 1; x < W - 1; x++) {
      const uint8_t *p = src + y * W + x;
      unsigned s = p[-W - 1] + p[-W] + p[-W + 1] + p[-1] + p[0] + p[1] + p[W - 1] + p[W] + p[W + 1];
      dst[y * W + x] = (uint8_t)((s * 7282) >> 16); /* / 9 */
    }
}

static void brighten(uint8_t *dst, const uint8_t *src, int k, int n) {
  for (int i = 0; i < n; i++) {
    int v = src[i] + k;
    dst[i] = (uint8_t)(v > 255 ? 255 : v < 0 ? 0 : v);
  }
}

static unsigned threshold_count(const uint8_t *src, uint8_t t, int n) {
  unsigned c = 0;
  for (int i = 0; i < n; i++) c += src[i] > t;
  return c;
}

static uint64_t abs_diff_sum(const uint8_t *x, const uint8_t *y, int n) {
  uint64_t s = 0;
  for (int i = 0; i < n; i++) s += x[i] > y[i] ? x[i] - y[i] : y[i] - x[i];
  return s;
}

int main(void) {
  for (int i = 0; i < W * H; i++) a[i] = rnd(), b[i] = (uint8_t)(rnd() / 2 + (i % W) / 8);
  uint64_t check = 0;
  for (int frame = 0; frame < 300; frame++) {
    blend(tmp, a, b, (unsigned)(frame * 8 + 3) & 255, W * H);
    blur(out, tmp);
    brighten(tmp, out, frame - 15, W * H);
    check += threshold_count(tmp, 128, W * H);
    check += abs_diff_sum(tmp, a, W * H);
    uint8_t *t = a;
    for (int i = 0; i < W * H; i++) t[i] = (uint8_t)(t[i] ^ tmp[i]);
  }
  printf("imgproc %llu\n", (unsigned long long)check);
  return 0;
}
