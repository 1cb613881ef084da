/* neg_dependence.c: a[i] = a[i-1] + 1 carries a value between iterations. */
void prefix(int *a, int n) {
  for (int i = 1; i < n; i++) a[i] = a[i - 1] + 1;
}
