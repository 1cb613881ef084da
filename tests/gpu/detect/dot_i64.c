/* dot_i64.c: an i64 add reduction of products. */
long long dot_i64(const long long *a, const long long *b, int n) {
  long long s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}
