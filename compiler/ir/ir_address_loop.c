/* ir_address_loop.c: after the bounds pass, the increment of an i32
 * pointer that a loop advances through linear memory gets nuw, so that
 * LLVM widens the pointer to 64 bits and folds it into the access
 * (`movzbl (%rsi,%rax)`) instead of zero-extending a 32-bit copy of it in
 * every iteration.
 *
 * Why: clang's wasm32 pointers are i32; a loop `while (*p == *q) p++, q++`
 * (wasi-libc's memcmp, which wasm-opt inlines into its callers) advances
 * i32s whose increments Wasm lets wrap, so LLVM keeps them 32 bits wide
 * and zero-extends each before its access: compress's comparison of its
 * output ran 10 instructions a byte, 6 with this.
 *
 * Why it is exact (memory is at most 2^32 - slack bytes and never shrinks,
 * as in ir_address.c): let p = phi [start, outside], [next = p + s,
 * latch], 0 < s <= slack, and let an access at zext(p) + off, w bytes
 * wide, run in every iteration before next is computed (its block
 * dominates next's; in one block, it comes first).  When it has run,
 * p + off + w <= size, so p + s < 2^32: next never wraps.  A faulting
 * access traps before next is computed, in both bounds modes; in the
 * bounds pass's check-free copy of a loop, its version test stands for
 * the checks (every access that runs there is inside memory).  After the
 * bounds pass, not before: its loop versioning would see the flags and
 * version short loops whose tests cost more than they save (recurse
 * +4.1 % in instructions).
 *
 * Measured and left out: the same for an index counted from 0, zext(x + i)
 * rewritten zext(x) + zext(i) (x invariant; exact by induction over the
 * iterations): dispatch +1.3 %, interp +0.4 % in instructions, register
 * pressure in the loops around (compress's inner match loop, the one it
 * was for, is already versioned by the bounds pass). */
#include "ir.h"
#include "ir_address.h"
#include "ir_pass.h"

typedef struct {
  LLVMValueRef fn;
  LLVMTypeRef i8;
  unsigned invariant_kind;
  uint64_t slack;
  ir_cfg cfg;
  ir_dom dom;
  ir_loops lp;
  unsigned changed;
} lp_pass;

/* In every iteration, the access runs before next: see the top of the file. */
static bool runs_before(const lp_pass *p, LLVMValueRef access, LLVMValueRef next) {
  LLVMBasicBlockRef ab = LLVMGetInstructionParent(access), nb = LLVMGetInstructionParent(next);
  if (ab == nb) {
    for (LLVMValueRef i = LLVMGetNextInstruction(access); i; i = LLVMGetNextInstruction(i))
      if (i == next) return true;
    return false;
  }
  int a = ir_cfg_index(&p->cfg, ab), n = ir_cfg_index(&p->cfg, nb);
  return a >= 0 && n >= 0 && ir_dominates(&p->dom, a, n);
}

/* An IV the proof covers: i32, next = p + s with 0 < s <= slack. */
static bool usable(const lp_pass *p, const ir_iv *iv) {
  return iv->bits == 32 && !iv->step_inv && iv->step > 0 && (uint64_t)iv->step <= p->slack &&
         LLVMIsABinaryOperator(iv->next) && LLVMGetInstructionOpcode(iv->next) == LLVMAdd;
}

/* next gets nuw when an access at zext(p) [+ off] runs before it in
 * every iteration. */
static void fold_iv(lp_pass *p, const ir_loop *l, const ir_iv *iv) {
  if (LLVMGetNUW(iv->next)) return;
  for (int k = 0; k < l->nbody; k++) {
    LLVMBasicBlockRef bb = p->cfg.blocks[l->body[k]].bb;
    for (LLVMValueRef inst = LLVMGetFirstInstruction(bb); inst; inst = LLVMGetNextInstruction(inst)) {
      ir_mem_access a;
      if (ir_match_access(p->fn, inst, p->i8, p->invariant_kind, &a) && a.value == iv->phi &&
          runs_before(p, inst, iv->next)) {
        LLVMSetNUW(iv->next, true);
        p->changed++;
        return;
      }
    }
  }
}

static unsigned mark_function(LLVMValueRef fn, LLVMTypeRef i8, unsigned invariant_kind,
                              uint64_t slack) {
  tw_arena arena = {0};
  lp_pass p = {.fn = fn, .i8 = i8, .invariant_kind = invariant_kind, .slack = slack};
  if (!ir_cfg_build(&p.cfg, &arena, fn)) {
    tw_arena_free(&arena);
    return 0;
  }
  ir_dom_build(&p.dom, &p.cfg);
  ir_loops_build(&p.lp, &p.cfg, &p.dom);
  ir_indvar_build(&p.lp, &p.dom);
  /* sets flags only: the CFG and the loops stay valid */
  for (int k = 0; k < p.lp.nloops; k++) {
    const ir_loop *l = p.lp.loops[k];
    for (int v = 0; v < l->nivs; v++)
      if (usable(&p, &l->ivs[v])) fold_iv(&p, l, &l->ivs[v]);
  }
  tw_arena_free(&arena);
  return p.changed;
}

unsigned ir_mark_pointer_increments(LLVMModuleRef mod, uint64_t max_memory_bytes) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  LLVMTypeRef i8 = LLVMInt8TypeInContext(ctx);
  unsigned kind = LLVMGetMDKindIDInContext(ctx, "invariant.load", 14), n = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
    if (LLVMCountParams(fn) > 0 && LLVMGetFirstBasicBlock(fn))
      n += mark_function(fn, i8, kind, (1ull << 32) - max_memory_bytes);
  return n;
}
