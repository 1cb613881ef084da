/* Maps with a run-time length: clang -O2 unrolls each by two. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

__attribute__((noinline)) void saxpy(int n, float a, const float *x, float *y) {
  for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}

__attribute__((noinline)) void iscale(int n, int *v, int k) {
  for (int i = 0; i < n; i++) v[i] = v[i] * k + 3;
}

__attribute__((noinline)) void bytes(unsigned n, unsigned char *d, const unsigned char *s) {
  for (unsigned i = 0; i < n; i++) d[i] = (unsigned char)(s[i] ^ (i * 7));
}

__attribute__((noinline)) void map2d(int rows, int cols, int stride, double *m) {
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++) m[r * stride + c] = m[r * stride + c] * 0.5 + r - c;
}

static float fx[40], fy[40];
static int iv[40];
static unsigned char bs[40], bd[40];
static double md[10 * 12];

int main(void) {
  static const int sizes[] = {-3, 0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31};
  for (unsigned t = 0; t < sizeof sizes / sizeof *sizes; t++) {
    int n = sizes[t];
    for (int i = 0; i < 40; i++) {
      fx[i] = (float)i * 0.37f - 2.0f, fy[i] = 1.0f / (float)(i + 1);
      iv[i] = i * 1000003 - 17, bs[i] = (unsigned char)(i * 31), bd[i] = 0;
    }
    saxpy(n, 1.25f, fx, fy);
    iscale(n, iv, -7);
    bytes(n < 0 ? 0 : (unsigned)n, bd, bs);
    uint32_t h = 0;
    for (int i = 0; i < 40; i++) {
      uint32_t w;
      memcpy(&w, &fy[i], 4);
      h = h * 31 + w + (uint32_t)iv[i] + bd[i];
    }
    printf("n=%d %08x\n", n, h);
  }
  for (int rows = 0; rows <= 3; rows++)
    for (int cols = 0; cols <= 11; cols += 1) {
      for (int i = 0; i < 120; i++) md[i] = i * 0.25;
      map2d(rows, cols, 12, md);
      double s = 0;
      for (int i = 0; i < 120; i++) s = s * 1.0001 + md[i];
      printf("map2d %d %d %.17g\n", rows, cols, s);
    }
  return 0;
}
