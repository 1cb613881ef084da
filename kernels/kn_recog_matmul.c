/* kn_recog_matmul.c: C[i][j] (+)= sum_k A[i][k] * B[k][j] in ijk order (a
 * sum into an accumulator, stored after the k loop) and ikj order (C
 * updated in place per k, which keeps each element's terms in k order),
 * alone or inside a batch loop b whose matrices move with b. */
#include <math.h>
#include <string.h>

#include "kn_internal.h"

#define MAX_COPIES 32

/* A dim no term has: j of a matrix-vector product (n = 1). */
#define NO_DIM (-3)

/* A factor the source multiplies a value by (`alpha * A[i][k]`, `C[i][j]
 * * beta`): a value the nest does not compute, the left operand when
 * first. */
typedef struct {
  LLVMValueRef factor;     /* NULL: none */
  bool first;
} mm_factor;

/* What the source does to a finished sum before storing it (`C[i][j] =
 * sum / d`, `sum * f`, `f * sum`, `sum + f`, `f - sum`): a float value
 * the nest does not compute, or with elem a load in the nest at an
 * address that does not move with k (`r[i] = b[i] - sum`: finish makes
 * it kn_mm_post's e); the divisor with div, else the left operand when
 * first. */
typedef struct {
  LLVMValueRef factor;     /* NULL: none */
  bool div, add, sub, first;
  bool elem;
  kr_affine e;             /* with elem: the load's address */
} mm_post;

/* A second operation after mm_post's (kn_mm_blend): y + t or t + y
 * (first), t a load in the nest at an address that does not move with k
 * (e: finish makes it the output's index), or that load times a float
 * value the nest does not compute (factor; the left operand with
 * scale_first); with guard, only where that i1 value, computed before
 * the nest, is guard_on (y stored alone elsewhere). */
typedef struct {
  bool on;
  bool first;
  LLVMValueRef factor;     /* NULL: t is the load itself */
  bool scale_first;
  kr_affine e;
  LLVMValueRef guard;      /* NULL: none */
  bool guard_on;
} mm_blend;

/* A compare of the finished sum (after mm_post's operation) with a float
 * constant and a select of it or another constant (`s > 0 ? s : 0`, a
 * ReLU: kn_mm_act). */
typedef struct {
  bool on;
  LLVMRealPredicate pred;
  bool left, when_true;
  LLVMValueRef cmp, sel;   /* the constants */
  bool mul, mul_first;     /* the other arm x * sel (a leaky ReLU) */
  bool nan_add, add_first; /* a NaN x stores x + cmp (Wasm's f32.max) */
} mm_act;

typedef struct {
  int db, di, dj, dk;      /* chain dims of b (-2: no batch), i, j, k */
  kn_mm_type type;
  bool a_signed, b_signed;
  kr_affine a, b, c;
  bool has_start;          /* sums start from s, not C */
  kr_affine s;
  mm_factor fa, fb, fs;    /* A's, B's and the start's factors */
  bool two;                /* a second product per term (kn_mm_second) */
  kr_affine a2, b2;
  mm_factor fa2, fb2;
  mm_post post;            /* applied to each sum before its store */
  mm_blend blend;          /* then this */
  mm_act act;              /* then this */
  mm_act act2;             /* then this (a clamp), with act on */
  LLVMValueRef mirror;     /* the store of each value at C's (j, i) too, or NULL */
  LLVMValueRef diag;       /* the store of a constant at C's (i, i) in the i loop, or NULL */
} mm_parts;

/* Whether the address has a term in dim d (a live-value stride too). */
static bool moves_with(const kr_affine *a, int d) {
  for (int i = 0; i < a->n; i++)
    if (a->t[i].dim == d) return true;
  return false;
}

/* moves_with, where a row pointer (kr_row_load) moves with its table's
 * loop. */
static bool moves_in(kr_ctx *c, const kr_affine *a, int d) {
  LLVMValueRef row;
  int td;
  if (kr_row_term(c, a, &row) && row && kr_row_load(c, row, NULL, &td) && td == d) return true;
  return moves_with(a, d);
}

/* The address at ptr as one copy reads it: the j loop's virtual counter,
 * whatever copies the j loop was unrolled into. */
static kr_affine address_one_copy(kr_ctx *c, LLVMValueRef ptr) {
  int copies = c->copies, copy = c->copy;
  c->copies = 1;
  c->copy = 0;
  kr_affine a = kr_address(c, ptr);
  c->copies = copies;
  c->copy = copy;
  return a;
}

/* v = f * x or x * f (a float multiply) with f live before the nest and x
 * a load: x, and f in *f; else v, no factor. */
static LLVMValueRef split_factor(const kr_ctx *c, LLVMValueRef v, mm_factor *f) {
  *f = (mm_factor){0};
  if (!v || !LLVMIsABinaryOperator(v) || LLVMGetInstructionOpcode(v) != LLVMFMul) return v;
  for (unsigned k = 0; k < 2; k++) {
    LLVMValueRef s = LLVMGetOperand(v, k), x = LLVMGetOperand(v, 1 - k);
    if (!LLVMIsALoadInst(x) || LLVMIsALoadInst(s) || ir_loop_defines(kr_nest(c), s, c->cfg)) continue;
    *f = (mm_factor){s, k == 0};
    return x;
  }
  return v;
}

/* v = x / f, x * f, f * x, x + f, f + x, x - f or f - x (one float
 * operation) with f live before the nest and x computed in it, or f a
 * load in the nest whose address does not move with k (an element at
 * the output's index: finish proves it is, kr_address that the address
 * is affine): x, with f in *p; else v, no factor.  x is never itself
 * such a load (the sum it stands for is a phi or an add). */
static LLVMValueRef split_post(kr_ctx *c, LLVMValueRef v, mm_post *p) {
  *p = (mm_post){0};
  LLVMOpcode op = v && LLVMIsABinaryOperator(v) ? LLVMGetInstructionOpcode(v) : 0;
  if (op != LLVMFDiv && op != LLVMFMul && op != LLVMFAdd && op != LLVMFSub) return v;
  for (unsigned k = op == LLVMFDiv ? 1 : 0; k < 2; k++) {
    LLVMValueRef f = LLVMGetOperand(v, k), x = LLVMGetOperand(v, 1 - k);
    if (!ir_loop_defines(kr_nest(c), x, c->cfg) || LLVMIsALoadInst(x)) continue;
    mm_post q = {f, op == LLVMFDiv, op == LLVMFAdd, op == LLVMFSub, k == 0, false, {0}};
    if (ir_loop_defines(kr_nest(c), f, c->cfg)) {
      if (!LLVMIsALoadInst(f)) continue;
      /* the element's address as the output's: one copy, the j loop's
       * virtual counter (as mirror_store) */
      q.e = address_one_copy(c, LLVMGetOperand(f, 0));
      if (!q.e.ok || moves_with(&q.e, c->depth - 1)) continue;
      q.elem = true;
    }
    *p = q;
    return x;
  }
  return v;
}

/* t = a load in the nest whose address does not move with k, or that
 * load times a float value the nest does not compute (either operand):
 * into *b's e and factor. */
static bool blend_term(kr_ctx *c, LLVMValueRef t, mm_blend *b) {
  LLVMValueRef ld = t;
  b->factor = NULL;
  if (LLVMIsABinaryOperator(t) && LLVMGetInstructionOpcode(t) == LLVMFMul) {
    ld = NULL;
    for (unsigned k = 0; k < 2 && !ld; k++) {
      LLVMValueRef f = LLVMGetOperand(t, k), x = LLVMGetOperand(t, 1 - k);
      if (!LLVMIsALoadInst(x) || LLVMIsALoadInst(f) || ir_loop_defines(kr_nest(c), f, c->cfg)) continue;
      ld = x;
      b->factor = f;
      b->scale_first = k == 0;
    }
  }
  if (!ld || !LLVMIsALoadInst(ld) || !ir_loop_defines(kr_nest(c), ld, c->cfg)) return false;
  /* the element's address as the output's: one copy (as split_post) */
  b->e = address_one_copy(c, LLVMGetOperand(ld, 0));
  return b->e.ok && !moves_with(&b->e, c->depth - 1);
}

/* v = y + t or t + y (blend_term's t), y computed in the nest and no load:
 * y, with *b; else NULL. */
static LLVMValueRef blend_add(kr_ctx *c, LLVMValueRef v, mm_blend *b) {
  if (!v || !LLVMIsABinaryOperator(v) || LLVMGetInstructionOpcode(v) != LLVMFAdd) return NULL;
  for (unsigned k = 0; k < 2; k++) {
    LLVMValueRef t = LLVMGetOperand(v, k), y = LLVMGetOperand(v, 1 - k);
    if (!ir_loop_defines(kr_nest(c), y, c->cfg) || LLVMIsALoadInst(y) || !blend_term(c, t, b)) continue;
    b->on = true;
    b->first = k == 0;
    return y;
  }
  return NULL;
}

/* v = phi(y from P, u from S), u = blend_add's y + t, P ending in a
 * branch on an i1 value g computed before the nest to the phi's block or
 * S, S (P's only predecessor) going on to the phi's block: the source's
 * `if (beta == 0) C = alpha*temp; else C = alpha*temp + beta*C`.  y, with
 * *b and its guard; else NULL. */
static LLVMValueRef blend_guarded(kr_ctx *c, LLVMValueRef v, mm_blend *b) {
  if (!v || !LLVMIsAPHINode(v) || LLVMCountIncoming(v) != 2) return NULL;
  LLVMBasicBlockRef join = LLVMGetInstructionParent(v);
  for (unsigned k = 0; k < 2; k++) {
    LLVMValueRef u = LLVMGetIncomingValue(v, k), y = LLVMGetIncomingValue(v, 1 - k);
    LLVMBasicBlockRef s = LLVMGetIncomingBlock(v, k), p = LLVMGetIncomingBlock(v, 1 - k);
    mm_blend q = {0};
    if (blend_add(c, u, &q) != y) continue;
    LLVMValueRef sbr = LLVMGetBasicBlockTerminator(s), pbr = LLVMGetBasicBlockTerminator(p);
    if (!sbr || !LLVMIsABranchInst(sbr) || LLVMIsConditional(sbr) || LLVMGetSuccessor(sbr, 0) != join) continue;
    if (!pbr || !LLVMIsABranchInst(pbr) || !LLVMIsConditional(pbr)) continue;
    LLVMBasicBlockRef t0 = LLVMGetSuccessor(pbr, 0), t1 = LLVMGetSuccessor(pbr, 1);
    if (!((t0 == s && t1 == join) || (t0 == join && t1 == s))) continue;
    const ir_block *sb = &c->cfg->blocks[ir_cfg_index(c->cfg, s)];
    LLVMValueRef g = LLVMGetCondition(pbr);
    if (sb->npreds != 1 || ir_loop_defines(kr_nest(c), g, c->cfg)) continue;
    q.guard = g;
    q.guard_on = t0 == s;
    *b = q;
    return y;
  }
  return NULL;
}

/* v with kn_mm_blend's operation peeled (blend_guarded, blend_add): what
 * is left, the rest in *b; else v, none.  Unguarded and with t unscaled
 * only where what is left has split_post's operation (`y[j] +=
 * alpha*temp`): a lone `sum + e[i]` stays split_post's element. */
static LLVMValueRef split_blend(kr_ctx *c, LLVMValueRef v, mm_blend *b) {
  *b = (mm_blend){0};
  LLVMValueRef y = blend_guarded(c, v, b);
  if (y) return y;
  mm_blend q = {0};
  y = blend_add(c, v, &q);
  mm_post p;
  if (!y || (!q.factor && split_post(c, y, &p) == y)) return v;
  *b = q;
  return y;
}

/* Whether v is a float constant other than NaN. */
static bool plain_const(LLVMValueRef v) {
  LLVMBool lost = false;
  if (!v || !LLVMIsAConstantFP(v)) return false;
  double d = LLVMConstRealGetDouble(v, &lost);
  return d == d;
}

/* Whether a and b are the same float constant, -0 and +0 apart. */
static bool same_const(LLVMValueRef a, LLVMValueRef b) {
  LLVMBool lost = false;
  double x = LLVMConstRealGetDouble(a, &lost), y = LLVMConstRealGetDouble(b, &lost);
  return LLVMTypeOf(a) == LLVMTypeOf(b) && x == y && signbit(x) == signbit(y);
}

/* v = select(fcmp(pred, x, k), x, s) with k a float constant and s a float
 * constant or x * s (s * x) with s one (a leaky ReLU); either operand of
 * the compare x, either arm of the select the other value; x computed in
 * the nest: x, the rest in *a; else NULL. */
static LLVMValueRef select_act(const kr_ctx *c, LLVMValueRef v, mm_act *a) {
  if (!v || !LLVMIsASelectInst(v) || !LLVMIsAFCmpInst(LLVMGetOperand(v, 0))) return NULL;
  LLVMValueRef cond = LLVMGetOperand(v, 0), t = LLVMGetOperand(v, 1), f = LLVMGetOperand(v, 2);
  LLVMValueRef l = LLVMGetOperand(cond, 0), r = LLVMGetOperand(cond, 1);
  bool left = plain_const(r) && !LLVMIsAConstantFP(l);
  if (!left && !(plain_const(l) && !LLVMIsAConstantFP(r))) return NULL;
  LLVMValueRef x = left ? l : r, k = left ? r : l;
  bool when_true = t == x;
  LLVMValueRef sel = when_true ? f : t;
  if (!when_true && f != x) return NULL;
  LLVMRealPredicate p = LLVMGetFCmpPredicate(cond);
  if (p == LLVMRealPredicateFalse || p == LLVMRealPredicateTrue || !ir_loop_defines(kr_nest(c), x, c->cfg))
    return NULL;
  mm_act q = {true, p, left, when_true, k, sel, false, false, false, false};
  if (!plain_const(sel)) {
    /* the leaky ReLU's x * s: one multiply of x by a constant */
    if (!LLVMIsABinaryOperator(sel) || LLVMGetInstructionOpcode(sel) != LLVMFMul) return NULL;
    LLVMValueRef m0 = LLVMGetOperand(sel, 0), m1 = LLVMGetOperand(sel, 1);
    q.mul = true;
    q.mul_first = m1 == x;
    q.sel = q.mul_first ? m0 : m1;
    if ((q.mul_first ? m1 : m0) != x || !plain_const(q.sel)) return NULL;
  }
  *a = q;
  return x;
}

/* Whether an `uno`/`ord` compare of l and r tests x for NaN: x with itself
 * or with a constant that is no NaN (LLVM writes `isnan(x)` as `fcmp uno
 * x, 0.0` whatever constant the source compared). */
static bool nan_test_of(LLVMValueRef l, LLVMValueRef r, LLVMValueRef x) {
  return (l == x && (r == x || plain_const(r))) || (plain_const(l) && r == x);
}

/* v = maximum(x, k) or minimum(x, k) (either operand order), k a float
 * constant, x computed in the nest: x, with *a the compare and select it
 * is for x no NaN (`x > k ? x : k`, `>=` for k = -0: maximum's -0 below
 * +0; `x < k`, `<=` for k = +0 with minimum); else NULL. */
static LLVMValueRef minmax_call(const kr_ctx *c, LLVMValueRef v, mm_act *a) {
  if (!v || !LLVMIsACallInst(v) || LLVMGetNumArgOperands(v) != 2) return NULL;
  LLVMValueRef fn = LLVMGetCalledValue(v);
  unsigned id = fn && LLVMIsAFunction(fn) ? LLVMGetIntrinsicID(fn) : 0;
  bool max = id && id == LLVMLookupIntrinsicID("llvm.maximum", 12);
  if (!id || (!max && id != LLVMLookupIntrinsicID("llvm.minimum", 12))) return NULL;
  LLVMValueRef o0 = LLVMGetOperand(v, 0), o1 = LLVMGetOperand(v, 1);
  bool xfirst = plain_const(o1) && !LLVMIsAConstantFP(o0);
  if (!xfirst && !(plain_const(o0) && !LLVMIsAConstantFP(o1))) return NULL;
  LLVMValueRef x = xfirst ? o0 : o1, k = xfirst ? o1 : o0;
  if (!ir_loop_defines(kr_nest(c), x, c->cfg)) return NULL;
  LLVMBool lost = false;
  double kv = LLVMConstRealGetDouble(k, &lost);
  *a = (mm_act){.on = true, .left = true, .when_true = true, .cmp = k, .sel = k};
  a->pred = max ? (kv == 0 && signbit(kv) ? LLVMRealOGE : LLVMRealOGT)
                : (kv == 0 && !signbit(kv) ? LLVMRealOLE : LLVMRealOLT);
  return x;
}

/* v = select(fcmp uno(x, k), n, maximum(x, k)) (the operands of each in
 * either order, the compare maybe `ord` with the arms swapped, of x with
 * itself or another constant: nan_test_of), k a float constant, n k itself (libc's fmaxf(x, k)
 * inlined: a NaN x gives k) or x + k (Wasm's f32.max: the NaN quieted);
 * minimum alike: x, with *a the compare and select it is for other x
 * (`x > k ? x : k`, `>=` for k = -0: maximum's -0 below +0; `x < k`,
 * `<=` for k = +0 with minimum) and nan_add for x + k; else NULL.  Also
 * select(fcmp ord(x, k), that, k) (wasm-opt's inlined fmaxf(x, k)): the
 * compare and select alone. */
static LLVMValueRef minmax_act(const kr_ctx *c, LLVMValueRef v, mm_act *a) {
  if (!v || !LLVMIsASelectInst(v) || !LLVMIsAFCmpInst(LLVMGetOperand(v, 0))) return NULL;
  LLVMValueRef cond = LLVMGetOperand(v, 0);
  LLVMRealPredicate p = LLVMGetFCmpPredicate(cond);
  if (p != LLVMRealUNO && p != LLVMRealORD) return NULL;
  LLVMValueRef n = LLVMGetOperand(v, p == LLVMRealUNO ? 1 : 2), mm = LLVMGetOperand(v, p == LLVMRealUNO ? 2 : 1);
  LLVMValueRef l = LLVMGetOperand(cond, 0), r = LLVMGetOperand(cond, 1);
  if (LLVMIsASelectInst(mm)) {
    /* wasm-opt's inlined fmaxf: its NaN test around f32.max's form, the
     * NaN x giving k: the compare and select alone */
    mm_act q;
    LLVMValueRef x = minmax_act(c, mm, &q);
    if (!x || !LLVMIsAConstantFP(n) || !same_const(n, q.cmp) ||
        !nan_test_of(l, r, x))
      return NULL;
    q.nan_add = q.add_first = false;
    *a = q;
    return x;
  }
  mm_act q;
  LLVMValueRef x = minmax_call(c, mm, &q), k = q.cmp;
  if (!x || !nan_test_of(l, r, x)) return NULL;
  if (LLVMIsAConstantFP(n)) {
    if (!same_const(n, k)) return NULL;
  } else {
    if (!LLVMIsABinaryOperator(n) || LLVMGetInstructionOpcode(n) != LLVMFAdd) return NULL;
    LLVMValueRef a0 = LLVMGetOperand(n, 0), a1 = LLVMGetOperand(n, 1);
    if (!((a0 == x && a1 == k) || (a0 == k && a1 == x))) return NULL;
    q.nan_add = true;
    q.add_first = a0 == k;
  }
  *a = q;
  return x;
}

/* One compare and select of v (minmax_act, select_act): x, or NULL. */
static LLVMValueRef one_act(const kr_ctx *c, LLVMValueRef v, mm_act *a) {
  LLVMValueRef x = minmax_act(c, v, a);
  return x ? x : select_act(c, v, a);
}

/* The float compare p of l and r, as fcmp computes it. */
static bool pred_holds(LLVMRealPredicate p, double l, double r) {
  if (l != l || r != r) return p >= LLVMRealUNO;
  switch (p) {
  case LLVMRealOGT: case LLVMRealUGT: return l > r;
  case LLVMRealOGE: case LLVMRealUGE: return l >= r;
  case LLVMRealOLT: case LLVMRealULT: return l < r;
  case LLVMRealOLE: case LLVMRealULE: return l <= r;
  case LLVMRealOEQ: case LLVMRealUEQ: return l == r;
  case LLVMRealONE: case LLVMRealUNE: return l != r;
  case LLVMRealORD: return true;
  case LLVMRealPredicateTrue: return true;
  default: return false;
  }
}

/* a's compare of y (its operand order). */
static bool act_cond(const mm_act *a, double y) {
  LLVMBool lost = false;
  double k = LLVMConstRealGetDouble(a->cmp, &lost);
  return pred_holds(a->pred, a->left ? y : k, a->left ? k : y);
}

/* Whether a's select keeps its x (not its constant) for a NaN x. */
static bool act_picks_x_for_nan(const mm_act *a) { return act_cond(a, NAN) == a->when_true; }

static bool relational(LLVMRealPredicate p) {
  return (p >= LLVMRealOGT && p <= LLVMRealOLE) || (p >= LLVMRealUGT && p <= LLVMRealULE);
}

/* The float next to v toward `to` in the constant's type (f32 or f64). */
static double next_in(LLVMValueRef type_of, double v, double to) {
  return LLVMTypeOf(type_of) == LLVMFloatTypeInContext(LLVMGetTypeContext(LLVMTypeOf(type_of)))
             ? (double)nextafterf((float)v, (float)to)
             : nextafter(v, to);
}

/* Whether out(in(s)) equals the source's `out` compare of s itself
 * selecting between out's constant and in(s) (`s < lo ? lo : s > hi ? hi
 * : s`): in, a plain compare and select (no multiply, no NaN add),
 * changes s to its constant exactly on the values where its compare
 * picks the constant; that set holds no NaN and is a half-line of floats
 * [e0, e1] (the compare relational); out's compare, relational, is
 * monotone on it, so it is the same on all of it when it is the same at
 * both ends, and then it must be what it gives on in's constant.  Where
 * in does not change s both forms compare s itself. */
static bool clamp_safe(const mm_act *in, const mm_act *out) {
  if (in->mul || in->nan_add || !relational(in->pred) || !relational(out->pred)) return false;
  LLVMBool lost = false;
  double k = LLVMConstRealGetDouble(in->cmp, &lost), sel = LLVMConstRealGetDouble(in->sel, &lost);
  /* changed(s) = cond(s) != when_true; never for NaN */
  if (act_cond(in, NAN) != in->when_true) return false;
  double lo = -INFINITY, hi = INFINITY;
  bool up_changed = act_cond(in, INFINITY) != in->when_true, at_k = act_cond(in, k) != in->when_true;
  if (up_changed)
    lo = at_k ? k : next_in(in->cmp, k, INFINITY);
  else
    hi = at_k ? k : next_in(in->cmp, k, -INFINITY);
  if (lo > hi || (act_cond(in, lo) == in->when_true) || (act_cond(in, hi) == in->when_true)) return false;
  bool want = act_cond(out, sel);
  return act_cond(out, lo) == want && act_cond(out, hi) == want;
}

/* v = select(cmp(x, k2), k2', in) (either arm) with in = select(cmp(x,
 * k1), k1', x) (select_act) and the same x compared: the clamp
 * `s < lo ? lo : s > hi ? hi : s`, as in's compare and select then
 * out's of in's result where clamp_safe proves that the same: x, with
 * *a in's and *a2 out's; else NULL. */
static LLVMValueRef nested_act(const kr_ctx *c, LLVMValueRef v, mm_act *a, mm_act *a2) {
  if (!v || !LLVMIsASelectInst(v) || !LLVMIsAFCmpInst(LLVMGetOperand(v, 0))) return NULL;
  LLVMValueRef cond = LLVMGetOperand(v, 0), t = LLVMGetOperand(v, 1), f = LLVMGetOperand(v, 2);
  bool when_true = LLVMIsASelectInst(t);
  LLVMValueRef in = when_true ? t : f, sel = when_true ? f : t;
  if (!LLVMIsASelectInst(in) || !plain_const(sel)) return NULL;
  mm_act qi = {0};
  LLVMValueRef x = select_act(c, in, &qi);
  if (!x) return NULL;
  LLVMValueRef l = LLVMGetOperand(cond, 0), r = LLVMGetOperand(cond, 1);
  bool left = l == x && plain_const(r);
  if (!left && !(r == x && plain_const(l))) return NULL;
  mm_act qo = {.on = true, .pred = LLVMGetFCmpPredicate(cond), .left = left, .when_true = when_true,
               .cmp = left ? r : l, .sel = sel};
  if (!clamp_safe(&qi, &qo)) return NULL;
  *a = qi;
  *a2 = qo;
  return x;
}

/* v with the source's compare and select of the finished sum peeled
 * (select_act, minmax_act): what is left, the rest in *a; else v, none.
 * Two in a row (`fminf(fmaxf(s, 0), 6)`, a ReLU6; nested_act's clamp)
 * the first in *a, the second in *a2.  The kernel repeats each compare
 * and select (kn_mm_act): exact, NaN and -0 included. */
static LLVMValueRef split_act(const kr_ctx *c, LLVMValueRef v, mm_act *a, mm_act *a2) {
  *a = *a2 = (mm_act){0};
  LLVMValueRef x = nested_act(c, v, a, a2);
  if (x) return x;
  mm_act out = {0}, in = {0};
  x = one_act(c, v, &out);
  if (!x) {
    /* a bare minimum(x, k) of a value that is never NaN: LLVM drops
     * fminf's NaN test after fmaxf(s, 0), whose select gives 0 for a NaN
     * s (`fminf(fmaxf(s, 0), 6)`); on x no NaN it is its compare and
     * select */
    x = minmax_call(c, v, &out);
    LLVMValueRef y = x ? one_act(c, x, &in) : NULL;
    if (!y || in.mul || in.nan_add || act_picks_x_for_nan(&in)) return v;
    *a = in;
    *a2 = out;
    return y;
  }
  LLVMValueRef y = one_act(c, x, &in);
  if (!y) {
    *a = out;
    return x;
  }
  *a = in;
  *a2 = out;
  return y;
}

static bool same_factor(const mm_factor *x, const mm_factor *y) {
  return x->factor == y->factor && (!x->factor || x->first == y->first);
}

/* An operand of the product: a load, or an i8 load widened to i32. */
static bool operand(kr_ctx *c, LLVMValueRef v, kr_affine *addr, kn_mm_type *type, bool *sign, mm_factor *f) {
  *sign = false;
  v = split_factor(c, v, f);
  if ((LLVMIsASExtInst(v) || LLVMIsAZExtInst(v)) && LLVMIsALoadInst(LLVMGetOperand(v, 0))) {
    *sign = LLVMIsASExtInst(v) != NULL;
    v = LLVMGetOperand(v, 0);
    kn_type t;
    if (!kr_type_of(LLVMTypeOf(v), &t) || t != KN_I8) return kr_fail(c, "matmul of an unsupported type");
    *type = KN_MM_I8_I32;
  } else if (LLVMIsALoadInst(v)) {
    kn_type t;
    if (!kr_type_of(LLVMTypeOf(v), &t)) return kr_fail(c, "matmul of an unsupported type");
    if (t == KN_F32) *type = KN_MM_F32;
    else if (t == KN_F64) *type = KN_MM_F64;
    else if (t == KN_I32) *type = KN_MM_I32;
    else return kr_fail(c, "matmul of an unsupported type");
  } else {
    return kr_fail(c, "matmul operand is not a load");
  }
  *addr = kr_address(c, LLVMGetOperand(v, 0));
  return addr->ok ? true : kr_fail(c, "non-affine address");
}

/* p = A * B: which load is A (no j term) and which is B (no i term). */
static bool product(kr_ctx *c, LLVMValueRef p, mm_parts *m) {
  LLVMOpcode op = LLVMIsABinaryOperator(p) ? LLVMGetInstructionOpcode(p) : 0;
  kr_affine x, y;
  kn_mm_type tx, ty;
  bool sx, sy;
  mm_factor fx = {0}, fy = {0};
  if (LLVMGetTypeKind(LLVMTypeOf(p)) == LLVMVectorTypeKind) {
    /* a sum in lanes (kn_lanes_sum.c): lane c->copy's product */
    kr_lane_factor la, lb;
    if (!kr_lane_product(c, p, c->copy, &la, &lb)) return false;
    x = la.addr, y = lb.addr, sx = la.sign, sy = lb.sign;
    tx = ty = la.mem == KN_I8 ? KN_MM_I8_I32 : KN_MM_I32;
    op = LLVMMul;
  } else if (op != LLVMMul && op != LLVMFMul) {
    return kr_fail(c, "not a sum of products");
  } else if (!operand(c, LLVMGetOperand(p, 0), &x, &tx, &sx, &fx) || !operand(c, LLVMGetOperand(p, 1), &y, &ty, &sy, &fy))
    return false;
  /* i8 operands may differ in signedness (u8 activations times s8
   * weights): each widens its own way */
  if (tx != ty || (op == LLVMFMul) != (tx == KN_MM_F32 || tx == KN_MM_F64))
    return kr_fail(c, "matmul operands of mixed types");
  /* A has no j term; for a matrix-vector product (no j loop) A is the
   * one with an i term */
  bool x_is_a = m->dj == NO_DIM ? moves_in(c, &x, m->di) : kr_coeff(&x, m->dj) == 0;
  m->a = x_is_a ? x : y;
  m->b = x_is_a ? y : x;
  m->type = tx;
  m->a_signed = x_is_a ? sx : sy;
  m->b_signed = x_is_a ? sy : sx;
  m->fa = x_is_a ? fx : fy;
  m->fb = x_is_a ? fy : fx;
  if (kr_coeff(&m->a, m->dj) || kr_coeff(&m->b, m->di)) return kr_fail(c, "not a matmul access pattern");
  return true;
}

/* A product's value negated through its factors, exactly: (-f) * a =
 * -(f * a) and (-x) * b = -(x * b) bit for bit (negating is exact and
 * commutes with rounding), so x - (f*a)*b = x + ((-f)*a)*b, and x - a*b =
 * x + ((-1)*a)*b.  LLVM folds a negative constant factor that way (`C +=
 * -0.75 * A * B` arrives as `C - (A * 0.75) * B`).  A's constant factor
 * is negated, else B's; else -1 becomes the factor of the one with none;
 * both live values: false.  t: the float type. */
static bool negate_product(mm_factor *fa, mm_factor *fb, LLVMTypeRef t) {
  mm_factor *f[2] = {fa, fb};
  for (int i = 0; i < 2; i++)
    if (f[i]->factor && plain_const(f[i]->factor)) {
      LLVMBool lost = false;
      f[i]->factor = LLVMConstReal(LLVMTypeOf(f[i]->factor), -LLVMConstRealGetDouble(f[i]->factor, &lost));
      return true;
    }
  for (int i = 0; i < 2; i++)
    if (!f[i]->factor) {
      *f[i] = (mm_factor){LLVMConstReal(t, -1.0), true};
      return true;
    }
  return false;
}

/* t = P1 + P2, two float products (syr2k's term): P1 into m's A and B,
 * P2 into its A2 and B2, in the source's operand order of the add (the
 * kernel adds P1 + P2, one rounding, then adds that to the sum).  P1 - P2
 * is P1 + (-P2) (negate_product on P2's factors). */
static bool product_pair(kr_ctx *c, LLVMValueRef t, mm_parts *m) {
  LLVMValueRef p1 = LLVMGetOperand(t, 0), p2 = LLVMGetOperand(t, 1);
  mm_parts second = *m;
  if (!product(c, p1, m) || !product(c, p2, &second)) return false;
  if (LLVMGetInstructionOpcode(t) == LLVMFSub && !negate_product(&second.fa, &second.fb, LLVMTypeOf(t)))
    return kr_fail(c, "a product subtracted whose factors are both live values");
  if (second.type != m->type || (m->type != KN_MM_F32 && m->type != KN_MM_F64))
    return kr_fail(c, "two products per term of other types than one float type");
  m->two = true;
  m->a2 = second.a, m->b2 = second.b, m->fa2 = second.fa, m->fb2 = second.fb;
  return true;
}

/* A term of the sum: one product, or with `pair` two products added
 * (an fadd of two fmuls, or an fsub: product_pair). */
static bool term(kr_ctx *c, LLVMValueRef t, mm_parts *m, bool pair) {
  LLVMOpcode op = LLVMIsABinaryOperator(t) ? LLVMGetInstructionOpcode(t) : 0;
  if (pair && (op == LLVMFAdd || op == LLVMFSub)) return product_pair(c, t, m);
  return product(c, t, m);
}

/* The term of `C - term` as the term of `C + term'` (negate_product on
 * each of its products). */
static bool negate_term(kr_ctx *c, mm_parts *m, LLVMTypeRef t) {
  if (!negate_product(&m->fa, &m->fb, t) || (m->two && !negate_product(&m->fa2, &m->fb2, t)))
    return kr_fail(c, "a product subtracted whose factors are both live values");
  return true;
}

/* Whether two copies' second products are the same. */
static bool same_second(const mm_parts *x, const mm_parts *y) {
  if (x->two != y->two) return false;
  return !x->two || (kr_same_affine(&x->a2, &y->a2) && kr_same_affine(&x->b2, &y->b2) &&
                     same_factor(&x->fa2, &y->fa2) && same_factor(&x->fb2, &y->fb2));
}

/* The chain dim of the product's outermost loop: 1 under a batch loop. */
static int product_dim(const kr_ctx *c) { return c->depth - 3; }


/* i, j, k at the product's loops (order: i, then the two given), b at dim 0
 * under a batch loop. */
static mm_parts parts_at(const kr_ctx *c, int second_is_k) {
  /* y[i] = sum over k of A[i][k] * x[k]: a product with one column;
   * y[j] += x[k] * A[k][j] in k, j order: one with one row */
  if (c->depth == 2)
    return second_is_k ? (mm_parts){.db = -2, .di = NO_DIM, .dk = 0, .dj = 1}
                       : (mm_parts){.db = -2, .di = 0, .dk = 1, .dj = NO_DIM};
  int p = product_dim(c);
  return second_is_k ? (mm_parts){.db = p ? 0 : -2, .di = p, .dk = p + 1, .dj = p + 2}
                     : (mm_parts){.db = p ? 0 : -2, .di = p, .dj = p + 1, .dk = p + 2};
}

/* b, i, k: a batch of matrix-vector products y_b[i] = sum_k A_b[i][k] *
 * x_b[k] (attention's scores of every head over the cached keys, its
 * weighted sums of the values), where the i, j, k reading of three loops
 * fails because x moves with the outer loop. */
static mm_parts batched_matvec_parts(void) { return (mm_parts){.db = 0, .di = 1, .dk = 2, .dj = NO_DIM}; }

static unsigned elem_size(kn_mm_type t, bool is_c) {
  if (t == KN_MM_I8_I32) return is_c ? 4 : 1;
  return t == KN_MM_F64 ? 8 : 4;
}

/* Splits a's terms into the matrix layout over (row, col, batch) dims.  A
 * dim's stride may have a constant part and one live-value part (ld = n + 8
 * arrives as 4*n*r + 32*r): the host then passes value + constant.  The
 * offset may be a sum of live values, each times a constant (a column of
 * a column-major C inside the loop over its columns: `C + 4*(j*ldc)`, j's
 * loop around the nest): the host passes that sum (kn_bind's more). */
static bool layout(kr_ctx *c, const kr_affine *a, int row, int col, int batch, unsigned esize,
                   kn_layout *out) {
  kn_size *stride[3] = {&out->row_stride, &out->col_stride, &out->batch_stride};
  int dims[3] = {row, col, batch};
  int64_t konst[3] = {0, 0, 0};
  LLVMValueRef param[3] = {NULL, NULL, NULL};
  kn_bind offset = {.kind = KN_BIND_VALUE, .addend = a->c};
  int noffset = 0;
  memset(out, 0, sizeof *out);
  /* rows through a table (`A[i][k]` of a `float **A`): the row pointer's
   * loop must be the row dim, which then has no stride */
  LLVMValueRef row_ptr;
  if (!kr_row_term(c, a, &row_ptr)) return false;
  if (row_ptr) {
    kr_affine table;
    int td;
    if (!kr_row_load(c, row_ptr, &table, &td) || td != row || batch >= 0)
      return kr_fail(c, "a row pointer's table indexed by another loop than the matrix's rows");
    if (!kr_live_size(c, &table, &out->table)) return false;
    out->row_table = true;
  }
  for (int i = 0; i < a->n; i++) {
    const kr_term *t = &a->t[i];
    if (row_ptr && t->param == row_ptr) continue;
    if (t->dim < 0) {
      if (noffset > KN_BIND_MORE) return kr_fail(c, "matrix layout not expressible");
      if (noffset == 0) {
        offset.value = t->param;
        offset.coeff = t->coeff == 1 ? 0 : t->coeff;
      } else {
        offset.more[noffset - 1] = t->param;
        offset.more_coeff[noffset - 1] = t->coeff;
      }
      noffset++;
      continue;
    }
    int k = 0;
    while (k < 3 && dims[k] != t->dim) k++;
    if (k == 3) return kr_fail(c, "not a matmul access pattern");
    if (t->param) {
      if (param[k] || t->coeff != (int64_t)esize) return kr_fail(c, "matrix layout not expressible");
      param[k] = t->param;
    } else {
      konst[k] += t->coeff;
    }
  }
  if (row_ptr && (konst[0] || param[0])) return kr_fail(c, "rows through a table that also move with the row's loop");
  for (int k = 0; k < 3; k++) {
    if (konst[k] % (int64_t)esize) return kr_fail(c, "misaligned matrix stride");
    int64_t elems = konst[k] / (int64_t)esize;
    if (!param[k]) {
      *stride[k] = (kn_size){false, elems};
      continue;
    }
    int p = kr_param(c, (kn_bind){.kind = KN_BIND_VALUE, .value = param[k], .addend = elems});
    if (p < 0) return kr_fail(c, "too many live values");
    *stride[k] = (kn_size){true, p};
  }
  if (!noffset) {
    out->offset = (kn_size){false, a->c};
    return true;
  }
  /* base pointer (and more live values) + constant: the host passes the sum */
  int p = kr_param(c, offset);
  if (p < 0) return kr_fail(c, "too many live values");
  out->offset = (kn_size){true, p};
  return true;
}

/* Whether two products of the batch provably write some C element twice:
 * with constant sizes and strides, C's (batch, row, col) strides sorted
 * must each pass everything the smaller ones reach (mixed radix, as the
 * runtime's check), a live batch count taken as 2 (the least that can
 * collide).  Live sizes and strides are left to the runtime's pre-launch
 * check. */
static bool batches_collide(const kn_matmul *mm) {
  const kn_layout *l = &mm->c;
  if (!mm->batched || l->batch_stride.is_param || mm->m.is_param || mm->n.is_param ||
      l->row_stride.is_param || l->col_stride.is_param)
    return false;
  int64_t stride[3] = {l->batch_stride.value, l->row_stride.value, l->col_stride.value};
  /* a live count collides from two products on, if at all */
  int64_t ext[3] = {mm->batch.is_param ? 2 : mm->batch.value, mm->m.value, mm->n.value};
  int64_t ss[3], se[3];
  int n = 0;
  for (int d = 0; d < 3; d++) {
    if (ext[d] <= 1) continue;
    int64_t st = stride[d] < 0 ? -stride[d] : stride[d];
    int at = n++;
    for (; at > 0 && ss[at - 1] > st; at--) ss[at] = ss[at - 1], se[at] = se[at - 1];
    ss[at] = st;
    se[at] = ext[d];
  }
  __int128 reach = 1;
  for (int i = 0; i < n; i++) {
    if (ss[i] < reach) return true;
    reach += (__int128)ss[i] * (se[i] - 1);
  }
  return false;
}

static bool same_size(kn_size x, kn_size y) { return x.is_param == y.is_param && x.value == y.value; }

/* The mirror store of an upper triangle (`cov[j][i] = cov[i][j]`, taken
 * by take_mirror): at C's element (j, i), C's layout with its row and
 * column swapped, over the square (m = n, the rectangle upper_trip
 * gives).  Its range is written too: the runtime's overlap check of C
 * against A and B then covers both stores. */
static bool mirror_store(kr_ctx *c, const mm_parts *m, kn_matmul *mm) {
  static const char *const why = "a second store of each sum other than at C's transposed element";
  kr_affine at = address_one_copy(c, LLVMGetOperand(m->mirror, 1));
  kn_layout t;
  if (!at.ok || !layout(c, &at, m->dj, m->di, m->db, elem_size(m->type, true), &t)) return kr_fail(c, why);
  if (!same_size(t.offset, mm->c.offset) || !same_size(t.row_stride, mm->c.row_stride) ||
      !same_size(t.col_stride, mm->c.col_stride))
    return kr_fail(c, why);
  if (!kr_add_range(c, &at, elem_size(m->type, true), true)) return false;
  mm->tri.mirror = true;
  return true;
}

/* `y[i] = s > 0 ? s : 0` after the k loop (split_act) as the
 * descriptor's *out: floats, the constants of C's type (cs bytes), not
 * NaN (their payload kept through a double is no promise). */
static bool act_desc(kr_ctx *c, const mm_parts *m, const mm_act *q, unsigned cs, kn_mm_act *out) {
  LLVMBool lost = false;
  double k = LLVMConstRealGetDouble(q->cmp, &lost), sel = LLVMConstRealGetDouble(q->sel, &lost);
  if ((m->type != KN_MM_F32 && m->type != KN_MM_F64) || LLVMABISizeOfType(c->td, LLVMTypeOf(q->cmp)) != cs ||
      LLVMABISizeOfType(c->td, LLVMTypeOf(q->sel)) != cs || lost || k != k || sel != sel)
    return kr_fail(c, "a compare and select after the sum of integers or with a NaN");
  *out = (kn_mm_act){.on = true, .pred = (unsigned)q->pred, .left = q->left, .when_true = q->when_true,
                     .cmp = k, .sel = sel, .mul = q->mul, .mul_first = q->mul_first,
                     .nan_add = q->nan_add, .add_first = q->add_first};
  return true;
}

/* The diagonal store of a strict upper triangle (`corr[i][i] = 1.0` in
 * the i loop, taken by take_diag): a float constant of C's type at C's
 * element (i, i), C's offset with its row and column strides summed on i
 * (constants: layout puts both on the row), its range written. */
static bool diag_store(kr_ctx *c, const mm_parts *m, kn_matmul *mm, bool accumulate) {
  static const char *const why = "a store in the product's i loop other than a constant at C[i][i]";
  LLVMValueRef v = LLVMGetOperand(m->diag, 0);
  unsigned esize = elem_size(m->type, true);
  bool fl = m->type == KN_MM_F32 || m->type == KN_MM_F64;
  /* a double constant, or its bits (clang stores `1.0` as an i64) */
  bool konst = (LLVMIsAConstantFP(v) || LLVMIsAConstantInt(v)) && LLVMABISizeOfType(c->td, LLVMTypeOf(v)) == esize;
  if (!fl || !konst || accumulate || !c->tri_upper || c->tri_add != 1) return kr_fail(c, why);
  kr_affine at = kr_address(c, LLVMGetOperand(m->diag, 1));
  kn_layout d;
  if (!at.ok || !layout(c, &at, m->di, m->di, m->db, elem_size(m->type, true), &d)) return kr_fail(c, why);
  const kn_layout *l = &mm->c;
  if (!same_size(d.offset, l->offset) || d.row_stride.is_param || l->row_stride.is_param || l->col_stride.is_param ||
      d.row_stride.value != l->row_stride.value + l->col_stride.value)
    return kr_fail(c, why);
  if (!kr_add_range(c, &at, elem_size(m->type, true), true)) return false;
  uint64_t bits;
  if (LLVMIsAConstantInt(v)) {
    bits = LLVMConstIntGetZExtValue(v);
  } else {
    LLVMBool lost = 0;
    double x = LLVMConstRealGetDouble(v, &lost);
    if (lost || x != x) return kr_fail(c, why); /* NaN payloads: not carried */
    if (m->type == KN_MM_F32) {
      float f = (float)x;
      uint32_t b32;
      memcpy(&b32, &f, sizeof b32);
      bits = b32;
    } else {
      memcpy(&bits, &x, sizeof bits);
    }
  }
  mm->tri.diag = true;
  mm->tri.diag_bits = bits;
  return true;
}

static bool finish(kr_ctx *c, const mm_parts *m, bool accumulate) {
  kn_matmul *mm = &c->out->desc.matmul;
  kn_size n = m->dj == NO_DIM ? (kn_size){false, 1} : c->trips[m->dj];
  kn_size rows = m->di == NO_DIM ? (kn_size){false, 1} : c->trips[m->di];
  *mm = (kn_matmul){.m = rows, .n = n, .k = c->trips[m->dk], .type = m->type,
                    .a_signed = m->a_signed, .b_signed = m->b_signed, .accumulate = accumulate, .align = 1};
  if (m->db >= 0) {
    mm->batched = true;
    mm->batch = c->trips[m->db];
  }
  unsigned ab = elem_size(m->type, false), cs = elem_size(m->type, true);
  if (!layout(c, &m->a, m->di, m->dk, m->db, ab, &mm->a) || !layout(c, &m->b, m->dk, m->dj, m->db, ab, &mm->b) ||
      !layout(c, &m->c, m->di, m->dj, m->db, cs, &mm->c))
    return false;
  mm->has_start = m->has_start;
  if (m->has_start && (!layout(c, &m->s, m->di, m->dj, m->db, cs, &mm->start) ||
                       !kr_add_range(c, &m->s, cs, false)))
    return false;
  const mm_factor *factors[3] = {&m->fa, &m->fb, &m->fs};
  kn_mm_scale *scales[3] = {&mm->a_scale, &mm->b_scale, &mm->start_scale};
  for (int i = 0; i < 3; i++) {
    if (!factors[i]->factor) continue;
    int p = kr_param(c, (kn_bind){.kind = KN_BIND_VALUE, .value = factors[i]->factor});
    if (p < 0) return kr_fail(c, "too many live values");
    *scales[i] = (kn_mm_scale){.on = true, .first = factors[i]->first, .param = (unsigned)p};
  }
  if (m->two) {
    /* syr2k's term (product_pair): a whole nest only, no batch */
    if (m->db >= 0 || (c->slice && !(c->region && c->slice == c->region->stores)) || c->forward || c->stored)
      return kr_fail(c, "two products summed per term inside a batch loop or a nest of several parts");
    kn_mm_second *s2 = &mm->second;
    s2->on = true;
    if (!layout(c, &m->a2, m->di, m->dk, m->db, ab, &s2->a) || !layout(c, &m->b2, m->dk, m->dj, m->db, ab, &s2->b))
      return false;
    const mm_factor *f2[2] = {&m->fa2, &m->fb2};
    kn_mm_scale *sc2[2] = {&s2->a_scale, &s2->b_scale};
    for (int i = 0; i < 2; i++) {
      if (!f2[i]->factor) continue;
      int p = kr_param(c, (kn_bind){.kind = KN_BIND_VALUE, .value = f2[i]->factor});
      if (p < 0) return kr_fail(c, "too many live values");
      *sc2[i] = (kn_mm_scale){.on = true, .first = f2[i]->first, .param = (unsigned)p};
    }
    if (!kr_add_range(c, &m->a2, ab, false) || !kr_add_range(c, &m->b2, ab, false)) return false;
  }
  if (m->post.factor) {
    /* `C[i][j] = sum / d` after the k loop: floats only (split_post) */
    const mm_post *q = &m->post;
    if (m->type != KN_MM_F32 && m->type != KN_MM_F64) return kr_fail(c, "an integer sum scaled before its store");
    mm->post = (kn_mm_post){.on = true, .div = q->div, .add = q->add, .sub = q->sub, .first = q->first};
    if (q->elem) {
      /* `r[i] = b[i] - sum`: an element at the output's own index (C's
       * dims, no other), of C's type, read (the runtime checks C's
       * range against it as against A's and B's).  C's own element
       * (`y[i] += sum` after the k loop, `x[i] = x[i] + W o`: a
       * residual connection) is read only by the thread that stores
       * it, before it stores it: no range of its own (C's write range
       * covers its bounds), so the overlap check does not refuse it */
      if (LLVMABISizeOfType(c->td, LLVMTypeOf(q->factor)) != cs)
        return kr_fail(c, "an element of another type after the sum");
      bool own = kr_same_affine(&q->e, &m->c);
      if (!layout(c, &q->e, m->di, m->dj, m->db, cs, &mm->post.e) || (!own && !kr_add_range(c, &q->e, cs, false)))
        return kr_fail(c, "an element after the sum at another index than the output's");
      mm->post.elem = true;
    } else {
      int p = kr_param(c, (kn_bind){.kind = KN_BIND_VALUE, .value = q->factor});
      if (p < 0) return kr_fail(c, "too many live values");
      mm->post.param = (unsigned)p;
    }
  }
  if (m->blend.on) {
    /* `C = alpha*sum + beta*C` (split_blend): C's own element, or one of
     * another matrix the nest does not write (a range read), of C's type */
    const mm_blend *q = &m->blend;
    if (m->type != KN_MM_F32 && m->type != KN_MM_F64) return kr_fail(c, "an integer sum scaled before its store");
    kn_mm_blend *bl = &mm->blend;
    *bl = (kn_mm_blend){.on = true, .first = q->first, .scaled = q->factor != NULL, .scale_first = q->scale_first,
                        .guarded = q->guard != NULL, .guard_on = q->guard_on};
    bool own = kr_same_affine(&q->e, &m->c);
    /* another array's element in one part of several (gesummv's `y =
     * alpha*tmp + beta*y`, tmp another part's output): the split's own
     * epilogue map takes it, its read forwarded (kn_recog_split.c) */
    if (!own && ((c->slice && !(c->region && c->slice == c->region->stores)) || c->forward || c->stored))
      return kr_fail(c, "an element of another array added after the sum in a nest of several parts");
    if (!layout(c, &q->e, m->di, m->dj, m->db, cs, &bl->e) || (!own && !kr_add_range(c, &q->e, cs, false)))
      return kr_fail(c, "an element after the sum at another index than the output's");
    LLVMValueRef vals[2] = {q->factor, q->guard};
    unsigned *at[2] = {&bl->param, &bl->guard_param};
    for (int i = 0; i < 2; i++) {
      if (!vals[i]) continue;
      if (i == 0 && LLVMABISizeOfType(c->td, LLVMTypeOf(vals[i])) != cs)
        return kr_fail(c, "an element after the sum scaled by a value of another type");
      int p = kr_param(c, (kn_bind){.kind = KN_BIND_VALUE, .value = vals[i]});
      if (p < 0) return kr_fail(c, "too many live values");
      *at[i] = (unsigned)p;
    }
  }
  if (m->act.on && (!act_desc(c, m, &m->act, cs, &mm->act) || (m->act2.on && !act_desc(c, m, &m->act2, cs, &mm->act2))))
    return false;
  if (batches_collide(mm)) return kr_fail(c, "products of the batch write the same elements of C");
  /* Rows (columns) of outputs on one element, `*y = s` in the i loop: the
   * CPU keeps the last sum, a kernel's threads would race for it (the
   * runtime's check of distinct writes takes a dim with no stride at all
   * for the k loop). */
  if ((mm->m.is_param || mm->m.value > 1) && !mm->c.row_table && !mm->c.row_stride.is_param &&
      mm->c.row_stride.value == 0)
    return kr_fail(c, "every row's sum stored to one element of C");
  if ((mm->n.is_param || mm->n.value > 1) && !mm->c.col_stride.is_param && mm->c.col_stride.value == 0)
    return kr_fail(c, "every column's sum stored to one element of C");
  if ((m->mirror || m->diag) && !(c->tri && c->tri_upper)) return kr_fail(c, "stores to more than one array");
  if (c->tri) {
    /* j runs to i + add on row i (from i on an upper triangle): the
     * product's triangle; a count that depends on another outer loop
     * (trmm's k from i + 1) is none */
    if (m->db >= 0 || c->tri_dim != m->dj || c->tri_outer != m->di || (!c->tri_upper && c->tri_add != 1))
      return kr_fail(c, "a loop's count depends on an outer loop, other than a triangle's j <= i or j >= i");
    /* j moves C: the bounds check of C's corner (m-1, m-1) then bounds m
     * below 2^32, which triangle_trip and never_skips rely on */
    if (mm->c.col_stride.is_param || mm->c.col_stride.value == 0)
      return kr_fail(c, "a product over a triangle whose j does not move C by a constant");
    mm->tri = (kn_mm_tri){.on = true, .add = c->tri_add, .upper = c->tri_upper};
  }
  if (m->mirror && !mirror_store(c, m, mm)) return false;
  if (m->diag && !diag_store(c, m, mm, accumulate)) return false;
  if (!kr_add_range(c, &m->a, ab, false) || !kr_add_range(c, &m->b, ab, false) ||
      !kr_add_range(c, &m->c, cs, true))
    return false;
  c->out->check_overlap = true;
  c->out->desc.kind = KN_MATMUL;
  return true;
}

/* Whether the guard (count = guard == enters ? n : 0) passing implies
 * x >= lo as a signed value: `x < k` or `x <= k` failing, `x > k` or
 * `x >= k` holding, k large enough. */
static bool guard_implies_at_least(LLVMValueRef guard, bool enters, LLVMValueRef x, int64_t lo) {
  if (!guard || !LLVMIsAICmpInst(guard)) return false;
  LLVMIntPredicate p = LLVMGetICmpPredicate(guard);
  LLVMValueRef a = LLVMGetOperand(guard, 0), k = LLVMGetOperand(guard, 1);
  if (a != x) {
    if (k != x) return false;
    k = a;
    p = ir_swapped_pred(p);
  }
  if (!LLVMIsAConstantInt(k)) return false;
  int64_t kv = LLVMConstIntGetSExtValue(k);
  if (!enters) p = p == LLVMIntSLT ? LLVMIntSGE : p == LLVMIntSLE ? LLVMIntSGT : LLVMIntEQ;
  return (p == LLVMIntSGE && kv >= lo) || (p == LLVMIntSGT && kv >= lo - 1);
}

/* b without a mask `b & M` that keeps bits 0-30 (what the re-roll leaves
 * on one loop of two): the same value whenever b >= 0. */
static LLVMValueRef unmasked(LLVMValueRef b) {
  if (LLVMIsABinaryOperator(b) && LLVMGetInstructionOpcode(b) == LLVMAnd &&
      LLVMIsAConstantInt(LLVMGetOperand(b, 1)) && LLVMGetIntTypeWidth(LLVMTypeOf(b)) == 32 &&
      (LLVMConstIntGetZExtValue(LLVMGetOperand(b, 1)) & 0x7fffffffu) == 0x7fffffffu)
    return LLVMGetOperand(b, 0);
  return b;
}

/* A guard `g | bound == 0` that skips the loop when true (the re-roll's
 * bypass for a zero count, or-ed into the loop's own test): g, and true. */
static bool strip_zero_bypass(LLVMValueRef *guard, bool enters, LLVMValueRef bound) {
  LLVMValueRef g = *guard;
  if (enters || !g || !LLVMIsABinaryOperator(g) || LLVMGetInstructionOpcode(g) != LLVMOr) return false;
  for (unsigned k = 0; k < 2; k++) {
    LLVMValueRef t = LLVMGetOperand(g, k);
    if (LLVMIsAICmpInst(t) && LLVMGetICmpPredicate(t) == LLVMIntEQ &&
        unmasked(LLVMGetOperand(t, 0)) == unmasked(bound) && LLVMIsAConstantInt(LLVMGetOperand(t, 1)) &&
        LLVMConstIntGetZExtValue(LLVMGetOperand(t, 1)) == 0) {
      *guard = LLVMGetOperand(g, 1 - k);
      return true;
    }
  }
  return false;
}

/* Whether two loop counts are equal whenever the loops run: the same
 * constant or param, or two trip params whose tests differ only in a bound
 * x against `x & 0x7fffffff`, or in a bypass `| bound == 0` of one guard,
 * where the guard they share admits only x >= 0 (x >= 1 with a bypass:
 * it never decides). */
static bool same_count(const kr_ctx *c, kn_size x, kn_size y) {
  if (x.is_param != y.is_param) return false;
  if (!x.is_param || x.value == y.value) return x.value == y.value;
  const kn_bind *bx = &c->out->binds[x.value], *by = &c->out->binds[y.value];
  if (bx->kind != KN_BIND_TRIP || by->kind != KN_BIND_TRIP || bx->scale != by->scale ||
      bx->top_tested != by->top_tested)
    return false;
  const ir_trip *tx = bx->trip, *ty = by->trip;
  if (tx->kind != IR_TRIP_SYMBOLIC || ty->kind != IR_TRIP_SYMBOLIC || tx->step != ty->step ||
      tx->pred != ty->pred || tx->cmp_next != ty->cmp_next || tx->start_add != ty->start_add ||
      tx->bits != ty->bits || tx->start != ty->start)
    return false;
  LLVMValueRef gx = bx->guard, gy = by->guard;
  bool bypass = strip_zero_bypass(&gx, bx->guard_enters, tx->bound);
  bypass |= strip_zero_bypass(&gy, by->guard_enters, ty->bound);
  if (gx != gy || (gx && bx->guard_enters != by->guard_enters)) return false;
  LLVMValueRef plain = unmasked(tx->bound);
  if (plain != unmasked(ty->bound)) return false;
  if (tx->bound == ty->bound && !bypass) return true;
  return tx->bits == 32 && guard_implies_at_least(gx, bx->guard_enters, plain, bypass ? 1 : 0);
}

/* Whether loop p (entered on every iteration of their parent: kr_loop_trip)
 * runs before loop l in each: p's header dominates l's, or the branch
 * deciding whether p runs (the end of the straight path into p) does. */
static bool runs_before(const kr_ctx *c, const ir_loop *p, const ir_loop *l) {
  if (ir_dominates(c->dom, p->header, l->header)) return true;
  int x = p->header, entry = -1;
  const ir_block *h = &c->cfg->blocks[x];
  for (int i = 0; i < h->npreds; i++) {
    if (p->in_body[h->preds[i]]) continue;
    if (entry >= 0) return false;
    entry = h->preds[i];
  }
  for (int n = 0; entry >= 0 && n < 64; n++) {
    const ir_block *b = &c->cfg->blocks[entry];
    if (b->nsuccs != 1) return entry != l->header && ir_dominates(c->dom, entry, l->header);
    if (b->npreds != 1) return false;
    entry = b->preds[0];
  }
  return false;
}

/* The prologue of an ikj product (build_chain): `C[i][j] = C[i][j] * f`
 * (or f * C[i][j]) on every i, before the k loop, over the product's j:
 * each sum then starts from C's element scaled by f, which the kernel
 * computes the same way (m->fs).  Its one store is C's, so the runtime's
 * overlap check of C against A and B covers it too. */
static bool prologue_scale(kr_ctx *c, mm_parts *m) {
  const ir_loop *p = c->prologue, *kl = c->chain[c->depth - 2], *il = c->chain[c->depth - 3];
  static const char *const why = "a loop before the product's k loop that is not `C[i][j] *= factor`";
  LLVMValueRef store = NULL;
  if (c->slice && !c->region) return kr_fail(c, why); /* one part of several: not taken */
  for (int b = 0; b < p->nbody; b++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(c->cfg->blocks[p->body[b]].bb); i; i = LLVMGetNextInstruction(i))
      if (LLVMIsAStoreInst(i)) {
        if (store) return kr_fail(c, why);
        store = i;
      }
  /* one exit: its test's count is the count (no break out of it) */
  bool before = c->pregion ? kr_region_before(c, c->pregion, kl) : runs_before(c, p, kl); /* kn_lanes_region.c */
  if (!store || p->nexits != 1 || p->trip.other_exits || !before) return kr_fail(c, why);
  mm_factor f;
  LLVMValueRef v = LLVMGetOperand(store, 0), x = split_factor(c, v, &f);
  kn_type t;
  bool fl = kr_type_of(LLVMTypeOf(v), &t) && ((t == KN_F32 && m->type == KN_MM_F32) || (t == KN_F64 && m->type == KN_MM_F64));
  if (!f.factor || !fl) return kr_fail(c, why);
  /* the prologue's counter is the product's virtual j, whatever copies
   * the j loop was unrolled into */
  kr_affine at = address_one_copy(c, LLVMGetOperand(store, 1)), from = address_one_copy(c, LLVMGetOperand(x, 0));
  if (!at.ok || !from.ok || !kr_same_affine(&at, &m->c) || !kr_same_affine(&from, &m->c)) return kr_fail(c, why);
  kn_size n;
  if (!kr_loop_trip(c, p, il, 1, &n)) return false;
  /* over the product's triangle (the same row's j <= i) or its rectangle */
  bool tri_j = c->tri && c->tri_dim == c->depth - 1;
  if (c->last_tri != tri_j || !same_count(c, n, c->trips[c->depth - 1]))
    return kr_fail(c, "a loop before the product's k loop may run over other columns than the product");
  m->fs = f;
  return true;
}

/* ikj: every copy of `C = C + A*B` in the innermost (j) loop. */
static bool matmul_ikj(kr_ctx *c, LLVMValueRef *stores, int n, const int *copy_of) {
  mm_parts m0 = parts_at(c, true);
  for (int copy = 0; copy < n; copy++) {
    int s = 0;
    while (copy_of[s] != copy) s++;
    c->copy = copy;
    mm_parts m = m0;
    m.two = false; /* each copy's own term says (same_second compares) */
    LLVMValueRef sum = LLVMGetOperand(stores[s], 0);
    LLVMOpcode op = LLVMIsABinaryOperator(sum) ? LLVMGetInstructionOpcode(sum) : 0;
    /* `C - term` (a float): C + the term negated (negate_term) */
    if (op != LLVMAdd && op != LLVMFAdd && op != LLVMFSub) return kr_fail(c, "not a matmul update");
    m.c = kr_address(c, LLVMGetOperand(stores[s], 1));
    int k = op == LLVMFSub || LLVMIsALoadInst(LLVMGetOperand(sum, 0)) ? 0 : 1;
    LLVMValueRef old = LLVMGetOperand(sum, (unsigned)k);
    kr_affine o = LLVMIsALoadInst(old) ? kr_address(c, LLVMGetOperand(old, 0)) : (kr_affine){0};
    if (!m.c.ok || !o.ok || !kr_same_affine(&o, &m.c)) return kr_fail(c, "loop-carried dependence");
    if (!term(c, LLVMGetOperand(sum, (unsigned)(1 - k)), &m, op != LLVMAdd) || kr_coeff(&m.c, m.dk))
      return kr_fail(c, "not a matmul access pattern");
    if (op == LLVMFSub && !negate_term(c, &m, LLVMTypeOf(sum))) return false;
    if (copy == 0) m0 = m;
    else if (m.type != m0.type || !kr_same_affine(&m.a, &m0.a) || !kr_same_affine(&m.b, &m0.b) ||
             !kr_same_affine(&m.c, &m0.c) || !same_factor(&m.fa, &m0.fa) || !same_factor(&m.fb, &m0.fb) ||
             !same_second(&m, &m0))
      return kr_fail(c, "unrolled copies differ");
  }
  if (c->prologue && !prologue_scale(c, &m0)) return false;
  return finish(c, &m0, true);
}

static LLVMValueRef uncast(LLVMValueRef v) {
  while (v && (LLVMIsAZExtInst(v) || LLVMIsASExtInst(v) || LLVMIsATruncInst(v))) v = LLVMGetOperand(v, 0);
  return v;
}

/* Whether incoming value k of phi v is the k loop's checked copy's
 * (c->twin, build_chain): the fast copy's value where the copy ran. */
static bool from_twin(const kr_ctx *c, LLVMValueRef v, unsigned k) {
  const ir_loop *twin = c->twin[c->depth - 1];
  return twin && ir_loop_defines(twin, LLVMGetIncomingValue(v, k), c->cfg);
}

/* The incoming values of phi v other than the k loop's checked copy's:
 * how many (up to 2, 3 when more), their indices in at. */
static unsigned own_incoming(const kr_ctx *c, LLVMValueRef v, unsigned *at) {
  unsigned n = 0;
  for (unsigned k = 0; k < LLVMCountIncoming(v); k++)
    if (!from_twin(c, v, k)) {
      if (n == 2) return 3;
      at[n++] = k;
    }
  return n;
}

/* v, or the latch value when v is a phi of it and the checked copy's. */
static LLVMValueRef past_twin(const kr_ctx *c, LLVMValueRef v, LLVMValueRef latch) {
  unsigned at[2];
  if (!v || !LLVMIsAPHINode(v) || !c->twin[c->depth - 1] || LLVMCountIncoming(v) < 2 ||
      own_incoming(c, v, at) != 1)
    return v;
  return LLVMGetIncomingValue(v, at[0]) == latch ? latch : v;
}

/* The stored value phi(0 from a guard, the sum from the k loop), where the
 * guard is the k loop's own test on its start value, so that the sum is
 * empty exactly when the top-tested loop of the source runs 0 times.  The
 * k dim then counts that loop's iterations (a guarded trip param).
 * The checked copy's value (c->twin) does not count as an incoming one. */
static bool guarded_sum(kr_ctx *c, LLVMValueRef v, LLVMValueRef latch, LLVMValueRef init) {
  const ir_loop *kl = c->chain[c->depth - 1];
  const ir_trip *t = &kl->trip;
  unsigned at[2];
  if (!LLVMIsAPHINode(v) || own_incoming(c, v, at) != 2 || t->kind != IR_TRIP_SYMBOLIC || !t->cmp_next ||
      t->start_add)
    return false;
  int s = LLVMGetIncomingValue(v, at[0]) == latch ? 0 : LLVMGetIncomingValue(v, at[1]) == latch ? 1 : -1;
  if (s < 0) return false;
  unsigned zi = at[1 - s];
  LLVMValueRef z = LLVMGetIncomingValue(v, zi);
  mm_factor f;
  bool zero = (LLVMIsAConstantInt(z) && LLVMConstIntGetZExtValue(z) == 0) ||
              (LLVMIsAConstantFP(z) && LLVMIsNull(z)) || /* +0.0: the kernel's empty sum */
              (z == init && LLVMIsALoadInst(split_factor(c, init, &f))); /* the sum's own start */
  LLVMBasicBlockRef g = LLVMGetIncomingBlock(v, zi);
  LLVMValueRef br = LLVMGetBasicBlockTerminator(g);
  LLVMBasicBlockRef after = LLVMGetInstructionParent(v);
  /* the skip through a block of its own (a critical edge split, GVN's
   * PRE putting `4 * j` there): its one predecessor's branch is the
   * guard, the block computes nothing else */
  if (br && LLVMIsABranchInst(br) && !LLVMIsConditional(br) && g != after) {
    int gi = ir_cfg_index(c->cfg, g);
    bool pure = gi >= 0 && c->cfg->blocks[gi].npreds == 1;
    for (LLVMValueRef i = LLVMGetFirstInstruction(g); pure && i != br; i = LLVMGetNextInstruction(i))
      pure = !LLVMIsAPHINode(i) && !LLVMIsALoadInst(i) && !LLVMIsAStoreInst(i) && !LLVMIsACallInst(i);
    if (pure) {
      after = g;
      g = c->cfg->blocks[c->cfg->blocks[gi].preds[0]].bb;
      br = LLVMGetBasicBlockTerminator(g);
    }
  }
  if (!zero || !br || !LLVMIsABranchInst(br) || !LLVMIsConditional(br) ||
      ir_loop_contains_block(kl, g, c->cfg))
    return false;
  LLVMValueRef cmp = LLVMGetCondition(br);
  /* one edge skips the loop to the phi, the other enters it */
  bool skip_on_false = LLVMGetSuccessor(br, 1) == after && LLVMGetSuccessor(br, 0) != after;
  bool skip_on_true = LLVMGetSuccessor(br, 0) == after && LLVMGetSuccessor(br, 1) != after;
  if (!skip_on_false && !skip_on_true) return false;
  /* a guard computed before the nest (LICM hoists `K > 0`), or one the
   * host computes the same (kr_host_value: `m->cols < 1` on a struct
   * field loaded in the nest): the host passes count = guard == enters ?
   * count : 0 */
  kn_bind guard = {.kind = KN_BIND_TRIP, .trip = t, .scale = 1, .guard = cmp, .guard_enters = skip_on_false};
  bool host = kr_host_value(c, cmp, 0);
  if (!ir_loop_defines(kr_nest(c), cmp, c->cfg) || (host && !(LLVMIsAICmpInst(cmp) && skip_on_false))) {
    int param = kr_param(c, guard);
    if (param < 0) return kr_fail(c, "too many live values");
    c->trips[c->depth - 1] = (kn_size){true, param};
    return true;
  }
  if (!LLVMIsAICmpInst(cmp) || !skip_on_false) return false;
  LLVMIntPredicate p = LLVMGetICmpPredicate(cmp);
  LLVMValueRef x = uncast(LLVMGetOperand(cmp, 0)), y = uncast(LLVMGetOperand(cmp, 1));
  LLVMValueRef start = uncast(t->start), bound = uncast(t->bound);
  bool same = (x == start && y == bound && p == t->pred) ||
              (x == bound && y == start && ir_swapped_pred(p) == t->pred);
  /* constants compare by value: `0 < K` arrives as `K > 0` */
  if (!same && LLVMIsAConstantInt(start)) {
    if (LLVMIsAConstantInt(y) && x == bound && ir_swapped_pred(p) == t->pred)
      same = LLVMConstIntGetSExtValue(y) == LLVMConstIntGetSExtValue(start);
    if (LLVMIsAConstantInt(x) && y == bound && p == t->pred)
      same = LLVMConstIntGetSExtValue(x) == LLVMConstIntGetSExtValue(start);
  }
  if (!same && !host) return false;
  int param = kr_param(c, same ? (kn_bind){.kind = KN_BIND_TRIP, .trip = t, .scale = 1, .top_tested = true} : guard);
  if (param < 0) return kr_fail(c, "too many live values");
  c->trips[c->depth - 1] = (kn_size){true, param};
  return true;
}

/* A sum kept in memory (no `restrict`: clang cannot keep C[i][j] in a
 * register across the loads of A and B, so it stores the running sum on
 * every k iteration, after `C[i][j] = 0` or `= bias[j]` before the loop,
 * if any).  With C overlapping neither A nor B (the runtime's pre-launch
 * check, check_overlap) no load sees those stores, and memory ends as the
 * product with the sum stored once leaves it: the last stored sum, or for
 * K = 0 the value stored before the loop (the sum's start), or C untouched
 * when the sum starts from C itself. */
typedef struct {
  LLVMValueRef in_loop;    /* the store of the running sum */
  LLVMValueRef before;     /* the store before the k loop, or NULL */
  LLVMValueRef after;      /* the store of the finished sum after the k loop
                            * (`C[i][j] /= d`), or NULL (mem_sum_after) */
} mem_sum;

static bool zero_bits(LLVMValueRef v) {
  return (LLVMIsAConstantInt(v) && LLVMConstIntGetZExtValue(v) == 0) || (LLVMIsAConstantFP(v) && LLVMIsNull(v));
}

/* Whether stores (n of them) are that shape: one store in the k loop at an
 * address that does not move with k, and in the loop around it at most
 * one more before the k loop and one after it. */
static bool find_mem_sum(kr_ctx *c, LLVMValueRef *stores, int n, mem_sum *ms) {
  const ir_loop *kl = c->chain[c->depth - 1], *jl = c->chain[c->depth - 2];
  memset(ms, 0, sizeof *ms);
  if (n < 1 || n > 3) return false;
  for (int i = 0; i < n; i++) {
    LLVMBasicBlockRef bb = LLVMGetInstructionParent(stores[i]);
    LLVMValueRef *slot = NULL;
    if (ir_loop_contains_block(kl, bb, c->cfg)) slot = &ms->in_loop;
    else if (ir_loop_contains_block(jl, bb, c->cfg))
      slot = ir_dominates(c->dom, ir_cfg_index(c->cfg, bb), kl->header) ? &ms->before : &ms->after;
    if (!slot || *slot) return false;
    *slot = stores[i];
  }
  if (!ms->in_loop) return false;
  kr_affine a = kr_address(c, LLVMGetOperand(ms->in_loop, 1));
  return a.ok && !moves_with(&a, c->depth - 1);
}

/* The value C's element holds before the k loop is the sum's start init
 * (C's own, stored there, or zero bits of the element's size). */
static bool mem_sum_start(kr_ctx *c, const mem_sum *ms, const kr_affine *cel, LLVMValueRef init, unsigned esize) {
  if (!ms->before) {
    kr_affine o = init && LLVMIsALoadInst(init) ? kr_address(c, LLVMGetOperand(init, 0)) : (kr_affine){0};
    return o.ok && kr_same_affine(&o, cel);
  }
  kr_affine b = kr_address(c, LLVMGetOperand(ms->before, 1));
  LLVMValueRef v = LLVMGetOperand(ms->before, 0);
  if (!b.ok || !kr_same_affine(&b, cel) || LLVMABISizeOfType(c->td, LLVMTypeOf(v)) != esize) return false;
  return v == init || (init && zero_bits(v) && zero_bits(init));
}

/* The store after the k loop (ms->after), at the sum's cell, of the
 * finished sum maybe divided or scaled (split_post): the k loop's last
 * sum where it ran, the sum's start init where the loop's own test skips
 * it (guarded_sum's phi, in the store's block, so that the store runs on
 * both paths).  It overwrites the last running sum with what the kernel
 * stores, post(sum), also for an empty sum.  A phi of the loop's exit
 * alone only where the k count is a constant (the loop is never
 * skipped), the sum itself where the loop runs on every j (below). */
static bool mem_sum_after(kr_ctx *c, const mem_sum *ms, LLVMValueRef latch, LLVMValueRef init, mm_post *post,
                          mm_blend *blend, mm_act *act, mm_act *act2) {
  static const char *const why = "a store after the k loop other than the sum, divided or scaled";
  LLVMValueRef x = split_post(c, split_blend(c, split_act(c, LLVMGetOperand(ms->after, 0), act, act2), blend), post);
  kr_affine a = kr_address(c, LLVMGetOperand(ms->after, 1)), cell = kr_address(c, LLVMGetOperand(ms->in_loop, 1));
  if (!a.ok || !cell.ok || !kr_same_affine(&a, &cell)) return kr_fail(c, why);
  /* the cell's own element added after the loop reads the last running
   * sum there, not what C held before (the kernel's read) */
  if (blend->on && kr_same_affine(&blend->e, &cell)) return kr_fail(c, why);
  /* the sum itself (-O3 unswitches `K > 0` out of the nest): the k loop
   * and the store both run on every j iteration (their blocks dominate
   * the j loop's latch), the k loop at least once */
  const ir_loop *kl = c->chain[c->depth - 1], *jl = c->chain[c->depth - 2];
  int at = ir_cfg_index(c->cfg, LLVMGetInstructionParent(ms->after));
  if (x == latch)
    return ir_dominates(c->dom, kl->header, jl->latches[0]) && ir_dominates(c->dom, at, jl->latches[0])
               ? true : kr_fail(c, why);
  if (!LLVMIsAPHINode(x) || LLVMGetInstructionParent(x) != LLVMGetInstructionParent(ms->after)) return kr_fail(c, why);
  bool ok = LLVMCountIncoming(x) == 1 ? LLVMGetIncomingValue(x, 0) == latch && !c->trips[c->depth - 1].is_param
                                      : guarded_sum(c, x, latch, init);
  return ok ? true : kr_fail(c, why);
}

static bool uses(LLVMValueRef v, LLVMValueRef x, int depth) {
  if (v == x) return true;
  if (depth > 16 || !LLVMIsAInstruction(v) || LLVMIsAPHINode(v)) return false;
  for (int k = 0; k < LLVMGetNumOperands(v); k++)
    if (uses(LLVMGetOperand(v, (unsigned)k), x, depth + 1)) return true;
  return false;
}

/* A sum kept in memory and read back on every k iteration: `C[i][j] =
 * C[i][j] + term` with the load and the store in one block of the k loop,
 * the load first, at the store's own address, and no other store of the
 * kernel in the k loop (ms).  LLVM keeps that form where another store
 * in the loop may alias C (bicg's s[j] beside q[i]).  With the stores of
 * the other parts of the nest writing bytes no part reads (the runtime's
 * check before the first launch, twasm_rt_offload_group) and C
 * overlapping neither A nor B (check_overlap), each load reads what the
 * previous iteration stored, or the value C held before the k loop on the
 * first: the same sum in the same order as a sum carried in a phi from
 * that start, which is what *ld (the load) then stands for. */
static bool reloaded_sum(kr_ctx *c, const mem_sum *ms, LLVMValueRef *ld, LLVMValueRef *latch, LLVMValueRef *term) {
  LLVMValueRef v = LLVMGetOperand(ms->in_loop, 0);
  LLVMOpcode op = LLVMIsABinaryOperator(v) ? LLVMGetInstructionOpcode(v) : 0;
  if (op != LLVMAdd && op != LLVMFAdd) return false;
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(ms->in_loop);
  kr_affine cell = kr_address(c, LLVMGetOperand(ms->in_loop, 1));
  for (unsigned k = 0; k < 2; k++) {
    LLVMValueRef x = LLVMGetOperand(v, k), t = LLVMGetOperand(v, 1 - k);
    if (!LLVMIsALoadInst(x) || LLVMGetInstructionParent(x) != bb || LLVMTypeOf(x) != LLVMTypeOf(v)) continue;
    kr_affine a = kr_address(c, LLVMGetOperand(x, 0));
    if (!a.ok || !cell.ok || !kr_same_affine(&a, &cell) || uses(t, x, 0)) continue;
    /* the load comes before the store in their block */
    LLVMValueRef i = x;
    while (i && i != ms->in_loop) i = LLVMGetNextInstruction(i);
    if (!i) continue;
    *ld = x, *latch = v, *term = t;
    return true;
  }
  return false;
}

/* The mirror (take_mirror) of a sum kept in memory with no store after
 * the k loop (correlation's `corr[j][i] = corr[i][j]` right after the
 * loop): its value is what C's element holds after the loop, the k
 * loop's last sum where the loop runs on every j (its header and the
 * mirror's block dominate the j loop's latch), or guarded_sum's phi of
 * that sum and the sum's start (0 or C's own value stored before). */
static bool mirror_of_sum(kr_ctx *c, const mem_sum *ms, LLVMValueRef mirror, LLVMValueRef latch, LLVMValueRef init) {
  if (!ms || ms->after) return false;
  LLVMValueRef v = LLVMGetOperand(mirror, 0);
  const ir_loop *kl = c->chain[c->depth - 1], *jl = c->chain[c->depth - 2];
  int at = ir_cfg_index(c->cfg, LLVMGetInstructionParent(mirror));
  if (v == latch) return ir_dominates(c->dom, kl->header, jl->latches[0]) && ir_dominates(c->dom, at, jl->latches[0]);
  return LLVMIsAPHINode(v) && LLVMGetInstructionParent(v) == LLVMGetInstructionParent(mirror) &&
         guarded_sum(c, v, latch, init);
}

/* The product of each unrolled copy of the sum's terms, all alike, into
 * m (whose dims say which loop is which). */
static bool copies_agree(kr_ctx *c, LLVMValueRef *terms, int nterms, const int *copy_of, mm_parts *m0) {
  mm_parts first = *m0;
  for (int copy = 0; copy < nterms; copy++) {
    int t = 0;
    while (copy_of[t] != copy) t++;
    c->copy = copy;
    mm_parts m = first;
    if (!product(c, terms[t], &m)) return false;
    if (copy == 0) first = m;
    else if (!kr_same_affine(&m.a, &first.a) || !kr_same_affine(&m.b, &first.b) || !same_factor(&m.fa, &first.fa) ||
             !same_factor(&m.fb, &first.fb))
      return kr_fail(c, "unrolled copies differ");
  }
  *m0 = first;
  return true;
}

/* ijk: the k loop sums products into a phi; the j loop stores it (or the k
 * loop, the sum kept in memory: ms, maybe read back each time). */
static bool matmul_ijk(kr_ctx *c, LLVMValueRef store, const mem_sum *ms, LLVMValueRef mirror, LLVMValueRef diag) {
  LLVMValueRef phi, latch, terms[MAX_COPIES];
  /* a prologue scales C only for matmul_ikj's j (prologue_scale) */
  if (c->prologue) return kr_fail(c, "loop nest is not a single chain of loops");
  int nterms, copy_of[MAX_COPIES];
  LLVMValueRef reloaded = NULL;
  /* an integer sum in lanes over its whole loop (kn_lanes_sum.c): lane l
   * is copy l of `lanes` copies of the scalar loop's term */
  kr_lane_sum ls;
  bool in_lanes = kr_lane_sum_find(c, c->chain[c->depth - 1], &ls);
  if (in_lanes) {
    phi = ls.phi;
    latch = ls.latch;
    nterms = (int)ls.lanes;
    for (int l = 0; l < nterms; l++) terms[l] = ls.term, copy_of[l] = l;
  } else if (!kr_sum_terms(c, &phi, &latch, terms, &nterms, copy_of)) {
    const char *why = c->reason;
    if (!ms || !reloaded_sum(c, ms, &reloaded, &latch, &terms[0])) return kr_fail(c, why);
    phi = reloaded;
    nterms = 1;
    copy_of[0] = 0;
  }
  c->copies = nterms;
  if (!kr_set_trips(c, (unsigned)nterms)) return false;
  mm_parts m0 = parts_at(c, false);
  bool agree = copies_agree(c, terms, nterms, copy_of, &m0);
  /* three loops where B moves with i (or A with j), which no layout of
   * the i, j, k reading takes: read once more as a batch of
   * matrix-vector products */
  if (c->depth == 3 && (!agree || moves_with(&m0.b, m0.di) || moves_with(&m0.a, m0.dj))) {
    const char *why = agree ? "not a matmul access pattern" : c->reason;
    c->reason = NULL;
    m0 = batched_matvec_parts();
    if (!copies_agree(c, terms, nterms, copy_of, &m0)) {
      c->reason = why;
      return false;
    }
  } else if (!agree) {
    return false;
  }
  LLVMValueRef init = NULL;
  if (reloaded) /* what C's element holds before the k loop */
    init = ms->before ? LLVMGetOperand(ms->before, 0) : reloaded;
  for (unsigned i = 0; !reloaded && i < LLVMCountIncoming(phi); i++)
    if (!ir_loop_contains_block(c->chain[c->depth - 1], LLVMGetIncomingBlock(phi, i), c->cfg)) init = LLVMGetIncomingValue(phi, i);
  LLVMValueRef v = LLVMGetOperand(store, 0);
  /* the sum divided or scaled as it is stored (`C[i][j] = sum / d`),
   * maybe then through a ReLU (`s > 0 ? s : 0`) */
  if (!ms) v = split_post(c, split_blend(c, split_act(c, v, &m0.act, &m0.act2), &m0.blend), &m0.post);
  if (LLVMIsAPHINode(v) && LLVMCountIncoming(v) == 1) v = LLVMGetIncomingValue(v, 0); /* LCSSA */
  v = past_twin(c, v, latch);
  /* an integer sum in lanes and its remainder (kn_lanes_region.c): its
   * result is init + the terms of [0, n), the sum R (the chain's k loop)
   * stands for, from the lanes' start */
  const kr_region *sr = c->region && c->region->sum && c->region->rep == c->chain[c->depth - 1] ? c->region : NULL;
  if (sr) {
    if (ms || reloaded || v != sr->result || nterms != sr->copies) return kr_fail(c, "stores something other than the sum");
    init = sr->init;
  } else if (in_lanes) {
    /* the lanes added up after the loop: the sum from zero */
    if (ms || reloaded || v != ls.hsum) return kr_fail(c, "stores something other than the sum");
    init = ls.init;
  } else if (ms ? v != latch || nterms != 1 : v != latch && !(nterms == 1 && guarded_sum(c, v, latch, init)))
    return kr_fail(c, "stores something other than the sum");
  c->copy = 0;
  c->copies = 1;
  m0.c = kr_address(c, LLVMGetOperand(store, 1));
  if (!m0.c.ok) return kr_fail(c, "non-affine address");
  if (ms && !mem_sum_start(c, ms, &m0.c, init, elem_size(m0.type, true)))
    return kr_fail(c, "a sum kept in memory starts from an unknown value");
  if (ms && ms->after && !mem_sum_after(c, ms, latch, init, &m0.post, &m0.blend, &m0.act, &m0.act2)) return false;
  if (mirror && LLVMGetOperand(mirror, 0) != LLVMGetOperand(ms && ms->after ? ms->after : store, 0) &&
      !mirror_of_sum(c, ms, mirror, latch, init))
    return kr_fail(c, "a second store of each sum other than at C's transposed element");
  bool zero = init && ((LLVMIsAConstantInt(init) && LLVMConstIntGetZExtValue(init) == 0) ||
                       (LLVMIsAConstantFP(init) && LLVMIsNull(init)));
  bool accumulate = false;
  if (!zero) {
    /* C's own element (C += A*B), or another matrix's element that does
     * not move with k (acc = bias[j]), either maybe scaled (C[i][j] *=
     * beta before the k loop) */
    LLVMValueRef start = split_factor(c, init, &m0.fs);
    kr_affine o = start && LLVMIsALoadInst(start) ? kr_address(c, LLVMGetOperand(start, 0)) : (kr_affine){0};
    if (!o.ok || kr_coeff(&o, m0.dk)) return kr_fail(c, "sum starts from an unsupported value");
    if (!kr_same_affine(&o, &m0.c)) {
      m0.has_start = true;
      m0.s = o;
    }
    accumulate = true;
  }
  m0.mirror = mirror;
  m0.diag = diag;
  return finish(c, &m0, accumulate);
}

/* Whether store x runs before store y on every path to y. */
static bool store_before(const kr_ctx *c, LLVMValueRef x, LLVMValueRef y) {
  LLVMBasicBlockRef bx = LLVMGetInstructionParent(x), by = LLVMGetInstructionParent(y);
  if (bx != by) return ir_dominates(c->dom, ir_cfg_index(c->cfg, bx), ir_cfg_index(c->cfg, by));
  for (LLVMValueRef i = x; i; i = LLVMGetNextInstruction(i))
    if (i == y) return true;
  return false;
}

static bool phi_takes(LLVMValueRef phi, LLVMValueRef v) {
  for (unsigned i = 0; i < LLVMCountIncoming(phi); i++)
    if (LLVMGetIncomingValue(phi, i) == v) return true;
  return false;
}

/* A store in the j loop of an ijk product, after its k loop, of the value
 * another such store stores before it (`cov[j][i] = cov[i][j]` after
 * `cov[i][j] /= d`): taken out of stores (n of them) as the mirror, which
 * finish accepts only at C's transposed element over an upper triangle
 * (mirror_store).  NULL when there is none. */
static LLVMValueRef take_mirror(kr_ctx *c, LLVMValueRef *stores, int *n) {
  if (!c->allow_tri || c->depth < 3) return NULL;
  const ir_loop *kl = c->chain[c->depth - 1], *jl = c->chain[c->depth - 2];
  for (int y = 0; y < *n; y++) {
    LLVMBasicBlockRef by = LLVMGetInstructionParent(stores[y]);
    if (!ir_loop_contains_block(jl, by, c->cfg) || ir_loop_contains_block(kl, by, c->cfg)) continue;
    for (int x = 0; x < *n; x++) {
      LLVMBasicBlockRef bx = LLVMGetInstructionParent(stores[x]);
      LLVMValueRef vx = LLVMGetOperand(stores[x], 0), vy = LLVMGetOperand(stores[y], 0);
      /* or the sum a store in the k loop keeps in memory, after the loop
       * (itself or a phi of it: matmul_ijk's mirror_of_sum proves it) */
      bool sum = ir_loop_contains_block(kl, bx, c->cfg) && !ir_loop_contains_block(kl, by, c->cfg) &&
                 (vy == vx || (LLVMIsAPHINode(vy) && phi_takes(vy, vx)));
      if (x == y || (!sum && (vx != vy || !ir_loop_contains_block(jl, bx, c->cfg) ||
                               ir_loop_contains_block(kl, bx, c->cfg) || !store_before(c, stores[x], stores[y]))))
        continue;
      LLVMValueRef mirror = stores[y];
      for (int i = y; i + 1 < *n; i++) stores[i] = stores[i + 1];
      (*n)--;
      return mirror;
    }
  }
  return NULL;
}

/* A store in the i loop of an ijk product (not in its j loop) of a
 * constant (`corr[i][i] = 1.0`): taken out of stores (n of them) as the
 * diagonal, which finish accepts only at C[i][i] of a strict upper
 * triangle (diag_store).  NULL when there is none. */
static LLVMValueRef take_diag(kr_ctx *c, LLVMValueRef *stores, int *n) {
  if (!c->allow_tri || c->depth != 3) return NULL;
  const ir_loop *jl = c->chain[1];
  for (int y = 0; y < *n; y++) {
    LLVMValueRef v = LLVMGetOperand(stores[y], 0);
    if (ir_loop_contains_block(jl, LLVMGetInstructionParent(stores[y]), c->cfg) ||
        !(LLVMIsAConstantFP(v) || LLVMIsAConstantInt(v)))
      continue;
    LLVMValueRef d = stores[y];
    for (int i = y; i + 1 < *n; i++) stores[i] = stores[i + 1];
    (*n)--;
    return d;
  }
  return NULL;
}

bool kr_matmul(kr_ctx *c) {
  LLVMValueRef stores[MAX_COPIES] = {0};
  int n = 0;
  /* a whole nest only: the parts of a split nest forward ranges over the
   * rectangle, which a triangle does not write (kn_recog_split.c); a
   * region's slice (kn_lanes_region.c) is its whole nest's stores */
  c->allow_tri = (!c->slice || (c->region && c->slice == c->region->stores)) && !c->forward && !c->stored &&
                 !c->in_lanes;
  const ir_loop *root = c->chain[0];
  for (int b = 0; b < root->nbody; b++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(c->cfg->blocks[root->body[b]].bb); i;
         i = LLVMGetNextInstruction(i)) {
      /* the prologue's store: prologue_scale */
      if (!LLVMIsAStoreInst(i) || !kr_in_slice(c, i) || (c->prologue && c->prologue->in_body[root->body[b]]))
        continue;
      if (n == MAX_COPIES) return kr_fail(c, "stores to more than one array");
      stores[n++] = i;
    }
  if (n == 0) return kr_fail(c, "no store");
  LLVMValueRef diag = take_diag(c, stores, &n), mirror = take_mirror(c, stores, &n);
  mem_sum ms;
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(stores[0]);
  bool ikj = ir_loop_contains_block(c->chain[c->depth - 1], bb, c->cfg);
  if (find_mem_sum(c, stores, n, &ms)) {
    if (matmul_ijk(c, ms.in_loop, &ms, mirror, diag)) return true;
    /* no sum stored again after the k loop: the stores are several
     * outputs, as before that store was read (kr_split takes them) */
    if (ms.after) c->reason = "stores to more than one array";
    return false;
  }
  if (ikj) {
    if (mirror || diag) return kr_fail(c, "stores to more than one array");
    int64_t keys[MAX_COPIES];
    int copy_of[MAX_COPIES];
    kr_affine first = {0};
    for (int i = 0; i < n; i++) {
      kr_affine a = kr_address(c, LLVMGetOperand(stores[i], 1));
      if (!a.ok) return kr_fail(c, "non-affine address");
      if (i == 0) first = a;
      keys[i] = a.c;
    }
    if (!kr_assign_copies(keys, n, kr_coeff(&first, c->depth - 1), copy_of)) return kr_fail(c, "stores to more than one array");
    c->copies = n;
    return kr_set_trips(c, (unsigned)n) && matmul_ikj(c, stores, n, copy_of);
  }
  if (n != 1) return kr_fail(c, "stores to more than one array");
  if (!ir_loop_contains_block(c->chain[c->depth - 2], bb, c->cfg)) return kr_fail(c, "stores outside the inner loops");
  return matmul_ijk(c, stores[0], NULL, mirror, diag);
}
