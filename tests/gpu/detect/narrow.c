/* narrow.c: blur9 sums nine bytes, which LLVM does in i16 and divides by
 * 9 in i16; quot divides by constants (signed and unsigned); quot0 by a
 * live value, which may be 0 and must stay on the CPU. */
void blur9(int w, int h, const unsigned char *in, unsigned char *out) {
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++) {
      const unsigned char *p = in + (y - 1) * w + x - 1, *m = p + w, *q = m + w;
      out[y * w + x] = (unsigned char)((p[0] + p[1] + p[2] + m[0] + m[1] + m[2] + q[0] + q[1] + q[2]) / 9);
    }
}

void quot(int n, const int *a, int *q) {
  for (int i = 0; i < n; i++) q[i] = a[i] / 7 + (int)((unsigned)a[i] % 10u);
}

void quot0(int n, int d, const int *a, int *q) {
  for (int i = 0; i < n; i++) q[i] = a[i] / d;
}
