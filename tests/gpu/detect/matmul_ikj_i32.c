/* matmul_ikj_i32.c: C += A * B, i32, i-k-j order. */
#define M 32
#define N 32
#define K 32
void matmul(const int *a, const int *b, int *c) {
  for (int i = 0; i < M; i++)
    for (int k = 0; k < K; k++)
      for (int j = 0; j < N; j++) c[i * N + j] += a[i * K + k] * b[k * N + j];
}
