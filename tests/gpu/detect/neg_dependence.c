/* neg_dependence.c: a[i] = a[i-1] * 3 + b[i] carries a value between
 * iterations (LLVM keeps it in a register). */
void recur(int *a, const int *b, int n) {
  for (int i = 1; i < n; i++) a[i] = a[i - 1] * 3 + b[i];
}
