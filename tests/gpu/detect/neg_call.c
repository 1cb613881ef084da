/* neg_call.c: a loop calling an opaque function is never offloaded. */
__attribute__((noinline)) float opaque(float x) { return x * x + 1.0f; }
void apply(const float *a, float *b, int n) {
  for (int i = 0; i < n; i++) b[i] = opaque(a[i]);
}
