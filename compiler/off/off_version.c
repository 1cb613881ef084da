/* off_version.c: loop versioning for offloaded nests.  The preheader asks
 * the runtime to run the nest's kernel; when it did, control jumps to the
 * nest's exit (a reduction's result taking the accumulator's place), else
 * the original loop runs unchanged:
 *
 *   preheader:     br twasm_rt_offload_gate, offload.skip, header
 *   offload.skip:  s = skip[id]; br s == 0, offload.call, offload.dec
 *   offload.dec:   skip[id] = s - 1; br header
 *   offload.call:  params = live values (a struct field the nest loads, kr_field_load:
 *                  loaded here again, each only where its bytes lie in the
 *                  memory; when one does not: br header, no launch, and
 *                  offload.launch takes the rest)
 *                  done = twasm_rt_offload(vmctx, id, params, &res)
 *                  (a nest of several parts, kn_recog_split.c: every part's
 *                  params in order, done = twasm_rt_offload_group(vmctx,
 *                  id, parts, params): kernels id .. id + parts - 1)
 *                  br done == 1, exit, offload.back
 *   offload.back:  n = done == TOO_SMALL ? min(2 * next[id] + 1, SKIP_MAX) : 0
 *                  next[id] = skip[id] = n; br header
 *
 * The gate is closed without a GPU, so the CPU path then skips the params
 * (trip counts are runtime calls with 128-bit arithmetic) and the call.
 * skip and next are the module's own counters per kernel: a nest the
 * runtime refused as too small for any launch runs its next 1, 3, 7 ...
 * (at most TWASM_OFFLOAD_SKIP_MAX) calls on the CPU without asking, so a
 * tiny nest called millions of times pays a load and a branch per call.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ir_pass.h"
#include "off.h"
#include "off_internal.h"
#include "twasm_abi.h"

static bool in_nest(const kn_recog_nest *n, LLVMBasicBlockRef bb) {
  return ir_loop_contains_block(n->nest, bb, n->cfg);
}

static bool defined_in_nest(const kn_recog_nest *n, LLVMValueRef v) {
  return v && LLVMIsAInstruction(v) && in_nest(n, LLVMGetInstructionParent(v));
}

static bool preds_all_in_nest(const kn_recog_nest *n, LLVMBasicBlockRef exit) {
  for (LLVMUseRef u = LLVMGetFirstUse(LLVMBasicBlockAsValue(exit)); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    if (LLVMIsATerminatorInst(user) && !in_nest(n, LLVMGetInstructionParent(user))) return false;
  }
  return true;
}

/* Whether every way into block b comes from the nest, directly or through
 * blocks (not the exit) that are themselves entered only so: a trap's
 * block that SimplifyCFG sank below the exit blocks of two of the
 * nest's loops (a region's V and R, kn_lanes_region.c). */
static bool only_from_nest(const kn_recog_nest *n, LLVMBasicBlockRef b, LLVMBasicBlockRef exit, int depth) {
  if (b == exit || depth > 4) return false;
  for (LLVMUseRef u = LLVMGetFirstUse(LLVMBasicBlockAsValue(b)); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    if (!LLVMIsATerminatorInst(user)) continue;
    LLVMBasicBlockRef p = LLVMGetInstructionParent(user);
    if (!in_nest(n, p) && !only_from_nest(n, p, exit, depth + 1)) return false;
  }
  return true;
}

/* Whether one use of v (defined in the nest) survives the new edge from
 * the preheader to the exit. */
static bool use_ok(const kn_recog_nest *n, LLVMValueRef v, LLVMValueRef user, LLVMBasicBlockRef exit,
                   const char **reason) {
  LLVMBasicBlockRef at = LLVMGetInstructionParent(user);
  if (in_nest(n, at)) return true;
  /* the exit's phi that is the result itself (a sum region's, at the top
   * of a function: kn_recog_top.c (g)) takes the kernel's from the launch */
  if (n->result && user == n->result && at == exit) return true;
  /* computed before the nest once it has a preheader (hoist_head) */
  if (ir_head_hoistable(v, n->cfg->blocks[n->nest->header].bb)) return true;
  /* a block entered only from the nest, not its exit (a trap's exit block
   * selecting the offset it reports): the launch's path, which goes to
   * the exit, never reaches it, so the use stays where its value is */
  if (at != exit && only_from_nest(n, at, exit, 0)) return true;
  if (v == n->result) {
    /* Through the exit's phis, or directly when every way into the exit
     * comes from the nest (then a new phi there merges both results). */
    if ((LLVMIsAPHINode(user) && at == exit) || preds_all_in_nest(n, exit)) return true;
    *reason = "the reduction's result is used where the kernel's cannot reach";
    return false;
  }
  *reason = "a value computed in the loop is used after it";
  return false;
}

/* The blocks outside the nest whose terminators branch to its header
 * (live uses: an earlier nest's launch may have added one), each by one
 * edge of a `br`: the first of them, NULL when there is none or one is
 * not so.  Several only when the header has no phis (a region's first
 * block after straight-line code, kn_recog_top.c one_way_in). */
static LLVMBasicBlockRef entering_block(const kn_recog_nest *n, LLVMBasicBlockRef header) {
  LLVMBasicBlockRef from = NULL;
  bool phis = LLVMIsAPHINode(LLVMGetFirstInstruction(header));
  for (LLVMUseRef u = LLVMGetFirstUse(LLVMBasicBlockAsValue(header)); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef term = LLVMGetUser(u);
    if (!LLVMIsATerminatorInst(term)) continue;
    LLVMBasicBlockRef p = LLVMGetInstructionParent(term);
    if (in_nest(n, p)) continue;
    unsigned edges = 0;
    for (unsigned k = 0; k < LLVMGetNumSuccessors(term); k++) edges += LLVMGetSuccessor(term, k) == header;
    if (edges != 1 || !LLVMIsABranchInst(term) || (from && phis)) return NULL;
    if (!from) from = p;
  }
  return from;
}

/* ir_retarget_phis_notify's callback: *ctx is the nest's result, which may
 * be one of the header's phis that a new preheader rebuilds. */
static void follow_result(void *ctx, LLVMValueRef old, LLVMValueRef fresh) {
  LLVMValueRef *result = ctx;
  if (result && *result == old) *result = fresh;
}

/* A block that only branches to the header: the existing preheader, or a
 * new one on the edges from the entering blocks.  NULL when there is no
 * such edge, or several and the header has phis. */
static LLVMBasicBlockRef preheader_of(const kn_recog_nest *n, bool create, LLVMValueRef *result) {
  if (n->preheader) return n->preheader;
  LLVMBasicBlockRef header = n->cfg->blocks[n->nest->header].bb, from = entering_block(n, header);
  if (!from || !create) return from;
  LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(LLVMGetBasicBlockTerminator(from)));
  LLVMBasicBlockRef pre = LLVMInsertBasicBlockInContext(ctx, header, "offload.pre");
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  LLVMPositionBuilderAtEnd(b, pre);
  LLVMBuildBr(b, header);
  LLVMDisposeBuilder(b);
  /* every edge from outside to pre; a retargeted edge leaves the
   * header's uses, so the walk starts again after each */
  LLVMValueRef own_br = LLVMGetBasicBlockTerminator(pre);
  for (LLVMUseRef u = LLVMGetFirstUse(LLVMBasicBlockAsValue(header)); u;) {
    LLVMValueRef term = LLVMGetUser(u);
    if (!LLVMIsATerminatorInst(term) || term == own_br || in_nest(n, LLVMGetInstructionParent(term))) {
      u = LLVMGetNextUse(u);
      continue;
    }
    for (unsigned k = 0; k < LLVMGetNumSuccessors(term); k++)
      if (LLVMGetSuccessor(term, k) == header) LLVMSetSuccessor(term, k, pre);
    u = LLVMGetFirstUse(LLVMBasicBlockAsValue(header));
  }
  ir_retarget_phis_notify(header, from, pre, follow_result, result);
  return pre;
}

/* A value of the nest the host computes before the launch all the same:
 * a load in the nest at an address computed before it (a struct's field,
 * kn_recog_affine.c kr_field_load, whose bytes the kernel's read ranges
 * hold), which host_value loads again in offload.call. */
static bool host_loadable(const kn_recog_nest *n, LLVMValueRef v) {
  return v && LLVMIsALoadInst(v) && !defined_in_nest(n, LLVMGetOperand(v, 0));
}

/* Whether the host computes v before the launch: a value from before the
 * nest, a field (host_loadable), or integer arithmetic, compares,
 * extensions and selects of such values (kn_recog_affine.c
 * kr_host_value, which the recogniser took them as). */
static bool live_outside(const kn_recog_nest *n, LLVMValueRef v, int depth) {
  if (!defined_in_nest(n, v) || host_loadable(n, v)) return true;
  if (depth > 6 || LLVMIsAPHINode(v) || LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMIntegerTypeKind) return false;
  bool pure = ir_int_step_pure(v);
  for (int k = 0; pure && k < LLVMGetNumOperands(v); k++)
    pure = live_outside(n, LLVMGetOperand(v, (unsigned)k), depth + 1);
  return pure;
}

bool off_version_check(const kn_recog_nest *n, const char **reason) {
  LLVMBasicBlockRef pre = preheader_of(n, false, NULL);
  if (!pre) return (*reason = "loop has no single entry from outside", false);
  LLVMValueRef br = LLVMGetBasicBlockTerminator(pre);
  LLVMBasicBlockRef header = n->cfg->blocks[n->nest->header].bb;
  if (n->preheader && (!br || !LLVMIsABranchInst(br) || LLVMIsConditional(br) ||
                       LLVMGetSuccessor(br, 0) != header))
    return (*reason = "loop has no preheader", false);
  if (n->nexits != 1) return (*reason = "loop nest has more than one exit", false);
  for (unsigned i = 0; i < n->desc.nparams; i++) {
    const kn_bind *b = &n->binds[i];
    LLVMValueRef vals[2] = {b->kind == KN_BIND_VALUE ? b->value : b->trip->start,
                            b->kind == KN_BIND_VALUE ? NULL : b->trip->bound};
    for (int k = 0; k < 2; k++)
      if (!live_outside(n, vals[k], 0)) return (*reason = "a live value is computed in the loop", false);
    if (b->kind == KN_BIND_TRIP && !live_outside(n, b->guard, 0))
      return (*reason = "a live value is computed in the loop", false);
    for (int k = 0; b->kind == KN_BIND_VALUE && k < KN_BIND_MORE; k++)
      if (!live_outside(n, b->more[k], 0)) return (*reason = "a live value is computed in the loop", false);
  }
  for (int b = 0; b < n->nest->nbody; b++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(n->cfg->blocks[n->nest->body[b]].bb); i;
         i = LLVMGetNextInstruction(i))
      for (LLVMUseRef u = LLVMGetFirstUse(i); u; u = LLVMGetNextUse(u))
        if (!use_ok(n, i, LLVMGetUser(u), n->exits[0], reason)) return false;
  return true;
}

typedef struct {
  LLVMModuleRef mod;
  LLVMContextRef ctx;
  LLVMBuilderRef b;
  LLVMTypeRef i32, i64, ptr;
  const kn_recog_nest *n;
  LLVMValueRef vmctx;
  LLVMValueRef spare;       /* an i64 cell holding 0 (host_value) */
  LLVMValueRef fields_in;   /* i1: every field host_value loaded lies in
                             * the memory (NULL: none loaded) */
} ov_ctx;

/* v where the launch's params are built: v itself, or for a field the
 * nest loads (host_loadable) the same load again, made only when its
 * bytes lie in the memory (else 0 is read from c->spare, and
 * c->fields_in sends the call to the CPU loop without a launch, which
 * traps where Wasm says). */
static LLVMValueRef host_value(ov_ctx *c, LLVMValueRef v) {
  if (!v || !defined_in_nest(c->n, v)) return v;
  if (!host_loadable(c->n, v)) {
    /* arithmetic on fields (live_outside): computed again from them */
    LLVMValueRef x = LLVMInstructionClone(v);
    for (int k = 0; k < LLVMGetNumOperands(v); k++)
      LLVMSetOperand(x, (unsigned)k, host_value(c, LLVMGetOperand(v, (unsigned)k)));
    LLVMInsertIntoBuilder(c->b, x);
    return x;
  }
  LLVMValueRef ptr = LLVMGetOperand(v, 0);
  LLVMTypeRef t = LLVMTypeOf(v);
  LLVMValueRef base = LLVMBuildLoad2(c->b, c->ptr, c->vmctx, "field.base");
  LLVMValueRef at = LLVMBuildGEP2(c->b, LLVMInt8TypeInContext(c->ctx), c->vmctx,
                                  &(LLVMValueRef){LLVMConstInt(c->i64, offsetof(twasm_vmctx, mem), false)}, 1, "");
  LLVMValueRef mem = LLVMBuildLoad2(c->b, c->ptr, at, "field.mem");
  at = LLVMBuildGEP2(c->b, LLVMInt8TypeInContext(c->ctx), mem,
                     &(LLVMValueRef){LLVMConstInt(c->i64, offsetof(twasm_memory_abi, size_bytes), false)}, 1, "");
  LLVMValueRef size = LLVMBuildLoad2(c->b, c->i64, at, "field.size");
  LLVMValueRef off = LLVMBuildSub(c->b, LLVMBuildPtrToInt(c->b, ptr, c->i64, ""),
                                  LLVMBuildPtrToInt(c->b, base, c->i64, ""), "field.offset");
  uint64_t bytes = LLVMGetIntTypeWidth(t) / 8;
  LLVMValueRef end = LLVMBuildAdd(c->b, off, LLVMConstInt(c->i64, bytes, false), "");
  LLVMValueRef in = LLVMBuildAnd(c->b, LLVMBuildICmp(c->b, LLVMIntULE, end, size, ""),
                                 LLVMBuildICmp(c->b, LLVMIntULE, off, end, ""), "field.in");
  c->fields_in = c->fields_in ? LLVMBuildAnd(c->b, c->fields_in, in, "fields.in") : in;
  LLVMValueRef from = LLVMBuildSelect(c->b, in, ptr, c->spare, "");
  LLVMValueRef x = LLVMBuildLoad2(c->b, t, from, "field");
  LLVMSetAlignment(x, 1);
  return x;
}

static LLVMValueRef host_guard(void *ctx, LLVMValueRef v) { return host_value(ctx, v); }

static LLVMValueRef runtime_fn(ov_ctx *c, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
                               unsigned n) {
  LLVMValueRef f = LLVMGetNamedFunction(c->mod, name);
  if (!f) {
    f = LLVMAddFunction(c->mod, name, LLVMFunctionType(ret, params, n, false));
    unsigned kind = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c->ctx, kind, 0));
  }
  return f;
}

static LLVMValueRef call(ov_ctx *c, LLVMValueRef f, LLVMValueRef *args, unsigned n) {
  return LLVMBuildCall2(c->b, LLVMGlobalGetValueType(f), f, args, n, "");
}

/* A live value as the i64 the kernel reads: integers zero-extended (only
 * the low bits of narrow ones are read), floats as their bit patterns. */
static LLVMValueRef as_i64(ov_ctx *c, LLVMValueRef v, bool sign) {
  LLVMTypeRef t = LLVMTypeOf(v);
  switch (LLVMGetTypeKind(t)) {
  case LLVMFloatTypeKind: v = LLVMBuildBitCast(c->b, v, c->i32, ""); break;
  case LLVMDoubleTypeKind: return LLVMBuildBitCast(c->b, v, c->i64, "");
  case LLVMPointerTypeKind: return LLVMBuildPtrToInt(c->b, v, c->i64, "");
  default: break;
  }
  if (LLVMGetIntTypeWidth(LLVMTypeOf(v)) == 64) return v;
  return sign ? LLVMBuildSExt(c->b, v, c->i64, "") : LLVMBuildZExt(c->b, v, c->i64, "");
}

static LLVMValueRef trip_param(ov_ctx *c, const kn_bind *b) {
  const ir_trip *t = b->trip;
  LLVMValueRef zero = LLVMConstInt(c->i64, 0, false);
  LLVMValueRef start = t->start ? as_i64(c, host_value(c, t->start), true) : zero;
  if (t->start_add)
    start = LLVMBuildAdd(c->b, start, LLVMConstInt(c->i64, (uint64_t)t->start_add, true), "");
  LLVMValueRef args[] = {start,
                         t->bound ? as_i64(c, host_value(c, t->bound), true) : zero,
                         LLVMConstInt(c->i64, (uint64_t)t->step, true),
                         LLVMConstInt(c->i32, ir_trip_how(t), false),
                         LLVMConstInt(c->i32, b->scale, false)};
  LLVMTypeRef types[] = {c->i64, c->i64, c->i64, c->i32, c->i32};
  LLVMValueRef n;
  if (!b->top_tested) {
    n = call(c, runtime_fn(c, "twasm_rt_trip_count", c->i64, types, 5), args, 5);
  } else {
    /* the guarded do-while runs as often as `for (x = start; x PRED bound;)`:
     * header runs of that loop less one (and -1, unknown, stays negative) */
    args[3] = LLVMConstInt(c->i32, ir_trip_how(t) & ~(uint32_t)TWASM_TRIP_NEXT, false);
    n = call(c, runtime_fn(c, "twasm_rt_trip_count", c->i64, types, 5), args, 5);
    n = LLVMBuildSub(c->b, n, LLVMConstInt(c->i64, 1, false), "");
  }
  if (!b->guard) return n;
  LLVMValueRef guard = host_value(c, b->guard);
  return b->guard_enters ? LLVMBuildSelect(c->b, guard, n, zero, "") : LLVMBuildSelect(c->b, guard, zero, n, "");
}

/* The values of the nest's first block that code after it uses, pure
 * arithmetic on values from before it (use_ok), moved to the end of pre:
 * the launch's path skips that block. */
static void hoist_head(ov_ctx *c, LLVMBasicBlockRef pre) {
  LLVMBasicBlockRef head = c->n->cfg->blocks[c->n->nest->header].bb;
  LLVMBuilderRef b = LLVMCreateBuilderInContext(c->ctx);
  LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(pre));
  for (LLVMValueRef i = LLVMGetFirstInstruction(head), next; i; i = next) {
    next = LLVMGetNextInstruction(i);
    bool outside = false;
    for (LLVMUseRef u = LLVMGetFirstUse(i); u && !outside; u = LLVMGetNextUse(u))
      outside = !in_nest(c->n, LLVMGetInstructionParent(LLVMGetUser(u)));
    if (outside && ir_head_hoistable(i, head)) {
      ir_head_hoist(i, head, b);
      next = LLVMGetFirstInstruction(head); /* its operands moved too */
    }
  }
  LLVMDisposeBuilder(b);
}

static LLVMValueRef entry_alloca(ov_ctx *c, LLVMValueRef fn, LLVMTypeRef t, const char *name) {
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fn);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(c->ctx);
  LLVMValueRef first = LLVMGetFirstInstruction(entry);
  if (first) LLVMPositionBuilderBefore(b, first);
  else LLVMPositionBuilderAtEnd(b, entry);
  LLVMValueRef a = LLVMBuildAlloca(b, t, name);
  LLVMDisposeBuilder(b);
  return a;
}

/* The block the nest leaves to now.  Where the nest's exit is the header
 * of a nest versioned before it, that nest put its offload call in a new
 * block on the edge (preheader_of): a kernel of this nest must go there
 * too, or the next nest would always run on the CPU after it. */
static LLVMBasicBlockRef exit_now(const kn_recog_nest *n) {
  LLVMBasicBlockRef exit = n->exits[0];
  if (n->result) return exit;
  for (int e = 0; e < n->nest->nexits; e++) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(n->cfg->blocks[n->nest->exits[e].from].bb);
    for (unsigned s = 0; term && s < LLVMGetNumSuccessors(term); s++) {
      LLVMBasicBlockRef to = LLVMGetSuccessor(term, s);
      LLVMValueRef br = LLVMGetBasicBlockTerminator(to);
      if (strncmp(LLVMGetBasicBlockName(to), "offload.pre", 11) != 0 || !br || !LLVMIsABranchInst(br) ||
          !LLVMIsConditional(br) || LLVMGetSuccessor(br, 1) != exit)
        continue;
      return to;
    }
  }
  return exit;
}

/* Adds the preheader's incoming value to every phi of the exit, and routes
 * other uses of the reduction's result through a new phi. */
static void patch_exit(ov_ctx *c, const kn_recog_nest *n, LLVMBasicBlockRef pre,
                       LLVMBasicBlockRef exit, LLVMValueRef own, LLVMValueRef result, bool merge) {
  LLVMValueRef merged = NULL;
  if (merge) {
    LLVMBuilderRef b = LLVMCreateBuilderInContext(c->ctx);
    LLVMValueRef first = LLVMGetFirstInstruction(exit);
    LLVMPositionBuilderBefore(b, first);
    merged = LLVMBuildPhi(b, LLVMTypeOf(own), "offload.result");
    LLVMDisposeBuilder(b);
  }
  for (LLVMValueRef phi = LLVMGetFirstInstruction(exit); phi && LLVMIsAPHINode(phi);
       phi = LLVMGetNextInstruction(phi)) {
    if (phi == merged) continue;
    LLVMValueRef v = LLVMGetIncomingValue(phi, 0);
    for (unsigned k = 0; k < LLVMCountIncoming(phi); k++)
      if (in_nest(n, LLVMGetIncomingBlock(phi, k))) v = LLVMGetIncomingValue(phi, k);
    LLVMValueRef in = own && (v == own || phi == own) ? result : v;
    LLVMAddIncoming(phi, &in, &pre, 1);
  }
  if (!merged) return;
  /* Every other use outside the nest now reads the merged value.  A user
   * can hold own several times (a header's phi that an earlier nest's
   * versioning gave more ways in): all of them move at once, the next use
   * saved may be one of them, so the walk starts again after each user. */
  for (LLVMUseRef u = LLVMGetFirstUse(own); u;) {
    LLVMValueRef user = LLVMGetUser(u);
    if (user == merged || in_nest(n, LLVMGetInstructionParent(user)) ||
        (LLVMIsAPHINode(user) && LLVMGetInstructionParent(user) == exit)) {
      u = LLVMGetNextUse(u);
      continue;
    }
    for (unsigned k = 0; k < (unsigned)LLVMGetNumOperands(user); k++)
      if (LLVMGetOperand(user, k) == own) LLVMSetOperand(user, k, merged);
    u = LLVMGetFirstUse(own);
  }
  for (LLVMUseRef u = LLVMGetFirstUse(LLVMBasicBlockAsValue(exit)); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef term = LLVMGetUser(u);
    if (!LLVMIsATerminatorInst(term)) continue;
    LLVMBasicBlockRef from = LLVMGetInstructionParent(term);
    if (from == pre) continue;
    LLVMValueRef v = own;
    LLVMAddIncoming(merged, &v, &from, 1);
  }
  LLVMAddIncoming(merged, &result, &pre, 1);
}

/* header's phis take from `from` what they take from pre. */
static void enter_like_pre(LLVMBasicBlockRef header, LLVMBasicBlockRef pre, LLVMBasicBlockRef from) {
  for (LLVMValueRef phi = LLVMGetFirstInstruction(header); phi && LLVMIsAPHINode(phi);
       phi = LLVMGetNextInstruction(phi))
    for (unsigned k = 0, nin = LLVMCountIncoming(phi); k < nin; k++)
      if (LLVMGetIncomingBlock(phi, k) == pre) {
        LLVMValueRef v = LLVMGetIncomingValue(phi, k);
        LLVMAddIncoming(phi, &v, &from, 1);
        break;
      }
}

/* The kernel's counter NAME.ID: internal to the module, zero at start. */
static LLVMValueRef counter(ov_ctx *c, const char *name, uint32_t id) {
  char full[64];
  snprintf(full, sizeof full, "twasm.offload.%s.%u", name, id);
  LLVMValueRef g = LLVMGetNamedGlobal(c->mod, full);
  if (g) return g;
  g = LLVMAddGlobal(c->mod, c->i32, full);
  LLVMSetLinkage(g, LLVMInternalLinkage);
  LLVMSetInitializer(g, LLVMConstInt(c->i32, 0, false));
  return g;
}

/* Replaces pre's branch to header by the gate and the skip count (see the
 * top of the file) and returns the new block offload.call, positioned at
 * its end; *back is offload.back, still empty. */
static LLVMBasicBlockRef gate_block(ov_ctx *c, LLVMBasicBlockRef pre, LLVMBasicBlockRef header,
                                    uint32_t id, LLVMBasicBlockRef *back) {
  LLVMValueRef gate = LLVMGetNamedGlobal(c->mod, "twasm_rt_offload_gate");
  if (!gate) gate = LLVMAddGlobal(c->mod, c->i32, "twasm_rt_offload_gate");
  LLVMBasicBlockRef skip_bb = LLVMInsertBasicBlockInContext(c->ctx, header, "offload.skip");
  LLVMBasicBlockRef dec_bb = LLVMInsertBasicBlockInContext(c->ctx, header, "offload.dec");
  LLVMBasicBlockRef call_bb = LLVMInsertBasicBlockInContext(c->ctx, header, "offload.call");
  *back = LLVMInsertBasicBlockInContext(c->ctx, header, "offload.back");
  LLVMValueRef br = LLVMGetBasicBlockTerminator(pre), zero = LLVMConstInt(c->i32, 0, false);
  LLVMPositionBuilderBefore(c->b, br);
  LLVMValueRef open = LLVMBuildLoad2(c->b, c->i32, gate, "offload.gate");
  LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntNE, open, zero, ""), skip_bb, header);
  LLVMInstructionEraseFromParent(br);
  LLVMValueRef skip = counter(c, "skip", id);
  LLVMPositionBuilderAtEnd(c->b, skip_bb);
  LLVMValueRef left = LLVMBuildLoad2(c->b, c->i32, skip, "offload.skip");
  LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, LLVMIntEQ, left, zero, ""), call_bb, dec_bb);
  LLVMPositionBuilderAtEnd(c->b, dec_bb);
  LLVMBuildStore(c->b, LLVMBuildSub(c->b, left, LLVMConstInt(c->i32, 1, false), ""), skip);
  LLVMBuildBr(c->b, header);
  enter_like_pre(header, pre, dec_bb);
  enter_like_pre(header, pre, *back);
  LLVMPositionBuilderAtEnd(c->b, call_bb);
  return call_bb;
}

/* offload.back: the next skip count from the runtime's answer done. */
static void back_off(ov_ctx *c, LLVMBasicBlockRef back, LLVMBasicBlockRef header, LLVMValueRef done,
                     uint32_t id) {
  LLVMValueRef skip = counter(c, "skip", id), next = counter(c, "next", id);
  LLVMPositionBuilderAtEnd(c->b, back);
  LLVMValueRef prev = LLVMBuildLoad2(c->b, c->i32, next, "");
  LLVMValueRef grown = LLVMBuildOr(c->b, LLVMBuildShl(c->b, prev, LLVMConstInt(c->i32, 1, false), ""),
                                   LLVMConstInt(c->i32, 1, false), "");
  LLVMValueRef max = LLVMConstInt(c->i32, TWASM_OFFLOAD_SKIP_MAX, false);
  grown = LLVMBuildSelect(c->b, LLVMBuildICmp(c->b, LLVMIntUGT, grown, max, ""), max, grown, "");
  LLVMValueRef small =
      LLVMBuildICmp(c->b, LLVMIntEQ, done, LLVMConstInt(c->i32, TWASM_OFFLOAD_TOO_SMALL, false), "");
  LLVMValueRef n = LLVMBuildSelect(c->b, small, grown, LLVMConstInt(c->i32, 0, false), "offload.backoff");
  LLVMBuildStore(c->b, n, next);
  LLVMBuildStore(c->b, n, skip);
  LLVMBuildBr(c->b, header);
}

void off_version_apply(LLVMValueRef fn, const kn_recog_nest *n, uint32_t kernel_id, bool unwaitable) {
  ov_ctx c = {.mod = LLVMGetGlobalParent(fn)};
  c.ctx = LLVMGetModuleContext(c.mod);
  c.i32 = LLVMInt32TypeInContext(c.ctx);
  c.i64 = LLVMInt64TypeInContext(c.ctx);
  c.ptr = LLVMPointerTypeInContext(c.ctx, 0);
  unsigned np = 0;
  for (int p = 0; p <= n->nparts; p++) np += (p ? &n->parts[p - 1] : n)->desc.nparams;
  np = np ? np : 1;
  LLVMValueRef params = entry_alloca(&c, fn, LLVMArrayType2(c.i64, np), "offload.params");
  LLVMValueRef cell = entry_alloca(&c, fn, c.i64, "offload.cell");
  c.b = LLVMCreateBuilderInContext(c.ctx);
  c.n = n;
  c.vmctx = LLVMGetParam(fn, 0);
  /* before the new edge; not for a result that is the exit's phi */
  bool merge = n->result && preds_all_in_nest(n, n->exits[0]) &&
               !(LLVMIsAPHINode(n->result) && LLVMGetInstructionParent(n->result) == n->exits[0]);
  LLVMValueRef own = n->result; /* the nest's result, followed if a new preheader rebuilds it */
  LLVMBasicBlockRef pre = preheader_of(n, true, &own);
  hoist_head(&c, pre);
  LLVMBasicBlockRef header = LLVMGetSuccessor(LLVMGetBasicBlockTerminator(pre), 0), exit = exit_now(n);
  LLVMBasicBlockRef back;
  LLVMBasicBlockRef call_bb = gate_block(&c, pre, header, kernel_id, &back);
  c.spare = entry_alloca(&c, fn, c.i64, "offload.spare");
  LLVMBuildStore(c.b, LLVMConstInt(c.i64, 0, false), c.spare);
  /* the parts' params one after the other (a nest of several parts) */
  unsigned at = 0;
  LLVMValueRef guards_ok = NULL, part_params[KN_MAX_PARAMS];
  for (int p = 0; p <= n->nparts; p++) {
    const kn_recog_nest *part = p ? &n->parts[p - 1] : n;
    for (unsigned i = 0; i < part->desc.nparams; i++, at++) {
      const kn_bind *b = &part->binds[i];
      LLVMValueRef v = b->kind == KN_BIND_TRIP ? trip_param(&c, b) : as_i64(&c, host_value(&c, b->value), false);
      if (b->kind == KN_BIND_VALUE && b->coeff)
        v = LLVMBuildMul(c.b, v, LLVMConstInt(c.i64, (uint64_t)b->coeff, true), "");
      for (int k = 0; b->kind == KN_BIND_VALUE && k < KN_BIND_MORE && b->more[k]; k++)
        v = LLVMBuildAdd(c.b, v,
                         LLVMBuildMul(c.b, as_i64(&c, host_value(&c, b->more[k]), false),
                                      LLVMConstInt(c.i64, (uint64_t)b->more_coeff[k], true), ""),
                         "");
      if (b->kind == KN_BIND_VALUE && b->addend)
        v = LLVMBuildAdd(c.b, v, LLVMConstInt(c.i64, (uint64_t)b->addend, true), "");
      LLVMValueRef idx = LLVMConstInt(c.i64, at, false);
      LLVMBuildStore(c.b, v, LLVMBuildGEP2(c.b, c.i64, params, &idx, 1, ""));
      part_params[i] = v;
    }
    /* guard exits (an assert on an index): none may fire in the box */
    guards_ok = off_and(c.b, guards_ok, off_guard_ok(c.b, part, part_params, host_guard, &c));
  }
  /* a field outside the memory, or a guard that may fire: the CPU loop,
   * no launch */
  LLVMBasicBlockRef launch_bb = call_bb;
  LLVMValueRef go = off_and(c.b, c.fields_in, guards_ok);
  if (go) {
    LLVMBasicBlockRef from = LLVMGetInsertBlock(c.b);
    launch_bb = LLVMInsertBasicBlockInContext(c.ctx, header, "offload.launch");
    LLVMBuildCondBr(c.b, go, launch_bb, header);
    enter_like_pre(header, pre, from);
    LLVMPositionBuilderAtEnd(c.b, launch_bb);
  }
  LLVMValueRef done;
  if (!n->nparts) {
    LLVMTypeRef types[] = {c.ptr, c.i32, c.ptr, c.ptr};
    LLVMValueRef args[] = {LLVMGetParam(fn, 0), LLVMConstInt(c.i32, kernel_id, false), params, cell};
    done = call(&c, runtime_fn(&c, "twasm_rt_offload", c.i32, types, 4), args, 4);
    if (unwaitable)
      LLVMSetMetadata(done, LLVMGetMDKindIDInContext(c.ctx, OFF_MD_UNWAITED, sizeof OFF_MD_UNWAITED - 1),
                      LLVMMetadataAsValue(c.ctx, LLVMMDNodeInContext2(c.ctx, NULL, 0)));
  } else {
    LLVMTypeRef types[] = {c.ptr, c.i32, c.i32, c.ptr};
    LLVMValueRef args[] = {LLVMGetParam(fn, 0), LLVMConstInt(c.i32, kernel_id, false),
                           LLVMConstInt(c.i32, (unsigned)n->nparts + 1, false), params};
    done = call(&c, runtime_fn(&c, "twasm_rt_offload_group", c.i32, types, 4), args, 4);
  }
  LLVMValueRef result = own ? LLVMBuildLoad2(c.b, LLVMTypeOf(own), cell, "") : NULL;
  LLVMValueRef cond = LLVMBuildICmp(c.b, LLVMIntEQ, done, LLVMConstInt(c.i32, 1, false), "");
  LLVMBuildCondBr(c.b, cond, exit, back);
  back_off(&c, back, header, done, kernel_id);
  LLVMDisposeBuilder(c.b);
  patch_exit(&c, n, launch_bb, exit, own, result, merge);
}
