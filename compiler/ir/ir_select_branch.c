/* ir_select_branch.c: a select that decides where a loop's next
 * pointer-chasing load reads, turned back into a branch.
 *
 * Why: binaryen and clang's wasm backend turn small if/else into `select`,
 * which x86 code generation makes a `cmov`.  In a binary search over
 * records reached through pointers (kvstore's B-tree: `rec = node->rec[mid]`,
 * then `rec->klen` and the key bytes) each iteration's comparison waits
 * for a load that misses the cache, and the next `mid`, through the cmov,
 * waits for the comparison: the misses run one after another.  With a
 * branch the CPU guesses the comparison and issues the next iteration's
 * loads at once, half the time right, as native code built from the same
 * C (which keeps the branch) does.  kvstore ran 1.45 s against native's
 * 1.25 s with the cmovs and 1.00 s without any (llc's
 * -x86-cmov-converter-force-all, which turns every cmov into a branch).
 *
 * Which: an integer or pointer select whose value a phi takes (a value
 * carried to the next iteration) and whose condition depends on a load
 * whose address depends on another load (an indirection) whose address
 * depends on that phi.  A select over values loaded from an array indexed
 * by the loop counter (a max, a plain binary search over an array) does
 * not qualify: its loads do not wait on each other, and a cmov is cheaper
 * than a mispredicted branch there.
 *
 * Last but one before code generation (no IR pass after it folds the
 * branch back into a select), on each part. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "ir_pass.h"

#define WALK_LIMIT 512   /* values visited per select */
#define WALK_SLOTS 1024  /* the visited set's slots: twice the limit */
#define MAX_SELECTS 4096 /* per function */

typedef struct {
  LLVMValueRef v;
  int loads;
} walk_item;

/* Values visited with how many loads (0, 1, 2 or more) behind them: open
 * addressing on the pointer. */
typedef struct {
  walk_item slot[WALK_SLOTS];
} walk_set;

/* Adds it; false when it was there already with as many loads or more. */
static bool walk_add(walk_set *s, walk_item it) {
  size_t h = ((uintptr_t)it.v >> 4) * 2654435761u % WALK_SLOTS;
  while (s->slot[h].v && s->slot[h].v != it.v) h = (h + 1) % WALK_SLOTS;
  if (s->slot[h].v && s->slot[h].loads >= it.loads) return false;
  s->slot[h] = it;
  return true;
}

/* Is phi one of the phis that take sel's value? */
static bool takes(LLVMValueRef phi, LLVMValueRef sel) {
  unsigned n = LLVMCountIncoming(phi);
  for (unsigned k = 0; k < n; k++)
    if (LLVMGetIncomingValue(phi, k) == sel) return true;
  return false;
}

/* Does sel's condition reach, through operands, a phi taking sel with at
 * least two loads on the way (an indirection)?  Gives up (no) past
 * WALK_LIMIT values. */
static bool chases(LLVMValueRef sel) {
  static _Thread_local walk_set seen;
  static _Thread_local walk_item stack[WALK_LIMIT * 4];
  memset(&seen, 0, sizeof seen);
  int nstack = 0, visited = 0;
  LLVMValueRef cond = LLVMGetOperand(sel, 0);
  stack[nstack++] = (walk_item){cond, 0};
  while (nstack > 0) {
    walk_item it = stack[--nstack];
    if (!LLVMIsAInstruction(it.v) || !walk_add(&seen, it)) continue;
    /* Not around the loop again (its loads would count twice): not
     * through the condition or a select on it. */
    if (visited > 0) {
      if (it.v == cond) continue;
      if (LLVMGetInstructionOpcode(it.v) == LLVMSelect && LLVMGetOperand(it.v, 0) == cond) continue;
    }
    if (++visited > WALK_LIMIT) return false;
    if (LLVMIsAPHINode(it.v) && it.loads >= 2 && takes(it.v, sel)) return true;
    int loads = it.loads + (LLVMIsALoadInst(it.v) ? 1 : 0);
    if (loads > 2) loads = 2;
    bool phi = LLVMIsAPHINode(it.v) != NULL;
    int n = phi ? (int)LLVMCountIncoming(it.v) : LLVMGetNumOperands(it.v);
    for (int k = 0; k < n; k++) {
      if (nstack == WALK_LIMIT * 4) return false;
      LLVMValueRef op = phi ? LLVMGetIncomingValue(it.v, (unsigned)k) : LLVMGetOperand(it.v, (unsigned)k);
      stack[nstack++] = (walk_item){op, loads};
    }
  }
  return false;
}

static bool qualifies(LLVMValueRef sel) {
  LLVMTypeRef t = LLVMTypeOf(sel);
  LLVMTypeKind kind = LLVMGetTypeKind(t);
  if (kind != LLVMIntegerTypeKind && kind != LLVMPointerTypeKind) return false;
  if (LLVMGetTypeKind(LLVMTypeOf(LLVMGetOperand(sel, 0))) != LLVMIntegerTypeKind) return false;
  bool carried = false;
  for (LLVMUseRef u = LLVMGetFirstUse(sel); u && !carried; u = LLVMGetNextUse(u))
    carried = LLVMIsAPHINode(LLVMGetUser(u)) != NULL;
  return carried && chases(sel);
}

/* The phis of succ that name `from` as a predecessor name `to` instead
 * (rebuilt: the C API cannot set an incoming block). */
static void retarget_phis(LLVMBuilderRef b, LLVMBasicBlockRef succ, LLVMBasicBlockRef from,
                          LLVMBasicBlockRef to) {
  LLVMValueRef phi = LLVMGetFirstInstruction(succ);
  while (phi && LLVMIsAPHINode(phi)) {
    LLVMValueRef next = LLVMGetNextInstruction(phi);
    unsigned n = LLVMCountIncoming(phi);
    bool names = false;
    for (unsigned k = 0; k < n; k++) names |= LLVMGetIncomingBlock(phi, k) == from;
    if (names) {
      LLVMPositionBuilderBefore(b, phi);
      LLVMValueRef fresh = LLVMBuildPhi(b, LLVMTypeOf(phi), "");
      for (unsigned k = 0; k < n; k++) {
        LLVMValueRef v = LLVMGetIncomingValue(phi, k);
        LLVMBasicBlockRef bb = LLVMGetIncomingBlock(phi, k);
        if (bb == from) bb = to;
        LLVMAddIncoming(fresh, &v, &bb, 1);
      }
      LLVMReplaceAllUsesWith(phi, fresh);
      LLVMInstructionEraseFromParent(phi);
    }
    phi = next;
  }
}

/* bb: ... sel ... -> bb: ... br c, then, else; then/else: br join;
 * join: phi [a, then], [b, else] ... */
static void branch(LLVMContextRef ctx, LLVMBuilderRef b, LLVMValueRef sel) {
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(sel);
  LLVMBasicBlockRef after = LLVMGetNextBasicBlock(bb);
  LLVMValueRef fn = LLVMGetBasicBlockParent(bb);
  LLVMBasicBlockRef join = after ? LLVMInsertBasicBlockInContext(ctx, after, "sel.join")
                                 : LLVMAppendBasicBlockInContext(ctx, fn, "sel.join");
  LLVMBasicBlockRef yes = LLVMInsertBasicBlockInContext(ctx, join, "sel.then");
  LLVMBasicBlockRef no = LLVMInsertBasicBlockInContext(ctx, join, "sel.else");
  LLVMPositionBuilderAtEnd(b, join);
  LLVMValueRef phi = LLVMBuildPhi(b, LLVMTypeOf(sel), "");
  for (LLVMValueRef i = LLVMGetNextInstruction(sel); i;) {
    LLVMValueRef next = LLVMGetNextInstruction(i);
    LLVMInstructionRemoveFromParent(i);
    LLVMPositionBuilderAtEnd(b, join);
    LLVMInsertIntoBuilder(b, i);
    i = next;
  }
  LLVMValueRef term = LLVMGetBasicBlockTerminator(join);
  unsigned nsucc = LLVMGetNumSuccessors(term);
  for (unsigned k = 0; k < nsucc; k++) {
    LLVMBasicBlockRef s = LLVMGetSuccessor(term, k);
    bool done = false;
    for (unsigned j = 0; j < k; j++) done |= LLVMGetSuccessor(term, j) == s;
    if (!done) retarget_phis(b, s, bb, join);
  }
  LLVMValueRef a = LLVMGetOperand(sel, 1), c = LLVMGetOperand(sel, 2);
  LLVMAddIncoming(phi, &a, &yes, 1);
  LLVMAddIncoming(phi, &c, &no, 1);
  LLVMPositionBuilderAtEnd(b, yes);
  LLVMBuildBr(b, join);
  LLVMPositionBuilderAtEnd(b, no);
  LLVMBuildBr(b, join);
  LLVMPositionBuilderAtEnd(b, bb);
  LLVMBuildCondBr(b, LLVMGetOperand(sel, 0), yes, no);
  LLVMReplaceAllUsesWith(sel, phi);
  LLVMInstructionEraseFromParent(sel);
}

unsigned ir_branch_chasing_selects(LLVMModuleRef mod) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  LLVMValueRef *found = malloc(MAX_SELECTS * sizeof *found);
  unsigned total = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn && found; fn = LLVMGetNextFunction(fn)) {
    unsigned n = 0;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i && n < MAX_SELECTS; i = LLVMGetNextInstruction(i))
        if (LLVMGetInstructionOpcode(i) == LLVMSelect && qualifies(i)) found[n++] = i;
    for (unsigned k = 0; k < n; k++) branch(ctx, b, found[k]);
    total += n;
  }
  free(found);
  LLVMDisposeBuilder(b);
  return total;
}
