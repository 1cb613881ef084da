/* low_libc.c: native fast paths for the C library routines that
 * low_libc_match.c recognises.  Calls and sealed tables reach such a
 * function through a small wrapper (mc->callees) that runs a native
 * equivalent from the runtime (runtime/rt_libc.c) where it gives the same
 * result without trapping, and otherwise tail-calls the function's own
 * Wasm code, which reads, traps and reports exactly as before.  The
 * descriptor keeps the Wasm code, so exports and traps name it as ever;
 * the wrapper is small and LLVM inlines it into its callers. */
#include <stdio.h>
#include <string.h>

#include "low_internal.h"

/* A runtime helper that only reads memory and always returns. */
static LLVMValueRef helper(low_module_ctx *mc, const char *name, LLVMTypeRef ret, LLVMTypeRef *params,
                           unsigned n) {
  LLVMValueRef fn = LLVMGetNamedFunction(mc->mod, name);
  if (fn) return fn;
  fn = LLVMAddFunction(mc->mod, name, LLVMFunctionType(ret, params, n, false));
  const char *attrs[] = {"nounwind", "willreturn", "nofree", "nosync"};
  for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(mc->ctx, LLVMGetEnumAttributeKindForName(attrs[i], strlen(attrs[i])), 0));
  /* memory(read): Ref for argument, inaccessible and other memory (two
   * bits per location in LLVM's MemoryEffects). */
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                          LLVMCreateEnumAttribute(mc->ctx, LLVMGetEnumAttributeKindForName("memory", 6), 0x15));
  return fn;
}

static LLVMValueRef invariant_load(low_module_ctx *mc, LLVMBuilderRef b, LLVMTypeRef ty, LLVMValueRef obj,
                                   uint32_t offset, const char *name) {
  LLVMValueRef at = obj;
  if (offset) {
    LLVMValueRef off = LLVMConstInt(mc->t_i64, offset, false);
    at = LLVMBuildInBoundsGEP2(b, mc->t_i8, obj, &off, 1, "");
  }
  LLVMValueRef v = LLVMBuildLoad2(b, ty, at, name);
  unsigned kind = LLVMGetMDKindIDInContext(mc->ctx, "invariant.load", 14);
  LLVMSetMetadata(v, kind, LLVMMetadataAsValue(mc->ctx, LLVMMDNodeInContext2(mc->ctx, NULL, 0)));
  return v;
}

typedef struct {
  low_module_ctx *mc;
  LLVMBuilderRef b;
  LLVMValueRef wrap, wasm;       /* the wrapper and the Wasm code */
  LLVMValueRef base, size;       /* memory 0: base pointer, size in bytes (i64) */
} wrap_ctx;

static LLVMValueRef param(wrap_ctx *w, unsigned i) { return LLVMGetParam(w->wrap, i); }
static LLVMValueRef zext64(wrap_ctx *w, LLVMValueRef v) { return LLVMBuildZExt(w->b, v, w->mc->t_i64, ""); }

/* Ends the current block with `ret result` when fast, else with a tail
 * call of the Wasm code on the wrapper's own arguments. */
static void finish(wrap_ctx *w, LLVMValueRef fast, LLVMValueRef result) {
  low_module_ctx *mc = w->mc;
  LLVMBasicBlockRef yes = LLVMAppendBasicBlockInContext(mc->ctx, w->wrap, "native");
  LLVMBasicBlockRef no = LLVMAppendBasicBlockInContext(mc->ctx, w->wrap, "wasm");
  LLVMValueRef br = LLVMBuildCondBr(w->b, fast, yes, no);
  low_mark_unlikely(mc, br, false);
  LLVMPositionBuilderAtEnd(w->b, yes);
  LLVMBuildRet(w->b, result);
  LLVMPositionBuilderAtEnd(w->b, no);
  unsigned n = LLVMCountParams(w->wrap);
  LLVMValueRef args[8];
  for (unsigned i = 0; i < n && i < 8; i++) args[i] = param(w, i);
  LLVMValueRef call = LLVMBuildCall2(w->b, LLVMGlobalGetValueType(w->wasm), w->wasm, args, n, "");
  LLVMSetTailCallKind(call, LLVMTailCallKindMustTail);
  LLVMBuildRet(w->b, call);
}

/* memcmp(l, r, n): native when both ranges lie in memory (no read traps). */
static void wrap_memcmp(wrap_ctx *w) {
  low_module_ctx *mc = w->mc;
  LLVMValueRef l = param(w, 1), r = param(w, 2), n = param(w, 3);
  LLVMValueRef len = zext64(w, n);
  LLVMValueRef l_ok = LLVMBuildICmp(w->b, LLVMIntULE, LLVMBuildAdd(w->b, zext64(w, l), len, ""), w->size, "");
  LLVMValueRef r_ok = LLVMBuildICmp(w->b, LLVMIntULE, LLVMBuildAdd(w->b, zext64(w, r), len, ""), w->size, "");
  LLVMValueRef ok = LLVMBuildAnd(w->b, l_ok, r_ok, "in_bounds");
  LLVMTypeRef ps[] = {mc->t_ptr, mc->t_i32, mc->t_i32, mc->t_i32};
  LLVMValueRef fn = helper(mc, "twasm_rt_memcmp", mc->t_i32, ps, 4);
  /* The call sits in the native block: it may only run in bounds. */
  LLVMBasicBlockRef call_bb = LLVMAppendBasicBlockInContext(mc->ctx, w->wrap, "call");
  LLVMBasicBlockRef no = LLVMAppendBasicBlockInContext(mc->ctx, w->wrap, "wasm");
  low_mark_unlikely(mc, LLVMBuildCondBr(w->b, ok, call_bb, no), false);
  LLVMPositionBuilderAtEnd(w->b, call_bb);
  LLVMValueRef args[] = {w->base, l, r, n};
  LLVMBuildRet(w->b, LLVMBuildCall2(w->b, LLVMGlobalGetValueType(fn), fn, args, 4, "cmp"));
  LLVMPositionBuilderAtEnd(w->b, no);
  LLVMValueRef all[] = {param(w, 0), l, r, n};
  LLVMValueRef call = LLVMBuildCall2(w->b, LLVMGlobalGetValueType(w->wasm), w->wasm, all, 4, "");
  LLVMSetTailCallKind(call, LLVMTailCallKindMustTail);
  LLVMBuildRet(w->b, call);
}

/* strcmp(l, r) and strlen(s): the helper says when it reached the end of
 * memory, where the Wasm code is to run. */
static void wrap_scan(wrap_ctx *w, low_libc_kind kind) {
  low_module_ctx *mc = w->mc;
  bool is_cmp = kind == LOW_LIBC_STRCMP;
  LLVMTypeRef ps[] = {mc->t_ptr, mc->t_i64, mc->t_i32, mc->t_i32};
  LLVMValueRef fn = is_cmp ? helper(mc, "twasm_rt_strcmp", mc->t_i64, ps, 4)
                           : helper(mc, "twasm_rt_strlen", mc->t_i64, ps, 3);
  LLVMValueRef args[] = {w->base, w->size, param(w, 1), is_cmp ? param(w, 2) : NULL};
  LLVMValueRef v = LLVMBuildCall2(w->b, LLVMGlobalGetValueType(fn), fn, args, is_cmp ? 4 : 3, "scan");
  LLVMValueRef fallback = LLVMConstInt(mc->t_i64, (uint64_t)TWASM_RT_LIBC_FALLBACK, false);
  LLVMValueRef done = LLVMBuildICmp(w->b, LLVMIntNE, v, fallback, "");
  finish(w, done, LLVMBuildTrunc(w->b, v, mc->t_i32, ""));
}

/* The wrapper of defined function i (of a recognised kind). */
static LLVMValueRef build_wrapper(low_module_ctx *mc, uint32_t i, low_libc_kind kind) {
  LLVMValueRef wasm = mc->funcs[i];
  size_t len;
  const char *name = LLVMGetValueName2(wasm, &len);
  char wname[160];
  snprintf(wname, sizeof wname, "%.*s.native", (int)(len > 140 ? 140 : len), name);
  LLVMValueRef wrap = LLVMAddFunction(mc->mod, wname, mc->fn_types[mc->m->funcs[i].type_index]);
  LLVMSetLinkage(wrap, LLVMInternalLinkage);
  wrap_ctx w = {.mc = mc, .b = LLVMCreateBuilderInContext(mc->ctx), .wrap = wrap, .wasm = wasm};
  LLVMPositionBuilderAtEnd(w.b, LLVMAppendBasicBlockInContext(mc->ctx, wrap, "entry"));
  w.base = invariant_load(mc, w.b, mc->t_ptr, param(&w, 0), 0, "mem_base");
  LLVMValueRef mem = invariant_load(mc, w.b, mc->t_ptr, param(&w, 0), 8, "mem");
  /* memory.grow changes the size: loaded at every call. */
  LLVMValueRef size_at = LLVMBuildInBoundsGEP2(w.b, mc->t_i8, mem, (LLVMValueRef[]){LLVMConstInt(mc->t_i64, 8, false)}, 1, "");
  w.size = LLVMBuildLoad2(w.b, mc->t_i64, size_at, "size_bytes");
  if (kind == LOW_LIBC_MEMCMP) wrap_memcmp(&w);
  else wrap_scan(&w, kind);
  LLVMDisposeBuilder(w.b);
  return wrap;
}

/* Signature each kind must have: its params after vmctx, all i32, and an
 * i32 result (a fingerprint already pins it; checked again for safety). */
static bool signature_ok(const wasm_functype *ft, low_libc_kind kind) {
  uint32_t want = kind == LOW_LIBC_MEMCMP ? 3 : kind == LOW_LIBC_STRCMP ? 2 : 1;
  if (ft->nparams != want || ft->nresults != 1 || ft->results[0] != VT_I32) return false;
  for (uint32_t i = 0; i < want; i++)
    if (ft->params[i] != VT_I32) return false;
  return true;
}

void low_libc_init(low_module_ctx *mc) {
  const wasm_module *m = mc->m;
  mc->callees = tw_arena_alloc(&mc->arena, (m->nfuncs + 1) * sizeof *mc->callees);
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    mc->callees[i] = mc->funcs[i];
    if (m->funcs[i].imported || m->nmems == 0) continue;
    low_libc_kind kind = low_libc_match(m, &m->funcs[i]);
    if (kind == LOW_LIBC_MEMCMP || kind == LOW_LIBC_STRCMP || kind == LOW_LIBC_STRLEN)
      if (signature_ok(&m->types[m->funcs[i].type_index], kind)) mc->callees[i] = build_wrapper(mc, i, kind);
  }
}
