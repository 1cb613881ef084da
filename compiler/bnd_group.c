/* bnd_group.c: guard mode, after the last IR pass (bnd_late.c): a group's
 * check left to the guard pages.
 *
 * Loads off one root with nothing stored between share one check of the
 * largest end (bnd_insert.c); when that check fails, a `bounds_which`
 * block on the way to the trap picks the offset of the first access that
 * fails, as selects `end_j > size ? offset_j : (...)` in access order
 * (LLVM may sink that block and merge it with another group's, through
 * phis of the index and the offsets).  Where the group's accesses are the
 * first effects of the check's continuation, in that order, each ending
 * exactly at its select's end (the last at the check's), each faults
 * exactly when the which block would pick it: left to the guard pages,
 * each with its own label, they trap at the access the check would have
 * named (a dlmalloc `free` reads a chunk's fd and bk, offsets 8 and 12,
 * under one check of 16 bytes).  Loads proved inside memory by another
 * access or a kept check (late_anchored) may lie between: they cannot
 * fault (SQLite's binary search reads the page's mask and data pointer
 * between the check of a cell pointer's two bytes and its loads). */
#include "bnd_late.h"

#include <string.h>

/* v as the trap path from the check's block sees it: a phi of a block on
 * the path (path[0] is the check's block) is its incoming value from the
 * block before; NULL where there is none. */
static LLVMValueRef on_path(LLVMValueRef v, LLVMBasicBlockRef *path, int n) {
  for (int hops = 0; v && LLVMIsAPHINode(v) && hops < 8; hops++) {
    LLVMBasicBlockRef at = LLVMGetInstructionParent(v);
    int k = 1;
    while (k < n && path[k] != at) k++;
    if (k == n) return v;
    v = late_on_edge(v, at, path[k - 1]);
  }
  return v;
}

/* v (on the path) as x + k, adds of constants peeled (i32 ones with nuw). */
static LLVMValueRef peel_on_path(LLVMValueRef v, LLVMBasicBlockRef *path, int n, int64_t *k) {
  *k = 0;
  for (int hops = 0; hops < 8; hops++) {
    int64_t more;
    v = on_path(v, path, n);
    LLVMValueRef x = v ? late_peel(v, &more) : NULL;
    if (x == v) return v;
    *k += more;
    v = x;
  }
  return NULL;
}

/* v (on the path) as base + k, k a constant or a phi of constants that the
 * path resolves (LLVM sinks the which blocks of several checks into one,
 * each `size - less` then an add of a phi of their constants). */
static LLVMValueRef plus_on_path(LLVMValueRef v, LLVMBasicBlockRef *path, int n, int64_t *k) {
  v = on_path(v, path, n);
  LLVMValueRef c = v && LLVMIsABinaryOperator(v) && LLVMGetInstructionOpcode(v) == LLVMAdd
                       ? on_path(LLVMGetOperand(v, 1), path, n) : NULL;
  if (c && LLVMIsAConstantInt(c)) {
    *k = LLVMConstIntGetSExtValue(c);
    return on_path(LLVMGetOperand(v, 0), path, n);
  }
  return peel_on_path(v, path, n, k);
}

/* The offsets and ends the trap path of check ch (index: what its end is
 * over) picks from, in access order. */
/* Functions of more blocks than this read only `end > size` in a which
 * block: Lua's luaV_execute (1,399 blocks) lost 3 % to its allocation once
 * InstCombine's forms let the rule take checks there (PERFORMANCE.md "Real
 * programs, round 9"). */
#define GROUP_FORMS_MAX_BLOCKS 1000

static bool group_of(const bnd_check *ch, LLVMValueRef index, late_group *g, bool big) {
  LLVMBasicBlockRef path[6];
  int n = 0;
  path[n++] = LLVMGetInstructionParent(ch->br);
  LLVMBasicBlockRef bb = LLVMGetSuccessor(ch->br, ch->trap_succ);
  LLVMValueRef call = NULL;
  while (n < 6) {
    path[n++] = bb;
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i && !call; i = LLVMGetNextInstruction(i))
      if (LLVMIsACallInst(i) && !strcmp(ir_callee_name(i), "twasm_rt_trap")) call = i;
    if (call) break;
    LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
    if (!term || !LLVMIsABranchInst(term) || LLVMIsConditional(term)) return false;
    bb = LLVMGetSuccessor(term, 0);
  }
  if (!call || LLVMGetNumArgOperands(call) != 4) return false;
  LLVMValueRef cmp = LLVMGetCondition(ch->br);
  LLVMValueRef size = LLVMGetOperand(cmp, LLVMGetOperand(cmp, 0) == ch->end ? 1 : 0);
  int64_t size_k;
  LLVMValueRef size_base = late_peel(size, &size_k);
  LLVMValueRef v = on_path(LLVMGetOperand(call, 3), path, n);
  g->n = 0;
  while (v && LLVMIsASelectInst(v) && g->n < LATE_MAX_GROUP - 1) {
    LLVMValueRef cond = on_path(LLVMGetOperand(v, 0), path, n);
    if (!cond || !LLVMIsAICmpInst(cond)) return false;
    LLVMIntPredicate p = LLVMGetICmpPredicate(cond);
    LLVMValueRef a = LLVMGetOperand(cond, 0), b = LLVMGetOperand(cond, 1);
    if (p == LLVMIntULT) {
      LLVMValueRef t = a;
      a = b, b = t, p = LLVMIntUGT;
    }
    if (p != LLVMIntUGT) return false;
    /* `end > size` picks the true arm; InstCombine writes `x + less >
     * size` as `x > size - less`, and `x + 1 > size` as `size > x` with
     * the arms swapped: `size - less > x + k` is `x + k + less + 1 <=
     * size`, the access ending there does not fault.  size - less does
     * not wrap where less is at most the check's own (bnd_insert.c forms
     * that only where it cannot). */
    int64_t k, less;
    bool fits;
    if (plus_on_path(b, path, n, &less) == size_base && peel_on_path(a, path, n, &k) == index) fits = false;
    else if (plus_on_path(a, path, n, &less) == size_base && peel_on_path(b, path, n, &k) == index) fits = true;
    else return false;
    less = -less;
    if (big && (fits || on_path(b, path, n) != size)) return false;
    LLVMValueRef off = on_path(LLVMGetOperand(v, fits ? 2 : 1), path, n);
    if (less < 0 || less > ch->plus || !off || !LLVMIsAConstantInt(off)) return false;
    g->end[g->n] = k + less + fits;
    g->offset[g->n++] = (uint32_t)LLVMConstIntGetZExtValue(off);
    v = on_path(LLVMGetOperand(v, fits ? 1 : 2), path, n);
  }
  if (!v || !LLVMIsAConstantInt(v) || g->n == 0) return false;
  g->end[g->n] = -1; /* the last: the check's end */
  g->offset[g->n++] = (uint32_t)LLVMConstIntGetZExtValue(v);
  return true;
}

/* The accesses of the group check br guards, in order (acc[]), when they
 * are the first effects of its continuation; 0 when not. */
int late_group_guarded(late_ctx *c, LLVMValueRef br, late_group *g, LLVMValueRef *acc) {
  bnd_check ch;
  if (!bnd_check_match(br, &ch) || ch.narrow || late_is_pinned(c, br)) return 0;
  LLVMBasicBlockRef cont = LLVMGetSuccessor(br, !ch.trap_succ);
  if (cont == LLVMGetSuccessor(br, ch.trap_succ) || !late_only_from(cont, br)) return 0;
  int64_t d;
  LLVMValueRef index = late_peel(ch.end, &d);
  if (!group_of(&ch, index, g, LLVMCountBasicBlocks(c->fn) > GROUP_FORMS_MAX_BLOCKS)) return 0;
  g->end[g->n - 1] = d + ch.plus;
  c->self = br;
  int found = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(cont); i && found < g->n; i = LLVMGetNextInstruction(i)) {
    LLVMValueRef at;
    int64_t end;
    if ((LLVMIsALoadInst(i) || LLVMIsAStoreInst(i)) && late_access_end(c, i, &at, &end) && !late_safe_load(c, i)) {
      bool last = found == g->n - 1;
      if ((at != index || end != g->end[found]) && LLVMIsALoadInst(i) && late_anchored(c, i)) continue;
      if (at != index || end != g->end[found] || late_copies_vector(i) || (!last && !LLVMIsALoadInst(i))) return 0;
      acc[found++] = i;
      continue;
    }
    if (LLVMIsAPHINode(i) || late_pure(c, i) || (LLVMIsALoadInst(i) && late_safe_load(c, i)) ||
        (LLVMIsAStoreInst(i) && late_frame_store(i)))
      continue;
    return 0;
  }
  return found == g->n ? found : 0;
}

/* A check br (a group's or one access's: bnd_late.c's drop_check) becomes
 * a branch to its continuation; the blocks of its trap path that nothing
 * else enters go, each leaving the phis of the next first (deleting the
 * trap block alone would leave a merged which block's successor with a phi
 * entry from a deleted block). */
void late_drop_group_check(late_ctx *c, LLVMValueRef br) {
  bnd_check ch;
  bnd_check_match(br, &ch);
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(br);
  LLVMBasicBlockRef trap = LLVMGetSuccessor(br, ch.trap_succ), cont = LLVMGetSuccessor(br, !ch.trap_succ);
  LLVMValueRef cond = LLVMGetCondition(br);
  LLVMPositionBuilderBefore(c->b, br);
  LLVMBuildBr(c->b, cont);
  LLVMInstructionEraseFromParent(br);
  late_erase_dead(c, cond);
  ir_retarget_phis(trap, bb, NULL);
  while (trap && !LLVMGetFirstUse(LLVMBasicBlockAsValue(trap))) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(trap);
    LLVMBasicBlockRef next =
        term && LLVMIsABranchInst(term) && !LLVMIsConditional(term) ? LLVMGetSuccessor(term, 0) : NULL;
    if (next) ir_retarget_phis(next, trap, NULL);
    LLVMDeleteBasicBlock(trap);
    trap = next;
  }
}
