/* kn_trip.c: trip count of a counted loop from start, bound, step and test. */
#include "kn.h"

typedef __int128 wide;

static bool pred_signed(LLVMIntPredicate p) {
  return p == LLVMIntSLT || p == LLVMIntSLE || p == LLVMIntSGT || p == LLVMIntSGE;
}

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

static wide ceil_div(wide num, wide den) { return (num + den - 1) / den; }

/* Stay while x != bound: the first exact hit without wrapping. */
static bool exits_ne(wide x0, wide bound, wide step, unsigned bits, wide *k) {
  wide modulus = (wide)1 << bits;
  if (step == 0) return x0 == bound ? (*k = 0, true) : false;
  wide dist = step > 0 ? bound - x0 : x0 - bound;
  dist = ((dist % modulus) + modulus) % modulus;
  wide s = step > 0 ? step : -step;
  if (dist % s != 0) return false;
  *k = dist / s;
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

bool kn_trip_eval(const kn_trip *t, int64_t start, int64_t bound, uint64_t *count) {
  if (t->bits == 0 || t->bits > 64) return false;
  bool sgn = pred_signed(t->pred);
  wide x0 = in_domain(start + (t->cmp_next ? t->step : 0), t->bits, sgn);
  wide b = in_domain(bound, t->bits, sgn), step = t->step, k;
  wide lo = domain_min(t->bits, sgn), hi = domain_max(t->bits, sgn);
  bool ok;
  switch (t->pred) {
  case LLVMIntNE: ok = exits_ne(x0, b, step, t->bits, &k); break;
  case LLVMIntEQ: k = x0 == b && step != 0 ? 1 : 0; ok = x0 != b || step != 0; break;
  case LLVMIntULT: case LLVMIntSLT: ok = exits_upward(x0, b, step, false, hi, &k); break;
  case LLVMIntULE: case LLVMIntSLE: ok = exits_upward(x0, b, step, true, hi, &k); break;
  /* Downward counting is upward counting with every value negated. */
  case LLVMIntUGT: case LLVMIntSGT: ok = exits_upward(-x0, -b, -step, false, -lo, &k); break;
  case LLVMIntUGE: case LLVMIntSGE: ok = exits_upward(-x0, -b, -step, true, -lo, &k); break;
  default: return false;
  }
  if (!ok || k + 1 > (wide)UINT64_MAX) return false;
  *count = (uint64_t)(k + 1);
  return true;
}
