/* ir_reroll_full.c: re-rolls a sum that clang unrolled completely (a loop
 * of constant count N gone, its N terms added in a chain, as the k loop of
 * a 16x16x16 product becomes) back into a loop of N iterations, where it
 * proves the two equal.
 *
 * The shape, in one block B:  c0 = t0 + init; c1 = t1 + c0; ...;
 * F = t(N-1) + c(N-2), every c used once, by the next step.  An f32/f64
 * chain keeps the term on one side of every fadd (no fast-math flags); its
 * first step is `fadd t0, init` or twasmc's lowering of `t0 + 0.0`
 * (select (fcmp uno t0, t0), t0 + t0, t0 + 0.0): for a NaN t0 both arms
 * give t0 quieted on x86, so the select is `t0 + 0.0`.  An integer chain
 * of `add` may start with `t0 + t1` (init 0; in either order, integer
 * addition is exact and commutative modulo 2^width).
 *
 * The proof: each term tg is walked against t0 in parallel.  Where the
 * two are integers whose expressions (ir_reroll_eval.c: wrapping
 * polynomials) differ by a constant, that is a leaf l of t0 with
 * difference dg; where they are the same SSA value, a shared value; else
 * both must be pure instructions (or non-volatile loads) of B with the same
 * opcode, type, flags and alignment whose operands match in turn.  Every
 * term must give the same walk, with dg = g * d1 modulo 2^width at every
 * leaf, no shared value may be a node or a moving leaf of the walk: then
 * tg is t0 with every leaf l replaced by l + g * d1, exactly.  The new
 * loop, where F was, computes t0's instructions (cloned, B's order) from
 * leaf phis stepping by d1 and adds each term to a sum phi started at
 * init, on the same side as the chain, N times: the same operations on the
 * same values in the same order.  Only loads move: down to F's place, past
 * nothing but pure instructions and loads (no store, call or other effect
 * may lie between the first load of a term and F), so each reads what it
 * read before.  Then F's uses take the sum, and what it leaves dead goes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_pass.h"
#include "ir_reroll.h"

#define RF_MIN 3        /* fewer terms: not a loop worth finding */
#define RF_MAX 64       /* terms of one chain */
#define RF_MAX_EVENTS 96 /* nodes, leaves and shared values of one term */
#define RF_MAX_DEAD 4096

typedef enum { RF_NODE, RF_LEAF, RF_SHARED } rf_kind;

/* One step of a walk of t0 (ref) against tg (copy). */
typedef struct {
  rf_kind kind;
  LLVMValueRef ref, copy;
  uint64_t d; /* LEAF: copy - ref */
} rf_event;

typedef struct {
  rf_event ev[RF_MAX_EVENTS];
  int n;
} rf_walk;

typedef struct {
  LLVMValueRef v[RF_MAX_DEAD];
  int n;
} rf_values;

typedef struct {
  LLVMBasicBlockRef bb;
  LLVMValueRef root; /* F */
  LLVMOpcode op;     /* LLVMFAdd or LLVMAdd */
  int side;          /* FAdd: the operand holding the term */
  LLVMValueRef init;
  LLVMValueRef term[RF_MAX], step[RF_MAX];
  int n;
  rf_walk first; /* t0 against t1: the template */
} rf_chain;

static bool one_use(LLVMValueRef v) {
  LLVMUseRef u = LLVMGetFirstUse(v);
  return u && !LLVMGetNextUse(u);
}

static bool is_step(LLVMValueRef v, LLVMOpcode op, LLVMTypeRef ty, LLVMBasicBlockRef bb) {
  if (!rr_in_block(v, bb) || LLVMGetInstructionOpcode(v) != op || LLVMTypeOf(v) != ty) return false;
  return op != LLVMFAdd || LLVMGetFastMathFlags(v) == 0;
}

static bool is_pos_zero(LLVMValueRef v) {
  LLVMBool loses;
  if (!v || !LLVMIsAConstantFP(v)) return false;
  double c = LLVMConstRealGetDouble(v, &loses);
  return c == 0.0 && !__builtin_signbit(c) && !loses;
}

/* twasmc's `x + 0.0` with term side `side`: x, else NULL. */
static LLVMValueRef guarded_add_zero(LLVMValueRef v, int side, LLVMBasicBlockRef bb) {
  if (!rr_in_block(v, bb) || LLVMGetInstructionOpcode(v) != LLVMSelect) return NULL;
  LLVMValueRef c = LLVMGetOperand(v, 0), twice = LLVMGetOperand(v, 1), sum = LLVMGetOperand(v, 2);
  if (!is_step(sum, LLVMFAdd, LLVMTypeOf(v), bb) || !is_pos_zero(LLVMGetOperand(sum, 1 - side)))
    return NULL;
  LLVMValueRef x = LLVMGetOperand(sum, side);
  if (!LLVMIsAFCmpInst(c) || LLVMGetFCmpPredicate(c) != LLVMRealUNO || LLVMGetOperand(c, 0) != x ||
      LLVMGetOperand(c, 1) != x || !is_step(twice, LLVMFAdd, LLVMTypeOf(v), bb) ||
      LLVMGetOperand(twice, 0) != x || LLVMGetOperand(twice, 1) != x)
    return NULL;
  return x;
}

/* F's chain of fadds, the term on `side`, terms in the order added. */
static bool float_chain(rf_chain *ch, int side) {
  LLVMValueRef cur = ch->root, rev_t[RF_MAX], rev_s[RF_MAX];
  LLVMTypeRef ty = LLVMTypeOf(cur);
  int n = 0;
  ch->side = side;
  for (;;) {
    if (n == RF_MAX) return false;
    rev_t[n] = LLVMGetOperand(cur, (unsigned)side);
    rev_s[n++] = cur;
    LLVMValueRef next = LLVMGetOperand(cur, 1 - (unsigned)side), x;
    if (one_use(next) && (x = guarded_add_zero(next, side, ch->bb))) {
      if (n == RF_MAX) return false;
      rev_t[n] = x;
      rev_s[n++] = next;
      ch->init = LLVMConstReal(ty, 0.0);
      break;
    }
    if (!one_use(next) || !is_step(next, LLVMFAdd, ty, ch->bb)) {
      ch->init = next;
      break;
    }
    cur = next;
  }
  ch->n = n;
  for (int g = 0; g < n; g++) ch->term[g] = rev_t[n - 1 - g], ch->step[g] = rev_s[n - 1 - g];
  return n >= RF_MIN;
}

/* F's chain of adds: hypothesis h (0..3) for the first step `a + b`:
 * terms b, a / a, b (init 0) or a with init b / b with init a. */
static bool int_chain(rf_chain *ch, int h) {
  LLVMValueRef cur = ch->root, rev_t[RF_MAX], rev_s[RF_MAX];
  LLVMTypeRef ty = LLVMTypeOf(cur);
  int n = 0;
  for (;;) {
    if (n + 2 > RF_MAX) return false;
    LLVMValueRef a = LLVMGetOperand(cur, 0), b = LLVMGetOperand(cur, 1);
    bool sa = one_use(a) && is_step(a, LLVMAdd, ty, ch->bb);
    bool sb = one_use(b) && is_step(b, LLVMAdd, ty, ch->bb);
    if (sa && sb) return false; /* a tree */
    rev_s[n] = cur;
    if (sa || sb) {
      rev_t[n++] = sa ? b : a;
      cur = sa ? a : b;
      continue;
    }
    if (h < 2) {
      rev_t[n++] = h == 0 ? a : b;
      rev_s[n] = cur;
      rev_t[n++] = h == 0 ? b : a;
      ch->init = LLVMConstInt(ty, 0, false);
    } else {
      rev_t[n++] = h == 2 ? a : b;
      ch->init = h == 2 ? b : a;
    }
    break;
  }
  ch->n = n;
  for (int g = 0; g < n; g++) ch->term[g] = rev_t[n - 1 - g], ch->step[g] = rev_s[n - 1 - g];
  return n >= RF_MIN;
}

static bool add_event(rf_walk *w, rf_kind kind, LLVMValueRef ref, LLVMValueRef copy, uint64_t d) {
  if (w->n == RF_MAX_EVENTS) return false;
  w->ev[w->n++] = (rf_event){kind, ref, copy, d};
  return true;
}

/* Opcodes a term may hold: pure, non-trapping in B (twasmc's lowering
 * checks divisors and conversions in blocks of their own). */
static bool walkable(LLVMValueRef v) {
  switch (LLVMGetInstructionOpcode(v)) {
  case LLVMAdd: case LLVMSub: case LLVMMul: case LLVMShl: case LLVMLShr: case LLVMAShr:
  case LLVMAnd: case LLVMOr: case LLVMXor: case LLVMFAdd: case LLVMFSub: case LLVMFMul:
  case LLVMFDiv: case LLVMFNeg: case LLVMICmp: case LLVMFCmp: case LLVMSelect:
  case LLVMZExt: case LLVMSExt: case LLVMTrunc: case LLVMSIToFP: case LLVMUIToFP:
  case LLVMFPExt: case LLVMFPTrunc: case LLVMBitCast: case LLVMGetElementPtr:
    return true;
  case LLVMLoad:
    return !LLVMGetVolatile(v) && LLVMGetOrdering(v) == LLVMAtomicOrderingNotAtomic;
  case LLVMCall:
    return rr_pure_intrinsic(LLVMGetCalledValue(v));
  default:
    return false;
  }
}

static bool walk(rr_pass *p, LLVMBasicBlockRef bb, LLVMValueRef r, LLVMValueRef c, rf_walk *w,
                 int depth) {
  if (depth > RR_MAX_DEPTH) return false;
  if (r == c) return add_event(w, RF_SHARED, r, c, 0);
  for (int i = 0; i < w->n; i++)
    if (w->ev[i].ref == r && w->ev[i].kind == RF_NODE) return w->ev[i].copy == c;
  LLVMTypeRef ty = LLVMTypeOf(r);
  unsigned width = rr_width(ty);
  if (LLVMTypeOf(c) != ty) return false;
  if (width && width <= 64) {
    int er = rr_eval(p, r, 0), ec = rr_eval(p, c, 0);
    p->failed = false;
    uint64_t d;
    if (er >= 0 && ec >= 0 && rr_const_of(p, rr_poly_add(p, ty, ec, er, ~0ull), &d))
      return add_event(w, RF_LEAF, r, c, d);
  }
  if (!rr_in_block(r, bb) || !rr_in_block(c, bb) || LLVMIsAPHINode(r) || LLVMIsAPHINode(c) ||
      LLVMGetInstructionOpcode(r) != LLVMGetInstructionOpcode(c) || !walkable(r) ||
      LLVMGetNumOperands(r) != LLVMGetNumOperands(c))
    return false;
  LLVMOpcode op = LLVMGetInstructionOpcode(r);
  if (rr_flags_of(r, op) != rr_flags_of(c, op)) return false;
  if (op == LLVMLoad && LLVMGetAlignment(r) != LLVMGetAlignment(c)) return false;
  if (op == LLVMGetElementPtr && LLVMGetGEPSourceElementType(r) != LLVMGetGEPSourceElementType(c))
    return false;
  if (op == LLVMCall && LLVMGetCalledValue(r) != LLVMGetCalledValue(c)) return false;
  int nargs = op == LLVMCall ? (int)LLVMGetNumArgOperands(r) : LLVMGetNumOperands(r);
  for (int i = 0; i < nargs; i++)
    if (!walk(p, bb, LLVMGetOperand(r, (unsigned)i), LLVMGetOperand(c, (unsigned)i), w, depth + 1))
      return false;
  return add_event(w, RF_NODE, r, c, 0);
}

/* A shared value is no node and no moving leaf; a leaf is no node. */
static bool walk_consistent(const rf_walk *w) {
  for (int i = 0; i < w->n; i++)
    for (int j = 0; j < w->n; j++) {
      const rf_event *a = &w->ev[i], *b = &w->ev[j];
      if (a->ref != b->ref || a->kind == b->kind) {
        if (a->ref == b->ref && a->kind == RF_LEAF && a->d != b->d) return false;
        continue;
      }
      if (a->kind == RF_NODE || (a->kind == RF_LEAF && (b->kind == RF_NODE || a->d != 0)))
        return false;
    }
  return true;
}

static void reset_exprs(rr_pass *p) {
  p->nnodes = p->nmemo = 0;
  memset(p->node_hash, 0, sizeof p->node_hash);
  memset(p->memo_hash, 0, sizeof p->memo_hash);
  p->failed = false;
}

/* Every term is t0 with its leaves moved by g * d1. */
static bool prove_terms(rr_pass *p, rf_chain *ch, rf_walk *w) {
  reset_exprs(p);
  ch->first.n = 0;
  if (!walk(p, ch->bb, ch->term[0], ch->term[1], &ch->first, 0) || !walk_consistent(&ch->first))
    return false;
  bool any_node = false;
  for (int i = 0; i < ch->first.n; i++) any_node |= ch->first.ev[i].kind == RF_NODE;
  if (!any_node) return false;
  for (int g = 2; g < ch->n; g++) {
    w->n = 0;
    if (!walk(p, ch->bb, ch->term[0], ch->term[g], w, 0) || w->n != ch->first.n) return false;
    for (int i = 0; i < w->n; i++) {
      const rf_event *a = &ch->first.ev[i], *b = &w->ev[i];
      uint64_t m = rr_wmask(rr_width(LLVMTypeOf(a->ref)));
      if (a->kind != b->kind || a->ref != b->ref ||
          (a->kind == RF_LEAF && ((a->d * (uint64_t)g) & m) != (b->d & m)))
        return false;
    }
  }
  return true;
}

static bool has_effect(LLVMValueRef v) {
  switch (LLVMGetInstructionOpcode(v)) {
  case LLVMStore: case LLVMFence: case LLVMAtomicRMW: case LLVMAtomicCmpXchg: return true;
  case LLVMLoad: return LLVMGetVolatile(v) || LLVMGetOrdering(v) != LLVMAtomicOrderingNotAtomic;
  case LLVMCall: return !rr_pure_intrinsic(LLVMGetCalledValue(v));
  default: return false;
  }
}

static void add_value(rf_values *vs, LLVMValueRef v) {
  if (vs->n < RF_MAX_DEAD && !rr_listed(vs->v, vs->n, v)) vs->v[vs->n++] = v;
}

/* The chain's steps and every term's own values in B (what the rewrite
 * may leave dead).  False when one is not held. */
static bool collect_values(rr_pass *p, const rf_chain *ch, rf_walk *w, rf_values *vs) {
  vs->n = 0;
  add_value(vs, ch->root);
  add_value(vs, ch->step[0]);
  for (int i = 0; i < ch->first.n; i++) /* t0's own (its walk against itself is all shared) */
    if (ch->first.ev[i].kind == RF_NODE) add_value(vs, ch->first.ev[i].ref);
  for (int g = 1; g < ch->n; g++) {
    add_value(vs, ch->step[g]);
    w->n = 0;
    if (!walk(p, ch->bb, ch->term[0], ch->term[g], w, 0)) return false;
    for (int i = 0; i < w->n; i++)
      if (w->ev[i].kind != RF_SHARED && rr_in_block(w->ev[i].copy, ch->bb)) add_value(vs, w->ev[i].copy);
  }
  return vs->n < RF_MAX_DEAD;
}

/* No effect between the first load of a term and F. */
static bool loads_may_sink(const rf_chain *ch, const rf_values *vs) {
  bool started = false;
  for (LLVMValueRef i = LLVMGetFirstInstruction(ch->bb); i != ch->root; i = LLVMGetNextInstruction(i)) {
    if (started && has_effect(i)) return false;
    if (!started && LLVMGetInstructionOpcode(i) == LLVMLoad) started = rr_listed((LLVMValueRef *)vs->v, vs->n, i);
  }
  return true;
}

typedef struct {
  LLVMValueRef from[RF_MAX_EVENTS], to[RF_MAX_EVENTS];
  int n;
} rf_map;

static LLVMValueRef mapped(const rf_map *m, LLVMValueRef v) {
  for (int i = 0; i < m->n; i++)
    if (m->from[i] == v) return m->to[i];
  return v;
}

static bool is_node(const rf_walk *w, LLVMValueRef v) {
  for (int i = 0; i < w->n; i++)
    if (w->ev[i].ref == v && w->ev[i].kind == RF_NODE) return true;
  return false;
}

/* What the rewrite may leave dead: the chain and every term's values. */
static void erase_dead(rf_values *vs) {
  LLVMValueRef *list = vs->v;
  int n = vs->n;
  for (bool changed = true; changed;) {
    changed = false;
    for (int i = 0; i < n; i++) {
      LLVMValueRef v = list[i];
      if (!v || LLVMGetFirstUse(v) || has_effect(v) || LLVMIsAPHINode(v)) continue;
      LLVMValueRef ops[RR_MAX_KIDS + 1];
      int nops = LLVMGetNumOperands(v) <= RR_MAX_KIDS + 1 ? LLVMGetNumOperands(v) : 0;
      for (int k = 0; k < nops; k++) ops[k] = LLVMGetOperand(v, (unsigned)k);
      LLVMBasicBlockRef bb = LLVMGetInstructionParent(v);
      LLVMInstructionEraseFromParent(v);
      list[i] = NULL;
      changed = true;
      for (int k = 0; k < nops; k++)
        if (n < RF_MAX_DEAD && rr_in_block(ops[k], bb) && !rr_listed(list, n, ops[k])) list[n++] = ops[k];
    }
  }
}

static void rewrite(rr_pass *p, rf_chain *ch, rf_values *dead) {
  LLVMBuilderRef b = p->b;
  LLVMBasicBlockRef bb = ch->bb, next = LLVMGetNextBasicBlock(bb);
  LLVMBasicBlockRef body = next ? LLVMInsertBasicBlockInContext(p->ctx, next, "reroll.full")
                                : LLVMAppendBasicBlockInContext(p->ctx, LLVMGetBasicBlockParent(bb),
                                                                "reroll.full");
  next = LLVMGetNextBasicBlock(body);
  LLVMBasicBlockRef rest = next ? LLVMInsertBasicBlockInContext(p->ctx, next, "reroll.after")
                                : LLVMAppendBasicBlockInContext(p->ctx, LLVMGetBasicBlockParent(bb),
                                                                "reroll.after");
  /* B's tail from F on moves to rest; its successors' phis follow. */
  LLVMPositionBuilderAtEnd(b, rest);
  for (LLVMValueRef i = ch->root, nx; i; i = nx) {
    nx = LLVMGetNextInstruction(i);
    LLVMInstructionRemoveFromParent(i);
    LLVMInsertIntoBuilder(b, i);
  }
  LLVMPositionBuilderAtEnd(b, bb);
  LLVMBuildBr(b, body);
  /* The loop: counter, sum, one phi per moving leaf, t0's instructions. */
  LLVMPositionBuilderAtEnd(b, body);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(p->ctx);
  LLVMValueRef k = LLVMBuildPhi(b, i32, "reroll.k");
  LLVMValueRef sum = LLVMBuildPhi(b, LLVMTypeOf(ch->root), "reroll.sum");
  rf_map *m = tw_arena_alloc(&p->arena, sizeof *m);
  m->n = 0;
  LLVMValueRef leaf_next[RF_MAX_EVENTS];
  int leaf_of[RF_MAX_EVENTS];
  int nleaves = 0;
  for (int i = 0; i < ch->first.n; i++) {
    const rf_event *e = &ch->first.ev[i];
    if (e->kind != RF_LEAF || e->d == 0 || mapped(m, e->ref) != e->ref) continue;
    LLVMValueRef phi = LLVMBuildPhi(b, LLVMTypeOf(e->ref), "reroll.leaf");
    leaf_of[nleaves++] = i;
    m->from[m->n] = e->ref;
    m->to[m->n++] = phi;
  }
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
    if (!is_node(&ch->first, i)) continue;
    LLVMValueRef clone = LLVMInstructionClone(i);
    for (int o = 0; o < LLVMGetNumOperands(clone); o++)
      LLVMSetOperand(clone, (unsigned)o, mapped(m, LLVMGetOperand(i, (unsigned)o)));
    LLVMInsertIntoBuilder(b, clone);
    m->from[m->n] = i;
    m->to[m->n++] = clone;
  }
  LLVMValueRef t = mapped(m, ch->term[0]), added;
  if (ch->op == LLVMFAdd)
    added = ch->side == 0 ? LLVMBuildFAdd(b, t, sum, "reroll.add") : LLVMBuildFAdd(b, sum, t, "reroll.add");
  else
    added = LLVMBuildAdd(b, sum, t, "reroll.add");
  for (int l = 0; l < nleaves; l++) {
    const rf_event *e = &ch->first.ev[leaf_of[l]];
    LLVMValueRef phi = mapped(m, e->ref);
    leaf_next[l] = LLVMBuildAdd(b, phi, LLVMConstInt(LLVMTypeOf(phi), e->d, false), "reroll.step");
  }
  LLVMValueRef k1 = LLVMBuildAdd(b, k, LLVMConstInt(i32, 1, false), "reroll.next");
  LLVMValueRef stay = LLVMBuildICmp(b, LLVMIntNE, k1, LLVMConstInt(i32, (unsigned)ch->n, false),
                                    "reroll.stay");
  LLVMBuildCondBr(b, stay, body, rest);
  LLVMValueRef zero = LLVMConstInt(i32, 0, false);
  LLVMAddIncoming(k, &zero, &bb, 1);
  LLVMAddIncoming(k, &k1, &body, 1);
  LLVMAddIncoming(sum, &ch->init, &bb, 1);
  LLVMAddIncoming(sum, &added, &body, 1);
  for (int l = 0; l < nleaves; l++) {
    LLVMValueRef phi = mapped(m, ch->first.ev[leaf_of[l]].ref), start = ch->first.ev[leaf_of[l]].ref;
    LLVMAddIncoming(phi, &start, &bb, 1);
    LLVMAddIncoming(phi, &leaf_next[l], &body, 1);
  }
  /* F's value is the sum; the old chain and terms go where dead. */
  LLVMReplaceAllUsesWith(ch->root, added);
  erase_dead(dead);
  /* Last: rebuilding a phi frees it, and the chain's values may be phis. */
  LLVMValueRef term = LLVMGetBasicBlockTerminator(rest);
  for (unsigned s = 0; s < LLVMGetNumSuccessors(term); s++) {
    LLVMBasicBlockRef succ = LLVMGetSuccessor(term, s);
    bool seen = false;
    for (unsigned t = 0; t < s; t++) seen |= LLVMGetSuccessor(term, t) == succ;
    if (!seen) ir_retarget_phis(succ, bb, rest);
  }
}

typedef struct {
  rf_chain ch;
  rf_walk w;
  rf_values vs;
} rf_scratch;

/* F: an fadd or add of B that is not itself the next step's chain. */
static bool try_root(rr_pass *p, rf_scratch *sc, LLVMBasicBlockRef bb, LLVMValueRef f) {
  LLVMOpcode op = LLVMGetInstructionOpcode(f);
  LLVMTypeRef ty = LLVMTypeOf(f);
  if (op != LLVMFAdd && !(op == LLVMAdd && rr_width(ty) && rr_width(ty) <= 64)) return false;
  if (LLVMGetTypeKind(ty) == LLVMVectorTypeKind) return false;
  LLVMUseRef u = LLVMGetFirstUse(f);
  if (u && !LLVMGetNextUse(u) && is_step(LLVMGetUser(u), op, ty, bb)) return false;
  rf_chain *ch = &sc->ch;
  for (int h = 0; h < (op == LLVMFAdd ? 2 : 4); h++) {
    memset(ch, 0, sizeof *ch);
    ch->bb = bb;
    ch->root = f;
    ch->op = op;
    if (!(op == LLVMFAdd ? float_chain(ch, h) : int_chain(ch, h))) continue;
    /* a sum carried by B's loop is that loop unrolled (ir_reroll_rem.c) */
    if (LLVMIsAPHINode(ch->init) && rr_in_loop(p, ch->init)) continue;
    if (!prove_terms(p, ch, &sc->w) || !collect_values(p, ch, &sc->w, &sc->vs) ||
        !loads_may_sink(ch, &sc->vs))
      continue;
    rewrite(p, ch, &sc->vs);
    return true;
  }
  return false;
}

bool rr_try_full(rr_pass *p, LLVMValueRef fn) {
  (void)fn;
  rf_scratch *sc = NULL;
  for (int b = 0; b < p->cfg.nblocks; b++) {
    const ir_loop *l = p->lp.innermost[b];
    if (!l) continue; /* the expressions need a loop around B */
    p->loop = l;
    LLVMBasicBlockRef bb = p->cfg.blocks[b].bb;
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      if (!sc) sc = tw_arena_alloc(&p->arena, sizeof *sc);
      if (try_root(p, sc, bb, i)) return true;
    }
  }
  return false;
}
