/* ir_tail.c: the end of "disable-tail-calls", on each part before code
 * generation (the traps pass, ir_join_trap_exits, calls it first).
 *
 * A sibling call leaves no frame of its caller, and the runtime can put
 * that frame back in a backtrace only for the callers compiler/low_tail.c
 * picks.  The lowering marks every other defined function
 * "disable-tail-calls", which keeps LLVM's pipeline (TailCallElim) from
 * marking any of their calls `tail`: a `tail` call of a picked function
 * inlined into one of them loses that mark there, and would get it back.
 * Here the mark has done its job and goes, and the calls of such a
 * function that lose no frame by being sibling calls are marked `tail`,
 * as TailCallElim would have: twasm_rt_trap's (the trap names its own
 * function, runtime/rt_trap.c puts it first; ir_trap_exit.c needs the
 * sibling call so that the trap's path needs no frame) and the llvm.mem*
 * intrinsics' (libc's memcpy, memmove and memset, which neither trap nor
 * call back), where their pointers are not into an alloca of the
 * function (the offload stage's launch parameters are allocas).
 * Code generation then makes no other sibling call in it. */
#include <string.h>

#include "ir.h"
#include "ir_pass.h"

#define NO_TAIL_ATTR "disable-tail-calls"

/* Whether pointer p is surely not into an alloca of its function: its
 * base, under getelementptrs and casts, is no alloca, phi or select. */
static bool off_the_stack(LLVMValueRef p) {
  while (LLVMIsAGetElementPtrInst(p) || LLVMIsACastInst(p)) p = LLVMGetOperand(p, 0);
  return !LLVMIsAAllocaInst(p) && !LLVMIsAPHINode(p) && !LLVMIsASelectInst(p);
}

static bool may_jump(LLVMValueRef call) {
  const char *name = ir_callee_name(call);
  if (!strcmp(name, "twasm_rt_trap")) return true; /* vmctx and constants */
  bool copy = !strncmp(name, "llvm.memcpy.", 12) || !strncmp(name, "llvm.memmove.", 13);
  if (!copy && strncmp(name, "llvm.memset.", 12)) return false;
  return off_the_stack(LLVMGetOperand(call, 0)) && (!copy || off_the_stack(LLVMGetOperand(call, 1)));
}

unsigned ir_restore_tail_calls(LLVMModuleRef mod) {
  unsigned n = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    if (!LLVMGetStringAttributeAtIndex(fn, LLVMAttributeFunctionIndex, NO_TAIL_ATTR, strlen(NO_TAIL_ATTR)))
      continue;
    LLVMRemoveStringAttributeAtIndex(fn, LLVMAttributeFunctionIndex, NO_TAIL_ATTR, strlen(NO_TAIL_ATTR));
    n++;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
        if (LLVMIsACallInst(i) && LLVMGetTailCallKind(i) == LLVMTailCallKindNone && may_jump(i))
          LLVMSetTailCallKind(i, LLVMTailCallKindTail);
  }
  return n;
}
