/* bnd_tail.c: guard mode, whether a labelled access's block needs the
 * end-of-block barrier (bnd_late.c end_tail).
 *
 * The branch folder's tail merging joins identical instruction tails of
 * blocks that go to the same block (or of blocks that return), leaving
 * one copy and a jump to it; a labelled access in such a tail can end up
 * away from its label.  Tails are identical only instruction by
 * instruction, so the access can only be joined with an access of the
 * same kind (load or store of the same width) at the end of another such
 * block with no inline asm after it.  Where no other block has one, the
 * barrier only costs (Lua's luaV_execute: register allocation shifts,
 * +3.1 % instructions with a barrier after every labelled access).
 *
 * "Block" here is what code generation sees: a chain of IR blocks each
 * entering the next by an unconditional branch that nothing else takes
 * is one block; an empty block that only branches on is dropped by the
 * branch folder, so its predecessors count as the next block's. */
#include "bnd_late.h"

#define TAIL_HOPS 16

/* The block bb falls into (unconditional branch, the only way in). */
static LLVMBasicBlockRef tail_next(LLVMBasicBlockRef bb) {
  LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
  if (!term || !LLVMIsABranchInst(term) || LLVMIsConditional(term)) return NULL;
  LLVMBasicBlockRef next = LLVMGetSuccessor(term, 0);
  return next != bb && late_only_from(next, term) ? next : NULL;
}

/* The block that falls into bb, or NULL. */
static LLVMBasicBlockRef tail_prev(LLVMBasicBlockRef bb) {
  LLVMUseRef u = LLVMGetFirstUse(LLVMBasicBlockAsValue(bb));
  if (!u) return NULL;
  LLVMValueRef term = LLVMGetUser(u);
  if (!LLVMIsABranchInst(term) || LLVMIsConditional(term) || !late_only_from(bb, term)) return NULL;
  LLVMBasicBlockRef prev = LLVMGetInstructionParent(term);
  return prev != bb ? prev : NULL;
}

/* An empty block (no phi, nothing but an unconditional branch): its
 * target, or NULL. */
static LLVMBasicBlockRef tail_forward(LLVMBasicBlockRef bb) {
  LLVMValueRef first = LLVMGetFirstInstruction(bb);
  if (!first || !LLVMIsABranchInst(first) || LLVMIsConditional(first)) return NULL;
  LLVMBasicBlockRef to = LLVMGetSuccessor(first, 0);
  return to != bb ? to : NULL;
}

/* Load (odd) or store (even) and width: what must match; 0 for the
 * rest. */
static uint64_t tail_kind(const late_ctx *c, LLVMValueRef i) {
  if (LLVMIsALoadInst(i)) return LLVMStoreSizeOfType(c->td, LLVMTypeOf(i)) * 2 + 1;
  if (LLVMIsAStoreInst(i)) return LLVMStoreSizeOfType(c->td, LLVMTypeOf(LLVMGetOperand(i, 0))) * 2;
  return 0;
}

static bool is_asm(LLVMValueRef i) {
  return LLVMIsACallInst(i) && LLVMIsAInlineAsm(LLVMGetCalledValue(i));
}

/* Whether the code generation block ending with IR block last holds an
 * access of kind `kind` with no inline asm after it. */
static bool tail_holds(const late_ctx *c, LLVMBasicBlockRef last, uint64_t kind) {
  for (int hops = 0; last && hops < TAIL_HOPS; hops++, last = tail_prev(last)) {
    for (LLVMValueRef i = LLVMGetLastInstruction(last); i; i = LLVMGetPreviousInstruction(i)) {
      if (is_asm(i)) return false;
      if (tail_kind(c, i) == kind) return true;
    }
  }
  return false;
}

/* Whether a predecessor of `to` other than `self` (through empty
 * forwarding blocks, `depth` deep) holds such an access at its end. */
static bool preds_hold(const late_ctx *c, LLVMBasicBlockRef to, LLVMBasicBlockRef self, uint64_t kind,
                       int depth) {
  for (LLVMUseRef u = LLVMGetFirstUse(LLVMBasicBlockAsValue(to)); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef term = LLVMGetUser(u);
    if (!LLVMIsATerminatorInst(term)) continue;
    LLVMBasicBlockRef p = LLVMGetInstructionParent(term);
    if (p == self || p == to) continue;
    if (tail_forward(p) == to) {
      if (depth > 0 && preds_hold(c, p, self, kind, depth - 1)) return true;
      continue;
    }
    if (tail_holds(c, p, kind)) return true;
  }
  return false;
}

bool late_tail_shared(const late_ctx *c, LLVMValueRef i) {
  uint64_t kind = tail_kind(c, i);
  if (!kind) return true;
  LLVMBasicBlockRef end = LLVMGetInstructionParent(i), next;
  for (int hops = 0; hops < TAIL_HOPS && (next = tail_next(end)) != NULL; hops++) end = next;
  LLVMValueRef term = LLVMGetBasicBlockTerminator(end);
  if (!term) return true;
  unsigned n = LLVMGetNumSuccessors(term);
  if (n == 0) { /* blocks that return (or end in unreachable) merge too */
    LLVMValueRef fn = LLVMGetBasicBlockParent(end);
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(fn); b; b = LLVMGetNextBasicBlock(b)) {
      LLVMValueRef t = LLVMGetBasicBlockTerminator(b);
      if (b != end && t && !LLVMGetNumSuccessors(t) && tail_holds(c, b, kind)) return true;
    }
    return false;
  }
  for (unsigned k = 0; k < n; k++) {
    LLVMBasicBlockRef to = LLVMGetSuccessor(term, k);
    for (int hops = 0; to && hops < 4; hops++) {
      if (preds_hold(c, to, end, kind, 3)) return true;
      to = tail_forward(to);
    }
  }
  return false;
}
