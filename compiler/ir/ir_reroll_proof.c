/* ir_reroll_proof.c: the re-roll pass's proof that the second copy and
 * the tail are the first copy at later states, and that nothing else
 * uses the loop's values. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_reroll.h"

static bool mentions_any_load(const rr_pass *p, int id, const rr_effect *eff, int from, int to) {
  for (int i = from; i < to; i++)
    if (!eff[i].is_store && rr_mentions(p, id, eff[i].value, 0)) return true;
  return false;
}

/* f(phi) for a phi that is not an IV: a value v of L reading only the first
 * half's loads and no other such phi, with next == v(v(P)). */
static bool find_step(rr_pass *p, rr_shape *s, rr_phi *f, rr_subst *sub) {
  int next = rr_eval(p, f->next, 0);
  for (LLVMValueRef v = LLVMGetFirstInstruction(s->L); v; v = LLVMGetNextInstruction(v)) {
    if (LLVMIsAPHINode(v) || LLVMIsAStoreInst(v) || LLVMTypeOf(v) != LLVMTypeOf(f->phi) ||
        v == LLVMGetBasicBlockTerminator(s->L))
      continue;
    int e = rr_eval(p, v, 0);
    if (e < 0 || mentions_any_load(p, e, s->b, 0, s->k)) continue;
    bool other = false;
    for (int i = 0; i < s->nphis; i++)
      other |= !s->phis[i].is_iv && &s->phis[i] != f && rr_mentions(p, e, s->phis[i].atom, 0);
    if (other) continue;
    rr_subst_add(sub, f->atom, e);
    if (rr_subst_apply(p, e, sub, 0) == next) {
      f->f = e;
      f->f_val = v;
      return true;
    }
    sub->n--;
  }
  return false;
}

/* An existing value of L equal to f(phi) for an IV, else NULL. */
static LLVMValueRef find_value(rr_pass *p, const rr_shape *s, int id) {
  for (LLVMValueRef v = LLVMGetFirstInstruction(s->L); v; v = LLVMGetNextInstruction(v))
    if (!LLVMIsAPHINode(v) && !LLVMIsALoadInst(v) && !LLVMIsAStoreInst(v) &&
        v != LLVMGetBasicBlockTerminator(s->L) && rr_eval(p, v, 0) == id)
      return v;
  return NULL;
}

/* Pairs each access of `from` (in order) with the first unpaired access of
 * `to` at the address it has under sub, a load's result then read as its
 * partner's.  Stores pair in order; *role: 0 first half, 1 second, -1 open
 * (to may be from). */
static bool pair_up(rr_pass *p, const rr_effect *from, int nfrom, const rr_effect *to, int nto,
                    rr_subst *sub, int *partner) {
  bool used[2 * RR_MAX_EFFECTS] = {false};
  for (int i = 0; i < nfrom; i++) {
    partner[i] = -1;
    int addr = rr_subst_apply(p, from[i].addr, sub, 0);
    for (int j = 0; j < nto && partner[i] < 0 && addr >= 0; j++)
      if (!used[j] && to[j].is_store == from[i].is_store && to[j].addr == addr &&
          to[j].inst != from[i].inst)
        partner[i] = j;
    if (partner[i] < 0) return false;
    used[partner[i]] = true;
    if (!from[i].is_store) rr_subst_add(sub, from[i].value, to[partner[i]].value);
  }
  return true;
}

/* Effects of the first and second half, in place: the stores split in the
 * middle; a load before the last store of the first half is of the first
 * half, one after the first store of the second half of the second; each
 * load between goes to the first half unless an earlier load of the first
 * half claims it as its partner. */
static bool split_halves(rr_pass *p, rr_shape *s, rr_subst *sub) {
  int nstores = 0, last_a = -1, first_b = s->neff, seen = 0;
  for (int i = 0; i < s->neff; i++) nstores += s->eff[i].is_store;
  if (nstores % 2 || s->neff % 2 || s->neff / 2 > RR_MAX_EFFECTS) return false;
  for (int i = 0; i < s->neff; i++)
    if (s->eff[i].is_store && ++seen == nstores / 2) last_a = i;
    else if (s->eff[i].is_store && seen == nstores / 2 + 1) first_b = i;
  int role[2 * RR_MAX_EFFECTS];
  seen = 0;
  for (int i = 0; i < s->neff; i++) {
    if (s->eff[i].is_store) role[i] = seen++ < nstores / 2 ? 0 : 1;
    else role[i] = i < last_a ? 0 : i > first_b ? 1 : -1;
  }
  s->k = 0;
  for (int i = 0; i < s->neff; i++) {
    if (role[i] == 1) continue;
    int addr = rr_subst_apply(p, s->eff[i].addr, sub, 0), found = -1;
    for (int j = 0; j < s->neff && found < 0 && addr >= 0; j++)
      if (role[j] != 0 && j != i && s->eff[j].is_store == s->eff[i].is_store &&
          s->eff[j].addr == addr)
        found = j;
    if (found < 0) {
      if (role[i] == 0) return false;
      continue;
    }
    role[i] = 0;
    role[found] = 1;
    s->pos_a[s->k] = i, s->pos_b[s->k] = found;
    s->a[s->k] = s->eff[i], s->b[s->k++] = s->eff[found];
    if (!s->eff[i].is_store) rr_subst_add(sub, s->eff[i].value, s->eff[found].value);
  }
  if (2 * s->k != s->neff) return false;
  /* One trip of the new loop runs the first half in its order, the next
   * the second: the old order may differ from that only where two loads
   * pass each other (a load does not change memory; a trap then comes
   * before the same stores). */
  for (int i = 0; i < s->k; i++)
    for (int j = 0; j < s->k; j++) {
      bool loads = !s->a[i].is_store && !s->a[j].is_store;
      if (s->pos_b[i] < s->pos_a[j] && !(loads && !s->b[i].is_store)) return false;
      if (i < j && s->pos_b[j] < s->pos_b[i] && !loads) return false;
    }
  return true;
}

/* The two halves of L are one iteration at P and at f(P). */
bool rr_prove_halves(rr_pass *p, rr_shape *s) {
  if (!rr_collect_effects(p, s->L, s->eff, 2 * RR_MAX_EFFECTS, &s->neff)) return false;
  rr_subst sub = {.n = 0};
  for (int i = 0; i < s->nphis; i++)
    if (s->phis[i].is_iv) rr_subst_add(&sub, s->phis[i].atom, s->phis[i].f);
  if (!split_halves(p, s, &sub)) return false;
  for (int i = 0; i < s->nphis; i++)
    if (!s->phis[i].is_iv && !find_step(p, s, &s->phis[i], &sub)) return false;
  for (int i = 0; i < s->k; i++)
    if (!rr_same_access(p, &s->a[i], &s->b[i], &sub)) return false;
  for (int i = 0; i < s->nphis; i++) {
    rr_phi *f = &s->phis[i];
    if (rr_subst_apply(p, f->f, &sub, 0) != rr_eval(p, f->next, 0)) return false;
    if (f->is_iv && i != s->counter) {
      f->f_val = find_value(p, s, f->f);
      const rr_node *h = &p->nodes[f->half];
      if (!f->f_val && !(h->kind == RR_POLY && (h->nt == 0 || (h->nt == 1 && h->t[0].nf == 0))))
        return false;
    }
  }
  return !p->failed;
}

/* Q is the first half at the state E holds; J's phis are phis of L after it. */
bool rr_prove_tail(rr_pass *p, rr_shape *s, LLVMValueRef *jphi_of) {
  LLVMBasicBlockRef from_loop = s->X ? s->X : s->L;
  int k = s->k;
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->E); i; i = LLVMGetNextInstruction(i)) {
    if (i == LLVMGetBasicBlockTerminator(s->E)) break;
    if (!LLVMIsAPHINode(i)) {
      if (LLVMIsALoadInst(i) || LLVMIsAStoreInst(i) || rr_eval_inst(p, i, 0) < 0) return false;
      continue;
    }
    LLVMValueRef vh = NULL, vx = NULL;
    for (unsigned n = 0; n < LLVMCountIncoming(i); n++) {
      LLVMBasicBlockRef b = LLVMGetIncomingBlock(i, n);
      *(b == from_loop ? &vx : &vh) = LLVMGetIncomingValue(i, n);
    }
    bool found = false;
    for (int n = 0; n < s->nphis && !found; n++)
      if (s->phis[n].next == vx && s->phis[n].init == vh) s->phis[n].after = i, found = true;
    if (LLVMCountIncoming(i) != 2 || !found) return false;
  }
  if (!rr_collect_effects(p, s->Q, s->qeff, RR_MAX_EFFECTS, &s->nqeff) || s->nqeff != k) return false;
  const rr_phi *c = &s->phis[s->counter];
  rr_subst sub = {.n = 0};
  int done = c->after ? rr_poly_add(p, LLVMTypeOf(c->phi), rr_atom(p, c->after), rr_eval(p, c->init, 0), ~0ull)
                      : -1;
  for (int i = 0; i < s->nphis; i++) {
    const rr_phi *f = &s->phis[i];
    if (f->after)
      rr_subst_add(&sub, f->atom, rr_atom(p, f->after));
    else if (f->is_iv && done >= 0 && LLVMTypeOf(f->phi) == LLVMTypeOf(c->phi))
      rr_subst_add(&sub, f->atom,
                rr_poly_add(p, LLVMTypeOf(f->phi), rr_eval(p, f->init, 0), rr_poly_mul(p, LLVMTypeOf(f->phi), f->half, done), 1));
  }
  int nstate = sub.n;
  int partner[RR_MAX_EFFECTS];
  if (!pair_up(p, s->a, k, s->qeff, k, &sub, partner)) return false;
  for (int i = 0; i < k; i++) {
    s->qa[i] = s->qeff[partner[i]];
    if (!rr_same_access(p, &s->a[i], &s->qa[i], &sub)) return false;
    for (int j = 0; j < i; j++)
      if (partner[i] < partner[j] && (s->a[i].is_store || s->a[j].is_store)) return false;
  }
  int n = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->J); i && LLVMIsAPHINode(i);
       i = LLVMGetNextInstruction(i), n++) {
    LLVMValueRef ve = NULL, vq = NULL;
    for (unsigned m = 0; m < LLVMCountIncoming(i); m++)
      if (LLVMGetIncomingBlock(i, m) == s->Q) vq = LLVMGetIncomingValue(i, m);
      else if (LLVMGetIncomingBlock(i, m) == s->EJ) ve = LLVMGetIncomingValue(i, m);
    if (n == RR_MAX_PHIS || !ve || !vq) return false;
    jphi_of[n] = NULL;
    for (int m = 0; m < nstate && !jphi_of[n]; m++) {
      const rr_phi *f = NULL;
      for (int q = 0; q < s->nphis; q++)
        if (s->phis[q].atom == sub.from[m]) f = &s->phis[q];
      if (rr_eval(p, ve, 0) == sub.to[m] && rr_eval(p, vq, 0) == rr_subst_apply(p, f->f, &sub, 0))
        jphi_of[n] = f->phi;
    }
    if (!jphi_of[n]) return false;
  }
  return !p->failed;
}

static bool used_only_in(LLVMValueRef v, LLVMBasicBlockRef a, LLVMBasicBlockRef b,
                         LLVMBasicBlockRef phis_of) {
  for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    LLVMBasicBlockRef bb = LLVMIsAInstruction(user) ? LLVMGetInstructionParent(user) : NULL;
    if (!bb || !(bb == a || bb == b || (bb == phis_of && LLVMIsAPHINode(user)))) return false;
  }
  return true;
}

static bool in_list(LLVMValueRef const *list, int n, LLVMValueRef v) {
  for (int i = 0; i < n; i++)
    if (list[i] == v) return true;
  return false;
}

/* L's values reach E's phis only; Q's stay in Q and J's phis; E's too,
 * except pure ones that read no phi of E, which move up to H (H dominates
 * E, and they have no effect where they did not run before). */
bool rr_uses_confined(rr_pass *p, rr_shape *s) {
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->L); i; i = LLVMGetNextInstruction(i))
    if (!used_only_in(i, s->L, s->L, s->E)) return false;
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->Q); i; i = LLVMGetNextInstruction(i))
    if (!used_only_in(i, s->Q, s->Q, s->J)) return false;
  s->nhoist = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->E); i; i = LLVMGetNextInstruction(i)) {
    if (i == LLVMGetBasicBlockTerminator(s->E)) break;
    bool movable = !LLVMIsAPHINode(i) && !LLVMIsALoadInst(i) && rr_eval_inst(p, i, 0) >= 0 &&
                   s->nhoist < RR_MAX_BODY_E;
    for (int k = 0; movable && k < LLVMGetNumOperands(i); k++) {
      LLVMValueRef op = LLVMGetOperand(i, (unsigned)k);
      movable = !(LLVMIsAInstruction(op) && LLVMGetInstructionParent(op) == s->E) ||
                in_list(s->hoist, s->nhoist, op);
    }
    if (movable) s->hoist[s->nhoist++] = i;
    else if (!used_only_in(i, s->E, s->Q, s->J)) return false;
  }
  return true;
}

/* The bypass H -> E is taken for a few x only (x == C, x + K == C with
 * x + K written as such or as a twin phi, x < C), each checked on H's
 * branch itself (rr_branch_at): then each
 * odd one starts the loop at x & mask == start, one trip to N = start + 1,
 * and the even ones skip it; Q is then never needed. */
bool rr_bypass_joins(const rr_shape *s) {
  LLVMValueRef hb = rr_cond_br(s->H);
  bool negated;
  LLVMValueRef c = rr_strip_bool(LLVMGetCondition(hb), &negated);
  if (!LLVMIsAICmpInst(c) || !LLVMIsAConstantInt(LLVMGetOperand(c, 1))) return false;
  unsigned w = rr_width(LLVMTypeOf(s->x));
  uint64_t bound = LLVMConstIntGetZExtValue(LLVMGetOperand(c, 1)), lo, hi, offset;
  /* `x - 1 != 0` (LLVM's form of x != 1), `i == 0` with x = i + 1 (a
   * twin phi: `j <= i`): x == C - K for x + K == C */
  if (!rr_offset_of(LLVMGetOperand(c, 0), s->x, &offset)) return false;
  int e_side = s->e_side;
  LLVMIntPredicate pred = LLVMGetICmpPredicate(c);
  if ((e_side == 0) == negated) pred = LLVMGetICmpPredicate(c) == LLVMIntNE ? LLVMIntEQ
                                      : pred == LLVMIntUGE ? LLVMIntULT
                                      : pred == LLVMIntUGT ? LLVMIntULE : LLVMIntSGT;
  if (pred == LLVMIntEQ) lo = hi = (bound - offset) & rr_wmask(w);
  else if (offset) return false;
  else if (pred == LLVMIntULT && bound > 0 && bound <= 64) lo = 0, hi = bound - 1;
  else if (pred == LLVMIntULE && bound < 64) lo = 0, hi = bound;
  else return false;
  uint64_t start = LLVMConstIntGetZExtValue(s->phis[s->counter].init);
  for (uint64_t xv = lo; xv <= hi; xv++) {
    if (rr_branch_at(hb, s->x, xv) != e_side || xv > rr_wmask(w)) return false;
    if ((xv & 1) && (xv & s->mask) != start) return false;
  }
  return true;
}
