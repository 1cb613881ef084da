/* ir_trap_split.c: in the traps pass, before the trap blocks are joined to
 * the return (ir_trap_exit.c): a block calling twasm_rt_trap that LLVM's
 * SimplifyCFG merged from the trap blocks of several checks (the call's
 * function index and file offset phis of each check's constants) is split
 * again, each check branching to a call of its own with its constants.
 *
 * Why: code generation materialises a phi's incoming constant at the end
 * of the predecessor, before its branch, so every check sharing the block
 * ran a `mov $offset,%ecx` on its hot path and held a register for it
 * there.  Lua's luaV_execute paid it at each Lua call (startfunc's check
 * of `ci`); its bytecode loop's handlers hold one register less at their
 * checks without them (PERFORMANCE.md, "Real programs, round 8").  Code
 * generation's tail merging still shares the call itself: each check's
 * cold block sets its offset and jumps to it.
 *
 * Exact: each new block makes the call the merged block made on that
 * edge, with the same arguments, and ends the same way. */
#include <stdio.h>
#include <string.h>

#include "ir.h"
#include "ir_pass.h"

#define TRAP_FN "twasm_rt_trap"

/* bb is phis that only its call of the trap uses, that call and
 * `unreachable`; the call is returned, else NULL. */
static LLVMValueRef merged_trap(LLVMBasicBlockRef bb) {
  LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
  if (!t || LLVMGetInstructionOpcode(t) != LLVMUnreachable) return NULL;
  LLVMValueRef call = LLVMGetPreviousInstruction(t);
  if (!call || !LLVMIsACallInst(call) || strcmp(ir_callee_name(call), TRAP_FN)) return NULL;
  LLVMValueRef first = LLVMGetFirstInstruction(bb);
  if (first == call) return NULL;
  for (LLVMValueRef i = first; i != call; i = LLVMGetNextInstruction(i)) {
    if (!LLVMIsAPHINode(i)) return NULL;
    for (LLVMUseRef u = LLVMGetFirstUse(i); u; u = LLVMGetNextUse(u))
      if (LLVMGetUser(u) != call) return NULL;
  }
  return call;
}

/* The predecessors of bb (each once) into preds[0..*n), false when one
 * enters by other than a branch or a switch, or there are more than max. */
static bool branch_preds(LLVMBasicBlockRef bb, LLVMBasicBlockRef *preds, unsigned max, unsigned *n) {
  *n = 0;
  for (LLVMUseRef u = LLVMGetFirstUse(LLVMBasicBlockAsValue(bb)); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef term = LLVMGetUser(u);
    if (!LLVMIsAInstruction(term) || !(LLVMIsABranchInst(term) || LLVMIsASwitchInst(term))) return false;
    LLVMBasicBlockRef from = LLVMGetInstructionParent(term);
    bool seen = false;
    for (unsigned k = 0; k < *n && !seen; k++) seen = preds[k] == from;
    if (seen) continue;
    if (*n == max) return false;
    preds[(*n)++] = from;
  }
  return true;
}

/* The call's copy for the edge from `from`: each phi argument of the
 * merged block replaced by its value on that edge. */
static LLVMValueRef call_for(LLVMValueRef call, LLVMBasicBlockRef merged, LLVMBasicBlockRef from) {
  LLVMValueRef c = LLVMInstructionClone(call);
  unsigned nargs = (unsigned)LLVMGetNumArgOperands(call);
  for (unsigned k = 0; k < nargs; k++) {
    LLVMValueRef a = LLVMGetOperand(call, k);
    if (!LLVMIsAPHINode(a) || LLVMGetInstructionParent(a) != merged) continue;
    for (unsigned e = 0; e < LLVMCountIncoming(a); e++)
      if (LLVMGetIncomingBlock(a, e) == from) {
        LLVMSetOperand(c, k, LLVMGetIncomingValue(a, e));
        break;
      }
  }
  return c;
}

/* Up to this many checks per merged block get their own call (a larger
 * one is left as it is). */
#define MAX_SPLIT 1024

static unsigned split_block(LLVMContextRef ctx, LLVMBuilderRef b, LLVMBasicBlockRef bb, LLVMValueRef call) {
  LLVMBasicBlockRef preds[MAX_SPLIT];
  unsigned n;
  if (!branch_preds(bb, preds, MAX_SPLIT, &n) || n < 2) return 0;
  /* named after the merged block (bounds_trap...: what tests and dumps
   * know a check's trap by) */
  char name[96];
  snprintf(name, sizeof name, "%s.own", LLVMGetBasicBlockName(bb));
  for (unsigned p = 0; p < n; p++) {
    LLVMBasicBlockRef own = LLVMInsertBasicBlockInContext(ctx, bb, name);
    LLVMPositionBuilderAtEnd(b, own);
    LLVMInsertIntoBuilder(b, call_for(call, bb, preds[p]));
    LLVMBuildUnreachable(b);
    LLVMValueRef term = LLVMGetBasicBlockTerminator(preds[p]);
    for (unsigned k = 0; k < LLVMGetNumSuccessors(term); k++)
      if (LLVMGetSuccessor(term, k) == bb) LLVMSetSuccessor(term, k, own);
  }
  LLVMDeleteBasicBlock(bb); /* no edge enters it now */
  return n;
}

unsigned ir_split_trap_blocks(LLVMModuleRef mod) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  unsigned n = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb;) {
      LLVMBasicBlockRef next = LLVMGetNextBasicBlock(bb);
      LLVMValueRef call = merged_trap(bb);
      if (call) n += split_block(ctx, b, bb, call);
      bb = next;
    }
  LLVMDisposeBuilder(b);
  return n;
}
