/* neg_counter.c: a[i] = a[i-1] + 1, which LLVM rewrites to a[0] + i: the
 * loop counter becomes the stored value. */
void prefix(int *a, int n) {
  for (int i = 1; i < n; i++) a[i] = a[i - 1] + 1;
}
