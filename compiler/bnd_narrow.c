/* bnd_narrow.c: a versioned nest's check block (bnd_loop.c) computes in
 * i128 so that no sum of counters, starts and steps can wrap; at every
 * entry of the nest that costs two instructions per operation and more
 * per compare.  Where every i128 value of the block provably lies within
 * [-2^62, 2^62] (each one's interval from its operands': zero-extended
 * i32 values, the memory size by its !range, constants), the whole block
 * is rewritten in i64: no operation wraps in either width, so each i64
 * value is the i128 one and every compare reads the same.  An i64 value
 * from outside the block (a loop-invariant access's end, which bnd_lin.c
 * sign-extends) is in reach when its own interval is (range64: zero
 * extensions, constants, !range loads and sums of them).  All or
 * nothing: one value out of reach (an i64 of unknown interval, an
 * operation not listed here) leaves the block as it was.
 *
 * One exception, proved where it is taken: a right shift of a value that
 * may be negative (bnd_trip.c's `(n + step - 1) >> k` of a count n =
 * end - start, which the test itself requires to be >= 0) shifts
 * max(value, 0) in i64.  That is exact wherever the value is >= 0; the
 * block is rewritten only when every value computed from such a shift
 * feeds nothing but the test's `and`s and the test has an exact conjunct
 * `x >= 0` with value = x + k, k >= 0: where the value is negative both
 * tests are false, elsewhere every value is exact (clamps_hold). */
#include "bnd.h"

#include <string.h>

typedef __int128 i128;

#define LIMIT ((i128)1 << 62)

typedef struct {
  i128 lo, hi;
  LLVMValueRef v64;
  bool clamped;  /* computed from a clamped shift: exact only if its operand >= 0 */
} nw_val;

/* How many shifts of possibly negative values one block may clamp. */
#define NW_MAX_CLAMPS 8

typedef struct {
  LLVMModuleRef mod;
  LLVMContextRef ctx;
  LLVMTypeRef i64, i128t;
  LLVMBuilderRef b;
  bnd_map map;   /* i128 instruction -> nw_val */
  unsigned md_range;
  LLVMValueRef clamps[NW_MAX_CLAMPS]; /* i128 operands clamped at 0 */
  unsigned nclamps;
  LLVMBasicBlockRef bb;
} nw_ctx;

/* Whether v (of the block) is computed from a clamped value: an i128
 * value so marked, or anything computed from one in the block. */
static bool tainted(nw_ctx *c, LLVMValueRef v, int depth) {
  if (!c->nclamps || !LLVMIsAInstruction(v) || LLVMGetInstructionParent(v) != c->bb || LLVMIsAPHINode(v)) return false;
  nw_val *m = bnd_map_get(&c->map, v);
  if (m) return m->clamped;
  if (depth > 32) return true;
  for (int k = 0; k < LLVMGetNumOperands(v); k++)
    if (tainted(c, LLVMGetOperand(v, k), depth + 1)) return true;
  return false;
}

static bool tainted_bool(nw_ctx *c, LLVMValueRef v) { return tainted(c, v, 0); }

static bool is_i128(LLVMTypeRef t) {
  return LLVMGetTypeKind(t) == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == 128;
}

static unsigned width(LLVMValueRef v) {
  LLVMTypeRef t = LLVMTypeOf(v);
  return LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(t) : 0;
}

static bool fits(i128 lo, i128 hi) { return lo >= -LIMIT && hi <= LIMIT && lo <= hi; }

/* An i128 operand: its interval and i64 value; false when unknown. */
static bool operand(nw_ctx *c, LLVMValueRef v, nw_val *out) {
  if (LLVMIsAConstantInt(v)) {
    long long s = LLVMConstIntGetSExtValue(v);
    /* constants are uniqued: v fits in 64 bits iff it is its own sext */
    if (LLVMConstInt(c->i128t, (unsigned long long)s, true) != v) return false;
    out->lo = out->hi = s;
    if (!fits(out->lo, out->hi)) return false;
    out->v64 = LLVMConstInt(c->i64, (unsigned long long)s, true);
    return true;
  }
  nw_val *m = bnd_map_get(&c->map, v);
  if (!m) return false;
  *out = *m;
  return true;
}

/* The upper bound of an i64 load's !range (lo..hi exclusive), or -1. */
static i128 range_max(nw_ctx *c, LLVMValueRef v) {
  if (!LLVMIsALoadInst(v)) return -1;
  LLVMValueRef md = LLVMGetMetadata(v, c->md_range);
  if (!md || LLVMGetMDNodeNumOperands(md) != 2) return -1;
  LLVMValueRef ops[2];
  LLVMGetMDNodeOperands(md, ops);
  if (!ops[0] || !ops[1] || !LLVMIsAConstantInt(ops[0]) || !LLVMIsAConstantInt(ops[1])) return -1;
  long long lo = LLVMConstIntGetSExtValue(ops[0]), hi = LLVMConstIntGetSExtValue(ops[1]);
  if (lo < 0 || hi <= lo) return -1; /* a wrapped range */
  return (i128)hi - 1;
}

static i128 min4(i128 a, i128 b, i128 c, i128 d) {
  i128 m = a < b ? a : b;
  m = m < c ? m : c;
  return m < d ? m : d;
}
static i128 max4(i128 a, i128 b, i128 c, i128 d) {
  i128 m = a > b ? a : b;
  m = m > c ? m : c;
  return m > d ? m : d;
}

/* The interval of an i64 value from outside the block's i128 arithmetic
 * (bnd_lin.c reads such a value, e.g. a loop-invariant access's `ea`
 * `zext x + 664`, through a sign extension): a constant, a zero extension
 * of a narrower value, a load with a !range, and sums, differences,
 * products and left shifts of those whose result stays within
 * [-2^62, 2^62], where the i64 operation cannot have wrapped; false when
 * unknown. */
static bool range64(nw_ctx *c, LLVMValueRef v, i128 *lo, i128 *hi, int depth) {
  if (width(v) != 64 || depth > 8) return false;
  if (LLVMIsAConstantInt(v)) {
    *lo = *hi = (long long)LLVMConstIntGetSExtValue(v);
    return fits(*lo, *hi);
  }
  if (range_max(c, v) >= 0) {
    *lo = 0, *hi = range_max(c, v);
    return fits(*lo, *hi);
  }
  if (!LLVMIsAInstruction(v)) return false;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  if (op == LLVMZExt) {
    unsigned w = width(LLVMGetOperand(v, 0));
    if (w == 0 || w > 32) return false;
    *lo = 0, *hi = ((i128)1 << w) - 1;
    return true;
  }
  if (op != LLVMAdd && op != LLVMSub && op != LLVMMul && op != LLVMShl) return false;
  i128 alo, ahi, blo, bhi;
  if (!range64(c, LLVMGetOperand(v, 0), &alo, &ahi, depth + 1) ||
      !range64(c, LLVMGetOperand(v, 1), &blo, &bhi, depth + 1))
    return false;
  if (op == LLVMAdd) *lo = alo + blo, *hi = ahi + bhi;
  if (op == LLVMSub) *lo = alo - bhi, *hi = ahi - blo;
  if (op == LLVMMul) {
    *lo = min4(alo * blo, alo * bhi, ahi * blo, ahi * bhi);
    *hi = max4(alo * blo, alo * bhi, ahi * blo, ahi * bhi);
  }
  if (op == LLVMShl) {
    if (blo != bhi || blo < 0 || blo > 62) return false;
    *lo = alo * ((i128)1 << (int)blo), *hi = ahi * ((i128)1 << (int)blo);
  }
  return fits(*lo, *hi);
}

/* Whether select i is the larger of its two values (1: bnd_trip.c's
 * smax, `select (x > y), x, y` or the like, a signed compare of exactly
 * those two values), the smaller (-1), or neither (0): its interval is
 * then [max of the los, max of the his] (or the mins), not the union
 * (trip_last's `max(bound - start, 0)`, shifted next, would otherwise
 * reach below zero and need a clamp). */
static int min_max(LLVMValueRef i) {
  LLVMValueRef cond = LLVMGetOperand(i, 0), x = LLVMGetOperand(i, 1), y = LLVMGetOperand(i, 2);
  if (!LLVMIsAICmpInst(cond)) return 0;
  LLVMIntPredicate p = LLVMGetICmpPredicate(cond);
  LLVMValueRef l = LLVMGetOperand(cond, 0), r = LLVMGetOperand(cond, 1);
  int larger; /* 1: the compare holds when l is the larger (or equal) */
  if (p == LLVMIntSGT || p == LLVMIntSGE) larger = 1;
  else if (p == LLVMIntSLT || p == LLVMIntSLE) larger = -1;
  else return 0;
  if (l == x && r == y) return larger;
  if (l == y && r == x) return -larger;
  return 0;
}

/* The i64 form of i128 instruction i (operands already mapped); false
 * when it is out of reach.  Builds before i. */
static bool narrow_one(nw_ctx *c, LLVMValueRef i, nw_val *r) {
  LLVMOpcode op = LLVMGetInstructionOpcode(i);
  nw_val a = {0}, b = {0};
  LLVMPositionBuilderBefore(c->b, i);
  switch (op) {
  case LLVMZExt: case LLVMSExt: {
    LLVMValueRef x = LLVMGetOperand(i, 0);
    unsigned w = width(x);
    if (w == 32 || w == 16 || w == 8 || w == 1) {
      bool s = op == LLVMSExt; /* sext i1: -1 or 0 */
      r->lo = s ? -((i128)1 << (w - 1)) : 0;
      r->hi = s ? ((i128)1 << (w - 1)) - 1 : ((i128)1 << w) - 1;
    } else if (w == 64 && range64(c, x, &r->lo, &r->hi, 0) && (op == LLVMSExt || r->lo >= 0)) {
      /* within [-2^62, 2^62] (and >= 0 for a zero extension): the i128
       * value is x's own */
      r->v64 = x;
      return true;
    } else if (w == 64 && op == LLVMZExt && LLVMIsAInstruction(x) && LLVMGetInstructionOpcode(x) == LLVMUDiv &&
               LLVMIsAConstantInt(LLVMGetOperand(x, 1)) && LLVMConstIntGetSExtValue(LLVMGetOperand(x, 1)) > 0 &&
               LLVMIsATruncInst(LLVMGetOperand(x, 0)) && operand(c, LLVMGetOperand(LLVMGetOperand(x, 0), 0), &a) &&
               a.lo >= 0) {
      /* bnd_trip.c's 64-bit division of a value in reach */
      i128 d = LLVMConstIntGetSExtValue(LLVMGetOperand(x, 1));
      r->lo = a.lo / d, r->hi = a.hi / d;
      r->v64 = x;
      return true;
    } else {
      return false;
    }
    r->v64 = op == LLVMZExt ? LLVMBuildZExt(c->b, x, c->i64, "") : LLVMBuildSExt(c->b, x, c->i64, "");
    return true;
  }
  case LLVMAdd: case LLVMSub: case LLVMMul: case LLVMAnd: case LLVMLShr: case LLVMAShr: case LLVMShl:
    if (!operand(c, LLVMGetOperand(i, 0), &a) || !operand(c, LLVMGetOperand(i, 1), &b)) return false;
    break;
  case LLVMSelect: {
    if (!operand(c, LLVMGetOperand(i, 1), &a) || !operand(c, LLVMGetOperand(i, 2), &b)) return false;
    r->clamped = a.clamped || b.clamped || tainted_bool(c, LLVMGetOperand(i, 0));
    r->lo = a.lo < b.lo ? a.lo : b.lo, r->hi = a.hi > b.hi ? a.hi : b.hi;
    int m = min_max(i);
    if (m > 0) r->lo = a.lo > b.lo ? a.lo : b.lo;
    if (m < 0) r->hi = a.hi < b.hi ? a.hi : b.hi;
    r->v64 = LLVMBuildSelect(c->b, LLVMGetOperand(i, 0), a.v64, b.v64, "");
    return true;
  }
  default:
    return false;
  }
  r->clamped = a.clamped || b.clamped;
  switch (op) {
  case LLVMAdd:
    r->lo = a.lo + b.lo, r->hi = a.hi + b.hi;
    r->v64 = LLVMBuildAdd(c->b, a.v64, b.v64, "");
    break;
  case LLVMSub:
    r->lo = a.lo - b.hi, r->hi = a.hi - b.lo;
    r->v64 = LLVMBuildSub(c->b, a.v64, b.v64, "");
    break;
  case LLVMMul:
    /* operands within 2^62: the corners fit in i128 */
    r->lo = min4(a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi);
    r->hi = max4(a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi);
    r->v64 = LLVMBuildMul(c->b, a.v64, b.v64, "");
    break;
  case LLVMAnd:
    /* non-negative operands: the result lies within [0, either's max] */
    if (a.lo < 0 || b.lo < 0) return false;
    r->lo = 0, r->hi = a.hi < b.hi ? a.hi : b.hi;
    r->v64 = LLVMBuildAnd(c->b, a.v64, b.v64, "");
    break;
  case LLVMLShr: case LLVMAShr:
    /* a shift of a non-negative value by a constant below 63 */
    if (b.lo != b.hi || b.lo < 0 || b.lo > 62 || a.hi < 0) return false;
    if (a.lo < 0) {
      /* possibly negative (bnd_trip.c's `(n + step - 1) >> k` of a count
       * n the test itself requires to be >= 0): shifted as smax(a, 0),
       * exact whenever a >= 0; bnd_narrow_block accepts that only where
       * a conjunct of the test fails whenever a < 0 */
      if (c->nclamps == NW_MAX_CLAMPS) return false;
      c->clamps[c->nclamps++] = LLVMGetOperand(i, 0);
      LLVMValueRef zero = LLVMConstInt(c->i64, 0, false);
      a.v64 = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntSLT, a.v64, zero, ""), zero, a.v64, "");
      a.lo = 0;
      r->clamped = true;
    }
    r->lo = a.lo >> (int)b.lo, r->hi = a.hi >> (int)b.lo;
    r->v64 = LLVMBuildLShr(c->b, a.v64, b.v64, "");
    break;
  case LLVMShl:
    if (b.lo != b.hi || b.lo < 0 || b.lo > 62 || !fits(a.lo, a.hi)) return false;
    r->lo = a.lo * ((i128)1 << (int)b.lo), r->hi = a.hi * ((i128)1 << (int)b.lo);
    r->v64 = LLVMBuildShl(c->b, a.v64, b.v64, "");
    break;
  default:
    return false;
  }
  return fits(r->lo, r->hi);
}

/* A compare of two i128 values: the same compare of their i64 forms (both
 * within [-2^62, 2^62]: signed and unsigned order agree in both widths). */
static LLVMValueRef narrow_cmp(nw_ctx *c, LLVMValueRef i) {
  nw_val a, b;
  if (!operand(c, LLVMGetOperand(i, 0), &a) || !operand(c, LLVMGetOperand(i, 1), &b)) return NULL;
  LLVMPositionBuilderBefore(c->b, i);
  return LLVMBuildICmp(c->b, LLVMGetICmpPredicate(i), a.v64, b.v64, "");
}

/* A truncation of an i128 value: the same of its i64 form. */
static LLVMValueRef narrow_trunc(nw_ctx *c, LLVMValueRef i) {
  nw_val a;
  if (!operand(c, LLVMGetOperand(i, 0), &a)) return NULL;
  if (width(i) == 64) return a.v64;
  LLVMPositionBuilderBefore(c->b, i);
  return LLVMBuildTrunc(c->b, a.v64, LLVMTypeOf(i), "");
}

/* Whether v's uses are all `and`s of the block or the block's branch,
 * as its condition: v only ever makes the test false. */
static bool only_into_test(nw_ctx *c, LLVMValueRef v, int depth) {
  LLVMValueRef term = LLVMGetBasicBlockTerminator(c->bb);
  if (depth > 64 || LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMIntegerTypeKind || width(v) != 1) return false;
  for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    if (user == term && LLVMIsABranchInst(term) && LLVMIsConditional(term) && LLVMGetCondition(term) == v) continue;
    if (!LLVMIsAInstruction(user) || LLVMGetInstructionParent(user) != c->bb ||
        LLVMGetInstructionOpcode(user) != LLVMAnd || !only_into_test(c, user, depth + 1))
      return false;
  }
  return LLVMGetFirstUse(v) != NULL;
}

/* Whether test leaf `leaf` is false whenever clamped operand a < 0: an
 * exact `x >= 0` (sle 0 x, sge x 0, sgt x -1, slt -1 x) with
 * a = x + k, k >= 0. */
static bool guards(nw_ctx *c, LLVMValueRef leaf, LLVMValueRef a) {
  if (!LLVMIsAICmpInst(leaf) || tainted(c, leaf, 0)) return false;
  LLVMIntPredicate p = LLVMGetICmpPredicate(leaf);
  LLVMValueRef l = LLVMGetOperand(leaf, 0), r = LLVMGetOperand(leaf, 1), x = NULL;
  long long k;
  bool lc = LLVMIsAConstantInt(l), rc = LLVMIsAConstantInt(r);
  if (p == LLVMIntSLE && lc && LLVMConstIntGetSExtValue(l) == 0) x = r;
  if (p == LLVMIntSGE && rc && LLVMConstIntGetSExtValue(r) == 0) x = l;
  if (p == LLVMIntSGT && rc && LLVMConstIntGetSExtValue(r) == -1) x = l;
  if (p == LLVMIntSLT && lc && LLVMConstIntGetSExtValue(l) == -1) x = r;
  if (!x || !is_i128(LLVMTypeOf(x))) return false;
  while (a != x && LLVMIsAInstruction(a) && LLVMGetInstructionOpcode(a) == LLVMAdd &&
         LLVMIsAConstantInt(LLVMGetOperand(a, 1)) && (k = LLVMConstIntGetSExtValue(LLVMGetOperand(a, 1))) >= 0 &&
         LLVMConstInt(LLVMTypeOf(a), (unsigned long long)k, true) == LLVMGetOperand(a, 1))
    a = LLVMGetOperand(a, 0);
  return a == x;
}

/* Whether one leaf of the test's `and` tree below v guards a. */
static bool guarded_by_test(nw_ctx *c, LLVMValueRef v, LLVMValueRef a, int depth) {
  if (depth > 64) return false;
  if (LLVMIsAInstruction(v) && LLVMGetInstructionParent(v) == c->bb && LLVMGetInstructionOpcode(v) == LLVMAnd &&
      width(v) == 1)
    return guarded_by_test(c, LLVMGetOperand(v, 0), a, depth + 1) ||
           guarded_by_test(c, LLVMGetOperand(v, 1), a, depth + 1);
  return guards(c, v, a);
}

/* With clamps: every value computed from one only makes the test false
 * (it feeds nothing but the test's `and`s), and each clamped operand's
 * being negative makes the test false through an exact conjunct, so the
 * i64 test equals the i128 one (where an operand is negative both are
 * false; elsewhere every value is exact). */
static bool clamps_hold(nw_ctx *c) {
  LLVMValueRef term = LLVMGetBasicBlockTerminator(c->bb);
  if (!c->nclamps) return true;
  if (!term || !LLVMIsABranchInst(term) || !LLVMIsConditional(term)) return false;
  for (LLVMValueRef i = LLVMGetFirstInstruction(c->bb); i != term; i = LLVMGetNextInstruction(i))
    if (!is_i128(LLVMTypeOf(i)) && tainted(c, i, 0) && !only_into_test(c, i, 0)) return false;
  for (unsigned k = 0; k < c->nclamps; k++)
    if (!guarded_by_test(c, LLVMGetCondition(term), c->clamps[k], 0)) return false;
  return true;
}

/* Rewrites block bb's i128 computation in i64 where all of it is in
 * reach; returns whether it did. */
bool bnd_narrow_block(LLVMBasicBlockRef bb) {
  LLVMValueRef fn = LLVMGetBasicBlockParent(bb);
  LLVMModuleRef mod = LLVMGetGlobalParent(fn);
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  tw_arena arena = {0};
  nw_ctx c = {.mod = mod, .ctx = ctx, .i64 = LLVMInt64TypeInContext(ctx), .i128t = LLVMIntTypeInContext(ctx, 128),
              .b = LLVMCreateBuilderInContext(ctx), .map = {.arena = &arena},
              .md_range = LLVMGetMDKindIDInContext(ctx, "range", 5), .bb = bb};
  unsigned n = 0, ncmp = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) n++;
  LLVMValueRef *wide = tw_arena_alloc(&arena, (n + 1) * sizeof *wide);
  LLVMValueRef *cmps = tw_arena_alloc(&arena, (n + 1) * sizeof *cmps);
  LLVMValueRef *cmps64 = tw_arena_alloc(&arena, (n + 1) * sizeof *cmps64);
  unsigned nwide = 0;
  bool ok = true;
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); ok && i; i = LLVMGetNextInstruction(i)) {
    bool wide_result = is_i128(LLVMTypeOf(i));
    bool reads = LLVMGetNumOperands(i) > 0 && is_i128(LLVMTypeOf(LLVMGetOperand(i, 0)));
    bool wide_cmp = reads && (LLVMIsAICmpInst(i) || (LLVMIsATruncInst(i) && !wide_result));
    if (!wide_result && !wide_cmp) {
      /* anything else must not read an i128 value */
      for (int k = 0; k < LLVMGetNumOperands(i); k++)
        if (is_i128(LLVMTypeOf(LLVMGetOperand(i, k)))) ok = false;
      continue;
    }
    /* the block's i128 values feed its own compares only */
    for (LLVMUseRef u = LLVMGetFirstUse(i); wide_result && u; u = LLVMGetNextUse(u))
      if (LLVMGetInstructionParent(LLVMGetUser(u)) != bb) ok = false;
    if (!ok) break;
    if (wide_cmp) {
      LLVMValueRef x = LLVMIsAICmpInst(i) ? narrow_cmp(&c, i) : narrow_trunc(&c, i);
      if (!x) ok = false;
      cmps[ncmp] = i, cmps64[ncmp++] = x;
      continue;
    }
    nw_val r = {0};
    if (!narrow_one(&c, i, &r)) {
      ok = false;
      break;
    }
    nw_val *keep = tw_arena_alloc(&arena, sizeof *keep);
    *keep = r;
    bnd_map_put(&c.map, i, keep);
    wide[nwide++] = i;
  }
  ok = ok && clamps_hold(&c);
  if (ok) {
    for (unsigned k = 0; k < ncmp; k++) LLVMReplaceAllUsesWith(cmps[k], cmps64[k]);
    for (unsigned k = ncmp; k-- > 0;) LLVMInstructionEraseFromParent(cmps[k]);
    for (unsigned k = nwide; k-- > 0;) LLVMInstructionEraseFromParent(wide[k]);
  }
  /* on failure the i64 copies built so far are dead: the optimiser's
   * first cleanup removes them */
  LLVMDisposeBuilder(c.b);
  tw_arena_free(&arena);
  return ok;
}
