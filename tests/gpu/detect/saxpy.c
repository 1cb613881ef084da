/* saxpy.c: a 1-D f32 map, y[i] = a * x[i] + y[i] would alias; out is separate. */
void saxpy(int n, float a, const float *x, const float *y, float *out) {
  for (int i = 0; i < n; i++) out[i] = a * x[i] + y[i];
}
