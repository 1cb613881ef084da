/* low_module.c: lowering entry point: module context, native signatures,
 * runtime declarations, per-type invokers and host trampolines, main(). */
#include <stdio.h>
#include <string.h>

#include <llvm-c/Analysis.h>

#include "ir.h"
#include "low_internal.h"

bool low_descriptor(low_module_ctx *mc, LLVMValueRef *invokers,
                    LLVMValueRef *trampolines, tw_diag *d);

LLVMTypeRef low_valtype(low_module_ctx *mc, uint8_t valtype) {
  switch (valtype) {
  case VT_I32: return mc->t_i32;
  case VT_I64: return mc->t_i64;
  case VT_F32: return mc->t_f32;
  case VT_F64: return mc->t_f64;
  case VT_V128: return mc->t_v128;
  default: return mc->t_ptr; /* funcref, externref */
  }
}

static LLVMTypeRef result_type(low_module_ctx *mc, const wasm_functype *ft) {
  if (ft->nresults == 0) return mc->t_void;
  if (ft->nresults == 1) return low_valtype(mc, ft->results[0]);
  LLVMTypeRef *fields = tw_arena_alloc(&mc->arena, ft->nresults * sizeof *fields);
  for (uint32_t i = 0; i < ft->nresults; i++) fields[i] = low_valtype(mc, ft->results[i]);
  return LLVMStructTypeInContext(mc->ctx, fields, ft->nresults, false);
}

static LLVMTypeRef native_type(low_module_ctx *mc, const wasm_functype *ft) {
  LLVMTypeRef *params = tw_arena_alloc(&mc->arena, (ft->nparams + 1) * sizeof *params);
  params[0] = mc->t_ptr;
  for (uint32_t i = 0; i < ft->nparams; i++) params[i + 1] = low_valtype(mc, ft->params[i]);
  return LLVMFunctionType(result_type(mc, ft), params, ft->nparams + 1, false);
}

static LLVMValueRef declare(low_module_ctx *mc, const char *name, LLVMTypeRef *ty,
                            LLVMTypeRef ret, LLVMTypeRef *params, unsigned n) {
  *ty = LLVMFunctionType(ret, params, n, false);
  LLVMValueRef fn = LLVMAddFunction(mc->mod, name, *ty);
  return fn;
}

static void declare_runtime(low_module_ctx *mc) {
  LLVMTypeRef p = mc->t_ptr, i32 = mc->t_i32, v = mc->t_void;
  mc->trap_fn = declare(mc, "twasm_rt_trap", &mc->trap_ty, v, (LLVMTypeRef[]){p, i32, i32, i32}, 4);
  unsigned noret = LLVMGetEnumAttributeKindForName("noreturn", 8);
  unsigned cold = LLVMGetEnumAttributeKindForName("cold", 4);
  LLVMAddAttributeAtIndex(mc->trap_fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(mc->ctx, noret, 0));
  LLVMAddAttributeAtIndex(mc->trap_fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(mc->ctx, cold, 0));
  /* What the trap does (runtime/rt_trap.c): it reads the vmctx, the
   * module's names and the native stack (the backtrace), fills a trap
   * record in the runtime's frame of the innermost twasm_call (or prints
   * and _exits) and siglongjmps there.  It reads all memory (every store
   * before it stays: the host sees memory after a trap) and writes only
   * memory no code of the module can reach: inaccessible memory.  Not
   * memory(read): a call that only reads, whose result nobody uses, is
   * "folded or dead" for FastISel, so at -O0 no call was emitted and the
   * trap block fell through into the next block's code (spec-traps
   * crashed, PERFORMANCE.md round 11).  nounwind: a longjmp is no
   * exception (C code calls it nounwind).  Not willreturn: a call that
   * may trap is never deleted or speculated.  Without this every function
   * that may trap wrote all memory for FunctionAttrs, and its callers
   * loaded the memory size and linear memory again after each call. */
  LLVMAddAttributeAtIndex(mc->trap_fn, LLVMAttributeFunctionIndex,
                          LLVMCreateEnumAttribute(mc->ctx, LLVMGetEnumAttributeKindForName("memory", 6),
                                                  LOW_MEMORY_READ_MAY_TRAP));
  LLVMAddAttributeAtIndex(mc->trap_fn, LLVMAttributeFunctionIndex,
                          LLVMCreateEnumAttribute(mc->ctx, LLVMGetEnumAttributeKindForName("nounwind", 8), 0));
  mc->mem_grow_fn = declare(mc, "twasm_rt_memory_grow", &mc->mem_grow_ty, i32, (LLVMTypeRef[]){p, i32, i32}, 3);
  mc->table_grow_fn = declare(mc, "twasm_rt_table_grow", &mc->table_grow_ty, i32, (LLVMTypeRef[]){p, i32, p, i32}, 4);
  mc->mem_init_fn = declare(mc, "twasm_rt_memory_init", &mc->mem_init_ty, i32, (LLVMTypeRef[]){p, i32, i32, i32, i32}, 5);
  mc->mem_copy_fn = declare(mc, "twasm_rt_memory_copy", &mc->mem_copy_ty, i32, (LLVMTypeRef[]){p, i32, i32, i32}, 4);
  mc->mem_fill_fn = declare(mc, "twasm_rt_memory_fill", &mc->mem_fill_ty, i32, (LLVMTypeRef[]){p, i32, i32, i32}, 4);
  mc->data_drop_fn = declare(mc, "twasm_rt_data_drop", &mc->data_drop_ty, v, (LLVMTypeRef[]){p, i32}, 2);
  mc->table_init_fn = declare(mc, "twasm_rt_table_init", &mc->table_init_ty, i32, (LLVMTypeRef[]){p, i32, i32, i32, i32, i32}, 6);
  mc->table_copy_fn = declare(mc, "twasm_rt_table_copy", &mc->table_copy_ty, i32, (LLVMTypeRef[]){p, i32, i32, i32, i32, i32}, 6);
  mc->table_fill_fn = declare(mc, "twasm_rt_table_fill", &mc->table_fill_ty, i32, (LLVMTypeRef[]){p, i32, i32, p, i32}, 5);
  mc->elem_drop_fn = declare(mc, "twasm_rt_elem_drop", &mc->elem_drop_ty, v, (LLVMTypeRef[]){p, i32}, 2);
  mc->stack_limit = LLVMAddGlobal(mc->mod, mc->t_i64, "twasm_rt_stack_limit");
  /* An executable links the runtime statically: the limit is then in the
   * same link unit, and a hidden declaration lets each stack check compare
   * with it directly (`cmp limit(%rip),%rsp`) instead of taking its
   * address first (a GOT load the linker relaxes to `lea`).  Objects and
   * shared objects may be linked against libtwasm-rt.so: default there. */
  if (mc->opt->emit_main) LLVMSetVisibility(mc->stack_limit, LLVMHiddenVisibility);
}

/* A recursion passes its vmctx on unchanged; in a callee-saved register
 * that every Wasm function leaves as it found it, the value is already in
 * place for the next call and after it, where in the first argument
 * register it had to be kept in another callee-saved register across each
 * call (a push and a pop per call, and often one more push to keep the
 * stack aligned).  The same register at every definition and call site;
 * twasm_abi.h's code pointers are only ever called through the invokers
 * built here. */
static LLVMAttributeRef swiftself(low_module_ctx *mc) {
  return LLVMCreateEnumAttribute(mc->ctx, LLVMGetEnumAttributeKindForName("swiftself", 9), 0);
}

static LLVMAttributeRef attr(low_module_ctx *mc, const char *name, uint64_t value) {
  return LLVMCreateEnumAttribute(mc->ctx, LLVMGetEnumAttributeKindForName(name, strlen(name)), value);
}

/* The vmctx is always a whole, valid twasm_vmctx (an instance's, or the
 * callee's from its twasm_func): its invariant fields may then be loaded
 * again where keeping them in a register across a call costs more. */
void low_wasm_abi_fn(low_module_ctx *mc, LLVMValueRef fn) {
  LLVMAddAttributeAtIndex(fn, 1, swiftself(mc));
  LLVMAddAttributeAtIndex(fn, 1, attr(mc, "nonnull", 0));
  LLVMAddAttributeAtIndex(fn, 1, attr(mc, "noundef", 0));
  LLVMAddAttributeAtIndex(fn, 1, attr(mc, "dereferenceable", sizeof(twasm_vmctx)));
  LLVMAddAttributeAtIndex(fn, 1, attr(mc, "align", 8));
}

void low_wasm_abi_call(low_module_ctx *mc, LLVMValueRef call) {
  LLVMAddCallSiteAttribute(call, 1, swiftself(mc));
}

/* Symbol names: readable in profilers, always ASCII and unique. */
static void func_symbol(const wasm_func *fn, uint32_t index, char *buf, size_t cap) {
  int n = snprintf(buf, cap, IR_WASM_FN "%u", index);
  if (!fn->name || n < 0) return;
  size_t at = (size_t)n;
  if (at + 1 < cap) buf[at++] = '_';
  for (const char *s = fn->name; *s && at + 1 < cap && at < 96; s++) {
    char c = *s;
    buf[at++] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) ? c : '_';
  }
  buf[at] = 0;
}

static void declare_functions(low_module_ctx *mc) {
  const wasm_module *m = mc->m;
  char name[128];
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    const wasm_func *fn = &m->funcs[i];
    if (fn->imported) continue;
    func_symbol(fn, i, name, sizeof name);
    mc->funcs[i] = LLVMAddFunction(mc->mod, name, mc->fn_types[fn->type_index]);
    LLVMSetLinkage(mc->funcs[i], LLVMInternalLinkage);
    low_wasm_abi_fn(mc, mc->funcs[i]);
    /* No frame pointers (a push, a move and a pop per call, and one
     * register fewer: 12 % of a recursion's instructions): the runtime
     * names the Wasm frames of a trap from the unwind tables instead
     * (runtime/rt_backtrace.c), which "uwtable"="async" keeps exact at
     * every instruction, faults included. */
    unsigned uwtable = LLVMGetEnumAttributeKindForName("uwtable", 7);
    LLVMAddAttributeAtIndex(mc->funcs[i], LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(mc->ctx, uwtable, 2 /* async */));
  }
}

/* Slot <-> value conversions for the generic entry points: each value in
 * its own 8-byte slot, a v128 in two (twasm_abi.h). */
static LLVMValueRef from_slot(LLVMBuilderRef b, low_module_ctx *mc, LLVMValueRef slot_ptr, uint8_t vt) {
  LLVMValueRef v = LLVMBuildLoad2(b, low_valtype(mc, vt), slot_ptr, "arg");
  LLVMSetAlignment(v, 8);
  return v;
}

static LLVMValueRef to_slot(LLVMBuilderRef b, low_module_ctx *mc, LLVMValueRef v, uint8_t vt) {
  switch (vt) {
  case VT_I32: return LLVMBuildZExt(b, v, mc->t_i64, "");
  case VT_I64: case VT_V128: return v;
  case VT_F32: return LLVMBuildZExt(b, LLVMBuildBitCast(b, v, mc->t_i32, ""), mc->t_i64, "");
  case VT_F64: return LLVMBuildBitCast(b, v, mc->t_i64, "");
  default: return LLVMBuildPtrToInt(b, v, mc->t_i64, "");
  }
}

static void store_slot(LLVMBuilderRef b, low_module_ctx *mc, LLVMValueRef v, uint8_t vt,
                       LLVMValueRef slot_ptr) {
  LLVMSetAlignment(LLVMBuildStore(b, to_slot(b, mc, v, vt), slot_ptr), 8);
}

/* Slot index of value i of types: v128 values before it count twice. */
static uint32_t slot_index(const uint8_t *types, uint32_t i) {
  uint32_t at = 0;
  for (uint32_t k = 0; k < i; k++) at += types[k] == VT_V128 ? 2 : 1;
  return at;
}

static LLVMValueRef slot_at(LLVMBuilderRef b, low_module_ctx *mc, LLVMValueRef base,
                            const uint8_t *types, uint32_t i) {
  LLVMValueRef idx = LLVMConstInt(mc->t_i64, slot_index(types, i), false);
  return LLVMBuildGEP2(b, mc->t_i64, base, &idx, 1, "slot");
}

/* void invoke(ptr code, ptr vmctx, ptr args, ptr results) */
static LLVMValueRef build_invoker(low_module_ctx *mc, LLVMBuilderRef b, uint32_t t) {
  const wasm_functype *ft = &mc->m->types[t];
  LLVMTypeRef p = mc->t_ptr;
  LLVMTypeRef ty = LLVMFunctionType(mc->t_void, (LLVMTypeRef[]){p, p, p, p}, 4, false);
  char name[48];
  snprintf(name, sizeof name, "twasm_invoke_t%u", t);
  LLVMValueRef fn = LLVMAddFunction(mc->mod, name, ty);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(mc->ctx, fn, "entry"));
  LLVMValueRef *args = tw_arena_alloc(&mc->arena, (ft->nparams + 1) * sizeof *args);
  args[0] = LLVMGetParam(fn, 1);
  for (uint32_t i = 0; i < ft->nparams; i++)
    args[i + 1] = from_slot(b, mc, slot_at(b, mc, LLVMGetParam(fn, 2), ft->params, i), ft->params[i]);
  LLVMValueRef r = LLVMBuildCall2(b, mc->fn_types[t], LLVMGetParam(fn, 0), args, ft->nparams + 1, "");
  low_wasm_abi_call(mc, r);
  LLVMValueRef results = LLVMGetParam(fn, 3);
  for (uint32_t i = 0; i < ft->nresults; i++) {
    LLVMValueRef v = ft->nresults == 1 ? r : LLVMBuildExtractValue(b, r, i, "");
    store_slot(b, mc, v, ft->results[i], slot_at(b, mc, results, ft->results, i));
  }
  LLVMBuildRetVoid(b);
  return fn;
}

/* ret tramp(ptr vmctx, params...): packs into slots for twasm_rt_call_host. */
static LLVMValueRef build_trampoline(low_module_ctx *mc, LLVMBuilderRef b, LLVMValueRef call_host,
                                     LLVMTypeRef call_host_ty, uint32_t t) {
  const wasm_functype *ft = &mc->m->types[t];
  char name[48];
  snprintf(name, sizeof name, "twasm_host_t%u", t);
  LLVMValueRef fn = LLVMAddFunction(mc->mod, name, mc->fn_types[t]);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  low_wasm_abi_fn(mc, fn);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(mc->ctx, fn, "entry"));
  uint32_t na = slot_index(ft->params, ft->nparams), nr = slot_index(ft->results, ft->nresults);
  na = na ? na : 1;
  nr = nr ? nr : 1;
  LLVMValueRef args = LLVMBuildAlloca(b, LLVMArrayType2(mc->t_i64, na), "args");
  LLVMValueRef res = LLVMBuildAlloca(b, LLVMArrayType2(mc->t_i64, nr), "results");
  for (uint32_t i = 0; i < ft->nparams; i++)
    store_slot(b, mc, LLVMGetParam(fn, i + 1), ft->params[i], slot_at(b, mc, args, ft->params, i));
  LLVMBuildCall2(b, call_host_ty, call_host, (LLVMValueRef[]){LLVMGetParam(fn, 0), args, res}, 3, "");
  if (ft->nresults == 0) {
    LLVMBuildRetVoid(b);
  } else if (ft->nresults == 1) {
    LLVMBuildRet(b, from_slot(b, mc, slot_at(b, mc, res, ft->results, 0), ft->results[0]));
  } else {
    LLVMValueRef agg = LLVMGetUndef(LLVMGetReturnType(mc->fn_types[t]));
    for (uint32_t i = 0; i < ft->nresults; i++)
      agg = LLVMBuildInsertValue(b, agg, from_slot(b, mc, slot_at(b, mc, res, ft->results, i), ft->results[i]), i, "");
    LLVMBuildRet(b, agg);
  }
  return fn;
}

static void build_entry_points(low_module_ctx *mc, LLVMValueRef *invokers, LLVMValueRef *tramps) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(mc->ctx);
  LLVMTypeRef p = mc->t_ptr, host_ty;
  LLVMValueRef host = declare(mc, "twasm_rt_call_host", &host_ty, mc->t_void, (LLVMTypeRef[]){p, p, p}, 3);
  for (uint32_t t = 0; t < mc->m->ntypes; t++) {
    invokers[t] = build_invoker(mc, b, t);
    tramps[t] = build_trampoline(mc, b, host, host_ty, t);
  }
  LLVMDisposeBuilder(b);
}

/* int main(int argc, char **argv) {
 *   return twasm_main(&desc, argc, argv, dirs, env, flags); } */
static void build_main(low_module_ctx *mc, LLVMValueRef desc) {
  LLVMTypeRef p = mc->t_ptr, i32 = mc->t_i32, tm_ty;
  LLVMValueRef twasm_main =
      declare(mc, "twasm_main", &tm_ty, i32, (LLVMTypeRef[]){p, i32, p, p, p, i32}, 6);
  LLVMTypeRef main_ty = LLVMFunctionType(i32, (LLVMTypeRef[]){i32, p}, 2, false);
  LLVMValueRef fn = LLVMAddFunction(mc->mod, "main", main_ty);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(mc->ctx);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(mc->ctx, fn, "entry"));
  LLVMValueRef dirs = LLVMConstNull(p), env = LLVMConstNull(p);
  if (mc->opt->baked_dirs) dirs = LLVMBuildGlobalStringPtr(b, mc->opt->baked_dirs, "twasm_baked_dirs");
  if (mc->opt->baked_env)
    env = low_bytes_const(mc, mc->opt->baked_env, mc->opt->baked_env_len, "twasm_baked_env");
  LLVMValueRef flags = LLVMConstInt(i32, mc->opt->inherit_env ? TWASM_MAIN_INHERIT_ENV : 0, false);
  LLVMValueRef args[] = {desc, LLVMGetParam(fn, 0), LLVMGetParam(fn, 1), dirs, env, flags};
  LLVMBuildRet(b, LLVMBuildCall2(b, tm_ty, twasm_main, args, 6, ""));
  LLVMDisposeBuilder(b);
}

/* Scalar TBAA type nodes under one root, used as access tags (uniqued:
 * building one again gives the same node). */
LLVMValueRef low_tbaa_tag(LLVMContextRef c, const char *name) {
  LLVMMetadataRef root_name = LLVMMDStringInContext2(c, "twasm tbaa", 10);
  LLVMMetadataRef root = LLVMMDNodeInContext2(c, &root_name, 1);
  LLVMMetadataRef zero = LLVMValueAsMetadata(LLVMConstInt(LLVMInt64TypeInContext(c), 0, false));
  LLVMMetadataRef type_ops[] = {LLVMMDStringInContext2(c, name, strlen(name)), root, zero};
  LLVMMetadataRef type = LLVMMDNodeInContext2(c, type_ops, 3);
  LLVMMetadataRef tag_ops[] = {type, type, zero};
  return LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, tag_ops, 3));
}

static void init_tbaa(low_module_ctx *mc) {
  mc->tbaa_memory = low_tbaa_tag(mc->ctx, "wasm linear memory");
  mc->tbaa_global = low_tbaa_tag(mc->ctx, "wasm global cell");
  mc->tbaa_size = low_tbaa_tag(mc->ctx, LOW_TBAA_SIZE);
  mc->tbaa_base = low_tbaa_tag(mc->ctx, "wasm memory base");
}

void low_tbaa(low_module_ctx *mc, LLVMValueRef access, LLVMValueRef tag) {
  LLVMSetMetadata(access, LLVMGetMDKindIDInContext(mc->ctx, "tbaa", 4), tag);
}

static void init_types(low_module_ctx *mc) {
  LLVMContextRef c = mc->ctx;
  mc->t_void = LLVMVoidTypeInContext(c);
  mc->t_i1 = LLVMInt1TypeInContext(c);
  mc->t_i8 = LLVMInt8TypeInContext(c);
  mc->t_i16 = LLVMInt16TypeInContext(c);
  mc->t_i32 = LLVMInt32TypeInContext(c);
  mc->t_i64 = LLVMInt64TypeInContext(c);
  mc->t_f32 = LLVMFloatTypeInContext(c);
  mc->t_f64 = LLVMDoubleTypeInContext(c);
  mc->t_ptr = LLVMPointerTypeInContext(c, 0);
  mc->t_v128 = LLVMVectorType(mc->t_i64, 2);
}

bool low_module(LLVMContextRef ctx, const wasm_module *m, const low_options *opt,
                LLVMModuleRef *out, tw_diag *d) {
  low_module_ctx mc = {.ctx = ctx, .m = m, .opt = opt};
  mc.mod = LLVMModuleCreateWithNameInContext(opt->module_name ? opt->module_name : "wasm", ctx);
  init_types(&mc);
  init_tbaa(&mc);
  mc.fn_types = tw_arena_alloc(&mc.arena, (m->ntypes + 1) * sizeof *mc.fn_types);
  for (uint32_t t = 0; t < m->ntypes; t++) mc.fn_types[t] = native_type(&mc, &m->types[t]);
  mc.funcs = tw_arena_alloc(&mc.arena, (m->nfuncs + 1) * sizeof *mc.funcs);
  declare_runtime(&mc);
  declare_functions(&mc);
  low_libc_init(&mc);
  low_sealed_init(&mc);
  low_devirt_init(&mc);
  low_stack_init(&mc);
  low_tail_init(&mc);
  bool ok = true;
  for (uint32_t i = 0; ok && i < m->nfuncs; i++)
    if (!m->funcs[i].imported) ok = low_function(&mc, i, d);
  LLVMValueRef *invokers = tw_arena_alloc(&mc.arena, (m->ntypes + 1) * sizeof *invokers);
  LLVMValueRef *tramps = tw_arena_alloc(&mc.arena, (m->ntypes + 1) * sizeof *tramps);
  if (ok) build_entry_points(&mc, invokers, tramps);
  if (ok) ok = low_descriptor(&mc, invokers, tramps, d);
  if (ok && opt->emit_main) build_main(&mc, LLVMGetNamedGlobal(mc.mod, opt->desc_symbol));
  char *msg = NULL;
  if (ok && LLVMVerifyModule(mc.mod, LLVMReturnStatusAction, &msg)) {
    ok = tw_fail(d, TW_DIAG_NO_OFFSET, "internal error: invalid LLVM IR: %.400s", msg ? msg : "");
  }
  LLVMDisposeMessage(msg);
  if (ok && opt->funcs_out) memcpy(opt->funcs_out, mc.funcs, m->nfuncs * sizeof *mc.funcs);
  tw_arena_free(&mc.arena);
  if (!ok) {
    LLVMDisposeModule(mc.mod);
    return false;
  }
  *out = mc.mod;
  return true;
}
