/* ir_vunroll.c: loops that clang vectorised for Wasm SIMD reach twasmc as
 * loops of v128 operations, which LLVM's loop vectoriser leaves alone: it
 * neither widens nor interleaves them, so such a loop keeps one vector
 * step per trip and pays the loop control on every four floats (or two
 * doubles), where the same loop from a plain Wasm build, vectorised by
 * LLVM, is interleaved by two.  This pass, after the offload stage and
 * before LLVM's loop unroller (driver.c), asks the unroller for four copies
 * (llvm.loop.unroll.count 4: a run-time count gets a remainder loop) of
 * the loops that are one block of at most VU_MAX_INSNS instructions, with
 * at least one 128-bit vector arithmetic operation and no calls but
 * intrinsics.  Bigger bodies are left to LLVM, which unrolls them by two
 * itself where it finds that worth it: asking for two copies of
 * imgproc's 40-instruction count loop saved 33 M instructions there but
 * cost 174 M in spills in the blur loop of the same function.  The
 * bounds-checked copies of versioned loops are left as they are (they run
 * only when the fast copy cannot). */
#include <llvm-c/DebugInfo.h>
#include <string.h>

#include "ir_pass.h"

#define VU_MAX_INSNS 20
#define VU_COUNT 4

/* v is 128 bits of vector (any lane type). */
static bool v128_typed(LLVMValueRef v) {
  LLVMTypeRef t = LLVMTypeOf(v);
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) return false;
  LLVMTypeRef e = LLVMGetElementType(t);
  unsigned bits;
  switch (LLVMGetTypeKind(e)) {
  case LLVMFloatTypeKind: bits = 32; break;
  case LLVMDoubleTypeKind: bits = 64; break;
  case LLVMIntegerTypeKind: bits = LLVMGetIntTypeWidth(e); break;
  default: return false;
  }
  return bits * LLVMGetVectorSize(t) == 128;
}

static bool arithmetic(LLVMOpcode op) {
  switch (op) {
  case LLVMAdd: case LLVMFAdd: case LLVMSub: case LLVMFSub: case LLVMMul: case LLVMFMul:
  case LLVMFDiv: case LLVMShl: case LLVMLShr: case LLVMAShr: case LLVMAnd: case LLVMOr:
  case LLVMXor: case LLVMICmp: case LLVMFCmp: case LLVMSelect: case LLVMFNeg:
    return true;
  default:
    return false;
  }
}

/* bb branches back to itself: a loop of one block.  How many copies it is
 * worth (the header comment's conditions), 0 for none. */
static unsigned vector_loop(LLVMBasicBlockRef bb, unsigned loop_kind, unsigned checked_kind) {
  LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
  if (!term || !LLVMIsABranchInst(term) || !LLVMIsConditional(term)) return 0;
  if (LLVMGetSuccessor(term, 0) != bb && LLVMGetSuccessor(term, 1) != bb) return 0;
  if (LLVMGetMetadata(term, loop_kind) || LLVMGetMetadata(term, checked_kind)) return 0;
  unsigned n = 0, vector_ops = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
    if (++n > VU_MAX_INSNS) return 0;
    LLVMOpcode op = LLVMGetInstructionOpcode(i);
    if (op == LLVMCall) {
      LLVMValueRef callee = LLVMGetCalledValue(i);
      if (!callee || !LLVMIsAFunction(callee) || LLVMGetIntrinsicID(callee) == 0) return 0;
      if (v128_typed(i)) vector_ops++;
    } else if (op == LLVMInvoke || op == LLVMCallBr) {
      return 0;
    } else if (arithmetic(op) && v128_typed(i)) {
      vector_ops++;
    }
  }
  return vector_ops == 0 ? 0 : VU_COUNT;
}

/* !{self, !{"llvm.loop.unroll.count", i32 count}} */
static LLVMValueRef unroll_id(LLVMContextRef ctx, unsigned count) {
  static const char name[] = "llvm.loop.unroll.count";
  LLVMMetadataRef self = LLVMTemporaryMDNode(ctx, NULL, 0);
  LLVMMetadataRef hint[2] = {
      LLVMMDStringInContext2(ctx, name, sizeof name - 1),
      LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(ctx), count, false))};
  LLVMMetadataRef ops[2] = {self, LLVMMDNodeInContext2(ctx, hint, 2)};
  LLVMMetadataRef id = LLVMMDNodeInContext2(ctx, ops, 2);
  LLVMMetadataReplaceAllUsesWith(self, id);
  return LLVMMetadataAsValue(ctx, id);
}

unsigned ir_unroll_vector_loops(LLVMModuleRef mod) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  unsigned loop_kind = LLVMGetMDKindIDInContext(ctx, "llvm.loop", 9);
  unsigned checked_kind = LLVMGetMDKindIDInContext(ctx, IR_MD_CHECKED, strlen(IR_MD_CHECKED));
  unsigned n = 0, count;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
      if ((count = vector_loop(bb, loop_kind, checked_kind)) != 0) {
        LLVMSetMetadata(LLVMGetBasicBlockTerminator(bb), loop_kind, unroll_id(ctx, count));
        n++;
      }
  return n;
}
