/* matmul_ijk_f32.c: C = A * B, f32, i-j-k order with a scalar accumulator. */
#define M 64
#define N 48
#define K 32
void matmul(const float *a, const float *b, float *c) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      float s = 0.0f;
      for (int k = 0; k < K; k++) s += a[i * K + k] * b[k * N + j];
      c[i * N + j] = s;
    }
}
