/* off_hold.c: keeps LLVM from vectorising and unrolling loops until the
 * offload stage has seen them.  Before the standard pipeline every natural
 * loop's latch gets loop metadata asking for neither; after recognition
 * and versioning the metadata goes and the vectoriser and unroller run
 * (late passes in driver.c), on the CPU versions too. */
#include <llvm-c/DebugInfo.h>
#include <string.h>

#include "kn.h"
#include "off.h"

static LLVMMetadataRef hint(LLVMContextRef ctx, const char *name, LLVMValueRef value) {
  LLVMMetadataRef ops[2] = {LLVMMDStringInContext2(ctx, name, strlen(name)),
                            value ? LLVMValueAsMetadata(value) : NULL};
  return LLVMMDNodeInContext2(ctx, ops, value ? 2 : 1);
}

/* distinct-like !{self, !{vectorize.enable, false}, !{unroll.disable}}:
 * LLVM takes a loop ID only when its first operand is itself. */
static LLVMValueRef loop_id(LLVMContextRef ctx) {
  LLVMMetadataRef self = LLVMTemporaryMDNode(ctx, NULL, 0);
  LLVMValueRef no = LLVMConstInt(LLVMInt1TypeInContext(ctx), 0, false);
  LLVMMetadataRef ops[3] = {self, hint(ctx, "llvm.loop.vectorize.enable", no),
                            hint(ctx, "llvm.loop.unroll.disable", NULL)};
  LLVMMetadataRef id = LLVMMDNodeInContext2(ctx, ops, 3);
  LLVMMetadataReplaceAllUsesWith(self, id);
  return LLVMMetadataAsValue(ctx, id);
}

static unsigned loop_kind(LLVMContextRef ctx) {
  return LLVMGetMDKindIDInContext(ctx, "llvm.loop", 9);
}

/* The SLP vectoriser has no per-loop switch; it leaves functions marked
 * noimplicitfloat alone, so they carry that until off_release_loops. */
static unsigned nif_kind(void) { return LLVMGetEnumAttributeKindForName("noimplicitfloat", 15); }

void off_hold_loops(LLVMModuleRef mod) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  unsigned kind = loop_kind(ctx);
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    tw_arena arena = {0};
    kn_cfg cfg;
    if (kn_cfg_build(&cfg, &arena, fn)) {
      LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(ctx, nif_kind(), 0));
      kn_dom dom;
      kn_loops lp;
      kn_dom_build(&dom, &cfg);
      kn_loops_build(&lp, &cfg, &dom);
      for (int l = 0; l < lp.nloops; l++)
        for (int k = 0; k < lp.loops[l]->nlatches; k++) {
          LLVMValueRef br = LLVMGetBasicBlockTerminator(cfg.blocks[lp.loops[l]->latches[k]].bb);
          if (br) LLVMSetMetadata(br, kind, loop_id(ctx));
        }
    }
    tw_arena_free(&arena);
  }
}

void off_release_loops(LLVMModuleRef mod) {
  unsigned kind = loop_kind(LLVMGetModuleContext(mod));
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    LLVMRemoveEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, nif_kind());
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
      LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
      if (t && LLVMGetMetadata(t, kind)) LLVMSetMetadata(t, kind, NULL);
    }
  }
}
