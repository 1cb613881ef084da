/* ir_remat.c: late, on optimised IR, after sinkaddr: a guest address
 * `X + C` (an i32 `add` or `or` of a constant), its zero-extension to
 * i64, an i64 `zext X + C` (a checked access's `ea`) or a host address
 * `getelementptr i8` of the memory base by those (`candidate` below),
 * computed outside a loop for users inside it is computed again in each
 * such user's block, before the block's first user (for a phi, at the
 * end of the incoming block), when the user lies in a large loop
 * (BIG_LOOP_BLOCKS below) that does not hold the original.
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
 * `lea` where it paid a reload from the stack.  Lua's luaV_execute kept
 * `ci + 20` three ways (its `ea`, `mem_base + ea` and `invariant.gep +
 * zext ci`, the last two feeding a phi) and spilled each at every entry
 * (round 6).
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

static bool is_zext64(LLVMValueRef v) {
  return v && LLVMIsAZExtInst(v) && LLVMGetIntTypeWidth(LLVMTypeOf(v)) == 64;
}

/* p is the memory base or another pointer the function loads once
 * (`!invariant.load`, from the vmctx), live across every loop anyway. */
static bool invariant_ptr(LLVMValueRef p, unsigned inv_kind) {
  return p && LLVMIsALoadInst(p) && LLVMGetMetadata(p, inv_kind);
}

static bool candidate(LLVMValueRef v, unsigned inv_kind);

/* v is `getelementptr i8, P, I`, a host address in linear memory, with P
 * an invariant pointer or such a getelementptr, and I a constant or a
 * candidate (`mem_base + ea` of an explicitly checked access; LICM's
 * `invariant.gep`, mem_base + C) or, when P is such a getelementptr, any
 * zero-extension (LICM's `invariant.gep + zext X`).  Not `mem_base +
 * zext X`: computed again it only trades one live value for another and
 * adds an add per use (Lua fib +1.8 % instructions with it, -6.1 %
 * without; PERFORMANCE.md, "Real programs, round 6"). */
static bool host_addr(LLVMValueRef v, unsigned inv_kind) {
  if (!v || !LLVMIsAGetElementPtrInst(v) || LLVMGetNumOperands(v) != 2) return false;
  LLVMTypeRef t = LLVMGetGEPSourceElementType(v);
  if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(t) != 8) return false;
  LLVMValueRef p = LLVMGetOperand(v, 0), i = LLVMGetOperand(v, 1);
  if (!invariant_ptr(p, inv_kind) && !host_addr(p, inv_kind)) return false;
  return LLVMIsAConstantInt(i) || candidate(i, inv_kind) || (is_zext64(i) && !invariant_ptr(p, inv_kind));
}

/* v is an offset_of_const, its `zext ... to i64`, an i64 `add Z, C` of a
 * zero-extension Z (a guest address the bounds pass computes, `ea`), or a
 * host_addr. */
static bool candidate(LLVMValueRef v, unsigned inv_kind) {
  if (!v || !LLVMIsAInstruction(v)) return false;
  if (offset_of_const(v)) return true;
  if (is_zext64(v)) return offset_of_const(LLVMGetOperand(v, 0));
  if (LLVMGetInstructionOpcode(v) == LLVMAdd && LLVMGetIntTypeWidth(LLVMTypeOf(v)) == 64)
    return LLVMIsAConstantInt(LLVMGetOperand(v, 1)) && is_zext64(LLVMGetOperand(v, 0));
  return host_addr(v, inv_kind);
}

/* v computed again right before at, with the candidates among its
 * operands (a zext's add, a getelementptr's base and index) computed
 * again first. */
static LLVMValueRef copy_before(LLVMBuilderRef b, LLVMValueRef v, LLVMValueRef at, unsigned inv_kind) {
  LLVMValueRef c = LLVMInstructionClone(v);
  int n = LLVMGetNumOperands(v);
  for (int k = 0; k < n; k++) {
    LLVMValueRef op = LLVMGetOperand(v, (unsigned)k);
    if (candidate(op, inv_kind))
      LLVMSetOperand(c, (unsigned)k, copy_before(b, op, at, inv_kind));
  }
  LLVMPositionBuilderBefore(b, at);
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

/* The block that computes v's copy for its uses in block bb (not home):
 * bb itself when bb lies in a big loop (outside every loop nested in it)
 * that does not hold home; when bb lies in smaller loops nested in such
 * a big loop, the preheader of the outermost of them, when it has one
 * that lies in the big loop itself (Lua's `cl + 16`, `encup` of
 * OP_CLOSURE's copy of upvalues: its user is in a small loop inside
 * luaV_execute's, and LICM had hoisted it out of both: computed in the
 * small loop's preheader, it is paid once per OP_CLOSURE, not spilled
 * and reloaded; PERFORMANCE.md, "Real programs, round 7"); NULL
 * otherwise.  The preheader is dominated by home: every path to it goes
 * on to bb without leaving the big loop, and home is outside that. */
static LLVMBasicBlockRef copy_block(const ir_loops *lp, const ir_cfg *cfg, LLVMBasicBlockRef bb,
                                    LLVMBasicBlockRef home) {
  int ub = ir_cfg_index(cfg, bb);
  if (bb == home || ub < 0 || !lp->innermost[ub]) return NULL;
  const ir_loop *l = lp->innermost[ub];
  if (l->nbody >= BIG_LOOP_BLOCKS) return ir_loop_contains_block(l, home, cfg) ? NULL : bb;
  while (l->parent && l->parent->nbody < BIG_LOOP_BLOCKS) l = l->parent;
  const ir_loop *big = l->parent;
  if (!big || ir_loop_contains_block(big, home, cfg) || l->preheader < 0 || lp->innermost[l->preheader] != big)
    return NULL;
  return cfg->blocks[l->preheader].bb;
}

/* The copy of v in block bb (among copies[0..n) of blocks[]), NULL when
 * none. */
static LLVMValueRef copy_in(LLVMBasicBlockRef bb, LLVMBasicBlockRef *blocks, LLVMValueRef *copies, unsigned n) {
  for (unsigned k = 0; k < n; k++)
    if (blocks[k] == bb) return copies[k];
  return NULL;
}

/* Where v's copy in block bb goes: before bb's first user of v that is
 * not a phi, so that later ones reuse it (unless phis_only: those keep
 * v), else before bb's terminator. */
static LLVMValueRef copy_point(LLVMValueRef v, LLVMBasicBlockRef bb, bool phis_only) {
  for (LLVMValueRef j = LLVMGetFirstInstruction(bb); j && !phis_only; j = LLVMGetNextInstruction(j)) {
    if (LLVMIsAPHINode(j)) continue;
    for (int k = 0; k < LLVMGetNumOperands(j); k++)
      if (LLVMGetOperand(j, (unsigned)k) == v) return j;
  }
  return LLVMGetBasicBlockTerminator(bb);
}

/* v's copy for its uses in block bb: the one already made in bb's
 * copy_block, else a new one there; NULL when bb takes none. */
static LLVMValueRef copy_for(LLVMBuilderRef b, LLVMValueRef v, LLVMBasicBlockRef bb, const ir_loops *lp,
                             const ir_cfg *cfg, unsigned inv_kind, bool phis_only, LLVMBasicBlockRef *blocks,
                             LLVMValueRef *copies, unsigned *ndone) {
  LLVMBasicBlockRef at = copy_block(lp, cfg, bb, LLVMGetInstructionParent(v));
  if (!at) return NULL;
  LLVMValueRef copy = copy_in(at, blocks, copies, *ndone);
  if (!copy) {
    copy = copy_before(b, v, copy_point(v, at, phis_only), inv_kind);
    blocks[*ndone] = at;
    copies[(*ndone)++] = copy;
  }
  return copy;
}

/* v's users in big loops v's block is not in (or in small loops nested
 * in those) use copies: one per copy_block, computed before the block's
 * first user, or, for a phi's use or a preheader's, at the end of the
 * block; true when any did.  A host address only for its phis: copied at
 * its other users too, interp's bytecode loop ran +1.1 % instructions
 * (-1.1 % with phis only; Lua fib -6.1 % either way; PERFORMANCE.md,
 * "Real programs, round 6").  Each copy replaces at least one use of v,
 * so there are at most as many copies as uses. */
static bool remat_one(LLVMBuilderRef b, LLVMValueRef v, const ir_loops *lp, const ir_cfg *cfg, unsigned inv_kind) {
  unsigned n = 0;
  for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) n++;
  if (n == 0) return false;
  LLVMValueRef *users = malloc(n * sizeof *users);
  LLVMBasicBlockRef *blocks = malloc(n * sizeof *blocks);
  LLVMValueRef *copies = malloc(n * sizeof *copies);
  unsigned nusers = 0, ndone = 0;
  for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) users[nusers++] = LLVMGetUser(u);
  bool changed = false, phis_only = host_addr(v, inv_kind);
  for (unsigned i = 0; i < nusers && !phis_only; i++) {
    LLVMValueRef u = users[i];
    if (!LLVMIsAInstruction(u) || LLVMIsAPHINode(u)) continue;
    LLVMValueRef copy = copy_for(b, v, LLVMGetInstructionParent(u), lp, cfg, inv_kind, false, blocks, copies, &ndone);
    if (!copy) continue;
    for (int k = 0; k < LLVMGetNumOperands(u); k++)
      if (LLVMGetOperand(u, (unsigned)k) == v) LLVMSetOperand(u, (unsigned)k, copy);
    changed = true;
  }
  for (unsigned i = 0; i < nusers; i++) {
    LLVMValueRef u = users[i];
    if (!LLVMIsAPHINode(u)) continue;
    for (unsigned k = 0; k < LLVMCountIncoming(u); k++) {
      if (LLVMGetOperand(u, k) != v) continue;
      LLVMValueRef copy = copy_for(b, v, LLVMGetIncomingBlock(u, k), lp, cfg, inv_kind, phis_only, blocks, copies, &ndone);
      if (!copy) continue;
      LLVMSetOperand(u, k, copy);
      changed = true;
    }
  }
  free(users);
  free(blocks);
  free(copies);
  return changed;
}

/* Erases the candidates of list[0..n) left without users (a copied
 * value's original and the operands only it used), until none is. */
static void erase_dead(LLVMValueRef *list, unsigned n) {
  for (bool again = true; again;) {
    again = false;
    for (unsigned k = 0; k < n; k++)
      if (list[k] && !LLVMGetFirstUse(list[k])) {
        LLVMInstructionEraseFromParent(list[k]);
        list[k] = NULL;
        again = true;
      }
  }
}

static unsigned remat_function(LLVMBuilderRef b, LLVMValueRef fn, unsigned inv_kind) {
  tw_arena arena = {0};
  ir_cfg cfg;
  ir_dom dom;
  ir_loops lp;
  unsigned n = 0;
  if (ir_cfg_build(&cfg, &arena, fn)) {
    ir_dom_build(&dom, &cfg);
    ir_loops_build(&lp, &cfg, &dom);
    bool big = false;
    for (int k = 0; k < lp.nloops && !big; k++) big = lp.loops[k]->nbody >= BIG_LOOP_BLOCKS;
    if (big) {
      unsigned ncand = 0;
      for (int bi = 0; bi < cfg.nblocks; bi++)
        for (LLVMValueRef i = LLVMGetFirstInstruction(cfg.blocks[bi].bb); i; i = LLVMGetNextInstruction(i))
          ncand += candidate(i, inv_kind);
      LLVMValueRef *list = tw_arena_alloc(&arena, (ncand ? ncand : 1) * sizeof *list);
      unsigned m = 0;
      for (int bi = 0; bi < cfg.nblocks; bi++)
        for (LLVMValueRef i = LLVMGetFirstInstruction(cfg.blocks[bi].bb); i; i = LLVMGetNextInstruction(i))
          if (candidate(i, inv_kind)) list[m++] = i;
      /* users before their operands (a getelementptr before its index,
       * a zext before its add), so that an operand is seen with its
       * users' copies made and the originals' uses gone */
      for (unsigned k = m; k-- > 0;) n += remat_one(b, list[k], &lp, &cfg, inv_kind);
      erase_dead(list, m);
    }
  }
  tw_arena_free(&arena);
  return n;
}

unsigned ir_remat_offsets(LLVMModuleRef mod) {
  unsigned n = 0;
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(mod));
  unsigned inv_kind = LLVMGetMDKindIDInContext(LLVMGetModuleContext(mod), "invariant.load", 14);
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
    if (!LLVMIsDeclaration(fn)) n += remat_function(b, fn, inv_kind);
  LLVMDisposeBuilder(b);
  return n;
}
