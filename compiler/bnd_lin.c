/* bnd_lin.c: integer values of a loop nest as linear functions of its
 * iteration counters, computed (in i128) in the block before the nest.
 *
 * Why it is exact: every rule keeps `value == form (mod 2^width)`: wrapping
 * add, sub, mul, shl and truncation preserve congruence, an IV of loop l
 * is start + step * t[l] modulo its width, and a zext or sext is taken
 * through only under a run-time condition that the form stays within the
 * narrow type's range for every counter value of the box (then extension
 * changes nothing).  A caller that proves the form of a value lies in
 * [0, 2^64) for the whole box thus knows the value itself. */
#include "bnd.h"

static LLVMValueRef i128_const(bnd_nest *n, int64_t v) {
  return LLVMConstInt(n->i128, (unsigned long long)v, true);
}

static bool is_zero(LLVMValueRef v) {
  return !v || (LLVMIsAConstantInt(v) && LLVMConstIntGetSExtValue(v) == 0 &&
                LLVMConstIntGetZExtValue(v) == 0);
}

static LLVMValueRef add(bnd_nest *n, LLVMValueRef a, LLVMValueRef b) {
  if (is_zero(a)) return b;
  if (is_zero(b)) return a;
  return LLVMBuildAdd(n->b, a, b, "");
}

static LLVMValueRef mul(bnd_nest *n, LLVMValueRef a, LLVMValueRef b) {
  if (is_zero(a) || is_zero(b)) return NULL;
  return LLVMBuildMul(n->b, a, b, "");
}

static LLVMValueRef both(bnd_nest *n, LLVMValueRef a, LLVMValueRef b) {
  if (!a) return b;
  if (!b) return a;
  return LLVMBuildAnd(n->b, a, b, "");
}

static unsigned width_of(LLVMValueRef v) {
  LLVMTypeRef t = LLVMTypeOf(v);
  return LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(t) : 0;
}

/* A value from outside the nest: the constant form of itself (i32 values
 * read unsigned, as addresses are; any reading is congruent). */
static bnd_lin invariant(bnd_nest *n, LLVMValueRef v) {
  bnd_lin l = {0};
  l.alpha = width_of(v) == 32 ? LLVMBuildZExt(n->b, v, n->i128, "") : LLVMBuildSExt(n->b, v, n->i128, "");
  return l;
}

static bool has_beta(const bnd_lin *l, int nloops) {
  for (int k = 0; k < nloops; k++)
    if (!is_zero(l->beta[k])) return true;
  return false;
}

static bnd_lin combine(bnd_nest *n, const bnd_lin *a, const bnd_lin *b, bool subtract) {
  bnd_lin r = {.cond = both(n, a->cond, b->cond)};
  LLVMValueRef (*op)(LLVMBuilderRef, LLVMValueRef, LLVMValueRef, const char *) =
      subtract ? LLVMBuildSub : LLVMBuildAdd;
  r.alpha = op(n->b, a->alpha, b->alpha, "");
  for (int k = 0; k < n->nloops; k++) {
    if (is_zero(b->beta[k])) r.beta[k] = a->beta[k];
    else if (!subtract) r.beta[k] = add(n, a->beta[k], b->beta[k]);
    else r.beta[k] = LLVMBuildSub(n->b, a->beta[k] ? a->beta[k] : i128_const(n, 0), b->beta[k], "");
  }
  return r;
}

/* a * b where b has no counter terms. */
static bnd_lin scale(bnd_nest *n, const bnd_lin *a, const bnd_lin *b) {
  bnd_lin r = {.cond = both(n, a->cond, b->cond)};
  r.alpha = LLVMBuildMul(n->b, a->alpha, b->alpha, "");
  for (int k = 0; k < n->nloops; k++) r.beta[k] = mul(n, a->beta[k], b->alpha);
  return r;
}

static bool lin_rec(bnd_nest *n, LLVMValueRef v, bnd_lin *out, int depth);

/* The IV phi of a nest loop: start + step * t[l]. */
static bool iv_form(bnd_nest *n, LLVMValueRef v, bnd_lin *out, int depth, bool *is_iv) {
  *is_iv = false;
  for (int k = 0; k < n->nloops; k++) {
    const ir_loop *l = n->loops[k];
    for (int i = 0; i < l->nivs; i++) {
      const ir_iv *iv = &l->ivs[i];
      if (iv->phi != v) continue;
      *is_iv = true;
      if (!lin_rec(n, iv->start, out, depth + 1)) return false;
      LLVMValueRef step = i128_const(n, iv->step);
      if (iv->step_inv) {
        /* an invariant step must not change inside the nest */
        if (ir_loop_defines(n->root, iv->step_inv, n->cfg)) return false;
        step = invariant(n, iv->step_inv).alpha;
      }
      out->beta[k] = add(n, out->beta[k], step);
      return true;
    }
  }
  return true;
}

LLVMValueRef bnd_lin_in32(bnd_nest *n, LLVMValueRef lo, LLVMValueRef hi, bool is_signed) {
  int64_t min = is_signed ? INT32_MIN : 0, max = is_signed ? INT32_MAX : (int64_t)UINT32_MAX;
  return LLVMBuildAnd(n->b, LLVMBuildICmp(n->b, LLVMIntSGE, lo, i128_const(n, min), ""),
                      LLVMBuildICmp(n->b, LLVMIntSLE, hi, i128_const(n, max), ""), "");
}

/* zext or sext of an i32: the form, on condition that it stays within
 * the i32's reading for every counter value. */
static bool extension(bnd_nest *n, LLVMValueRef x, bool is_signed, bnd_lin *out, int depth) {
  /* one form per extended value and reading, however many zext
   * instructions of it there are (each access of an unrolled body has its
   * own): bnd_loop.c groups checks whose forms share their terms */
  const char *key = (const char *)x + 1 + is_signed;
  bnd_lin *memo = bnd_map_get(&n->memo, key);
  if (memo) {
    *out = *memo;
    return true;
  }
  if (width_of(x) != 32 || !lin_rec(n, x, out, depth + 1)) return false;
  LLVMValueRef lo, hi, in;
  bnd_lin_range(n, out, &lo, &hi);
  if (!is_signed && n->hi_tests) {
    /* its upper half kept apart: bnd_loop.c drops it where a check's own
     * end test implies it */
    LLVMValueRef hi_ok = LLVMBuildICmp(n->b, LLVMIntSLE, hi, i128_const(n, (int64_t)UINT32_MAX), "");
    if (LLVMIsAICmpInst(hi_ok)) bnd_map_put(&n->memo, (const char *)x + BND_HI_KEY, hi_ok);
    in = LLVMBuildAnd(n->b, LLVMBuildICmp(n->b, LLVMIntSGE, lo, i128_const(n, 0), ""), hi_ok, "");
  } else {
    in = bnd_lin_in32(n, lo, hi, is_signed);
  }
  out->cond = both(n, out->cond, in);
  bnd_lin *keep = tw_arena_alloc(n->memo.arena, sizeof *keep);
  *keep = *out;
  bnd_map_put(&n->memo, key, keep);
  return true;
}

/* Low bits of v known to be zero (shifts and multiplications by
 * constants, constants, sums of such). */
static unsigned zero_low_bits(LLVMValueRef v, int depth) {
  if (LLVMIsAConstantInt(v)) {
    uint64_t c = LLVMConstIntGetZExtValue(v);
    return c ? (unsigned)__builtin_ctzll(c) : 64;
  }
  if (!LLVMIsABinaryOperator(v) || depth > 8) return 0;
  LLVMValueRef x = LLVMGetOperand(v, 0), y = LLVMGetOperand(v, 1);
  unsigned zx, zy;
  switch (LLVMGetInstructionOpcode(v)) {
  case LLVMShl:
    if (!LLVMIsAConstantInt(y) || LLVMConstIntGetZExtValue(y) > 63) return 0;
    zx = zero_low_bits(x, depth + 1) + (unsigned)LLVMConstIntGetZExtValue(y);
    return zx < 64 ? zx : 64;
  case LLVMMul:
    zx = zero_low_bits(x, depth + 1) + zero_low_bits(y, depth + 1);
    return zx < 64 ? zx : 64;
  case LLVMAnd:
    zx = zero_low_bits(x, depth + 1), zy = zero_low_bits(y, depth + 1);
    return zx > zy ? zx : zy;
  case LLVMAdd: case LLVMSub: case LLVMOr: case LLVMXor:
    zx = zero_low_bits(x, depth + 1), zy = zero_low_bits(y, depth + 1);
    return zx < zy ? zx : zy;
  default: return 0;
  }
}

/* `or a, b` is `add a, b` where no bit is set in both: b's low k bits
 * are zero, and a stays within [0, 2^k) for every counter value (a
 * run-time condition; LLVM's `disjoint` flag says it outright). */
static bool or_as_add(bnd_nest *n, LLVMValueRef v, const bnd_lin *a, const bnd_lin *b, bnd_lin *out) {
  *out = combine(n, a, b, false);
  if (LLVMGetIsDisjoint(v)) return true;
  /* the operand with more known zero bits at the bottom leaves room */
  unsigned k0 = zero_low_bits(LLVMGetOperand(v, 0), 0), k1 = zero_low_bits(LLVMGetOperand(v, 1), 0);
  unsigned k = k0 > k1 ? k0 : k1;
  if (k == 0 || k > 62) return false;
  LLVMValueRef lo, hi;
  bnd_lin_range(n, k0 > k1 ? b : a, &lo, &hi);
  LLVMValueRef in = LLVMBuildAnd(n->b, LLVMBuildICmp(n->b, LLVMIntSGE, lo, i128_const(n, 0), ""),
                                 LLVMBuildICmp(n->b, LLVMIntSLT, hi, i128_const(n, INT64_C(1) << k), ""), "");
  out->cond = both(n, out->cond, in);
  return true;
}

static bool binary(bnd_nest *n, LLVMValueRef v, LLVMOpcode op, bnd_lin *out, int depth) {
  bnd_lin a, b;
  if (!lin_rec(n, LLVMGetOperand(v, 0), &a, depth + 1) || !lin_rec(n, LLVMGetOperand(v, 1), &b, depth + 1))
    return false;
  switch (op) {
  case LLVMAdd: *out = combine(n, &a, &b, false); return true;
  case LLVMSub: *out = combine(n, &a, &b, true); return true;
  case LLVMOr: return or_as_add(n, v, &a, &b, out);
  case LLVMMul:
    if (!has_beta(&b, n->nloops)) *out = scale(n, &a, &b);
    else if (!has_beta(&a, n->nloops)) *out = scale(n, &b, &a);
    else return false;
    return true;
  case LLVMShl: {
    /* modulo 2^width, a shift by s is a multiplication by 2^s */
    LLVMValueRef c = LLVMGetOperand(v, 1);
    if (!LLVMIsAConstantInt(c) || LLVMConstIntGetZExtValue(c) > 62) return false;
    bnd_lin k = {.alpha = i128_const(n, INT64_C(1) << LLVMConstIntGetZExtValue(c))};
    *out = scale(n, &a, &k);
    return true;
  }
  default: return false;
  }
}

static bool lin_rec(bnd_nest *n, LLVMValueRef v, bnd_lin *out, int depth) {
  unsigned w = width_of(v);
  if (depth > 48 || (w != 32 && w != 64)) return false;
  *out = (bnd_lin){0};
  if (LLVMIsAConstantInt(v)) {
    out->alpha = i128_const(n, LLVMConstIntGetSExtValue(v));
    return true;
  }
  if (!ir_loop_defines(n->root, v, n->cfg)) {
    /* a constant expression: InstCombine's scalar lane of a constant
     * vector start, extractelement(bitcast <2 x i64> .. to <4 x i32>) */
    if (LLVMIsAInstruction(v) || LLVMIsAArgument(v) || LLVMIsAConstantExpr(v)) {
      *out = invariant(n, v);
      return true;
    }
    return false;
  }
  bnd_lin *memo = bnd_map_get(&n->memo, v);
  if (memo) {
    *out = *memo;
    return true;
  }
  bool is_iv, ok;
  if (!iv_form(n, v, out, depth, &is_iv)) return false;
  if (is_iv) {
    ok = true;
  } else if (!LLVMIsAInstruction(v)) {
    ok = false;
  } else {
    LLVMOpcode op = LLVMGetInstructionOpcode(v);
    if (op == LLVMTrunc) ok = width_of(LLVMGetOperand(v, 0)) == 64 && lin_rec(n, LLVMGetOperand(v, 0), out, depth + 1);
    else if (op == LLVMZExt || op == LLVMSExt) ok = extension(n, LLVMGetOperand(v, 0), op == LLVMSExt, out, depth);
    else if (LLVMIsABinaryOperator(v)) ok = binary(n, v, op, out, depth);
    else ok = false;
  }
  if (!ok) return false;
  bnd_lin *keep = tw_arena_alloc(n->memo.arena, sizeof *keep);
  *keep = *out;
  bnd_map_put(&n->memo, v, keep);
  return true;
}

bool bnd_lin_of(bnd_nest *n, LLVMValueRef v, bnd_lin *out) { return lin_rec(n, v, out, 0); }

bool bnd_lin_zext(bnd_nest *n, LLVMValueRef v, bnd_lin *out) { return extension(n, v, false, out, 0); }

void bnd_lin_range(bnd_nest *n, const bnd_lin *l, LLVMValueRef *lo, LLVMValueRef *hi) {
  LLVMValueRef zero = i128_const(n, 0);
  *lo = *hi = l->alpha;
  for (int k = 0; k < n->nloops; k++) {
    LLVMValueRef beta = l->beta[k];
    if (is_zero(beta)) continue;
    LLVMValueRef span = LLVMBuildMul(n->b, beta, n->last[k], "");
    if (LLVMIsAConstantInt(beta)) {
      bool up = LLVMConstIntGetSExtValue(beta) > 0;
      if (up) *hi = add(n, *hi, span);
      else *lo = add(n, *lo, span);
      continue;
    }
    LLVMValueRef up = LLVMBuildICmp(n->b, LLVMIntSGT, beta, zero, "");
    *hi = add(n, *hi, LLVMBuildSelect(n->b, up, span, zero, ""));
    *lo = add(n, *lo, LLVMBuildSelect(n->b, up, zero, span, ""));
  }
}
