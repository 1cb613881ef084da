/* ir_reroll_rem.c: re-rolls loops that clang unrolled by F = 4, 8, 16 or
 * 32 with a remainder loop after them into one loop doing one iteration per
 * trip, where it proves the result exact.
 *
 * clang's run-time unroller turns `for (j = 0; j < n; j++) body(j)` into
 *
 *   H:  br x <u F, E, P                       (the bypass: too few for one trip)
 *   P:  br L                                  (pure, optional)
 *   L:  body(j) .. body(j + F - 1); j += F; br j != M, L, X      M = x & mask
 *   X:  br E                                  (optional)
 *   E:  after = phi [init, H], [next, X]; br (x & (F - 1)) == 0, J, RP
 *   RP: br R                                  (pure, optional)
 *   R:  body(jr); d -= 1; br d != 0, R, RX    d from x & (F - 1)
 *   RX: br J                                  (optional)
 *   J:  phis of the values after either loop
 *
 * The rewrite: `L': body(j); j += 1; br j != N, L', J` with
 * N = x & (mask | (F - 1)); E (and R) then run only on the bypass, as
 * before.
 *
 * The proof, on the expressions of ir_reroll_eval.c (see ir_reroll.c):
 * - each IV of L steps by F times a step s1 (every coefficient divisible by
 *   F); f(IV) = IV + s1 is one iteration.  The counter steps by F (s1 = 1)
 *   from a constant with its low bits clear to M, mask's low bits clear;
 * - L's loads and stores fall into F copies: an access's image under f
 *   (the IVs moved, each copy's loads read as the next copy's) is the same
 *   kind of access of the next copy, chains of exactly F; every other phi
 *   has a value v of L, reading only copy 0's loads, whose F-fold image is
 *   its next value; every access of copy g + 1 is its partner of copy g
 *   under f (same type, alignment, metadata, address, stored value); the
 *   old order differs from copy 0, copy 1, ... only where two loads pass
 *   each other (ir_reroll.c says why that is enough).  So one old trip is
 *   F trips of copy 0 with P := f(P);
 * - R's phis are L's phis after L (E's phi, or for an IV without one
 *   init + s1 * (counter after - counter init)) plus its own down counter d
 *   from x & (F - 1) by -1 to 0; R's accesses are copy 0's at that state
 *   and each R phi's next value is f of its L phi's: one trip of R is one
 *   more iteration.  J's phis take, from E and from R, the same L phi's
 *   value after the loop and after R;
 * - counts: when L is entered, M != start (checked for every x with
 *   x & mask == start, as ir_reroll.c does for its odd x: the bypass, or a
 *   dominating branch, keeps them out), so the old code runs
 *   (M - start) + (x & (F - 1)) = N - start iterations (start and M have
 *   the low bits clear: no carry), and so does the new loop;
 * - L's values reach only E's phis, R's only R and J's phis, E's values
 *   only E, RP, R and J's phis (or they are pure, read no phi of E, and
 *   move up to H).
 * Anything else leaves the loop as it was. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_pass.h"
#include "ir_reroll.h"

#define RM_MAX_EFF (2 * RR_MAX_EFFECTS)

typedef struct {
  LLVMValueRef phi, init, next;
  int atom;
  bool is_iv;
  int step1;           /* IVs: one iteration's step */
  int f;               /* the value after one iteration */
  LLVMValueRef f_val;  /* an existing value of L equal to f, or NULL (built) */
  LLVMValueRef after;  /* its phi in E, or NULL */
  LLVMValueRef rphi;   /* its phi in R, or NULL */
} rm_phi;

typedef struct {
  LLVMBasicBlockRef H, P, L, X, E, RP, R, RX, J, HE, EJ, pre, out;
  int e_side;
  unsigned F;
  LLVMValueRef x, M, down;
  uint64_t mask;
  rm_phi phis[RR_MAX_PHIS];
  int nphis, counter;
  rr_effect eff[RM_MAX_EFF];
  int neff, copy[RM_MAX_EFF], succ[RM_MAX_EFF], idx[RM_MAX_EFF];
  rr_effect reff[RR_MAX_EFFECTS];
  int nreff;
  LLVMValueRef jphi_val[RR_MAX_PHIS]; /* J's incoming from the new loop */
  LLVMValueRef hoist[RR_MAX_BODY_E];
  int nhoist;
  bool loose;          /* an x with x & (mask | F - 1) == start may enter L */
  bool reorder;        /* stores of one chain out of order: versioned (ir_reroll_order.c) */
  bool folded;         /* copies matched on folded addresses only: versioned too */
  int fkey[RM_MAX_EFF];       /* folded address (rr_folded_addr) or -1 */
  uint64_t foff[RM_MAX_EFF];  /* its constant offset C */
  bool via_fold[RM_MAX_EFF];  /* succ matched on the folded address only */
  int k_after;         /* without an E phi of the counter: an atom for its value in E, or -1 */
  rr_subst esub;       /* E phis computed from L's state: atom -> g(k_after) */
} rm_shape;

static bool used_only_in(LLVMValueRef v, const LLVMBasicBlockRef *bbs, int n, LLVMBasicBlockRef phis_of);

/* bb, or where the trivial block bb (entered from `from` only) leads. */
static LLVMBasicBlockRef through(const rr_pass *p, LLVMBasicBlockRef bb, LLVMBasicBlockRef from) {
  LLVMBasicBlockRef t = rr_trivial_target(bb);
  return t && rr_npreds(p, bb) == 1 && rr_pred0(p, bb) == from ? t : bb;
}

/* Pure instructions, then a jump to `to`, entered from one block. */
static bool pure_block_to(rr_pass *p, LLVMBasicBlockRef bb, LLVMBasicBlockRef to) {
  LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
  if (rr_jump_target(bb) != to || rr_npreds(p, bb) != 1) return false;
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i != t; i = LLVMGetNextInstruction(i))
    if (LLVMIsAPHINode(i) || LLVMIsALoadInst(i) || LLVMIsAStoreInst(i) || rr_eval_inst(p, i, 0) < 0)
      return false;
  return true;
}

static const ir_loop *loop_headed(const rr_pass *p, LLVMBasicBlockRef bb) {
  int b = rr_bb_index(p, bb);
  for (int i = 0; b >= 0 && i < p->lp.nloops; i++)
    if (p->lp.loops[i]->header == b) return p->lp.loops[i];
  return NULL;
}

/* ---- L: its phis, exit and copies ------------------------------------------ */

static bool single_block_loop(const rr_pass *p, const ir_loop *l, LLVMBasicBlockRef *bb,
                              LLVMBasicBlockRef *pre, LLVMBasicBlockRef *out) {
  if (!l || l->nbody != 1 || l->nexits != 1 || l->nchildren) return false;
  const ir_block *lb = &p->cfg.blocks[l->header];
  if (lb->npreds != 2) return false;
  *bb = lb->bb;
  *out = p->cfg.blocks[l->exits[0].to].bb;
  *pre = p->cfg.blocks[lb->preds[0] == l->header ? lb->preds[1] : lb->preds[0]].bb;
  return true;
}

/* The exit test `counter.next != x & mask`, the counter stepping by F. */
static bool match_exit(rr_pass *p, rm_shape *s) {
  LLVMValueRef br = rr_cond_br(s->L);
  if (!br) return false;
  bool negated;
  LLVMValueRef c = rr_strip_bool(LLVMGetCondition(br), &negated);
  if (!LLVMIsAICmpInst(c)) return false;
  LLVMIntPredicate pred = LLVMGetICmpPredicate(c);
  bool stay_if_true = LLVMGetSuccessor(br, 0) == s->L;
  if ((pred != LLVMIntNE && pred != LLVMIntEQ) || (pred == LLVMIntNE) != (stay_if_true != negated))
    return false;
  for (int k = 0; k < s->nphis; k++)
    for (unsigned side = 0; side < 2; side++) {
      rm_phi *f = &s->phis[k];
      if (LLVMGetOperand(c, side) != f->next) continue;
      LLVMTypeRef ty = LLVMTypeOf(f->phi);
      unsigned w = rr_width(ty);
      if (!w || w > 64 || !LLVMIsAConstantInt(f->init)) return false;
      int d = rr_poly_add(p, ty, rr_eval(p, f->next, 0), f->atom, ~0ull);
      const rr_node *n = d >= 0 ? &p->nodes[d] : NULL;
      if (!n || n->kind != RR_POLY || n->nt != 1 || n->t[0].nf != 0) return false;
      uint64_t F = n->t[0].coeff;
      if (F < 4 || F > 32 || (F & (F - 1))) return false;
      s->M = LLVMGetOperand(c, 1 - side);
      s->x = rr_and_const(s->M, &s->mask);
      if (!s->x || rr_in_loop(p, s->M) || (s->mask & (F - 1)) || (LLVMConstIntGetZExtValue(f->init) & (F - 1)))
        return false;
      s->F = (unsigned)F;
      s->counter = k;
      return true;
    }
  return false;
}

/* A constant step d of an IV is F times one iteration's step modulo 2^w,
 * which leaves that step known only modulo 2^w / F (quant.c's fill,
 * `v += 2654435761u`, by 4: 506952113 + k 2^30).  Of the F candidates,
 * the one L computes as phi + step (a copy's value), else c as divided;
 * the proof that follows decides either way. */
static uint64_t seen_step(rr_pass *p, const rm_shape *s, const rm_phi *f, uint64_t c) {
  LLVMTypeRef ty = LLVMTypeOf(f->phi);
  unsigned w = rr_width(ty);
  uint64_t part = w == 64 ? (UINT64_MAX / s->F) + 1 : (1ull << w) / s->F;
  for (unsigned k = 0; k < s->F; k++) {
    uint64_t cand = (c + k * part) & rr_wmask(w);
    rr_term t = {.coeff = cand, .nf = 0};
    int want = rr_poly_add(p, ty, f->atom, rr_make_poly(p, ty, &t, 1), 1);
    for (LLVMValueRef i = LLVMGetFirstInstruction(s->L); want >= 0 && i; i = LLVMGetNextInstruction(i))
      if (!LLVMIsAPHINode(i) && LLVMTypeOf(i) == ty && rr_eval(p, i, 0) == want) return cand;
  }
  return c;
}

/* L's phis; IVs step by F times a step (one iteration's). */
static bool match_phis(rr_pass *p, rm_shape *s) {
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->L); i && LLVMIsAPHINode(i); i = LLVMGetNextInstruction(i)) {
    if (s->nphis == RR_MAX_PHIS || LLVMCountIncoming(i) != 2) return false;
    rm_phi *f = &s->phis[s->nphis++];
    memset(f, 0, sizeof *f);
    f->phi = i;
    if ((f->atom = rr_atom(p, i)) < 0) return false;
    for (unsigned k = 0; k < 2; k++) {
      if (LLVMGetIncomingBlock(i, k) == s->L) f->next = LLVMGetIncomingValue(i, k);
      else if (LLVMGetIncomingBlock(i, k) == s->pre) f->init = LLVMGetIncomingValue(i, k);
    }
    if (!f->next || !f->init || !rr_in_loop(p, f->next)) return false;
  }
  if (!match_exit(p, s)) return false;
  for (int k = 0; k < s->nphis; k++) {
    rm_phi *f = &s->phis[k];
    LLVMTypeRef ty = LLVMTypeOf(f->phi);
    if (!rr_width(ty) || rr_width(ty) > 64) continue;
    int d = rr_poly_add(p, ty, rr_eval(p, f->next, 0), f->atom, ~0ull);
    if (d < 0 || rr_varies(p, d, 0)) continue;
    rr_term t[RR_MAX_TERMS];
    int nt = rr_terms_of(p, d, t);
    bool divides = true;
    for (int m = 0; m < nt; m++) {
      divides &= t[m].coeff % s->F == 0;
      t[m].coeff = rr_coeff_div(t[m].coeff, rr_width(ty), s->F);
    }
    if (!divides) continue;
    f->is_iv = true;
    if (k != s->counter && nt == 1 && t[0].nf == 0) t[0].coeff = seen_step(p, s, f, t[0].coeff);
    f->step1 = rr_make_poly(p, ty, t, nt);
    f->f = rr_poly_add(p, ty, f->atom, f->step1, 1);
    if (f->step1 < 0 || f->f < 0) return false;
  }
  return s->phis[s->counter].is_iv && s->phis[s->counter].step1 == rr_poly_const(p, LLVMTypeOf(s->phis[s->counter].phi), 1) &&
         !p->failed;
}

static bool reads_later_copy(const rr_pass *p, const rm_shape *s, int id) {
  for (int i = 0; i < s->neff; i++)
    if (s->copy[i] > 0 && !s->eff[i].is_store && rr_mentions(p, id, s->eff[i].value, 0)) return true;
  return false;
}

/* A non-IV phi: a value v of L reading copy 0 only, v applied F times
 * giving the next value (sub holds the IVs' and loads' images). */
static bool find_step(rr_pass *p, rm_shape *s, rm_phi *f, rr_subst *sub) {
  int next = rr_eval(p, f->next, 0);
  for (LLVMValueRef v = LLVMGetFirstInstruction(s->L); v; v = LLVMGetNextInstruction(v)) {
    if (LLVMIsAPHINode(v) || LLVMIsAStoreInst(v) || LLVMTypeOf(v) != LLVMTypeOf(f->phi) ||
        v == LLVMGetBasicBlockTerminator(s->L))
      continue;
    int e = rr_eval(p, v, 0);
    if (e < 0 || reads_later_copy(p, s, e)) continue;
    bool other = false;
    for (int i = 0; i < s->nphis; i++)
      other |= !s->phis[i].is_iv && &s->phis[i] != f && rr_mentions(p, e, s->phis[i].atom, 0);
    if (other) continue;
    rr_subst_add(sub, f->atom, e);
    int at = e;
    for (unsigned g = 1; g < s->F && at >= 0; g++) at = rr_subst_apply(p, at, sub, 0);
    if (at == next) {
      f->f = e;
      f->f_val = v;
      return true;
    }
    sub->n--;
  }
  return false;
}

/* Chains L's accesses into F copies under the IVs' step; sub gets each
 * copy's loads read as the next copy's. */
static bool chain_copies(rr_pass *p, rm_shape *s, rr_subst *sub) {
  bool claimed[RM_MAX_EFF] = {false};
  s->folded = false;
  for (int i = 0; i < s->neff; i++) s->fkey[i] = rr_folded_addr(p, s->eff[i].inst, &s->foff[i]), s->via_fold[i] = false;
  for (int i = 0; i < s->neff; i++) {
    s->succ[i] = -1;
    int addr = rr_subst_apply(p, s->eff[i].addr, sub, 0);
    int fimg = s->fkey[i] >= 0 ? rr_subst_apply(p, s->fkey[i], sub, 0) : -1;
    /* an address the step leaves alone (y[i] = x[i] * scale[0]: every
     * copy loads scale[0]): the next copy's is a later one, so that the
     * copies chain in order instead of closing a cycle */
    bool fixed = addr == s->eff[i].addr;
    for (int j = 0; j < s->neff && addr >= 0 && s->succ[i] < 0; j++)
      if (!claimed[j] && j != i && (!fixed || j > i) && s->eff[j].is_store == s->eff[i].is_store &&
          s->eff[j].addr == addr)
        s->succ[i] = j, claimed[j] = true;
    /* a pointer walk: copy g + 1 at `zext(a) + C + d` where copy g's image
     * is `zext(a + d) + C` (equal behind the range test's floor) */
    for (int j = 0; j < s->neff && fimg >= 0 && !fixed && s->succ[i] < 0; j++)
      if (!claimed[j] && j != i && s->eff[j].is_store == s->eff[i].is_store && s->fkey[j] == fimg)
        s->succ[i] = j, claimed[j] = true, s->folded = s->via_fold[i] = true;
  }
  int ncopy0 = 0;
  for (int i = 0; i < s->neff; i++) s->copy[i] = -1;
  for (int i = 0; i < s->neff; i++) {
    if (claimed[i]) continue;
    int at = i;
    for (unsigned g = 0; g < s->F; g++) {
      if (at < 0 || s->copy[at] >= 0) return false;
      s->copy[at] = (int)g;
      s->idx[at] = ncopy0;
      if (g + 1 < s->F && !s->eff[at].is_store) {
        if (s->succ[at] < 0) return false;
        rr_subst_add(sub, s->eff[at].value, s->eff[s->succ[at]].value);
      }
      at = g + 1 < s->F ? s->succ[at] : at;
    }
    if (s->succ[at] >= 0) return false; /* a chain longer than F */
    ncopy0++;
  }
  if (ncopy0 * (int)s->F != s->neff || ncopy0 > RR_MAX_EFFECTS) return false;
  /* new order: copy, then copy 0's order; only loads may have passed, or
   * a store another copy of the same store (then versioned) */
  s->reorder = false;
  for (int i = 0; i < s->neff; i++)
    for (int j = i + 1; j < s->neff; j++) {
      bool after = s->copy[i] > s->copy[j] || (s->copy[i] == s->copy[j] && s->idx[i] > s->idx[j]);
      if (!after || (!s->eff[i].is_store && !s->eff[j].is_store)) continue;
      if (!s->eff[i].is_store || !s->eff[j].is_store || s->idx[i] != s->idx[j]) return false;
      s->reorder = true;
    }
  return true;
}

/* L is F copies of one iteration at P, f(P), ... */
static bool prove_copies(rr_pass *p, rm_shape *s, rr_subst *sub) {
  if (!rr_collect_effects(p, s->L, s->eff, RM_MAX_EFF, &s->neff) || s->neff == 0) return false;
  for (int i = 0; i < s->nphis; i++)
    if (s->phis[i].is_iv) rr_subst_add(sub, s->phis[i].atom, s->phis[i].f);
  if (!chain_copies(p, s, sub)) return false;
  for (int i = 0; i < s->nphis; i++)
    if (!s->phis[i].is_iv && !find_step(p, s, &s->phis[i], sub)) return false;
  for (int i = 0; i < s->neff; i++) {
    if (s->copy[i] + 1 == (int)s->F || rr_same_access(p, &s->eff[i], &s->eff[s->succ[i]], sub)) continue;
    int j = s->succ[i];
    if (!s->folded || s->fkey[i] < 0 || !rr_same_access_at(p, &s->eff[i], &s->eff[j], sub, s->fkey[i], s->fkey[j]))
      return false;
  }
  /* reordered stores: the copies of each store touch disjoint bytes */
  for (int i = 0; s->reorder && i < s->neff; i++)
    if (s->copy[i] == 0 && s->eff[i].is_store && !rr_disjoint_copies(p, s->eff[i].inst, s->eff[s->succ[i]].inst, s->F))
      return false;
  return !p->failed;
}

/* ---- The blocks around L, R, J ---------------------------------------------- */

/* Where X leads: X may compute values after L (pure instructions used
 * only in X and in its target's phis: detect/counter.c's prefix). */
static LLVMBasicBlockRef x_target(rr_pass *p, LLVMBasicBlockRef X) {
  LLVMBasicBlockRef t = rr_jump_target(X);
  if (!t) return NULL;
  for (LLVMValueRef i = LLVMGetFirstInstruction(X); i != LLVMGetBasicBlockTerminator(X); i = LLVMGetNextInstruction(i)) {
    if (LLVMIsAPHINode(i) || LLVMIsALoadInst(i) || LLVMIsAStoreInst(i) || LLVMIsACallInst(i) ||
        rr_eval_inst(p, i, 0) < 0)
      return NULL;
    for (LLVMUseRef u = LLVMGetFirstUse(i); u; u = LLVMGetNextUse(u)) {
      LLVMValueRef user = LLVMGetUser(u);
      LLVMBasicBlockRef bb = LLVMGetInstructionParent(user);
      if (bb != X && !(bb == t && LLVMIsAPHINode(user))) return NULL;
    }
  }
  return t;
}

/* The bypass arm: a pure block from H to E whose values reach only E's
 * phis (mm_walk of tests/gpu/survey/styles_matmul.c computes the column
 * pointer there, `B + 4 j`, for the remainder loop). */
static bool pure_arm(rr_pass *p, LLVMBasicBlockRef arm, LLVMBasicBlockRef H, LLVMBasicBlockRef E) {
  if (rr_pred0(p, arm) != H || !pure_block_to(p, arm, E)) return false;
  for (LLVMValueRef i = LLVMGetFirstInstruction(arm); i != LLVMGetBasicBlockTerminator(arm); i = LLVMGetNextInstruction(i))
    if (!used_only_in(i, &arm, 1, E)) return false;
  return true;
}

static bool match_blocks(rr_pass *p, rm_shape *s) {
  LLVMBasicBlockRef out = s->out;
  s->X = rr_npreds(p, out) == 1 ? out : NULL;
  s->E = s->X ? x_target(p, s->X) : out;
  if (!s->E || rr_npreds(p, s->E) != 2) return false;
  /* P: a chain of pure blocks into L (wasm-opt leaves empty else arms) */
  LLVMBasicBlockRef first = s->pre, to = s->L;
  for (int n = 0; n < 8 && pure_block_to(p, first, to); n++) s->P = first, to = first, first = rr_pred0(p, first);
  s->H = s->P ? first : s->pre;
  LLVMValueRef hb = rr_cond_br(s->H), eb = rr_cond_br(s->E);
  LLVMBasicBlockRef into = s->P ? s->P : s->L;
  if (!hb || !eb) return false;
  for (unsigned i = 0; i < 2; i++)
    if (LLVMGetSuccessor(hb, 1 - i) == into && (through(p, LLVMGetSuccessor(hb, i), s->H) == s->E ||
                                                pure_arm(p, LLVMGetSuccessor(hb, i), s->H, s->E))) {
      s->e_side = (int)i;
      s->HE = LLVMGetSuccessor(hb, i) == s->E ? s->H : LLVMGetSuccessor(hb, i);
    }
  if (!s->HE) return false;
  /* E: one side to J (through an empty arm), the other into R */
  for (unsigned i = 0; i < 2 && !s->R; i++) {
    LLVMBasicBlockRef r = LLVMGetSuccessor(eb, i), other = LLVMGetSuccessor(eb, 1 - i);
    LLVMBasicBlockRef rp = NULL;
    if (!loop_headed(p, r)) {
      LLVMBasicBlockRef t = rr_jump_target(r);
      if (!t || !pure_block_to(p, r, t)) continue;
      rp = r, r = t;
    }
    LLVMBasicBlockRef rb, rpre, rout;
    if (!single_block_loop(p, loop_headed(p, r), &rb, &rpre, &rout) || rpre != (rp ? rp : s->E)) continue;
    LLVMBasicBlockRef j = rr_npreds(p, rout) == 1 && rr_trivial_target(rout) ? rr_trivial_target(rout) : rout;
    if (through(p, other, s->E) != j || j == s->E) continue;
    s->R = r, s->RP = rp, s->J = j, s->RX = rout == j ? NULL : rout;
    s->EJ = other == j ? s->E : other;
  }
  if (!s->R) return false;
  /* the branch into R tests x & (F - 1) against 0 */
  bool negated;
  LLVMValueRef c = rr_strip_bool(LLVMGetCondition(eb), &negated);
  uint64_t low;
  if (!LLVMIsAICmpInst(c) || !LLVMIsAConstantInt(LLVMGetOperand(c, 1)) ||
      LLVMConstIntGetZExtValue(LLVMGetOperand(c, 1)) != 0 || rr_and_const(LLVMGetOperand(c, 0), &low) != s->x ||
      low != s->F - 1)
    return false;
  int r_side = LLVMGetSuccessor(eb, 0) == (s->RP ? s->RP : s->R) ? 0 : 1;
  for (uint64_t xv = 0; xv < s->F; xv++)
    if (rr_branch_at(eb, s->x, xv) != (xv ? r_side : 1 - r_side)) return false;
  LLVMBasicBlockRef all[] = {s->H, s->P, s->X, s->E, s->RP, s->R, s->RX, s->J,
                             s->HE == s->H ? NULL : s->HE, s->EJ == s->E ? NULL : s->EJ};
  for (unsigned i = 0; i < sizeof all / sizeof *all; i++) {
    if (!all[i]) continue;
    int b = rr_bb_index(p, all[i]);
    if (b < 0 || all[i] == s->L) return false;
    const ir_loop *in = p->lp.innermost[b];
    if (all[i] == s->R ? !in || in->parent != p->loop->parent : in != p->loop->parent) return false;
    for (unsigned k = 0; k < i; k++)
      if (all[k] == all[i]) return false;
  }
  return true;
}

/* L phi f's value after L, as an expression: E's phi, or an IV's init plus
 * its step times the iterations done. */
static int after_expr(rr_pass *p, const rm_shape *s, const rm_phi *f) {
  if (f->after) return rr_atom(p, f->after);
  const rm_phi *c = &s->phis[s->counter];
  if (!f->is_iv || (!c->after && s->k_after < 0) || LLVMTypeOf(f->phi) != LLVMTypeOf(c->phi)) return -1;
  LLVMTypeRef ty = LLVMTypeOf(f->phi);
  int k = c->after ? rr_atom(p, c->after) : s->k_after;
  int done = rr_poly_add(p, ty, k, rr_eval(p, c->init, 0), ~0ull);
  return rr_poly_add(p, ty, rr_eval(p, f->init, 0), rr_poly_mul(p, ty, f->step1, done), 1);
}

/* An E phi that is no L phi's next value but computed from L's state
 * (detect/counter.c's prefix: `a[0] + i` and `i + 1` after the loop): with
 * K the counter's value in E (an atom: L's counter next from L's side,
 * its init from H), each IV of L's type is init + step1 (K - init) after
 * L, and was that less F step1 at the top of the last trip; vx, evaluated
 * there, is then g(K), and vh must be g at K = the counter's init (no
 * trip).  So the phi is g(K) on both edges. */
static int derived_e_phi(rr_pass *p, rm_shape *s, LLVMValueRef vx, LLVMValueRef vh) {
  const rm_phi *c = &s->phis[s->counter];
  LLVMTypeRef ty = LLVMTypeOf(c->phi);
  if (LLVMTypeOf(vx) != ty || c->after) return -1;
  if (s->k_after < 0) s->k_after = rr_atom(p, c->next);
  int done = rr_poly_add(p, ty, s->k_after, rr_eval(p, c->init, 0), ~0ull);
  rr_subst last = {.n = 0};
  for (int n = 0; n < s->nphis; n++) {
    const rm_phi *f = &s->phis[n];
    if (!f->is_iv || LLVMTypeOf(f->phi) != ty) continue;
    int after = rr_poly_add(p, ty, rr_eval(p, f->init, 0), rr_poly_mul(p, ty, f->step1, done), 1);
    int back = rr_poly_mul(p, ty, f->step1, rr_poly_const(p, ty, s->F));
    rr_subst_add(&last, f->atom, rr_poly_add(p, ty, after, back, ~0ull));
  }
  int g = rr_subst_apply(p, rr_eval(p, vx, 0), &last, 0);
  if (g < 0) return -1;
  /* g reads no phi or load of L any more (K aside) */
  for (int n = 0; n < s->nphis; n++)
    if (rr_mentions(p, g, s->phis[n].atom, 0)) return -1;
  for (int n = 0; n < s->neff; n++)
    if (!s->eff[n].is_store && rr_mentions(p, g, s->eff[n].value, 0)) return -1;
  rr_subst none = {.n = 0};
  rr_subst_add(&none, s->k_after, rr_eval(p, c->init, 0));
  return rr_subst_apply(p, g, &none, 0) == rr_eval(p, vh, 0) ? g : -1;
}

/* E's phis: each is an L phi's next value from L's side, its init from H,
 * or computed from those (derived_e_phi). */
static bool match_e_phis(rr_pass *p, rm_shape *s) {
  LLVMBasicBlockRef from_loop = s->X ? s->X : s->L;
  s->k_after = -1;
  s->esub.n = 0;
  LLVMValueRef derived[RR_MAX_PHIS], dx[RR_MAX_PHIS], dh[RR_MAX_PHIS];
  int nder = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->E); i && LLVMIsAPHINode(i); i = LLVMGetNextInstruction(i)) {
    LLVMValueRef vh = NULL, vx = NULL;
    if (LLVMCountIncoming(i) != 2) return false;
    for (unsigned n = 0; n < 2; n++)
      *(LLVMGetIncomingBlock(i, n) == from_loop ? &vx : &vh) = LLVMGetIncomingValue(i, n);
    bool found = false;
    for (int n = 0; n < s->nphis && !found; n++)
      if (s->phis[n].next == vx && s->phis[n].init == vh && !s->phis[n].after) s->phis[n].after = i, found = true;
    if (found) continue;
    if (nder == RR_MAX_PHIS) return false;
    derived[nder] = i, dx[nder] = vx, dh[nder++] = vh;
  }
  /* after the direct ones: the counter's own E phi, if any, comes first */
  for (int n = 0; n < nder; n++) {
    int g = derived_e_phi(p, s, dx[n], dh[n]);
    if (g < 0) return false;
    rr_subst_add(&s->esub, rr_atom(p, derived[n]), g);
  }
  return !p->failed;
}

/* Whether expression id reads a value defined in bb. */
static bool reads_block(const rr_pass *p, int id, LLVMBasicBlockRef bb, int depth) {
  if (id < 0 || depth > 4 * RR_MAX_DEPTH) return true;
  const rr_node *n = &p->nodes[id];
  if (n->kind == RR_ATOM) return LLVMIsAInstruction(n->val) && LLVMGetInstructionParent(n->val) == bb;
  for (int i = 0; i < n->nk; i++)
    if (reads_block(p, n->k[i], bb, depth + 1)) return true;
  for (int i = 0; i < n->nt; i++)
    for (int j = 0; j < n->t[i].nf; j++)
      if (reads_block(p, n->t[i].f[j], bb, depth + 1)) return true;
  return false;
}

static void incoming(LLVMValueRef phi, LLVMBasicBlockRef loop, LLVMValueRef *init, LLVMValueRef *next) {
  *init = *next = NULL;
  for (unsigned k = 0; k < LLVMCountIncoming(phi) && k < 2; k++)
    *(LLVMGetIncomingBlock(phi, k) == loop ? next : init) = LLVMGetIncomingValue(phi, k);
}

/* R: its down counter d from x & (F - 1), r = (x & (F - 1)) - d iterations
 * done.  At R's r-th trip an IV of L holds its value after L plus r steps
 * (sub), and each IV of R its init plus r steps (rsub); every other phi of
 * R is one of L's after L.  R's accesses are then copy 0's, and its other
 * phis step as f. */
static bool prove_rest(rr_pass *p, rm_shape *s) {
  LLVMBasicBlockRef rpre = s->RP ? s->RP : s->E;
  rr_subst sub = {.n = 0}, rsub = {.n = 0};
  LLVMValueRef init, next;
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->R); i && LLVMIsAPHINode(i); i = LLVMGetNextInstruction(i)) {
    incoming(i, s->R, &init, &next);
    if (LLVMCountIncoming(i) != 2 || !init || !next || LLVMGetIncomingBlock(i, LLVMGetIncomingBlock(i, 0) == s->R) != rpre)
      return false;
    uint64_t low, d;
    LLVMTypeRef ty = LLVMTypeOf(i);
    /* x & (F - 1), x or a twin phi equal to it (rr_offset_of) */
    LLVMValueRef of = rr_and_const(init, &low);
    if (!s->down && of && rr_offset_of(of, s->x, &d) && d == 0 && low == s->F - 1 &&
        rr_poly_add(p, ty, rr_eval(p, next, 0), rr_atom(p, i), ~0ull) == rr_poly_const(p, ty, rr_wmask(rr_width(ty))))
      s->down = i;
  }
  if (!s->down) return false;
  LLVMTypeRef dty = LLVMTypeOf(s->down);
  incoming(s->down, s->R, &init, &next);
  int r = rr_poly_add(p, dty, rr_eval(p, init, 0), rr_atom(p, s->down), ~0ull);
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->R); i && LLVMIsAPHINode(i); i = LLVMGetNextInstruction(i)) {
    if (i == s->down) continue;
    incoming(i, s->R, &init, &next);
    LLVMTypeRef ty = LLVMTypeOf(i);
    int step = ty == dty ? rr_poly_add(p, ty, rr_eval(p, next, 0), rr_atom(p, i), ~0ull) : -1;
    int from = rr_subst_apply(p, rr_eval(p, init, 0), &s->esub, 0);
    if (step >= 0 && !reads_block(p, step, s->R, 0)) {
      rr_subst_add(&rsub, rr_atom(p, i), rr_poly_add(p, ty, from, rr_poly_mul(p, ty, step, r), 1));
      continue;
    }
    int want = from;
    rm_phi *f = NULL;
    for (int n = 0; n < s->nphis && !f; n++)
      if (!s->phis[n].is_iv && !s->phis[n].rphi && LLVMTypeOf(s->phis[n].phi) == ty &&
          after_expr(p, s, &s->phis[n]) == want)
        f = &s->phis[n];
    if (!f) return false;
    f->rphi = i;
    rr_subst_add(&sub, f->atom, rr_atom(p, i));
  }
  for (int n = 0; n < s->nphis; n++) {
    const rm_phi *f = &s->phis[n];
    int a = f->is_iv && LLVMTypeOf(f->phi) == dty ? after_expr(p, s, f) : -1;
    if (a >= 0) rr_subst_add(&sub, f->atom, rr_poly_add(p, dty, a, rr_poly_mul(p, dty, f->step1, r), 1));
  }
  /* R's exit: d's next value != 0 stays */
  LLVMValueRef br = rr_cond_br(s->R);
  bool negated;
  LLVMValueRef c = br ? rr_strip_bool(LLVMGetCondition(br), &negated) : NULL;
  LLVMValueRef dnext = NULL;
  for (unsigned k = 0; k < 2; k++)
    if (LLVMGetIncomingBlock(s->down, k) == s->R) dnext = LLVMGetIncomingValue(s->down, k);
  if (!c || !LLVMIsAICmpInst(c) || LLVMGetOperand(c, 0) != dnext || !LLVMIsAConstantInt(LLVMGetOperand(c, 1)) ||
      LLVMConstIntGetZExtValue(LLVMGetOperand(c, 1)) != 0)
    return false;
  LLVMIntPredicate pred = LLVMGetICmpPredicate(c);
  bool stay_if_true = LLVMGetSuccessor(br, 0) == s->R;
  if ((pred != LLVMIntNE && pred != LLVMIntEQ) || (pred == LLVMIntNE) != (stay_if_true != negated)) return false;
  for (LLVMUseRef u = LLVMGetFirstUse(s->down); u; u = LLVMGetNextUse(u))
    if (LLVMGetUser(u) != dnext) return false;
  for (LLVMUseRef u = LLVMGetFirstUse(dnext); u; u = LLVMGetNextUse(u))
    if (LLVMGetUser(u) != s->down && LLVMGetUser(u) != c) return false;
  /* R's accesses: copy 0's in order (loads may pass loads) */
  if (!rr_collect_effects(p, s->R, s->reff, RR_MAX_EFFECTS, &s->nreff)) return false;
  for (int j = 0; j < s->nreff; j++) {
    s->reff[j].addr = rr_subst_apply(p, s->reff[j].addr, &rsub, 0);
    if (s->reff[j].is_store) s->reff[j].value = rr_subst_apply(p, s->reff[j].value, &rsub, 0);
    if (s->reff[j].addr < 0 || s->reff[j].value < 0) return false;
  }
  int ncopy0 = s->neff / (int)s->F, at[RR_MAX_EFFECTS];
  if (s->nreff != ncopy0) return false;
  bool used[RR_MAX_EFFECTS] = {false};
  for (int n = 0; n < ncopy0; n++) {
    int e = 0;
    while (s->copy[e] != 0 || s->idx[e] != n) e++;
    int addr = rr_subst_apply(p, s->eff[e].addr, &sub, 0);
    at[n] = -1;
    for (int j = 0; j < s->nreff && at[n] < 0 && addr >= 0; j++)
      if (!used[j] && s->reff[j].is_store == s->eff[e].is_store && s->reff[j].addr == addr) at[n] = j;
    if (at[n] < 0) return false;
    used[at[n]] = true;
    if (!s->eff[e].is_store) rr_subst_add(&sub, s->eff[e].value, s->reff[at[n]].value);
  }
  for (int n = 0; n < ncopy0; n++) {
    int e = 0;
    while (s->copy[e] != 0 || s->idx[e] != n) e++;
    if (!rr_same_access(p, &s->eff[e], &s->reff[at[n]], &sub)) return false;
    for (int m = 0; m < n; m++)
      if (at[n] < at[m] && (s->reff[at[n]].is_store || s->reff[at[m]].is_store)) return false;
  }
  for (int n = 0; n < s->nphis; n++) {
    const rm_phi *f = &s->phis[n];
    if (!f->rphi) continue;
    incoming(f->rphi, s->R, &init, &next);
    if (rr_subst_apply(p, rr_eval(p, next, 0), &rsub, 0) != rr_subst_apply(p, f->f, &sub, 0)) return false;
  }
  return !p->failed;
}

/* J's phis: from E and from R the same L phi's value after the loops. */
static bool match_j_phis(rr_pass *p, rm_shape *s) {
  LLVMBasicBlockRef from_r = s->RX ? s->RX : s->R;
  int n = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->J); i && LLVMIsAPHINode(i); i = LLVMGetNextInstruction(i), n++) {
    LLVMValueRef ve = NULL, vr = NULL;
    for (unsigned m = 0; m < LLVMCountIncoming(i); m++)
      if (LLVMGetIncomingBlock(i, m) == s->EJ) ve = LLVMGetIncomingValue(i, m);
      else if (LLVMGetIncomingBlock(i, m) == from_r) vr = LLVMGetIncomingValue(i, m);
    if (n == RR_MAX_PHIS || !ve || !vr) return false;
    s->jphi_val[n] = NULL;
    if (ve == vr && !(LLVMIsAInstruction(ve) && (rr_in_loop(p, ve) || LLVMGetInstructionParent(ve) == s->E))) {
      s->jphi_val[n] = ve; /* the same value on both ways: defined before */
      continue;
    }
    for (int k = 0; k < s->nphis && !s->jphi_val[n]; k++) {
      const rm_phi *f = &s->phis[k];
      LLVMValueRef rnext = NULL;
      for (unsigned m = 0; f->rphi && m < 2; m++)
        if (LLVMGetIncomingBlock(f->rphi, m) == s->R) rnext = LLVMGetIncomingValue(f->rphi, m);
      if (rnext && rr_eval(p, ve, 0) == after_expr(p, s, f) && rr_eval(p, vr, 0) == rr_eval(p, rnext, 0))
        s->jphi_val[n] = f->phi; /* replaced by its f_val in the rewrite */
    }
    if (!s->jphi_val[n]) return false;
  }
  return !p->failed;
}

/* ---- Counts and uses ------------------------------------------------------------ */

/* No x with x & mask == start enters L, but those with x & (F - 1) == 0
 * too (s->loose): for them N == M == start, and the old loop and the new
 * run 2^w iterations alike, with no remainder. */
static bool counts_agree(rr_pass *p, rm_shape *s) {
  unsigned w = rr_width(LLVMTypeOf(s->x));
  uint64_t start = LLVMConstIntGetZExtValue(s->phis[s->counter].init);
  s->loose = false;
  if (start & ~s->mask & rr_wmask(w)) return true; /* M never equals start */
  uint64_t free_bits = ~s->mask & rr_wmask(w);
  if (__builtin_popcountll(free_bits) > 8) return false;
  for (uint64_t sub = free_bits;; sub = (sub - 1) & free_bits) {
    if (!rr_never_enters(p, s->H, s->e_side, s->x, start | sub)) {
      if (sub & (s->F - 1)) return false;
      s->loose = true;
    }
    if (!sub) break;
  }
  return true;
}

static bool used_only_in(LLVMValueRef v, const LLVMBasicBlockRef *bbs, int n, LLVMBasicBlockRef phis_of) {
  for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    LLVMBasicBlockRef bb = LLVMIsAInstruction(user) ? LLVMGetInstructionParent(user) : NULL;
    bool ok = bb && bb == phis_of && LLVMIsAPHINode(user);
    for (int i = 0; i < n && !ok; i++) ok = bb && bb == bbs[i];
    if (!ok) return false;
  }
  return true;
}

static bool in_list(LLVMValueRef const *list, int n, LLVMValueRef v) {
  for (int i = 0; i < n; i++)
    if (list[i] == v) return true;
  return false;
}

static bool uses_confined(rr_pass *p, rm_shape *s) {
  LLVMBasicBlockRef only_l[] = {s->L, s->X}, only_r[] = {s->R}, rest[] = {s->E, s->RP, s->R, s->RX};
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->L); i; i = LLVMGetNextInstruction(i))
    if (!used_only_in(i, only_l, s->X ? 2 : 1, s->E)) return false;
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->R); i; i = LLVMGetNextInstruction(i))
    if (!used_only_in(i, only_r, 1, s->J)) return false;
  if (s->RP)
    for (LLVMValueRef i = LLVMGetFirstInstruction(s->RP); i; i = LLVMGetNextInstruction(i))
      if (!used_only_in(i, rest, 4, s->J)) return false;
  s->nhoist = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->E); i; i = LLVMGetNextInstruction(i)) {
    if (i == LLVMGetBasicBlockTerminator(s->E)) break;
    bool movable = !LLVMIsAPHINode(i) && !LLVMIsALoadInst(i) && !LLVMIsAStoreInst(i) &&
                   rr_eval_inst(p, i, 0) >= 0 && s->nhoist < RR_MAX_BODY_E;
    for (int k = 0; movable && k < LLVMGetNumOperands(i); k++) {
      LLVMValueRef op = LLVMGetOperand(i, (unsigned)k);
      movable = !(LLVMIsAInstruction(op) && LLVMGetInstructionParent(op) == s->E) || in_list(s->hoist, s->nhoist, op);
    }
    if (movable) s->hoist[s->nhoist++] = i;
    else if (!used_only_in(i, rest, 4, s->J)) return false;
  }
  return true;
}

/* x is defined where H can compute the new end from it. */
static bool x_before_h(const rr_pass *p, const rm_shape *s) {
  return !LLVMIsAInstruction(s->x) ||
         ir_dominates(&p->dom, ir_cfg_index(&p->cfg, LLVMGetInstructionParent(s->x)), ir_cfg_index(&p->cfg, s->H));
}

/* The bypass is taken for x <= b only, b < F (an unsigned compare of x
 * with a constant: its bypass set is a prefix [0, b] when x = F and the
 * largest x both enter), and the counter starts at 0: then every bypassed
 * x has x & mask == 0, and H may enter the new loop for every x but those
 * with nothing to do (N == 0): 1.  R then never runs and goes.  Or the
 * compare is of x + K (a twin phi of x, as rr_offset_of), or the counts
 * agreed loosely: 2, below. */
static int bypass_joins(const rr_pass *p, const rm_shape *s) {
  LLVMValueRef hb = rr_cond_br(s->H);
  bool negated;
  LLVMValueRef c = rr_strip_bool(LLVMGetCondition(hb), &negated);
  uint64_t offset;
  if (!LLVMIsAICmpInst(c) || !rr_offset_of(LLVMGetOperand(c, 0), s->x, &offset) ||
      !LLVMIsAConstantInt(LLVMGetOperand(c, 1)) || LLVMConstIntGetZExtValue(s->phis[s->counter].init) != 0 ||
      !x_before_h(p, s))
    return 0;
  LLVMIntPredicate pred = LLVMGetICmpPredicate(c);
  if (pred != LLVMIntULT && pred != LLVMIntULE && pred != LLVMIntUGT && pred != LLVMIntUGE) return 0;
  uint64_t top = rr_wmask(rr_width(LLVMTypeOf(s->x)));
  if (offset == 0 && !s->loose)
    return rr_branch_at(hb, s->x, s->F) == 1 - s->e_side && rr_branch_at(hb, s->x, top) == 1 - s->e_side;
  /* x + K <u C (x = i + 1 tested as i <u 3 or i >=u 3), or a loose
   * count: the compare has one value on x + K in [0, W] (W = C - 1 for
   * <u and >=u, C for <=u and >u) and the other above, and the branch
   * follows it; with the bypass not taken at x + K = W + 1 it is taken
   * for x + K in [0, W] at most, each such x enumerated, and each must
   * start the new loop where R would run (x & mask == 0: N == x & (F -
   * 1)).  The bypass is then kept only where H took it and N == 0 (how
   * 2). */
  uint64_t bound = LLVMConstIntGetZExtValue(LLVMGetOperand(c, 1));
  if (bound > 64 || ((pred == LLVMIntULT || pred == LLVMIntUGE) && bound == 0)) return 0;
  if (pred == LLVMIntULT || pred == LLVMIntUGE) bound--;
  if (rr_branch_at(hb, s->x, (bound + 1 - offset) & top) != 1 - s->e_side) return 0;
  for (uint64_t v = 0; v <= bound; v++) {
    uint64_t xv = (v - offset) & top;
    int taken = rr_branch_at(hb, s->x, xv);
    if (taken < 0 || (taken == s->e_side && (xv & s->mask))) return 0;
  }
  return 2;
}

/* how 1: the bypass only where N == 0; 2: where H took it and N == 0. */
static void merge_bypass(rr_pass *p, rm_shape *s, LLVMValueRef end, int how) {
  LLVMBuilderRef b = p->b;
  LLVMValueRef hb = LLVMGetBasicBlockTerminator(s->H);
  LLVMPositionBuilderBefore(b, hb);
  LLVMValueRef none = LLVMBuildICmp(b, s->e_side == 0 ? LLVMIntEQ : LLVMIntNE, end,
                                    LLVMConstInt(LLVMTypeOf(end), 0, false), "reroll.bypass");
  if (how == 2)
    none = s->e_side == 0 ? LLVMBuildAnd(b, LLVMGetCondition(hb), none, "reroll.bypass")
                          : LLVMBuildOr(b, LLVMGetCondition(hb), none, "reroll.loop");
  LLVMSetCondition(hb, none);
  LLVMInstructionEraseFromParent(LLVMGetBasicBlockTerminator(s->E));
  LLVMPositionBuilderAtEnd(b, s->E);
  LLVMBuildBr(b, s->EJ == s->E ? s->J : s->EJ);
  ir_retarget_phis(s->J, s->RX ? s->RX : s->R, NULL);
  if (s->RX) LLVMDeleteBasicBlock(s->RX);
  LLVMDeleteBasicBlock(s->R);
  if (s->RP) LLVMDeleteBasicBlock(s->RP);
}

/* ---- The rewrite ------------------------------------------------------------------- */

/* Marks v and what it reads in L; false when that reaches a later copy. */
static bool keep(const rm_shape *s, rr_set *set, LLVMValueRef v) {
  if (!v || !LLVMIsAInstruction(v) || LLVMGetInstructionParent(v) != s->L || LLVMIsAPHINode(v) || rr_set_has(set, v))
    return true;
  for (int i = 0; i < s->neff; i++)
    if (s->copy[i] > 0 && s->eff[i].inst == v) return false;
  if (set->n == RR_MAX_BODY) return false;
  set->v[set->n++] = v;
  for (int i = 0; i < LLVMGetNumOperands(v); i++)
    if (!keep(s, set, LLVMGetOperand(v, (unsigned)i))) return false;
  return true;
}

/* An existing value of L equal to id, else NULL. */
static LLVMValueRef find_value(rr_pass *p, const rm_shape *s, int id) {
  for (LLVMValueRef v = LLVMGetFirstInstruction(s->L); v; v = LLVMGetNextInstruction(v))
    if (!LLVMIsAPHINode(v) && !LLVMIsALoadInst(v) && !LLVMIsAStoreInst(v) && v != LLVMGetBasicBlockTerminator(s->L) &&
        rr_eval(p, v, 0) == id)
      return v;
  return NULL;
}

/* Each IV's next value: an existing one, or phi + a constant step. */
static bool plan_nexts(rr_pass *p, rm_shape *s) {
  for (int i = 0; i < s->nphis; i++) {
    rm_phi *f = &s->phis[i];
    if (!f->is_iv) continue;
    f->f_val = find_value(p, s, f->f);
    const rr_node *h = &p->nodes[f->step1];
    if (!f->f_val && !(h->kind == RR_POLY && (h->nt == 0 || (h->nt == 1 && h->t[0].nf == 0)))) return false;
  }
  return true;
}

static bool memory_needs_version(rr_pass *p, const rm_shape *s);

/* Stores out of order (s->reorder): before L, in its preheader, the test
 * that every access of the re-rolled loop is in bounds, and a copy of L
 * as it is (its exit to E) where the test fails (ir_reroll_order.c).
 * *kept_in gets the copy's exit block. */
static bool version(rr_pass *p, rm_shape *s, const rr_subst *sub, LLVMBasicBlockRef *kept_in) {
  LLVMValueRef pterm = LLVMGetBasicBlockTerminator(s->pre);
  if (!pterm || LLVMGetNumSuccessors(pterm) != 1 || LLVMIsConditional(pterm)) return false;
  LLVMBasicBlockRef old_in = s->X ? s->X : s->L; /* E's pred from L's side */
  if (s->X)
    for (LLVMValueRef i = LLVMGetFirstInstruction(s->X); i != LLVMGetBasicBlockTerminator(s->X);
         i = LLVMGetNextInstruction(i))
      if (LLVMIsAPHINode(i) || LLVMIsALoadInst(i) || LLVMIsAStoreInst(i) || LLVMIsACallInst(i)) return false;
  /* the test first: it may fail before anything changed */
  rr_effect acc[RR_MAX_EFFECTS];
  uint64_t floor[RR_MAX_EFFECTS];
  int n = 0;
  for (int i = 0; i < s->neff; i++) {
    if (s->copy[i] != 0) continue;
    /* folded copies: the largest C_g - C_0 of the chain (ir_reroll_order.c) */
    floor[n] = 0;
    for (int g = s->succ[i]; s->folded && g >= 0 && s->copy[g] > 0; g = s->copy[g] + 1 < (int)s->F ? s->succ[g] : -1)
      if (s->fkey[i] >= 0 && s->foff[g] > s->foff[i] && s->foff[g] - s->foff[i] > floor[n])
        floor[n] = s->foff[g] - s->foff[i];
    acc[n++] = s->eff[i];
  }
  rm_phi *c = &s->phis[s->counter];
  LLVMTypeRef ty = LLVMTypeOf(c->phi);
  /* inside a nest: the test before the nest, the nest cloned as it is
   * (ir_reroll_hoist.c); L is then re-rolled with nothing beside it */
  if (p->exact_traps && p->loop->parent && rr_hoisted(s->L)) {
    *kept_in = NULL;
    return true;
  }
  if (p->exact_traps && p->loop->parent && rr_hoist_test(p, acc, n, floor, sub, s->L, s->pre, s->R, s->x, s->mask | (s->F - 1), c->init)) {
    p->restart = true; /* re-rolled on the next pass over the function */
    return true;
  }
  if (p->loop->parent && !memory_needs_version(p, s)) {
    *kept_in = NULL;
    return true;
  }
  /* built in a block of its own, moved before pterm once complete */
  LLVMBasicBlockRef T = rr_test_begin(p, s->L);
  LLVMValueRef end = LLVMBuildAnd(p->b, s->x, LLVMConstInt(ty, s->mask | (s->F - 1), false), "reroll.vend");
  LLVMValueRef trips = LLVMBuildSub(p->b, end, c->init, "reroll.trips");
  LLVMValueRef ok = rr_range_test(p, acc, n, floor, sub, s->L, s->pre, trips);
  if (!rr_test_end(p, T, ok, pterm)) return false;
  LLVMValueRef from[RR_MAX_BODY], to[RR_MAX_BODY];
  int nmap;
  LLVMBasicBlockRef kx;
  LLVMBasicBlockRef C = rr_clone_loop(p, s->L, s->pre, s->pre, s->E, &kx, from, to, RR_MAX_BODY, &nmap);
  if (!C) return false; /* not reached for a loop that matched */
  /* X's pure values (the values after L) again after the copy */
  if (s->X) {
    LLVMPositionBuilderBefore(p->b, LLVMGetBasicBlockTerminator(kx));
    for (LLVMValueRef i = LLVMGetFirstInstruction(s->X); i != LLVMGetBasicBlockTerminator(s->X);
         i = LLVMGetNextInstruction(i)) {
      if (nmap == RR_MAX_BODY) return false;
      LLVMValueRef k = LLVMInstructionClone(i);
      LLVMInsertIntoBuilder(p->b, k);
      for (int o = 0; o < LLVMGetNumOperands(k); o++)
        for (int m = 0; m < nmap; m++)
          if (from[m] == LLVMGetOperand(k, (unsigned)o)) LLVMSetOperand(k, (unsigned)o, to[m]);
      from[nmap] = i, to[nmap++] = k;
    }
  }
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

static void rewrite(rr_pass *p, rm_shape *s, rr_set *kept, LLVMBasicBlockRef versioned) {
  LLVMBuilderRef b = p->b;
  LLVMTypeRef ty = LLVMTypeOf(s->M);
  if (x_before_h(p, s)) LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(s->H));
  else LLVMPositionBuilderBefore(b, LLVMGetNextInstruction(s->M));
  LLVMValueRef end = LLVMBuildAnd(b, s->x, LLVMConstInt(ty, s->mask | (s->F - 1), false), "reroll.end");
  LLVMValueRef term = LLVMGetBasicBlockTerminator(s->L);
  LLVMPositionBuilderBefore(b, term);
  for (int i = 0; i < s->nphis; i++) {
    rm_phi *f = &s->phis[i];
    if (!f->f_val) {
      const rr_node *h = &p->nodes[f->step1];
      uint64_t c = h->nt ? h->t[0].coeff : 0;
      f->f_val = LLVMBuildAdd(b, f->phi, LLVMConstInt(LLVMTypeOf(f->phi), c, false), "reroll.next");
      kept->v[kept->n++] = f->f_val;
    }
  }
  for (int i = 0; i < s->nphis; i++)
    for (unsigned k = 0; k < 2; k++)
      if (LLVMGetIncomingBlock(s->phis[i].phi, k) == s->L) LLVMSetOperand(s->phis[i].phi, k, s->phis[i].f_val);
  LLVMValueRef stay = LLVMBuildICmp(b, LLVMIntNE, s->phis[s->counter].f_val, end, "reroll.stay");
  kept->v[kept->n++] = stay;
  LLVMBasicBlockRef out = s->X;
  if (out) LLVMInstructionEraseFromParent(LLVMGetBasicBlockTerminator(out));
  else out = LLVMInsertBasicBlockInContext(p->ctx, s->E, "reroll.exit");
  LLVMValueRef br = LLVMBuildCondBr(b, stay, s->L, out);
  ir_copy_metadata(term, br);
  kept->v[kept->n++] = br;
  LLVMInstructionEraseFromParent(term);
  LLVMPositionBuilderAtEnd(b, out);
  LLVMBuildBr(b, s->J);
  int n = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->J); i && LLVMIsAPHINode(i); i = LLVMGetNextInstruction(i), n++) {
    LLVMValueRef v = s->jphi_val[n];
    for (int k = 0; k < s->nphis; k++)
      if (s->phis[k].phi == v) v = s->phis[k].f_val;
    LLVMAddIncoming(i, &v, &out, 1);
  }
  LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(s->H));
  for (int i = 0; i < s->nhoist; i++) {
    LLVMInstructionRemoveFromParent(s->hoist[i]);
    LLVMInsertIntoBuilder(b, s->hoist[i]);
  }
  if (versioned) {
    /* E is reached from H and from the kept copy: the old edge goes */
    ir_retarget_phis(s->E, versioned, NULL);
    goto sweep;
  }
  int how = bypass_joins(p, s);
  if (how) merge_bypass(p, s, end, how);
  /* E is now reached from H only: its phis are their values from H. */
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->E), next; i && LLVMIsAPHINode(i); i = next) {
    next = LLVMGetNextInstruction(i);
    LLVMValueRef vh = LLVMGetIncomingBlock(i, 0) == s->HE ? LLVMGetIncomingValue(i, 0) : LLVMGetIncomingValue(i, 1);
    LLVMReplaceAllUsesWith(i, vh);
    LLVMInstructionEraseFromParent(i);
  }
sweep:
  /* X's values after L fed E's phis from X only: gone with that edge */
  if (s->X)
    for (LLVMValueRef i = LLVMGetLastInstruction(s->X), prev; i; i = prev) {
      prev = LLVMGetPreviousInstruction(i);
      if (i != LLVMGetBasicBlockTerminator(s->X) && !LLVMIsAPHINode(i) && !LLVMGetFirstUse(i))
        LLVMInstructionEraseFromParent(i);
    }
  for (LLVMValueRef i = LLVMGetLastInstruction(s->L), prev; i; i = prev) {
    prev = LLVMGetPreviousInstruction(i);
    if (!LLVMIsAPHINode(i) && !rr_set_has(kept, i)) LLVMInstructionEraseFromParent(i);
  }
}

/* Copies matched on folded addresses need no version where the loop only
 * loads and every chain is a walk (rr_walk_copies). */
static bool walks_exact(rr_pass *p, const rm_shape *s) {
  for (int i = 0; i < s->neff; i++) {
    if (s->eff[i].is_store) return false;
    if (s->copy[i] != 0) continue;
    LLVMValueRef insts[32];
    bool fold = false;
    int at = i;
    for (unsigned g = 0; g < s->F; g++, at = s->succ[at]) {
      insts[g] = s->eff[at].inst;
      fold |= g + 1 < s->F && s->via_fold[at];
    }
    if (fold && !rr_walk_copies(p, insts, s->F)) return false;
  }
  return true;
}

/* Whether the re-rolled loop may run only behind the range test.  Stores
 * out of order, and folded copies that are no walk of loads, for the
 * memory a trap leaves (ir_reroll_order.c).  And, for the offset a trap
 * names, every loop that touches memory: the re-rolled loop runs each
 * iteration with copy 0's instructions, so where the old trip would trap
 * at copy g > 0's access (a later copy's load first, as clang orders a
 * dot product's copies 3, 2, 1, 0; or simply the trip's last element past
 * the end) or in the remainder loop, the new loop traps at the same
 * address but names copy 0's instruction.  Behind the test nothing traps,
 * and where it fails the original loop runs.  Inside another loop the
 * test goes before the nest where it can (ir_reroll_hoist.c), else
 * (memory_needs_version) in L's preheader or not at all. */
static bool needs_version(rr_pass *p, const rm_shape *s) {
  if (s->reorder || (s->folded && !walks_exact(p, s))) return true;
  return p->exact_traps && s->neff > 0;
}

/* Whether the memory a trap leaves needs the version (not only the
 * offset it names): then a loop in a nest the hoist cannot read keeps
 * its test in its preheader (round 11); otherwise such a loop is
 * re-rolled as before round 13, its trap offsets copy 0's (the nest
 * stays offloadable). */
static bool memory_needs_version(rr_pass *p, const rm_shape *s) {
  return s->reorder || (s->folded && !walks_exact(p, s));
}

/* canon: how many more rewrites of ir_reroll_canon.c may be tried (two:
 * each rewrites a form that is gone after it); the CFG stays, the
 * expressions are rebuilt after one. */
static bool try_remainder(rr_pass *p, int canon) {
  rm_shape *s = tw_arena_alloc(&p->arena, sizeof *s);
  memset(s, 0, sizeof *s);
  rr_subst *sub = tw_arena_alloc(&p->arena, sizeof *sub);
  sub->n = 0;
  if (!single_block_loop(p, p->loop, &s->L, &s->pre, &s->out) || ir_checked_copy(s->L)) return false;
  if (!match_phis(p, s)) {
    p->failed = false;
    if (canon <= 0) return false;
    if (!rr_canon_negated(p, s->L, s->pre)) {
      rr_undo undo;
      if (!rr_canon_down(p, s->L, s->pre, &undo)) return false;
      rr_reset(p);
      if (try_remainder(p, canon - 1)) return true;
      rr_canon_undo(&undo);
      rr_reset(p);
      return false;
    }
    rr_reset(p);
    return try_remainder(p, canon - 1);
  }
  if (!match_blocks(p, s)) return false;
  if (canon > 0 && rr_canon_scaled_rest(p, s->R, s->RP ? s->RP : s->E, s->x, s->F)) {
    rr_reset(p);
    return try_remainder(p, canon - 1);
  }
  if (!prove_copies(p, s, sub) || !match_e_phis(p, s) || !prove_rest(p, s) || !match_j_phis(p, s) ||
      !counts_agree(p, s) || !uses_confined(p, s) || !plan_nexts(p, s))
    return false;
  rr_set *kept = tw_arena_alloc(&p->arena, sizeof *kept);
  kept->n = 0;
  for (int i = 0; i < s->neff; i++)
    if (s->copy[i] == 0 && !keep(s, kept, s->eff[i].inst)) return false;
  for (int i = 0; i < s->nphis; i++)
    if (!keep(s, kept, s->phis[i].f_val)) return false;
  if (kept->n + s->nphis + 3 > RR_MAX_BODY) return false;
  LLVMBasicBlockRef versioned = NULL;
  if (needs_version(p, s) && !version(p, s, sub, &versioned)) return false;
  if (p->restart) return true; /* the nest hoisted: L re-rolled on the next pass */
  rewrite(p, s, kept, versioned);
  return true;
}

bool rr_try_remainder(rr_pass *p) { return try_remainder(p, 2); }
