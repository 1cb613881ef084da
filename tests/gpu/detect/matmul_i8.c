/* matmul_i8.c: quantised matmul, i8 inputs widened to an i32 accumulator. */
#define M 32
#define N 32
#define K 64
void matmul(const signed char *a, const signed char *b, int *c) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      int s = 0;
      for (int k = 0; k < K; k++) s += a[i * K + k] * b[k * N + j];
      c[i * N + j] = s;
    }
}
