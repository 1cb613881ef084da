/* ir_reroll_hoist.c: the range test of a re-rolled loop inside a nest,
 * hoisted before the nest's outermost loop.
 *
 * A re-rolled loop L runs every iteration with copy 0's instructions, so
 * it may run only where none of its accesses can trap (ir_reroll_order.c;
 * ir_reroll_rem.c, needs_version).  Inside another loop the test of
 * ir_reroll_order.c would stand in the nest and read the memory size
 * there, which the offload stage refuses, and the kept copy and the
 * remainder loop beside L would split the nest.  So here, where it can,
 * the test covers every entry of L over the whole nest and stands before
 * the outermost loop O, and the whole of O is cloned as it is (the
 * checked copy: every terminator marked IR_MD_CHECKED, which the offload
 * stage and the re-roll skip) for when the test fails.  The nest the test
 * guards is then re-rolled as a loop of its own would be (the bypass
 * merged, the remainder loop gone where it can).
 *
 * The test.  An access of L at `base + zext(A) + C` (B bytes) has A(j) =
 * A0 + c j at iteration j of the re-rolled loop (c invariant in O, read
 * as the sext of its i32 value; j below T = end - start, T invariant in
 * O), A0 its value at L's entry.
 * A0 must be, modulo 2^32 (ir_affine_of: adds, multiplications by a
 * constant or an invariant, shifts, no extension), base + sum of a_k u_k
 * over the loops k of the nest around L, u_k that loop's header runs
 * less one, in [0, last_k]: each term coeff * inv * iv with iv = start +
 * step u_k of loop k (start, inv and step invariant in O).
 * With base read as zext and a_k as sext of their i32 values, the
 * smallest and largest E = base + sum a_k u_k over the box are
 * base + sum min(0, a_k last_k) and base + sum max(0, a_k last_k), in
 * i128 (nothing overflows: |a_k last_k| < 2^63).  If both lie in [0,
 * 2^32), so does E at every point of the box (E is affine), and A0 == E
 * there: A0's value is E itself, without wrapping.  Then, with s = c (T
 * - 1), the lowest address Emin + min(0, s) at least the folded floor (0
 * elsewhere: ir_reroll_order.c) and the highest Emax + max(0, s) + C + B
 * at most size, and T != 0: every A(j) computed without wrapping lies in
 * [0, size - C - B], so the i32 value is that one.  The box
 * holds every entry of L (the trip counts bound each u_k; the memory
 * never shrinks, so a size read before O is a lower bound inside it), so
 * where the test holds no access of the re-rolled loop traps, at any
 * entry, and the nest is the same program with L re-rolled.  Where it
 * fails, the original nest runs. */
#include <stdint.h>
#include <string.h>

#include "ir_pass.h"
#include "ir_reroll.h"

#define RH_MAX_LOOPS 8

typedef struct {
  const ir_loop *loop;
  LLVMValueRef last; /* i128 at O's preheader: header runs less one, an upper bound */
} rh_level;

/* The chain of loops around L, outermost first. */
static int chain_of(const ir_loop *l, const ir_loop **out) {
  const ir_loop *c[RH_MAX_LOOPS];
  int n = 0;
  for (const ir_loop *k = l->parent; k; k = k->parent) {
    if (n == RH_MAX_LOOPS) return -1;
    c[n++] = k;
  }
  for (int i = 0; i < n; i++) out[i] = c[n - 1 - i];
  return n;
}

static bool outside(const rr_pass *p, const ir_loop *root, LLVMValueRef v) {
  return !v || !LLVMIsAInstruction(v) || !ir_loop_defines(root, v, &p->cfg);
}

static bool is_i32(LLVMValueRef v) { return rr_width(LLVMTypeOf(v)) == 32; }

/* How loop k's header runs are bounded at O's preheader: its latch's
 * test (the lowering's `icmp ne (zext c), 0` read through) keeps it going
 * while `next P bound`, next an i32 IV's value + 1, bound invariant in O;
 * P is `!=` (any start: bound - start - 1 back edges, mod 2^32) or `<`,
 * signed or unsigned (a constant start that does not wrap at + 1:
 * max(0, bound - start - 1)).  A constant count: that less one.  Other
 * exits only make the count smaller. */
typedef struct {
  LLVMValueRef start, bound;
  LLVMIntPredicate pred;
  uint64_t count; /* pred == 0: a constant header count */
} rh_trip;

static bool trip_known(rr_pass *p, const ir_loop *root, const ir_loop *k, rh_trip *out) {
  if (k->nlatches != 1) return false;
  LLVMBasicBlockRef H = p->cfg.blocks[k->header].bb, latch = p->cfg.blocks[k->latches[0]].bb;
  LLVMValueRef br = rr_cond_br(latch);
  if (!br) return false;
  bool negated;
  LLVMValueRef c = rr_strip_bool(LLVMGetCondition(br), &negated);
  if (!c || !LLVMIsAICmpInst(c)) return false;
  int stay_side = LLVMGetSuccessor(br, 0) == H ? 0 : LLVMGetSuccessor(br, 1) == H ? 1 : -1;
  if (stay_side < 0 || LLVMGetSuccessor(br, (unsigned)(1 - stay_side)) == H) return false;
  /* stay while (c == true) != (stay_side == 1) != negated */
  bool stay_if_true = (stay_side == 0) != negated;
  LLVMIntPredicate pred = LLVMGetICmpPredicate(c);
  if (!stay_if_true) pred = LLVMGetICmpPredicate(c) == LLVMIntEQ ? LLVMIntNE
                          : LLVMGetICmpPredicate(c) == LLVMIntNE ? LLVMIntEQ : (LLVMIntPredicate)0;
  for (int side = 0; side < 2 && pred; side++) {
    LLVMValueRef nx = LLVMGetOperand(c, (unsigned)side), bound = LLVMGetOperand(c, (unsigned)(1 - side));
    LLVMIntPredicate pr = side ? ir_swapped_pred(pred) : pred;
    for (int v = 0; v < k->nivs; v++) {
      const ir_iv *iv = &k->ivs[v];
      if (iv->next != nx || iv->step != 1 || iv->step_inv || iv->bits != 32 || !iv->start || !is_i32(bound) ||
          !outside(p, root, bound) || !outside(p, root, iv->start))
        continue;
      if (LLVMIsAConstantInt(iv->start) && LLVMIsAConstantInt(bound) && pr == LLVMIntNE) {
        out->pred = 0;
        out->count = ((LLVMConstIntGetZExtValue(bound) - LLVMConstIntGetZExtValue(iv->start) - 1) & 0xffffffffu) + 1;
        return true;
      }
      out->start = iv->start, out->bound = bound, out->pred = pr;
      if (pr == LLVMIntNE) return true;
      if ((pr != LLVMIntSLT && pr != LLVMIntULT) || !LLVMIsAConstantInt(iv->start)) return false;
      uint64_t s = LLVMConstIntGetZExtValue(iv->start) & 0xffffffffu;
      return pr == LLVMIntSLT ? s != 0x7fffffffu : s != 0xffffffffu;
    }
  }
  return false;
}

/* At the builder: i128 header runs less one (an upper bound). */
static LLVMValueRef last_of(rr_pass *p, const rh_trip *t, LLVMTypeRef i128) {
  LLVMBuilderRef b = p->b;
  if (!t->pred) return LLVMConstInt(i128, t->count - 1, false);
  LLVMTypeRef i32 = LLVMTypeOf(t->bound);
  LLVMValueRef k32 = LLVMBuildSub(b, LLVMBuildSub(b, t->bound, t->start, ""), LLVMConstInt(i32, 1, false), "");
  if (t->pred == LLVMIntNE) return LLVMBuildZExt(b, k32, i128, "reroll.last");
  bool sgn = t->pred == LLVMIntSLT;
  LLVMValueRef bw = sgn ? LLVMBuildSExt(b, t->bound, i128, "") : LLVMBuildZExt(b, t->bound, i128, "");
  LLVMValueRef sw = sgn ? LLVMBuildSExt(b, t->start, i128, "") : LLVMBuildZExt(b, t->start, i128, "");
  LLVMValueRef d = LLVMBuildSub(b, LLVMBuildSub(b, bw, sw, ""), LLVMConstInt(i128, 1, false), "");
  LLVMValueRef pos = LLVMBuildICmp(b, LLVMIntSGT, d, LLVMConstNull(i128), "");
  return LLVMBuildSelect(b, pos, d, LLVMConstNull(i128), "reroll.last");
}

/* One access, analysed before anything is built. */
typedef struct {
  ir_affine a0;
  int c; /* A's step per iteration: an i32 expression invariant in O */
  uint64_t reach, floor;
} rh_access;

/* Whether expression id is built from constants and values invariant in
 * O only (poly_value can then compute it before O). */
static bool invariant_poly(const rr_pass *p, const ir_loop *root, int id) {
  const rr_node *x = &p->nodes[id];
  if (x->kind == RR_ATOM) return outside(p, root, x->val) && is_i32(x->val);
  if (x->kind != RR_POLY || rr_width(x->ty) != 32) return false;
  for (int t = 0; t < x->nt; t++)
    for (int f = 0; f < x->t[t].nf; f++)
      if (!invariant_poly(p, root, x->t[t].f[f])) return false;
  return true;
}

/* At the builder: the i32 value of such an expression. */
static LLVMValueRef poly_value(rr_pass *p, int id) {
  const rr_node *x = &p->nodes[id];
  if (x->kind == RR_ATOM) return x->val;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(p->ctx);
  LLVMValueRef sum = LLVMConstNull(i32);
  for (int t = 0; t < x->nt; t++) {
    LLVMValueRef v = LLVMConstInt(i32, x->t[t].coeff & 0xffffffffu, false);
    for (int f = 0; f < x->t[t].nf; f++) v = LLVMBuildMul(p->b, v, poly_value(p, x->t[t].f[f]), "");
    sum = LLVMBuildAdd(p->b, sum, v, "");
  }
  return sum;
}

static int level_of(const rh_level *lv, int n, const ir_loop *l) {
  for (int i = 0; i < n; i++)
    if (lv[i].loop == l) return i;
  return -1;
}

/* The A0 of each access as an affine form over the nest (rr_at_entry's
 * values, built in L's preheader for the analysis and erased after). */
static bool analyse(rr_pass *p, const rr_effect *eff, int n, const uint64_t *floor, const rr_subst *step,
                    LLVMBasicBlockRef L, LLVMBasicBlockRef pre, const ir_loop *inner, const rh_level *lv, int nlv,
                    rh_access *out) {
  const ir_loop *root = lv[0].loop;
  LLVMValueRef pterm = LLVMGetBasicBlockTerminator(pre);
  LLVMValueRef before = LLVMGetPreviousInstruction(pterm);
  LLVMTargetDataRef td = LLVMGetModuleDataLayout(LLVMGetGlobalParent(LLVMGetBasicBlockParent(L)));
  bool ok = true;
  for (int i = 0; i < n && ok; i++) {
    LLVMValueRef a;
    uint64_t c;
    LLVMPositionBuilderBefore(p->b, pterm);
    if (!rr_split_address(LLVMGetOperand(eff[i].inst, eff[i].is_store ? 1 : 0), &a, &c)) { ok = false; break; }
    int ea = rr_eval(p, a, 0), next = ea >= 0 ? rr_subst_apply(p, ea, step, 0) : -1;
    int diff = next >= 0 ? rr_poly_add(p, LLVMTypeOf(a), next, ea, ~0ull) : -1;
    if (diff < 0 || !invariant_poly(p, root, diff)) { ok = false; break; }
    LLVMValueRef a0 = rr_at_entry(p, a, L, pre);
    if (!a0) { ok = false; break; }
    ir_affine f = ir_affine_of(a0, inner, &p->cfg, td);
    ok = f.ok && !f.may_wrap;
    for (int t = 0; ok && t < f.nterms; t++) {
      const ir_term *term = &f.terms[t];
      if (term->inv && (!is_i32(term->inv) || !outside(p, root, term->inv))) ok = false;
      if (!term->iv) continue;
      const ir_iv *iv = term->iv;
      ok = ok && level_of(lv, nlv, iv->loop) >= 0 && iv->bits == 32 && iv->start && is_i32(iv->start) &&
           outside(p, root, iv->start) && (!iv->step_inv || (is_i32(iv->step_inv) && outside(p, root, iv->step_inv)));
    }
    out[i] = (rh_access){.a0 = f, .c = diff, .reach = c + rr_access_bytes(eff[i].inst), .floor = floor ? floor[i] : 0};
  }
  /* the analysis's values go */
  for (LLVMValueRef i = LLVMGetPreviousInstruction(pterm), prev; i && i != before; i = prev) {
    prev = LLVMGetPreviousInstruction(i);
    if (!LLVMGetFirstUse(i)) LLVMInstructionEraseFromParent(i);
  }
  return ok;
}

/* At the builder: an i32 value of term t at u = 0 (factor = start) or its
 * slope (factor = step), times coeff and inv. */
static LLVMValueRef term_i32(rr_pass *p, const ir_term *t, bool slope) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(p->ctx);
  LLVMValueRef v = LLVMConstInt(i32, (uint64_t)t->coeff & 0xffffffffu, false);
  if (t->inv) v = LLVMBuildMul(p->b, v, t->inv, "");
  if (t->iv) {
    LLVMValueRef step = t->iv->step_inv ? t->iv->step_inv : LLVMConstInt(i32, (uint64_t)t->iv->step & 0xffffffffu, false);
    v = LLVMBuildMul(p->b, v, slope ? step : t->iv->start, "");
  }
  return v;
}

/* O's values used after O, other than by the exit block's phis, go
 * through a phi of the exit block X (X's predecessors all lie in O, so
 * every such value dominates them and X dominates every such use). */
static bool used_outside(const rr_pass *p, const ir_loop *root, LLVMBasicBlockRef X, LLVMValueRef user) {
  LLVMBasicBlockRef ub = LLVMGetInstructionParent(user);
  return !ir_loop_contains_block(root, ub, &p->cfg) && !(ub == X && LLVMIsAPHINode(user));
}

static void close_exits(rr_pass *p, const ir_loop *root, LLVMBasicBlockRef X) {
  const ir_block *xb = &p->cfg.blocks[ir_cfg_index(&p->cfg, X)];
  for (int bi = 0; bi < root->nbody; bi++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(p->cfg.blocks[root->body[bi]].bb); i; i = LLVMGetNextInstruction(i)) {
      bool any = false;
      for (LLVMUseRef u = LLVMGetFirstUse(i); u && !any; u = LLVMGetNextUse(u)) any = used_outside(p, root, X, LLVMGetUser(u));
      if (!any) continue;
      LLVMPositionBuilderBefore(p->b, LLVMGetFirstInstruction(X));
      LLVMValueRef phi = LLVMBuildPhi(p->b, LLVMTypeOf(i), "reroll.lcssa");
      for (int k = 0; k < xb->npreds; k++) {
        LLVMBasicBlockRef bb = p->cfg.blocks[xb->preds[k]].bb;
        LLVMAddIncoming(phi, &i, &bb, 1);
      }
      int nu = 0;
      for (LLVMUseRef u = LLVMGetFirstUse(i); u; u = LLVMGetNextUse(u)) nu++;
      LLVMValueRef *users = tw_arena_alloc(&p->arena, (size_t)nu * sizeof *users);
      nu = 0;
      for (LLVMUseRef u = LLVMGetFirstUse(i); u; u = LLVMGetNextUse(u))
        if (LLVMGetUser(u) != phi && used_outside(p, root, X, LLVMGetUser(u))) users[nu++] = LLVMGetUser(u);
      for (int k = 0; k < nu; k++)
        for (int o = 0; o < LLVMGetNumOperands(users[k]); o++)
          if (LLVMGetOperand(users[k], (unsigned)o) == i) LLVMSetOperand(users[k], (unsigned)o, phi);
    }
}

/* Whether O leaves to one block only, entered from O alone. */
static LLVMBasicBlockRef single_exit(const rr_pass *p, const ir_loop *root) {
  if (root->nexits < 1) return NULL;
  int to = root->exits[0].to;
  for (int e = 1; e < root->nexits; e++)
    if (root->exits[e].to != to) return NULL;
  const ir_block *xb = &p->cfg.blocks[to];
  if (xb->npreds > 64) return NULL;
  for (int k = 0; k < xb->npreds; k++)
    if (!root->in_body[xb->preds[k]]) return NULL;
  return xb->bb;
}

/* A copy of O's blocks, entered from O's preheader as O is; every
 * terminator marked as a checked copy's.  Returns the copy's header. */
static LLVMBasicBlockRef clone_nest(rr_pass *p, const ir_loop *root, LLVMBasicBlockRef X) {
  int nb = root->nbody;
  LLVMBasicBlockRef *from = tw_arena_alloc(&p->arena, (size_t)nb * sizeof *from);
  LLVMBasicBlockRef *to = tw_arena_alloc(&p->arena, (size_t)nb * sizeof *to);
  int cap = 0;
  for (int k = 0; k < nb; k++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(p->cfg.blocks[root->body[k]].bb); i; i = LLVMGetNextInstruction(i))
      cap++;
  LLVMValueRef *vf = tw_arena_alloc(&p->arena, (size_t)cap * sizeof *vf);
  LLVMValueRef *vt = tw_arena_alloc(&p->arena, (size_t)cap * sizeof *vt);
  int nv = 0;
  for (int k = 0; k < nb; k++) {
    from[k] = p->cfg.blocks[root->body[k]].bb;
    to[k] = LLVMInsertBasicBlockInContext(p->ctx, X, "reroll.nest");
  }
  for (int k = 0; k < nb; k++) {
    LLVMPositionBuilderAtEnd(p->b, to[k]);
    for (LLVMValueRef i = LLVMGetFirstInstruction(from[k]); i; i = LLVMGetNextInstruction(i)) {
      LLVMValueRef c = LLVMIsAPHINode(i) ? LLVMBuildPhi(p->b, LLVMTypeOf(i), "") : LLVMInstructionClone(i);
      if (!LLVMIsAPHINode(i)) LLVMInsertIntoBuilder(p->b, c);
      vf[nv] = i, vt[nv++] = c;
    }
  }
  unsigned checked = LLVMGetMDKindIDInContext(p->ctx, IR_MD_CHECKED, strlen(IR_MD_CHECKED));
  for (int m = 0; m < nv; m++) {
    LLVMValueRef i = vf[m], c = vt[m];
    if (LLVMIsAPHINode(i)) {
      for (unsigned e = 0; e < LLVMCountIncoming(i); e++) {
        LLVMValueRef v = LLVMGetIncomingValue(i, e);
        LLVMBasicBlockRef in = LLVMGetIncomingBlock(i, e);
        for (int q = 0; q < nv; q++)
          if (vf[q] == v) { v = vt[q]; break; }
        for (int q = 0; q < nb; q++)
          if (from[q] == in) { in = to[q]; break; }
        LLVMAddIncoming(c, &v, &in, 1);
      }
      continue;
    }
    for (int o = 0; o < LLVMGetNumOperands(c); o++) {
      LLVMValueRef v = LLVMGetOperand(c, (unsigned)o);
      if (LLVMIsABasicBlock(v)) continue;
      for (int q = 0; q < nv; q++)
        if (vf[q] == v) { LLVMSetOperand(c, (unsigned)o, vt[q]); break; }
    }
    if (LLVMIsATerminatorInst(c)) {
      for (unsigned s = 0; s < LLVMGetNumSuccessors(c); s++)
        for (int q = 0; q < nb; q++)
          if (LLVMGetSuccessor(c, s) == from[q]) { LLVMSetSuccessor(c, s, to[q]); break; }
      LLVMSetMetadata(c, checked, LLVMMDNodeInContext(p->ctx, NULL, 0));
    }
  }
  /* the exit block's phis: the copy's edges, with the copy's values */
  for (LLVMValueRef phi = LLVMGetFirstInstruction(X); phi && LLVMIsAPHINode(phi); phi = LLVMGetNextInstruction(phi)) {
    unsigned n = LLVMCountIncoming(phi);
    for (unsigned e = 0; e < n; e++) {
      LLVMBasicBlockRef in = LLVMGetIncomingBlock(phi, e);
      LLVMValueRef v = LLVMGetIncomingValue(phi, e);
      int q = 0;
      while (q < nb && from[q] != in) q++;
      if (q == nb) continue;
      for (int r = 0; r < nv; r++)
        if (vf[r] == v) { v = vt[r]; break; }
      LLVMAddIncoming(phi, &v, &to[q], 1);
    }
  }
  return to[0]; /* body[0] is the header */
}

#define RH_MD "twasm.reroll.hoisted"

bool rr_hoisted(LLVMBasicBlockRef L) {
  LLVMValueRef t = LLVMGetBasicBlockTerminator(L);
  if (!t) return false;
  LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(t));
  return LLVMGetMetadata(t, LLVMGetMDKindIDInContext(ctx, RH_MD, strlen(RH_MD))) != NULL;
}

bool rr_hoist_test(rr_pass *p, const rr_effect *eff, int n, const uint64_t *floor, const rr_subst *step,
                   LLVMBasicBlockRef L, LLVMBasicBlockRef pre, LLVMBasicBlockRef rest, LLVMValueRef x,
                   uint64_t end_mask, LLVMValueRef init) {
  const ir_loop *chain[RH_MAX_LOOPS];
  int nlv = chain_of(p->loop, chain);
  if (nlv < 1 || n > RR_MAX_EFFECTS || !LLVMIsAConstantInt(init)) return false;
  const ir_loop *root = chain[0];
  if (root->preheader < 0 || !outside(p, root, x)) return false;
  /* a single chain of loops down to L (and L's remainder loop `rest`,
   * which the re-roll merges where it can): with sibling loops in the nest
   * (BLAS's C scaled before the product, tests/gpu/detect/blas_cols.c),
   * hoisting one of them cost the product its recognition (not analysed),
   * so those are left as before */
  for (int k = 0; k < nlv; k++) {
    int others = 0;
    for (int c = 0; c < chain[k]->nchildren; c++) {
      const ir_loop *ch = chain[k]->children[c];
      others += ch != (k + 1 < nlv ? chain[k + 1] : p->loop) && !(rest && p->cfg.blocks[ch->header].bb == rest);
    }
    if (others) return false;
  }
  LLVMBasicBlockRef OP = p->cfg.blocks[root->preheader].bb;
  LLVMValueRef opterm = LLVMGetBasicBlockTerminator(OP);
  if (!opterm || LLVMGetNumSuccessors(opterm) != 1 || LLVMIsConditional(opterm)) return false;
  LLVMBasicBlockRef X = single_exit(p, root);
  if (!X) return false;
  if (!p->ivs_built) ir_indvar_build(&p->lp, &p->dom), p->ivs_built = true;
  rh_level lv[RH_MAX_LOOPS];
  rh_trip trip[RH_MAX_LOOPS];
  for (int k = 0; k < nlv; k++) {
    if (!trip_known(p, root, chain[k], &trip[k])) return false;
    lv[k].loop = chain[k];
  }
  rh_access acc[RR_MAX_EFFECTS];
  if (!analyse(p, eff, n, floor, step, L, pre, p->loop->parent, lv, nlv, acc)) return false;

  /* built before O's preheader's branch */
  LLVMBuilderRef b = p->b;
  LLVMPositionBuilderBefore(b, opterm);
  LLVMTypeRef i128 = LLVMIntTypeInContext(p->ctx, 128), i64 = LLVMInt64TypeInContext(p->ctx);
  LLVMTypeRef i8 = LLVMInt8TypeInContext(p->ctx), ptr = LLVMPointerTypeInContext(p->ctx, 0);
  LLVMValueRef fn = LLVMGetBasicBlockParent(L);
  for (int k = 0; k < nlv; k++) lv[k].last = last_of(p, &trip[k], i128);
  LLVMValueRef eight = LLVMConstInt(i64, 8, false);
  LLVMValueRef mem = LLVMBuildLoad2(b, ptr, LLVMBuildInBoundsGEP2(b, i8, LLVMGetParam(fn, 0), &eight, 1, ""), "reroll.mem");
  LLVMValueRef size = LLVMBuildZExt(b, LLVMBuildLoad2(b, i64, LLVMBuildInBoundsGEP2(b, i8, mem, &eight, 1, ""), "reroll.size"), i128, "");
  LLVMTypeRef xt = LLVMTypeOf(x);
  LLVMValueRef trips = LLVMBuildSub(b, LLVMBuildAnd(b, x, LLVMConstInt(xt, end_mask, false), ""), init, "reroll.trips");
  LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntNE, trips, LLVMConstNull(xt), "reroll.some");
  LLVMValueRef last = LLVMBuildSub(b, LLVMBuildZExt(b, trips, i128, ""), LLVMConstInt(i128, 1, false), "");
  LLVMValueRef zero = LLVMConstNull(i128);
  for (int i = 0; i < n; i++) {
    const ir_affine *f = &acc[i].a0;
    LLVMTypeRef i32 = LLVMInt32TypeInContext(p->ctx);
    LLVMValueRef base = LLVMConstInt(i32, (uint64_t)f->constant & 0xffffffffu, false);
    LLVMValueRef slope[RH_MAX_LOOPS] = {NULL};
    for (int t = 0; t < f->nterms; t++) {
      base = LLVMBuildAdd(b, base, term_i32(p, &f->terms[t], false), "");
      if (!f->terms[t].iv) continue;
      int k = level_of(lv, nlv, f->terms[t].iv->loop);
      LLVMValueRef s = term_i32(p, &f->terms[t], true);
      slope[k] = slope[k] ? LLVMBuildAdd(b, slope[k], s, "") : s;
    }
    LLVMValueRef lo = LLVMBuildZExt(b, base, i128, ""), hi = lo;
    for (int k = 0; k < nlv; k++) {
      if (!slope[k]) continue;
      LLVMValueRef pk = LLVMBuildMul(b, LLVMBuildSExt(b, slope[k], i128, ""), lv[k].last, "");
      LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntSLT, pk, zero, "");
      lo = LLVMBuildAdd(b, lo, LLVMBuildSelect(b, neg, pk, zero, ""), "");
      hi = LLVMBuildAdd(b, hi, LLVMBuildSelect(b, neg, zero, pk, ""), "");
    }
    LLVMValueRef in = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSGE, lo, zero, ""),
                                   LLVMBuildICmp(b, LLVMIntSLE, hi, LLVMConstInt(i128, 0xffffffffu, false), ""), "");
    /* the iterations of L: zext(A0) + c j, j < T, c of either sign */
    LLVMValueRef span = LLVMBuildMul(b, LLVMBuildSExt(b, poly_value(p, acc[i].c), i128, ""), last, "");
    LLVMValueRef back = LLVMBuildICmp(b, LLVMIntSLT, span, zero, "");
    LLVMValueRef low_end = LLVMBuildAdd(b, lo, LLVMBuildSelect(b, back, span, zero, ""), "");
    LLVMValueRef high_end = LLVMBuildAdd(b, hi, LLVMBuildSelect(b, back, zero, span, ""), "");
    LLVMValueRef reach = LLVMConstInt(i128, acc[i].reach, false);
    in = LLVMBuildAnd(b, in, LLVMBuildICmp(b, LLVMIntSGE, low_end, LLVMConstInt(i128, acc[i].floor, false), ""), "");
    in = LLVMBuildAnd(b, in, LLVMBuildICmp(b, LLVMIntSLE, LLVMBuildAdd(b, high_end, reach, ""), size, ""), "");
    ok = LLVMBuildAnd(b, ok, in, "reroll.nest.in");
  }
  close_exits(p, root, X);
  LLVMBasicBlockRef H = p->cfg.blocks[root->header].bb;
  LLVMBasicBlockRef copy = clone_nest(p, root, X);
  /* OP: br ok, PF, copy; PF: br H (the fast nest's preheader) */
  LLVMBasicBlockRef PF = LLVMInsertBasicBlockInContext(p->ctx, H, "reroll.nest.fast");
  LLVMPositionBuilderAtEnd(b, PF);
  LLVMBuildBr(b, H);
  ir_retarget_phis(H, OP, PF);
  LLVMPositionBuilderBefore(b, opterm);
  LLVMBuildCondBr(b, ok, PF, copy);
  LLVMInstructionEraseFromParent(opterm);
  LLVMValueRef lt = LLVMGetBasicBlockTerminator(L);
  LLVMSetMetadata(lt, LLVMGetMDKindIDInContext(p->ctx, RH_MD, strlen(RH_MD)), LLVMMDNodeInContext(p->ctx, NULL, 0));
  return true;
}
