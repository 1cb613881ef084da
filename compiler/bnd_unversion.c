/* bnd_unversion.c: guard mode, in the late stage (bnd_late.c, once the
 * checks are left to the guard pages): a versioned loop (bnd_loop.c)
 * that LLVM unrolled whole, and whose checked copy kept no explicit
 * check, runs that copy only.
 *
 * bnd_loop.c versions before LLVM's pipeline, when every access of the
 * checked copy still carries its compare; the late stage then leaves the
 * checks whose access is the first effect after them to the guard pages.
 * (A check in any form counts: any branch to the out-of-bounds trap.
 * LLVM may merge an unrolled copy's checks into one before it, on a bound
 * computed from the size, which costs about what the test does: a Lua
 * loop over 0 to 3 bytes ran 19,494 instructions more without it.)
 * Where it left all of them the checked copy costs little more than the
 * unchecked one: its accesses are volatile behind labels and barriers,
 * which in a loop that runs long keep code generation from folding and
 * scheduling them (hashtab: 5 % more instructions when its loops' tests
 * went), but where LLVM unrolled the loop whole (no back edge left: a
 * few iterations, bounded at compile time, as SQLite's OP_MakeRecord
 * copy of an integer's last 0 to 3 bytes), the test before it (trip
 * counts and a range per group, at every entry) costs about as much as
 * the loop.  The test's branch then goes to the checked copy always
 * (`br false`; code generation folds it and drops the unchecked copy),
 * and its arithmetic goes.  Not where the unchecked copy became more
 * than the checked one: vector code, a larger body, or a nest the
 * offload stage may launch on the device (its gate).
 *
 * The two copies are told apart by dominance: each successor of the test
 * is entered from the test alone, and its copy is what it dominates (the
 * code after the nest is reached from both).  Whatever else LLVM made
 * reachable through one copy only counts against dropping: a check or a
 * loop there keeps the test, and a larger unchecked side too. */
#include "bnd_late.h"

#include <stdlib.h>
#include <string.h>

/* The unchecked copy may be this much larger than the checked one (in
 * instructions that reach machine code) before it counts as more. */
#define UNVERSION_GROWTH_NUM 5
#define UNVERSION_GROWTH_DEN 4

/* Whether i reaches machine code as work (the guard's labels and
 * barriers, inline asm that emits nothing, and debug intrinsics do not). */
static bool counts(LLVMValueRef i) {
  if (LLVMIsAPHINode(i)) return false;
  if (LLVMIsACallInst(i)) {
    LLVMValueRef callee = LLVMGetCalledValue(i);
    if (callee && LLVMIsAInlineAsm(callee)) return false;
  }
  return true;
}

typedef struct {
  int checks, size;
  bool vector, offload, cycle;
} region_sum;

/* The offload stage's gate (off_version.c), read before a nest it may
 * launch on the device. */
static bool reads_offload_gate(LLVMValueRef i) {
  if (!LLVMIsALoadInst(i)) return false;
  LLVMValueRef p = LLVMGetOperand(i, 0);
  size_t len;
  const char *name = LLVMIsAGlobalVariable(p) ? LLVMGetValueName2(p, &len) : NULL;
  return name && len == strlen("twasm_rt_offload_gate") && memcmp(name, "twasm_rt_offload_gate", len) == 0;
}

/* The blocks dominated by region's first block (a copy's entry, which
 * only the test enters). */
static region_sum sum_region(const ir_cfg *cfg, const ir_dom *dom, int entry) {
  region_sum r = {0};
  for (int k = 0; k < cfg->nblocks; k++) {
    if (!ir_dominates(dom, entry, k)) continue;
    /* a check in any form: LLVM may have merged a loop's checks into one
     * before it, on a bound computed from the size */
    for (int e = 0; e < cfg->blocks[k].nsuccs; e++)
      if (cfg->blocks[k].nsuccs > 1 && bnd_is_oob_trap(cfg->blocks[cfg->blocks[k].succs[e]].bb)) r.checks++;
    /* a back edge: to a block of the region that dominates this one */
    for (int e = 0; e < cfg->blocks[k].nsuccs; e++) {
      int to = cfg->blocks[k].succs[e];
      if (ir_dominates(dom, entry, to) && ir_dominates(dom, to, k)) r.cycle = true;
    }
    for (LLVMValueRef i = LLVMGetFirstInstruction(cfg->blocks[k].bb); i; i = LLVMGetNextInstruction(i)) {
      if (counts(i)) r.size++;
      if (ir_touches_vector(i)) r.vector = true;
      if (reads_offload_gate(i)) r.offload = true;
    }
  }
  return r;
}

/* Which successor of the test is the unchecked copy: the likely one
 * (bnd_loop.c's weights, which InstCombine swaps with the arms when it
 * inverts the condition); -1 when the weights are not there. */
static int fast_successor(LLVMContextRef ctx, LLVMValueRef br) {
  LLVMValueRef prof = LLVMGetMetadata(br, LLVMGetMDKindIDInContext(ctx, "prof", 4));
  if (!prof || LLVMGetMDNodeNumOperands(prof) != 3) return -1;
  LLVMValueRef ops[3];
  LLVMGetMDNodeOperands(prof, ops);
  if (!ops[1] || !ops[2] || !LLVMIsAConstantInt(ops[1]) || !LLVMIsAConstantInt(ops[2])) return -1;
  unsigned long long w0 = LLVMConstIntGetZExtValue(ops[1]), w1 = LLVMConstIntGetZExtValue(ops[2]);
  if (w0 == w1) return -1;
  return w0 > w1 ? 0 : 1;
}

/* Whether the test br should go to its checked copy always. */
static bool pointless(late_ctx *c, const ir_cfg *cfg, const ir_dom *dom, LLVMValueRef br, unsigned *checked_succ) {
  int fast = fast_successor(c->ctx, br);
  if (fast < 0) return false;
  int f_at = ir_cfg_index(cfg, LLVMGetSuccessor(br, (unsigned)fast));
  int s_at = ir_cfg_index(cfg, LLVMGetSuccessor(br, 1u - (unsigned)fast));
  int t_at = ir_cfg_index(cfg, LLVMGetInstructionParent(br));
  /* each copy is entered from the test alone */
  if (f_at <= 0 || s_at <= 0 || f_at == s_at || dom->idom[f_at] != t_at || dom->idom[s_at] != t_at) return false;
  region_sum f = sum_region(cfg, dom, f_at), s = sum_region(cfg, dom, s_at);
  *checked_succ = 1u - (unsigned)fast;
  return s.checks == 0 && !s.cycle && !f.vector && !f.offload && f.size > 0 && s.size > 0 &&
         f.size * UNVERSION_GROWTH_DEN <= s.size * UNVERSION_GROWTH_NUM;
}

/* The test's arithmetic, a DAG (late_erase_dead is for trees): every
 * instruction of the test's block under cond (up to a bound) that
 * computes a value only or loads (the size: bnd_loop.c's size_now),
 * erased once nothing uses it.  Values of other blocks stay. */
#define UNVERSION_MAX_DEAD 4096
static void erase_test(const late_ctx *c, LLVMValueRef cond, tw_arena *arena) {
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(cond);
  LLVMValueRef *set = tw_arena_alloc(arena, UNVERSION_MAX_DEAD * sizeof *set);
  bnd_map seen = {.arena = arena};
  int n = 0;
  set[n++] = cond;
  bnd_map_put(&seen, cond, cond);
  for (int k = 0; k < n; k++) {
    int nops = LLVMGetNumOperands(set[k]);
    for (int o = 0; o < nops; o++) {
      LLVMValueRef op = LLVMGetOperand(set[k], o);
      if (!op || !LLVMIsAInstruction(op) || LLVMIsAPHINode(op) || LLVMGetInstructionParent(op) != bb ||
          bnd_map_get(&seen, op) || n == UNVERSION_MAX_DEAD)
        continue;
      bnd_map_put(&seen, op, op);
      set[n++] = op;
    }
  }
  /* users come before their operands in the walk, mostly: sweep until
   * nothing more goes */
  for (bool changed = true; changed;) {
    changed = false;
    for (int k = 0; k < n; k++) {
      LLVMValueRef v = set[k];
      if (!v || LLVMGetFirstUse(v)) continue;
      if (!late_pure(c, v) && !(LLVMIsALoadInst(v) && !LLVMGetVolatile(v))) continue;
      LLVMInstructionEraseFromParent(v);
      set[k] = NULL;
      changed = true;
    }
  }
}

unsigned late_unversion(late_ctx *c) {
  unsigned kind = LLVMGetMDKindIDInContext(c->ctx, BND_MD_TEST, (unsigned)strlen(BND_MD_TEST)), n = 0;
  LLVMValueRef *tests = NULL;
  int ntests = 0, cap = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(c->fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef br = LLVMGetBasicBlockTerminator(bb);
    if (!br || !LLVMIsABranchInst(br) || !LLVMIsConditional(br) || !LLVMGetMetadata(br, kind)) continue;
    if (ntests == cap) {
      cap = cap ? 2 * cap : 16;
      LLVMValueRef *t = realloc(tests, (size_t)cap * sizeof *t);
      if (!t) break;
      tests = t;
    }
    tests[ntests++] = br;
  }
  if (ntests == 0) {
    free(tests);
    return 0;
  }
  /* the CFG as it stands (the decisions below only fold branches to
   * constants, which keeps it) */
  tw_arena arena = {0};
  ir_cfg cfg;
  ir_dom dom;
  if (!ir_cfg_build(&cfg, &arena, c->fn)) ntests = 0;
  else ir_dom_build(&dom, &cfg);
  for (int t = 0; t < ntests; t++) {
    LLVMValueRef br = tests[t];
    unsigned checked;
    if (!pointless(c, &cfg, &dom, br, &checked)) continue;
    LLVMValueRef cond = LLVMGetCondition(br);
    /* false takes successor 1: put the checked copy there */
    if (checked == 0) {
      LLVMBasicBlockRef s0 = LLVMGetSuccessor(br, 0), s1 = LLVMGetSuccessor(br, 1);
      LLVMSetSuccessor(br, 0, s1);
      LLVMSetSuccessor(br, 1, s0);
    }
    LLVMSetCondition(br, LLVMConstInt(LLVMInt1TypeInContext(c->ctx), 0, false));
    LLVMSetMetadata(br, LLVMGetMDKindIDInContext(c->ctx, "prof", 4), NULL);
    LLVMSetMetadata(br, kind, NULL);
    if (LLVMIsAInstruction(cond) && LLVMGetInstructionParent(cond) == LLVMGetInstructionParent(br))
      erase_test(c, cond, &arena);
    n++;
  }
  tw_arena_free(&arena);
  free(tests);
  return n;
}
