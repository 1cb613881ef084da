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

/* The conditional branch every entry of l passes (the one block entering
 * l reached from it through blocks of one predecessor each, all in l's
 * parent's body, bounds checks passed on the way): its condition and
 * whether entries take the true edge. */
static LLVMValueRef guard_of(const bnd_nest *n, const ir_loop *l, bool *taken) {
  const ir_cfg *cfg = n->cfg;
  const ir_loop *up = l->parent;
  int b = l->preheader;
  for (int steps = 0; b >= 0 && steps < 32; steps++) {
    if (!up->in_body[b] || cfg->blocks[b].npreds != 1) return NULL;
    int p = cfg->blocks[b].preds[0];
    if (!up->in_body[p]) return NULL;
    LLVMValueRef term = LLVMGetBasicBlockTerminator(cfg->blocks[p].bb);
    bnd_check c;
    if (bnd_check_match(term, &c)) {
      /* a bounds check on the way: passed, not the guard */
      if (LLVMGetSuccessor(term, c.trap_succ) == cfg->blocks[b].bb) return NULL;
      b = p;
      continue;
    }
    if (LLVMIsABranchInst(term) && LLVMIsConditional(term)) {
      LLVMBasicBlockRef t = LLVMGetSuccessor(term, 0), f = LLVMGetSuccessor(term, 1);
      if (t == f) return NULL;
      *taken = t == cfg->blocks[b].bb;
      return LLVMGetCondition(term);
    }
    if (LLVMGetNumSuccessors(term) != 1) return NULL;
    b = p;
  }
  return NULL;
}

/* Whether v is a counter of loop p, maybe cast, offset or scaled by
 * constants: the side of a guard worth reading (forms are only built for
 * such guards, whose i128 code would otherwise stay in the check block
 * until LLVM cleans it, and change what it makes of the rest). */
static bool counter_of(const ir_loop *p, LLVMValueRef v) {
  for (int depth = 0; depth < 4 && LLVMIsAInstruction(v); depth++) {
    if (LLVMIsAPHINode(v)) {
      for (int i = 0; i < p->nivs; i++)
        if (p->ivs[i].phi == v) return true;
      return false;
    }
    if (LLVMIsACastInst(v)) {
      v = LLVMGetOperand(v, 0);
      continue;
    }
    if (!LLVMIsABinaryOperator(v) || !LLVMIsAConstantInt(LLVMGetOperand(v, 1))) return false;
    v = LLVMGetOperand(v, 0);
  }
  return false;
}

/* The only counter term of l: its loop's index, its constant factor. */
static int one_term(const bnd_nest *n, const bnd_lin *l, int64_t *beta) {
  int k = -1;
  for (int i = 0; i < n->nloops; i++) {
    LLVMValueRef b = l->beta[i];
    if (!b || (LLVMIsAConstantInt(b) && LLVMConstIntGetSExtValue(b) == 0)) continue;
    if (k >= 0 || !LLVMIsAConstantInt(b)) return -2;
    k = i;
    *beta = LLVMConstIntGetSExtValue(b);
  }
  return k;
}

/* A cap on the counter of l's parent at every entry of l, from the guard
 * before l (nbody's `for (j = i + 1; j < 5; j++)` under clang's `if (i <=
 * 3)`: over the whole box, i = 4 leaves the inner loop no trip bound, so
 * the nest had none):  the guard reads form(x) = alpha + beta * t[k] <= B
 * (or <, or >= with beta < 0), B without counter terms, both forms within
 * the compare's domain (a condition in *cond), and gives t[k] <=
 * floor((B - alpha) / beta) for a power-of-two beta.  -1: no such guard. */
static int guard_cap(bnd_nest *n, const ir_loop *l, LLVMValueRef *cap, LLVMValueRef *cond) {
  if (!l->parent || l->preheader < 0) return -1;
  bool taken;
  LLVMValueRef g = guard_of(n, l, &taken);
  if (!g || !LLVMIsAICmpInst(g)) return -1;
  LLVMIntPredicate p = LLVMGetICmpPredicate(g);
  if (!taken) p = ir_inverse_pred(p);
  LLVMValueRef x = LLVMGetOperand(g, 0), y = LLVMGetOperand(g, 1);
  unsigned bits = LLVMGetTypeKind(LLVMTypeOf(x)) == LLVMIntegerTypeKind ? width(x) : 0;
  if (bits != 32 && bits != 64) return -1;
  bool fixed_x = LLVMIsAConstantInt(x) || !ir_loop_defines(n->root, x, n->cfg);
  bool fixed_y = LLVMIsAConstantInt(y) || !ir_loop_defines(n->root, y, n->cfg);
  if (!(counter_of(l->parent, x) && fixed_y) && !(counter_of(l->parent, y) && fixed_x)) return -1;
  bnd_lin fx, fy;
  if (!bnd_lin_of(n, x, &fx) || !bnd_lin_of(n, y, &fy)) return -1;
  int64_t beta = 0, unused;
  int k = one_term(n, &fx, &beta);
  if (k < 0 || one_term(n, &fy, &unused) != -1) {
    k = one_term(n, &fy, &beta);
    if (k < 0 || one_term(n, &fx, &unused) != -1) return -1;
    bnd_lin t = fx;
    fx = fy;
    fy = t;
    p = ir_swapped_pred(p);
  }
  if (n->loops[k] != l->parent) return -1;
  /* x <= y (or <) with beta > 0, or x >= y (or >) with beta < 0, negated */
  bool le = p == LLVMIntULE || p == LLVMIntSLE || p == LLVMIntULT || p == LLVMIntSLT;
  bool ge = p == LLVMIntUGE || p == LLVMIntSGE || p == LLVMIntUGT || p == LLVMIntSGT;
  bool strict = p == LLVMIntULT || p == LLVMIntSLT || p == LLVMIntUGT || p == LLVMIntSGT;
  if (!((le && beta > 0) || (ge && beta < 0))) return -1;
  int64_t s = beta > 0 ? beta : -beta;
  if (!pow2(s)) return -1;
  bool sgn = is_signed_pred(p);
  trip_box dom = {.dlo = sgn ? -((__int128)1 << (bits - 1)) : 0,
                  .dhi = sgn ? ((__int128)1 << (bits - 1)) - 1 : ((__int128)1 << bits) - 1};
  LLVMValueRef xlo, xhi, ylo, yhi;
  bnd_lin_range(n, &fx, &xlo, &xhi);
  bnd_lin_range(n, &fy, &ylo, &yhi);
  *cond = both(n, both(n, fx.cond, fy.cond), LLVMBuildAnd(n->b, within(n, xlo, xhi, &dom), within(n, ylo, yhi, &dom), ""));
  /* beta * t <= y - alpha (- 1 when strict); negated for >= */
  LLVMValueRef room = LLVMBuildSub(n->b, fy.alpha, fx.alpha, "");
  if (beta < 0) room = LLVMBuildNeg(n->b, room, "");
  if (strict) room = LLVMBuildSub(n->b, room, c128(n, 1), "");
  *cap = LLVMBuildAShr(n->b, room, c128(n, __builtin_ctzll((unsigned long long)s)), "");
  return k;
}

static LLVMValueRef smin(bnd_nest *n, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(n->b, LLVMBuildICmp(n->b, LLVMIntSLT, a, b, ""), a, b, "");
}

static bool trip_last(bnd_nest *n, const ir_loop *l, LLVMValueRef *last, LLVMValueRef *cond);

static int index_of(const bnd_nest *n, const ir_loop *l) {
  for (int k = 0; k < n->nloops; k++)
    if (n->loops[k] == l) return k;
  return -1;
}

static bool is_zero(LLVMValueRef v) { return !v || (LLVMIsAConstantInt(v) && LLVMConstIntGetSExtValue(v) == 0); }

/* Loop m of the nest encloses loop k. */
static bool encloses(const bnd_nest *n, int m, int k) {
  for (const ir_loop *p = n->loops[k]->parent; p; p = p->parent)
    if (p == n->loops[m]) return true;
  return false;
}

/* Under a guard, l is entered only where the parent's counter is at most
 * the guard's cap: its bound is computed over that smaller box, with
 * forms of its own (a form's condition holds over the box it was built
 * for, so none built here is kept for the rest of the nest).  A bound
 * that holds at every entry is all bnd_lin_range needs of it. */
bool bnd_trip_last(bnd_nest *n, const ir_loop *l, LLVMValueRef *last, LLVMValueRef *cond) {
  LLVMValueRef cap, gcond = NULL;
  int k = l->trip.kind == IR_TRIP_SYMBOLIC ? guard_cap(n, l, &cap, &gcond) : -1;
  if (k < 0) return trip_last(n, l, last, cond);
  LLVMValueRef full = n->last[k];
  bnd_map memo = n->memo;
  n->memo = (bnd_map){.arena = memo.arena};
  n->last[k] = smax(n, smin(n, full, cap), c128(n, 0));
  bool ok = trip_last(n, l, last, cond);
  n->last[k] = full;
  n->memo = memo;
  if (!ok) return trip_last(n, l, last, cond);
  *cond = both(n, *cond, gcond);
  /* the reach holds where the guard lets the loop in; over the whole box
   * of the parent it may pass the capped bound */
  int self = index_of(n, l);
  if (self >= 0) n->reach_loose[self] = true;
  return true;
}

/* Loop k's reach (bnd.h): the room its exit test leaves at one entry,
 * up - down + plus (bound - first compared value (+ 1 when inclusive)
 * counting up, the other way round counting down), kept where it moves
 * with an enclosing counter (elsewhere the box's trip bound is as good).
 * Why it bounds t[k]: trip_last's bound is ceil(max(0, bound_hi + incl -
 * x_lo) / step) over every entry; at one entry the same reading with that
 * entry's bound and first compared value gives ceil(max(0, reach) /
 * step), and the forms read them exactly where trip_last's condition
 * holds (which the check block tests). */
static void keep_reach(bnd_nest *n, int k, const bnd_lin *up, const bnd_lin *down, int64_t plus, int64_t step) {
  if (k < 0) return;
  bnd_lin r = {.alpha = LLVMBuildAdd(n->b, LLVMBuildSub(n->b, up->alpha, down->alpha, ""), c128(n, plus), "")};
  bool moves = false;
  for (int m = 0; m < n->nloops; m++) {
    if (is_zero(up->beta[m]) && is_zero(down->beta[m])) continue;
    r.beta[m] = LLVMBuildSub(n->b, up->beta[m] ? up->beta[m] : c128(n, 0), down->beta[m] ? down->beta[m] : c128(n, 0), "");
    if (is_zero(r.beta[m])) {
      r.beta[m] = NULL;
      continue;
    }
    if (!encloses(n, m, k)) return;
    moves = true;
  }
  if (!moves) return;
  n->reach[k] = r;
  n->reach_step[k] = step > 0 ? step : -step;
  /* with a step of one and the box's bound taken over the same box (no
   * guard's cap, bnd_trip_last), ceil(reach / 1) <= last[k] everywhere:
   * the box's range needs no compare */
  n->reach_loose[k] = n->reach_step[k] != 1;
}

static bool trip_last(bnd_nest *n, const ir_loop *l, LLVMValueRef *last, LLVMValueRef *cond) {
  const ir_trip *t = &l->trip;
  *cond = NULL;
  int self = index_of(n, l);
  if (self >= 0) n->reach_step[self] = 0;
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
  if (!*last) return false;
  bool incl = t->pred == LLVMIntULE || t->pred == LLVMIntSLE || t->pred == LLVMIntUGE || t->pred == LLVMIntSGE;
  bool up = t->pred == LLVMIntULT || t->pred == LLVMIntSLT || t->pred == LLVMIntULE || t->pred == LLVMIntSLE;
  bool down = t->pred == LLVMIntUGT || t->pred == LLVMIntSGT || t->pred == LLVMIntUGE || t->pred == LLVMIntSGE;
  /* x != bound with a step of one: an exact hit, bound - x0 (or x0 -
   * bound) steps, at most */
  if (t->pred == LLVMIntNE && (t->step == 1 || t->step == -1)) up = t->step == 1, down = t->step == -1;
  if (up) keep_reach(n, self, &bound, &start, incl, t->step);
  else if (down) keep_reach(n, self, &start, &bound, incl, t->step);
  return true;
}

static LLVMValueRef mul_c(bnd_nest *n, LLVMValueRef v, int64_t c) {
  return LLVMBuildMul(n->b, v, c128(n, c), "");
}

/* bnd_trip_range below loop index `below` (terms of loops at or past it
 * already settled), at most three reaches deep (eight ranges). */
static void range_below(bnd_nest *n, const bnd_lin *l, int below, int depth, LLVMValueRef *lo, LLVMValueRef *hi) {
  for (int k = below - 1; k >= 0 && depth < 3; k--) {
    LLVMValueRef beta = l->beta[k];
    int64_t s = n->reach_step[k];
    if (!s || is_zero(beta) || !LLVMIsAConstantInt(beta)) continue;
    int64_t b = LLVMConstIntGetSExtValue(beta);
    if (b % s != 0) continue;
    /* form = rest + b t[k], t[k] in [0, T], T = max(0, ceil(reach / s))
     * at one entry of loop k, rest's outer counters and reach fixed there
     * (rest's inner ones range over their box, which reach does not
     * read): for b > 0 the form lies between rest (t[k] = 0) and rest +
     * b T <= far = rest + (b / s) (reach + s - 1) (as s T <= reach + s -
     * 1 where reach > 0, and T = 0 elsewhere), so over every entry
     * between lo(rest) and max(hi(rest), hi(far)); b < 0 the other way
     * round */
    bnd_lin rest = *l, far = *l;
    rest.beta[k] = far.beta[k] = NULL;
    const bnd_lin *r = &n->reach[k];
    int64_t q = b / s;
    far.alpha = LLVMBuildAdd(n->b, l->alpha, mul_c(n, LLVMBuildAdd(n->b, r->alpha, c128(n, s - 1), ""), q), "");
    for (int m = 0; m < n->nloops; m++)
      if (!is_zero(r->beta[m]))
        far.beta[m] = LLVMBuildAdd(n->b, l->beta[m] ? l->beta[m] : c128(n, 0), mul_c(n, r->beta[m], q), "");
    LLVMValueRef lo0, hi0, lo1, hi1;
    range_below(n, &rest, k, depth + 1, &lo0, &hi0);
    range_below(n, &far, k, depth + 1, &lo1, &hi1);
    if (b > 0) *lo = lo0, *hi = smax(n, hi0, hi1);
    else *hi = hi0, *lo = smin(n, lo0, lo1);
    if (!n->reach_loose[k]) return;
    /* the box's end is a bound too, maybe the nearer one */
    LLVMValueRef box_lo, box_hi;
    bnd_lin_range(n, l, &box_lo, &box_hi);
    if (b > 0) *hi = smin(n, *hi, box_hi);
    else *lo = smax(n, *lo, box_lo);
    return;
  }
  bnd_lin_range(n, l, lo, hi);
}

void bnd_trip_range(bnd_nest *n, const bnd_lin *l, LLVMValueRef *lo, LLVMValueRef *hi) {
  range_below(n, l, n->nloops, 0, lo, hi);
}
