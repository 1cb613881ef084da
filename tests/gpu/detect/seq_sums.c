/* seq_sums.c: float sums without --fp-reassociate, each term added to the
 * running sum in program order (one GPU thread can add them exactly so),
 * and one whose adds are not a chain through the running sum. */

/* rmsnorm's sum of squares */
float sum_squares(const float *x, int n) {
  float ss = 0.0f;
  for (int i = 0; i < n; i++) ss += x[i] * x[i];
  return ss;
}

double sum_f64(const double *x, int n) {
  double s = 1.0;
  for (int i = 0; i < n; i++) s += x[i];
  return s;
}

/* each term itself a sum: s = s + (a[i] + b[i]) */
float sum_pairs(const float *a, const float *b, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; i++) s += a[i] + b[i];
  return s;
}

/* unrolled by hand, in order: s + x[2i] + x[2i+1] */
float sum_unrolled(const float *x, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; i++) {
    s += x[2 * i];
    s += x[2 * i + 1];
  }
  return s;
}

/* the running sum twice in one step: not a chain (s + s * x[i]) */
float neg_sum_twice(const float *x, int n) {
  float s = 1.0f;
  for (int i = 0; i < n; i++) s += s * x[i];
  return s;
}
