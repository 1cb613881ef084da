/* jacobi_n.c: the five-point stencil of jacobi.c with a run-time size.
 * Its accesses a[r - 1] and a[r + 1] share one bounds check (a group whose
 * trap block first picks the failing access): the loop versioning must
 * still see that check, or the nest keeps a second exit and stays on the
 * CPU. */
void jacobi_n(int n, const float *a, float *b) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++)
      b[i * n + j] = 0.2f * (a[i * n + j] + a[(i - 1) * n + j] + a[(i + 1) * n + j] +
                             a[i * n + j - 1] + a[i * n + j + 1]);
}
