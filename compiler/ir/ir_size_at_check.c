/* ir_size_at_check.c: late, on optimised IR: a bounds check (an icmp
 * deciding only whether to take the out-of-bounds trap, or which of the
 * bounds pass's loop versions runs) that compares with the linear
 * memory's size (vmctx->mem->size_bytes, or that size plus a constant)
 * carried from another block, a load or a phi of loads, compares with
 * the size loaded again just before it; the loads and phis left without
 * a use go.
 *
 * Why: LLVM's GVN carries one load of the size to every check it reaches
 * without a call between, through phis, so that in a bytecode loop whose
 * handlers call (Lua 5.4's luaV_execute) the size is reloaded in the block
 * every handler branches back to (`mov 0x8(%rbx),%rcx` per opcode) and
 * held in a register, or spilled, across the loop, where the check needs
 * it only at the compare.  Loaded beside the check it costs a load there
 * (often folded into the compare) and no register across the loop.
 *
 * Exact: such a compare was made against the size loaded just before it
 * (bnd_insert.c, bnd_loop.c), and LLVM replaced that load by a value
 * only where it proved the two equal; only memory.grow changes the size,
 * so loading it again at the compare reads that same value.  Compares of
 * the size that are not bounds decisions (a program's memory.size kept
 * across a memory.grow) are left alone.
 *
 * Tried and undone (30 Nov 2026, Lua fib 30, cachegrind, before 1.0388 G
 * instructions): the opposite, the loads the handlers branch back to
 * replaced by phis of the size each handler holds (on-demand SSA, a load
 * after each call that may grow memory): 1.2184 G, the size live across
 * every handler; only where a predecessor holds it on every path: nothing
 * (each of luaV_execute's 77 joins has a path that calls). */
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "ir_pass.h"

/* p is `getelementptr i8, ptr X, i64 8`: *x = X. */
static bool field_8(LLVMValueRef p, LLVMValueRef *x) {
  if (!p || !LLVMIsAGetElementPtrInst(p) || LLVMGetNumOperands(p) != 2) return false;
  LLVMValueRef k = LLVMGetOperand(p, 1);
  if (!LLVMIsAConstantInt(k) || LLVMConstIntGetZExtValue(k) != 8) return false;
  *x = LLVMGetOperand(p, 0);
  return true;
}

typedef struct {
  LLVMValueRef fn, vmctx, obj;
  LLVMTypeRef i64;
  LLVMValueRef seen[256]; /* phis size_value met */
  int nseen;
} pre_ctx;

/* i is `load i64 (vmctx->mem + 8)`: the size (twasm_abi.h: vmctx field 8
 * is the memory object, loaded once and invariant, its field 8 the size). */
static bool size_load(const pre_ctx *c, LLVMValueRef i, LLVMValueRef *obj) {
  LLVMValueRef o, ctx;
  if (!i || !LLVMIsALoadInst(i) || LLVMTypeOf(i) != c->i64 || LLVMGetVolatile(i)) return false;
  if (!field_8(LLVMGetOperand(i, 0), &o) || !LLVMIsALoadInst(o) || !field_8(LLVMGetOperand(o, 0), &ctx) ||
      ctx != c->vmctx)
    return false;
  if (obj) *obj = o;
  return true;
}

/* A fresh load of the size before instruction at, like `like`. */
static LLVMValueRef reload(pre_ctx *c, LLVMBuilderRef b, LLVMValueRef at, LLVMValueRef like) {
  LLVMContextRef ctx = LLVMGetModuleContext(LLVMGetGlobalParent(c->fn));
  LLVMPositionBuilderBefore(b, at);
  LLVMValueRef eight = LLVMConstInt(c->i64, 8, false);
  LLVMValueRef p = LLVMBuildGEP2(b, LLVMInt8TypeInContext(ctx), c->obj, &eight, 1, "size_at");
  LLVMValueRef r = LLVMBuildLoad2(b, c->i64, p, "size_here");
  LLVMSetAlignment(r, LLVMGetAlignment(like));
  size_t nmd;
  LLVMValueMetadataEntry *md = LLVMInstructionGetAllMetadataOtherThanDebugLoc(like, &nmd);
  for (unsigned j = 0; j < nmd; j++)
    LLVMSetMetadata(r, LLVMValueMetadataEntriesGetKind(md, j),
                    LLVMMetadataAsValue(ctx, LLVMValueMetadataEntriesGetMetadata(md, j)));
  if (md) LLVMDisposeValueMetadataEntries(md);
  return r;
}

/* v is the size: a size load, or a phi of such values (or poison); a
 * cycle of phis counts.  *like: one of the loads. */
static bool size_value(pre_ctx *c, LLVMValueRef v, LLVMValueRef *like, int depth) {
  if (size_load(c, v, NULL)) return *like = v, true;
  if (!LLVMIsAPHINode(v) || LLVMTypeOf(v) != c->i64 || depth > 64) return false;
  for (int k = 0; k < c->nseen; k++)
    if (c->seen[k] == v) return true;
  if (c->nseen == (int)(sizeof c->seen / sizeof *c->seen)) return false;
  c->seen[c->nseen++] = v;
  unsigned n = LLVMCountIncoming(v);
  for (unsigned k = 0; k < n; k++) {
    LLVMValueRef in = LLVMGetIncomingValue(v, k);
    if (!LLVMIsAPoisonValue(in) && !LLVMIsAUndefValue(in) && !size_value(c, in, like, depth + 1)) return false;
  }
  return true;
}

/* br branches, when its condition holds, to a call of twasm_rt_trap with
 * TWASM_TRAP_MEMORY_OOB (5), through blocks of phis only.  (Also through
 * the blocks where the bounds pass picks which access of a group failed,
 * which load the size again: Lua fib 1.0353 -> 1.0490 G instructions, the
 * loop entry's shared size gone and each handler's check loading it.) */
static bool to_oob_trap(LLVMValueRef br) {
  LLVMBasicBlockRef bb = LLVMGetSuccessor(br, 0);
  for (int hops = 0; hops < 3; hops++) { /* through blocks LLVM split off */
    LLVMValueRef t = LLVMGetFirstInstruction(bb);
    while (t && LLVMIsAPHINode(t)) t = LLVMGetNextInstruction(t);
    if (t && LLVMIsABranchInst(t) && !LLVMIsConditional(t)) {
      bb = LLVMGetSuccessor(t, 0);
      continue;
    }
    if (!t || !LLVMIsACallInst(t)) return false;
    LLVMValueRef f = LLVMGetCalledValue(t);
    size_t len;
    const char *name = f && LLVMIsAFunction(f) ? LLVMGetValueName2(f, &len) : "";
    LLVMValueRef code = LLVMGetNumArgOperands(t) > 1 ? LLVMGetOperand(t, 1) : NULL;
    return !strcmp(name, "twasm_rt_trap") && code && LLVMIsAConstantInt(code) && LLVMConstIntGetZExtValue(code) == 5;
  }
  return false;
}

/* v decides only whether memory is in bounds: its users are branches
 * to the out-of-bounds trap, branches of the bounds pass's loop versions
 * (!twasm.bnd.test, bnd_loop.c), and ands and ors of such conditions. */
static bool bounds_test(LLVMValueRef v, int depth) {
  LLVMUseRef u = LLVMGetFirstUse(v);
  if (!u || depth > 4) return false;
  for (; u; u = LLVMGetNextUse(u)) {
    LLVMValueRef w = LLVMGetUser(u);
    if (LLVMIsABranchInst(w)) {
      if (!LLVMIsConditional(w) || !(to_oob_trap(w) || LLVMGetMetadata(w, LLVMGetMDKindIDInContext(LLVMGetTypeContext(LLVMTypeOf(w)), "twasm.bnd.test", 14))))
        return false;
    } else if (LLVMIsAInstruction(w) && (LLVMGetInstructionOpcode(w) == LLVMAnd || LLVMGetInstructionOpcode(w) == LLVMOr) &&
               LLVMTypeOf(w) == LLVMTypeOf(v)) {
      if (!bounds_test(w, depth + 1)) return false;
    } else
      return false;
  }
  return true;
}

static bool bounds_check(LLVMValueRef i) { return LLVMIsAICmpInst(i) && bounds_test(i, 0); }

/* Operand k of the bounds check i, the size or the size plus a constant
 * computed in another block, computed again just before i.  Whether it
 * was. */
static bool remat(pre_ctx *c, LLVMBuilderRef b, LLVMValueRef i, unsigned k) {
  LLVMValueRef op = LLVMGetOperand(i, k), v = op, off = NULL, like = NULL;
  if (LLVMIsAInstruction(op) && LLVMGetInstructionOpcode(op) == LLVMAdd &&
      LLVMIsAConstantInt(LLVMGetOperand(op, 1)))
    v = LLVMGetOperand(op, 0), off = LLVMGetOperand(op, 1);
  /* a phi: a loop that calls (the size loaded again in it) or a join
   * after a call; a load made in another block is one that GVN or LICM
   * carried, or hoisted out of a loop that calls nothing, where loading
   * it again would cost a load per check (Lua loops +0.8 %) */
  if (!LLVMIsAPHINode(v) || LLVMGetInstructionParent(v) == LLVMGetInstructionParent(i)) return false;
  c->nseen = 0;
  if (!size_value(c, v, &like, 0) || !like) return false;
  LLVMValueRef r = reload(c, b, i, like);
  if (off) r = LLVMBuildAdd(b, r, off, "limit_here");
  LLVMSetOperand(i, k, r);
  return true;
}

unsigned ir_load_sizes_at_checks(LLVMModuleRef mod) {
  unsigned n = 0;
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  unsigned swiftself = LLVMGetEnumAttributeKindForName("swiftself", 9);
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    if (LLVMIsDeclaration(fn) || LLVMCountParams(fn) == 0 || !LLVMGetEnumAttributeAtIndex(fn, 1, swiftself))
      continue;
    pre_ctx c = {.fn = fn, .vmctx = LLVMGetParam(fn, 0), .i64 = LLVMInt64TypeInContext(ctx)};
    /* the memory object as the entry block loads it (the same wherever
     * loaded: !invariant.load) */
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fn);
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); !c.obj && bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); !c.obj && i; i = LLVMGetNextInstruction(i)) {
        LLVMValueRef obj;
        if (size_load(&c, i, &obj) && LLVMGetInstructionParent(obj) == entry) c.obj = obj;
      }
    if (!c.obj) continue;
    unsigned here = 0;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
        if (bounds_check(i))
          for (unsigned k = 0; k < 2; k++) here += remat(&c, b, i, k);
    if (!here) continue;
    n += here;
    /* what no longer has a use: the limits, phis and loads left behind */
    for (bool again = true; again;) {
      again = false;
      for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
        for (LLVMValueRef i = LLVMGetFirstInstruction(bb), next; i; i = next) {
          next = LLVMGetNextInstruction(i);
          if (LLVMGetFirstUse(i) || LLVMTypeOf(i) != c.i64) continue;
          LLVMValueRef like;
          c.nseen = 0;
          bool dead = size_value(&c, i, &like, 0) ||
                      (LLVMIsAInstruction(i) && LLVMGetInstructionOpcode(i) == LLVMAdd && LLVMIsAConstantInt(LLVMGetOperand(i, 1)) &&
                       (c.nseen = 0, size_value(&c, LLVMGetOperand(i, 0), &like, 0)));
          if (dead) LLVMInstructionEraseFromParent(i), again = true;
        }
    }
  }
  LLVMDisposeBuilder(b);
  return n;
}
