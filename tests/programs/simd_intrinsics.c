/* simd_intrinsics.c: <wasm_simd128.h> intrinsics on edge-case lanes
 * (saturation, INT_MIN, NaN, -0, out-of-range indices and counts).  Built
 * with -msimd128 each operation is one SIMD instruction; built natively
 * (no wasm_simd128.h there) the same operations are computed lane by lane
 * in C as the Wasm spec defines them, so the outputs must agree.  Float
 * lanes holding a NaN whose bits the spec leaves open print as "nan". */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#define SIMD 1
#else
#define SIMD 0
#endif

typedef union {
  uint8_t u8[16];
  int8_t i8[16];
  uint16_t u16[8];
  int16_t i16[8];
  uint32_t u32[4];
  int32_t i32[4];
  uint64_t u64[2];
  int64_t i64[2];
  float f32[4];
  double f64[2];
} vec;

enum { SHOW_BITS, SHOW_F32, SHOW_F64 };

static void show(const char *name, vec v, int how) {
  printf("%-24s", name);
  for (int i = 0; i < 4; i++) {
    if (how == SHOW_F32 && isnan(v.f32[i])) printf(" %8s", "nan");
    else if (how == SHOW_F64 && isnan(v.f64[i / 2])) printf(" %8s", "nan");
    else printf(" %08x", v.u32[i]);
  }
  printf("\n");
}

#if SIMD
static v128_t L(vec v) { return wasm_v128_load(&v); }
static vec V(v128_t x) {
  vec r;
  wasm_v128_store(&r, x);
  return r;
}
/* The SIMD expression on wasm; the lane loop (over i, into r) natively. */
#define OP(name, how, n, simd, ...)                          \
  static void name(vec a, vec b) {                           \
    v128_t x = L(a), y = L(b);                               \
    (void)x, (void)y;                                        \
    show(#name, V(simd), how);                               \
  }
#else
#define OP(name, how, n, simd, ...)                          \
  static void name(vec a, vec b) {                           \
    vec r;                                                   \
    memset(&r, 0, sizeof r);                                 \
    for (int i = 0; i < n; i++) { __VA_ARGS__; }             \
    show(#name, r, how);                                     \
  }
#endif

static int sat(int64_t v, int64_t lo, int64_t hi) { return (int)(v < lo ? lo : v > hi ? hi : v); }

static float fmin_wasm(float a, float b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}
static float fmax_wasm(float a, float b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
static double dmin_wasm(double a, double b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}
static int32_t trunc_s32(double x) {
  if (isnan(x)) return 0;
  if (x >= 2147483648.0) return INT32_MAX;
  if (x <= -2147483649.0) return INT32_MIN;
  return (int32_t)x;
}
static uint32_t trunc_u32(double x) {
  if (isnan(x) || x <= -1.0) return 0;
  if (x >= 4294967296.0) return UINT32_MAX;
  return (uint32_t)x;
}

/* ---- integer arithmetic ------------------------------------------------- */
OP(i8x16_add_sat, SHOW_BITS, 16, wasm_i8x16_add_sat(x, y), r.i8[i] = (int8_t)sat(a.i8[i] + b.i8[i], -128, 127))
OP(u8x16_add_sat, SHOW_BITS, 16, wasm_u8x16_add_sat(x, y), r.u8[i] = (uint8_t)sat(a.u8[i] + b.u8[i], 0, 255))
OP(i16x8_sub_sat, SHOW_BITS, 8, wasm_i16x8_sub_sat(x, y), r.i16[i] = (int16_t)sat(a.i16[i] - b.i16[i], -32768, 32767))
OP(u16x8_sub_sat, SHOW_BITS, 8, wasm_u16x8_sub_sat(x, y), r.u16[i] = (uint16_t)sat(a.u16[i] - b.u16[i], 0, 65535))
OP(i8x16_min, SHOW_BITS, 16, wasm_i8x16_min(x, y), r.i8[i] = a.i8[i] < b.i8[i] ? a.i8[i] : b.i8[i])
OP(u8x16_max, SHOW_BITS, 16, wasm_u8x16_max(x, y), r.u8[i] = a.u8[i] > b.u8[i] ? a.u8[i] : b.u8[i])
OP(u16x8_min, SHOW_BITS, 8, wasm_u16x8_min(x, y), r.u16[i] = a.u16[i] < b.u16[i] ? a.u16[i] : b.u16[i])
OP(i32x4_max, SHOW_BITS, 4, wasm_i32x4_max(x, y), r.i32[i] = a.i32[i] > b.i32[i] ? a.i32[i] : b.i32[i])
OP(u8x16_avgr, SHOW_BITS, 16, wasm_u8x16_avgr(x, y), r.u8[i] = (uint8_t)((a.u8[i] + b.u8[i] + 1) >> 1))
OP(u16x8_avgr, SHOW_BITS, 8, wasm_u16x8_avgr(x, y), r.u16[i] = (uint16_t)((a.u16[i] + b.u16[i] + 1) >> 1))
OP(i8x16_abs, SHOW_BITS, 16, wasm_i8x16_abs(x), r.u8[i] = (uint8_t)(a.i8[i] < 0 ? -a.i8[i] : a.i8[i]))
OP(i64x2_abs, SHOW_BITS, 2, wasm_i64x2_abs(x), r.u64[i] = a.i64[i] < 0 ? 0 - a.u64[i] : a.u64[i])
OP(i32x4_neg, SHOW_BITS, 4, wasm_i32x4_neg(x), r.u32[i] = 0 - a.u32[i])
OP(i16x8_mul, SHOW_BITS, 8, wasm_i16x8_mul(x, y), r.u16[i] = (uint16_t)(a.u16[i] * b.u16[i]))
OP(i64x2_mul, SHOW_BITS, 2, wasm_i64x2_mul(x, y), r.u64[i] = a.u64[i] * b.u64[i])
OP(i8x16_popcnt, SHOW_BITS, 16, wasm_i8x16_popcnt(x), r.u8[i] = (uint8_t)__builtin_popcount(a.u8[i]))
OP(i16x8_q15mulr_sat, SHOW_BITS, 8, wasm_i16x8_q15mulr_sat(x, y),
   r.i16[i] = (int16_t)sat((a.i16[i] * b.i16[i] + 0x4000) >> 15, -32768, 32767))
OP(i32x4_dot_i16x8, SHOW_BITS, 4, wasm_i32x4_dot_i16x8(x, y),
   r.u32[i] = (uint32_t)(a.i16[2 * i] * b.i16[2 * i]) + (uint32_t)(a.i16[2 * i + 1] * b.i16[2 * i + 1]))
OP(i16x8_extmul_low_i8x16, SHOW_BITS, 8, wasm_i16x8_extmul_low_i8x16(x, y), r.i16[i] = (int16_t)(a.i8[i] * b.i8[i]))
OP(u32x4_extmul_high_u16x8, SHOW_BITS, 4, wasm_u32x4_extmul_high_u16x8(x, y),
   r.u32[i] = (uint32_t)a.u16[i + 4] * b.u16[i + 4])
OP(i64x2_extmul_low_i32x4, SHOW_BITS, 2, wasm_i64x2_extmul_low_i32x4(x, y), r.i64[i] = (int64_t)a.i32[i] * b.i32[i])
OP(u16x8_extadd_pairwise_u8x16, SHOW_BITS, 8, wasm_u16x8_extadd_pairwise_u8x16(x),
   r.u16[i] = (uint16_t)(a.u8[2 * i] + a.u8[2 * i + 1]))
OP(i32x4_extadd_pairwise_i16x8, SHOW_BITS, 4, wasm_i32x4_extadd_pairwise_i16x8(x),
   r.i32[i] = a.i16[2 * i] + a.i16[2 * i + 1])

/* ---- width changes and shifts ------------------------------------------- */
/* Counts past the lane width, unknown to the compiler: taken modulo it. */
static volatile uint32_t nine = 9, seventeen = 17, thirty_three = 33, sixty_five = 65;
OP(i8x16_narrow_i16x8, SHOW_BITS, 16, wasm_i8x16_narrow_i16x8(x, y),
   r.i8[i] = (int8_t)sat(i < 8 ? a.i16[i] : b.i16[i - 8], -128, 127))
OP(u8x16_narrow_i16x8, SHOW_BITS, 16, wasm_u8x16_narrow_i16x8(x, y),
   r.u8[i] = (uint8_t)sat(i < 8 ? a.i16[i] : b.i16[i - 8], 0, 255))
OP(u16x8_narrow_i32x4, SHOW_BITS, 8, wasm_u16x8_narrow_i32x4(x, y),
   r.u16[i] = (uint16_t)sat(i < 4 ? a.i32[i] : b.i32[i - 4], 0, 65535))
OP(i16x8_extend_high_i8x16, SHOW_BITS, 8, wasm_i16x8_extend_high_i8x16(x), r.i16[i] = a.i8[i + 8])
OP(u32x4_extend_low_u16x8, SHOW_BITS, 4, wasm_u32x4_extend_low_u16x8(x), r.u32[i] = a.u16[i])
OP(i64x2_extend_high_i32x4, SHOW_BITS, 2, wasm_i64x2_extend_high_i32x4(x), r.i64[i] = a.i32[i + 2])
OP(i8x16_shl_9, SHOW_BITS, 16, wasm_i8x16_shl(x, nine), r.u8[i] = (uint8_t)(a.u8[i] << 1))
OP(i16x8_shr_17, SHOW_BITS, 8, wasm_i16x8_shr(x, seventeen), r.i16[i] = (int16_t)(a.i16[i] >> 1))
OP(u32x4_shr_33, SHOW_BITS, 4, wasm_u32x4_shr(x, thirty_three), r.u32[i] = a.u32[i] >> 1)
OP(i64x2_shl_65, SHOW_BITS, 2, wasm_i64x2_shl(x, sixty_five), r.u64[i] = a.u64[i] << 1)
OP(i64x2_shr_63, SHOW_BITS, 2, wasm_i64x2_shr(x, 63), r.i64[i] = a.i64[i] < 0 ? -1 : 0)

/* ---- comparisons, selection, lanes -------------------------------------- */
OP(i8x16_lt, SHOW_BITS, 16, wasm_i8x16_lt(x, y), r.u8[i] = a.i8[i] < b.i8[i] ? 0xff : 0)
OP(u16x8_ge, SHOW_BITS, 8, wasm_u16x8_ge(x, y), r.u16[i] = a.u16[i] >= b.u16[i] ? 0xffff : 0)
OP(i32x4_gt, SHOW_BITS, 4, wasm_i32x4_gt(x, y), r.u32[i] = a.i32[i] > b.i32[i] ? ~0u : 0)
OP(i64x2_lt, SHOW_BITS, 2, wasm_i64x2_lt(x, y), r.u64[i] = a.i64[i] < b.i64[i] ? ~0ull : 0)
OP(f32x4_le, SHOW_BITS, 4, wasm_f32x4_le(x, y), r.u32[i] = a.f32[i] <= b.f32[i] ? ~0u : 0)
OP(f64x2_ne, SHOW_BITS, 2, wasm_f64x2_ne(x, y), r.u64[i] = a.f64[i] != b.f64[i] ? ~0ull : 0)
OP(i8x16_swizzle, SHOW_BITS, 16, wasm_i8x16_swizzle(x, y), r.u8[i] = b.u8[i] < 16 ? a.u8[b.u8[i]] : 0)
OP(i8x16_shuffle, SHOW_BITS, 16,
   wasm_i8x16_shuffle(x, y, 31, 0, 30, 1, 29, 2, 28, 3, 16, 15, 17, 14, 18, 13, 19, 12),
   static const uint8_t m[16] = {31, 0, 30, 1, 29, 2, 28, 3, 16, 15, 17, 14, 18, 13, 19, 12};
   r.u8[i] = m[i] < 16 ? a.u8[m[i]] : b.u8[m[i] - 16])
OP(v128_bitselect, SHOW_BITS, 4, wasm_v128_bitselect(x, y, wasm_i32x4_make(0xff00ff00, 0x0f0f0f0f, 0, -1)),
   static const uint32_t c[4] = {0xff00ff00u, 0x0f0f0f0fu, 0, ~0u};
   r.u32[i] = (a.u32[i] & c[i]) | (b.u32[i] & ~c[i]))
OP(v128_andnot, SHOW_BITS, 4, wasm_v128_andnot(x, y), r.u32[i] = a.u32[i] & ~b.u32[i])
OP(lanes, SHOW_BITS, 4,
   wasm_i32x4_replace_lane(wasm_i16x8_splat((int16_t)wasm_i8x16_extract_lane(x, 15)), 3,
                           wasm_u16x8_extract_lane(y, 5)),
   r.u32[i] = i == 3 ? b.u16[5] : (uint32_t)(uint16_t)a.i8[15] * 0x10001u)

/* ---- float -------------------------------------------------------------- */
OP(f32x4_min, SHOW_F32, 4, wasm_f32x4_min(x, y), r.f32[i] = fmin_wasm(a.f32[i], b.f32[i]))
OP(f32x4_max, SHOW_F32, 4, wasm_f32x4_max(x, y), r.f32[i] = fmax_wasm(a.f32[i], b.f32[i]))
OP(f64x2_min, SHOW_F64, 2, wasm_f64x2_min(x, y), r.f64[i] = dmin_wasm(a.f64[i], b.f64[i]))
OP(f32x4_pmin, SHOW_BITS, 4, wasm_f32x4_pmin(x, y), r.f32[i] = b.f32[i] < a.f32[i] ? b.f32[i] : a.f32[i])
OP(f32x4_pmax, SHOW_BITS, 4, wasm_f32x4_pmax(x, y), r.f32[i] = a.f32[i] < b.f32[i] ? b.f32[i] : a.f32[i])
OP(f64x2_pmax, SHOW_BITS, 2, wasm_f64x2_pmax(x, y), r.f64[i] = a.f64[i] < b.f64[i] ? b.f64[i] : a.f64[i])
OP(f32x4_nearest, SHOW_F32, 4, wasm_f32x4_nearest(x), r.f32[i] = nearbyintf(a.f32[i]))
OP(f32x4_ceil, SHOW_F32, 4, wasm_f32x4_ceil(x), r.f32[i] = ceilf(a.f32[i]))
OP(f32x4_floor, SHOW_F32, 4, wasm_f32x4_floor(x), r.f32[i] = floorf(a.f32[i]))
OP(f32x4_trunc, SHOW_F32, 4, wasm_f32x4_trunc(x), r.f32[i] = truncf(a.f32[i]))
OP(f64x2_nearest, SHOW_F64, 2, wasm_f64x2_nearest(x), r.f64[i] = nearbyint(a.f64[i]))
OP(f32x4_sqrt, SHOW_F32, 4, wasm_f32x4_sqrt(x), r.f32[i] = sqrtf(a.f32[i]))
OP(f32x4_div, SHOW_F32, 4, wasm_f32x4_div(x, y), r.f32[i] = a.f32[i] / b.f32[i])
OP(f64x2_mul, SHOW_F64, 2, wasm_f64x2_mul(x, y), r.f64[i] = a.f64[i] * b.f64[i])
OP(f32x4_abs, SHOW_BITS, 4, wasm_f32x4_abs(x), r.u32[i] = a.u32[i] & 0x7fffffffu)
OP(f64x2_neg, SHOW_BITS, 2, wasm_f64x2_neg(x), r.u64[i] = a.u64[i] ^ 0x8000000000000000ull)

/* ---- conversions -------------------------------------------------------- */
OP(i32x4_trunc_sat_f32x4, SHOW_BITS, 4, wasm_i32x4_trunc_sat_f32x4(x), r.i32[i] = trunc_s32(a.f32[i]))
OP(u32x4_trunc_sat_f32x4, SHOW_BITS, 4, wasm_u32x4_trunc_sat_f32x4(x), r.u32[i] = trunc_u32(a.f32[i]))
OP(i32x4_trunc_sat_f64x2_zero, SHOW_BITS, 2, wasm_i32x4_trunc_sat_f64x2_zero(x), r.i32[i] = trunc_s32(a.f64[i]))
OP(u32x4_trunc_sat_f64x2_zero, SHOW_BITS, 2, wasm_u32x4_trunc_sat_f64x2_zero(x), r.u32[i] = trunc_u32(a.f64[i]))
OP(f32x4_convert_u32x4, SHOW_BITS, 4, wasm_f32x4_convert_u32x4(x), r.f32[i] = (float)a.u32[i])
OP(f32x4_convert_i32x4, SHOW_BITS, 4, wasm_f32x4_convert_i32x4(x), r.f32[i] = (float)a.i32[i])
OP(f64x2_convert_low_u32x4, SHOW_BITS, 2, wasm_f64x2_convert_low_u32x4(x), r.f64[i] = (double)a.u32[i])
OP(f32x4_demote_f64x2_zero, SHOW_F32, 2, wasm_f32x4_demote_f64x2_zero(x), r.f32[i] = (float)a.f64[i])
OP(f64x2_promote_low_f32x4, SHOW_F64, 2, wasm_f64x2_promote_low_f32x4(x), r.f64[i] = (double)a.f32[i])

/* Reductions to one i32: bitmask, any_true, all_true. */
static void reductions(vec a) {
  uint32_t bm8 = 0, bm16 = 0, bm32 = 0, bm64 = 0, any = 0, all8 = 1, all32 = 1;
#if SIMD
  v128_t x = L(a);
  bm8 = wasm_i8x16_bitmask(x), bm16 = wasm_i16x8_bitmask(x), bm32 = wasm_i32x4_bitmask(x);
  bm64 = wasm_i64x2_bitmask(x), any = wasm_v128_any_true(x), all8 = wasm_i8x16_all_true(x);
  all32 = wasm_i32x4_all_true(x);
#else
  for (int i = 0; i < 16; i++) bm8 |= (uint32_t)(a.i8[i] < 0) << i, any |= a.u8[i], all8 &= a.u8[i] != 0;
  for (int i = 0; i < 8; i++) bm16 |= (uint32_t)(a.i16[i] < 0) << i;
  for (int i = 0; i < 4; i++) bm32 |= (uint32_t)(a.i32[i] < 0) << i, all32 &= a.u32[i] != 0;
  for (int i = 0; i < 2; i++) bm64 |= (uint32_t)(a.i64[i] < 0) << i;
  any = any != 0;
#endif
  printf("%-24s %04x %02x %x %x %u %u %u\n", "bitmask any all", bm8, bm16, bm32, bm64, any, all8, all32);
}

/* Loads that splat, zero-fill, extend or replace one lane, and a lane store. */
static void loads(const uint8_t *mem) {
  vec r[6];
#if SIMD
  r[0] = V(wasm_v128_load8_splat(mem + 3));
  r[1] = V(wasm_v128_load32_zero(mem + 5));
  r[2] = V(wasm_i16x8_load8x8(mem + 1));
  r[3] = V(wasm_u32x4_load16x4(mem + 7));
  r[4] = V(wasm_v128_load64_lane(mem + 2, wasm_i32x4_splat(-1), 1));
  vec out = {{0}};
  wasm_v128_store16_lane(&out.u16[3], wasm_v128_load(mem), 6);
  r[5] = out;
#else
  memset(r, 0, sizeof r);
  for (int i = 0; i < 16; i++) r[0].u8[i] = mem[3];
  memcpy(&r[1].u32[0], mem + 5, 4);
  for (int i = 0; i < 8; i++) r[2].i16[i] = (int8_t)mem[1 + i];
  for (int i = 0; i < 4; i++) r[3].u32[i] = (uint32_t)(mem[7 + 2 * i] | mem[8 + 2 * i] << 8);
  r[4].u64[0] = ~0ull;
  memcpy(&r[4].u64[1], mem + 2, 8);
  memcpy(&r[5].u16[3], mem + 12, 2);
#endif
  static const char *const names[] = {"load8_splat", "load32_zero", "load8x8_s", "load16x4_u", "load64_lane",
                                      "store16_lane"};
  for (int i = 0; i < 6; i++) show(names[i], r[i], SHOW_BITS);
}

static vec ints(int k) {
  static const int32_t rows[][4] = {
      {INT32_MIN, -1, 0x7fffffff, 0x12345678},
      {(int32_t)0x80807f7f, (int32_t)0xff017f80, 0x00ff8001, (int32_t)0xfedcba98},
      {(int32_t)0x80008000, 0x7fff8000, (int32_t)0xc0004000, 0x0001ffff},
      {0x0f1e2d3c, 0x11223344, (int32_t)0x99aabbcc, 0x10203040},
  };
  vec v;
  memcpy(&v, rows[k], 16);
  return v;
}

static vec floats(int k) {
  const float n = NAN;
  const float rows[][4] = {
      {-0.0f, 2.5f, n, -1.5f}, {0.0f, -2.5f, 1.0f, n}, {0.5f, -0.5f, 3.5f, -1e30f},
      {3e9f, -3e9f, 4.5e9f, -0.75f}, {INFINITY, -INFINITY, 16777217.0f, 2147483520.0f},
  };
  vec v;
  memcpy(&v, rows[k], 16);
  return v;
}

static vec doubles(int k) {
  const double rows[][2] = {{-0.0, NAN}, {0.0, 2.5}, {4294967295.5, -2147483648.75}, {1e300, -1e-300}, {NAN, -INFINITY}};
  vec v;
  memcpy(&v, rows[k], 16);
  return v;
}

typedef void (*binary_fn)(vec, vec);

int main(void) {
  static const binary_fn int_ops[] = {
      i8x16_add_sat, u8x16_add_sat, i16x8_sub_sat, u16x8_sub_sat, i8x16_min, u8x16_max, u16x8_min,
      i32x4_max, u8x16_avgr, u16x8_avgr, i8x16_abs, i64x2_abs, i32x4_neg, i16x8_mul, i64x2_mul,
      i8x16_popcnt, i16x8_q15mulr_sat, i32x4_dot_i16x8, i16x8_extmul_low_i8x16, u32x4_extmul_high_u16x8,
      i64x2_extmul_low_i32x4, u16x8_extadd_pairwise_u8x16, i32x4_extadd_pairwise_i16x8, i8x16_narrow_i16x8,
      u8x16_narrow_i16x8, u16x8_narrow_i32x4, i16x8_extend_high_i8x16, u32x4_extend_low_u16x8,
      i64x2_extend_high_i32x4, i8x16_shl_9, i16x8_shr_17, u32x4_shr_33, i64x2_shl_65, i64x2_shr_63,
      i8x16_lt, u16x8_ge, i32x4_gt, i64x2_lt, i8x16_swizzle, i8x16_shuffle, v128_bitselect, v128_andnot,
      lanes, f32x4_convert_u32x4, f32x4_convert_i32x4, f64x2_convert_low_u32x4,
  };
  static const binary_fn float_ops[] = {
      f32x4_min, f32x4_max, f32x4_pmin, f32x4_pmax, f32x4_nearest, f32x4_ceil, f32x4_floor, f32x4_trunc,
      f32x4_sqrt, f32x4_div, f32x4_abs, f32x4_le, i32x4_trunc_sat_f32x4, u32x4_trunc_sat_f32x4,
      f64x2_promote_low_f32x4,
  };
  static const binary_fn double_ops[] = {
      f64x2_min, f64x2_pmax, f64x2_nearest, f64x2_mul, f64x2_neg, f64x2_ne, i32x4_trunc_sat_f64x2_zero,
      u32x4_trunc_sat_f64x2_zero, f32x4_demote_f64x2_zero,
  };
  for (int k = 0; k < 3; k++) {
    printf("-- ints %d, %d\n", k, k + 1);
    for (size_t i = 0; i < sizeof int_ops / sizeof int_ops[0]; i++) int_ops[i](ints(k), ints(k + 1));
    reductions(ints(k));
  }
  for (int k = 0; k < 4; k++) {
    printf("-- floats %d, %d\n", k, k + 1);
    for (size_t i = 0; i < sizeof float_ops / sizeof float_ops[0]; i++) float_ops[i](floats(k), floats(k + 1));
  }
  for (int k = 0; k < 4; k++) {
    printf("-- doubles %d, %d\n", k, k + 1);
    for (size_t i = 0; i < sizeof double_ops / sizeof double_ops[0]; i++) double_ops[i](doubles(k), doubles(k + 1));
  }
  uint8_t mem[32];
  for (int i = 0; i < 32; i++) mem[i] = (uint8_t)(i * 37 + 128);
  loads(mem);
  return 0;
}
