/* box3x3.c: a 3x3 box filter over an 8-bit image, w x h from argv
 * (default 1920 x 1080): u8 -> i32 sums, u8 -> f32 means, and an i32 ->
 * u8 requantisation of the sums. */
/* expect-gpu-launches: 3 */
#include "e2e.h"

__attribute__((noinline)) void k_box_i32(int w, int h, const unsigned char *img, int *sum) {
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++)
      sum[y * w + x] = img[(y - 1) * w + x - 1] + img[(y - 1) * w + x] + img[(y - 1) * w + x + 1] +
                       img[y * w + x - 1] + img[y * w + x] + img[y * w + x + 1] +
                       img[(y + 1) * w + x - 1] + img[(y + 1) * w + x] + img[(y + 1) * w + x + 1];
}

__attribute__((noinline)) void k_box_f32(int w, int h, const unsigned char *img, float *mean) {
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++)
      mean[y * w + x] =
          ((float)img[(y - 1) * w + x - 1] + (float)img[(y - 1) * w + x] +
           (float)img[(y - 1) * w + x + 1] + (float)img[y * w + x - 1] + (float)img[y * w + x] +
           (float)img[y * w + x + 1] + (float)img[(y + 1) * w + x - 1] +
           (float)img[(y + 1) * w + x] + (float)img[(y + 1) * w + x + 1]) *
          (1.0f / 9.0f);
}

__attribute__((noinline)) void k_requant_u8(int n, const int *sum, unsigned char *out) {
  for (int i = 0; i < n; i++) {
    int v = (sum[i] * 7282) >> 16; /* about / 9 */
    out[i] = (unsigned char)(v > 255 ? 255 : v);
  }
}

int main(int argc, char **argv) {
  int w = e2e_arg(argc, argv, 1, 1920), h = e2e_arg(argc, argv, 2, 1080);
  size_t n = (size_t)w * h;
  unsigned char *img = e2e_alloc(n), *out = e2e_alloc(n);
  int *sum = e2e_alloc(n * sizeof(int));
  float *mean = e2e_alloc(n * sizeof(float));
  uint32_t s = 99;
  for (size_t i = 0; i < n; i++) img[i] = (unsigned char)(e2e_next(&s) >> 24);
  k_box_i32(w, h, img, sum);
  k_box_f32(w, h, img, mean);
  k_requant_u8((int)n, sum, out);
  e2e_print_i32("sum", sum, n);
  e2e_print_f32("mean", mean, n);
  e2e_print_bytes("out", out, n);
  return 0;
}
