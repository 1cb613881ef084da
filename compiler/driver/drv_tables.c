/* drv_tables.c: jump tables that start at zero.  A switch whose smallest
 * case is a small k > 0 gets a jump table from k, so LLVM's dispatch
 * subtracts k from the value before its range test and jump:
 * `add $-k; cmp; ja; jmp *table(,%r,8)`.  clang's wasm32 build of a
 * bytecode loop's label table has one of these per opcode (Lua 5.4's
 * computed goto: its label numbers start at 1, the br_table's index is the
 * number minus 2, InstCombine folds the subtraction into the cases).
 * Rewritten, last before code generation, as a range test of the value
 * (the old default on failure) and, in a block of its own, a switch on
 * its zero extension to i64 whose default is unreachable, every value
 * from 0 a case (those below k and the gaps to the old default): the
 * table starts at 0, the extension is the defining instruction's own (a
 * load or arithmetic into a 32-bit register, in the same block), and the
 * dispatch is `cmp; ja; jmp *table(,%r,8)`.  The old block frequencies
 * are kept: new weights that moved them made LLVM allocate Lua's
 * interpreter loop anew and lose more than the `add` (docs/PERFORMANCE.md,
 * round 11).  Only where LLVM builds a jump table anyway (at least
 * MIN_CASES cases, dense): a switch lowered to compares would pay the
 * range test on top.  Late because InstCombine would shrink the switch
 * back to i32 (the jump table's header block then zero-extends it again,
 * a `mov` in place of the `add`) and SimplifyCFG would drop the cases
 * that go where the default did. */
#include <stdlib.h>

#include "drv_internal.h"

#define MAX_SHIFT 16u   /* the most entries a table is extended by */
#define MIN_CASES 4u    /* x86's least jump table (LLVM's min-jump-table-entries) */
#define MIN_DENSITY 40u /* per cent of the extended range covered by cases */
#define MAX_CASES 1024u /* the rewrite is quadratic in the cases (the spec's br_table.wast has tens of thousands) */

/* The switch's smallest and largest case values (unsigned), whether every
 * case fits in 32 bits. */
static bool case_range(LLVMValueRef sw, unsigned ncases, uint64_t *lo, uint64_t *hi) {
  *lo = UINT64_MAX, *hi = 0;
  for (unsigned i = 1; i <= ncases; i++) {
    LLVMValueRef c = LLVMGetOperand(sw, 2 * i);
    if (!LLVMIsAConstantInt(c)) return false;
    uint64_t v = LLVMConstIntGetZExtValue(c);
    if (v > UINT32_MAX) return false;
    if (v < *lo) *lo = v;
    if (v > *hi) *hi = v;
  }
  return true;
}

/* Whether sw is one to rewrite: an integer of at most 32 bits, a default
 * that is reachable code, a dense table from a small k > 0. */
static bool wanted(LLVMValueRef sw) {
  LLVMValueRef v = LLVMGetOperand(sw, 0);
  LLVMTypeRef t = LLVMTypeOf(v);
  if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(t) > 32) return false;
  /* computed in the switch's block (a load, arithmetic), so that code
   * generation knows its upper bits zero and the extension costs nothing;
   * a value from elsewhere (a parameter, a phi) or a truncation would need
   * a `mov` for it, the instruction the rewrite saves */
  if (!LLVMIsAInstruction(v) || LLVMGetInstructionParent(v) != LLVMGetInstructionParent(sw) ||
      LLVMIsAPHINode(v) || LLVMIsATruncInst(v))
    return false;
  LLVMBasicBlockRef dflt = LLVMGetSwitchDefaultDest(sw);
  LLVMValueRef first = LLVMGetFirstInstruction(dflt);
  if (!first || LLVMIsAUnreachableInst(first)) return false;
  unsigned ncases = LLVMGetNumSuccessors(sw) - 1;
  uint64_t lo, hi;
  if (ncases < MIN_CASES || ncases > MAX_CASES || !case_range(sw, ncases, &lo, &hi)) return false;
  return lo > 0 && lo <= MAX_SHIFT && (uint64_t)ncases * 100 >= (hi + 1) * MIN_DENSITY;
}

/* Each phi of bb: its entries from `from` (all the same value) replaced
 * by n_old entries from `old_pred` and n_new from `new_pred`. */
static void repoint_phis(LLVMBuilderRef b, LLVMBasicBlockRef bb, LLVMBasicBlockRef from,
                         unsigned n_old, LLVMBasicBlockRef new_pred, unsigned n_new) {
  LLVMValueRef phi = LLVMGetFirstInstruction(bb);
  while (phi && LLVMIsAPHINode(phi)) {
    LLVMValueRef next = LLVMGetNextInstruction(phi);
    unsigned n = LLVMCountIncoming(phi);
    LLVMValueRef *vals = malloc((n + n_new + 1) * sizeof *vals);
    LLVMBasicBlockRef *blocks = malloc((n + n_new + 1) * sizeof *blocks);
    unsigned m = 0;
    LLVMValueRef v = NULL;
    for (unsigned i = 0; i < n; i++) {
      LLVMBasicBlockRef p = LLVMGetIncomingBlock(phi, i);
      if (p == from) {
        v = LLVMGetIncomingValue(phi, i);
        continue;
      }
      vals[m] = LLVMGetIncomingValue(phi, i), blocks[m++] = p;
    }
    for (unsigned i = 0; i < n_old; i++) vals[m] = v, blocks[m++] = from;
    for (unsigned i = 0; i < n_new; i++) vals[m] = v, blocks[m++] = new_pred;
    LLVMPositionBuilderBefore(b, phi);
    LLVMValueRef fresh = LLVMBuildPhi(b, LLVMTypeOf(phi), "");
    LLVMAddIncoming(fresh, vals, blocks, m);
    LLVMReplaceAllUsesWith(phi, fresh);
    LLVMInstructionEraseFromParent(phi);
    free(vals);
    free(blocks);
    phi = next;
  }
}

static void weights(LLVMContextRef c, LLVMValueRef term, const unsigned *w, unsigned n) {
  LLVMMetadataRef ops[3];
  LLVMMetadataRef *all = n + 1 <= 3 ? ops : malloc((n + 1) * sizeof *all);
  all[0] = LLVMMDStringInContext2(c, "branch_weights", 14);
  for (unsigned i = 0; i < n; i++)
    all[i + 1] = LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(c), w[i], false));
  LLVMSetMetadata(term, LLVMGetMDKindIDInContext(c, "prof", 4),
                  LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, all, n + 1)));
  if (all != ops) free(all);
}

/* The weights of sw's successors from its !prof into w (1 each without
 * one); the caller frees the array. */
static unsigned *old_weights(LLVMValueRef sw) {
  unsigned n = LLVMGetNumSuccessors(sw), *w = malloc(n * sizeof *w);
  for (unsigned i = 0; i < n; i++) w[i] = 1;
  LLVMContextRef c = LLVMGetTypeContext(LLVMTypeOf(sw));
  LLVMValueRef md = LLVMGetMetadata(sw, LLVMGetMDKindIDInContext(c, "prof", 4));
  if (!md || LLVMGetMDNodeNumOperands(md) != n + 1) return w;
  LLVMValueRef *ops = malloc((n + 1) * sizeof *ops);
  LLVMGetMDNodeOperands(md, ops);
  for (unsigned i = 0; i < n; i++)
    if (ops[i + 1] && LLVMIsAConstantInt(ops[i + 1])) w[i] = (unsigned)LLVMConstIntGetZExtValue(ops[i + 1]);
  free(ops);
  return w;
}

/* Counts the edges of term to bb. */
static unsigned edges_to(LLVMValueRef term, LLVMBasicBlockRef bb) {
  unsigned n = 0;
  for (unsigned i = 0; i < LLVMGetNumSuccessors(term); i++) n += LLVMGetSuccessor(term, i) == bb;
  return n;
}

static void rewrite(LLVMContextRef c, LLVMBuilderRef b, LLVMValueRef fn, LLVMValueRef sw) {
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(sw), dflt = LLVMGetSwitchDefaultDest(sw);
  unsigned ncases = LLVMGetNumSuccessors(sw) - 1;
  uint64_t lo, hi;
  case_range(sw, ncases, &lo, &hi);
  LLVMValueRef v = LLVMGetOperand(sw, 0); /* LLVMGetCondition is a branch's only */
  LLVMTypeRef i64 = LLVMInt64TypeInContext(c);
  LLVMBasicBlockRef table = LLVMAppendBasicBlockInContext(c, fn, "table");
  LLVMBasicBlockRef none = LLVMAppendBasicBlockInContext(c, fn, "table.none");
  LLVMMoveBasicBlockAfter(table, bb);
  LLVMPositionBuilderAtEnd(b, none);
  LLVMBuildUnreachable(b);
  /* the new switch, in its own block: cases 0..k-1 to the old default */
  LLVMPositionBuilderBefore(b, sw);
  LLVMValueRef wide = LLVMBuildZExt(b, v, i64, "table.index");
  /* in i64: hi + 1 may not fit v's type (an i8 with a case 255) */
  LLVMValueRef in = LLVMBuildICmp(b, LLVMIntULT, wide, LLVMConstInt(i64, hi + 1, false), "");
  LLVMPositionBuilderAtEnd(b, table);
  /* every value to hi a case: those the old switch sent to its default
   * (below k, and the gaps SimplifyCFG made of cases to the default)
   * explicitly there */
  unsigned width = (unsigned)hi + 1;
  LLVMBasicBlockRef *dest = malloc(width * sizeof *dest);
  /* weights: [0] the new switch's unreachable default, [1 + i] value i
   * (the old case's weight, 0 where it went to the default) */
  unsigned *w = calloc(width + 1, sizeof *w), *old_w = old_weights(sw);
  uint64_t in_range = 0;
  for (unsigned i = 0; i < width; i++) dest[i] = dflt;
  for (unsigned i = 1; i <= ncases; i++) {
    uint64_t at = LLVMConstIntGetZExtValue(LLVMGetOperand(sw, 2 * i));
    dest[at] = LLVMGetSuccessor(sw, i);
    w[1 + at] = old_w[i];
    in_range += old_w[i];
  }
  LLVMValueRef nsw = LLVMBuildSwitch(b, wide, none, width);
  for (unsigned i = 0; i < width; i++) LLVMAddCase(nsw, LLVMConstInt(i64, i, false), dest[i]);
  free(dest);
  /* the phis of every successor: bb's entries now come from the table,
   * and the default's once more from bb (the range test) */
  for (unsigned i = 0; i < LLVMGetNumSuccessors(nsw); i++) {
    LLVMBasicBlockRef s = LLVMGetSuccessor(nsw, i);
    bool seen = false;
    for (unsigned j = 0; j < i && !seen; j++) seen = LLVMGetSuccessor(nsw, j) == s;
    if (seen || s == none) continue;
    repoint_phis(b, s, bb, s == dflt ? 1 : 0, table, edges_to(nsw, s));
  }
  /* the old switch's block frequencies kept: the default's weight on the
   * range test's failure, the cases' on its success and in the table */
  weights(c, nsw, w, width + 1);
  free(w);
  LLVMPositionBuilderBefore(b, sw);
  LLVMValueRef br = LLVMBuildCondBr(b, in, table, dflt);
  unsigned bw[2] = {in_range > UINT32_MAX ? UINT32_MAX : in_range ? (unsigned)in_range : 1, old_w[0]};
  weights(c, br, bw, 2);
  free(old_w);
  LLVMInstructionEraseFromParent(sw);
}

unsigned drv_zero_based_tables(LLVMModuleRef mod) {
  LLVMContextRef c = LLVMGetModuleContext(mod);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
  unsigned n = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
      LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
      if (!term || !LLVMIsASwitchInst(term) || !wanted(term)) continue;
      rewrite(c, b, fn, term);
      n++;
    }
  }
  LLVMDisposeBuilder(b);
  return n;
}
