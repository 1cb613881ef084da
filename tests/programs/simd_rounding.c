/* simd_rounding.c: f32x4/f64x2 ceil, floor, trunc and nearest over 4
 * million random vectors (any bits, values near the integers, values up
 * to and past the last fractional ones), hashed; natively the same lanes
 * through ceilf, floorf, truncf, nearbyintf and their f64 forms.  NaN
 * lanes hash as one value (their bits are the implementation's). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

static uint32_t state = 1;
static uint32_t next(void) {
  state ^= state << 13;
  state ^= state >> 17;
  state ^= state << 5;
  return state;
}

static uint32_t bits32(float v) {
  uint32_t b = 0x7fc00000;
  if (!isnan(v)) memcpy(&b, &v, 4);
  return b;
}

static uint64_t bits64(double v) {
  uint64_t b = 0x7ff8000000000000ull;
  if (!isnan(v)) memcpy(&b, &v, 8);
  return b;
}

/* Lane 0 any bits, lane 1 exponents near 0 (small values with fractions),
 * lanes 2 and 3 up to 2^23 and past it. */
static void make(float x[4], double d[2]) {
  uint32_t b[4] = {next(), (next() & 0x807fffffu) | ((0x7fu + next() % 30) << 23),
                   (next() & 0x80000000u) | (next() % 0x4b000000u), next() % 0x4c000000u};
  memcpy(x, b, 16);
  uint64_t e[2] = {(uint64_t)next() << 32 | next(),
                   (((uint64_t)next() << 32 | next()) & 0x800fffffffffffffull) |
                       (uint64_t)(0x3ff + next() % 60) << 52};
  memcpy(d, e, 16);
}

int main(void) {
  uint32_t h[4] = {0};
  uint64_t g[4] = {0};
  for (int i = 0; i < 4000000; i++) {
    float x[4], r[4][4];
    double d[2], q[4][2];
    make(x, d);
#ifdef __wasm_simd128__
    v128_t v = wasm_v128_load(x), w = wasm_v128_load(d);
    wasm_v128_store(r[0], wasm_f32x4_ceil(v));
    wasm_v128_store(r[1], wasm_f32x4_floor(v));
    wasm_v128_store(r[2], wasm_f32x4_trunc(v));
    wasm_v128_store(r[3], wasm_f32x4_nearest(v));
    wasm_v128_store(q[0], wasm_f64x2_ceil(w));
    wasm_v128_store(q[1], wasm_f64x2_floor(w));
    wasm_v128_store(q[2], wasm_f64x2_trunc(w));
    wasm_v128_store(q[3], wasm_f64x2_nearest(w));
#else
    for (int k = 0; k < 4; k++) {
      r[0][k] = ceilf(x[k]), r[1][k] = floorf(x[k]);
      r[2][k] = truncf(x[k]), r[3][k] = nearbyintf(x[k]);
    }
    for (int k = 0; k < 2; k++) {
      q[0][k] = ceil(d[k]), q[1][k] = floor(d[k]);
      q[2][k] = trunc(d[k]), q[3][k] = nearbyint(d[k]);
    }
#endif
    for (int o = 0; o < 4; o++) {
      for (int k = 0; k < 4; k++) h[o] = h[o] * 31 + bits32(r[o][k]);
      for (int k = 0; k < 2; k++) g[o] = g[o] * 31 + bits64(q[o][k]);
    }
  }
  static const char *const names[] = {"ceil", "floor", "trunc", "nearest"};
  for (int o = 0; o < 4; o++) printf("%-8s f32x4 %08x f64x2 %016llx\n", names[o], h[o], (unsigned long long)g[o]);
  return 0;
}
