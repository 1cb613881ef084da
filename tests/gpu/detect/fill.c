/* fill.c: a float fill, `x[i] = 0.5f`, as test_recog reads it.  At plain
 * -O2 clang unrolls it by 8 with a remainder loop, and its Wasm backend
 * merges each two stores of the constant into one i64.store of
 * 0x3F0000003F000000: the main loop is one map of i32 elements (two per
 * 8-byte store, kn_recog_map.c's split_halves), the remainder (at most 7
 * iterations, its count `n & 7`) too little work for a kernel; with
 * -fno-unroll-loops the one loop is that map. */
void fill_halves(int n, float *x) {
  for (int i = 0; i < n; i++) x[i] = 0.5f;
}
