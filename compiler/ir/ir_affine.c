/* ir_affine.c: integer values and GEP addresses as affine forms over IVs. */
#include "ir.h"

#define MAX_DEPTH 64 /* expression trees deeper than this are not affine */

typedef struct {
  const ir_loop *nest, *root;
  const ir_cfg *cfg;
  LLVMTargetDataRef td;
} ctx;

static const ir_affine not_affine = {.ok = false};

static ir_affine constant(int64_t c) { return (ir_affine){.ok = true, .constant = c}; }

static ir_affine single(int64_t coeff, const ir_iv *iv, LLVMValueRef inv) {
  ir_affine a = {.ok = true, .nterms = 1};
  a.terms[0] = (ir_term){coeff, iv, inv};
  return a;
}

/* Adds coeff * (iv, inv) into a, merging like terms. */
static void add_term(ir_affine *a, ir_term t) {
  for (int i = 0; i < a->nterms; i++) {
    ir_term *u = &a->terms[i];
    if (u->iv != t.iv || u->inv != t.inv) continue;
    if (__builtin_add_overflow(u->coeff, t.coeff, &u->coeff)) a->ok = false;
    if (u->coeff == 0) *u = a->terms[--a->nterms];
    return;
  }
  if (t.coeff == 0) return;
  if (a->nterms == IR_AFFINE_MAX_TERMS) a->ok = false;
  else a->terms[a->nterms++] = t;
}

static ir_affine scale(ir_affine a, int64_t c) {
  if (!a.ok) return a;
  ir_affine r = {.ok = true, .may_wrap = a.may_wrap};
  if (__builtin_mul_overflow(a.constant, c, &r.constant)) return not_affine;
  for (int i = 0; i < a.nterms; i++) {
    ir_term t = a.terms[i];
    if (__builtin_mul_overflow(t.coeff, c, &t.coeff)) return not_affine;
    add_term(&r, t);
  }
  return r;
}

static ir_affine combine(ir_affine a, ir_affine b, int64_t sign) {
  if (!a.ok || !b.ok) return not_affine;
  b = scale(b, sign);
  if (!b.ok || __builtin_add_overflow(a.constant, b.constant, &a.constant)) return not_affine;
  a.may_wrap |= b.may_wrap;
  for (int i = 0; i < b.nterms; i++) add_term(&a, b.terms[i]);
  return a;
}

/* inv * a: allowed while no term of a already holds an invariant factor. */
static ir_affine scale_by_atom(ir_affine a, ir_term atom) {
  ir_affine r = {.ok = true, .may_wrap = a.may_wrap};
  add_term(&r, (ir_term){a.constant * atom.coeff, NULL, atom.inv});
  for (int i = 0; i < a.nterms; i++) {
    ir_term t = a.terms[i];
    if (t.inv || __builtin_mul_overflow(t.coeff, atom.coeff, &t.coeff)) return not_affine;
    t.inv = atom.inv;
    add_term(&r, t);
  }
  return r;
}

static bool is_lone_atom(const ir_affine *a) {
  return a->nterms == 1 && a->constant == 0 && !a->terms[0].iv;
}

static ir_affine multiply(ir_affine a, ir_affine b) {
  if (!a.ok || !b.ok) return not_affine;
  if (b.nterms == 0) return scale(a, b.constant);
  if (a.nterms == 0) return scale(b, a.constant);
  if (is_lone_atom(&b)) return scale_by_atom(a, b.terms[0]);
  if (is_lone_atom(&a)) return scale_by_atom(b, a.terms[0]);
  return not_affine;
}

static bool outside_nest(const ctx *c, LLVMValueRef v) {
  return !ir_loop_defines(c->root, v, c->cfg);
}

/* The IV takes values start + k*step for k below a constant trip count; true
 * when they all fit the extension's reading of its width, or when the
 * increment's no-wrap flag promises as much. */
static bool iv_fits(const ir_iv *iv, bool is_signed) {
  if (is_signed ? iv->nsw : iv->nuw && iv->step > 0) return true;
  if (iv->step_inv) return false;
  const ir_trip *t = &iv->loop->trip;
  if (t->kind != IR_TRIP_CONST || t->iv != iv || !LLVMIsAConstantInt(iv->start) || iv->bits >= 64)
    return false;
  __int128 start = is_signed ? LLVMConstIntGetSExtValue(iv->start) : (__int128)LLVMConstIntGetZExtValue(iv->start);
  __int128 last = start + (__int128)(t->count - 1) * iv->step;
  __int128 lo = is_signed ? -((__int128)1 << (iv->bits - 1)) : 0;
  __int128 hi = is_signed ? ((__int128)1 << (iv->bits - 1)) - 1 : ((__int128)1 << iv->bits) - 1;
  return last >= lo && last <= hi;
}

static ir_affine affine_rec(const ctx *c, LLVMValueRef v, int depth);
static ir_affine truncate(const ctx *c, LLVMValueRef v, int depth);

/* zext/sext of x: exact through arithmetic flagged not to wrap in the
 * matching sense and through IVs whose range fits; otherwise x's form with
 * may_wrap set. */
static ir_affine extend(const ctx *c, LLVMValueRef ext, LLVMValueRef x, bool is_signed, int depth) {
  if (LLVMIsAConstantInt(x))
    return constant(is_signed ? LLVMConstIntGetSExtValue(x) : (int64_t)LLVMConstIntGetZExtValue(x));
  if (outside_nest(c, x)) return single(1, NULL, ext);
  const ir_iv *iv = ir_iv_of(c->nest, x);
  if (iv) {
    ir_affine a = single(1, iv, NULL);
    a.may_wrap = !iv_fits(iv, is_signed);
    return a;
  }
  /* Undoing a trunc that dropped no bits gives back the wide value. */
  if (LLVMIsATruncInst(x) && (is_signed ? LLVMGetNSW(x) : LLVMGetNUW(x)))
    return affine_rec(c, LLVMGetOperand(x, 0), depth + 1);
  LLVMOpcode op = LLVMIsABinaryOperator(x) ? LLVMGetInstructionOpcode(x) : 0;
  bool exact = (op == LLVMAdd || op == LLVMSub || op == LLVMMul || op == LLVMShl) &&
               (is_signed ? LLVMGetNSW(x) : LLVMGetNUW(x));
  if (op == LLVMOr && !is_signed && LLVMGetIsDisjoint(x)) exact = true;
  if (!exact || depth > MAX_DEPTH) {
    ir_affine a = affine_rec(c, x, depth + 1);
    a.may_wrap = true;
    return a;
  }
  ir_affine l = extend(c, ext, LLVMGetOperand(x, 0), is_signed, depth + 1);
  ir_affine r = extend(c, ext, LLVMGetOperand(x, 1), is_signed, depth + 1);
  if (op == LLVMShl) {
    if (!r.ok || r.nterms || r.constant < 0 || r.constant > 62) return not_affine;
    return scale(l, INT64_C(1) << r.constant);
  }
  if (op == LLVMMul) return multiply(l, r);
  return combine(l, r, op == LLVMSub ? -1 : 1);
}

static ir_affine binary(const ctx *c, LLVMValueRef v, LLVMOpcode op, int depth) {
  ir_affine l = affine_rec(c, LLVMGetOperand(v, 0), depth + 1);
  ir_affine r = affine_rec(c, LLVMGetOperand(v, 1), depth + 1);
  switch (op) {
  case LLVMAdd: return combine(l, r, 1);
  case LLVMSub: return combine(l, r, -1);
  case LLVMMul: return multiply(l, r);
  case LLVMOr: return LLVMGetIsDisjoint(v) ? combine(l, r, 1) : not_affine;
  case LLVMShl:
    if (!r.ok || r.nterms || r.constant < 0 || r.constant > 62) return not_affine;
    return scale(l, INT64_C(1) << r.constant);
  default: return not_affine;
  }
}

/* Wasm's i32 arithmetic on an IV that indvars widened to i64 comes back
 * through a trunc: exact when flagged not to wrap, else may_wrap. */
static ir_affine truncate(const ctx *c, LLVMValueRef v, int depth) {
  ir_affine a = affine_rec(c, LLVMGetOperand(v, 0), depth + 1);
  if (!LLVMGetNUW(v) && !LLVMGetNSW(v)) a.may_wrap = true;
  return a;
}

static ir_affine affine_rec(const ctx *c, LLVMValueRef v, int depth) {
  if (depth > MAX_DEPTH) return not_affine;
  if (LLVMIsAConstantInt(v))
    return LLVMGetIntTypeWidth(LLVMTypeOf(v)) <= 64 ? constant(LLVMConstIntGetSExtValue(v)) : not_affine;
  const ir_iv *iv = ir_iv_of(c->nest, v);
  if (iv) return single(1, iv, NULL);
  if (outside_nest(c, v)) return single(1, NULL, v);
  if (!LLVMIsAInstruction(v)) return not_affine;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  if (op == LLVMZExt || op == LLVMSExt)
    return extend(c, v, LLVMGetOperand(v, 0), op == LLVMSExt, depth + 1);
  if (op == LLVMTrunc) return truncate(c, v, depth);
  if (LLVMIsABinaryOperator(v)) return binary(c, v, op, depth);
  return not_affine;
}

static ctx make_ctx(const ir_loop *nest, const ir_cfg *cfg, LLVMTargetDataRef td) {
  ctx c = {nest, nest, cfg, td};
  while (c.root->parent) c.root = c.root->parent;
  return c;
}

ir_affine ir_affine_of(LLVMValueRef v, const ir_loop *nest, const ir_cfg *cfg, LLVMTargetDataRef td) {
  ctx c = make_ctx(nest, cfg, td);
  return affine_rec(&c, v, 0);
}

int64_t ir_affine_coeff(const ir_affine *a, const ir_iv *iv, LLVMValueRef inv) {
  for (int i = 0; i < a->nterms; i++)
    if (a->terms[i].iv == iv && a->terms[i].inv == inv) return a->terms[i].coeff;
  return 0;
}

static bool is_gep(LLVMValueRef p) {
  return LLVMIsAGetElementPtrInst(p) ||
         (LLVMIsAConstantExpr(p) && LLVMGetConstOpcode(p) == LLVMGetElementPtr);
}

/* Byte offset one GEP adds: the first index steps over whole source
 * elements, later ones into aggregates. */
static ir_affine gep_offset(const ctx *c, LLVMValueRef gep) {
  LLVMTypeRef ty = LLVMGetGEPSourceElementType(gep);
  int nops = LLVMGetNumOperands(gep);
  ir_affine off = constant(0);
  for (int k = 1; k < nops && off.ok; k++) {
    LLVMValueRef idx = LLVMGetOperand(gep, (unsigned)k);
    if (k > 1 && LLVMGetTypeKind(ty) == LLVMStructTypeKind) {
      if (!LLVMIsAConstantInt(idx)) return not_affine;
      unsigned field = (unsigned)LLVMConstIntGetZExtValue(idx);
      off = combine(off, constant((int64_t)LLVMOffsetOfElement(c->td, ty, field)), 1);
      ty = LLVMStructGetTypeAtIndex(ty, field);
      continue;
    }
    if (k > 1) ty = LLVMGetElementType(ty); /* array or vector */
    ir_affine i = affine_rec(c, idx, 1);
    off = combine(off, scale(i, (int64_t)LLVMABISizeOfType(c->td, ty)), 1);
  }
  return off;
}

ir_affine ir_address_of(LLVMValueRef ptr, const ir_loop *nest, const ir_cfg *cfg,
                        LLVMTargetDataRef td, LLVMValueRef *base) {
  ctx c = make_ctx(nest, cfg, td);
  ir_affine off = constant(0);
  for (int n = 0; is_gep(ptr) && n < MAX_DEPTH && off.ok; n++) {
    off = combine(off, gep_offset(&c, ptr), 1);
    ptr = LLVMGetOperand(ptr, 0);
  }
  *base = ptr;
  /* A base that moves inside the nest is not an affine address. */
  if (!outside_nest(&c, ptr) || is_gep(ptr)) off.ok = false;
  return off;
}

bool ir_int_step_pure(LLVMValueRef v) {
  if (LLVMIsABinaryOperator(v)) {
    LLVMOpcode op = LLVMGetInstructionOpcode(v);
    return op != LLVMUDiv && op != LLVMSDiv && op != LLVMURem && op != LLVMSRem;
  }
  return LLVMIsAICmpInst(v) || LLVMIsASelectInst(v) || LLVMIsAZExtInst(v) || LLVMIsASExtInst(v) ||
         LLVMIsATruncInst(v);
}
