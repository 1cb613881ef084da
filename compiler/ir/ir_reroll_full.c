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
 * read before.  Then F's uses take the sum, and what it leaves dead goes.
 *
 * A chain of integer vectors (clang -msimd128's SLP vectoriser on the
 * unrolled k loop of an i8 product: each term an i32x4 of products of
 * bytes widened twice, the steps separated by the lowering's round trips
 * of bitcasts through <2 x i64>, which are read through) is a sum in each
 * lane: lane-wise `add` wraps modulo 2^w, so every order of the terms
 * gives the same lanes.  Its terms (from init 0) are put in B's order and
 * walked with the lane operations; where every moving leaf then steps
 * down (clang loads p = 12..15 first), in the reverse order, so that the
 * loop counts p up as the recogniser reads a vector loop's lanes
 * (kn_lanes_sum.c: lane l of trip t is iteration L t + l).  The loads
 * then run in another order than B's: the same values (no effect lies
 * between them, as above), but a trap in the checked copy may name
 * another of them than the Wasm's first failing load, as every complete
 * re-roll's may name term 0's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_pass.h"
#include "ir_reroll.h"

#define RF_MIN 3        /* fewer terms: not a loop worth finding */
#define RF_MAX 64       /* terms of one chain */
#define RF_MAX_DEAD 4096

typedef struct {
  LLVMValueRef v[RF_MAX_DEAD];
  int n;
} rf_values;

typedef struct {
  LLVMBasicBlockRef bb;
  LLVMValueRef root; /* F */
  LLVMOpcode op;     /* LLVMFAdd or LLVMAdd */
  bool lanes;        /* an add of integer vectors: each lane its own sum */
  int side;          /* FAdd: the operand holding the term */
  LLVMValueRef init;
  LLVMValueRef term[RF_MAX], step[RF_MAX];
  int n;
  rr_cwalk first; /* t0 against t1: the template */
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

/* v, or the value x of v's type that v is a round trip of bitcasts of,
 * each used once (twasmc's lowering passes v128 values between operations
 * as <2 x i64>: `bitcast (bitcast x to <2 x i64>) to <4 x i32>` is x). */
static LLVMValueRef under_casts(LLVMValueRef v, LLVMBasicBlockRef bb) {
  LLVMValueRef x = v;
  while (LLVMIsABitCastInst(x) && rr_in_block(x, bb) && one_use(x)) x = LLVMGetOperand(x, 0);
  return LLVMTypeOf(x) == LLVMTypeOf(v) ? x : v;
}

/* The value a round trip of bitcasts of f (each used once) gives f's type
 * back as, or f. */
static LLVMValueRef over_casts(LLVMValueRef f, LLVMBasicBlockRef bb) {
  LLVMValueRef x = f;
  for (;;) {
    LLVMUseRef u = LLVMGetFirstUse(x);
    LLVMValueRef user = u && !LLVMGetNextUse(u) ? LLVMGetUser(u) : NULL;
    if (!user || !LLVMIsABitCastInst(user) || !rr_in_block(user, bb)) break;
    x = user;
    if (LLVMTypeOf(x) == LLVMTypeOf(f)) return x;
  }
  return f;
}

/* F's chain of adds: hypothesis h (0..3) for the first step `a + b`:
 * terms b, a / a, b (init 0) or a with init b / b with init a.  Between
 * the steps of a vector chain, round trips of bitcasts. */
static bool int_chain(rf_chain *ch, int h) {
  LLVMValueRef cur = ch->root, rev_t[RF_MAX], rev_s[RF_MAX];
  LLVMTypeRef ty = LLVMTypeOf(cur);
  int n = 0;
  for (;;) {
    if (n + 2 > RF_MAX) return false;
    LLVMValueRef a = LLVMGetOperand(cur, 0), b = LLVMGetOperand(cur, 1);
    if (ch->lanes) {
      LLVMValueRef ua = under_casts(a, ch->bb), ub = under_casts(b, ch->bb);
      if (is_step(ua, LLVMAdd, ty, ch->bb)) a = ua;
      if (is_step(ub, LLVMAdd, ty, ch->bb)) b = ub;
    }
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
      ch->init = LLVMConstNull(ty);
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

/* Where a vector chain's term is computed in B: the place of the
 * instruction it is a bitcast of. */
static int term_rank(LLVMValueRef t) {
  while (LLVMIsABitCastInst(t)) t = LLVMGetOperand(t, 0);
  int n = 0;
  if (!LLVMIsAInstruction(t)) return -1;
  for (LLVMValueRef i = LLVMGetPreviousInstruction(t); i; i = LLVMGetPreviousInstruction(i)) n++;
  return n;
}

/* A vector chain's terms put in B's order (each lane's sum is the same in
 * any order of the adds). */
static void sort_terms(rf_chain *ch) {
  for (int g = 1; g < ch->n; g++) {
    LLVMValueRef t = ch->term[g];
    int r = term_rank(t), k = g;
    while (k > 0 && term_rank(ch->term[k - 1]) > r) ch->term[k] = ch->term[k - 1], k--;
    ch->term[k] = t;
  }
}

static void reverse_terms(rf_chain *ch) {
  for (int g = 0; g < ch->n / 2; g++) {
    LLVMValueRef t = ch->term[g];
    ch->term[g] = ch->term[ch->n - 1 - g];
    ch->term[ch->n - 1 - g] = t;
  }
}

/* Whether every moving leaf of the template steps down (its difference
 * negative in its width). */
static bool steps_down(const rr_cwalk *w) {
  bool moving = false;
  for (int i = 0; i < w->n; i++) {
    const rr_cevent *e = &w->ev[i];
    if (e->kind != RR_C_LEAF || e->d == 0) continue;
    unsigned bits = rr_width(LLVMTypeOf(e->ref));
    if (!(e->d >> (bits - 1) & 1)) return false;
    moving = true;
  }
  return moving;
}

/* Every term is t0 with its leaves moved by g * d1. */
static bool prove_steps(rr_pass *p, rf_chain *ch, rr_cwalk *w) {
  rr_reset(p);
  if (!rr_cwalk_pair(p, ch->bb, ch->term[0], ch->term[1], &ch->first, ch->lanes) ||
      !rr_cwalk_consistent(&ch->first) || !rr_cwalk_has_node(&ch->first))
    return false;
  for (int g = 2; g < ch->n; g++)
    if (!rr_cwalk_pair(p, ch->bb, ch->term[0], ch->term[g], w, ch->lanes) || !rr_cwalk_scaled(&ch->first, w, g))
      return false;
  return true;
}

/* As prove_steps; a vector chain's terms then counted up (as the
 * recogniser reads the lanes of a vector loop: lane l of trip t is
 * iteration L t + l), its order reversed where every leaf steps down. */
static bool prove_terms(rr_pass *p, rf_chain *ch, rr_cwalk *w) {
  if (!prove_steps(p, ch, w)) return false;
  if (!ch->lanes || !steps_down(&ch->first)) return true;
  reverse_terms(ch);
  return prove_steps(p, ch, w);
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
static bool collect_values(rr_pass *p, const rf_chain *ch, rr_cwalk *w, rf_values *vs) {
  vs->n = 0;
  add_value(vs, ch->root);
  add_value(vs, ch->step[0]);
  for (int i = 0; i < ch->first.n; i++) /* t0's own (its walk against itself is all shared) */
    if (ch->first.ev[i].kind == RR_C_NODE) add_value(vs, ch->first.ev[i].ref);
  for (int g = 0; g < ch->n && ch->lanes; g++) /* the round trips of bitcasts between the steps */
    for (unsigned o = 0; o < 2; o++)
      for (LLVMValueRef c = LLVMGetOperand(ch->step[g], o); LLVMIsABitCastInst(c) && rr_in_block(c, ch->bb);
           c = LLVMGetOperand(c, 0))
        add_value(vs, c);
  for (int g = 1; g < ch->n; g++) {
    add_value(vs, ch->step[g]);
    if (!rr_cwalk_pair(p, ch->bb, ch->term[0], ch->term[g], w, ch->lanes)) return false;
    for (int i = 0; i < w->n; i++)
      if (w->ev[i].kind != RR_C_SHARED && rr_in_block(w->ev[i].copy, ch->bb)) add_value(vs, w->ev[i].copy);
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
  LLVMBasicBlockRef bb = ch->bb, body, rest;
  /* B's tail from F on moves to rest; its successors' phis follow. */
  rr_cloop_open(p, bb, ch->root, "reroll.full", "reroll.after", &body, &rest);
  /* The loop: counter, sum, one phi per moving leaf, t0's instructions. */
  LLVMTypeRef i32 = LLVMInt32TypeInContext(p->ctx);
  LLVMValueRef k = LLVMBuildPhi(b, i32, "reroll.k");
  LLVMValueRef sum = LLVMBuildPhi(b, LLVMTypeOf(ch->root), "reroll.sum");
  rr_cbody *m = tw_arena_alloc(&p->arena, sizeof *m);
  rr_cbody_build(p, bb, &ch->first, m);
  LLVMValueRef t = rr_cbody_map(m, ch->term[0]), added;
  if (ch->op == LLVMFAdd)
    added = ch->side == 0 ? LLVMBuildFAdd(b, t, sum, "reroll.add") : LLVMBuildFAdd(b, sum, t, "reroll.add");
  else
    added = LLVMBuildAdd(b, sum, t, "reroll.add");
  rr_cbody_step(p, &ch->first, m);
  LLVMValueRef k1 = LLVMBuildAdd(b, k, LLVMConstInt(i32, 1, false), "reroll.next");
  LLVMValueRef stay = LLVMBuildICmp(b, LLVMIntNE, k1, LLVMConstInt(i32, (unsigned)ch->n, false),
                                    "reroll.stay");
  LLVMBuildCondBr(b, stay, body, rest);
  LLVMValueRef zero = LLVMConstInt(i32, 0, false);
  LLVMAddIncoming(k, &zero, &bb, 1);
  LLVMAddIncoming(k, &k1, &body, 1);
  LLVMAddIncoming(sum, &ch->init, &bb, 1);
  LLVMAddIncoming(sum, &added, &body, 1);
  rr_cbody_close(&ch->first, m, bb, body);
  /* F's value is the sum; the old chain and terms go where dead. */
  LLVMReplaceAllUsesWith(ch->root, added);
  erase_dead(dead);
  /* Last: rebuilding a phi frees it, and the chain's values may be phis. */
  rr_cloop_retarget(bb, rest);
}

typedef struct {
  rf_chain ch;
  rr_cwalk w;
  rf_values vs;
} rf_scratch;

/* F: an fadd or add of B that is not itself the next step's chain. */
static bool try_root(rr_pass *p, rf_scratch *sc, LLVMBasicBlockRef bb, LLVMValueRef f) {
  LLVMOpcode op = LLVMGetInstructionOpcode(f);
  LLVMTypeRef ty = LLVMTypeOf(f);
  bool lanes = op == LLVMAdd && LLVMGetTypeKind(ty) == LLVMVectorTypeKind;
  LLVMTypeRef elem = lanes ? LLVMGetElementType(ty) : ty;
  if (op != LLVMFAdd && !(op == LLVMAdd && rr_width(elem) && rr_width(elem) <= 64)) return false;
  if (op == LLVMFAdd && LLVMGetTypeKind(ty) == LLVMVectorTypeKind) return false;
  LLVMUseRef u = LLVMGetFirstUse(lanes ? over_casts(f, bb) : f);
  if (u && !LLVMGetNextUse(u) && is_step(LLVMGetUser(u), op, ty, bb)) return false;
  rf_chain *ch = &sc->ch;
  /* a vector chain: init 0 (h 0), its terms then in B's order */
  for (int h = 0; h < (op == LLVMFAdd ? 2 : lanes ? 1 : 4); h++) {
    memset(ch, 0, sizeof *ch);
    ch->bb = bb;
    ch->root = f;
    ch->op = op;
    ch->lanes = lanes;
    if (!(op == LLVMFAdd ? float_chain(ch, h) : int_chain(ch, h))) continue;
    if (lanes) sort_terms(ch);
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
