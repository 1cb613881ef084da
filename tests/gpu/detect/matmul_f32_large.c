/* matmul_f32_large.c: an f32 product large enough for tensor cores (tf32 only on request). */
#define N 256
void matmul(const float *a, const float *b, float *c) {
  for (int i = 0; i < N; i++)
    for (int k = 0; k < N; k++) {
      float t = a[i * N + k];
      for (int j = 0; j < N; j++) c[i * N + j] += t * b[k * N + j];
    }
}
