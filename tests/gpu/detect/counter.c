/* counter.c: loop counters as values.  prefix: a[i] = a[i-1] + 1, which
 * LLVM rewrites to a[0] + i (a live value plus the counter, no load in the
 * loop); ramp: the counter converted to float and scaled. */
void prefix(int *a, int n) {
  for (int i = 1; i < n; i++) a[i] = a[i - 1] + 1;
}

void ramp(float *a, int n, int from) {
  for (int i = 0; i < n; i++) a[i] = (float)(3 * i + from) * 0.5f;
}
