/* neg_div.c: integer division by a variable may trap. */
void divide(const int *a, int *b, int d, int n) {
  for (int i = 0; i < n; i++) b[i] = a[i] / d;
}
