/* textbook_kmeans.c: a k-means step and a batched matmul through an array
 * of pointers, as a tutorial writes them in plain C, not written for
 * twasmc (no `restrict`, arrays from malloc): the assignment step (each
 * point's squared distance to each centroid, the nearest kept), the
 * update step (per-cluster sums, then means), the same distances through
 * the expansion |x|^2 - 2 x.c + |c|^2 (a product X C^T, then a map), and
 * a batch of small products whose matrices are reached through arrays of
 * pointers (float **A, **B, **C: one matrix per pointer, the layout of
 * cuBLAS's batched API).  Compile-only survey for issue 19 (`bash
 * tests/gpu/suite_report.sh tests/gpu/survey/textbook_kmeans.c`,
 * docs/PERFORMANCE.md); each kernel noinline so that the report names
 * it. */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>

#define NI __attribute__((noinline))

NI void kernel_assign(int n, int k, int d, const float *X, const float *C, int *label) {
  for (int i = 0; i < n; i++) {
    float best = FLT_MAX;
    int arg = 0;
    for (int c = 0; c < k; c++) {
      float s = 0.0f;
      for (int j = 0; j < d; j++) {
        float t = X[i * d + j] - C[c * d + j];
        s += t * t;
      }
      if (s < best) {
        best = s;
        arg = c;
      }
    }
    label[i] = arg;
  }
}

NI void kernel_update(int n, int k, int d, const float *X, const int *label, float *C, int *count) {
  for (int c = 0; c < k * d; c++) C[c] = 0.0f;
  for (int c = 0; c < k; c++) count[c] = 0;
  for (int i = 0; i < n; i++) {
    count[label[i]]++;
    for (int j = 0; j < d; j++) C[label[i] * d + j] += X[i * d + j];
  }
  for (int c = 0; c < k; c++)
    for (int j = 0; j < d; j++)
      if (count[c]) C[c * d + j] /= (float)count[c];
}

NI void kernel_dots(int n, int k, int d, const float *X, const float *C, float *G) {
  for (int i = 0; i < n; i++)
    for (int c = 0; c < k; c++) {
      float s = 0.0f;
      for (int j = 0; j < d; j++) s += X[i * d + j] * C[c * d + j];
      G[i * k + c] = s;
    }
}

NI void kernel_dist(int n, int k, const float *xx, const float *cc, float *G) {
  for (int i = 0; i < n; i++)
    for (int c = 0; c < k; c++) G[i * k + c] = xx[i] - 2.0f * G[i * k + c] + cc[c];
}

NI void kernel_batch_ptrs(int batch, int m, int n, int p, float **A, float **B, float **C) {
  for (int b = 0; b < batch; b++)
    for (int i = 0; i < m; i++)
      for (int j = 0; j < n; j++) {
        float s = 0.0f;
        for (int k = 0; k < p; k++) s += A[b][i * p + k] * B[b][k * n + j];
        C[b][i * n + j] = s;
      }
}

static float *randv(int n, unsigned seed) {
  float *p = malloc(sizeof(float) * n);
  for (int i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    p[i] = (float)((seed >> 8) & 0xffff) / 65536.0f;
  }
  return p;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2048, k = 16, d = 32, batch = 8, m = 64;
  float *X = randv(n * d, 1), *C = randv(k * d, 2), *G = malloc(sizeof(float) * n * k);
  int *label = malloc(sizeof(int) * n), *count = malloc(sizeof(int) * k);
  float *xx = malloc(sizeof(float) * n), *cc = malloc(sizeof(float) * k);
  kernel_assign(n, k, d, X, C, label);
  kernel_update(n, k, d, X, label, C, count);
  for (int i = 0; i < n; i++) xx[i] = X[i * d];
  for (int c = 0; c < k; c++) cc[c] = C[c * d];
  kernel_dots(n, k, d, X, C, G);
  kernel_dist(n, k, xx, cc, G);
  float *A[8], *B[8], *Cb[8];
  for (int b = 0; b < batch; b++) A[b] = randv(m * m, 10 + b), B[b] = randv(m * m, 20 + b), Cb[b] = malloc(sizeof(float) * m * m);
  kernel_batch_ptrs(batch, m, m, m, A, B, Cb);
  printf("%d %d %.9g %.9g\n", label[0], label[n - 1], G[0], Cb[batch - 1][m * m - 1]);
  return 0;
}
