/* stencil_wh.c: 2-D loops over w x h images whose inner loop sits behind
 * a branch: a 5-point Jacobi step over the interior (y, x from 1, LLVM
 * leaves `w > 2` inside the outer loop), a scaling under a live flag (on
 * and off), and rows under a per-row flag, which must stay on the CPU.
 * Also the degenerate sizes (w or h of 1, 2 and 3), where the guarded
 * inner loop never runs. */
/* expect-gpu-launches: 3 */
#include "e2e.h"

__attribute__((noinline)) void k_jacobi(int w, int h, const float *in, float *out) {
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++)
      out[y * w + x] = 0.25f * (in[(y - 1) * w + x] + in[(y + 1) * w + x] + in[y * w + x - 1] +
                                in[y * w + x + 1]);
}

__attribute__((noinline)) void k_scale_if(int w, int h, int on, const float *in, float *out) {
  for (int y = 0; y < h; y++)
    if (on)
      for (int x = 0; x < w; x++) out[y * w + x] = in[y * w + x] * 3.0f - 1.0f;
}

__attribute__((noinline)) void k_rows_if(int w, int h, const int *flag, const float *in, float *out) {
  for (int y = 0; y < h; y++)
    if (flag[y])
      for (int x = 0; x < w; x++) out[y * w + x] = in[y * w + x] + 0.5f;
}

int main(int argc, char **argv) {
  int w = e2e_arg(argc, argv, 1, 1531), h = e2e_arg(argc, argv, 2, 997);
  size_t n = (size_t)w * h;
  float *in = e2e_alloc(n * sizeof(float)), *out = e2e_alloc(n * sizeof(float));
  float *s = e2e_alloc(n * sizeof(float)), *r = e2e_alloc(n * sizeof(float));
  int *flag = e2e_alloc((size_t)h * sizeof(int));
  uint32_t seed = 4242;
  for (size_t i = 0; i < n; i++) {
    in[i] = e2e_unit(&seed);
    out[i] = s[i] = r[i] = -2.0f;
  }
  for (int y = 0; y < h; y++) flag[y] = (int)(e2e_next(&seed) & 1);
  k_jacobi(w, h, in, out);
  k_scale_if(w, h, 1, in, s);
  k_scale_if(w, h, 0, out, s); /* flag off: s keeps the first result */
  k_rows_if(w, h, flag, in, r);
  /* degenerate sizes: nothing inside the border is written */
  static const int sizes[][2] = {{1, 5}, {2, 5}, {3, 5}, {5, 1}, {5, 2}, {5, 3}, {3, 3}};
  for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    k_jacobi(sizes[i][0], sizes[i][1], in, r + n / 2 + 64 * i);
  e2e_print_f32("jacobi", out, n);
  e2e_print_f32("scale", s, n);
  e2e_print_f32("rows", r, n);
  return 0;
}
