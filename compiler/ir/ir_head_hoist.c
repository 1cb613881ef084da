/* ir_head_hoist.c: values of a nest's first block that code after the
 * nest uses, moved before the nest.
 *
 * A region that is no loop (kn_recog_top.c: a vector loop and its
 * remainder after straight-line code) begins with the guard G, which
 * jump threading often shares with the next loop of the same count: the
 * next guard branches on G's `icmp ugt n, 3` again.  The offload stage's
 * launch skips the whole region, G included, so such a value must be
 * computed before it: pure integer arithmetic on values from before the
 * region moves to the block that enters it (off_version.c). */
#include "ir.h"

static bool hoistable(LLVMValueRef v, LLVMBasicBlockRef head, int depth) {
  if (depth > 8 || LLVMIsAPHINode(v) || !ir_int_step_pure(v)) return false;
  for (int k = 0; k < LLVMGetNumOperands(v); k++) {
    LLVMValueRef op = LLVMGetOperand(v, (unsigned)k);
    if (LLVMIsAInstruction(op) && LLVMGetInstructionParent(op) == head && !hoistable(op, head, depth + 1))
      return false;
  }
  return true;
}

bool ir_head_hoistable(LLVMValueRef v, LLVMBasicBlockRef head) {
  return LLVMIsAInstruction(v) && LLVMGetInstructionParent(v) == head && hoistable(v, head, 0);
}

void ir_head_hoist(LLVMValueRef v, LLVMBasicBlockRef head, LLVMBuilderRef before) {
  if (!LLVMIsAInstruction(v) || LLVMGetInstructionParent(v) != head) return;
  for (int k = 0; k < LLVMGetNumOperands(v); k++) ir_head_hoist(LLVMGetOperand(v, (unsigned)k), head, before);
  LLVMInstructionRemoveFromParent(v);
  LLVMInsertIntoBuilder(before, v);
}
