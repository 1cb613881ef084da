/* bnd_short.c: the short-trip branch of a lone versioned loop (bnd_loop.c's
 * short_trips): hidden from LLVM while it optimises, decided in the late
 * stage (bnd_late.c), once the checks are left to the guard pages.
 *
 * bnd.check branches to the checked copy when the loop's counter bound
 * says at most BND_SHORT_TRIPS iterations, before the range test.  That
 * pays where the checked copy costs what the unchecked one does: where the
 * late stage left it no explicit check (SQLite's OP_Column header loop,
 * about two iterations per entry, its test's trip count and three ranges
 * run 0.8 M times).  Where a check stays the branch goes: every entry runs
 * the test as before.  Until then the condition is the result of an empty
 * asm (`few` in, `few` out), so that LLVM neither folds it (a loop of 0 to
 * 3 iterations known at compile time would lose its unchecked copy before
 * anyone could tell whether the checked one keeps a check: a Lua loop's
 * checked copy, given one merged check by LLVM, cost more than the test)
 * nor moves the test's arithmetic above it.  Where LLVM unrolled the
 * unchecked copy whole (it knew the loop short at every entry), every
 * entry goes to the checked copy and the test is dead. */
#include "bnd_late.h"

#include <string.h>

/* The asm's text: an assembler comment, never emitted (the late stage
 * replaces every use of it). */
#define SHORT_ASM "# twasm.bnd.short"

LLVMValueRef bnd_short_hide(LLVMBuilderRef b, LLVMValueRef few) {
  LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(few));
  LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
  LLVMTypeRef fty = LLVMFunctionType(i32, &i32, 1, false);
  LLVMValueRef as = LLVMGetInlineAsm(fty, SHORT_ASM, strlen(SHORT_ASM), "=r,0", 4, false, false,
                                     LLVMInlineAsmDialectATT, false);
  LLVMValueRef in = LLVMBuildZExt(b, few, i32, "");
  LLVMValueRef out = LLVMBuildCall2(b, fty, as, &in, 1, "bnd.few");
  return LLVMBuildICmp(b, LLVMIntNE, out, LLVMConstInt(i32, 0, false), "");
}

/* Whether call i is such an asm. */
static bool is_short_asm(LLVMValueRef i) {
  if (!LLVMIsACallInst(i)) return false;
  LLVMValueRef callee = LLVMGetCalledValue(i);
  if (!callee || !LLVMIsAInlineAsm(callee)) return false;
  size_t len;
  const char *text = LLVMGetInlineAsmAsmString(callee, &len);
  return text && len == strlen(SHORT_ASM) && memcmp(text, SHORT_ASM, len) == 0;
}

/* The successor of versioning test br that is its checked copy (the
 * unlikely one by bnd_loop.c's weights), or NULL. */
static LLVMBasicBlockRef checked_side(late_ctx *c, LLVMValueRef br) {
  unsigned kind = LLVMGetMDKindIDInContext(c->ctx, BND_MD_TEST, (unsigned)strlen(BND_MD_TEST));
  if (!br || !LLVMIsABranchInst(br) || !LLVMIsConditional(br) || !LLVMGetMetadata(br, kind)) return NULL;
  LLVMValueRef prof = LLVMGetMetadata(br, LLVMGetMDKindIDInContext(c->ctx, "prof", 4));
  if (!prof || LLVMGetMDNodeNumOperands(prof) != 3) return NULL;
  LLVMValueRef ops[3];
  LLVMGetMDNodeOperands(prof, ops);
  if (!ops[1] || !ops[2] || !LLVMIsAConstantInt(ops[1]) || !LLVMIsAConstantInt(ops[2])) return NULL;
  unsigned long long w0 = LLVMConstIntGetZExtValue(ops[1]), w1 = LLVMConstIntGetZExtValue(ops[2]);
  if (w0 == w1) return NULL;
  return LLVMGetSuccessor(br, w0 > w1 ? 1 : 0);
}

/* Whether the short-trip branch br (one successor the versioning test's
 * block, the other its checked copy's entry, which only the two enter)
 * leads to a checked copy without an explicit check: no branch of the
 * blocks that entry dominates goes to the out-of-bounds trap (*entry_out:
 * that entry). */
static bool checked_copy_is_bare(late_ctx *c, LLVMValueRef br, LLVMBasicBlockRef *entry_out) {
  if (!br || !LLVMIsABranchInst(br) || !LLVMIsConditional(br)) return false;
  LLVMBasicBlockRef entry = NULL;
  for (unsigned s = 0; s < 2 && !entry; s++) {
    LLVMBasicBlockRef test = LLVMGetSuccessor(br, s), other = LLVMGetSuccessor(br, 1 - s);
    if (checked_side(c, LLVMGetBasicBlockTerminator(test)) == other) entry = other;
  }
  if (!entry) return false;
  if (c->dom_state == 0) {
    c->dom_state = ir_cfg_build(&c->cfg, &c->arena, c->fn) ? 1 : -1;
    if (c->dom_state == 1) ir_dom_build(&c->dom, &c->cfg);
  }
  int e = c->dom_state == 1 ? ir_cfg_index(&c->cfg, entry) : -1;
  if (e <= 0 || c->dom.idom[e] != ir_cfg_index(&c->cfg, LLVMGetInstructionParent(br))) return false;
  for (int k = 0; k < c->cfg.nblocks; k++) {
    if (!ir_dominates(&c->dom, e, k) || c->cfg.blocks[k].nsuccs < 2) continue;
    for (int s = 0; s < c->cfg.blocks[k].nsuccs; s++)
      if (bnd_is_oob_trap(c->cfg.blocks[c->cfg.blocks[k].succs[s]].bb)) return false;
  }
  *entry_out = entry;
  return true;
}

/* Whether the blocks entry dominates hold a back edge (a loop left). */
static bool region_loops(late_ctx *c, LLVMBasicBlockRef entry) {
  int e = c->dom_state == 1 ? ir_cfg_index(&c->cfg, entry) : -1;
  if (e <= 0) return true;
  for (int k = 0; k < c->cfg.nblocks; k++) {
    if (!ir_dominates(&c->dom, e, k)) continue;
    for (int s = 0; s < c->cfg.blocks[k].nsuccs; s++) {
      int to = c->cfg.blocks[k].succs[s];
      if (ir_dominates(&c->dom, e, to) && ir_dominates(&c->dom, to, k)) return true;
    }
  }
  return false;
}

/* The conditional branch on h (the asm's result), through compares of it
 * with a constant in its block, or NULL. */
static LLVMValueRef branch_on(LLVMValueRef h) {
  for (LLVMUseRef u = LLVMGetFirstUse(h); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef cmp = LLVMGetUser(u);
    if (!LLVMIsAICmpInst(cmp)) continue;
    for (LLVMUseRef v = LLVMGetFirstUse(cmp); v; v = LLVMGetNextUse(v)) {
      LLVMValueRef br = LLVMGetUser(v);
      if (LLVMIsABranchInst(br) && LLVMIsConditional(br) && LLVMGetCondition(br) == cmp) return br;
    }
  }
  return NULL;
}

unsigned late_short_trips(late_ctx *c) {
  enum { MAX_SHORT = 256 };
  LLVMValueRef found[MAX_SHORT];
  unsigned n = 0, kept = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(c->fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
      if (is_short_asm(i) && n < MAX_SHORT) found[n++] = i;
  /* decide every branch on the CFG as it stands, then rewrite */
  bool keep[MAX_SHORT], always[MAX_SHORT];
  LLVMValueRef br[MAX_SHORT];
  LLVMBasicBlockRef entry[MAX_SHORT];
  for (unsigned k = 0; k < n; k++) {
    br[k] = branch_on(found[k]);
    keep[k] = checked_copy_is_bare(c, br[k], &entry[k]);
    /* the unchecked copy unrolled whole (LLVM knew the loop short at every
     * entry, from a guard outside the check block: mujs's copy of at most
     * 15 bytes): the checked copy at every entry, as bnd_unversion.c has
     * it where both copies were unrolled whole (the checked one, entered
     * from the short branch too, may stay a loop: mujs ran 3.4 M more
     * instructions with the test kept for more than 4 bytes) */
    always[k] = false;
    if (keep[k]) {
      LLVMBasicBlockRef s0 = LLVMGetSuccessor(br[k], 0), s1 = LLVMGetSuccessor(br[k], 1);
      LLVMValueRef t = LLVMGetBasicBlockTerminator(s0 == entry[k] ? s1 : s0);
      LLVMBasicBlockRef checked = checked_side(c, t);
      LLVMBasicBlockRef fast = checked == LLVMGetSuccessor(t, 0) ? LLVMGetSuccessor(t, 1) : LLVMGetSuccessor(t, 0);
      int f = ir_cfg_index(&c->cfg, fast);
      always[k] = f > 0 && c->dom.idom[f] == ir_cfg_index(&c->cfg, LLVMGetInstructionParent(t)) &&
                  !region_loops(c, fast);
    }
  }
  unsigned test_kind = LLVMGetMDKindIDInContext(c->ctx, BND_MD_TEST, (unsigned)strlen(BND_MD_TEST));
  for (unsigned k = 0; k < n; k++) {
    LLVMValueRef h = found[k];
    LLVMValueRef v = keep[k] ? LLVMGetOperand(h, 0) : LLVMConstInt(LLVMTypeOf(h), 0, false);
    LLVMReplaceAllUsesWith(h, v);
    LLVMInstructionEraseFromParent(h);
    kept += keep[k];
    if (!keep[k] || (!always[k] && (!LLVMIsAConstantInt(v) || !LLVMConstIntGetZExtValue(v)))) continue;
    /* LLVM found the loop short at every entry (0 to 3 iterations of a
     * count it knows): the test is dead, the checked copy runs always, as
     * bnd_unversion.c would have it */
    bool to_entry_on_true = LLVMGetSuccessor(br[k], 0) == entry[k];
    LLVMBasicBlockRef test = LLVMGetSuccessor(br[k], to_entry_on_true ? 1 : 0);
    LLVMSetCondition(br[k], LLVMConstInt(LLVMInt1TypeInContext(c->ctx), to_entry_on_true, false));
    LLVMSetMetadata(LLVMGetBasicBlockTerminator(test), test_kind, NULL);
  }
  return kept;
}
