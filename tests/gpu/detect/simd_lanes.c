/* simd_lanes.c: loops clang vectorises at -O2 -msimd128 (a v128 loop, then
 * the scalar remainder loop): lane-wise maps the recogniser reads lane by
 * lane, and loops whose lanes are not independent iterations of the
 * scalar loop (reversed, summed, inside an outer loop). */
#include <wasm_simd128.h>
void saxpy4(int n, float a, const float *x, const float *y, float *out) {
  for (int i = 0; i < n; i++) out[i] = a * x[i] + y[i];
}

void scale_i32(int n, int k, const int *x, int *out) {
  for (int i = 0; i < n; i++) out[i] = x[i] * k + 7;
}

void axpy_f64(int n, double a, const double *x, double *y) {
  for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}

/* each lane reads another lane's element: a shuffle reverses them */
void reverse(int n, const float *x, float *out) {
  for (int i = 0; i < n; i++) out[i] = x[n - 1 - i] * 2.0f;
}

/* an i32 sum: clang sums four lanes, each its own iterations */
int sum_i32(int n, const int *x) {
  int s = 0;
  for (int i = 0; i < n; i++) s += x[i];
  return s;
}

/* the j loop vectorised inside the i loop */
void rows(int m, int n, const float *x, float *out) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) out[i * 1024 + j] = x[i * 1024 + j] * 3.0f;
}

/* written with vector types: lane l adds lane l + 1 (rotated), or reads
 * its own element back through two shuffles */
typedef float f4 __attribute__((vector_size(16)));
void rotated(int n, const f4 *x, f4 *o) {
  for (int i = 0; i < n; i++) {
    f4 a = x[i];
    o[i] = a + __builtin_shufflevector(a, a, 1, 2, 3, 0);
  }
}

void shuffled_back(int n, const f4 *x, f4 *o) {
  for (int i = 0; i < n; i++) {
    f4 a = x[i], b = __builtin_shufflevector(a, a, 0, 0, 2, 3);
    o[i] = a * __builtin_shufflevector(b, a, 0, 5, 2, 3);
  }
}

/* two v128 stores a trip (the form of a vector loop unrolled by two, as
 * ir_vunroll.c asks LLVM for after the offload stage): 8 copies */
void two_stores(int n, const float *x, float *o) {
  for (int i = 0; i < n; i += 8) {
    v128_t a = wasm_v128_load(x + i), b = wasm_v128_load(x + i + 4);
    wasm_v128_store(o + i, wasm_f32x4_mul(a, a));
    wasm_v128_store(o + i + 4, wasm_f32x4_mul(b, b));
  }
}

/* a float sum in four lanes, each over its own elements, added at the
 * end: not the scalar loop's order */
float sum_lanes(int n, const f4 *x) {
  f4 s = {0, 0, 0, 0};
  for (int i = 0; i < n; i++) s += x[i];
  return s[0] + s[1] + s[2] + s[3];
}

/* the counter used as a value: clang's induction vector <0, 1, 2, 3>
 * stepped by a splat of 4, each lane its own iteration's i */
void ramp(int n, int from, float *a) {
  for (int i = 0; i < n; i++) a[i] = (float)(3 * i + from) * 0.5f;
}
