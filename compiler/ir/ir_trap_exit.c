/* ir_trap_exit.c: last, on each part before code generation: trap blocks
 * LLVM merged are split per check first (ir_trap_split.c); then a block that
 * calls twasm_rt_trap and ends in `unreachable` branches to the
 * function's one return block instead, and the trap's declaration loses
 * noreturn, so that LLVM shrink-wraps the prologue (the pushes of
 * callee-saved registers) past a function's early return.
 *
 * Why: a recursion's stack check (low_func.c) gives the path that calls a
 * second exit, the trap's, which ends in no return.  LLVM's shrink
 * wrapping then finds no block that post-dominates the calling path's
 * save point and pushes at entry: vm's Ackermann pushed and popped rbx on
 * each of its calls that return at once (`m == 0`), which native code
 * does not.  With the trap's block joining the return block there is one
 * exit again, and the pushes move behind the early return.
 *
 * Exact: twasm_rt_trap never returns (it unwinds to the embedder), so the
 * new edge is never taken; only code generation sees it, no IR pass runs
 * after this one.  The return block's phis get poison from the trap's
 * block, and a function is left alone when the return block uses a value
 * that does not dominate every trap's block (the edge would break SSA).
 *
 * A joined trap call is a sibling call (`jmp`), which needs no frame, where
 * it is marked `tail` (ir_tail.c marks it first). */
#include <string.h>

#include "ir.h"
#include "ir_pass.h"

#define TRAP_FN "twasm_rt_trap"

/* The one block of fn that ends in `ret`, or NULL. */
static LLVMBasicBlockRef one_return(LLVMValueRef fn) {
  LLVMBasicBlockRef found = NULL;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
    if (!t || LLVMGetInstructionOpcode(t) != LLVMRet) continue;
    if (found) return NULL;
    found = bb;
  }
  return found;
}

/* Every value the return block's other instructions use is defined in
 * it, in the entry block, or outside any block: then it dominates the
 * trap's blocks too. */
static bool uses_only_local(LLVMBasicBlockRef ret, LLVMBasicBlockRef entry) {
  for (LLVMValueRef i = LLVMGetFirstInstruction(ret); i; i = LLVMGetNextInstruction(i)) {
    if (LLVMIsAPHINode(i)) continue;
    for (int k = 0; k < LLVMGetNumOperands(i); k++) {
      LLVMValueRef v = LLVMGetOperand(i, (unsigned)k);
      if (!LLVMIsAInstruction(v)) continue;
      LLVMBasicBlockRef at = LLVMGetInstructionParent(v);
      if (at != ret && at != entry) return false;
    }
  }
  return true;
}

/* A block whose last two instructions are a call of the trap and
 * `unreachable`: its terminator, else NULL. */
static LLVMValueRef trap_end(LLVMBasicBlockRef bb) {
  LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
  if (!t || LLVMGetInstructionOpcode(t) != LLVMUnreachable) return NULL;
  LLVMValueRef call = LLVMGetPreviousInstruction(t);
  if (!call || !LLVMIsACallInst(call) || strcmp(ir_callee_name(call), TRAP_FN)) return NULL;
  return t;
}

static unsigned join_function(LLVMValueRef fn, LLVMBuilderRef b) {
  LLVMBasicBlockRef ret = one_return(fn);
  if (!ret || !uses_only_local(ret, LLVMGetEntryBasicBlock(fn))) return 0;
  unsigned n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef t = trap_end(bb);
    if (!t) continue;
    for (LLVMValueRef phi = LLVMGetFirstInstruction(ret); phi && LLVMIsAPHINode(phi);
         phi = LLVMGetNextInstruction(phi)) {
      LLVMValueRef poison = LLVMGetPoison(LLVMTypeOf(phi));
      LLVMAddIncoming(phi, &poison, &bb, 1);
    }
    LLVMInstructionEraseFromParent(t);
    LLVMPositionBuilderAtEnd(b, bb);
    LLVMBuildBr(b, ret);
    n++;
  }
  return n;
}

unsigned ir_join_trap_exits(LLVMModuleRef mod) {
  ir_restore_tail_calls(mod);
  LLVMValueRef trap = LLVMGetNamedFunction(mod, TRAP_FN);
  if (!trap) return 0;
  ir_split_trap_blocks(mod);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(mod));
  unsigned n = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
    if (LLVMGetFirstBasicBlock(fn)) n += join_function(fn, b);
  LLVMDisposeBuilder(b);
  if (n > 0) {
    unsigned noreturn = LLVMGetEnumAttributeKindForName("noreturn", 8);
    LLVMRemoveEnumAttributeAtIndex(trap, LLVMAttributeFunctionIndex, noreturn);
    /* call sites may carry it too */
    for (LLVMUseRef u = LLVMGetFirstUse(trap); u; u = LLVMGetNextUse(u)) {
      LLVMValueRef call = LLVMGetUser(u);
      if (LLVMIsACallInst(call)) LLVMRemoveCallSiteEnumAttribute(call, LLVMAttributeFunctionIndex, noreturn);
    }
  }
  return n;
}
