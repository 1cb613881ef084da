/* kn_recog_rest.c: a vector loop's scalar remainder is not offloaded alone.
 *
 * clang's loop vectoriser leaves a scalar loop R after its vector loop V
 * that runs the last n mod VF iterations (at most 15), from V's count
 * n.vec = n & -VF.  When V and R are read as one region (kn_lanes_region.c,
 * kn_recog_top.c) or V is offloaded itself, R goes with it; when V stays
 * on the CPU, a kernel for R alone launches for a handful of elements
 * and, worse, counts as if the loop were offloaded (the gap of
 * tests/unit/test_offload_modes.c simd_keeps_offload it hid).  Such an R
 * is refused with V's fate as the reason. */
#include "kn_internal.h"

/* Whether v is a vector loop's count: `and x, C` with C a multiple of 2 to
 * 64 that clears the low bits (n & -VF, or n & 0x7ffffffc after n > 0). */
static bool vector_count(LLVMValueRef v) {
  if (!LLVMIsABinaryOperator(v) || LLVMGetInstructionOpcode(v) != LLVMAnd) return false;
  for (unsigned k = 0; k < 2; k++) {
    LLVMValueRef c = LLVMGetOperand(v, k);
    if (!LLVMIsAConstantInt(c)) continue;
    uint64_t bits = LLVMConstIntGetZExtValue(c);
    int low = bits ? __builtin_ctzll(bits) : 0;
    if (low >= 1 && low <= 6) return true;
  }
  return false;
}

/* Whether loop v uses w: in its body, or as a start of its header's phis. */
static bool loop_uses(const ir_cfg *cfg, const ir_loop *v, LLVMValueRef w) {
  for (LLVMUseRef u = LLVMGetFirstUse(w); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    int at = LLVMIsAInstruction(user) ? ir_cfg_index(cfg, LLVMGetInstructionParent(user)) : -1;
    if (at >= 0 && v->in_body[at]) return true;
  }
  return false;
}

/* The vector loop among R's siblings (sibs: the roots, or the children of
 * R's parent) whose count the value v (a start of R's) is computed from,
 * through pure arithmetic and phis; NULL if none. */
static const ir_loop *count_of(const ir_cfg *cfg, ir_loop *const *sibs, int nsibs, LLVMValueRef v, int depth) {
  if (!LLVMIsAInstruction(v) || depth > 4) return NULL;
  if (vector_count(v))
    for (int r = 0; r < nsibs; r++)
      if (sibs[r]->nchildren == 0 && loop_uses(cfg, sibs[r], v) && ir_loop_has_vectors(cfg, sibs[r]))
        return sibs[r];
  if (!LLVMIsAPHINode(v) && !ir_int_step_pure(v)) return NULL;
  for (int k = 0; k < LLVMGetNumOperands(v); k++) {
    LLVMValueRef op = LLVMGetOperand(v, (unsigned)k);
    if (LLVMIsABasicBlock(op)) continue;
    const ir_loop *found = count_of(cfg, sibs, nsibs, op, depth + 1);
    if (found) return found;
  }
  return NULL;
}

/* Whether a nest that is ok holds block b. */
static bool offloaded(const kn_recog_result *res, int b) {
  for (int k = 0; k < res->nnests; k++)
    if (res->nests[k].ok && res->nests[k].nest->in_body[b]) return true;
  return false;
}

void kr_refuse_rests(const ir_cfg *cfg, const ir_loops *lp, kn_recog_result *res) {
  for (int k = 0; k < res->nnests; k++) {
    kn_recog_nest *n = &res->nests[k];
    const ir_loop *l = n->nest;
    if (!n->ok || l->nchildren) continue;
    /* a region (kn_recog_top.c) is placed at R's latch, its header D no
     * loop's: R is one of the roots, or of its parent's children (a row's
     * remainder, launched once a row) */
    ir_loop *const *sibs = l->parent ? l->parent->children : lp->roots;
    int nsibs = l->parent ? l->parent->nchildren : lp->nroots;
    bool known = false;
    for (int r = 0; r < nsibs; r++) known |= sibs[r] == l;
    if (!known) continue;
    const ir_loop *v = NULL;
    LLVMBasicBlockRef h = cfg->blocks[l->header].bb;
    for (LLVMValueRef phi = LLVMGetFirstInstruction(h); phi && LLVMIsAPHINode(phi) && !v;
         phi = LLVMGetNextInstruction(phi))
      for (unsigned i = 0; i < LLVMCountIncoming(phi) && !v; i++) {
        int from = ir_cfg_index(cfg, LLVMGetIncomingBlock(phi, i));
        if (from >= 0 && !l->in_body[from]) v = count_of(cfg, sibs, nsibs, LLVMGetIncomingValue(phi, i), 0);
      }
    if (!v || v == l || offloaded(res, v->header)) continue;
    n->ok = false;
    n->reason = "the scalar remainder of a vector (SIMD) loop that stays on the CPU: not offloaded alone";
  }
}
