/* ir_split_head.c: a vector loop's guard split from the call or store
 * before it in its block, before the offload stage.
 *
 * clang's loop vectoriser tests `n > VF - 1` (the guard G of
 * kernels/kn_lanes_region.c) at the end of whatever block precedes the
 * loop; where a kernel is inlined into its caller, that block also holds
 * the caller's last call or store (a printf, a field written).  The
 * region kernels/kn_recog_top.c reads as one scalar loop begins at a
 * block, and the launch skips all of it, so such a block is cut after its
 * last call or store: the guard's compare and branch get a block of their
 * own.  Only in functions holding a vector loop that no loop holds (the
 * only ones with such regions); the cut changes no value or order. */
#include <string.h>

#include "ir.h"
#include "ir_pass.h"

/* Whether i has an effect a launch must not skip: a store, a call
 * (intrinsics that only compute, llvm.umax or llvm.fshl, aside). */
static bool effect(LLVMValueRef i) {
  if (LLVMIsAStoreInst(i) || LLVMIsAFenceInst(i) || LLVMIsAAtomicRMWInst(i) || LLVMIsAAtomicCmpXchgInst(i))
    return true;
  if (!LLVMIsACallInst(i)) return false;
  LLVMValueRef callee = LLVMGetCalledValue(i);
  if (!callee || !LLVMIsAFunction(callee) || !LLVMGetIntrinsicID(callee)) return true;
  size_t len;
  const char *name = LLVMGetValueName2(callee, &len);
  return !strncmp(name, "llvm.mem", 8) || strstr(name, "store") || strstr(name, "trap") || strstr(name, "stack");
}

/* The last such instruction of bb before its terminator, NULL if none (a
 * guard may branch at once on a compare made before: one that jump
 * threading shares with the loop before). */
static LLVMValueRef last_effect(LLVMBasicBlockRef bb) {
  LLVMValueRef term = LLVMGetBasicBlockTerminator(bb), last = NULL;
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i && i != term; i = LLVMGetNextInstruction(i))
    if (effect(i)) last = i;
  return last;
}

/* Whether a branch leads straight to a trap (a bounds check's: a block
 * ending in `unreachable`), which is no vector loop's guard: such blocks
 * (a big function's hundreds of checked accesses) are left whole. */
static bool to_trap(LLVMValueRef br) {
  for (unsigned s = 0; s < LLVMGetNumSuccessors(br); s++) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(LLVMGetSuccessor(br, s));
    if (t && LLVMIsAUnreachableInst(t)) return true;
  }
  return false;
}

/* In the blocks of fn outside every loop that end in a conditional branch
 * after a call or store, when fn has a root loop (no loop around it)
 * computing vectors: the last such call or store of each; how many, at
 * most cap, into out. */
static int candidates(LLVMValueRef fn, LLVMValueRef *out, int cap) {
  tw_arena arena = {0};
  ir_cfg cfg;
  ir_dom dom;
  ir_loops lp;
  int n = 0;
  if (ir_cfg_build(&cfg, &arena, fn)) {
    ir_dom_build(&dom, &cfg);
    ir_loops_build(&lp, &cfg, &dom);
    bool found = false;
    for (int r = 0; r < lp.nroots && !found; r++)
      found = !lp.roots[r]->nchildren && ir_loop_has_vectors(&cfg, lp.roots[r]);
    for (int b = 0; b < cfg.nblocks && found && n < cap; b++) {
      bool looped = false;
      for (int r = 0; r < lp.nroots && !looped; r++) looped = lp.roots[r]->in_body[b];
      LLVMValueRef term = LLVMGetBasicBlockTerminator(cfg.blocks[b].bb), last;
      if (!looped && term && LLVMIsABranchInst(term) && LLVMIsConditional(term) && !to_trap(term) &&
          (last = last_effect(cfg.blocks[b].bb)))
        out[n++] = last;
    }
  }
  tw_arena_free(&arena);
  return n;
}

LLVMBasicBlockRef ir_split_before(LLVMValueRef at, const char *name) {
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(at);
  LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(LLVMBasicBlockAsValue(bb)));
  LLVMBasicBlockRef next = LLVMGetNextBasicBlock(bb);
  LLVMBasicBlockRef tail = next ? LLVMInsertBasicBlockInContext(ctx, next, name)
                                : LLVMAppendBasicBlockInContext(ctx, LLVMGetBasicBlockParent(bb), name);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  LLVMPositionBuilderAtEnd(b, tail);
  for (LLVMValueRef i = at, after; i; i = after) {
    after = LLVMGetNextInstruction(i);
    LLVMInstructionRemoveFromParent(i);
    LLVMInsertIntoBuilder(b, i);
  }
  LLVMDisposeBuilder(b);
  LLVMValueRef term = LLVMGetBasicBlockTerminator(tail);
  for (unsigned s = 0; s < LLVMGetNumSuccessors(term); s++) {
    LLVMBasicBlockRef to = LLVMGetSuccessor(term, s);
    bool seen = false;
    for (unsigned k = 0; k < s; k++) seen |= LLVMGetSuccessor(term, k) == to;
    if (!seen) ir_retarget_phis(to, bb, tail);
  }
  return tail;
}

/* bb cut after last: the rest, terminator included, in a new block. */
static void split_after(LLVMValueRef last) {
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(last);
  LLVMBasicBlockRef tail = ir_split_before(LLVMGetNextInstruction(last), "guard.head");
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetTypeContext(LLVMTypeOf(LLVMBasicBlockAsValue(bb))));
  LLVMPositionBuilderAtEnd(b, bb);
  LLVMBuildBr(b, tail);
  LLVMDisposeBuilder(b);
}

unsigned ir_split_guard_heads(LLVMModuleRef mod) {
  unsigned n = 0;
  LLVMValueRef found[256];
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    if (LLVMCountBasicBlocks(fn) == 0) continue;
    int k = candidates(fn, found, 256);
    for (int i = 0; i < k; i++) split_after(found[i]);
    n += (unsigned)k;
  }
  return n;
}
