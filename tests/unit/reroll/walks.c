/* walks.c (test_reroll): matrix products written as pointer walks and with
 * unsigned or size_t counters (tests/gpu/survey/styles_matmul.c's mv_walk,
 * mm_walk, mm_walk_ikj, mm_unsigned, mtv_size), which clang -O2 unrolls by 4
 * with the counter running down to 0 and the copies at a+12 .. a off one
 * pointer, or by 2 behind a br_table; main prints the results for sizes 0
 * to 24 (argv[1] for another bound); copy_walk walks its stores. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void mv_walk(int m, int n, const float *A, const float *x, float *y) {
  const float *a = A;
  for (int i = 0; i < m; i++) {
    const float *xp = x;
    float s = 0.0f;
    for (int j = 0; j < n; j++) s += *a++ * *xp++;
    *y++ = s;
  }
}
__attribute__((noinline)) void mm_walk(int m, int n, int k, const float *A, const float *B, float *C) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      const float *a = A + i * k;
      const float *b = B + j;
      float s = 0.0f;
      for (int l = 0; l < k; l++) {
        s += *a++ * *b;
        b += n;
      }
      C[i * n + j] = s;
    }
}
__attribute__((noinline)) void mm_unsigned(unsigned m, unsigned n, unsigned k, const float *A, const float *B, float *C) {
  for (unsigned i = 0; i < m; i++)
    for (unsigned j = 0; j < n; j++) {
      float s = 0.0f;
      for (unsigned l = 0; l < k; l++) s += A[i * k + l] * B[l * n + j];
      C[i * n + j] = s;
    }
}
__attribute__((noinline)) void mtv_size(size_t m, size_t n, const float *A, const float *x, float *y) {
  for (size_t j = 0; j < n; j++) {
    float s = 0.0f;
    for (size_t i = 0; i < m; i++) s += A[i * n + j] * x[i];
    y[j] = s;
  }
}
__attribute__((noinline)) void mm_walk_ikj(int m, int n, int k, const float *A, const float *B, float *C) {
  for (int i = 0; i < m; i++) {
    float *c = C + i * n;
    for (int j = 0; j < n; j++) c[j] = 0.0f;
    for (int l = 0; l < k; l++) {
      float aik = A[i * k + l];
      const float *bp = B + l * n;
      float *cp = c;
      for (int j = 0; j < n; j++) *cp++ += aik * *bp++;
    }
  }
}
/* stores walked too: `*d++ = *s++ + 1` (by 4, copies at d+0 .. d+12):
 * re-rolled behind the range test (ir_reroll_order.c) */
__attribute__((noinline)) void copy_walk(float *d, const float *s, int n) {
  for (int i = 0; i < n; i++) *d++ = *s++ + 1.0f;
}
static float *fl(int n, int seed) { float *p = malloc(sizeof(float) * (n > 0 ? n : 1)); for (int i = 0; i < n; i++) p[i] = (float)((i * 7 + seed) % 13) - 6.0f; return p; }
static void show(const char *name, const float *p, int n) { double s = 0; for (int i = 0; i < n; i++) s += p[i] * (i % 7 + 1); printf("%s %d %.6f\n", name, n, s); }
int main(int argc, char **argv) {
  int big = argc > 1 ? atoi(argv[1]) : 24;
  for (int n = 0; n <= big; n++) {
    int m = n + 3, k = n + 1;
    float *A = fl(m * k + k * n + 64, 1), *B = fl(k * n + 64, 2), *C = fl(m * n + 64, 3), *x = fl(k + 64, 4), *y = fl(m + k + 64, 5);
    mv_walk(m, k, A, x, y); show("mv_walk", y, m);
    mm_walk(m, n, k, A, B, C); show("mm_walk", C, m * n);
    mm_unsigned(m, n, k, A, B, C); show("mm_unsigned", C, m * n);
    mtv_size(m, k, A, x, y); show("mtv_size", y, k);
    mm_walk_ikj(m, n, k, A, B, C); show("mm_walk_ikj", C, m * n);
    copy_walk(y, x, k); show("copy_walk", y, k);
    free(A); free(B); free(C); free(x); free(y);
  }
  return 0;
}
