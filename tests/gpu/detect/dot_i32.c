/* dot_i32.c: an i32 add reduction of products. */
int dot_i32(const int *a, const int *b, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}
