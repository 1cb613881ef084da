/* guarded.c: inner loops behind a branch in the outer loop.  interior: a
 * Jacobi step from 1 to w-1, whose `w > 2` LLVM hoists as a value but
 * leaves as a branch in the outer loop (and whose outer counter then has
 * one `y + 1` per path); rows_if: a per-row flag, which makes the nest no
 * map (each row's inner loop still is one). */
void interior(int w, int h, const float *in, float *out) {
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++)
      out[y * w + x] = 0.25f * (in[(y - 1) * w + x] + in[(y + 1) * w + x] + in[y * w + x - 1] + in[y * w + x + 1]);
}

void rows_if(int w, int h, const int *flag, const float *in, float *out) {
  for (int y = 0; y < h; y++)
    if (flag[y])
      for (int x = 0; x < w; x++) out[y * w + x] = in[y * w + x] + 0.5f;
}
