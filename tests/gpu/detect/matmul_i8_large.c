/* matmul_i8_large.c: a quantised layer's product, large enough for tensor cores. */
#define M 256
#define N 256
#define K 512
void matmul(const signed char *a, const signed char *b, int *c) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      int s = 0;
      for (int k = 0; k < K; k++) s += a[i * K + k] * b[k * N + j];
      c[i * N + j] = s;
    }
}
