/* off_wait.c: the waits pass.  After loop versioning (off_version.c),
 * every call of twasm_rt_offload becomes twasm_rt_offload_unwaited, which
 * may come back with its launch still running (runtime/rt_defer.c), and
 * the code waits where the CPU may touch linear memory before another
 * launch, so that launches back to back (an LLM layer's q, k and v
 * products) queue behind one another with one wait for all:
 *
 * - before a load or store of linear memory that may follow such a
 *   launch:  if (twasm_rt_offload_pending)
 *              twasm_rt_offload_wait_for(ptr, bytes, is_store);
 *   which waits only when a pending launch writes those bytes (or, for a
 *   store, touches them): the loads between two products (a struct's
 *   pointers) do not wait;
 * - before a loop entered with a launch pending whose body has such
 *   accesses and launches nothing (the CPU work between launches, a
 *   nest's own CPU loop): one full wait on the entering edge, none inside;
 * - before any call that may touch the memory (an import, the runtime, a
 *   function that launches nothing, an indirect call), an atomic access,
 *   and the return of a function the host may call (exported, in a table,
 *   the start function): a full wait, twasm_rt_offload_wait().
 *
 * "May follow" is a forward dataflow per function over two states, clean
 * and pending.  A launch sets pending; so does a call of a function that
 * launches (directly or through its callees: such a function is entered
 * pending when some call of it may be, found to a fixed point over the
 * module; a function that launches nothing is always entered clean, its
 * callers waiting first, and so is one the host calls); the branch a
 * launch's answer takes to the nest's CPU loop is clean (an answer other
 * than 1 comes back with nothing pending); a full wait makes it clean.
 * Loads and stores of the frame (allocas), of LLVM globals and of the
 * vmctx's own fields touch no linear memory. */
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "ir_pass.h"
#include "off.h"

/* More range checks than this in one block: a full wait instead. */
#define OW_MAX_CHECKS 8

typedef enum { OW_NONE, OW_CHECK, OW_FULL } ow_kind;

typedef struct {
  LLVMValueRef at; /* the instruction the wait goes before */
  ow_kind kind;
} ow_point;

typedef struct {
  LLVMBasicBlockRef from, to; /* an edge into a loop */
} ow_edge;

typedef struct {
  LLVMModuleRef mod;
  LLVMContextRef ctx;
  LLVMTargetDataRef td;
  LLVMValueRef dispatch;       /* twasm_rt_offload */
  unsigned md_unwaited;        /* OFF_MD_UNWAITED: its launches that may go unwaited */
  uint8_t *launches;           /* per Wasm index: launches, directly or not */
  uint8_t *entered;            /* per Wasm index: called while a launch may be pending */
  uint8_t *tail_target;        /* per Wasm index: some musttail call's callee (its return is its caller's) */
  bool entered_more;           /* entered grew in this round */
  const uint8_t *reach;        /* per Wasm index: OFF_REACH_* */
  uint32_t nfuncs;
  bool indirect_launches;      /* a function that launches is callable indirectly */
  ow_point *points;
  unsigned npoints, cap_points;
  ow_edge *edges;
  unsigned nedges, cap_edges;
  bool failed; /* a point not noted (out of memory): nothing may go unwaited */
} ow_ctx;

static bool launches(const ow_ctx *c, LLVMValueRef fn) {
  int64_t i = fn && LLVMIsAFunction(fn) ? ir_wasm_index(fn) : -1;
  return i >= 0 && (uint64_t)i < c->nfuncs && c->launches[i];
}

static bool escapes(const ow_ctx *c, LLVMValueRef fn) {
  int64_t i = ir_wasm_index(fn);
  return i < 0 || (uint64_t)i >= c->nfuncs || c->reach[i] || c->tail_target[i];
}

/* Intrinsics that compute only (llvm.fabs, llvm.umax, llvm.assume ...). */
static bool pure_intrinsic(LLVMValueRef callee) {
  if (!LLVMGetIntrinsicID(callee)) return false;
  size_t len;
  const char *name = LLVMGetValueName2(callee, &len);
  static const char *const touching[] = {"llvm.mem", "llvm.masked.", "llvm.experimental.", "llvm.vp.",
                                         "llvm.prefetch", "llvm.trap", "llvm.stack"};
  for (size_t k = 0; k < sizeof touching / sizeof *touching; k++)
    if (!strncmp(name, touching[k], strlen(touching[k]))) return false;
  return true;
}

/* Runtime helpers that read no linear memory: a launch's params. */
static bool pure_runtime(LLVMValueRef callee) {
  size_t len;
  const char *name = LLVMGetValueName2(callee, &len);
  return !strcmp(name, "twasm_rt_trip_count");
}

/* What an instruction does to the state: nothing; a linear memory
 * access (a check while pending); anything else that may touch the memory
 * (a full wait while pending, clean after); a launch that may go
 * unwaited, or a call of a function that launches (pending after,
 * nothing before: the callee is entered pending); an indirect call (a
 * full wait before, pending after when a function that launches may be
 * its callee). */
typedef enum { OW_SAFE, OW_ACCESS, OW_TOUCH, OW_LAUNCH, OW_CALL_LAUNCHING, OW_CALL_INDIRECT } ow_effect;

/* Whether a pointer's bytes are linear memory's (or may be): not the
 * frame, an LLVM global, or a field of the vmctx (parameter 0). */
static bool linear(LLVMValueRef fn, LLVMValueRef p) {
  for (int hops = 0; hops < 64; hops++) {
    if (LLVMIsAGetElementPtrInst(p) || LLVMIsABitCastInst(p) || LLVMIsAAddrSpaceCastInst(p)) {
      p = LLVMGetOperand(p, 0);
      continue;
    }
    if (LLVMIsAConstantExpr(p)) {
      LLVMOpcode op = LLVMGetConstOpcode(p);
      if (op == LLVMGetElementPtr || op == LLVMBitCast || op == LLVMAddrSpaceCast) {
        p = LLVMGetOperand(p, 0);
        continue;
      }
    }
    break;
  }
  return !(LLVMIsAAllocaInst(p) || LLVMIsAGlobalVariable(p) || p == LLVMGetParam(fn, 0));
}

static ow_effect effect(const ow_ctx *c, LLVMValueRef fn, LLVMValueRef i) {
  if (LLVMIsALoadInst(i) || LLVMIsAStoreInst(i)) {
    LLVMValueRef p = LLVMGetOperand(i, LLVMIsAStoreInst(i) ? 1 : 0);
    if (!linear(fn, p)) return OW_SAFE;
    return LLVMGetOrdering(i) > LLVMAtomicOrderingNotAtomic || LLVMGetVolatile(i) ? OW_TOUCH : OW_ACCESS;
  }
  if (LLVMIsAFenceInst(i) || LLVMIsAAtomicRMWInst(i) || LLVMIsAAtomicCmpXchgInst(i)) return OW_TOUCH;
  if (!LLVMIsACallInst(i) && !LLVMIsAInvokeInst(i)) return OW_SAFE;
  LLVMValueRef callee = LLVMGetCalledValue(i);
  if (!callee || !LLVMIsAFunction(callee)) return OW_CALL_INDIRECT;
  /* other launches wait (and answers other than 1 leave nothing pending
   * only from twasm_rt_offload_unwaited) */
  if (callee == c->dispatch) return LLVMGetMetadata(i, c->md_unwaited) ? OW_LAUNCH : OW_TOUCH;
  if (pure_intrinsic(callee) || pure_runtime(callee)) return OW_SAFE;
  return launches(c, callee) ? OW_CALL_LAUNCHING : OW_TOUCH;
}

static void add_point(ow_ctx *c, LLVMValueRef at, ow_kind kind) {
  if (c->npoints == c->cap_points) {
    unsigned cap = c->cap_points ? 2 * c->cap_points : 64;
    ow_point *p = realloc(c->points, cap * sizeof *p);
    if (!p) {
      c->failed = true;
      return;
    }
    c->points = p, c->cap_points = cap;
  }
  c->points[c->npoints++] = (ow_point){at, kind};
}

static void add_edge(ow_ctx *c, LLVMBasicBlockRef from, LLVMBasicBlockRef to) {
  if (c->nedges == c->cap_edges) {
    unsigned cap = c->cap_edges ? 2 * c->cap_edges : 16;
    ow_edge *e = realloc(c->edges, cap * sizeof *e);
    if (!e) {
      c->failed = true;
      return;
    }
    c->edges = e, c->cap_edges = cap;
  }
  c->edges[c->nedges++] = (ow_edge){from, to};
}

/* The successor a launch's answer other than 1 takes (`br (done == 1),
 * exit, back`: back), else -1. */
static int cpu_successor(const ow_ctx *c, LLVMValueRef term) {
  if (!LLVMIsABranchInst(term) || !LLVMIsConditional(term)) return -1;
  LLVMValueRef cond = LLVMGetCondition(term);
  if (!LLVMIsAICmpInst(cond) || LLVMGetICmpPredicate(cond) != LLVMIntEQ) return -1;
  LLVMValueRef a = LLVMGetOperand(cond, 0), one = LLVMGetOperand(cond, 1);
  if (!LLVMIsACallInst(a) || LLVMGetCalledValue(a) != c->dispatch || !LLVMIsAConstantInt(one) ||
      LLVMConstIntGetZExtValue(one) != 1)
    return -1;
  return 1;
}

typedef struct {
  ir_cfg cfg;
  ir_loops lp;
  uint8_t *in;        /* per block: entered pending */
  uint8_t *launching; /* per loop (index in lp.loops): launches inside */
  uint8_t *touching;  /* per loop: accesses memory inside */
} ow_fn;

/* Whether the edge b -> s enters a loop whose body should start clean:
 * it accesses memory and launches nothing. */
static bool wait_on_edge(const ow_fn *f, int b, int s) {
  for (int k = 0; k < f->lp.nloops; k++) {
    const ir_loop *l = f->lp.loops[k];
    if (l->header == s && !l->in_body[b]) return f->touching[k] && !f->launching[k];
  }
  return false;
}

/* Runs block b from state st; record: note the waits.  Returns the state
 * at its end. */
static bool run_block(ow_ctx *c, LLVMValueRef fn, LLVMBasicBlockRef bb, bool st, bool record) {
  unsigned checks = 0;
  LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
    if (i == term) {
      if (st && LLVMIsAReturnInst(i) && escapes(c, fn)) {
        /* nothing may come between a musttail call and its return: the
         * wait goes before the call (whose callee waits before its own
         * returns: a tail target counts as escaping) */
        LLVMValueRef before = LLVMGetPreviousInstruction(i);
        bool tail = before && LLVMIsACallInst(before) && LLVMGetTailCallKind(before) == LLVMTailCallKindMustTail;
        if (record) add_point(c, tail ? before : i, OW_FULL);
        st = false;
      }
      break;
    }
    switch (effect(c, fn, i)) {
    case OW_SAFE:
      break;
    case OW_ACCESS:
      if (st && ++checks > OW_MAX_CHECKS) {
        if (record) add_point(c, i, OW_FULL);
        st = false;
      } else if (st && record) {
        add_point(c, i, OW_CHECK);
      }
      break;
    case OW_TOUCH:
      if (st && record) add_point(c, i, OW_FULL);
      st = false;
      break;
    case OW_CALL_LAUNCHING:
      if (st) {
        int64_t k = ir_wasm_index(LLVMGetCalledValue(i));
        if (k >= 0 && (uint64_t)k < c->nfuncs && !c->entered[k]) c->entered[k] = 1, c->entered_more = true;
      }
      st = true;
      break;
    case OW_LAUNCH:
      st = true;
      break;
    case OW_CALL_INDIRECT:
      if (st && record) add_point(c, i, OW_FULL);
      st = c->indirect_launches;
      break;
    }
  }
  return st;
}

static void loop_summaries(ow_ctx *c, LLVMValueRef fn, ow_fn *f, tw_arena *a) {
  f->launching = tw_arena_alloc(a, (size_t)f->lp.nloops + 1);
  f->touching = tw_arena_alloc(a, (size_t)f->lp.nloops + 1);
  memset(f->launching, 0, (size_t)f->lp.nloops + 1);
  memset(f->touching, 0, (size_t)f->lp.nloops + 1);
  for (int b = 0; b < f->cfg.nblocks; b++) {
    bool launch = false, touch = false;
    for (LLVMValueRef i = LLVMGetFirstInstruction(f->cfg.blocks[b].bb); i; i = LLVMGetNextInstruction(i)) {
      ow_effect e = effect(c, fn, i);
      launch |= e == OW_LAUNCH || e == OW_CALL_LAUNCHING || (e == OW_CALL_INDIRECT && c->indirect_launches);
      touch |= e == OW_ACCESS || e == OW_TOUCH || e == OW_CALL_INDIRECT;
    }
    for (int k = 0; k < f->lp.nloops; k++)
      if (f->lp.loops[k]->in_body[b]) f->launching[k] |= launch, f->touching[k] |= touch;
  }
}

/* The dataflow over fn (a function that launches), entered pending when
 * a call of it may be; record: then its waits noted.  False when fn has
 * no body to follow. */
static bool analyse(ow_ctx *c, LLVMValueRef fn, bool record) {
  tw_arena arena = {0};
  ow_fn f;
  ir_dom dom;
  bool ok = ir_cfg_build(&f.cfg, &arena, fn);
  if (ok) {
    ir_dom_build(&dom, &f.cfg);
    ir_loops_build(&f.lp, &f.cfg, &dom);
    loop_summaries(c, fn, &f, &arena);
    int n = f.cfg.nblocks;
    f.in = tw_arena_alloc(&arena, (size_t)n + 1);
    memset(f.in, 0, (size_t)n + 1);
    int64_t idx = ir_wasm_index(fn);
    f.in[0] = c->entered[idx];
    /* pending only grows: sweeps in reverse post-order until none changes */
    for (bool changed = true; changed;) {
      changed = false;
      for (int b = 0; b < n; b++) {
        bool st = run_block(c, fn, f.cfg.blocks[b].bb, f.in[b], false);
        LLVMValueRef term = LLVMGetBasicBlockTerminator(f.cfg.blocks[b].bb);
        int cpu = cpu_successor(c, term);
        for (unsigned k = 0; k < LLVMGetNumSuccessors(term); k++) {
          int s = ir_cfg_index(&f.cfg, LLVMGetSuccessor(term, k));
          if (s < 0 || !st || (int)k == cpu || wait_on_edge(&f, b, s) || f.in[s]) continue;
          f.in[s] = 1;
          changed = true;
        }
      }
    }
    for (int b = 0; b < n && record; b++) {
      bool st = run_block(c, fn, f.cfg.blocks[b].bb, f.in[b], true);
      LLVMValueRef term = LLVMGetBasicBlockTerminator(f.cfg.blocks[b].bb);
      int cpu = cpu_successor(c, term);
      for (unsigned k = 0; k < LLVMGetNumSuccessors(term) && st; k++) {
        int s = ir_cfg_index(&f.cfg, LLVMGetSuccessor(term, k));
        bool seen = false;
        for (unsigned j = 0; j < k; j++) seen |= LLVMGetSuccessor(term, j) == LLVMGetSuccessor(term, k);
        if (s >= 0 && (int)k != cpu && !seen && wait_on_edge(&f, b, s))
          add_edge(c, f.cfg.blocks[b].bb, f.cfg.blocks[s].bb);
      }
    }
  }
  tw_arena_free(&arena);
  return ok;
}

/* ---- placing the waits ----------------------------------------------- */

static LLVMValueRef declare(ow_ctx *c, const char *name, LLVMTypeRef ty) {
  LLVMValueRef f = LLVMGetNamedFunction(c->mod, name);
  if (!f) {
    f = LLVMAddFunction(c->mod, name, ty);
    unsigned kind = LLVMGetEnumAttributeKindForName("cold", 4);
    LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c->ctx, kind, 0));
  }
  return f;
}

/* Before instruction at: `if (pending) call`, the rest of its block moved
 * to a block of its own. */
static void wait_before(ow_ctx *c, LLVMBuilderRef b, LLVMValueRef at, ow_kind kind) {
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(at);
  LLVMBasicBlockRef tail = ir_split_before(at, "wait.after");
  LLVMBasicBlockRef slow = LLVMInsertBasicBlockInContext(c->ctx, tail, "wait");
  LLVMTypeRef i32 = LLVMInt32TypeInContext(c->ctx), i64 = LLVMInt64TypeInContext(c->ctx);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(c->ctx, 0), v = LLVMVoidTypeInContext(c->ctx);
  LLVMValueRef flag = LLVMGetNamedGlobal(c->mod, "twasm_rt_offload_pending");
  if (!flag) flag = LLVMAddGlobal(c->mod, i32, "twasm_rt_offload_pending");
  LLVMPositionBuilderAtEnd(b, bb);
  LLVMValueRef pending = LLVMBuildLoad2(b, i32, flag, "pending");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, pending, LLVMConstInt(i32, 0, false), ""), slow, tail);
  LLVMPositionBuilderAtEnd(b, slow);
  if (kind == OW_CHECK) {
    bool store = LLVMIsAStoreInst(at);
    LLVMValueRef p = LLVMGetOperand(at, store ? 1 : 0);
    LLVMTypeRef ty = store ? LLVMTypeOf(LLVMGetOperand(at, 0)) : LLVMTypeOf(at);
    LLVMTypeRef params[] = {ptr, i64, i32};
    LLVMTypeRef fty = LLVMFunctionType(v, params, 3, false);
    LLVMValueRef args[] = {p, LLVMConstInt(i64, LLVMStoreSizeOfType(c->td, ty), false),
                           LLVMConstInt(i32, store, false)};
    LLVMBuildCall2(b, fty, declare(c, "twasm_rt_offload_wait_for", fty), args, 3, "");
  } else {
    LLVMTypeRef fty = LLVMFunctionType(v, NULL, 0, false);
    LLVMBuildCall2(b, fty, declare(c, "twasm_rt_offload_wait", fty), NULL, 0, "");
  }
  LLVMBuildBr(b, tail);
}

/* The edge from -> to gets a block of its own holding a full wait (from's
 * end when it branches there more than once). */
static void wait_on(ow_ctx *c, LLVMBuilderRef b, const ow_edge *e) {
  LLVMValueRef term = LLVMGetBasicBlockTerminator(e->from);
  unsigned slots = 0;
  for (unsigned s = 0; s < LLVMGetNumSuccessors(term); s++) slots += LLVMGetSuccessor(term, s) == e->to;
  if (slots != 1 || LLVMGetNumSuccessors(term) == 1) {
    wait_before(c, b, term, OW_FULL);
    return;
  }
  LLVMBasicBlockRef mid = LLVMInsertBasicBlockInContext(c->ctx, e->to, "wait.enter");
  LLVMPositionBuilderAtEnd(b, mid);
  LLVMBuildBr(b, e->to);
  for (unsigned s = 0; s < LLVMGetNumSuccessors(term); s++)
    if (LLVMGetSuccessor(term, s) == e->to) LLVMSetSuccessor(term, s, mid);
  ir_retarget_phis(e->to, e->from, mid);
  wait_before(c, b, LLVMGetBasicBlockTerminator(mid), OW_FULL);
}

/* Which defined functions launch: those calling twasm_rt_offload, then
 * their callers, to a fixed point. */
static void find_launching(ow_ctx *c) {
  for (bool changed = true; changed;) {
    changed = false;
    for (LLVMValueRef fn = LLVMGetFirstFunction(c->mod); fn; fn = LLVMGetNextFunction(fn)) {
      int64_t idx = ir_wasm_index(fn);
      if (idx < 0 || (uint64_t)idx >= c->nfuncs || c->launches[idx] || LLVMIsDeclaration(fn)) continue;
      bool l = false;
      for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb && !l; bb = LLVMGetNextBasicBlock(bb))
        for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i && !l; i = LLVMGetNextInstruction(i)) {
          ow_effect e = LLVMIsACallInst(i) ? effect(c, fn, i) : OW_SAFE;
          l = e == OW_LAUNCH || e == OW_CALL_LAUNCHING || (e == OW_CALL_INDIRECT && c->indirect_launches);
        }
      if (!l) continue;
      c->launches[idx] = 1;
      changed = true;
      if (c->reach[idx] & OFF_REACH_TABLE) c->indirect_launches = true;
    }
  }
}

unsigned off_place_waits(LLVMModuleRef mod, const uint8_t *reach, uint32_t nfuncs) {
  ow_ctx c = {.mod = mod, .ctx = LLVMGetModuleContext(mod), .reach = reach, .nfuncs = nfuncs};
  c.dispatch = LLVMGetNamedFunction(mod, "twasm_rt_offload");
  if (!c.dispatch || !LLVMGetFirstUse(c.dispatch) || !nfuncs) return 0;
  c.md_unwaited = LLVMGetMDKindIDInContext(c.ctx, OFF_MD_UNWAITED, sizeof OFF_MD_UNWAITED - 1);
  c.td = LLVMGetModuleDataLayout(mod);
  c.launches = calloc(nfuncs, 1);
  c.entered = calloc(nfuncs, 1);
  c.tail_target = calloc(nfuncs, 1);
  bool ok = c.launches && c.entered && c.tail_target;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn && ok; fn = LLVMGetNextFunction(fn))
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
        if (LLVMIsACallInst(i) && LLVMGetTailCallKind(i) == LLVMTailCallKindMustTail) {
          int64_t k = LLVMIsAFunction(LLVMGetCalledValue(i)) ? ir_wasm_index(LLVMGetCalledValue(i)) : -1;
          if (k >= 0 && (uint64_t)k < nfuncs) c.tail_target[k] = 1;
        }
  if (ok) find_launching(&c);
  /* which functions are entered pending, to a fixed point (they only
   * grow), then the waits */
  for (bool more = ok; more && ok;) {
    c.entered_more = false;
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn && ok; fn = LLVMGetNextFunction(fn))
      if (!LLVMIsDeclaration(fn) && launches(&c, fn)) ok = analyse(&c, fn, false);
    more = c.entered_more;
  }
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn && ok; fn = LLVMGetNextFunction(fn))
    if (!LLVMIsDeclaration(fn) && launches(&c, fn)) ok = analyse(&c, fn, true);
  unsigned sites = 0;
  /* every point noted, or no launch may go unwaited */
  if (ok && !c.failed) {
    LLVMBuilderRef b = LLVMCreateBuilderInContext(c.ctx);
    for (unsigned e = 0; e < c.nedges; e++) wait_on(&c, b, &c.edges[e]);
    for (unsigned p = 0; p < c.npoints; p++) wait_before(&c, b, c.points[p].at, c.points[p].kind);
    LLVMDisposeBuilder(b);
    LLVMTypeRef i32 = LLVMInt32TypeInContext(c.ctx), ptr = LLVMPointerTypeInContext(c.ctx, 0);
    LLVMTypeRef params[] = {ptr, i32, ptr, ptr};
    LLVMValueRef unwaited = LLVMGetNamedFunction(mod, "twasm_rt_offload_unwaited");
    if (!unwaited) unwaited = LLVMAddFunction(mod, "twasm_rt_offload_unwaited", LLVMFunctionType(i32, params, 4, false));
    for (LLVMUseRef u = LLVMGetFirstUse(c.dispatch), next; u; u = next) {
      next = LLVMGetNextUse(u);
      LLVMValueRef call = LLVMGetUser(u);
      if (!LLVMIsACallInst(call) || LLVMGetCalledValue(call) != c.dispatch || !LLVMGetMetadata(call, c.md_unwaited))
        continue;
      LLVMSetOperand(call, LLVMGetNumArgOperands(call), unwaited);
      sites++;
    }
  }
  free(c.points);
  free(c.edges);
  free(c.launches);
  free(c.entered);
  free(c.tail_target);
  return sites;
}
