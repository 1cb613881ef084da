/* ir_reroll_canon.c: two rewrites that put the loops of ir_reroll_rem.c in
 * the form its proof reads, each exact by itself (modulo 2^w), so that it
 * may stay even where the re-roll then fails.
 *
 * LLVM's loop strength reduction in the Wasm producer (clang -O2) leaves,
 * for `for (k = 0; k < n; k++) s += A[k][i] * A[k][j]` unrolled by 4
 * (gramschmidt's product), a main counter that counts down from 0 by -F
 * to `0 - (n & mask)`, its value after the loop read back as `0 - c`, and a
 * remainder loop whose only counter is a byte offset u from 0 by c to
 * `(n & (F - 1)) << log2 c`:
 *
 * - rr_canon_negated: c = [i0, pre], [v, L], v = c - F, L's exit test
 *   `v != 0 - M`: a phi c2 = [-i0, pre], [c2 + F, L] takes its place (c
 *   reads 0 - c2, v reads 0 - (c2 + F): c == -c2 at every trip by
 *   induction), the test compares c2 + F with M (a == b iff -a == -b), and
 *   `0 - v` after L is c2 + F;
 * - rr_canon_scaled_rest: R's exit test `u.next != (x & (F - 1)) * c`
 *   becomes a down counter's `d.next != 0`, d = [x & (F - 1), pre],
 *   [d - 1, R]; u stays an IV of R.  R is entered only with r0 = x & (F -
 *   1) in [1, F - 1] (match_blocks proved E's branch): after t trips,
 *   1 <= t <= r0, u.next == t * c and d.next == r0 - t, and with c = 2^a *
 *   odd and 2^(w - a) >= F, t * c == r0 * c iff t == r0, so both leave
 *   after r0 trips;
 * - rr_canon_down: c = [M, pre], [v, L], v = c - F, M = x & mask (mask's
 *   low log2 F bits clear), L's exit test `v != 0` (clang's Wasm backend
 *   for pointer walks and unsigned counts: mv_walk, mm_walk of
 *   tests/gpu/survey/styles_matmul.c): a phi c2 = [0, pre], [c2 + F, L]
 *   beside it (c == M - c2 at every trip by induction, M being defined
 *   before L), and the test compares c2 + F with M (c - F == 0 iff M - (c2
 *   + F) == 0 iff c2 + F == M); c and v stay, dead once nothing else reads
 *   them.  Undone (rr_canon_undo) where the re-roll then fails: the
 *   vectorised loops of -msimd128 builds count down so too, and the SIMD
 *   recogniser reads that form. */
#include <stdint.h>

#include "ir_pass.h"
#include "ir_reroll.h"

static LLVMValueRef first_non_phi(LLVMBasicBlockRef bb) {
  LLVMValueRef i = LLVMGetFirstInstruction(bb);
  while (i && LLVMIsAPHINode(i)) i = LLVMGetNextInstruction(i);
  return i;
}

/* A `sub 0, v` instruction: v, else NULL. */
static LLVMValueRef negation_of(LLVMValueRef k) {
  if (!LLVMIsAInstruction(k) || LLVMGetInstructionOpcode(k) != LLVMSub) return NULL;
  LLVMValueRef z = LLVMGetOperand(k, 0);
  return LLVMIsAConstantInt(z) && LLVMConstIntGetZExtValue(z) == 0 ? LLVMGetOperand(k, 1) : NULL;
}

/* L's exit compare (through twasmc's zext/icmp wrappers), EQ or NE. */
static LLVMValueRef exit_compare(LLVMBasicBlockRef bb) {
  LLVMValueRef br = rr_cond_br(bb);
  bool negated;
  LLVMValueRef c = br ? rr_strip_bool(LLVMGetCondition(br), &negated) : NULL;
  if (!c || !LLVMIsAICmpInst(c)) return NULL;
  LLVMIntPredicate pred = LLVMGetICmpPredicate(c);
  return pred == LLVMIntEQ || pred == LLVMIntNE ? c : NULL;
}

/* v - phi as a constant, when the difference is one. */
static bool const_step(rr_pass *p, LLVMValueRef phi, LLVMValueRef v, uint64_t *step) {
  LLVMTypeRef ty = LLVMTypeOf(phi);
  if (!rr_width(ty) || rr_width(ty) > 64) return false;
  int d = rr_poly_add(p, ty, rr_eval(p, v, 0), rr_atom(p, phi), ~0ull);
  const rr_node *n = d >= 0 ? &p->nodes[d] : NULL;
  if (!n || n->kind != RR_POLY || n->nt != 1 || n->t[0].nf != 0) return false;
  *step = n->t[0].coeff;
  return true;
}

bool rr_canon_negated(rr_pass *p, LLVMBasicBlockRef L, LLVMBasicBlockRef pre) {
  LLVMValueRef cmp = exit_compare(L);
  if (!cmp) return false;
  for (unsigned side = 0; side < 2; side++) {
    LLVMValueRef v = LLVMGetOperand(cmp, side), M = negation_of(LLVMGetOperand(cmp, 1 - side));
    if (!M || rr_in_loop(p, M) || !LLVMIsAInstruction(v) || LLVMGetInstructionParent(v) != L) continue;
    for (LLVMValueRef c = LLVMGetFirstInstruction(L); c && LLVMIsAPHINode(c); c = LLVMGetNextInstruction(c)) {
      LLVMValueRef i0 = ir_incoming_from(c, pre);
      uint64_t step;
      if (LLVMCountIncoming(c) != 2 || ir_incoming_from(c, L) != v || !i0 || !LLVMIsAConstantInt(i0) ||
          !const_step(p, c, v, &step))
        continue;
      LLVMTypeRef ty = LLVMTypeOf(c);
      uint64_t F = (0 - step) & rr_wmask(rr_width(ty));
      if (F < 4 || F > 32 || (F & (F - 1))) continue;
      LLVMBuilderRef b = p->b;
      LLVMValueRef zero = LLVMConstInt(ty, 0, false);
      LLVMPositionBuilderBefore(b, LLVMGetFirstInstruction(L));
      LLVMValueRef c2 = LLVMBuildPhi(b, ty, "count.up");
      LLVMPositionBuilderBefore(b, first_non_phi(L));
      LLVMValueRef c2n = LLVMBuildAdd(b, c2, LLVMConstInt(ty, F, false), "count.up.next");
      LLVMValueRef neg_c = LLVMBuildSub(b, zero, c2, "");
      LLVMValueRef neg_v = LLVMBuildSub(b, zero, c2n, "");
      LLVMValueRef init = LLVMConstSub(zero, i0);
      LLVMAddIncoming(c2, &init, &pre, 1);
      LLVMAddIncoming(c2, &c2n, &L, 1);
      LLVMReplaceAllUsesWith(c, neg_c);
      LLVMReplaceAllUsesWith(v, neg_v);
      LLVMInstructionEraseFromParent(c);
      LLVMInstructionEraseFromParent(v);
      LLVMSetOperand(cmp, side, c2n);
      LLVMSetOperand(cmp, 1 - side, M);
      /* `0 - v` after L reads c2n itself */
      LLVMValueRef negs[64];
      int n = 0;
      for (LLVMUseRef u = LLVMGetFirstUse(neg_v); u && n < 64; u = LLVMGetNextUse(u)) {
        LLVMValueRef user = LLVMGetUser(u);
        if (LLVMIsAInstruction(user) && LLVMGetInstructionParent(user) != L && negation_of(user) == neg_v)
          negs[n++] = user;
      }
      for (int i = 0; i < n; i++) {
        LLVMReplaceAllUsesWith(negs[i], c2n);
        LLVMInstructionEraseFromParent(negs[i]);
      }
      return true;
    }
  }
  return false;
}

bool rr_canon_down(rr_pass *p, LLVMBasicBlockRef L, LLVMBasicBlockRef pre, rr_undo *undo) {
  LLVMValueRef cmp = exit_compare(L);
  if (!cmp) return false;
  for (unsigned side = 0; side < 2; side++) {
    LLVMValueRef v = LLVMGetOperand(cmp, side), z = LLVMGetOperand(cmp, 1 - side);
    if (!LLVMIsAConstantInt(z) || LLVMConstIntGetZExtValue(z) != 0 || !LLVMIsAInstruction(v) ||
        LLVMGetInstructionParent(v) != L)
      continue;
    for (LLVMValueRef c = LLVMGetFirstInstruction(L); c && LLVMIsAPHINode(c); c = LLVMGetNextInstruction(c)) {
      LLVMValueRef M = ir_incoming_from(c, pre);
      uint64_t step, mask;
      if (LLVMCountIncoming(c) != 2 || ir_incoming_from(c, L) != v || !M || !rr_and_const(M, &mask) ||
          !const_step(p, c, v, &step))
        continue;
      LLVMTypeRef ty = LLVMTypeOf(c);
      uint64_t F = (0 - step) & rr_wmask(rr_width(ty));
      if (F < 4 || F > 32 || (F & (F - 1)) || (mask & (F - 1))) continue;
      LLVMBuilderRef b = p->b;
      LLVMPositionBuilderBefore(b, LLVMGetFirstInstruction(L));
      LLVMValueRef c2 = LLVMBuildPhi(b, ty, "count.up");
      LLVMPositionBuilderBefore(b, first_non_phi(L));
      LLVMValueRef c2n = LLVMBuildAdd(b, c2, LLVMConstInt(ty, F, false), "count.up.next");
      LLVMValueRef zero = LLVMConstInt(ty, 0, false);
      LLVMAddIncoming(c2, &zero, &pre, 1);
      LLVMAddIncoming(c2, &c2n, &L, 1);
      /* c and v stay (an IV stepping by -F, dead once the test reads c2) */
      *undo = (rr_undo){.cmp = cmp, .side = side, .v = v, .z = z, .phi = c2, .next = c2n};
      LLVMSetOperand(cmp, side, c2n);
      LLVMSetOperand(cmp, 1 - side, M);
      return true;
    }
  }
  return false;
}

void rr_canon_undo(const rr_undo *u) {
  LLVMSetOperand(u->cmp, u->side, u->v);
  LLVMSetOperand(u->cmp, 1 - u->side, u->z);
  LLVMReplaceAllUsesWith(u->phi, LLVMGetUndef(LLVMTypeOf(u->phi)));
  LLVMInstructionEraseFromParent(u->next);
  LLVMInstructionEraseFromParent(u->phi);
}

/* K == (x & (F - 1)) * c as a shl or mul of that and: the and, else NULL. */
static LLVMValueRef scaled_low(rr_pass *p, LLVMValueRef K, LLVMValueRef x, unsigned F, uint64_t c) {
  if (!LLVMIsAInstruction(K)) return NULL;
  LLVMOpcode op = LLVMGetInstructionOpcode(K);
  if (op != LLVMShl && op != LLVMMul) return NULL;
  LLVMValueRef a = LLVMGetOperand(K, 0);
  uint64_t low;
  if (rr_and_const(a, &low) != x || low != F - 1) return NULL;
  LLVMTypeRef ty = LLVMTypeOf(K);
  int want = rr_poly_mul(p, ty, rr_eval(p, a, 0), rr_poly_const(p, ty, c));
  return want >= 0 && rr_eval(p, K, 0) == want ? a : NULL;
}

bool rr_canon_scaled_rest(rr_pass *p, LLVMBasicBlockRef R, LLVMBasicBlockRef rpre, LLVMValueRef x, unsigned F) {
  LLVMValueRef cmp = exit_compare(R);
  if (!cmp) return false;
  for (unsigned side = 0; side < 2; side++) {
    LLVMValueRef un = LLVMGetOperand(cmp, side);
    for (LLVMValueRef u = LLVMGetFirstInstruction(R); u && LLVMIsAPHINode(u); u = LLVMGetNextInstruction(u)) {
      LLVMValueRef i0 = ir_incoming_from(u, rpre);
      uint64_t c;
      if (LLVMCountIncoming(u) != 2 || ir_incoming_from(u, R) != un || !i0 || !LLVMIsAConstantInt(i0) ||
          LLVMConstIntGetZExtValue(i0) != 0 || LLVMTypeOf(u) != LLVMTypeOf(x) || !const_step(p, u, un, &c))
        continue;
      LLVMTypeRef ty = LLVMTypeOf(u);
      unsigned w = rr_width(ty), a = c ? (unsigned)__builtin_ctzll(c) : w;
      if (a >= w || (w - a < 64 && (1ull << (w - a)) < F)) continue;
      LLVMValueRef r0 = scaled_low(p, LLVMGetOperand(cmp, 1 - side), x, F, c);
      if (!r0 || (LLVMIsAInstruction(r0) && LLVMGetInstructionParent(r0) == R)) continue;
      LLVMBuilderRef b = p->b;
      LLVMPositionBuilderBefore(b, LLVMGetFirstInstruction(R));
      LLVMValueRef d = LLVMBuildPhi(b, ty, "rest.down");
      LLVMPositionBuilderBefore(b, first_non_phi(R));
      LLVMValueRef dn = LLVMBuildAdd(b, d, LLVMConstInt(ty, rr_wmask(w), false), "rest.down.next");
      LLVMAddIncoming(d, &r0, &rpre, 1);
      LLVMAddIncoming(d, &dn, &R, 1);
      LLVMSetOperand(cmp, 0, dn);
      LLVMSetOperand(cmp, 1, LLVMConstInt(ty, 0, false));
      return true;
    }
  }
  return false;
}

/* rr_canon_switches: clang's Wasm for an unsigned count unrolled by two
 * (mm_unsigned of tests/gpu/survey/styles_matmul.c) enters the loop from
 * a `br_table`, `switch k: 0 -> J, 1 -> E, default -> L`; it becomes
 * `br k == 0, J, S2; S2: br k == 1, E, L` (the same branches in the same
 * order of tests), the form ir_reroll.c reads.  Only switches of two cases
 * with three distinct targets, one of them (or the block it jumps to) a
 * one-block loop. */

/* A block that is, or jumps straight to, a one-block loop's header. */
static bool leads_to_self_loop(LLVMBasicBlockRef bb) {
  LLVMBasicBlockRef t = rr_jump_target(bb);
  for (LLVMBasicBlockRef h = bb; h; h = h == bb ? t : NULL) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(h);
    for (unsigned k = 0; term && k < LLVMGetNumSuccessors(term); k++)
      if (LLVMGetSuccessor(term, k) == h) return true;
  }
  return false;
}

unsigned rr_canon_switches(rr_pass *p, LLVMValueRef fn) {
  unsigned n = 0;
  for (LLVMBasicBlockRef S = LLVMGetFirstBasicBlock(fn); S; S = LLVMGetNextBasicBlock(S)) {
    LLVMValueRef sw = LLVMGetBasicBlockTerminator(S);
    if (!sw || !LLVMIsASwitchInst(sw) || LLVMGetNumSuccessors(sw) != 3) continue;
    LLVMBasicBlockRef D = LLVMGetSwitchDefaultDest(sw), B1 = LLVMGetSuccessor(sw, 1), B2 = LLVMGetSuccessor(sw, 2);
    if (D == B1 || D == B2 || B1 == B2 || D == S || B1 == S || B2 == S ||
        !(leads_to_self_loop(D) || leads_to_self_loop(B1) || leads_to_self_loop(B2)))
      continue;
    LLVMValueRef v = LLVMGetOperand(sw, 0);
    /* the case values: operands 2 and 4 (value, dest pairs after cond, default) */
    LLVMValueRef c1 = LLVMGetOperand(sw, 2), c2 = LLVMGetOperand(sw, 4);
    if (!LLVMIsAConstantInt(c1) || !LLVMIsAConstantInt(c2)) continue;
    LLVMBasicBlockRef S2 = LLVMAppendBasicBlockInContext(p->ctx, fn, "switch.next");
    LLVMMoveBasicBlockAfter(S2, S);
    LLVMBuilderRef b = p->b;
    LLVMPositionBuilderBefore(b, sw);
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, v, c1, "switch.case"), B1, S2);
    LLVMPositionBuilderAtEnd(b, S2);
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, v, c2, "switch.case"), B2, D);
    ir_retarget_phis(B2, S, S2);
    ir_retarget_phis(D, S, S2);
    LLVMInstructionEraseFromParent(sw);
    n++;
  }
  return n;
}
