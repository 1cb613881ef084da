/* bnd_trip.c: how far a nest's loop can count, computed inline in the
 * block before the nest: an upper bound on t (header runs less one) over
 * every entry of the loop, whose start and bound may move with the outer
 * loops' counters (a triangular nest).  The same reading of the exit test
 * as twasm_rt_trip_count (runtime/rt_trip.c), without its call and its
 * 128-bit division: constant folding removes all of it where the values
 * are constants. */
#include "bnd.h"

#include <stdint.h>

static LLVMValueRef c128(bnd_nest *n, __int128 v) {
  uint64_t words[2] = {(uint64_t)v, (uint64_t)(v >> 64)};
  return LLVMConstIntOfArbitraryPrecision(n->i128, 2, words);
}

static LLVMValueRef smax(bnd_nest *n, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(n->b, LLVMBuildICmp(n->b, LLVMIntSGT, a, b, ""), a, b, "");
}

static LLVMValueRef sle(bnd_nest *n, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildICmp(n->b, LLVMIntSLE, a, b, "");
}

static LLVMValueRef both(bnd_nest *n, LLVMValueRef a, LLVMValueRef b) {
  if (!a) return b;
  if (!b) return a;
  return LLVMBuildAnd(n->b, a, b, "");
}

static bool pow2(int64_t s) { return s > 0 && (s & (s - 1)) == 0; }

/* ceil(num / s) for num >= 0, s > 0 constant: a shift, or a 64-bit
 * division (by a constant: a multiplication) on condition num < 2^62. */
static LLVMValueRef ceil_div(bnd_nest *n, LLVMValueRef num, int64_t s, LLVMValueRef *cond) {
  LLVMValueRef up = LLVMBuildAdd(n->b, num, c128(n, s - 1), "");
  if (pow2(s)) return LLVMBuildLShr(n->b, up, c128(n, __builtin_ctzll((unsigned long long)s)), "");
  *cond = both(n, *cond, LLVMBuildICmp(n->b, LLVMIntSLT, num, c128(n, (__int128)1 << 62), ""));
  LLVMTypeRef i64 = LLVMInt64TypeInContext(LLVMGetTypeContext(n->i128));
  LLVMValueRef q = LLVMBuildUDiv(n->b, LLVMBuildTrunc(n->b, up, i64, ""), LLVMConstInt(i64, (uint64_t)s, false), "");
  return LLVMBuildZExt(n->b, q, n->i128, "");
}

static bool is_signed_pred(LLVMIntPredicate p) {
  return p == LLVMIntSLT || p == LLVMIntSLE || p == LLVMIntSGT || p == LLVMIntSGE;
}

typedef struct {
  LLVMValueRef x_lo, x_hi, b_lo, b_hi; /* first compared value, bound */
  __int128 dlo, dhi;                    /* the compare's domain */
  int64_t step;
} trip_box;

/* Counting up while x < bound (<= when inclusive): at most
 * ceil((bound_hi + inclusive - x_lo) / step) steps, and the value that
 * fails the test never wraps when bound_hi + inclusive + step - 1 fits. */
static LLVMValueRef upward(bnd_nest *n, const trip_box *t, bool inclusive, LLVMValueRef *cond) {
  LLVMValueRef limit = LLVMBuildAdd(n->b, t->b_hi, c128(n, inclusive), "");
  *cond = both(n, *cond, sle(n, LLVMBuildAdd(n->b, limit, c128(n, t->step - 1), ""), c128(n, t->dhi)));
  LLVMValueRef num = smax(n, LLVMBuildSub(n->b, limit, t->x_lo, ""), c128(n, 0));
  return ceil_div(n, num, t->step, cond);
}

/* Counting down is counting up with every value negated. */
static LLVMValueRef downward(bnd_nest *n, const trip_box *t, bool inclusive, LLVMValueRef *cond) {
  trip_box neg = {.x_lo = LLVMBuildNeg(n->b, t->x_hi, ""), .b_hi = LLVMBuildNeg(n->b, t->b_lo, ""),
                  .dhi = -t->dlo, .step = -t->step};
  return upward(n, &neg, inclusive, cond);
}

/* Stay while x != bound: an exact hit.  With a step of one the bound must
 * lie ahead of every start (no wrap); with a larger step the distance
 * must not move with the outer counters, and divide. */
static LLVMValueRef not_equal(bnd_nest *n, const trip_box *t, const bnd_lin *dist, LLVMValueRef *cond) {
  if (t->step == 1 || t->step == -1) {
    bool up = t->step == 1;
    *cond = both(n, *cond, up ? sle(n, t->x_hi, t->b_lo) : sle(n, t->b_hi, t->x_lo));
    return up ? LLVMBuildSub(n->b, t->b_hi, t->x_lo, "") : LLVMBuildSub(n->b, t->x_hi, t->b_lo, "");
  }
  for (int k = 0; k < BND_MAX_LOOPS; k++)
    if (dist->beta[k] && !(LLVMIsAConstantInt(dist->beta[k]) && LLVMConstIntGetSExtValue(dist->beta[k]) == 0))
      return NULL;
  int64_t s = t->step > 0 ? t->step : -t->step;
  LLVMValueRef d = t->step > 0 ? dist->alpha : LLVMBuildNeg(n->b, dist->alpha, "");
  *cond = both(n, *cond, sle(n, c128(n, 0), d));
  LLVMValueRef q = ceil_div(n, d, s, cond);
  LLVMValueRef exact = LLVMBuildICmp(n->b, LLVMIntEQ, LLVMBuildMul(n->b, q, c128(n, s), ""), d, "");
  *cond = both(n, *cond, exact);
  return q;
}

/* Both forms must read the same in the compare's domain as in full. */
static LLVMValueRef within(bnd_nest *n, LLVMValueRef lo, LLVMValueRef hi, const trip_box *t) {
  return LLVMBuildAnd(n->b, sle(n, c128(n, t->dlo), lo), sle(n, hi, c128(n, t->dhi)), "");
}

static unsigned width(LLVMValueRef v) { return LLVMGetIntTypeWidth(LLVMTypeOf(v)); }

bool bnd_trip_last(bnd_nest *n, const ir_loop *l, LLVMValueRef *last, LLVMValueRef *cond) {
  const ir_trip *t = &l->trip;
  *cond = NULL;
  if (t->kind == IR_TRIP_CONST) {
    *last = c128(n, (__int128)t->count - 1);
    return t->count > 0;
  }
  if (t->kind != IR_TRIP_SYMBOLIC || !t->start || !t->bound || t->step == 0 || t->bits > 64 ||
      width(t->start) != t->bits || width(t->bound) != t->bits)
    return false;
  bnd_lin start, bound;
  if (!bnd_lin_of(n, t->start, &start) || !bnd_lin_of(n, t->bound, &bound)) return false;
  bool sgn = is_signed_pred(t->pred);
  trip_box box = {.step = t->step, .dlo = sgn ? -((__int128)1 << (t->bits - 1)) : 0,
                  .dhi = sgn ? ((__int128)1 << (t->bits - 1)) - 1 : ((__int128)1 << t->bits) - 1};
  /* the first compared value: start (+ step when the test reads the next value) */
  start.alpha = LLVMBuildAdd(n->b, start.alpha, c128(n, (__int128)t->start_add + (t->cmp_next ? t->step : 0)), "");
  bnd_lin_range(n, &start, &box.x_lo, &box.x_hi);
  bnd_lin_range(n, &bound, &box.b_lo, &box.b_hi);
  *cond = both(n, both(n, start.cond, bound.cond),
               LLVMBuildAnd(n->b, within(n, box.x_lo, box.x_hi, &box), within(n, box.b_lo, box.b_hi, &box), ""));
  switch (t->pred) {
  case LLVMIntULT: case LLVMIntSLT: *last = t->step > 0 ? upward(n, &box, false, cond) : NULL; break;
  case LLVMIntULE: case LLVMIntSLE: *last = t->step > 0 ? upward(n, &box, true, cond) : NULL; break;
  case LLVMIntUGT: case LLVMIntSGT: *last = t->step < 0 ? downward(n, &box, false, cond) : NULL; break;
  case LLVMIntUGE: case LLVMIntSGE: *last = t->step < 0 ? downward(n, &box, true, cond) : NULL; break;
  case LLVMIntEQ: *last = c128(n, 1); break;
  case LLVMIntNE: {
    bnd_lin dist = bound;
    dist.alpha = LLVMBuildSub(n->b, bound.alpha, start.alpha, "");
    for (int k = 0; k < BND_MAX_LOOPS; k++)
      if (start.beta[k]) dist.beta[k] = LLVMBuildSub(n->b, bound.beta[k] ? bound.beta[k] : c128(n, 0), start.beta[k], "");
    *last = not_equal(n, &box, &dist, cond);
    break;
  }
  default: *last = NULL;
  }
  return *last != NULL;
}
