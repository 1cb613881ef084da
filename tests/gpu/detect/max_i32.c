/* max_i32.c: a signed max reduction. */
int max_i32(const int *a, int n) {
  int m = -2147483647 - 1;
  for (int i = 0; i < n; i++) m = a[i] > m ? a[i] : m;
  return m;
}
