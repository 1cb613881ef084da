/* ir_inline.c: the bounds pass's inlining decided on a trial module, so
 * that the re-roll's checked copies do not change it.
 *
 * A loop re-rolled behind a range test keeps the unrolled loop beside it
 * (a whole nest for a hoisted test, ir_reroll_hoist.c), so that a trap
 * names its exact access.  The copy runs only when the test fails, but
 * LLVM's inliner counts it: a kernel twice as large is no longer inlined
 * into its caller (mm +7.2 % instructions, main's inlined kernel copies
 * gone).  So the decision is taken on the module as it would be without
 * the copies, and replayed:
 *
 *   ir_calls_number    before the re-roll: each call to a defined
 *                      function gets IR_MD_CALL (id, function number),
 *                      each defined function its number;
 *   (the driver)       clones the module, re-rolls the clone with
 *                      exact_traps false, folds its addresses, and runs
 *                      the bounds pass's inliner on it; ir_calls_seen
 *                      before and after the inliner;
 *   ir_calls_mark_inlined  marks IR_MD_INLINE each call the trial had
 *                      before its inliner and not after in the function
 *                      it was numbered in (a call inlined there; copies
 *                      of it that the inliner carried into callers do not
 *                      count.  Where that function is gone, inlined into
 *                      every caller and deleted, a call counts as inlined
 *                      when no copy of it is left anywhere);
 *   ir_calls_obey      around the bounds pass's inliner on the real
 *                      module: each marked call gets the call-site
 *                      attribute alwaysinline, so it is inlined whatever
 *                      the checked copies add to its callee; the other
 *                      calls are decided by the inliner as before.  After
 *                      it, the attributes left (calls it could not inline)
 *                      and every mark go.
 *
 * Calls are never forced out of line (no noinline): a call site's
 * attributes travel with its copies into callers, where the trial decided
 * afresh.  A call the trial declined is declined again in all but odd
 * cases, the callee being no smaller with its checked copies. */
#include <stdlib.h>
#include <string.h>

#include "ir_pass.h"

#define IR_MD_FUNC "twasm.func"

static unsigned md_kind(LLVMContextRef ctx, const char *name) {
  return LLVMGetMDKindIDInContext(ctx, name, (unsigned)strlen(name));
}

static unsigned attr_kind(const char *name) { return LLVMGetEnumAttributeKindForName(name, strlen(name)); }

static LLVMMetadataRef int_node(LLVMContextRef ctx, unsigned a, unsigned b) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
  LLVMMetadataRef ops[2] = {LLVMValueAsMetadata(LLVMConstInt(i32, a, false)),
                            LLVMValueAsMetadata(LLVMConstInt(i32, b, false))};
  return LLVMMDNodeInContext2(ctx, ops, 2);
}

/* The two integers of a node int_node made. */
static bool node_ints(LLVMValueRef node, unsigned *a, unsigned *b) {
  if (!node || LLVMGetMDNodeNumOperands(node) != 2) return false;
  LLVMValueRef ops[2];
  LLVMGetMDNodeOperands(node, ops);
  if (!ops[0] || !ops[1] || !LLVMIsAConstantInt(ops[0]) || !LLVMIsAConstantInt(ops[1])) return false;
  *a = (unsigned)LLVMConstIntGetZExtValue(ops[0]);
  *b = (unsigned)LLVMConstIntGetZExtValue(ops[1]);
  return true;
}

/* fn's number (ir_calls_number), or -1. */
static long func_number(LLVMValueRef fn, unsigned kind) {
  size_t n = 0;
  LLVMValueMetadataEntry *md = LLVMGlobalCopyAllMetadata(fn, &n);
  long num = -1;
  for (size_t i = 0; i < n && num < 0; i++) {
    if (LLVMValueMetadataEntriesGetKind(md, (unsigned)i) != kind) continue;
    LLVMContextRef ctx = LLVMGetModuleContext(LLVMGetGlobalParent(fn));
    unsigned a, b;
    if (node_ints(LLVMMetadataAsValue(ctx, LLVMValueMetadataEntriesGetMetadata(md, (unsigned)i)), &a, &b)) num = a;
  }
  if (md) LLVMDisposeValueMetadataEntries(md);
  return num;
}

/* A call to a function with a body. */
static bool defined_call(LLVMValueRef i) {
  if (!LLVMIsACallInst(i)) return false;
  LLVMValueRef callee = LLVMGetCalledValue(i);
  return callee && LLVMIsAFunction(callee) && LLVMGetFirstBasicBlock(callee);
}

unsigned ir_calls_number(LLVMModuleRef mod, unsigned *nfuncs) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  unsigned kcall = md_kind(ctx, IR_MD_CALL), kfunc = md_kind(ctx, IR_MD_FUNC);
  unsigned ncalls = 0, nf = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    if (!LLVMGetFirstBasicBlock(fn)) continue;
    LLVMGlobalSetMetadata(fn, kfunc, int_node(ctx, nf, 0));
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
        if (defined_call(i)) LLVMSetMetadata(i, kcall, LLVMMetadataAsValue(ctx, int_node(ctx, ncalls++, nf)));
    nf++;
  }
  *nfuncs = nf;
  return ncalls;
}

void ir_calls_seen(LLVMModuleRef mod, ir_call_seen *seen) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  unsigned kcall = md_kind(ctx, IR_MD_CALL), kfunc = md_kind(ctx, IR_MD_FUNC);
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    long num = func_number(fn, kfunc);
    if (num < 0 || (unsigned long)num >= seen->nfuncs) continue;
    seen->alive[num] = 1;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
        unsigned id, owner;
        if (!LLVMIsACallInst(i) || !node_ints(LLVMGetMetadata(i, kcall), &id, &owner) || id >= seen->ncalls) continue;
        seen->any[id] = 1;
        if (owner == (unsigned long)num) seen->own[id] = 1;
      }
  }
}

unsigned ir_calls_mark_inlined(LLVMModuleRef mod, const ir_call_seen *before, const ir_call_seen *after) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  unsigned kcall = md_kind(ctx, IR_MD_CALL), kinline = md_kind(ctx, IR_MD_INLINE);
  unsigned n = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
        unsigned id, owner;
        if (!LLVMIsACallInst(i) || !node_ints(LLVMGetMetadata(i, kcall), &id, &owner) || id >= before->ncalls ||
            owner >= before->nfuncs || !before->own[id])
          continue;
        bool inlined = after->alive[owner] ? !after->own[id] : !after->any[id];
        if (!inlined) continue;
        LLVMSetMetadata(i, kinline, LLVMMetadataAsValue(ctx, int_node(ctx, id, owner)));
        n++;
      }
  return n;
}

void ir_calls_obey(LLVMModuleRef mod, bool on) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  unsigned kcall = md_kind(ctx, IR_MD_CALL), kinline = md_kind(ctx, IR_MD_INLINE), kfunc = md_kind(ctx, IR_MD_FUNC);
  unsigned always = attr_kind("alwaysinline");
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    if (!on) LLVMGlobalEraseMetadata(fn, kfunc);
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
        if (!LLVMIsACallInst(i)) continue;
        bool marked = LLVMGetMetadata(i, kinline) != NULL;
        if (on && marked)
          LLVMAddCallSiteAttribute(i, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(ctx, always, 0));
        if (on) continue;
        if (marked) LLVMRemoveCallSiteEnumAttribute(i, LLVMAttributeFunctionIndex, always);
        LLVMSetMetadata(i, kinline, NULL);
        LLVMSetMetadata(i, kcall, NULL);
      }
  }
}
