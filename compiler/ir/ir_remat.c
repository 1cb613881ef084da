/* ir_remat.c: late, on optimised IR, after sinkaddr: a guest address
 * `X + C` (an i32 `add` or `or` of a constant), or its zero-extension
 * to i64, computed outside a loop for users inside it is computed again
 * in each such user's block, before the block's first user, when the
 * user lies in a large loop (BIG_LOOP_BLOCKS below) that does not hold
 * the original.
 *
 * Why: LLVM's LICM hoists every such offset out of the loops it is
 * invariant in, and code generation then keeps one value per offset live
 * across the loop, spilled to the stack when there are many.  An
 * interpreter's bytecode loop over a shadow-stack frame and a context
 * struct has dozens: mujs's `jsR_run` computed 25 frame-slot and field
 * addresses (`sp - 0x24`, `sp - 0x21`, ..., `J + 0xc4`, each also
 * zero-extended) at each entry and stored them to the stack, 96
 * instructions where native code runs 28 (PERFORMANCE.md, "Real
 * programs, round 5").  Computed at the user, only X stays live (one
 * value, which the loop's other code reads anyway), and each user pays a
 * `lea` where it paid a reload from the stack.
 *
 * Exact: the copy computes the same value from the same operands, which
 * dominate the user (they dominated the original); only where it is
 * computed changes.  The original goes when nothing else uses it. */
#include <stdlib.h>

#include "ir.h"
#include "ir_pass.h"

/* v is `add/or i32 X, C` with C a constant int. */
static bool offset_of_const(LLVMValueRef v) {
  if (!v || !LLVMIsAInstruction(v)) return false;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  if (op != LLVMAdd && op != LLVMOr) return false;
  LLVMTypeRef t = LLVMTypeOf(v);
  return LLVMGetTypeKind(t) == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == 32 &&
         LLVMIsAConstantInt(LLVMGetOperand(v, 1)) && !LLVMIsAConstant(LLVMGetOperand(v, 0));
}

/* v is an offset_of_const or its `zext ... to i64`. */
static bool candidate(LLVMValueRef v) {
  if (offset_of_const(v)) return true;
  return v && LLVMIsAInstruction(v) && LLVMGetInstructionOpcode(v) == LLVMZExt &&
         LLVMGetIntTypeWidth(LLVMTypeOf(v)) == 64 && offset_of_const(LLVMGetOperand(v, 0));
}

/* v computed again right before at (its add first when v is a zext). */
static LLVMValueRef copy_before(LLVMBuilderRef b, LLVMValueRef v, LLVMValueRef at) {
  LLVMPositionBuilderBefore(b, at);
  if (LLVMGetInstructionOpcode(v) == LLVMZExt) {
    LLVMValueRef add = LLVMInstructionClone(LLVMGetOperand(v, 0));
    LLVMInsertIntoBuilderWithName(b, add, "off.remat");
    LLVMValueRef z = LLVMInstructionClone(v);
    LLVMInsertIntoBuilderWithName(b, z, "off.remat");
    LLVMSetOperand(z, 0, add);
    return z;
  }
  LLVMValueRef c = LLVMInstructionClone(v);
  LLVMInsertIntoBuilderWithName(b, c, "off.remat");
  return c;
}

/* Only in a loop this large (in blocks): an interpreter's bytecode loop
 * (Lua's luaV_execute 1,399 blocks, mujs's jsR_run 1,427), where the
 * values live across it outnumber the registers and hoisted offsets are
 * spilled.  In a smaller loop a hoisted offset keeps its register, and
 * computing it again adds an instruction per use: kvstore's B-tree code
 * (loops of 79 and 132 blocks) ran +3.1 % instructions with every loop
 * taken, +0.8 % with loops of 64 blocks and up.  The size of the loop is
 * the only gate: a second one on the number of offsets hoisted out of
 * the loop (16 and up) left out Lua's luaV_execute, which gains most
 * with 6 (PERFORMANCE.md, "Real programs, round 5"). */
enum { BIG_LOOP_BLOCKS = 400 };

/* Whether user block ub lies in a big loop (outside every loop nested in
 * it) that does not hold home. */
static bool inside_loop_without(const ir_loops *lp, const ir_cfg *cfg, int ub, LLVMBasicBlockRef home) {
  const ir_loop *l = lp->innermost[ub];
  return l && l->nbody >= BIG_LOOP_BLOCKS && !ir_loop_contains_block(l, home, cfg);
}

/* v's users in loops v's block is not in use copies; true when any did. */
static bool remat_one(LLVMBuilderRef b, LLVMValueRef v, const ir_loops *lp, const ir_cfg *cfg) {
  LLVMBasicBlockRef home = LLVMGetInstructionParent(v);
  unsigned n = 0;
  for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) n++;
  if (n == 0) return false;
  LLVMValueRef *users = malloc(n * sizeof *users);
  LLVMBasicBlockRef *blocks = malloc(n * sizeof *blocks);
  LLVMValueRef *copies = malloc(n * sizeof *copies);
  unsigned nusers = 0, ndone = 0;
  for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) users[nusers++] = LLVMGetUser(u);
  bool changed = false;
  for (unsigned i = 0; i < nusers; i++) {
    LLVMValueRef u = users[i];
    if (!LLVMIsAInstruction(u) || LLVMIsAPHINode(u)) continue;
    LLVMBasicBlockRef bb = LLVMGetInstructionParent(u);
    int ub = ir_cfg_index(cfg, bb);
    if (bb == home || ub < 0 || !inside_loop_without(lp, cfg, ub, home)) continue;
    LLVMValueRef copy = NULL;
    for (unsigned k = 0; k < ndone && !copy; k++)
      if (blocks[k] == bb) copy = copies[k];
    if (!copy) {
      /* before the block's first user, so that later ones reuse it */
      LLVMValueRef first = u;
      for (LLVMValueRef j = LLVMGetFirstInstruction(bb); j; j = LLVMGetNextInstruction(j)) {
        bool uses = false;
        for (int k = 0; k < LLVMGetNumOperands(j) && !uses; k++) uses = LLVMGetOperand(j, (unsigned)k) == v;
        if (uses && !LLVMIsAPHINode(j)) {
          first = j;
          break;
        }
      }
      copy = copy_before(b, v, first);
      blocks[ndone] = bb;
      copies[ndone++] = copy;
    }
    for (int k = 0; k < LLVMGetNumOperands(u); k++)
      if (LLVMGetOperand(u, (unsigned)k) == v) LLVMSetOperand(u, (unsigned)k, copy);
    changed = true;
  }
  free(users);
  free(blocks);
  free(copies);
  return changed;
}

static unsigned remat_function(LLVMBuilderRef b, LLVMValueRef fn) {
  tw_arena arena = {0};
  ir_cfg cfg;
  ir_dom dom;
  ir_loops lp;
  unsigned n = 0;
  if (ir_cfg_build(&cfg, &arena, fn)) {
    ir_dom_build(&dom, &cfg);
    ir_loops_build(&lp, &cfg, &dom);
    if (lp.nloops > 0) {
      /* zero-extensions first, so that their adds are seen with the
       * zext's uses already moved */
      for (int pass = 0; pass < 2; pass++)
        for (int bi = 0; bi < cfg.nblocks; bi++)
          for (LLVMValueRef i = LLVMGetFirstInstruction(cfg.blocks[bi].bb); i;) {
            LLVMValueRef next = LLVMGetNextInstruction(i);
            bool zext = LLVMGetInstructionOpcode(i) == LLVMZExt;
            if (candidate(i) && zext == (pass == 0) && remat_one(b, i, &lp, &cfg)) {
              n++;
              if (!LLVMGetFirstUse(i)) {
                LLVMValueRef add = zext ? LLVMGetOperand(i, 0) : NULL;
                if (add == next) next = LLVMGetNextInstruction(next);
                LLVMInstructionEraseFromParent(i);
                if (add && !LLVMGetFirstUse(add)) {
                  if (add == next) next = LLVMGetNextInstruction(next);
                  LLVMInstructionEraseFromParent(add);
                }
              }
            }
            i = next;
          }
    }
  }
  tw_arena_free(&arena);
  return n;
}

unsigned ir_remat_offsets(LLVMModuleRef mod) {
  unsigned n = 0;
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(mod));
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
    if (!LLVMIsDeclaration(fn)) n += remat_function(b, fn);
  LLVMDisposeBuilder(b);
  return n;
}
