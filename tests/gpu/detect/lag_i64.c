/* lag_i64.c: an i64 sum of neighbours' products, x[i] * x[i - 1].  clang
 * unrolls it by four at -O2, loads each x[k] once for two copies and
 * writes the last copy's product with its operands swapped. */
long long lag_i64(const int *x, int n) {
  long long s = 0;
  for (int i = 1; i < n; i++) s += (long long)x[i] * x[i - 1];
  return s;
}
