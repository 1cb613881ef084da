/* neg_call.c: a loop calling a function it cannot see (a host import)
 * is never offloaded. */
__attribute__((import_module("env"), import_name("opaque"))) float opaque(float x);
void apply(const float *a, float *b, int n) {
  for (int i = 0; i < n; i++) b[i] = opaque(a[i]);
}
