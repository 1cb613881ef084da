/* bnd_fresh.c: guard mode, after bnd_late.c: the tests of versioned
 * nests read the memory size where they are, not from GVN's phis of the
 * sizes loaded on the paths into them.
 *
 * bnd_insert.c loads the size right before each check, bnd_loop.c at the
 * top of each check block.  GVN forwards such loads across blocks where
 * no call comes between, so a loop whose body checks accesses (an
 * interpreter's) carries the size in a phi from the preheader and from a
 * load in every latch.  Once bnd_late.c has left those checks to the
 * guard pages, the phis may still cost a load in every latch and a
 * register through the whole loop for nothing but the tests of the nests
 * versioned inside it (interp's copy loops).  Where a phi's only uses
 * outside other such phis are computations feeding a nest's test (branch
 * marked BND_MD_TEST, through computations of its block), each gets a
 * load of its own: memory never shrinks, so any size read before the
 * nest's accesses proves them.  The phis then die, and with them the
 * latch loads.  A phi with any other use (a check left, memory.size)
 * stays as it is: a load per check executed costs more than one per
 * latch where the check runs every iteration (compress: +5 % when checks
 * were refreshed too).  Such a phi is settled instead where nothing may
 * change the size between it and the block dominating its uses: one load
 * there, the same value (a merge loop's size for the copy loops after
 * it, no longer loaded in each of its cases). */
#include "bnd.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "twasm_abi.h"

/* A load of the size at b's position, with the metadata of `like` (a
 * load of it elsewhere). */
static LLVMValueRef load_size(LLVMBuilderRef b, LLVMValueRef fn, LLVMValueRef like) {
  LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(like));
  LLVMTypeRef i8 = LLVMInt8TypeInContext(ctx), i64 = LLVMInt64TypeInContext(ctx);
  LLVMValueRef at_mem = LLVMConstInt(i64, offsetof(twasm_vmctx, mem), false);
  LLVMValueRef at_size = LLVMConstInt(i64, offsetof(twasm_memory_abi, size_bytes), false);
  LLVMValueRef p = LLVMBuildInBoundsGEP2(b, i8, LLVMGetParam(fn, 0), &at_mem, 1, "");
  LLVMValueRef mem = LLVMBuildLoad2(b, LLVMPointerTypeInContext(ctx, 0), p, "mem.fresh");
  unsigned inv = LLVMGetMDKindIDInContext(ctx, "invariant.load", 14);
  LLVMSetMetadata(mem, inv, LLVMMetadataAsValue(ctx, LLVMMDNodeInContext2(ctx, NULL, 0)));
  p = LLVMBuildInBoundsGEP2(b, i8, mem, &at_size, 1, "");
  LLVMValueRef size = LLVMBuildLoad2(b, i64, p, "size_fresh");
  static const char *const kinds[] = {"tbaa", "range"};
  for (int k = 0; k < 2; k++) {
    unsigned kind = LLVMGetMDKindIDInContext(ctx, kinds[k], (unsigned)strlen(kinds[k]));
    LLVMValueRef md = LLVMGetMetadata(like, kind);
    if (md) LLVMSetMetadata(size, kind, md);
  }
  LLVMSetAlignment(size, 8);
  return size;
}

/* A computation that reads no memory and has no effect. */
static bool pure(LLVMValueRef i) {
  return LLVMIsABinaryOperator(i) || LLVMIsAICmpInst(i) || LLVMIsASelectInst(i) || LLVMIsACastInst(i) ||
         LLVMIsAGetElementPtrInst(i);
}

/* Whether u (a pure computation) feeds only its block's terminator, a
 * versioned nest's test, through pure computations of the block. */
static bool feeds_test(LLVMValueRef u) {
  enum { MAX_USERS = 64 };
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(u);
  LLVMValueRef term = LLVMGetBasicBlockTerminator(bb), seen[MAX_USERS];
  unsigned nseen = 0, next = 0;
  if (!pure(u) || !term || !LLVMIsABranchInst(term) || !LLVMIsConditional(term)) return false;
  LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(u));
  if (!LLVMGetMetadata(term, LLVMGetMDKindIDInContext(ctx, BND_MD_TEST, strlen(BND_MD_TEST)))) return false;
  seen[nseen++] = u;
  while (next < nseen) {
    LLVMValueRef v = seen[next++];
    for (LLVMUseRef use = LLVMGetFirstUse(v); use; use = LLVMGetNextUse(use)) {
      LLVMValueRef user = LLVMGetUser(use);
      if (user == term) continue;
      if (!LLVMIsAInstruction(user) || LLVMGetInstructionParent(user) != bb || !pure(user) || nseen == MAX_USERS)
        return false;
      bool known = false;
      for (unsigned k = 0; k < nseen && !known; k++) known = seen[k] == user;
      if (!known) seen[nseen++] = user;
    }
  }
  return true;
}

enum { FRESH_MAX_PHIS = 256 };

typedef struct {
  LLVMValueRef phis[FRESH_MAX_PHIS]; /* the size phis seen */
  unsigned nphis;
} fresh_ctx;

static void note_phi(fresh_ctx *f, LLVMValueRef phi) {
  for (unsigned k = 0; k < f->nphis; k++)
    if (f->phis[k] == phi) return;
  if (f->nphis < FRESH_MAX_PHIS) f->phis[f->nphis++] = phi;
}

/* The uses of size phi `phi` that feed tests read the size themselves;
 * returns how many. */
static unsigned refresh(LLVMBuilderRef b, LLVMValueRef fn, LLVMValueRef phi, int64_t less, LLVMValueRef like) {
  enum { MAX_USES = 64 };
  LLVMValueRef users[MAX_USES];
  unsigned n = 0, done = 0;
  for (LLVMUseRef use = LLVMGetFirstUse(phi); use; use = LLVMGetNextUse(use)) {
    if (n == MAX_USES) return 0;
    LLVMValueRef user = LLVMGetUser(use);
    bool known = false;
    for (unsigned k = 0; k < n && !known; k++) known = users[k] == user;
    if (known || LLVMIsAPHINode(user)) continue;
    if (!LLVMIsAInstruction(user) || !feeds_test(user)) return 0; /* the phi stays: no load added */
    users[n++] = user;
  }
  for (unsigned k = 0; k < n; k++) {
    LLVMPositionBuilderBefore(b, users[k]);
    LLVMValueRef now = load_size(b, fn, like);
    if (less) now = LLVMBuildAdd(b, now, LLVMConstInt(LLVMTypeOf(now), (unsigned long long)-less, true), "");
    for (int op = 0; op < LLVMGetNumOperands(users[k]); op++)
      if (LLVMGetOperand(users[k], (unsigned)op) == phi) LLVMSetOperand(users[k], (unsigned)op, now), done++;
  }
  return done;
}

/* Deletes v when nothing uses it and it only computes the size (a load
 * of it, a constant added), then its operands the same way; a phi among
 * them is noted, for the caller to look at again. */
static void erase_unused(fresh_ctx *f, LLVMValueRef v, int depth) {
  if (depth > 8 || !v || !LLVMIsAInstruction(v) || LLVMGetFirstUse(v)) return;
  if (LLVMIsAPHINode(v)) {
    note_phi(f, v);
    return;
  }
  if (!LLVMIsABinaryOperator(v) && !(LLVMIsALoadInst(v) && !LLVMGetVolatile(v))) return;
  LLVMValueRef ops[2];
  unsigned n = (unsigned)LLVMGetNumOperands(v);
  if (n > 2) return;
  for (unsigned k = 0; k < n; k++) ops[k] = LLVMGetOperand(v, k);
  if (n == 2 && ops[1] == ops[0]) n = 1;
  LLVMInstructionEraseFromParent(v);
  for (unsigned k = 0; k < n; k++) erase_unused(f, ops[k], depth + 1);
}

static bool noted(const fresh_ctx *f, LLVMValueRef v) {
  for (unsigned k = 0; k < f->nphis; k++)
    if (f->phis[k] == v) return true;
  return false;
}

/* Noted phis that only noted phis use, through cycles (the web a loop
 * nest leaves once its checks went to the guard pages: each phi used by
 * the next, around the loops), lose those uses: nothing reads them. */
static void cut_dead_cycles(fresh_ctx *f) {
  bool live[FRESH_MAX_PHIS];
  unsigned work[FRESH_MAX_PHIS], nwork = 0;
  for (unsigned k = 0; k < f->nphis; k++) {
    live[k] = false;
    for (LLVMUseRef u = LLVMGetFirstUse(f->phis[k]); u && !live[k]; u = LLVMGetNextUse(u))
      live[k] = !noted(f, LLVMGetUser(u));
    if (live[k]) work[nwork++] = k;
  }
  while (nwork) {
    LLVMValueRef phi = f->phis[work[--nwork]];
    for (unsigned j = 0; j < LLVMCountIncoming(phi); j++) {
      LLVMValueRef in = LLVMGetIncomingValue(phi, j);
      for (unsigned k = 0; k < f->nphis; k++)
        if (f->phis[k] == in && !live[k]) live[k] = true, work[nwork++] = k;
    }
  }
  for (unsigned k = 0; k < f->nphis; k++)
    if (!live[k]) LLVMReplaceAllUsesWith(f->phis[k], LLVMGetPoison(LLVMTypeOf(f->phis[k])));
}

/* The noted phis nothing uses any more go, with what only they used. */
static void erase_phis(fresh_ctx *f) {
  cut_dead_cycles(f);
  for (bool again = true; again;) {
    again = false;
    for (unsigned k = 0; k < f->nphis; k++) {
      LLVMValueRef phi = f->phis[k];
      if (!phi || LLVMGetFirstUse(phi)) continue;
      enum { MAX_IN = 256 };
      LLVMValueRef in[MAX_IN];
      unsigned n = LLVMCountIncoming(phi);
      if (n > MAX_IN) continue;
      unsigned m = 0;
      for (unsigned j = 0; j < n; j++) {
        LLVMValueRef v = LLVMGetIncomingValue(phi, j);
        bool known = v == phi;
        for (unsigned i = 0; i < m && !known; i++) known = in[i] == v;
        if (!known) in[m++] = v;
      }
      n = m;
      f->phis[k] = NULL;
      LLVMInstructionEraseFromParent(phi);
      for (unsigned j = 0; j < n; j++) erase_unused(f, in[j], 0);
      again = true;
    }
  }
}

/* ---- a phi read again where it is still the same ------------------------ */

/* Whether block bb runs nothing that may change the size: no call but
 * inline asm (bnd_late.c's labels and barriers) and intrinsics. */
static bool keeps_size(LLVMBasicBlockRef bb) {
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
    if (!LLVMIsACallInst(i) && !LLVMIsAInvokeInst(i)) continue;
    LLVMValueRef callee = LLVMGetCalledValue(i);
    if (LLVMIsAInlineAsm(callee)) continue;
    if (!callee || !LLVMIsAFunction(callee) || !LLVMGetIntrinsicID(callee)) return false;
  }
  return true;
}

typedef struct {
  const ir_cfg *cfg;
  const ir_dom *dom;
} fresh_cfg;

/* The block nearest the phi's block p that dominates every use of phi, or
 * -1 when a use is a phi or lies outside the CFG. */
static int uses_dominator(const fresh_cfg *g, LLVMValueRef phi) {
  int d = -1;
  for (LLVMUseRef use = LLVMGetFirstUse(phi); use; use = LLVMGetNextUse(use)) {
    LLVMValueRef user = LLVMGetUser(use);
    if (!LLVMIsAInstruction(user) || LLVMIsAPHINode(user)) return -1;
    int u = ir_cfg_index(g->cfg, LLVMGetInstructionParent(user));
    if (u < 0) return -1;
    if (d < 0) d = u;
    while (!ir_dominates(g->dom, d, u)) d = g->dom->idom[d];
  }
  return d;
}

/* Whether every path from block p (its phis evaluated) to block d keeps
 * the size: a walk back from d over predecessors, stopping at p. */
static bool path_keeps_size(const fresh_cfg *g, int p, int d) {
  int n = g->cfg->nblocks, *work = malloc((size_t)n * sizeof *work);
  bool *seen = calloc((size_t)n, sizeof *seen), ok = work && seen;
  int nwork = 0;
  if (ok) work[nwork++] = d, seen[d] = true;
  ok = ok && keeps_size(g->cfg->blocks[p].bb);
  while (ok && nwork) {
    int x = work[--nwork];
    if (x == p) continue;
    if (!keeps_size(g->cfg->blocks[x].bb) || !g->cfg->blocks[x].npreds) ok = false;
    for (int k = 0; ok && k < g->cfg->blocks[x].npreds; k++) {
      int y = g->cfg->blocks[x].preds[k];
      if (!seen[y]) seen[y] = true, work[nwork++] = y;
    }
  }
  free(work);
  free(seen);
  return ok;
}

/* Size phi `phi` (the size less `less`), its uses not all tests: when no
 * call may change the size between the phi and the block that dominates
 * its uses, one load there stands for it (the same value: no loop's
 * latch loads for a use after the loop).  Returns whether it did. */
static bool settle(LLVMBuilderRef b, LLVMValueRef fn, const fresh_cfg *g, LLVMValueRef phi, int64_t less,
                   LLVMValueRef like) {
  int p = ir_cfg_index(g->cfg, LLVMGetInstructionParent(phi));
  int d = p < 0 || !LLVMGetFirstUse(phi) ? -1 : uses_dominator(g, phi);
  if (d < 0 || !ir_dominates(g->dom, p, d) || !path_keeps_size(g, p, d)) return false;
  LLVMBasicBlockRef bb = g->cfg->blocks[d].bb;
  LLVMValueRef at = LLVMGetFirstInstruction(bb);
  while (at && LLVMIsAPHINode(at)) at = LLVMGetNextInstruction(at);
  if (!at) return false;
  LLVMPositionBuilderBefore(b, at);
  LLVMValueRef now = load_size(b, fn, like);
  if (less) now = LLVMBuildAdd(b, now, LLVMConstInt(LLVMTypeOf(now), (unsigned long long)-less, true), "");
  LLVMReplaceAllUsesWith(phi, now);
  return true;
}

/* ---- a size load moved down to its uses --------------------------------- */

/* Whether block d lies on a cycle that does not pass block p (d would
 * then run more often than p; p = -1: on any cycle). */
static bool cycles_past(const fresh_cfg *g, int p, int d) {
  int n = g->cfg->nblocks, *work = malloc((size_t)n * sizeof *work);
  bool *seen = calloc((size_t)n, sizeof *seen), found = !work || !seen;
  int nwork = 0;
  for (int k = 0; !found && k < g->cfg->blocks[d].nsuccs; k++) {
    int y = g->cfg->blocks[d].succs[k];
    if (y != p && !seen[y]) seen[y] = true, work[nwork++] = y;
  }
  while (!found && nwork) {
    int x = work[--nwork];
    if (x == d) found = true;
    for (int k = 0; !found && k < g->cfg->blocks[x].nsuccs; k++) {
      int y = g->cfg->blocks[x].succs[k];
      if (y != p && !seen[y]) seen[y] = true, work[nwork++] = y;
    }
  }
  free(work);
  free(seen);
  return found;
}

/* Size load v in block p whose checks went to the guard pages, its uses
 * left further down (a check on a rare path: compress's bit reader,
 * 13.6 M calls, loaded the size and kept a callee-saved register for it
 * at every entry for a check run 25,000 times).  When no call may change
 * the size between p and the block d dominating every use (none a phi),
 * p lies on no cycle (from a loop's block, compress ran 102 M more
 * instructions, not looked into) and neither does d, the load moves to
 * the top of d: the same value there.  The vmctx's memory
 * pointer and the address go with it when nothing else uses them.
 * Returns whether it moved. */
static bool sink_size_load(LLVMBuilderRef b, LLVMValueRef fn, const fresh_cfg *g, LLVMValueRef v) {
  if (!LLVMIsALoadInst(v) || LLVMGetVolatile(v) || !LLVMGetFirstUse(v) || !bnd_is_size_load(v)) return false;
  int p = ir_cfg_index(g->cfg, LLVMGetInstructionParent(v));
  int d = p < 0 ? -1 : uses_dominator(g, v);
  if (d < 0 || d == p || !ir_dominates(g->dom, p, d) || cycles_past(g, -1, p) || cycles_past(g, p, d) ||
      !path_keeps_size(g, p, d))
    return false;
  LLVMValueRef at = LLVMGetFirstInstruction(g->cfg->blocks[d].bb);
  while (at && LLVMIsAPHINode(at)) at = LLVMGetNextInstruction(at);
  if (!at) return false;
  LLVMPositionBuilderBefore(b, at);
  LLVMValueRef now = load_size(b, fn, v);
  LLVMReplaceAllUsesWith(v, now);
  LLVMValueRef ptr = LLVMGetOperand(v, 0);
  LLVMInstructionEraseFromParent(v);
  if (LLVMIsAGetElementPtrInst(ptr) && !LLVMGetFirstUse(ptr)) {
    LLVMValueRef mem = LLVMGetOperand(ptr, 0);
    LLVMInstructionEraseFromParent(ptr);
    if (LLVMIsALoadInst(mem) && !LLVMGetFirstUse(mem) && !LLVMGetVolatile(mem)) {
      LLVMValueRef q = LLVMGetOperand(mem, 0);
      LLVMInstructionEraseFromParent(mem);
      if (LLVMIsAGetElementPtrInst(q) && !LLVMGetFirstUse(q)) LLVMInstructionEraseFromParent(q);
    }
  }
  return true;
}

/* Every size load of fn that sink_size_load moves; returns how many. */
static unsigned sink_size_loads(LLVMBuilderRef b, LLVMValueRef fn, const fresh_cfg *g) {
  enum { MAX_LOADS = 256 };
  LLVMValueRef loads[MAX_LOADS];
  unsigned n = 0, moved = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb && n < MAX_LOADS; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i && n < MAX_LOADS; i = LLVMGetNextInstruction(i))
      if (bnd_is_size_load(i)) loads[n++] = i;
  for (unsigned k = 0; k < n; k++) moved += sink_size_load(b, fn, g, loads[k]);
  return moved;
}

unsigned bnd_fresh_sizes(LLVMValueRef fn) {
  fresh_ctx f = {.nphis = 0};
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetTypeContext(LLVMTypeOf(fn)));
  tw_arena arena = {0};
  ir_cfg cfg;
  ir_dom dom;
  fresh_cfg g = {NULL, NULL};
  unsigned n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i && LLVMIsAPHINode(i); i = LLVMGetNextInstruction(i)) {
      int64_t less;
      LLVMValueRef like;
      if (!bnd_size_web(i, &less, &like)) continue;
      n += refresh(b, fn, i, less, like);
      note_phi(&f, i);
      if (!LLVMGetFirstUse(i)) continue;
      if (!g.cfg && ir_cfg_build(&cfg, &arena, fn)) { /* built once: loads added do not change it */
        ir_dom_build(&dom, &cfg);
        g = (fresh_cfg){&cfg, &dom};
      }
      if (g.cfg && settle(b, fn, &g, i, less, like)) n++;
    }
  erase_phis(&f);
  if (!g.cfg && ir_cfg_build(&cfg, &arena, fn)) {
    ir_dom_build(&dom, &cfg);
    g = (fresh_cfg){&cfg, &dom};
  }
  if (g.cfg) n += sink_size_loads(b, fn, &g);
  tw_arena_free(&arena);
  LLVMDisposeBuilder(b);
  return n;
}
