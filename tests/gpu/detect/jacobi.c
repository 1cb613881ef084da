/* jacobi.c: a 2-D five-point stencil from one array into another. */
#define N 256
void jacobi(const float *a, float *b) {
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++)
      b[i * N + j] = 0.2f * (a[i * N + j] + a[(i - 1) * N + j] + a[(i + 1) * N + j] +
                             a[i * N + j - 1] + a[i * N + j + 1]);
}
