/* rt_trip.c: trip counts of counted loops from start, bound, step and the
 * exit test: the compiler's constant folding (compiler/ir/ir_trip.c) and the
 * params of offloaded nests at run time use this one definition. */
#include "twasm_abi.h"

#include <stdbool.h>

typedef __int128 wide;

static bool pred_signed(uint32_t p) { return p >= TWASM_TRIP_SLT && p <= TWASM_TRIP_SGE; }

/* v as a `bits`-wide integer, read signed or unsigned. */
static wide in_domain(int64_t v, unsigned bits, bool is_signed) {
  uint64_t mask = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
  uint64_t u = (uint64_t)v & mask;
  if (is_signed && bits < 64 && (u >> (bits - 1)) & 1) return (wide)u - ((wide)1 << bits);
  if (is_signed && bits == 64) return (wide)(int64_t)u;
  return (wide)u;
}

static wide domain_min(unsigned bits, bool is_signed) {
  return is_signed ? -((wide)1 << (bits - 1)) : 0;
}

static wide domain_max(unsigned bits, bool is_signed) {
  return is_signed ? ((wide)1 << (bits - 1)) - 1 : ((wide)1 << bits) - 1;
}

/* Dispatch calls this before every offloaded nest: 128-bit division is a
 * library call, so quotients that fit in 64 bits (all but a count of 2^64
 * values) take the 64-bit one. */
static wide ceil_div(wide num, wide den) {
  if (num >= 0 && num <= (wide)UINT64_MAX - den && den > 0 && den <= (wide)UINT64_MAX)
    return (wide)(((uint64_t)num + (uint64_t)den - 1) / (uint64_t)den);
  return (num + den - 1) / den;
}

/* Stay while x != bound: the first exact hit without wrapping. */
static bool exits_ne(wide x0, wide bound, wide step, unsigned bits, wide *k) {
  if (step == 0) return x0 == bound ? (*k = 0, true) : false;
  wide dist = step > 0 ? bound - x0 : x0 - bound;
  /* modulo 2^bits (bits <= 64): what remains fits in 64 bits, and so does
   * the step's size (at most 2^63) */
  uint64_t d = (uint64_t)(dist & (((wide)1 << bits) - 1));
  uint64_t s = (uint64_t)(step > 0 ? step : -step);
  if (d % s != 0) return false;
  *k = (wide)(d / s);
  return true;
}

/* Stay while x < bound (or <= when inclusive), counting upwards; the value
 * that fails the test must still be representable, else the IV wraps. */
static bool exits_upward(wide x0, wide bound, wide step, bool inclusive, wide max, wide *k) {
  wide limit = inclusive ? bound + 1 : bound;
  if (x0 >= limit) return (*k = 0, true);
  if (step <= 0) return false;
  *k = ceil_div(limit - x0, step);
  return x0 + *k * step <= max;
}

/* v as a `bits`-wide integer (bits <= 32), in 64-bit arithmetic. */
static int64_t in_domain32(int64_t v, unsigned bits, bool is_signed) {
  uint64_t u = (uint64_t)v & ((UINT64_C(1) << bits) - 1);
  if (is_signed && (u >> (bits - 1)) & 1) return (int64_t)u - ((int64_t)1 << bits);
  return (int64_t)u;
}

/* The common `i < n` (or <=) of at most 32 bits stepping up by less than
 * 2^32, as exits_upward counts it, without 128-bit arithmetic: every value
 * stays far inside 64 bits.  -2: not such a loop. */
static int64_t trip_upward32(int64_t start, int64_t bound, int64_t step, uint32_t how,
                             uint32_t scale) {
  uint32_t pred = how & 0xff, bits = how >> 16;
  if (bits > 32 || step <= 0 || step > (int64_t)UINT32_MAX ||
      (pred != TWASM_TRIP_ULT && pred != TWASM_TRIP_SLT && pred != TWASM_TRIP_ULE && pred != TWASM_TRIP_SLE))
    return -2;
  bool sgn = pred_signed(pred);
  int64_t x0 = in_domain32((int64_t)((uint64_t)start + ((how & TWASM_TRIP_NEXT) ? (uint64_t)step : 0)), bits, sgn);
  int64_t limit = in_domain32(bound, bits, sgn) + (pred == TWASM_TRIP_ULE || pred == TWASM_TRIP_SLE);
  int64_t max = sgn ? ((int64_t)1 << (bits - 1)) - 1 : ((int64_t)1 << bits) - 1;
  int64_t k = x0 >= limit ? 0 : (limit - x0 + step - 1) / step, count;
  if (k > 0 && x0 + k * step > max) return -1;
  return __builtin_mul_overflow(k + 1, (int64_t)scale, &count) ? -1 : count;
}

int64_t twasm_rt_trip_count(int64_t start, int64_t bound, int64_t step, uint32_t how,
                            uint32_t scale) {
  uint32_t pred = how & 0xff, bits = how >> 16;
  if (bits == 0 || bits > 64 || scale == 0) return -1;
  int64_t fast = trip_upward32(start, bound, step, how, scale);
  if (fast != -2) return fast;
  bool sgn = pred_signed(pred);
  wide x0 = in_domain((int64_t)((uint64_t)start + ((how & TWASM_TRIP_NEXT) ? (uint64_t)step : 0)),
                      bits, sgn);
  wide b = in_domain(bound, bits, sgn), st = step, k;
  wide lo = domain_min(bits, sgn), hi = domain_max(bits, sgn);
  bool ok;
  switch (pred) {
  case TWASM_TRIP_NE: ok = exits_ne(x0, b, st, bits, &k); break;
  case TWASM_TRIP_EQ: k = x0 == b && st != 0 ? 1 : 0; ok = x0 != b || st != 0; break;
  case TWASM_TRIP_ULT: case TWASM_TRIP_SLT: ok = exits_upward(x0, b, st, false, hi, &k); break;
  case TWASM_TRIP_ULE: case TWASM_TRIP_SLE: ok = exits_upward(x0, b, st, true, hi, &k); break;
  /* Downward counting is upward counting with every value negated. */
  case TWASM_TRIP_UGT: case TWASM_TRIP_SGT: ok = exits_upward(-x0, -b, -st, false, -lo, &k); break;
  case TWASM_TRIP_UGE: case TWASM_TRIP_SGE: ok = exits_upward(-x0, -b, -st, true, -lo, &k); break;
  default: return -1;
  }
  if (!ok || (k + 1) * scale > (wide)INT64_MAX) return -1;
  return (int64_t)((k + 1) * scale);
}
