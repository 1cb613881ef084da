/* ir_reroll_copies.c: re-rolls a loop that clang unrolled completely whose
 * copies are loops themselves (the j loop of a 16x8 product: eight k loops
 * one after another, each followed by the store of its sum) back into one
 * loop of N iterations around the first copy, where it proves the two
 * equal.
 *
 * The shape: single-block loops L_0 .. L_{N-1} (N >= 3), each L_g's exit
 * block X_g its only way out, X_g (g < N - 1) holding only pure values and
 * stores before `br L_{g+1}`, X_g being L_{g+1}'s preheader.  The copies
 * need not have one form (clang counts copy 0's k loop with another phi
 * than the others): the proof is on the expressions of ir_reroll_eval.c.
 * In each L_g an IV phi (next = phi + constant) is init + step * T, T one
 * trip number shared by all copies; every other phi is a recurrence.  Copy
 * g (g >= 1) is copy 0 with its accesses moved when, with copy g's
 * recurrences read as copy 0's (their inits the same expressions) and its
 * loads as copy 0's loads in the same order:
 *  - L_g and X_g make the same accesses in the same order (same kind, type,
 *    alignment and memarg offset C), each at the i32 address A of copy 0's
 *    plus g * d modulo 2^32, d that access's difference in copy 1;
 *  - every recurrence's next value, every stored value and L_g's exit test
 *    (and its side) are the same expressions as copy 0's.
 * By induction over the trips, the loop that runs copy 0 N times with the
 * i32 address of each access moved by j * d (zext(A + j d) + C: copy j's
 * address exactly) performs copy j's operations on the same values in the
 * same order, so it is the same program, traps included (a trap in copy j
 * reports copy 0's access, as in every re-rolled loop: the offsets are
 * the cloned instructions').  Nothing of L_g or X_g may be used after the
 * copies but by copy N - 1's stores, and X_{N-1}'s own work (the enclosing
 * loop's latch, say) must touch memory only after them: it then runs after
 * the new loop as it ran after copy N - 1.
 *
 * Copies whose k loops are ir_reroll_full.c's loops of vector sums (-O2
 * -msimd128: lane operations in the expressions, the pass's lane_ops;
 * a shuffle's node holds its mask) may address a byte through an i64
 * index that is no zext(A) + C: a phi stepping a memarg offset, which
 * differs from copy to copy (`v128.load8_splat offset=g`).  Such an
 * access (`wide`) is compared as its i64 index expression, moved by
 * g * d modulo 2^64, and the loop gives it the index + j d: copy j's
 * index exactly, the same address, trap included. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_pass.h"
#include "ir_reroll.h"

#define RC_MIN 3
#define RC_MAX 32      /* copies of one chain */
#define RC_MAX_EFF 32  /* accesses of one copy */
#define RC_MAX_REC 8   /* recurrences of one copy */
#define RC_MAX_DEAD 4096
#define RC_MAX_TRIPS 65536 /* trips counted by evaluation */

typedef struct {
  LLVMValueRef inst, gep, addr; /* addr: the i32 A of gep(base, zext(A) [+ C]), or the i64 index */
  bool is_store;
  bool wide;                    /* addr is gep's i64 index (a phi of ir_reroll_full.c's loop), C 0 */
  uint64_t off;                 /* C */
  int a, value;                 /* A and the stored value (loads: the atom), raw */
} rc_access;

typedef struct {
  LLVMBasicBlockRef L, X, pre;
  const ir_loop *loop;
  rc_access eff[RC_MAX_EFF];
  int neff, nl;                 /* nl: how many of eff are L's */
  LLVMValueRef rec[RC_MAX_REC], rec_next[RC_MAX_REC];
  int nrec;
  int cond, stay;               /* exit test (raw) and the successor staying in L */
  rr_subst s;                   /* IV phis -> init + step * T */
} rc_copy;

typedef struct {
  rc_copy c[RC_MAX];
  int n;
  uint64_t d[RC_MAX_EFF];
  LLVMValueRef dead[RC_MAX_DEAD];
  int ndead;
} rc_chain;

/* The one-block loop headed by bb, with one pred outside it. */
static const ir_loop *one_block_loop(const rr_pass *p, LLVMBasicBlockRef bb, LLVMBasicBlockRef *pre,
                                     LLVMBasicBlockRef *exit) {
  int b = ir_cfg_index(&p->cfg, bb);
  if (b < 0 || !p->lp.innermost[b]) return NULL;
  const ir_loop *l = p->lp.innermost[b];
  if (l->header != b || l->nbody != 1 || l->preheader < 0 || ir_checked_copy(bb)) return NULL;
  LLVMValueRef br = LLVMGetBasicBlockTerminator(bb);
  if (!br || !LLVMIsABranchInst(br) || !LLVMIsConditional(br)) return NULL;
  LLVMBasicBlockRef s0 = LLVMGetSuccessor(br, 0), s1 = LLVMGetSuccessor(br, 1);
  if ((s0 == bb) == (s1 == bb)) return NULL;
  *exit = s0 == bb ? s1 : s0;
  *pre = p->cfg.blocks[l->preheader].bb;
  if (rr_npreds(p, *exit) != 1 || LLVMIsAPHINode(LLVMGetFirstInstruction(*exit))) return NULL;
  return l;
}

/* ptr = gep i8 base, zext(A) [+ C]: A and C. */
static bool split_ptr(LLVMValueRef ptr, LLVMValueRef *addr, uint64_t *off) {
  if (!LLVMIsAGetElementPtrInst(ptr) || LLVMGetNumOperands(ptr) != 2) return false;
  LLVMValueRef ea = LLVMGetOperand(ptr, 1);
  *off = 0;
  if (LLVMIsAInstruction(ea) && LLVMGetInstructionOpcode(ea) == LLVMAdd &&
      LLVMIsAConstantInt(LLVMGetOperand(ea, 1))) {
    *off = LLVMConstIntGetZExtValue(LLVMGetOperand(ea, 1));
    ea = LLVMGetOperand(ea, 0);
  }
  if (!LLVMIsAInstruction(ea) || LLVMGetInstructionOpcode(ea) != LLVMZExt) return false;
  *addr = LLVMGetOperand(ea, 0);
  return rr_width(LLVMTypeOf(*addr)) == 32;
}

static bool add_access(rr_pass *p, rc_copy *c, LLVMValueRef i, bool store) {
  if (c->neff == RC_MAX_EFF || LLVMGetVolatile(i) || LLVMGetOrdering(i) != LLVMAtomicOrderingNotAtomic)
    return false;
  rc_access *e = &c->eff[c->neff++];
  e->inst = i;
  e->is_store = store;
  e->gep = LLVMGetOperand(i, store ? 1 : 0);
  e->wide = false;
  if (!split_ptr(e->gep, &e->addr, &e->off)) {
    if (!LLVMIsAGetElementPtrInst(e->gep) || LLVMGetNumOperands(e->gep) != 2 ||
        rr_width(LLVMTypeOf(LLVMGetOperand(e->gep, 1))) != 64)
      return false;
    e->wide = true;
    e->addr = LLVMGetOperand(e->gep, 1);
    e->off = 0;
  }
  e->a = rr_eval(p, e->addr, 0);
  e->value = store ? rr_eval(p, LLVMGetOperand(i, 0), 0) : rr_atom(p, i);
  return e->a >= 0 && e->value >= 0 && !p->failed;
}

static int trip_node(rr_pass *p, LLVMTypeRef ty, LLVMBasicBlockRef first) {
  rr_node it;
  memset(&it, 0, sizeof it);
  it.kind = RR_ITER;
  it.ty = ty;
  it.bb = first;
  return rr_intern(p, &it);
}

/* Copy c's phis, accesses and exit test, as raw expressions; `last`: X's
 * stores are the first nstores ones, and X's other work is not read. */
static bool read_copy(rr_pass *p, rc_copy *c, LLVMBasicBlockRef first, bool last, int nstores) {
  p->loop = c->loop;
  c->neff = c->nrec = 0;
  c->s.n = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(c->L); i && LLVMIsAPHINode(i); i = LLVMGetNextInstruction(i)) {
    if (LLVMCountIncoming(i) != 2) return false;
    unsigned back = LLVMGetIncomingBlock(i, 0) == c->L ? 0 : 1;
    if (LLVMGetIncomingBlock(i, back) != c->L || LLVMGetIncomingBlock(i, 1 - back) != c->pre) return false;
    LLVMValueRef next = LLVMGetIncomingValue(i, back), init = LLVMGetIncomingValue(i, 1 - back);
    LLVMTypeRef ty = LLVMTypeOf(i);
    int atom = rr_atom(p, i), en = rr_eval(p, next, 0);
    uint64_t step;
    if (atom < 0 || en < 0) return false;
    if (rr_width(ty) && rr_width(ty) <= 64 && rr_const_of(p, rr_poly_add(p, ty, en, atom, ~0ull), &step)) {
      int ei = rr_eval(p, init, 0), t = trip_node(p, ty, first);
      int closed = rr_poly_add(p, ty, ei, rr_poly_mul(p, ty, rr_poly_const(p, ty, step), t), 1);
      if (closed < 0 || c->s.n == (int)(sizeof c->s.from / sizeof *c->s.from)) return false;
      rr_subst_add(&c->s, atom, closed);
      continue;
    }
    if (c->nrec == RC_MAX_REC) return false;
    c->rec_next[c->nrec] = next;
    c->rec[c->nrec++] = i;
  }
  for (LLVMValueRef i = LLVMGetFirstInstruction(c->L); i; i = LLVMGetNextInstruction(i)) {
    if (LLVMIsAPHINode(i) || i == LLVMGetBasicBlockTerminator(c->L)) continue;
    bool load = LLVMIsALoadInst(i), store = LLVMIsAStoreInst(i);
    if (load || store) {
      if (!add_access(p, c, i, store)) return false;
    } else if (rr_eval_inst(p, i, 0) < 0) {
      return false;
    }
  }
  c->nl = c->neff;
  int stores = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(c->X); i; i = LLVMGetNextInstruction(i)) {
    if (i == LLVMGetBasicBlockTerminator(c->X)) break;
    if (last && stores == nstores) break;
    if (LLVMIsAStoreInst(i)) {
      if (!add_access(p, c, i, true)) return false;
      stores++;
    } else if (last) {
      if (LLVMIsALoadInst(i) || rr_eval_inst(p, i, 0) < 0) return false; /* before the stores: pure only */
    } else if (LLVMIsALoadInst(i) || rr_eval_inst(p, i, 0) < 0) {
      return false;
    }
  }
  if (last && stores != nstores) return false;
  LLVMValueRef br = LLVMGetBasicBlockTerminator(c->L);
  c->stay = LLVMGetSuccessor(br, 0) == c->L ? 0 : 1;
  c->cond = rr_eval(p, LLVMGetCondition(br), 0);
  return c->cond >= 0 && !p->failed;
}

static int image(rr_pass *p, int id, const rr_subst *s) { return rr_subst_apply(p, id, s, 0); }

/* Poly id at T = t, when it reads nothing but T and constants. */
static bool value_at(const rr_pass *p, int id, int tnode, uint64_t t, uint64_t *out) {
  const rr_node *n = &p->nodes[id];
  if (n->kind != RR_POLY) return false;
  uint64_t v = 0;
  for (int i = 0; i < n->nt; i++) {
    uint64_t prod = n->t[i].coeff;
    for (int f = 0; f < n->t[i].nf; f++) {
      if (n->t[i].f[f] != tnode) return false;
      prod *= t;
    }
    v += prod;
  }
  *out = v & rr_wmask(rr_width(n->ty));
  return true;
}

/* How many times L runs, where its exit test is an icmp of two values
 * that read only T (the copies count their trips in different forms):
 * the first trip whose test leaves, evaluated; 0 when not found. */
static int trips(rr_pass *p, const rc_copy *c, const rr_subst *s, LLVMBasicBlockRef first) {
  LLVMValueRef cmp = LLVMGetCondition(LLVMGetBasicBlockTerminator(c->L));
  if (!LLVMIsAICmpInst(cmp)) return 0;
  LLVMTypeRef ty = LLVMTypeOf(LLVMGetOperand(cmp, 0));
  unsigned w = rr_width(ty);
  if (!w || w > 64) return 0;
  p->loop = c->loop;
  int l = image(p, rr_eval(p, LLVMGetOperand(cmp, 0), 0), s);
  int r = image(p, rr_eval(p, LLVMGetOperand(cmp, 1), 0), s);
  int tnode = trip_node(p, ty, first);
  if (l < 0 || r < 0 || tnode < 0) return 0;
  for (uint64_t t = 0; t < RC_MAX_TRIPS; t++) {
    uint64_t a, b;
    if (!value_at(p, l, tnode, t, &a) || !value_at(p, r, tnode, t, &b)) return 0;
    int holds = rr_icmp_holds(LLVMGetICmpPredicate(cmp), a, b, w);
    if (holds < 0) return 0;
    if ((holds == 1) != (c->stay == 0)) return (int)t + 1;
  }
  return 0;
}

/* Copy g against copy 0 (g == 1 sets the steps d). */
static bool same_but_moved(rr_pass *p, rc_chain *ch, int g) {
  rc_copy *c0 = &ch->c[0], *cg = &ch->c[g];
  if (cg->neff != c0->neff || cg->nl != c0->nl || cg->nrec != c0->nrec || cg->stay != c0->stay) return false;
  rr_subst s = cg->s;
  for (int k = 0; k < cg->nrec; k++) {
    LLVMValueRef r0 = c0->rec[k], rg = cg->rec[k];
    if (LLVMTypeOf(r0) != LLVMTypeOf(rg)) return false;
    unsigned b0 = LLVMGetIncomingBlock(r0, 0) == c0->L ? 1 : 0, bg = LLVMGetIncomingBlock(rg, 0) == cg->L ? 1 : 0;
    p->loop = c0->loop;
    int i0 = rr_eval(p, LLVMGetIncomingValue(r0, b0), 0);
    p->loop = cg->loop;
    int ig = rr_eval(p, LLVMGetIncomingValue(rg, bg), 0);
    if (i0 < 0 || i0 != ig || s.n == (int)(sizeof s.from / sizeof *s.from)) return false;
    rr_subst_add(&s, rr_atom(p, rg), rr_atom(p, r0));
  }
  for (int i = 0; i < cg->neff; i++)
    if (!cg->eff[i].is_store) {
      if (s.n == (int)(sizeof s.from / sizeof *s.from)) return false;
      rr_subst_add(&s, cg->eff[i].value, c0->eff[i].value);
    }
  for (int i = 0; i < cg->neff; i++) {
    const rc_access *a = &c0->eff[i], *b = &cg->eff[i];
    LLVMValueRef va = a->is_store ? LLVMGetOperand(a->inst, 0) : a->inst;
    LLVMValueRef vb = b->is_store ? LLVMGetOperand(b->inst, 0) : b->inst;
    if (a->is_store != b->is_store || LLVMTypeOf(va) != LLVMTypeOf(vb) || a->off != b->off || a->wide != b->wide ||
        LLVMGetAlignment(a->inst) != LLVMGetAlignment(b->inst) ||
        LLVMGetGEPSourceElementType(a->gep) != LLVMGetGEPSourceElementType(b->gep) ||
        LLVMGetOperand(a->gep, 0) != LLVMGetOperand(b->gep, 0))
      return false;
    LLVMTypeRef ty = LLVMTypeOf(a->addr);
    int xa = image(p, a->a, &c0->s), xb = image(p, b->a, &s);
    uint64_t diff;
    if (xa < 0 || xb < 0 || !rr_const_of(p, rr_poly_add(p, ty, xb, xa, ~0ull), &diff)) return false;
    uint64_t m = rr_wmask(rr_width(ty));
    diff &= m;
    if (g == 1) ch->d[i] = diff;
    else if (((ch->d[i] * (uint64_t)g) & m) != diff) return false;
    if (a->is_store) {
      int wa = image(p, a->value, &c0->s), wb = image(p, b->value, &s);
      if (wa < 0 || wa != wb) return false;
    }
  }
  for (int k = 0; k < cg->nrec; k++) {
    p->loop = c0->loop;
    int n0 = rr_eval(p, c0->rec_next[k], 0);
    p->loop = cg->loop;
    int ng = rr_eval(p, cg->rec_next[k], 0);
    int x0 = image(p, n0, &c0->s), xg = image(p, ng, &s);
    if (x0 < 0 || x0 != xg) return false;
  }
  int k0 = image(p, c0->cond, &c0->s), kg = image(p, cg->cond, &s);
  if (k0 < 0 || kg < 0 || p->failed) return false;
  if (k0 == kg) return true;
  int t0 = trips(p, c0, &c0->s, c0->L), tg = trips(p, cg, &s, c0->L);
  return t0 > 0 && t0 == tg;
}

static bool copy_store(const rc_copy *c, LLVMValueRef v) {
  for (int i = c->nl; i < c->neff; i++)
    if (c->eff[i].inst == v) return true;
  return false;
}

/* What goes: L_1 .. L_{N-1}, X_1 .. X_{N-2}, X_{N-1}'s copy stores and
 * the pure values of X_{N-1} only they use.  Every value of the copies
 * must be used by them alone (L_0's and X_0's by these, L_0 or X_0), and
 * X_{N-1}'s other work must not touch memory before its copy stores. */
static bool uses_confined(rc_chain *ch) {
  int n = ch->n;
  rc_copy *last = &ch->c[n - 1];
  ch->ndead = 0;
  for (int g = 1; g < n; g++) {
    LLVMBasicBlockRef bbs[2] = {ch->c[g].L, g < n - 1 ? ch->c[g].X : NULL};
    for (int k = 0; k < 2 && bbs[k]; k++)
      for (LLVMValueRef i = LLVMGetFirstInstruction(bbs[k]); i; i = LLVMGetNextInstruction(i)) {
        if (ch->ndead == RC_MAX_DEAD) return false;
        ch->dead[ch->ndead++] = i;
      }
  }
  for (int i = last->nl; i < last->neff; i++) {
    if (ch->ndead == RC_MAX_DEAD) return false;
    ch->dead[ch->ndead++] = last->eff[i].inst;
  }
  /* X_{N-1}'s pure values whose every use goes */
  for (bool grew = true; grew;) {
    grew = false;
    for (LLVMValueRef i = LLVMGetFirstInstruction(last->X); i; i = LLVMGetNextInstruction(i)) {
      if (rr_listed(ch->dead, ch->ndead, i) || LLVMIsALoadInst(i) || LLVMIsAStoreInst(i) || LLVMIsACallInst(i) ||
          i == LLVMGetBasicBlockTerminator(last->X) || !LLVMGetFirstUse(i))
        continue;
      bool all = true;
      for (LLVMUseRef u = LLVMGetFirstUse(i); u && all; u = LLVMGetNextUse(u))
        all = rr_listed(ch->dead, ch->ndead, LLVMGetUser(u));
      if (all && ch->ndead < RC_MAX_DEAD) ch->dead[ch->ndead++] = i, grew = true;
    }
  }
  for (int k = 0; k < ch->ndead; k++)
    for (LLVMUseRef u = LLVMGetFirstUse(ch->dead[k]); u; u = LLVMGetNextUse(u))
      if (!rr_listed(ch->dead, ch->ndead, LLVMGetUser(u))) return false;
  LLVMBasicBlockRef keep[2] = {ch->c[0].L, ch->c[0].X};
  for (int k = 0; k < 2; k++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(keep[k]); i; i = LLVMGetNextInstruction(i))
      for (LLVMUseRef u = LLVMGetFirstUse(i); u; u = LLVMGetNextUse(u)) {
        LLVMValueRef user = LLVMGetUser(u);
        if (!rr_in_block(user, keep[0]) && !rr_in_block(user, keep[1]) && !rr_listed(ch->dead, ch->ndead, user))
          return false;
      }
  int seen = 0, want = last->neff - last->nl;
  for (LLVMValueRef i = LLVMGetFirstInstruction(last->X); i && seen < want; i = LLVMGetNextInstruction(i)) {
    if (copy_store(last, i)) seen++;
    else if (!rr_listed(ch->dead, ch->ndead, i) && (LLVMIsALoadInst(i) || LLVMIsAStoreInst(i) || LLVMIsACallInst(i) ||
                                                  LLVMIsAFenceInst(i) || LLVMIsAAtomicRMWInst(i) ||
                                                  LLVMIsAAtomicCmpXchgInst(i)))
      return false;
  }
  return true;
}

/* A phi's next value that only the phi reads goes to the end of L, after
 * the accesses: the pointers pass (ir_address_loop.c) gives the increment
 * of a pointer nuw only after an access through it, and without that LLVM
 * does not widen it and leaves the k loop unvectorised (the copies clang
 * counted with another phi were).  Pure, so exact anywhere after its
 * operands. */
static void sink_increments(rr_pass *p, LLVMBasicBlockRef L) {
  LLVMValueRef br = LLVMGetBasicBlockTerminator(L);
  for (LLVMValueRef i = LLVMGetFirstInstruction(L); i && LLVMIsAPHINode(i); i = LLVMGetNextInstruction(i))
    for (unsigned k = 0; k < LLVMCountIncoming(i); k++) {
      LLVMValueRef next = LLVMGetIncomingValue(i, k);
      LLVMUseRef u = rr_in_block(next, L) ? LLVMGetFirstUse(next) : NULL;
      if (!u || LLVMGetNextUse(u) || LLVMGetUser(u) != i || LLVMIsAPHINode(next) ||
          LLVMGetInstructionOpcode(next) != LLVMAdd)
        continue;
      LLVMInstructionRemoveFromParent(next);
      LLVMPositionBuilderBefore(p->b, br);
      LLVMInsertIntoBuilder(p->b, next);
    }
}

/* A + jd before `at`.  Where A = x + y with x from before the loop of
 * copies, (x + jd) + y, x + jd computed in J: the same i32 (wrapping
 * addition associates), in the form `invariant + IV` that LLVM widens as
 * it did copy 0's address. */
static LLVMValueRef moved_address(rr_pass *p, const rc_copy *c0, LLVMBasicBlockRef J, LLVMValueRef A,
                                  LLVMValueRef jd, LLVMValueRef at) {
  LLVMBuilderRef b = p->b;
  if (LLVMIsAInstruction(A) && LLVMGetInstructionOpcode(A) == LLVMAdd && !LLVMGetNUW(A) && !LLVMGetNSW(A))
    for (unsigned k = 0; k < 2; k++) {
      LLVMValueRef x = LLVMGetOperand(A, k), y = LLVMGetOperand(A, 1 - k);
      if (rr_in_block(x, c0->L) || rr_in_block(x, c0->X)) continue;
      LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(J));
      LLVMValueRef xj = LLVMBuildAdd(b, x, jd, "reroll.base");
      LLVMPositionBuilderBefore(b, at);
      return LLVMBuildAdd(b, xj, y, "reroll.at");
    }
  LLVMPositionBuilderBefore(b, at);
  return LLVMBuildAdd(b, A, jd, "reroll.at");
}

/* The new loop: J (the copy counter j) before L_0, each moved access of
 * L_0 and X_0 at A + j d, X_0 back to J N times, then X_{N-1}. */
static void rewrite(rr_pass *p, rc_chain *ch) {
  LLVMBuilderRef b = p->b;
  rc_copy *c0 = &ch->c[0], *last = &ch->c[ch->n - 1];
  LLVMTypeRef i32 = LLVMInt32TypeInContext(p->ctx), i64 = LLVMInt64TypeInContext(p->ctx);
  LLVMBasicBlockRef J = LLVMInsertBasicBlockInContext(p->ctx, c0->L, "reroll.copies");
  LLVMPositionBuilderAtEnd(b, J);
  LLVMValueRef j = LLVMBuildPhi(b, i32, "reroll.j");
  LLVMValueRef jd[RC_MAX_EFF];
  LLVMValueRef j64 = NULL;
  for (int i = 0; i < c0->neff; i++) {
    if (c0->eff[i].wide && ch->d[i] && !j64) j64 = LLVMBuildZExt(b, j, i64, "reroll.j64");
    jd[i] = ch->d[i] == 0                ? NULL
            : c0->eff[i].wide          ? LLVMBuildMul(b, j64, LLVMConstInt(i64, ch->d[i], false), "reroll.jd")
            : ch->d[i] == 1            ? j
                                       : LLVMBuildMul(b, j, LLVMConstInt(i32, ch->d[i], false), "reroll.jd");
  }
  LLVMBuildBr(b, c0->L);
  LLVMValueRef pre_br = LLVMGetBasicBlockTerminator(c0->pre);
  for (unsigned s = 0; s < LLVMGetNumSuccessors(pre_br); s++)
    if (LLVMGetSuccessor(pre_br, s) == c0->L) LLVMSetSuccessor(pre_br, s, J);
  for (int i = 0; i < c0->neff; i++) {
    const rc_access *e = &c0->eff[i];
    if (!jd[i]) continue;
    LLVMValueRef ea;
    if (e->wide) { /* the i64 index + j d: copy j's index, exactly */
      LLVMPositionBuilderBefore(b, e->inst);
      ea = LLVMBuildAdd(b, e->addr, jd[i], "reroll.at");
    } else {
      LLVMValueRef a = moved_address(p, c0, J, e->addr, jd[i], e->inst);
      ea = LLVMBuildZExt(b, a, i64, "");
      if (e->off) ea = LLVMBuildAdd(b, ea, LLVMConstInt(i64, e->off, false), "ea");
    }
    LLVMValueRef gep = LLVMInstructionClone(e->gep);
    LLVMSetOperand(gep, 1, ea);
    LLVMInsertIntoBuilder(b, gep);
    LLVMSetOperand(e->inst, e->is_store ? 1 : 0, gep);
  }
  sink_increments(p, c0->L);
  LLVMValueRef x_br = LLVMGetBasicBlockTerminator(c0->X);
  LLVMPositionBuilderBefore(b, x_br);
  LLVMValueRef j1 = LLVMBuildAdd(b, j, LLVMConstInt(i32, 1, false), "reroll.jnext");
  LLVMValueRef stay = LLVMBuildICmp(b, LLVMIntNE, j1, LLVMConstInt(i32, (unsigned)ch->n, false), "reroll.jstay");
  LLVMBuildCondBr(b, stay, J, last->X);
  LLVMInstructionEraseFromParent(x_br);
  LLVMValueRef zero = LLVMConstInt(i32, 0, false);
  LLVMAddIncoming(j, &zero, &c0->pre, 1);
  LLVMAddIncoming(j, &j1, &c0->X, 1);
  for (int k = 0; k < ch->ndead; k++)
    if (LLVMGetTypeKind(LLVMTypeOf(ch->dead[k])) != LLVMVoidTypeKind)
      LLVMReplaceAllUsesWith(ch->dead[k], LLVMGetPoison(LLVMTypeOf(ch->dead[k])));
  for (int k = 0; k < ch->ndead; k++) {
    LLVMBasicBlockRef bb = LLVMGetInstructionParent(ch->dead[k]);
    if (bb == last->X) LLVMInstructionEraseFromParent(ch->dead[k]);
  }
  for (int g = 1; g < ch->n; g++) {
    LLVMDeleteBasicBlock(ch->c[g].L);
    if (g < ch->n - 1) LLVMDeleteBasicBlock(ch->c[g].X);
  }
  /* Last: rebuilding a phi frees it. */
  ir_retarget_phis(c0->L, c0->pre, J);
}

/* Dead pure instructions of fn left by the rewrite (old addresses, the
 * inits of the copies gone). */
static void erase_dead(LLVMValueRef fn) {
  for (bool changed = true; changed;) {
    changed = false;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb), nx; i; i = nx) {
        nx = LLVMGetNextInstruction(i);
        if (LLVMGetFirstUse(i) || LLVMIsAPHINode(i) || LLVMIsATerminatorInst(i)) continue;
        switch (LLVMGetInstructionOpcode(i)) {
        case LLVMAdd: case LLVMSub: case LLVMMul: case LLVMShl: case LLVMZExt: case LLVMSExt:
        case LLVMGetElementPtr: case LLVMAnd: case LLVMOr:
          LLVMInstructionEraseFromParent(i);
          changed = true;
          break;
        default:
          break;
        }
      }
  }
}

static bool try_chain(rr_pass *p, rc_chain *ch, LLVMBasicBlockRef L0) {
  ch->n = 0;
  LLVMBasicBlockRef L = L0;
  while (ch->n < RC_MAX) {
    rc_copy *c = &ch->c[ch->n];
    if (!(c->loop = one_block_loop(p, L, &c->pre, &c->X))) break;
    c->L = L;
    if (ch->n > 0 && c->pre != ch->c[ch->n - 1].X) break;
    ch->n++;
    LLVMBasicBlockRef next = rr_jump_target(c->X);
    if (!next || next == L0) break;
    L = next;
  }
  rr_reset(p);
  /* the longest prefix of copies proved; the last one's X may hold other
   * work after its stores (as many as X_0's) */
  int nstores = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(ch->c[0].X); ch->n && i; i = LLVMGetNextInstruction(i))
    nstores += LLVMIsAStoreInst(i) != NULL;
  int proved = 0;
  for (int g = 0; g < ch->n; g++) {
    rc_copy *c = &ch->c[g];
    if (rr_jump_target(c->X) && read_copy(p, c, ch->c[0].L, false, 0) && (g == 0 || same_but_moved(p, ch, g))) {
      proved = g + 1;
      continue;
    }
    p->failed = false;
    if (g > 0 && read_copy(p, c, ch->c[0].L, true, nstores) && same_but_moved(p, ch, g)) proved = g + 1;
    break;
  }
  p->failed = false;
  if (proved < RC_MIN) return false;
  ch->n = proved;
  if (!uses_confined(ch)) return false;
  rewrite(p, ch);
  return true;
}

static bool try_copies(rr_pass *p, LLVMValueRef fn) {
  rc_chain *ch = NULL;
  for (int b = 0; b < p->cfg.nblocks; b++) {
    LLVMBasicBlockRef pre, exit;
    if (!one_block_loop(p, p->cfg.blocks[b].bb, &pre, &exit)) continue;
    if (!ch) ch = tw_arena_alloc(&p->arena, sizeof *ch);
    if (try_chain(p, ch, p->cfg.blocks[b].bb)) {
      erase_dead(fn);
      return true;
    }
  }
  return false;
}

bool rr_try_copies(rr_pass *p, LLVMValueRef fn) {
  rr_reset(p);
  p->lane_ops = true;
  bool done = try_copies(p, fn);
  p->lane_ops = false;
  rr_reset(p); /* no expression of a lane operation left for the other re-rolls */
  return done;
}
