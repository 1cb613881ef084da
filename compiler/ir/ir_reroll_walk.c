/* ir_reroll_walk.c: the parallel walk of two copies of one expression in
 * a block B, and the loop body built from the first, shared by the
 * re-rolls of completely unrolled code (ir_reroll_full.c: the terms of a
 * sum; ir_reroll_vec.c: the stores of a vector loop).
 *
 * A walk of r (copy 0) against c (copy g) records events: where the two
 * are integers whose expressions (ir_reroll_eval.c: wrapping polynomials)
 * differ by a constant, a leaf of r with that difference; where they are
 * the same SSA value, a shared value; else both must be pure instructions
 * (or non-volatile loads) of B with the same opcode, type, flags and
 * alignment whose operands match in turn: a node.  With `vector`, v128
 * lane operations walk too, a store at the root is a node, and a constant
 * `bitcast` folded into copy 0 matches copy g's instruction of the same
 * bitcast of the same constant. */
#include <string.h>

#include "ir_pass.h"
#include "ir_reroll.h"

static bool add_event(rr_cwalk *w, rr_ckind kind, LLVMValueRef ref, LLVMValueRef copy, uint64_t d) {
  if (w->n == RR_CWALK_MAX) return false;
  w->ev[w->n++] = (rr_cevent){kind, ref, copy, d};
  return true;
}

/* Opcodes a copy may hold: pure, non-trapping in B (twasmc's lowering
 * checks divisors and conversions in blocks of their own), plain loads,
 * and with `vector` the lane operations. */
static bool walkable(LLVMValueRef v, bool vector) {
  switch (LLVMGetInstructionOpcode(v)) {
  case LLVMAdd: case LLVMSub: case LLVMMul: case LLVMShl: case LLVMLShr: case LLVMAShr:
  case LLVMAnd: case LLVMOr: case LLVMXor: case LLVMFAdd: case LLVMFSub: case LLVMFMul:
  case LLVMFDiv: case LLVMFNeg: case LLVMICmp: case LLVMFCmp: case LLVMSelect:
  case LLVMZExt: case LLVMSExt: case LLVMTrunc: case LLVMSIToFP: case LLVMUIToFP:
  case LLVMFPExt: case LLVMFPTrunc: case LLVMBitCast: case LLVMGetElementPtr:
    return true;
  case LLVMExtractElement: case LLVMInsertElement: case LLVMShuffleVector:
    return vector;
  case LLVMLoad:
    return !LLVMGetVolatile(v) && LLVMGetOrdering(v) == LLVMAtomicOrderingNotAtomic;
  case LLVMCall:
    return rr_pure_intrinsic(LLVMGetCalledValue(v));
  default:
    return false;
  }
}

static bool same_shuffle(LLVMValueRef r, LLVMValueRef c) {
  unsigned n = LLVMGetNumMaskElements(r);
  if (n != LLVMGetNumMaskElements(c)) return false;
  for (unsigned k = 0; k < n; k++)
    if (LLVMGetMaskValue(r, k) != LLVMGetMaskValue(c, k)) return false;
  return true;
}

static bool walk(rr_pass *p, LLVMBasicBlockRef bb, LLVMValueRef r, LLVMValueRef c, rr_cwalk *w, bool vector,
                 int depth) {
  if (depth > RR_MAX_DEPTH) return false;
  if (r == c) return add_event(w, RR_C_SHARED, r, c, 0);
  for (int i = 0; i < w->n; i++)
    if (w->ev[i].ref == r && w->ev[i].kind == RR_C_NODE) return w->ev[i].copy == c;
  LLVMTypeRef ty = LLVMTypeOf(r);
  unsigned width = rr_width(ty);
  if (LLVMTypeOf(c) != ty) return false;
  if (width && width <= 64) {
    int er = rr_eval(p, r, 0), ec = rr_eval(p, c, 0);
    p->failed = false;
    uint64_t d;
    if (er >= 0 && ec >= 0 && rr_const_of(p, rr_poly_add(p, ty, ec, er, ~0ull), &d))
      return add_event(w, RR_C_LEAF, r, c, d);
  }
  /* a constant folded into copy 0 (`bitcast (<2 x i64> K)`), an
   * instruction of the same bitcast of K in copy g: one value */
  if (vector && LLVMIsAConstantExpr(r) && LLVMGetConstOpcode(r) == LLVMBitCast && LLVMIsABitCastInst(c) &&
      LLVMGetOperand(c, 0) == LLVMGetOperand(r, 0) && LLVMIsAConstant(LLVMGetOperand(c, 0)))
    return add_event(w, RR_C_SHARED, r, r, 0);
  if (!rr_in_block(r, bb) || !rr_in_block(c, bb) || LLVMIsAPHINode(r) || LLVMIsAPHINode(c) ||
      LLVMGetInstructionOpcode(r) != LLVMGetInstructionOpcode(c) ||
      LLVMGetNumOperands(r) != LLVMGetNumOperands(c))
    return false;
  LLVMOpcode op = LLVMGetInstructionOpcode(r);
  bool store = vector && op == LLVMStore && depth == 0;
  if (!store && !walkable(r, vector)) return false;
  if (rr_flags_of(r, op) != rr_flags_of(c, op)) return false;
  if ((op == LLVMLoad || store) && (LLVMGetAlignment(r) != LLVMGetAlignment(c) || LLVMGetVolatile(c)))
    return false;
  if (op == LLVMGetElementPtr && LLVMGetGEPSourceElementType(r) != LLVMGetGEPSourceElementType(c))
    return false;
  if (op == LLVMShuffleVector && !same_shuffle(r, c)) return false;
  if (op == LLVMCall && LLVMGetCalledValue(r) != LLVMGetCalledValue(c)) return false;
  int nargs = op == LLVMCall ? (int)LLVMGetNumArgOperands(r) : LLVMGetNumOperands(r);
  for (int i = 0; i < nargs; i++)
    if (!walk(p, bb, LLVMGetOperand(r, (unsigned)i), LLVMGetOperand(c, (unsigned)i), w, vector, depth + 1))
      return false;
  return add_event(w, RR_C_NODE, r, c, 0);
}

bool rr_cwalk_pair(rr_pass *p, LLVMBasicBlockRef bb, LLVMValueRef r, LLVMValueRef c, rr_cwalk *w, bool vector) {
  w->n = 0;
  return walk(p, bb, r, c, w, vector, 0);
}

bool rr_cwalk_add_node(rr_cwalk *w, LLVMValueRef v) { return add_event(w, RR_C_NODE, v, v, 0); }

/* A shared value is no node and no moving leaf; a leaf is no node. */
bool rr_cwalk_consistent(const rr_cwalk *w) {
  for (int i = 0; i < w->n; i++)
    for (int j = 0; j < w->n; j++) {
      const rr_cevent *a = &w->ev[i], *b = &w->ev[j];
      if (a->ref != b->ref || a->kind == b->kind) {
        if (a->ref == b->ref && a->kind == RR_C_LEAF && a->d != b->d) return false;
        continue;
      }
      if (a->kind == RR_C_NODE || (a->kind == RR_C_LEAF && (b->kind == RR_C_NODE || a->d != 0)))
        return false;
    }
  return true;
}

/* Copy g's walk is the template's (copy 0 against copy 1) event by
 * event, every leaf moved g times as far, modulo 2^width. */
bool rr_cwalk_scaled(const rr_cwalk *first, const rr_cwalk *w, int g) {
  if (w->n != first->n) return false;
  for (int i = 0; i < w->n; i++) {
    const rr_cevent *a = &first->ev[i], *b = &w->ev[i];
    uint64_t m = rr_wmask(rr_width(LLVMTypeOf(a->ref)));
    if (a->kind != b->kind || a->ref != b->ref || (a->kind == RR_C_LEAF && ((a->d * (uint64_t)g) & m) != (b->d & m)))
      return false;
  }
  return true;
}

bool rr_cwalk_has_node(const rr_cwalk *w) {
  for (int i = 0; i < w->n; i++)
    if (w->ev[i].kind == RR_C_NODE) return true;
  return false;
}

static bool is_node(const rr_cwalk *w, LLVMValueRef v) {
  for (int i = 0; i < w->n; i++)
    if (w->ev[i].ref == v && w->ev[i].kind == RR_C_NODE) return true;
  return false;
}

LLVMValueRef rr_cbody_map(const rr_cbody *body, LLVMValueRef v) {
  for (int i = 0; i < body->n; i++)
    if (body->from[i] == v) return body->to[i];
  return v;
}

/* At the builder (the new loop's header, after its counter): one phi per
 * moving leaf of the template, then copy 0's nodes cloned in B's order on
 * those phis. */
void rr_cbody_build(rr_pass *p, LLVMBasicBlockRef bb, const rr_cwalk *first, rr_cbody *body) {
  LLVMBuilderRef b = p->b;
  body->n = body->nleaves = 0;
  for (int i = 0; i < first->n; i++) {
    const rr_cevent *e = &first->ev[i];
    if (e->kind != RR_C_LEAF || e->d == 0 || rr_cbody_map(body, e->ref) != e->ref) continue;
    body->leaf_of[body->nleaves++] = i;
    body->from[body->n] = e->ref;
    body->to[body->n++] = LLVMBuildPhi(b, LLVMTypeOf(e->ref), "reroll.leaf");
  }
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
    if (!is_node(first, i)) continue;
    LLVMValueRef clone = LLVMInstructionClone(i);
    for (int o = 0; o < LLVMGetNumOperands(clone); o++)
      LLVMSetOperand(clone, (unsigned)o, rr_cbody_map(body, LLVMGetOperand(i, (unsigned)o)));
    LLVMInsertIntoBuilder(b, clone);
    body->from[body->n] = i;
    body->to[body->n++] = clone;
  }
}

/* At the builder (the loop's end, before its branch): each leaf phi's
 * step; then, with that latch, the phis' incoming values from bb (the
 * leaves of copy 0) and from the latch. */
void rr_cbody_step(rr_pass *p, const rr_cwalk *first, rr_cbody *body) {
  for (int l = 0; l < body->nleaves; l++) {
    const rr_cevent *e = &first->ev[body->leaf_of[l]];
    LLVMValueRef phi = rr_cbody_map(body, e->ref);
    body->next[l] = LLVMBuildAdd(p->b, phi, LLVMConstInt(LLVMTypeOf(phi), e->d, false), "reroll.step");
  }
}

void rr_cbody_close(const rr_cwalk *first, rr_cbody *body, LLVMBasicBlockRef bb, LLVMBasicBlockRef latch) {
  for (int l = 0; l < body->nleaves; l++) {
    LLVMValueRef start = first->ev[body->leaf_of[l]].ref, phi = rr_cbody_map(body, start);
    LLVMAddIncoming(phi, &start, &bb, 1);
    LLVMAddIncoming(phi, &body->next[l], &latch, 1);
  }
}

/* B split before `from` (which moves, with the rest of B, to a new block
 * `rest`), a new empty block `body` between them, B branching to it; the
 * builder at body's end. */
void rr_cloop_open(rr_pass *p, LLVMBasicBlockRef bb, LLVMValueRef from, const char *name, const char *after,
                   LLVMBasicBlockRef *body, LLVMBasicBlockRef *rest) {
  LLVMBuilderRef b = p->b;
  LLVMValueRef fn = LLVMGetBasicBlockParent(bb);
  LLVMBasicBlockRef next = LLVMGetNextBasicBlock(bb);
  *body = next ? LLVMInsertBasicBlockInContext(p->ctx, next, name) : LLVMAppendBasicBlockInContext(p->ctx, fn, name);
  next = LLVMGetNextBasicBlock(*body);
  *rest = next ? LLVMInsertBasicBlockInContext(p->ctx, next, after) : LLVMAppendBasicBlockInContext(p->ctx, fn, after);
  LLVMPositionBuilderAtEnd(b, *rest);
  for (LLVMValueRef i = from, nx; i; i = nx) {
    nx = LLVMGetNextInstruction(i);
    LLVMInstructionRemoveFromParent(i);
    LLVMInsertIntoBuilder(b, i);
  }
  LLVMPositionBuilderAtEnd(b, bb);
  LLVMBuildBr(b, *body);
  LLVMPositionBuilderAtEnd(b, *body);
}

/* B's old successors, now rest's, take their phis' values from rest.
 * Last in a rewrite: rebuilding a phi frees it. */
void rr_cloop_retarget(LLVMBasicBlockRef bb, LLVMBasicBlockRef rest) {
  LLVMValueRef term = LLVMGetBasicBlockTerminator(rest);
  for (unsigned s = 0; term && s < LLVMGetNumSuccessors(term); s++) {
    LLVMBasicBlockRef succ = LLVMGetSuccessor(term, s);
    bool seen = false;
    for (unsigned t = 0; t < s; t++) seen |= LLVMGetSuccessor(term, t) == succ;
    if (!seen) ir_retarget_phis(succ, bb, rest);
  }
}
