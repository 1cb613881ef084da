/* bnd_fold.c: guard mode, after the last IR pass (bnd_late.c): code
 * shapes for code generation.  A guarded load compared with another
 * value, both the compare and the branch on it in the load's block, stays
 * a plain load, so that code generation may fold it into the compare
 * (`cmp mem, reg`); a loop's exit test on two compares tests first the
 * one whose value the exit carries on. */
#include "bnd_late.h"

/* Whether icmp c is the condition of its block's conditional branch, the
 * branch's two successors distinct. */
static bool branched_on(LLVMValueRef c) {
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(c);
  LLVMValueRef br = LLVMGetBasicBlockTerminator(bb);
  return br && LLVMIsABranchInst(br) && LLVMIsConditional(br) && LLVMGetCondition(br) == c &&
         LLVMGetSuccessor(br, 0) != LLVMGetSuccessor(br, 1);
}

/* Guarded load g (volatile, its label before it): where every use of its
 * value is an integer compare with a value that is not a constant, one of
 * them in g's block and the condition of that block's branch (two
 * distinct successors), and nothing but computations lies between g and
 * that compare, g becomes a plain load.  A volatile load is never folded
 * into an instruction once its value has a second use in another block
 * (PeepholeOptimizer's fold after the compare there went), so a
 * comparator `a[i] < b[j]` tested twice ran `movzwl, movzwl, cmp` where
 * the old mode ran `movzwl, cmp mem`.  What volatile gave it still holds:
 *   - never deleted: the compare feeds a branch with two successors, so
 *     its value is used; never narrowed: the DAG combiner narrows a load
 *     only under an `and`, a truncation or a shift, and a compare of the
 *     whole value with a non-constant reads every byte; no `!range`, from
 *     which a compare could be folded away;
 *   - never moved: the label asm before it (a memory clobber the DAG
 *     chains the load after, a barrier to the machine scheduler and to
 *     PeepholeOptimizer's fold) keeps it below its label; above the next
 *     label or barrier asm, which SelectionDAGBuilder chains after every
 *     pending load; MachineSink does not move a load used in its own
 *     block, and machine LICM hoists no load out of a loop holding an asm
 *     that clobbers memory (its label); the barrier bnd_late.c puts after
 *     it where a store follows stays;
 *   - its trap offset: folded, it faults in the compare, after its own
 *     label and before the next one.
 * Returns whether g changed. */
bool late_plain_compared(late_ctx *c, LLVMValueRef g) {
  if (!LLVMIsALoadInst(g) || !LLVMGetVolatile(g) || LLVMGetOrdering(g) != LLVMAtomicOrderingNotAtomic)
    return false;
  LLVMTypeRef t = LLVMTypeOf(g);
  if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind || LLVMGetMetadata(g, LLVMGetMDKindIDInContext(c->ctx, "range", 5)))
    return false;
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(g);
  LLVMValueRef here = NULL;
  for (LLVMUseRef u = LLVMGetFirstUse(g); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    if (!LLVMIsAICmpInst(user)) return false;
    LLVMValueRef other = LLVMGetOperand(user, LLVMGetOperand(user, 0) == g ? 1 : 0);
    if (other == g || LLVMIsAConstant(other)) return false;
    if (!here && LLVMGetInstructionParent(user) == bb && branched_on(user)) here = user;
  }
  if (!here) return false;
  /* g before the compare, nothing but computations between */
  LLVMValueRef i = LLVMGetNextInstruction(g);
  for (; i && i != here; i = LLVMGetNextInstruction(i))
    if (!late_pure(c, i)) return false;
  if (i != here) return false;
  LLVMSetVolatile(g, false);
  return true;
}

/* A branch on `and i1 A, B` (its one use), both compares of the block,
 * where A is used by the and alone and B also by phis (the value the loop
 * exit carries on: a merge's `i < h` after `while (i < h && j < n)`,
 * deciding which copy loop runs) becomes a branch on `and i1 B, A`.  The
 * DAG splits such a branch into one per operand, in operand order, and
 * computes B in the branch's block anyway for the phis: tested first, its
 * compare serves the phi's `setb` and the branch both, tested second it is
 * compared twice (dispatch's merge loops, 32 M instructions; the old mode's
 * IR had the other order).  `and` commutes, poison included.  Returns
 * whether it swapped. */
bool late_exit_first(LLVMValueRef br) {
  if (!br || !LLVMIsABranchInst(br) || !LLVMIsConditional(br)) return false;
  LLVMValueRef and = LLVMGetCondition(br);
  if (!LLVMIsABinaryOperator(and) || LLVMGetInstructionOpcode(and) != LLVMAnd ||
      LLVMGetInstructionParent(and) != LLVMGetInstructionParent(br) || LLVMGetNextUse(LLVMGetFirstUse(and)))
    return false;
  LLVMValueRef a = LLVMGetOperand(and, 0), b = LLVMGetOperand(and, 1);
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(br);
  if (!LLVMIsAICmpInst(a) || !LLVMIsAICmpInst(b) || a == b || LLVMGetInstructionParent(a) != bb ||
      LLVMGetInstructionParent(b) != bb || LLVMGetNextUse(LLVMGetFirstUse(a)))
    return false;
  bool phis = false;
  for (LLVMUseRef u = LLVMGetFirstUse(b); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    if (user == and) continue;
    if (!LLVMIsAPHINode(user)) return false;
    phis = true;
  }
  if (!phis) return false;
  LLVMSetOperand(and, 0, b);
  LLVMSetOperand(and, 1, a);
  return true;
}
