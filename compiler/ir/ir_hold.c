/* ir_hold.c: keeps LLVM from vectorising and unrolling loops until the
 * offload stage has seen them.  Before the standard pipeline every natural
 * loop's latch gets loop metadata asking for neither; after recognition
 * and versioning the metadata goes and the vectoriser and unroller run
 * (late passes in driver.c), on the CPU versions too. */
#include <llvm-c/DebugInfo.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "ir_pass.h"

#define OFFSET_HINT "twasm.loop.offset"

static LLVMMetadataRef hint(LLVMContextRef ctx, const char *name, LLVMValueRef value) {
  LLVMMetadataRef ops[2] = {LLVMMDStringInContext2(ctx, name, strlen(name)),
                            value ? LLVMValueAsMetadata(value) : NULL};
  return LLVMMDNodeInContext2(ctx, ops, value ? 2 : 1);
}

/* The i32 operand of md (a MetadataAsValue node !{..., i32 N} whose
 * first operand is `name` when name is given, else !{i32 N}). */
static bool md_u32(LLVMValueRef md, const char *name, uint32_t *out) {
  unsigned n = md && LLVMIsAMDNode(md) ? LLVMGetMDNodeNumOperands(md) : 0;
  unsigned want = name ? 2 : 1;
  if (n != want) return false;
  LLVMValueRef ops[2];
  LLVMGetMDNodeOperands(md, ops);
  if (name) {
    unsigned len = 0;
    const char *s = ops[0] ? LLVMGetMDString(ops[0], &len) : NULL;
    if (!s || len != strlen(name) || memcmp(s, name, len) != 0) return false;
  }
  LLVMValueRef v = ops[want - 1];
  if (!v || !LLVMIsAConstantInt(v)) return false;
  *out = (uint32_t)LLVMConstIntGetZExtValue(v);
  return true;
}

/* distinct-like !{self, !{vectorize.enable, false}, !{unroll.disable}
 * [, !{twasm.loop.offset, i32 N}]}: LLVM takes a loop ID only when its
 * first operand is itself, and keeps the other operands as they are. */
static LLVMValueRef loop_id(LLVMContextRef ctx, LLVMValueRef latch) {
  LLVMMetadataRef self = LLVMTemporaryMDNode(ctx, NULL, 0);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
  LLVMValueRef no = LLVMConstInt(LLVMInt1TypeInContext(ctx), 0, false);
  LLVMMetadataRef ops[4] = {self, hint(ctx, "llvm.loop.vectorize.enable", no),
                            hint(ctx, "llvm.loop.unroll.disable", NULL)};
  uint32_t offset;
  unsigned nops = 3;
  if (md_u32(LLVMGetMetadata(latch, LLVMGetMDKindIDInContext(ctx, IR_MD_LOOP, strlen(IR_MD_LOOP))),
             NULL, &offset))
    ops[nops++] = hint(ctx, OFFSET_HINT, LLVMConstInt(i32, offset, false));
  LLVMMetadataRef id = LLVMMDNodeInContext2(ctx, ops, nops);
  LLVMMetadataReplaceAllUsesWith(self, id);
  return LLVMMetadataAsValue(ctx, id);
}

static unsigned loop_kind(LLVMContextRef ctx) {
  return LLVMGetMDKindIDInContext(ctx, "llvm.loop", 9);
}

/* The SLP vectoriser has no per-loop switch; it leaves functions marked
 * noimplicitfloat alone, so they carry that until ir_release_loops. */
static unsigned nif_kind(void) { return LLVMGetEnumAttributeKindForName("noimplicitfloat", 15); }

void ir_hold_loops(LLVMModuleRef mod) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  unsigned kind = loop_kind(ctx);
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    tw_arena arena = {0};
    ir_cfg cfg;
    if (ir_cfg_build(&cfg, &arena, fn)) {
      LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(ctx, nif_kind(), 0));
      ir_dom dom;
      ir_loops lp;
      ir_dom_build(&dom, &cfg);
      ir_loops_build(&lp, &cfg, &dom);
      for (int l = 0; l < lp.nloops; l++)
        for (int k = 0; k < lp.loops[l]->nlatches; k++) {
          LLVMValueRef br = LLVMGetBasicBlockTerminator(cfg.blocks[lp.loops[l]->latches[k]].bb);
          if (br) LLVMSetMetadata(br, kind, loop_id(ctx, br));
        }
    }
    tw_arena_free(&arena);
  }
}

bool ir_loop_offset(LLVMValueRef latch, uint32_t *offset) {
  LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(latch));
  LLVMValueRef id = LLVMGetMetadata(latch, loop_kind(ctx));
  unsigned n = id && LLVMIsAMDNode(id) ? LLVMGetMDNodeNumOperands(id) : 0;
  if (n == 0) return false;
  LLVMValueRef *ops = malloc(n * sizeof *ops);
  if (!ops) return false;
  LLVMGetMDNodeOperands(id, ops);
  bool found = false;
  for (unsigned i = 1; i < n && !found; i++) found = md_u32(ops[i], OFFSET_HINT, offset);
  free(ops);
  return found;
}

void ir_release_loops(LLVMModuleRef mod) {
  unsigned kind = loop_kind(LLVMGetModuleContext(mod));
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    LLVMRemoveEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, nif_kind());
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
      LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
      if (t && LLVMGetMetadata(t, kind)) LLVMSetMetadata(t, kind, NULL);
    }
  }
}

bool ir_checked_copy(LLVMBasicBlockRef bb) {
  LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
  if (!term) return false;
  LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(term));
  return LLVMGetMetadata(term, LLVMGetMDKindIDInContext(ctx, IR_MD_CHECKED, strlen(IR_MD_CHECKED))) != NULL;
}

bool ir_loop_checked(const ir_cfg *cfg, const ir_loop *l) {
  if (ir_checked_copy(cfg->blocks[l->header].bb)) return true;
  for (int i = 0; i < l->nlatches; i++)
    if (ir_checked_copy(cfg->blocks[l->latches[i]].bb)) return true;
  return false;
}
