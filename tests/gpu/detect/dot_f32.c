/* dot_f32.c: a float add reduction, rejected unless reassociation is allowed. */
float dot_f32(const float *a, const float *b, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}
