/* ir_unswitch.c: the loops whose devirtualised call_indirect (low_devirt.c)
 * switches on a loop-invariant table index are unswitched: one copy of
 * the loop per case, each with its callee inlined and no switch left in
 * it, like a C++ compiler's loop over a template parameter.
 *
 * Why: a merge sort calling its comparator through a pointer (dispatch's
 * merge loop, qsort-like code, a visitor applied to every element) runs
 * the switch on the same index in every iteration: its range test, the
 * jump through the switch's table and a reload of the index from the
 * stack, where native code makes one indirect call.  LLVM unswitches such
 * a loop only with simple-loop-unswitch<nontrivial>, which default<O2>
 * leaves out, and under a cost threshold (unswitch-threshold, 50) that a
 * loop of five cases exceeds.
 *
 * How: the driver runs simple-loop-unswitch<nontrivial> before
 * default<On>, with the threshold raised once for the process
 * (IR_UNSWITCH_THRESHOLD; LLVM reads it only for non-trivial unswitching,
 * which default<O2> never does and default<O3> does), and only where this
 * file allows it: ir_unswitch_mask marks every other function with a body
 * optsize, which LLVM's non-trivial unswitching skips, and
 * ir_unswitch_unmask removes those marks afterwards.  Exact: unswitching
 * is LLVM's own transformation, each copy runs the code of its case. */
#include <string.h>

#include "ir.h"
#include "ir_pass.h"

/* The string attribute that tells ir_unswitch_unmask which optsize marks
 * are this file's. */
#define MASK_ATTR "twasm-unswitch-mask"

static unsigned kind_of(const char *name) { return LLVMGetEnumAttributeKindForName(name, strlen(name)); }

/* A switch lowering tagged IR_MD_DEVIRT, in a loop, on a value the loop
 * does not define. */
static bool has_invariant_devirt(LLVMValueRef fn, unsigned md_kind) {
  bool found = false;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb && !found; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
    found = t && LLVMGetInstructionOpcode(t) == LLVMSwitch && LLVMGetMetadata(t, md_kind);
  }
  if (!found) return false;
  tw_arena arena = {0};
  ir_cfg cfg;
  ir_dom dom;
  ir_loops lp;
  found = false;
  if (ir_cfg_build(&cfg, &arena, fn)) {
    ir_dom_build(&dom, &cfg);
    ir_loops_build(&lp, &cfg, &dom);
    for (int b = 0; b < cfg.nblocks && !found; b++) {
      const ir_loop *l = lp.innermost[b];
      LLVMValueRef t = LLVMGetBasicBlockTerminator(cfg.blocks[b].bb);
      if (!l || !t || LLVMGetInstructionOpcode(t) != LLVMSwitch || !LLVMGetMetadata(t, md_kind)) continue;
      found = !ir_loop_defines(l, LLVMGetOperand(t, 0), &cfg);
    }
  }
  tw_arena_free(&arena);
  return found;
}

unsigned ir_unswitch_mask(LLVMModuleRef mod) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  unsigned md_kind = LLVMGetMDKindIDInContext(ctx, IR_MD_DEVIRT, strlen(IR_MD_DEVIRT));
  unsigned optsize = kind_of("optsize");
  unsigned n = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    if (!LLVMGetFirstBasicBlock(fn)) continue;
    if (has_invariant_devirt(fn, md_kind)) {
      n++;
      continue;
    }
    if (LLVMGetEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, optsize)) continue;
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(ctx, optsize, 0));
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(ctx, MASK_ATTR, strlen(MASK_ATTR), "", 0));
  }
  return n;
}

void ir_unswitch_unmask(LLVMModuleRef mod) {
  unsigned optsize = kind_of("optsize");
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    if (!LLVMGetStringAttributeAtIndex(fn, LLVMAttributeFunctionIndex, MASK_ATTR, strlen(MASK_ATTR))) continue;
    LLVMRemoveEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, optsize);
    LLVMRemoveStringAttributeAtIndex(fn, LLVMAttributeFunctionIndex, MASK_ATTR, strlen(MASK_ATTR));
  }
}
