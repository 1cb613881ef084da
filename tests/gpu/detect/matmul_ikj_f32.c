/* matmul_ikj_f32.c: C += A * B, f32, i-k-j order accumulating into C. */
#define M 64
#define N 48
#define K 32
void matmul(const float *a, const float *b, float *c) {
  for (int i = 0; i < M; i++)
    for (int k = 0; k < K; k++) {
      float aik = a[i * K + k];
      for (int j = 0; j < N; j++) c[i * N + j] += aik * b[k * N + j];
    }
}
