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

/* Calls in loops to Wasm functions returning a float that store nothing
 * and call nothing but their kind (expf, a sigmoid): kept from inlining
 * (noinline) until the offload stage has seen them (a kernel can call a
 * pure callee, kernels/kn_recog_call.c, but not read one inlined into
 * its loop), marked so that ir_release_calls frees them again and has
 * the small ones inlined (or a callee called there alone), as LLVM's
 * pipeline would have: only those, the rest of the module untouched. */
#define HOLD_CALL_MD "twasm.hold.call"
#define HOLD_CALL_MAX_INSNS 400
/* below this the callee is libm's fmaxf, fabsf and the like: inlined,
 * its compare and select are what the recognisers read (kn_mm_act) */
#define HOLD_CALL_MIN_INSNS 40
/* inlined again after the offload stage up to this size (LLVM's O2
 * inliner took musl's expf, about 70, into a loop; not its pow) */
#define HOLD_CALL_INLINE_INSNS 100

static unsigned insn_count(LLVMValueRef fn) {
  unsigned n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) n++;
  return n;
}

static bool wasm_function(LLVMValueRef fn) {
  return fn && LLVMIsAFunction(fn) && !LLVMIsDeclaration(fn) && ir_wasm_index(fn) >= 0;
}

static bool math_like(LLVMValueRef fn, int depth) {
  if (!wasm_function(fn) || depth > 3 || insn_count(fn) > HOLD_CALL_MAX_INSNS) return false;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      LLVMOpcode op = LLVMGetInstructionOpcode(i);
      if (op == LLVMStore || op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg || op == LLVMFence) return false;
      if (op != LLVMCall) continue;
      const char *name = ir_callee_name(i);
      if (!strcmp(name, "twasm_rt_trap") || (!strncmp(name, "llvm.", 5) && strncmp(name, "llvm.mem", 8)))
        continue;
      if (!math_like(LLVMGetCalledValue(i), depth + 1)) return false;
    }
  return true;
}

static bool hold_call(LLVMValueRef call) {
  if (!LLVMIsACallInst(call)) return false;
  LLVMTypeKind k = LLVMGetTypeKind(LLVMTypeOf(call));
  LLVMValueRef callee = LLVMGetCalledValue(call);
  return (k == LLVMFloatTypeKind || k == LLVMDoubleTypeKind) && math_like(callee, 0) &&
         insn_count(callee) >= HOLD_CALL_MIN_INSNS;
}

static unsigned call_md_kind(LLVMContextRef ctx) {
  return LLVMGetMDKindIDInContext(ctx, HOLD_CALL_MD, strlen(HOLD_CALL_MD));
}

static unsigned noinline_kind(void) { return LLVMGetEnumAttributeKindForName("noinline", 8); }

static unsigned hold_calls(LLVMContextRef ctx, const ir_cfg *cfg, const ir_loop *l) {
  unsigned n = 0;
  for (int b = 0; b < l->nbody; b++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(cfg->blocks[l->body[b]].bb); i; i = LLVMGetNextInstruction(i)) {
      if (!hold_call(i) || LLVMGetMetadata(i, call_md_kind(ctx))) continue;
      LLVMAddCallSiteAttribute(i, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(ctx, noinline_kind(), 0));
      LLVMSetMetadata(i, call_md_kind(ctx), LLVMMetadataAsValue(ctx, LLVMMDNodeInContext2(ctx, NULL, 0)));
      n++;
    }
  return n;
}

unsigned ir_hold_calls(LLVMModuleRef mod) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  unsigned n = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    bool any = false;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb && !any; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i && !any; i = LLVMGetNextInstruction(i))
        any = hold_call(i);
    if (!any) continue;
    tw_arena arena = {0};
    ir_cfg cfg;
    if (ir_cfg_build(&cfg, &arena, fn)) {
      ir_dom dom;
      ir_loops lp;
      ir_dom_build(&dom, &cfg);
      ir_loops_build(&lp, &cfg, &dom);
      for (int l = 0; l < lp.nloops; l++) n += hold_calls(ctx, &cfg, lp.loops[l]);
    }
    tw_arena_free(&arena);
  }
  return n;
}

unsigned ir_release_calls(LLVMModuleRef mod) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  unsigned kind = call_md_kind(ctx), always = LLVMGetEnumAttributeKindForName("alwaysinline", 12), n = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
        if (!LLVMIsACallInst(i) || !LLVMGetMetadata(i, kind)) continue;
        LLVMSetMetadata(i, kind, NULL);
        LLVMRemoveCallSiteEnumAttribute(i, LLVMAttributeFunctionIndex, noinline_kind());
        /* where LLVM's inliner would have taken it: a small callee, or
         * one called from here alone */
        LLVMValueRef callee = LLVMGetCalledValue(i);
        if (!wasm_function(callee)) continue;
        LLVMUseRef u = LLVMGetFirstUse(callee);
        bool alone = u && !LLVMGetNextUse(u) && LLVMGetLinkage(callee) == LLVMInternalLinkage;
        if (!alone && insn_count(callee) > HOLD_CALL_INLINE_INSNS) continue;
        LLVMAddCallSiteAttribute(i, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(ctx, always, 0));
        n++;
      }
  return n;
}

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
