/* ir_reroll_vec.c: re-rolls a vector loop that clang unrolled completely
 * (at -O2 -msimd128, the constant j loop of an ikj product, `c[i][j] +=
 * aik * b[k][j]` over 48 floats, becomes 12 copies of load, mul, load,
 * add, store of f32x4 in one block) back into a loop of N iterations,
 * where it proves the two equal, so that the offload stage finds the
 * vector loop beside its scalar alternative (kn_lanes_region.c) as it
 * does where clang kept the loop.
 *
 * The shape, in one block B of a loop: N >= 3 stores of 128-bit vectors
 * s_0 .. s_{N-1}, in this order, every vector store of B.
 *
 * The proof: each store s_g is walked against s_0 in parallel (its
 * address and its value): where the two are integers whose expressions
 * (ir_reroll_eval.c: wrapping polynomials) differ by a constant, that is
 * a leaf l of s_0 with difference d_g; where they are the same SSA value,
 * a shared value; else both must be pure instructions or non-volatile
 * loads of B with the same opcode, type, flags and alignment whose
 * operands match in turn.  Every copy must give s_1's walk with d_g =
 * g * d_1 modulo 2^width at every leaf, and no shared value may be a node
 * or a moving leaf: then s_g is s_0 with every leaf l replaced by l + g *
 * d_1, exactly (the same operations on the same values).  Order: copy
 * g's memory accesses (its loads, then its store s_g; each a node of
 * its walk) all lie after s_{g-1} and, in B's order, pair one to one with
 * copy 0's in B's order; from copy 0's first access to s_{N-1} B holds no
 * access or effect of anything else.  Then running copy 0 N times with
 * its leaves stepping by d_1 performs, access by access, the accesses of
 * copies 0, 1, ..., N-1 in the order B did, with the same addresses and
 * values; only moved down past pure instructions.  A node of a copy used
 * by anything but its own copy keeps B as it is.
 *
 * The rewrite: B is split after s_{N-1}; the loop there (`reroll.vec`:
 * a counter, one phi per moving leaf, copy 0's nodes cloned in B's
 * order) runs N times; the copies go.  Its latch gets a `!twasm.loop` of
 * its own (copy 0's store's Wasm offset), as a Wasm loop's.  Traps: the
 * same accesses in the same order trap where they did; the offset a trap
 * in copy g >= 1 reports is copy 0's (as in every re-rolled loop). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir_pass.h"
#include "ir_reroll.h"

#define RV_MIN 3          /* fewer copies: not a loop worth finding */
#define RV_MAX 64         /* stores of one block */
#define RV_MAX_ACCESS 16  /* loads and the store of one copy */
#define RV_MD_ACCESS "twasm.access" /* the lowering's (bnd.h) */

typedef struct {
  LLVMBasicBlockRef bb;
  LLVMValueRef st[RV_MAX];
  int n;
  rr_cwalk first; /* s_0 against s_1: the template */
  rr_cwalk w;
} rv_copies;

static bool is_vector_store(LLVMValueRef i) {
  if (!LLVMIsAStoreInst(i)) return false;
  LLVMTypeRef t = LLVMTypeOf(LLVMGetOperand(i, 0));
  return LLVMGetTypeKind(t) == LLVMVectorTypeKind && !LLVMGetVolatile(i) &&
         LLVMGetOrdering(i) == LLVMAtomicOrderingNotAtomic;
}

static bool is_access(LLVMValueRef v) { return LLVMIsALoadInst(v) || LLVMIsAStoreInst(v); }

static bool has_effect(LLVMValueRef v) {
  switch (LLVMGetInstructionOpcode(v)) {
  case LLVMStore: case LLVMLoad: case LLVMFence: case LLVMAtomicRMW: case LLVMAtomicCmpXchg: return true;
  case LLVMCall: return !rr_pure_intrinsic(LLVMGetCalledValue(v));
  default: return false;
  }
}

/* The position of instruction v in its block. */
static int position(LLVMValueRef v) {
  int n = 0;
  for (LLVMValueRef i = LLVMGetPreviousInstruction(v); i; i = LLVMGetPreviousInstruction(i)) n++;
  return n;
}

/* The accesses of walk w (its copy side when `copy`), in B's order. */
static int accesses(const rr_cwalk *w, bool copy, LLVMValueRef *out) {
  int n = 0, at[RV_MAX_ACCESS];
  for (int i = 0; i < w->n; i++) {
    LLVMValueRef v = copy ? w->ev[i].copy : w->ev[i].ref;
    if (w->ev[i].kind != RR_C_NODE || !is_access(v)) continue;
    if (n == RV_MAX_ACCESS) return -1;
    int pos = position(v), k = n++;
    while (k > 0 && at[k - 1] > pos) at[k] = at[k - 1], out[k] = out[k - 1], k--;
    at[k] = pos;
    out[k] = v;
  }
  return n;
}

/* Every node of copy w (copy side) used only by nodes of that copy. */
static bool uses_inside(const rr_cwalk *w, bool copy) {
  for (int i = 0; i < w->n; i++) {
    if (w->ev[i].kind != RR_C_NODE) continue;
    LLVMValueRef v = copy ? w->ev[i].copy : w->ev[i].ref;
    for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) {
      LLVMValueRef user = LLVMGetUser(u);
      bool own = false;
      for (int j = 0; j < w->n && !own; j++)
        own = w->ev[j].kind == RR_C_NODE && (copy ? w->ev[j].copy : w->ev[j].ref) == user;
      if (!own) return false;
    }
  }
  return true;
}

/* The order: copy g's accesses after s_{g-1}, paired with copy 0's in
 * B's order; nothing else touching memory from copy 0's first access to
 * s_{N-1}. */
static bool order_kept(const rv_copies *cs, const rr_cwalk *w, int g, LLVMValueRef *mine, int *nmine) {
  LLVMValueRef a0[RV_MAX_ACCESS], ag[RV_MAX_ACCESS];
  int n0 = accesses(w, false, a0), ng = accesses(w, true, ag);
  if (n0 <= 0 || n0 != ng || ag[ng - 1] != cs->st[g]) return false;
  for (int k = 0; k < n0; k++) {
    bool paired = false;
    for (int i = 0; i < w->n && !paired; i++) paired = w->ev[i].ref == a0[k] && w->ev[i].copy == ag[k];
    if (!paired) return false;
    if (g > 0 && position(ag[k]) <= position(cs->st[g - 1])) return false;
    if (*nmine == RV_MAX * RV_MAX_ACCESS) return false;
    mine[(*nmine)++] = ag[k];
  }
  return true;
}

static bool prove(rr_pass *p, rv_copies *cs) {
  rr_reset(p);
  if (!rr_cwalk_pair(p, cs->bb, cs->st[0], cs->st[1], &cs->first, true) || !rr_cwalk_consistent(&cs->first))
    return false;
  LLVMValueRef *mine = tw_arena_alloc(&p->arena, RV_MAX * RV_MAX_ACCESS * sizeof *mine);
  int nmine = 0;
  rr_cwalk *w = &cs->w;
  /* copy 0 against itself (a walk of a value against itself is all
   * shared: its nodes from the template) */
  w->n = 0;
  for (int i = 0; i < cs->first.n; i++)
    if (cs->first.ev[i].kind == RR_C_NODE) rr_cwalk_add_node(w, cs->first.ev[i].ref);
  if (!uses_inside(w, false) || !order_kept(cs, w, 0, mine, &nmine)) return false;
  for (int g = 1; g < cs->n; g++) {
    if (!rr_cwalk_pair(p, cs->bb, cs->st[0], cs->st[g], w, true) || !rr_cwalk_scaled(&cs->first, w, g))
      return false;
    if (!uses_inside(w, true) || !order_kept(cs, w, g, mine, &nmine)) return false;
  }
  /* from copy 0's first access to s_{N-1}: the copies' accesses only */
  LLVMValueRef first = mine[0];
  for (int k = 1; k < nmine; k++)
    if (position(mine[k]) < position(first)) first = mine[k];
  for (LLVMValueRef i = first;; i = LLVMGetNextInstruction(i)) {
    if (has_effect(i) && !rr_listed(mine, nmine, i)) return false;
    if (i == cs->st[cs->n - 1]) break;
  }
  return true;
}

/* The copies' nodes, stores first, then what they leave unused. */
static void erase_copies(rr_pass *p, rv_copies *cs) {
  LLVMValueRef *list = tw_arena_alloc(&p->arena, RV_MAX * RR_CWALK_MAX * sizeof *list);
  int n = 0;
  for (int g = 0; g < cs->n; g++) {
    if (g == 0) {
      for (int i = 0; i < cs->first.n; i++)
        if (cs->first.ev[i].kind == RR_C_NODE) list[n++] = cs->first.ev[i].ref;
      continue;
    }
    rr_cwalk_pair(p, cs->bb, cs->st[0], cs->st[g], &cs->w, true);
    for (int i = 0; i < cs->w.n; i++)
      if (cs->w.ev[i].kind == RR_C_NODE) list[n++] = cs->w.ev[i].copy;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (int i = 0; i < n; i++)
      if (list[i] && !LLVMGetFirstUse(list[i])) {
        LLVMInstructionEraseFromParent(list[i]);
        list[i] = NULL;
        changed = true;
      }
  }
}

/* `!twasm.loop !{i32 offset}` of copy 0's store (its address's
 * `!twasm.access` `!{i32 kind, i32 offset, ...}`), or NULL. */
static LLVMValueRef loop_md(rr_pass *p, LLVMValueRef st) {
  unsigned kind = LLVMGetMDKindIDInContext(p->ctx, RV_MD_ACCESS, (unsigned)strlen(RV_MD_ACCESS));
  LLVMValueRef ptr = LLVMGetOperand(st, 1);
  LLVMValueRef md = LLVMIsAInstruction(ptr) ? LLVMGetMetadata(ptr, kind) : NULL;
  if (!md || !LLVMIsAMDNode(md) || LLVMGetMDNodeNumOperands(md) < 2) return NULL;
  LLVMValueRef ops[8];
  if (LLVMGetMDNodeNumOperands(md) > 8) return NULL;
  LLVMGetMDNodeOperands(md, ops);
  if (!ops[1] || !LLVMIsAConstantInt(ops[1])) return NULL;
  LLVMMetadataRef at = LLVMValueAsMetadata(ops[1]);
  return LLVMMetadataAsValue(p->ctx, LLVMMDNodeInContext2(p->ctx, &at, 1));
}

static void rewrite(rr_pass *p, rv_copies *cs) {
  LLVMBuilderRef b = p->b;
  LLVMBasicBlockRef bb = cs->bb, body, rest;
  /* B's tail after s_{N-1} moves to rest; its successors' phis follow */
  rr_cloop_open(p, bb, LLVMGetNextInstruction(cs->st[cs->n - 1]), "reroll.vec", "reroll.vec.after", &body, &rest);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(p->ctx);
  LLVMValueRef k = LLVMBuildPhi(b, i32, "reroll.j");
  rr_cbody *m = tw_arena_alloc(&p->arena, sizeof *m);
  rr_cbody_build(p, bb, &cs->first, m);
  rr_cbody_step(p, &cs->first, m);
  LLVMValueRef k1 = LLVMBuildAdd(b, k, LLVMConstInt(i32, 1, false), "reroll.next");
  LLVMValueRef stay = LLVMBuildICmp(b, LLVMIntNE, k1, LLVMConstInt(i32, (unsigned)cs->n, false), "reroll.vstay");
  LLVMValueRef br = LLVMBuildCondBr(b, stay, body, rest);
  LLVMValueRef md = loop_md(p, cs->st[0]);
  if (md) LLVMSetMetadata(br, LLVMGetMDKindIDInContext(p->ctx, IR_MD_LOOP, (unsigned)strlen(IR_MD_LOOP)), md);
  LLVMValueRef zero = LLVMConstInt(i32, 0, false);
  LLVMAddIncoming(k, &zero, &bb, 1);
  LLVMAddIncoming(k, &k1, &body, 1);
  rr_cbody_close(&cs->first, m, bb, body);
  erase_copies(p, cs);
  rr_cloop_retarget(bb, rest); /* last: rebuilding a phi frees it */
}

bool rr_try_vec(rr_pass *p, LLVMValueRef fn) {
  (void)fn;
  rv_copies *cs = NULL;
  for (int b = 0; b < p->cfg.nblocks; b++) {
    const ir_loop *l = p->lp.innermost[b];
    if (!l) continue; /* the expressions need a loop around B */
    LLVMBasicBlockRef bb = p->cfg.blocks[b].bb;
    if (!cs) cs = tw_arena_alloc(&p->arena, sizeof *cs);
    cs->bb = bb;
    cs->n = 0;
    bool too_many = false;
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
      if (is_vector_store(i)) {
        if (cs->n == RV_MAX) too_many = true;
        else cs->st[cs->n++] = i;
      }
    if (too_many || cs->n < RV_MIN) continue;
    p->loop = l;
    if (!prove(p, cs)) continue;
    rewrite(p, cs);
    return true;
  }
  return false;
}
