/* ir_reroll_shape.c: the re-roll pass's matching of the unrolled loop:
 * blocks, effects, phis, exit test and trip counts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_reroll.h"

int rr_bb_index(const rr_pass *p, LLVMBasicBlockRef bb) { return ir_cfg_index(&p->cfg, bb); }

/* bb's predecessor count, -1 for a block the CFG does not hold. */
int rr_npreds(const rr_pass *p, LLVMBasicBlockRef bb) {
  int i = rr_bb_index(p, bb);
  return i < 0 ? -1 : p->cfg.blocks[i].npreds;
}

LLVMBasicBlockRef rr_pred0(const rr_pass *p, LLVMBasicBlockRef bb) {
  return p->cfg.blocks[p->cfg.blocks[rr_bb_index(p, bb)].preds[0]].bb;
}

/* The target of bb's unconditional branch, else NULL. */
LLVMBasicBlockRef rr_jump_target(LLVMBasicBlockRef bb) {
  LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
  if (!t || !LLVMIsABranchInst(t) || LLVMIsConditional(t)) return NULL;
  return LLVMGetSuccessor(t, 0);
}

/* A block holding only an unconditional branch: its target. */
LLVMBasicBlockRef rr_trivial_target(LLVMBasicBlockRef bb) {
  return LLVMGetFirstInstruction(bb) == LLVMGetBasicBlockTerminator(bb) ? rr_jump_target(bb) : NULL;
}

LLVMValueRef rr_cond_br(LLVMBasicBlockRef bb) {
  LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
  return t && LLVMIsABranchInst(t) && LLVMIsConditional(t) ? t : NULL;
}

/* bb itself, or the block a trivial block bb (reached only from `from`)
 * leads to: wasm-opt turns br_if into if/else with empty arms. */
static LLVMBasicBlockRef through(const rr_pass *p, LLVMBasicBlockRef bb, LLVMBasicBlockRef from) {
  LLVMBasicBlockRef t = rr_trivial_target(bb);
  return t && rr_npreds(p, bb) == 1 && rr_pred0(p, bb) == from ? t : bb;
}

/* L: one block, one exit, entered from one block (s->pre). */
bool rr_match_loop(rr_pass *p, rr_shape *s) {
  const ir_loop *l = p->loop;
  if (l->nbody != 1 || l->nexits != 1 || l->nchildren) return false;
  s->L = p->cfg.blocks[l->header].bb;
  s->out = p->cfg.blocks[l->exits[0].to].bb;
  if (rr_npreds(p, s->L) != 2) return false;
  const ir_block *lb = &p->cfg.blocks[l->header];
  s->pre = p->cfg.blocks[lb->preds[0] == l->header ? lb->preds[1] : lb->preds[0]].bb;
  return true;
}

/* A block of pure instructions branching to L only (P; it then runs for
 * the odd x of the bypass too, to no effect). */
static bool pure_block(rr_pass *p, LLVMBasicBlockRef bb) {
  LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
  if (!rr_jump_target(bb)) return false;
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i != t; i = LLVMGetNextInstruction(i))
    if (LLVMIsAPHINode(i) || LLVMIsALoadInst(i) || rr_eval_inst(p, i, 0) < 0) return false;
  return true;
}

/* H, E, Q, J around L (the picture at the top of the file). */
bool rr_match_blocks(rr_pass *p, rr_shape *s) {
  const ir_loop *l = p->loop;
  LLVMBasicBlockRef out = s->out, entry = s->pre;
  s->X = rr_npreds(p, out) == 1 ? out : NULL;
  s->E = s->X ? rr_trivial_target(s->X) : out;
  if (!s->E) return false;
  /* P: pure blocks into L, a chain of them where wasm-opt left empty arms */
  LLVMBasicBlockRef first = entry, to = s->L;
  for (int n = 0; n < 8 && pure_block(p, first) && rr_jump_target(first) == to && rr_npreds(p, first) == 1; n++)
    s->P = first, to = first, first = rr_pred0(p, first);
  s->H = s->P ? first : entry;
  LLVMValueRef hb = rr_cond_br(s->H), eb = rr_cond_br(s->E);
  LLVMBasicBlockRef into = s->P ? s->P : s->L;
  if (!hb || !eb || rr_npreds(p, s->E) != 2) return false;
  for (unsigned i = 0; i < 2; i++)
    if (LLVMGetSuccessor(hb, 1 - i) == into && through(p, LLVMGetSuccessor(hb, i), s->H) == s->E) {
      s->e_side = (int)i;
      s->HE = LLVMGetSuccessor(hb, i) == s->E ? s->H : LLVMGetSuccessor(hb, i);
    }
  if (!s->HE) return false;
  for (unsigned i = 0; i < 2; i++) {
    LLVMBasicBlockRef q = LLVMGetSuccessor(eb, i), other = LLVMGetSuccessor(eb, 1 - i);
    LLVMBasicBlockRef j = through(p, other, s->E);
    if (q != other && rr_npreds(p, q) == 1 && rr_jump_target(q) == j && j != q)
      s->Q = q, s->J = j, s->EJ = other == j ? s->E : other;
  }
  if (!s->Q) return false;
  LLVMBasicBlockRef all[] = {s->H, s->P, s->X, s->E, s->Q, s->J,
                             s->HE == s->H ? NULL : s->HE, s->EJ == s->E ? NULL : s->EJ};
  for (unsigned i = 0; i < sizeof all / sizeof *all; i++) {
    if (!all[i]) continue;
    int b = rr_bb_index(p, all[i]);
    if (b < 0 || all[i] == s->L || p->lp.innermost[b] != l->parent) return false;
    for (unsigned k = 0; k < i; k++)
      if (all[k] == all[i]) return false;
  }
  return true;
}

/* Loads and stores of bb in order; false on anything else with an effect. */
bool rr_collect_effects(rr_pass *p, LLVMBasicBlockRef bb, rr_effect *eff, int cap, int *n) {
  *n = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
    bool load = LLVMIsALoadInst(i), store = LLVMIsAStoreInst(i);
    if (i == LLVMGetBasicBlockTerminator(bb) || LLVMIsAPHINode(i)) continue;
    if (!load && !store) {
      if (rr_eval_inst(p, i, 0) < 0) return false;
      continue;
    }
    if (*n == cap || LLVMGetVolatile(i) || LLVMGetOrdering(i) != LLVMAtomicOrderingNotAtomic)
      return false;
    rr_effect *e = &eff[(*n)++];
    e->inst = i;
    e->is_store = store;
    e->addr = rr_eval(p, LLVMGetOperand(i, store ? 1 : 0), 0);
    e->value = store ? rr_eval(p, LLVMGetOperand(i, 0), 0) : rr_atom(p, i);
    if (e->addr < 0 || e->value < 0) return false;
  }
  return !p->failed;
}

static bool same_metadata(LLVMValueRef a, LLVMValueRef b) {
  size_t na, nb;
  LLVMValueMetadataEntry *ma = LLVMInstructionGetAllMetadataOtherThanDebugLoc(a, &na);
  LLVMValueMetadataEntry *mb = LLVMInstructionGetAllMetadataOtherThanDebugLoc(b, &nb);
  bool same = na == nb;
  for (unsigned i = 0; same && i < na; i++)
    same = LLVMValueMetadataEntriesGetKind(ma, i) == LLVMValueMetadataEntriesGetKind(mb, i) &&
           LLVMValueMetadataEntriesGetMetadata(ma, i) == LLVMValueMetadataEntriesGetMetadata(mb, i);
  if (ma) LLVMDisposeValueMetadataEntries(ma);
  if (mb) LLVMDisposeValueMetadataEntries(mb);
  return same;
}

/* b is a evaluated under s: same access, address and stored value. */
bool rr_same_access(rr_pass *p, const rr_effect *a, const rr_effect *b, const rr_subst *s) {
  return rr_same_access_at(p, a, b, s, a->addr, b->addr);
}

/* As rr_same_access, with the addresses given (folded ones: ir_reroll_order.c). */
bool rr_same_access_at(rr_pass *p, const rr_effect *a, const rr_effect *b, const rr_subst *s, int a_addr, int b_addr) {
  if (a->is_store != b->is_store) return false;
  LLVMValueRef va = a->is_store ? LLVMGetOperand(a->inst, 0) : a->inst;
  LLVMValueRef vb = b->is_store ? LLVMGetOperand(b->inst, 0) : b->inst;
  if (LLVMTypeOf(va) != LLVMTypeOf(vb) || LLVMGetAlignment(a->inst) != LLVMGetAlignment(b->inst) ||
      !same_metadata(a->inst, b->inst))
    return false;
  int addr = rr_subst_apply(p, a_addr, s, 0);
  if (addr < 0 || addr != b_addr) return false;
  if (!a->is_store) return true;
  int value = rr_subst_apply(p, a->value, s, 0);
  return value >= 0 && value == b->value;
}

/* L's phis: init and next values, IV steps.  The counter is the phi the
 * exit test reads. */
bool rr_match_phis(rr_pass *p, rr_shape *s) {
  LLVMBasicBlockRef into = s->pre;
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->L); i && LLVMIsAPHINode(i);
       i = LLVMGetNextInstruction(i)) {
    if (s->nphis == RR_MAX_PHIS || LLVMCountIncoming(i) != 2) return false;
    rr_phi *f = &s->phis[s->nphis++];
    memset(f, 0, sizeof *f);
    f->phi = i;
    if ((f->atom = rr_atom(p, i)) < 0) return false;
    for (unsigned k = 0; k < 2; k++) {
      LLVMBasicBlockRef from = LLVMGetIncomingBlock(i, k);
      if (from == s->L) f->next = LLVMGetIncomingValue(i, k);
      else if (from == into) f->init = LLVMGetIncomingValue(i, k);
    }
    if (!f->next || !f->init || !rr_in_loop(p, f->next)) return false;
    if (!rr_width(LLVMTypeOf(i)) || rr_width(LLVMTypeOf(i)) > 64) continue;
    int d = rr_poly_add(p, LLVMTypeOf(i), rr_eval(p, f->next, 0), f->atom, ~0ull);
    if (d < 0 || rr_varies(p, d, 0)) continue;
    rr_term t[RR_MAX_TERMS];
    int nt = rr_terms_of(p, d, t);
    bool even = true;
    for (int k = 0; k < nt; k++) {
      even &= (t[k].coeff & 1) == 0;
      t[k].coeff = rr_coeff_div(t[k].coeff, rr_width(LLVMTypeOf(i)), 2);
    }
    if (!even) continue;
    f->is_iv = true;
    f->half = rr_make_poly(p, LLVMTypeOf(i), t, nt);
    f->f = rr_poly_add(p, LLVMTypeOf(i), f->atom, f->half, 1);
    if (f->half < 0 || f->f < 0) return false;
  }
  return !p->failed;
}

/* The exit test `counter.next != end`: either end = x & mask (even), the
 * counter from an even constant by 2; or end a constant the counter, from a
 * constant by 2h, meets after an even number of steps of h. */
bool rr_match_exit(rr_pass *p, rr_shape *s) {
  LLVMValueRef br = rr_cond_br(s->L);
  if (!br) return false;
  bool negated;
  LLVMValueRef c = rr_strip_bool(LLVMGetCondition(br), &negated);
  if (!LLVMIsAICmpInst(c)) return false;
  LLVMIntPredicate pred = LLVMGetICmpPredicate(c);
  bool stay_if_true = LLVMGetSuccessor(br, 0) == s->L;
  if (pred != LLVMIntNE && pred != LLVMIntEQ) return false;
  /* stays while the operands differ */
  if ((pred == LLVMIntNE) != (stay_if_true != negated)) return false;
  for (int k = 0; k < s->nphis; k++) {
    rr_phi *f = &s->phis[k];
    for (unsigned side = 0; side < 2; side++) {
      if (LLVMGetOperand(c, side) != f->next) continue;
      LLVMValueRef M = LLVMGetOperand(c, 1 - side);
      LLVMTypeRef ty = LLVMTypeOf(f->phi);
      unsigned w = rr_width(ty);
      if (!f->is_iv || !LLVMIsAConstantInt(f->init) || w > 64) return false;
      uint64_t start = LLVMConstIntGetZExtValue(f->init);
      s->counter = k;
      if (LLVMIsAConstantInt(M)) {
        /* h * t first reaches d at t = d / h when h * t does not wrap
         * before; d / h even: the old loop, by 2h, stops there too. */
        const rr_node *h = &p->nodes[f->half];
        uint64_t step = h->kind == RR_POLY && h->nt == 1 && h->t[0].nf == 0 ? h->t[0].coeff : 0;
        uint64_t d = (LLVMConstIntGetZExtValue(M) - start) & rr_wmask(w);
        s->const_end = true;
        s->end = M;
        return step && step <= rr_wmask(w) / 2 && d && d % (2 * step) == 0;
      }
      s->x = rr_and_const(M, &s->mask);
      if (!s->x || rr_in_loop(p, M) || f->half != rr_poly_const(p, ty, 1) || (start & 1) ||
          (s->mask & 1))
        return false;
      s->M = M;
      return true;
    }
  }
  return false;
}

/* Q runs exactly when x is odd; and an odd x with x & mask == start (the
 * old loop's 2^32 iterations, then Q) never reaches L: it takes the bypass
 * or contradicts a branch on the way to H. */
bool rr_counts_agree(rr_pass *p, const rr_shape *s) {
  LLVMValueRef eb = rr_cond_br(s->E);
  bool negated;
  LLVMValueRef c = rr_strip_bool(LLVMGetCondition(eb), &negated);
  uint64_t one;
  if (!LLVMIsAICmpInst(c) || !LLVMIsAConstantInt(LLVMGetOperand(c, 1)) ||
      LLVMConstIntGetZExtValue(LLVMGetOperand(c, 1)) != 0 ||
      rr_and_const(LLVMGetOperand(c, 0), &one) != s->x || one != 1)
    return false;
  int q_side = LLVMGetSuccessor(eb, 0) == s->Q ? 0 : 1;
  if (rr_branch_at(eb, s->x, 1) != q_side || rr_branch_at(eb, s->x, 0) != 1 - q_side) return false;
  unsigned w = rr_width(LLVMTypeOf(s->x));
  uint64_t start = LLVMConstIntGetZExtValue(s->phis[s->counter].init);
  uint64_t free_bits = ~(s->mask | 1) & rr_wmask(w);
  if (start & ~s->mask & rr_wmask(w)) return true; /* M never equals start */
  if (__builtin_popcountll(free_bits) > 4) return false;
  for (uint64_t sub = free_bits;; sub = (sub - 1) & free_bits) {
    if (!rr_never_enters(p, s->H, s->e_side, s->x, start | 1 | sub)) return false;
    if (!sub) break;
  }
  return true;
}

static bool dominated_never_enters(const rr_pass *p, LLVMBasicBlockRef H, LLVMValueRef x, uint64_t xv);

/* The y with `icmp pred y, k` == want, as an interval [lo, hi] of pred's
 * order (signed or unsigned, w bits, bounds as unsigned bit patterns):
 * 1, or 0 when no y has it, -1 when they are not one interval. */
static int truth_interval(LLVMIntPredicate pred, uint64_t k, unsigned w, bool want, uint64_t *lo, uint64_t *hi) {
  uint64_t m = rr_wmask(w), smin = 1ull << (w - 1), smax = smin - 1;
  bool is_signed = pred == LLVMIntSGT || pred == LLVMIntSGE || pred == LLVMIntSLT || pred == LLVMIntSLE;
  uint64_t bot = is_signed ? smin : 0, top = is_signed ? smax : m;
  /* y > k, y >= k, y < k, y <= k in the order; negated when !want */
  bool gt = pred == LLVMIntSGT || pred == LLVMIntUGT, ge = pred == LLVMIntSGE || pred == LLVMIntUGE;
  bool lt = pred == LLVMIntSLT || pred == LLVMIntULT, le = pred == LLVMIntSLE || pred == LLVMIntULE;
  if (!want) {
    bool g = gt, e = ge;
    gt = le, ge = lt, lt = e, le = g;
  }
  k &= m;
  if (gt) return k == top ? 0 : (*lo = (k + 1) & m, *hi = top, 1);
  if (ge) return *lo = k, *hi = top, 1;
  if (lt) return k == bot ? 0 : (*lo = bot, *hi = (k - 1) & m, 1);
  if (le) return *lo = bot, *hi = k, 1;
  if (pred == LLVMIntEQ && want) return *lo = *hi = k, 1;
  if (pred == LLVMIntNE && !want) return *lo = *hi = k, 1;
  return -1;
}

static bool signed_pred(LLVMIntPredicate pr) {
  return pr == LLVMIntSGT || pr == LLVMIntSGE || pr == LLVMIntSLT || pr == LLVMIntSLE;
}

/* x = select(c, y, C) or select(c, C, y) with C constant and c an icmp of
 * y with a constant (clang's max(n, 1) before a loop it guards with
 * n >= 2): at x == xv either the arm y is chosen and y == xv (impossible
 * where c at y == xv chooses C), or xv == C and c chooses C, for every y
 * of an interval of c's order.  H's branch, an icmp of y with a constant
 * in the same order (monotone in y there), is decided on that interval
 * when it goes to E at both ends. */
static bool select_never_enters(const rr_pass *p, LLVMBasicBlockRef H, int e_side, LLVMValueRef x, uint64_t xv) {
  if (!LLVMIsAInstruction(x) || LLVMGetInstructionOpcode(x) != LLVMSelect) return false;
  LLVMValueRef c = LLVMGetOperand(x, 0), t = LLVMGetOperand(x, 1), f = LLVMGetOperand(x, 2);
  bool y_true = LLVMIsAConstantInt(f);
  LLVMValueRef y = y_true ? t : f, C = y_true ? f : t;
  unsigned w = rr_width(LLVMTypeOf(x));
  if (!LLVMIsAConstantInt(C) || LLVMIsAConstantInt(y) || !w || w > 64) return false;
  bool neg;
  c = rr_strip_bool(c, &neg);
  if (!LLVMIsAICmpInst(c) || LLVMGetOperand(c, 0) != y || !LLVMIsAConstantInt(LLVMGetOperand(c, 1))) return false;
  /* y chosen: c (after the strip) is y_true != neg at y == xv */
  int cv = rr_bool_at(c, y, xv);
  if (cv != ((int)y_true != (int)neg) && cv >= 0) {
    /* impossible: c at y == xv chooses C */
  } else if (!(rr_branch_at(rr_cond_br(H), y, xv) == e_side || dominated_never_enters(p, H, y, xv))) {
    return false;
  }
  uint64_t cv0 = LLVMConstIntGetZExtValue(C) & rr_wmask(w);
  if ((xv & rr_wmask(w)) != cv0) return true;
  /* C chosen: c is !y_true != neg, for y in [lo, hi] */
  uint64_t lo = 0, hi = 0;
  int iv = truth_interval(LLVMGetICmpPredicate(c), LLVMConstIntGetZExtValue(LLVMGetOperand(c, 1)), w,
                          y_true == neg, &lo, &hi);
  if (iv == 0) return true;
  LLVMValueRef hb = rr_cond_br(H);
  bool hneg;
  LLVMValueRef hc = hb ? rr_strip_bool(LLVMGetCondition(hb), &hneg) : NULL;
  if (iv < 0 || !hc || !LLVMIsAICmpInst(hc) || LLVMGetOperand(hc, 0) != y ||
      !LLVMIsAConstantInt(LLVMGetOperand(hc, 1)) ||
      signed_pred(LLVMGetICmpPredicate(hc)) != signed_pred(LLVMGetICmpPredicate(c)) ||
      LLVMGetICmpPredicate(hc) == LLVMIntEQ || LLVMGetICmpPredicate(hc) == LLVMIntNE)
    return false;
  return rr_branch_at(hb, y, lo) == e_side && rr_branch_at(hb, y, hi) == e_side;
}

/* At x == xv, H takes its branch to E (side e_side), or H is not reached:
 * a branch dominating it goes elsewhere (H's only way in is from its
 * idom D), or x is a select that cannot be xv where H enters. */
bool rr_never_enters(const rr_pass *p, LLVMBasicBlockRef H, int e_side, LLVMValueRef x, uint64_t xv) {
  if (rr_branch_at(rr_cond_br(H), x, xv) == e_side) return true;
  return dominated_never_enters(p, H, x, xv) || select_never_enters(p, H, e_side, x, xv);
}

static bool dominated_never_enters(const rr_pass *p, LLVMBasicBlockRef H, LLVMValueRef x, uint64_t xv) {
  for (int b = rr_bb_index(p, H); b != 0; b = p->dom.idom[b]) {
    int d = p->dom.idom[b];
    LLVMValueRef br = rr_cond_br(p->cfg.blocks[d].bb);
    if (p->cfg.blocks[b].npreds != 1 || !br || LLVMGetSuccessor(br, 0) == LLVMGetSuccessor(br, 1)) continue;
    int taken = rr_branch_at(br, x, xv);
    if (taken >= 0 && LLVMGetSuccessor(br, (unsigned)taken) != p->cfg.blocks[b].bb) return true;
  }
  return false;
}

/* A rewritten loop's new back branch keeps the old one's metadata (the
 * Wasm loop offset the offload report names a nest by, llvm.loop). */
void ir_copy_metadata(LLVMValueRef from, LLVMValueRef to) {
  size_t n;
  LLVMValueMetadataEntry *md = LLVMInstructionGetAllMetadataOtherThanDebugLoc(from, &n);
  LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(to));
  for (unsigned i = 0; i < n; i++)
    LLVMSetMetadata(to, LLVMValueMetadataEntriesGetKind(md, i),
                    LLVMMetadataAsValue(ctx, LLVMValueMetadataEntriesGetMetadata(md, i)));
  if (md) LLVMDisposeValueMetadataEntries(md);
}
