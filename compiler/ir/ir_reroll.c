/* ir_reroll.c: after mem2reg, re-rolls loops that clang unrolled by two
 * (two copies of one iteration per trip) into one loop doing one iteration
 * per trip, where it proves the result exact.
 *
 * Why: clang -O2 turns `for (j = 0; j < n; j++) body(j)` with a run-time n
 * into (blocks after twasmc's lowering; wasm-opt adds empty else arms)
 *
 *   H: br bypass, E, P              bypass: x == 1 (n < 2 under n > 0)
 *   P: br L                         (pure instructions allowed)
 *   L: body(j); body(j + 1); j += 2; br j != M, L, X      M = x & mask
 *   X: br E
 *   E: jf = phi [s, H], [j, X]; br odd, Q, J              odd: x & 1
 *   Q: body(jf); br J
 *   J: ...
 *
 * and a loop with a constant count into L alone, stepping to a constant.
 * The tensor recogniser does not take such nests apart, and the loop
 * vectoriser does poorly on the interleaved copies (matrix: 2.0x native).
 * The rewrite: `L': body(j); j += 1; br j != N, L', J` with N = x & (mask|1)
 * (a constant: that constant), and H takes the bypass only for the x it
 * leaves nothing to do; where the bypass set is not a few constants the
 * bypass path (H -> E -> Q -> J) stays as it was.
 *
 * How it is proved: every value of L, Q and the function around them is
 * evaluated to a hash-consed expression: integer add/sub/mul/shl-by-constant
 * without wrap flags are polynomials modulo 2^width (exact: the i32 sums
 * wrap as the polynomial does), every other pure instruction a node of its
 * opcode, flags and operands, and loads, arguments, other phis opaque atoms.
 * A phi of an enclosing loop that steps by an invariant c is s + c * t
 * (t: that loop's back edges taken), true at every point of one trip of it.
 * Two values with equal expressions are equal at run time.
 *
 * Let P be the values of L's phis at the top of a trip.  L's loads and
 * stores (nothing else with an effect is allowed) are paired into a first
 * and a second half.  With f(phi) = phi + step/2 for a phi that steps by an
 * invariant step, and for any other phi a value v of L (not reading the
 * second half) proven to give phi's next value as v(v(P)), we check that
 * each access of the second half is its partner evaluated at f(P) (same
 * kind, type, alignment, metadata, address and stored value, the first
 * half's loads read as the second half's), that every next value is
 * f(f(P)), and that the old order is first half then second half except
 * where two loads pass each other (a load changes nothing; a trap then
 * still comes before the same stores, and every out-of-bounds access is
 * the same trap).  Then one old trip is exactly two trips of `first half,
 * then P := f(P)`.  Q must be the first half at the state E holds (the
 * counter jf, each other phi's value after the loop), and J's phis the
 * values after it: then the odd iteration is the next trip of the new loop.
 *
 * Trip counts: j starts at an even constant s and steps by 2 to M (even),
 * so the old loop runs (M - s) mod 2^32 single iterations (2^32 for 0), as
 * does the new one to N when x is even (N == M).  When x is odd the old
 * code runs one more (Q), and the new one does too, unless M == s, where
 * the old ran 2^32 + 1.  The pass lists the few odd x with x & mask == s
 * and requires each to take the bypass, or to contradict a branch that
 * dominates H (clang's n > 0 guard; the last such branch before H decided
 * on the same x, as x's definition dominates it).  A bypassed odd x enters
 * the new loop only where x & mask == s: one trip, the old Q.  With a
 * constant end C, the counter from s by 2h meets C after d / 2h trips,
 * d = (C - s) mod 2^w, and by h after d / h when 2h divides d.
 *
 * Any other shape, a call other than a pure intrinsic, a volatile or
 * atomic access, a value of L or Q used elsewhere, more than one block,
 * exit or step: the loop stays. */
#include "ir_pass.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_reroll.h"

/* The pass is split by job: expressions (ir_reroll_expr.c), evaluation
 * (ir_reroll_eval.c), matching the shape (ir_reroll_shape.c), the proof
 * (ir_reroll_proof.c); this file holds the rewrite and the pass. */

/* ---- The rewrite ------------------------------------------------------------------ */

bool rr_set_has(const rr_set *set, LLVMValueRef v) {
  for (int i = 0; i < set->n; i++)
    if (set->v[i] == v) return true;
  return false;
}

/* Marks v and what it reads in L; false when that reaches the second half. */
static bool keep(const rr_shape *s, rr_set *set, LLVMValueRef v) {
  if (!v || !LLVMIsAInstruction(v) || LLVMGetInstructionParent(v) != s->L || LLVMIsAPHINode(v) ||
      rr_set_has(set, v))
    return true;
  for (int i = 0; i < s->k; i++)
    if (s->b[i].inst == v) return false;
  if (set->n == RR_MAX_BODY) return false;
  set->v[set->n++] = v;
  for (int i = 0; i < LLVMGetNumOperands(v); i++)
    if (!keep(s, set, LLVMGetOperand(v, (unsigned)i))) return false;
  return true;
}

static void set_incoming(LLVMValueRef phi, LLVMBasicBlockRef from, LLVMValueRef v) {
  for (unsigned i = 0; i < LLVMCountIncoming(phi); i++)
    if (LLVMGetIncomingBlock(phi, i) == from) LLVMSetOperand(phi, i, v);
}

/* Each phi's next value is f(phi): an IV's step is halved. */
static void build_nexts(rr_pass *p, rr_shape *s, rr_set *kept) {
  for (int i = 0; i < s->nphis; i++) {
    rr_phi *f = &s->phis[i];
    if (!f->f_val) {
      const rr_node *h = &p->nodes[f->half];
      uint64_t c = h->nt ? h->t[0].coeff : 0;
      f->f_val = LLVMBuildAdd(p->b, f->phi, LLVMConstInt(LLVMTypeOf(f->phi), c, false), "reroll.next");
      kept->v[kept->n++] = f->f_val;
    }
  }
  for (int i = 0; i < s->nphis; i++) set_incoming(s->phis[i].phi, s->L, s->phis[i].f_val);
}

/* The second half and the old steps and test: nothing uses them now. */
static void erase_unkept(const rr_shape *s, const rr_set *kept) {
  for (LLVMValueRef i = LLVMGetLastInstruction(s->L), prev; i; i = prev) {
    prev = LLVMGetPreviousInstruction(i);
    if (!LLVMIsAPHINode(i) && !rr_set_has(kept, i)) LLVMInstructionEraseFromParent(i);
  }
}

/* H takes the bypass only for an even x; E goes straight to J; Q goes. */
void ir_retarget_phis(LLVMBasicBlockRef bb, LLVMBasicBlockRef from, LLVMBasicBlockRef to) {
  ir_retarget_phis_notify(bb, from, to, NULL, NULL);
}

void ir_retarget_phis_notify(LLVMBasicBlockRef bb, LLVMBasicBlockRef from, LLVMBasicBlockRef to,
                             void (*replaced)(void *ctx, LLVMValueRef old, LLVMValueRef fresh), void *ctx) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetTypeContext(LLVMTypeOf(LLVMBasicBlockAsValue(bb))));
  LLVMValueRef next;
  for (LLVMValueRef phi = LLVMGetFirstInstruction(bb); phi && LLVMIsAPHINode(phi); phi = next) {
    next = LLVMGetNextInstruction(phi);
    LLVMPositionBuilderBefore(b, phi);
    LLVMValueRef fresh = LLVMBuildPhi(b, LLVMTypeOf(phi), "");
    for (unsigned k = 0; k < LLVMCountIncoming(phi); k++) {
      LLVMValueRef v = LLVMGetIncomingValue(phi, k);
      LLVMBasicBlockRef in = LLVMGetIncomingBlock(phi, k);
      if (in == from) in = to;
      if (in) LLVMAddIncoming(fresh, &v, &in, 1);
    }
    LLVMReplaceAllUsesWith(phi, fresh);
    if (replaced) replaced(ctx, phi, fresh);
    size_t len;
    const char *name = LLVMGetValueName2(phi, &len);
    char keep[256];
    snprintf(keep, sizeof keep, "%.*s", (int)(len < 255 ? len : 255), name);
    LLVMInstructionEraseFromParent(phi);
    LLVMSetValueName2(fresh, keep, strlen(keep));
  }
  LLVMDisposeBuilder(b);
}

static void merge_bypass(rr_pass *p, rr_shape *s) {
  LLVMBuilderRef b = p->b;
  LLVMValueRef hb = LLVMGetBasicBlockTerminator(s->H);
  LLVMTypeRef ty = LLVMTypeOf(s->x);
  LLVMPositionBuilderBefore(b, hb);
  LLVMValueRef low = LLVMBuildAnd(b, s->x, LLVMConstInt(ty, 1, false), "");
  LLVMValueRef cond = LLVMGetCondition(hb);
  if (s->e_side == 0)
    cond = LLVMBuildAnd(b, cond, LLVMBuildICmp(b, LLVMIntEQ, low, LLVMConstInt(ty, 0, false), ""), "reroll.bypass");
  else
    cond = LLVMBuildOr(b, cond, LLVMBuildICmp(b, LLVMIntNE, low, LLVMConstInt(ty, 0, false), ""), "reroll.loop");
  LLVMSetCondition(hb, cond);
  LLVMInstructionEraseFromParent(LLVMGetBasicBlockTerminator(s->E));
  LLVMPositionBuilderAtEnd(b, s->E);
  LLVMBuildBr(b, s->EJ == s->E ? s->J : s->EJ);
  ir_retarget_phis(s->J, s->Q, NULL);
  LLVMDeleteBasicBlock(s->Q);
}

/* The offset a trap names: the re-rolled loop runs both halves with the
 * first half's instructions, so a trap that the old trip takes at a
 * second-half access (or in Q) would name the first half's.  So, where L
 * touches memory, the new loop runs only behind ir_reroll_order.c's range
 * test (every access of every iteration in
 * bounds: then nothing traps), and a copy of the old L, marked as a
 * checked copy, runs where it fails, then E and Q as before.  *kept_in
 * gets E's old predecessor from L's side (its edge goes in rewrite).
 * Inside a nest the test goes before the nest where it can, the nest
 * cloned as it is (ir_reroll_hoist.c); where it cannot, the loop is
 * re-rolled as before (offsets copy 0's: the open gap); *kept_in is then
 * NULL. */
static void step_of(const rr_shape *s, rr_subst *step) {
  step->n = 0;
  for (int i = 0; i < s->nphis; i++)
    if (s->phis[i].is_iv) rr_subst_add(step, s->phis[i].atom, s->phis[i].f);
}

static bool version(rr_pass *p, rr_shape *s, LLVMBasicBlockRef *kept_in) {
  LLVMValueRef pterm = LLVMGetBasicBlockTerminator(s->pre);
  if (!pterm || LLVMGetNumSuccessors(pterm) != 1 || LLVMIsConditional(pterm)) return false;
  LLVMBasicBlockRef old_in = s->X ? s->X : s->L;
  if (s->X && LLVMGetFirstInstruction(s->X) != LLVMGetBasicBlockTerminator(s->X)) return false;
  rr_subst step;
  step_of(s, &step);
  rr_phi *c = &s->phis[s->counter];
  LLVMTypeRef ty = LLVMTypeOf(c->phi);
  /* inside a nest: before the nest, the nest cloned (ir_reroll_hoist.c) */
  /* a nest the hoist cannot read: re-rolled as before round 13 (the
   * memory a trap leaves is the same: only loads pass loads here; the
   * offset is copy 0's), so that the nest stays offloadable */
  if (p->loop->parent) {
    if (!rr_hoisted(s->L) && rr_hoist_test(p, s->a, s->k, NULL, &step, s->L, s->pre, NULL, s->x, s->mask | 1, c->init))
      p->restart = true;
    *kept_in = NULL;
    return true;
  }
  LLVMBasicBlockRef T = rr_test_begin(p, s->L);
  LLVMValueRef end = LLVMBuildAnd(p->b, s->x, LLVMConstInt(ty, s->mask | 1, false), "reroll.vend");
  LLVMValueRef trips = LLVMBuildSub(p->b, end, c->init, "reroll.trips");
  LLVMValueRef ok = rr_range_test(p, s->a, s->k, NULL, &step, s->L, s->pre, trips);
  if (!rr_test_end(p, T, ok, pterm)) return false;
  LLVMValueRef from[RR_MAX_BODY], to[RR_MAX_BODY];
  int nmap;
  LLVMBasicBlockRef kx;
  LLVMBasicBlockRef C = rr_clone_loop(p, s->L, s->pre, s->pre, s->E, &kx, from, to, RR_MAX_BODY, &nmap);
  if (!C) return false; /* not reached for a loop that matched */
  LLVMPositionBuilderBefore(p->b, pterm);
  LLVMBuildCondBr(p->b, ok, s->L, C);
  LLVMInstructionEraseFromParent(pterm);
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->E); i && LLVMIsAPHINode(i); i = LLVMGetNextInstruction(i))
    for (unsigned k = 0; k < LLVMCountIncoming(i); k++)
      if (LLVMGetIncomingBlock(i, k) == old_in) {
        LLVMValueRef v = LLVMGetIncomingValue(i, k);
        for (int m = 0; m < nmap; m++)
          if (from[m] == v) v = to[m];
        LLVMAddIncoming(i, &v, &kx, 1);
        break;
      }
  *kept_in = old_in;
  return true;
}

static void rewrite(rr_pass *p, rr_shape *s, rr_set *kept, const LLVMValueRef *jphi_of, LLVMBasicBlockRef versioned) {
  LLVMBuilderRef b = p->b;
  LLVMTypeRef ty = LLVMTypeOf(s->M);
  LLVMPositionBuilderBefore(b, LLVMGetNextInstruction(s->M));
  LLVMValueRef end = LLVMBuildAnd(b, s->x, LLVMConstInt(ty, s->mask | 1, false), "reroll.end");
  LLVMValueRef term = LLVMGetBasicBlockTerminator(s->L);
  LLVMPositionBuilderBefore(b, term);
  build_nexts(p, s, kept);
  LLVMValueRef stay = LLVMBuildICmp(b, LLVMIntNE, s->phis[s->counter].f_val, end, "reroll.stay");
  kept->v[kept->n++] = stay;
  LLVMBasicBlockRef out = s->X;
  if (out) {
    LLVMInstructionEraseFromParent(LLVMGetBasicBlockTerminator(out));
  } else {
    out = LLVMInsertBasicBlockInContext(p->ctx, s->E, "reroll.exit");
  }
  LLVMValueRef br = LLVMBuildCondBr(b, stay, s->L, out);
  ir_copy_metadata(term, br);
  kept->v[kept->n++] = br;
  LLVMInstructionEraseFromParent(term);
  LLVMPositionBuilderAtEnd(b, out);
  LLVMBuildBr(b, s->J);
  int n = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->J); i && LLVMIsAPHINode(i);
       i = LLVMGetNextInstruction(i), n++)
    for (int k = 0; k < s->nphis; k++)
      if (s->phis[k].phi == jphi_of[n]) LLVMAddIncoming(i, &s->phis[k].f_val, &out, 1);
  LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(s->H));
  for (int i = 0; i < s->nhoist; i++) {
    LLVMInstructionRemoveFromParent(s->hoist[i]);
    LLVMInsertIntoBuilder(b, s->hoist[i]);
  }
  if (versioned) {
    /* E is reached from H and from the kept copy: the old edge goes */
    ir_retarget_phis(s->E, versioned, NULL);
    erase_unkept(s, kept);
    return;
  }
  if (s->merge) merge_bypass(p, s);
  /* E is now reached from H only: its phis are their values from H. */
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->E), next; i && LLVMIsAPHINode(i); i = next) {
    next = LLVMGetNextInstruction(i);
    LLVMValueRef vh = LLVMGetIncomingBlock(i, 0) == s->HE ? LLVMGetIncomingValue(i, 0)
                                                          : LLVMGetIncomingValue(i, 1);
    LLVMReplaceAllUsesWith(i, vh);
    LLVMInstructionEraseFromParent(i);
  }
  erase_unkept(s, kept);
}

/* const_end: L's values reach past L only as a phi's next value (the old
 * last trip's end state is the new last trip's), which the new next value
 * then replaces there. */
static bool uses_after_const(const rr_shape *s) {
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->L); i; i = LLVMGetNextInstruction(i)) {
    bool is_next = false;
    for (int k = 0; k < s->nphis; k++) is_next |= s->phis[k].next == i && !LLVMIsAPHINode(i);
    for (LLVMUseRef u = LLVMGetFirstUse(i); u; u = LLVMGetNextUse(u)) {
      LLVMValueRef user = LLVMGetUser(u);
      if (!LLVMIsAInstruction(user)) return false;
      if (LLVMGetInstructionParent(user) != s->L && !is_next) return false;
    }
  }
  return true;
}

static void replace_after(const rr_shape *s, LLVMValueRef old, LLVMValueRef now) {
  LLVMValueRef users[64];
  int n = 0;
  for (LLVMUseRef u = LLVMGetFirstUse(old); u && n < 64; u = LLVMGetNextUse(u))
    if (LLVMGetInstructionParent(LLVMGetUser(u)) != s->L) users[n++] = LLVMGetUser(u);
  for (int i = 0; i < n; i++)
    for (int k = 0; k < LLVMGetNumOperands(users[i]); k++)
      if (LLVMGetOperand(users[i], (unsigned)k) == old) LLVMSetOperand(users[i], (unsigned)k, now);
}

static void rewrite_const(rr_pass *p, rr_shape *s, rr_set *kept) {
  LLVMBuilderRef b = p->b;
  LLVMValueRef term = LLVMGetBasicBlockTerminator(s->L);
  LLVMPositionBuilderBefore(b, term);
  build_nexts(p, s, kept);
  LLVMValueRef stay = LLVMBuildICmp(b, LLVMIntNE, s->phis[s->counter].f_val, s->end, "reroll.stay");
  kept->v[kept->n++] = stay;
  LLVMValueRef br = LLVMBuildCondBr(b, stay, s->L, s->out);
  ir_copy_metadata(term, br);
  kept->v[kept->n++] = br;
  LLVMInstructionEraseFromParent(term);
  for (int i = 0; i < s->nphis; i++)
    if (s->phis[i].next != s->phis[i].f_val)
      replace_after(s, s->phis[i].next, s->phis[i].f_val);
  erase_unkept(s, kept);
}

void rr_reset(rr_pass *p) {
  p->nnodes = p->nmemo = 0;
  memset(p->node_hash, 0, sizeof p->node_hash);
  memset(p->memo_hash, 0, sizeof p->memo_hash);
  p->failed = false;
}

/* A constant count in no other loop (`version` for this form): in L's
 * preheader the range test over the T new iterations, a copy of L as it
 * is where it fails, both leaving to L's exit block, which must have L
 * for its one predecessor; each value of L used after it (a phi's next
 * value, uses_after_const) goes through a phi there first, so that
 * rewrite_const's replace_after gives the new loop's value on L's edge
 * and the copy keeps its own. */
static bool version_const(rr_pass *p, rr_shape *s, LLVMValueRef trips) {
  LLVMValueRef pterm = LLVMGetBasicBlockTerminator(s->pre);
  if (!pterm || LLVMGetNumSuccessors(pterm) != 1 || LLVMIsConditional(pterm) || rr_npreds(p, s->out) != 1)
    return false;
  rr_subst step;
  step_of(s, &step);
  LLVMBasicBlockRef T = rr_test_begin(p, s->L);
  LLVMValueRef ok = rr_range_test(p, s->a, s->k, NULL, &step, s->L, s->pre, trips);
  if (!rr_test_end(p, T, ok, pterm)) return false;
  /* L's values used after L: through phis of out */
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->L); i; i = LLVMGetNextInstruction(i)) {
    int nu = 0;
    for (LLVMUseRef u = LLVMGetFirstUse(i); u; u = LLVMGetNextUse(u))
      nu += LLVMGetInstructionParent(LLVMGetUser(u)) != s->L;
    if (!nu) continue;
    LLVMValueRef *users = tw_arena_alloc(&p->arena, (size_t)nu * sizeof *users);
    nu = 0;
    for (LLVMUseRef u = LLVMGetFirstUse(i); u; u = LLVMGetNextUse(u))
      if (LLVMGetInstructionParent(LLVMGetUser(u)) != s->L) users[nu++] = LLVMGetUser(u);
    LLVMPositionBuilderBefore(p->b, LLVMGetFirstInstruction(s->out));
    LLVMValueRef phi = LLVMBuildPhi(p->b, LLVMTypeOf(i), "reroll.after");
    LLVMAddIncoming(phi, &i, &s->L, 1);
    for (int k = 0; k < nu; k++)
      for (int o = 0; o < LLVMGetNumOperands(users[k]); o++)
        if (LLVMGetOperand(users[k], (unsigned)o) == i) LLVMSetOperand(users[k], (unsigned)o, phi);
  }
  LLVMValueRef from[RR_MAX_BODY], to[RR_MAX_BODY];
  int nmap;
  LLVMBasicBlockRef kx;
  LLVMBasicBlockRef C = rr_clone_loop(p, s->L, s->pre, s->pre, s->out, &kx, from, to, RR_MAX_BODY, &nmap);
  if (!C) return false; /* not reached for a loop that matched */
  for (LLVMValueRef phi = LLVMGetFirstInstruction(s->out); phi && LLVMIsAPHINode(phi); phi = LLVMGetNextInstruction(phi)) {
    LLVMValueRef v = LLVMGetIncomingValue(phi, 0);
    for (int m = 0; m < nmap; m++)
      if (from[m] == v) v = to[m];
    LLVMAddIncoming(phi, &v, &kx, 1);
  }
  LLVMPositionBuilderBefore(p->b, pterm);
  LLVMBuildCondBr(p->b, ok, s->L, C);
  LLVMInstructionEraseFromParent(pterm);
  return true;
}

static bool try_loop(rr_pass *p, const ir_loop *l) {
  rr_shape *s = tw_arena_alloc(&p->arena, sizeof *s);
  LLVMValueRef jphi_of[RR_MAX_PHIS];
  p->loop = l;
  rr_reset(p);
  if (ir_loop_checked(&p->cfg, l)) return false; /* a kept copy (version) */
  if (!rr_match_loop(p, s) || !rr_match_phis(p, s) || !rr_match_exit(p, s)) {
    p->failed = false;
    return rr_try_remainder(p);
  }
  if (s->const_end ? !rr_prove_halves(p, s) || !uses_after_const(s)
                   : !rr_match_blocks(p, s) || !rr_counts_agree(p, s) || !rr_prove_halves(p, s) ||
                         !rr_prove_tail(p, s, jphi_of) || !rr_uses_confined(p, s))
    return false;
  rr_set *kept = tw_arena_alloc(&p->arena, sizeof *kept);
  for (int i = 0; i < s->k; i++)
    if (!keep(s, kept, s->a[i].inst)) return false;
  for (int i = 0; i < s->nphis; i++)
    if (!keep(s, kept, s->phis[i].f_val)) return false;
  if (kept->n + s->nphis + 3 > RR_MAX_BODY) return false;
  bool exact_offsets = p->exact_traps && s->k > 0; /* see version() */
  if (s->const_end) {
    /* a constant count: the test before the nest (ir_reroll_hoist.c), or
     * in L's preheader for a loop alone (version_const) */
    if (exact_offsets) {
      rr_subst step;
      step_of(s, &step);
      rr_phi *c = &s->phis[s->counter];
      const rr_node *h = &p->nodes[c->half];
      if (!LLVMIsAConstantInt(s->end) || !LLVMIsAConstantInt(c->init) || h->kind != RR_POLY || h->nt != 1 ||
          h->t[0].nf != 0)
        return false;
      /* T iterations of the new loop: (end - init) / half, passed as x = init + T */
      LLVMTypeRef ty = LLVMTypeOf(c->phi);
      uint64_t w = rr_wmask(rr_width(ty)), half = h->t[0].coeff & w;
      uint64_t d = (LLVMConstIntGetZExtValue(s->end) - LLVMConstIntGetZExtValue(c->init)) & w;
      if (!half || d % half) return false;
      LLVMValueRef x = LLVMConstInt(ty, (LLVMConstIntGetZExtValue(c->init) + d / half) & w, false);
      if (l->parent) {
        if (!rr_hoisted(s->L) && rr_hoist_test(p, s->a, s->k, NULL, &step, s->L, s->pre, NULL, x, ~0ull, c->init)) {
          p->restart = true;
          return true;
        }
      } else if (!version_const(p, s, LLVMConstInt(ty, (d / half) & w, false)))
        return false;
    }
    rewrite_const(p, s, kept);
  } else {
    LLVMBasicBlockRef versioned = NULL;
    if (exact_offsets && !version(p, s, &versioned)) return false;
    if (p->restart) return true;
    s->merge = !versioned && rr_bypass_joins(s);
    rewrite(p, s, kept, jphi_of, versioned);
  }
  return true;
}

/* One loop at a time: a rewrite changes the CFG the analyses describe. */
static bool reroll_one(rr_pass *p, LLVMValueRef fn) {
  bool done = false;
  if (ir_cfg_build(&p->cfg, &p->arena, fn)) {
    ir_dom_build(&p->dom, &p->cfg);
    ir_loops_build(&p->lp, &p->cfg, &p->dom);
    p->ivs_built = false;
    p->restart = false;
    for (int i = 0; i < p->lp.nloops && !done; i++) done = try_loop(p, p->lp.loops[i]);
    if (!done) done = rr_try_full(p, fn);
    if (!done) done = rr_try_copies(p, fn);
    if (!done) done = rr_try_vec(p, fn);
  }
  tw_arena_free(&p->arena);
  return done;
}

unsigned ir_reroll_loops(LLVMModuleRef mod, bool exact_traps) {
  rr_pass *p = calloc(1, sizeof *p);
  if (!p) return 0;
  p->exact_traps = exact_traps;
  p->ctx = LLVMGetModuleContext(mod);
  p->b = LLVMCreateBuilderInContext(p->ctx);
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    if (LLVMGetFirstBasicBlock(fn)) rr_canon_switches(p, fn);
    while (reroll_one(p, fn)) p->rerolled += !p->restart; /* a hoist alone re-rolled nothing yet */
  }
  unsigned n = p->rerolled;
  LLVMDisposeBuilder(p->b);
  free(p->nodes);
  free(p->memo);
  free(p);
  return n;
}
