/* neg_ahead.c: a[i] = a[i+1] + 1 reads an element a later iteration writes. */
void shift(int *a, int n) {
  for (int i = 0; i < n - 1; i++) a[i] = a[i + 1] + 1;
}
