/* low_libc.c: native fast paths for the C library routines that
 * low_libc_match.c recognises.  Calls and sealed tables reach such a
 * function through a small wrapper (mc->callees) that runs a native
 * equivalent from the runtime (runtime/rt_libc.c) where it gives the same
 * result without trapping, and otherwise tail-calls the function's own
 * Wasm code, which reads, traps and reports exactly as before.  The
 * descriptor keeps the Wasm code, so exports and traps name it as ever;
 * the wrapper is small and LLVM inlines it into its callers (memcmp's and
 * memcpy's always: build_wrapper). */
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
  low_libc_kind kind;
  const wasm_func *code;         /* the Wasm function's own code */
} wrap_ctx;

static LLVMValueRef param(wrap_ctx *w, unsigned i) { return LLVMGetParam(w->wrap, i); }
static LLVMValueRef zext64(wrap_ctx *w, LLVMValueRef v) { return LLVMBuildZExt(w->b, v, w->mc->t_i64, ""); }

static const char *const kind_names[] = {
    [LOW_LIBC_MEMCMP] = "memcmp", [LOW_LIBC_STRCMP] = "strcmp", [LOW_LIBC_STRLEN] = "strlen",
    [LOW_LIBC_MEMCPY] = "memcpy", [LOW_LIBC_MEMMOVE] = "memmove", [LOW_LIBC_MEMSET] = "memset",
    [LOW_LIBC_STPCPY] = "stpcpy",
};

/* Returns v, or nothing from a wrapper without a result (wasm-opt drops
 * memcpy's result when no caller reads it; the wrapper has the Wasm
 * function's type). */
static void ret_or_void(wrap_ctx *w, LLVMValueRef v) {
  if (LLVMGetReturnType(LLVMGlobalGetValueType(w->wrap)) == w->mc->t_void) LLVMBuildRetVoid(w->b);
  else LLVMBuildRet(w->b, v);
}

/* What a call of the Wasm strcmp (the exact code low_libc_match.c
 * recognises: a leaf that reads memory and stores nothing) may do: read
 * every location and write the trap record only (LOW_MEMORY_READ_MAY_TRAP,
 * which the trap's own declaration says too, low_module.c).  FunctionAttrs
 * infers as much of the Wasm strcmp itself; said at the call site, it
 * holds whatever runs first. */
#define READS_AND_MAY_TRAP LOW_MEMORY_READ_MAY_TRAP

/* Whether fn's code only reads: no store, global.set, table or bulk
 * memory operation, call or memory.grow (SIMD left out altogether), so
 * that the attribute above holds by the code itself, whatever build of
 * the routine the fingerprint matched. */
static bool stores_nothing(const wasm_func *fn) {
  for (uint32_t k = 0; k < fn->ncode; k++) {
    uint16_t op = fn->code[k].op;
    if ((op >= OP_I32_STORE && op <= OP_I64_STORE32) || op == OP_GLOBAL_SET || op == OP_TABLE_SET ||
        op == OP_CALL || op == OP_CALL_INDIRECT || op == OP_MEMORY_GROW ||
        (op >= OP_SIMD && (op < OP_I32_TRUNC_SAT_F32_S || op > OP_I32_TRUNC_SAT_F32_S + 7)))
      return false;
  }
  return true;
}

/* Ends the current block with a branch on fast: the builder is left in
 * the native block (for the caller to finish), the other block tail-calls
 * the Wasm code on the wrapper's own arguments.  The condition is named
 * "native.<routine>", which the optimised IR keeps (tests look for it). */
static void branch_native(wrap_ctx *w, LLVMValueRef fast) {
  low_module_ctx *mc = w->mc;
  char name[32];
  snprintf(name, sizeof name, "native.%s", kind_names[w->kind]);
  LLVMSetValueName2(fast, name, strlen(name));
  LLVMBasicBlockRef yes = LLVMAppendBasicBlockInContext(mc->ctx, w->wrap, "native");
  LLVMBasicBlockRef no = LLVMAppendBasicBlockInContext(mc->ctx, w->wrap, "wasm");
  low_mark_unlikely(mc, LLVMBuildCondBr(w->b, fast, yes, no), false);
  LLVMPositionBuilderAtEnd(w->b, no);
  unsigned n = LLVMCountParams(w->wrap);
  LLVMValueRef args[4];
  for (unsigned i = 0; i < n && i < 4; i++) args[i] = param(w, i);
  LLVMValueRef call = LLVMBuildCall2(w->b, LLVMGlobalGetValueType(w->wasm), w->wasm, args, n, "");
  low_wasm_abi_call(mc, call);
  /* strcmp only: said of memcmp and strlen too, speedtest1 ran 0.03 %
   * more instructions (PERFORMANCE.md, round 10) */
  if (w->kind == LOW_LIBC_STRCMP && stores_nothing(w->code))
    LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
                             LLVMCreateEnumAttribute(mc->ctx, LLVMGetEnumAttributeKindForName("memory", 6),
                                                     READS_AND_MAY_TRAP));
  LLVMSetTailCallKind(call, LLVMTailCallKindMustTail);
  ret_or_void(w, call);
  LLVMPositionBuilderAtEnd(w->b, yes);
}

static LLVMValueRef umin_umax(wrap_ctx *w, const char *name, LLVMValueRef a, LLVMValueRef b) {
  LLVMTypeRef ty = LLVMTypeOf(a);
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(w->mc->mod, id, &ty, 1);
  LLVMValueRef args[] = {a, b};
  return LLVMBuildCall2(w->b, LLVMIntrinsicGetType(w->mc->ctx, id, &ty, 1), fn, args, 2, "");
}

/* zext(at) + zext(n) <= memory size: no byte of [at, at + n) traps. */
static LLVMValueRef in_memory(wrap_ctx *w, LLVMValueRef at, LLVMValueRef n) {
  LLVMValueRef end = LLVMBuildAdd(w->b, zext64(w, at), zext64(w, n), "");
  return LLVMBuildICmp(w->b, LLVMIntULE, end, w->size, "");
}

/* Both [a, a + n) and [b, b + n) lie in memory: the higher one ends in it,
 * one compare (i64: no wrap) and one load of the size for both. */
static LLVMValueRef both_in_memory(wrap_ctx *w, LLVMValueRef a, LLVMValueRef b, LLVMValueRef n) {
  LLVMValueRef hi = umin_umax(w, "llvm.umax", zext64(w, a), zext64(w, b));
  return LLVMBuildICmp(w->b, LLVMIntULE, LLVMBuildAdd(w->b, hi, zext64(w, n), ""), w->size, "");
}

/* [d, d + n) and [s, s + n) do not overlap (i64 addresses and length). */
static LLVMValueRef apart(wrap_ctx *w, LLVMValueRef d64, LLVMValueRef s64, LLVMValueRef n64) {
  LLVMValueRef before = LLVMBuildICmp(w->b, LLVMIntULE, LLVMBuildAdd(w->b, d64, n64, ""), s64, "");
  LLVMValueRef after = LLVMBuildICmp(w->b, LLVMIntULE, LLVMBuildAdd(w->b, s64, n64, ""), d64, "");
  return LLVMBuildOr(w->b, before, after, "apart");
}

/* [d, d + n) and [s, s + n) lie in memory and do not overlap: the lower
 * one ends at or before the higher one starts, which ends in memory (i64:
 * no wrap).  The same condition as each range's end against the size and
 * both orders tested apart, in two compares and one load of the size. */
static LLVMValueRef apart_in_memory(wrap_ctx *w, LLVMValueRef d, LLVMValueRef s, LLVMValueRef n) {
  LLVMValueRef d64 = zext64(w, d), s64 = zext64(w, s), n64 = zext64(w, n);
  LLVMValueRef lo = umin_umax(w, "llvm.umin", d64, s64), hi = umin_umax(w, "llvm.umax", d64, s64);
  LLVMValueRef apart = LLVMBuildICmp(w->b, LLVMIntULE, LLVMBuildAdd(w->b, lo, n64, ""), hi, "apart");
  LLVMValueRef fits = LLVMBuildICmp(w->b, LLVMIntULE, LLVMBuildAdd(w->b, hi, n64, ""), w->size, "");
  return LLVMBuildAnd(w->b, apart, fits, "");
}

static LLVMValueRef byte_at(wrap_ctx *w, LLVMValueRef at, LLVMValueRef k);
static LLVMValueRef chunk_at(wrap_ctx *w, LLVMTypeRef v16, LLVMValueRef at);

/* Bit i of the i16 set where bytes i of the chunks at l + k and r + k
 * differ; branches to found (k and the mask in the phis of found) when
 * one does, else to next. */
static void chunk_compare(wrap_ctx *w, LLVMValueRef k, LLVMBasicBlockRef found, LLVMValueRef k_phi,
                          LLVMValueRef mask_phi, LLVMBasicBlockRef next) {
  low_module_ctx *mc = w->mc;
  LLVMTypeRef v16 = LLVMVectorType(mc->t_i8, 16), i16 = LLVMIntTypeInContext(mc->ctx, 16);
  LLVMValueRef a = chunk_at(w, v16, LLVMBuildAdd(w->b, param(w, 1), k, ""));
  LLVMValueRef b = chunk_at(w, v16, LLVMBuildAdd(w->b, param(w, 2), k, ""));
  LLVMValueRef mask = LLVMBuildBitCast(w->b, LLVMBuildICmp(w->b, LLVMIntNE, a, b, ""), i16, "differ_mask");
  LLVMBasicBlockRef here = LLVMGetInsertBlock(w->b);
  LLVMAddIncoming(k_phi, &k, &here, 1);
  LLVMAddIncoming(mask_phi, &mask, &here, 1);
  LLVMBuildCondBr(w->b, LLVMBuildICmp(w->b, LLVMIntNE, mask, LLVMConstInt(i16, 0, false), ""), found, next);
}

/* memcmp(l, r, n) of 16 to 32 bytes, inline (after LLVM inlines the
 * wrapper, at the caller): the first 16 bytes and the 16 ending at n, two
 * chunks that overlap below 32 (the bytes before the second chunk's first
 * difference were found equal in the first), every read inside both
 * ranges.  Keys of a B-tree or hash table are mostly of these lengths,
 * and the call to the runtime's helper cost as much as the comparison
 * (kvstore: 41 instructions a call; see docs/PERFORMANCE.md, issue 22).
 * Other lengths leave the builder in a block for the helper. */
static void memcmp_two_chunks(wrap_ctx *w) {
  low_module_ctx *mc = w->mc;
  LLVMValueRef n = param(w, 3), sixteen = LLVMConstInt(mc->t_i32, 16, false);
  LLVMValueRef tail = LLVMBuildSub(w->b, n, sixteen, "");
  LLVMBasicBlockRef first = LLVMAppendBasicBlockInContext(mc->ctx, w->wrap, "chunk");
  LLVMBasicBlockRef second = LLVMAppendBasicBlockInContext(mc->ctx, w->wrap, "chunk_end");
  LLVMBasicBlockRef found = LLVMAppendBasicBlockInContext(mc->ctx, w->wrap, "found");
  LLVMBasicBlockRef equal = LLVMAppendBasicBlockInContext(mc->ctx, w->wrap, "equal");
  LLVMBasicBlockRef rest = LLVMAppendBasicBlockInContext(mc->ctx, w->wrap, "rest");
  LLVMBuildCondBr(w->b, LLVMBuildICmp(w->b, LLVMIntULE, tail, sixteen, "two_chunks"), first, rest);
  LLVMPositionBuilderAtEnd(w->b, found);
  LLVMValueRef k_phi = LLVMBuildPhi(w->b, mc->t_i32, "");
  LLVMValueRef mask_phi = LLVMBuildPhi(w->b, LLVMIntTypeInContext(mc->ctx, 16), "");
  LLVMPositionBuilderAtEnd(w->b, first);
  chunk_compare(w, LLVMConstInt(mc->t_i32, 0, false), found, k_phi, mask_phi, second);
  LLVMPositionBuilderAtEnd(w->b, second);
  chunk_compare(w, tail, found, k_phi, mask_phi, equal);
  LLVMPositionBuilderAtEnd(w->b, equal);
  LLVMBuildRet(w->b, LLVMConstInt(mc->t_i32, 0, false));
  LLVMPositionBuilderAtEnd(w->b, found);
  LLVMTypeRef i16 = LLVMIntTypeInContext(mc->ctx, 16);
  unsigned id = LLVMLookupIntrinsicID("llvm.cttz", 9);
  LLVMValueRef cttz = LLVMGetIntrinsicDeclaration(mc->mod, id, &i16, 1);
  LLVMValueRef args[] = {mask_phi, LLVMConstInt(mc->t_i1, 1, false)};
  LLVMValueRef first_diff = LLVMBuildCall2(w->b, LLVMIntrinsicGetType(mc->ctx, id, &i16, 1), cttz, args, 2, "");
  LLVMValueRef at = LLVMBuildAdd(w->b, LLVMBuildZExt(w->b, k_phi, mc->t_i64, ""),
                                 LLVMBuildZExt(w->b, first_diff, mc->t_i64, ""), "");
  LLVMBuildRet(w->b, LLVMBuildSub(w->b, byte_at(w, param(w, 1), at), byte_at(w, param(w, 2), at), ""));
  LLVMPositionBuilderAtEnd(w->b, rest);
}

/* memcmp(l, r, n): native when both ranges lie in memory (no read traps). */
static void wrap_memcmp(wrap_ctx *w) {
  low_module_ctx *mc = w->mc;
  LLVMValueRef l = param(w, 1), r = param(w, 2), n = param(w, 3);
  branch_native(w, both_in_memory(w, l, r, n));
  memcmp_two_chunks(w);
  LLVMTypeRef ps[] = {mc->t_ptr, mc->t_i32, mc->t_i32, mc->t_i32};
  LLVMValueRef fn = helper(mc, "twasm_rt_memcmp", mc->t_i32, ps, 4);
  LLVMValueRef args[] = {w->base, l, r, n};
  LLVMBuildRet(w->b, LLVMBuildCall2(w->b, LLVMGlobalGetValueType(fn), fn, args, 4, "cmp"));
}

static LLVMValueRef byte_at(wrap_ctx *w, LLVMValueRef at, LLVMValueRef k) {
  LLVMValueRef off = LLVMBuildAdd(w->b, zext64(w, at), k, "");
  LLVMValueRef p = LLVMBuildGEP2(w->b, w->mc->t_i8, w->base, &off, 1, "");
  LLVMValueRef v = LLVMBuildLoad2(w->b, w->mc->t_i8, p, "");
  low_tbaa(w->mc, v, w->mc->tbaa_memory);
  return LLVMBuildZExt(w->b, v, w->mc->t_i32, "");
}

static LLVMValueRef chunk_at(wrap_ctx *w, LLVMTypeRef v16, LLVMValueRef at) {
  LLVMValueRef p = LLVMBuildGEP2(w->b, w->mc->t_i8, w->base, (LLVMValueRef[]){zext64(w, at)}, 1, "");
  LLVMValueRef v = LLVMBuildLoad2(w->b, v16, p, "");
  LLVMSetAlignment(v, 1);
  low_tbaa(w->mc, v, w->mc->tbaa_memory);
  return v;
}

/* Branches to found when some lane of the 16 i1 lanes `hit` is set, else
 * to rest; in found, the index of the first such byte as an i64 (the
 * builder left there). */
static LLVMValueRef first_set_byte(wrap_ctx *w, LLVMValueRef hit, const char *name, LLVMBasicBlockRef found,
                                   LLVMBasicBlockRef rest) {
  low_module_ctx *mc = w->mc;
  LLVMTypeRef i16 = LLVMIntTypeInContext(mc->ctx, 16);
  LLVMValueRef mask = LLVMBuildBitCast(w->b, hit, i16, name);
  LLVMBuildCondBr(w->b, LLVMBuildICmp(w->b, LLVMIntNE, mask, LLVMConstInt(i16, 0, false), ""), found, rest);
  LLVMPositionBuilderAtEnd(w->b, found);
  unsigned id = LLVMLookupIntrinsicID("llvm.cttz", 9);
  LLVMValueRef cttz = LLVMGetIntrinsicDeclaration(mc->mod, id, &i16, 1);
  LLVMValueRef args[] = {mask, LLVMConstInt(mc->t_i1, 1, false)};
  LLVMValueRef k = LLVMBuildCall2(w->b, LLVMIntrinsicGetType(mc->ctx, id, &i16, 1), cttz, args, 2, "");
  return LLVMBuildZExt(w->b, k, mc->t_i64, "");
}

/* strcmp's first 16 bytes, inline (after LLVM inlines the wrapper, at
 * the caller): most strings compared end or differ there, and a call
 * costs as much as the comparison.  Both chunks must lie in memory;
 * otherwise, or when the chunks are equal and without NUL, the builder is
 * left in a block for the general path. */
static void strcmp_first_chunk(wrap_ctx *w) {
  low_module_ctx *mc = w->mc;
  LLVMValueRef l = param(w, 1), r = param(w, 2);
  LLVMValueRef far = LLVMBuildSelect(w->b, LLVMBuildICmp(w->b, LLVMIntUGT, l, r, ""), l, r, "");
  LLVMValueRef fits = LLVMBuildICmp(w->b, LLVMIntULE,
                                    LLVMBuildAdd(w->b, zext64(w, far), LLVMConstInt(mc->t_i64, 16, false), ""),
                                    w->size, "");
  LLVMBasicBlockRef chunk = LLVMAppendBasicBlockInContext(mc->ctx, w->wrap, "chunk");
  LLVMBasicBlockRef found = LLVMAppendBasicBlockInContext(mc->ctx, w->wrap, "found");
  LLVMBasicBlockRef rest = LLVMAppendBasicBlockInContext(mc->ctx, w->wrap, "rest");
  LLVMBuildCondBr(w->b, fits, chunk, rest);
  LLVMPositionBuilderAtEnd(w->b, chunk);
  LLVMTypeRef v16 = LLVMVectorType(mc->t_i8, 16);
  LLVMValueRef a = chunk_at(w, v16, l), b = chunk_at(w, v16, r);
  /* a byte stops the walk where it differs or is 0: min(a, 0xff where
   * equal, else 0) is 0 there (pcmpeqb, pminub, pcmpeqb: no constant
   * loaded, one operation fewer than (a != b) | (a == 0)) */
  LLVMValueRef same = LLVMBuildSExt(w->b, LLVMBuildICmp(w->b, LLVMIntEQ, a, b, ""), v16, "");
  LLVMValueRef stop = LLVMBuildICmp(w->b, LLVMIntEQ, umin_umax(w, "llvm.umin", a, same), LLVMConstNull(v16), "");
  LLVMValueRef k = first_set_byte(w, stop, "stop_mask", found, rest);
  LLVMBuildRet(w->b, LLVMBuildSub(w->b, byte_at(w, l, k), byte_at(w, r, k), ""));
  LLVMPositionBuilderAtEnd(w->b, rest);
}

/* strlen(s) as an i64, or TWASM_RT_LIBC_FALLBACK where the string runs
 * to the end of memory: the 16 bytes at s inline (after LLVM inlines the
 * wrapper, at the caller) when they lie in memory and hold a NUL, else
 * twasm_rt_strlen.  Most strings end there (mujs's names and short
 * strings: 1.36 M calls of the helper, ~15 instructions each besides the
 * call's own, all but 12 K of them ending in its first chunk;
 * PERFORMANCE.md, cpu18), and a NUL found there is the first (the bytes
 * before it were read too). */
static LLVMValueRef strlen_value(wrap_ctx *w, LLVMValueRef s) {
  low_module_ctx *mc = w->mc;
  LLVMValueRef fits = LLVMBuildICmp(w->b, LLVMIntULE,
                                    LLVMBuildAdd(w->b, zext64(w, s), LLVMConstInt(mc->t_i64, 16, false), ""),
                                    w->size, "");
  LLVMBasicBlockRef chunk = LLVMAppendBasicBlockInContext(mc->ctx, w->wrap, "chunk");
  LLVMBasicBlockRef found = LLVMAppendBasicBlockInContext(mc->ctx, w->wrap, "found");
  LLVMBasicBlockRef rest = LLVMAppendBasicBlockInContext(mc->ctx, w->wrap, "rest");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(mc->ctx, w->wrap, "len");
  LLVMBuildCondBr(w->b, fits, chunk, rest);
  LLVMPositionBuilderAtEnd(w->b, chunk);
  LLVMTypeRef v16 = LLVMVectorType(mc->t_i8, 16);
  LLVMValueRef nul = LLVMBuildICmp(w->b, LLVMIntEQ, chunk_at(w, v16, s), LLVMConstNull(v16), "");
  LLVMValueRef k = first_set_byte(w, nul, "nul_mask", found, rest);
  LLVMBuildBr(w->b, join);
  LLVMPositionBuilderAtEnd(w->b, rest);
  LLVMTypeRef ps[] = {mc->t_ptr, mc->t_i64, mc->t_i32};
  LLVMValueRef fn = helper(mc, "twasm_rt_strlen", mc->t_i64, ps, 3);
  LLVMValueRef hargs[] = {w->base, w->size, s};
  LLVMValueRef scan = LLVMBuildCall2(w->b, LLVMGlobalGetValueType(fn), fn, hargs, 3, "scan");
  LLVMBuildBr(w->b, join);
  LLVMPositionBuilderAtEnd(w->b, join);
  LLVMValueRef len = LLVMBuildPhi(w->b, mc->t_i64, "len");
  LLVMValueRef vals[] = {k, scan};
  LLVMBasicBlockRef from[] = {found, rest};
  LLVMAddIncoming(len, vals, from, 2);
  return len;
}

/* strcmp(l, r) and strlen(s): the helper says when it reached the end of
 * memory, where the Wasm code is to run. */
static void wrap_scan(wrap_ctx *w, low_libc_kind kind) {
  low_module_ctx *mc = w->mc;
  LLVMValueRef v;
  if (kind == LOW_LIBC_STRCMP) {
    strcmp_first_chunk(w);
    LLVMTypeRef ps[] = {mc->t_ptr, mc->t_i64, mc->t_i32, mc->t_i32};
    LLVMValueRef fn = helper(mc, "twasm_rt_strcmp", mc->t_i64, ps, 4);
    LLVMValueRef args[] = {w->base, w->size, param(w, 1), param(w, 2)};
    v = LLVMBuildCall2(w->b, LLVMGlobalGetValueType(fn), fn, args, 4, "scan");
  } else {
    v = strlen_value(w, param(w, 1));
  }
  LLVMValueRef fallback = LLVMConstInt(mc->t_i64, (uint64_t)TWASM_RT_LIBC_FALLBACK, false);
  branch_native(w, LLVMBuildICmp(w->b, LLVMIntNE, v, fallback, ""));
  LLVMBuildRet(w->b, LLVMBuildTrunc(w->b, v, mc->t_i32, ""));
}

/* memcpy/memmove(d, s, n) and memset(d, c, n) return d.  Native when every
 * byte lies in memory (the Wasm code would trap half-way, after some
 * writes); memcpy also needs the ranges apart, as its Wasm code is one
 * particular order of copies that only disjoint ranges make order-free.
 * The LLVM intrinsics then expand small constant sizes inline. */
static void wrap_bulk(wrap_ctx *w, low_libc_kind kind) {
  low_module_ctx *mc = w->mc;
  LLVMValueRef d = param(w, 1), x = param(w, 2), n = param(w, 3);
  LLVMValueRef ok = kind == LOW_LIBC_MEMSET ? in_memory(w, d, n)
                    : kind == LOW_LIBC_MEMCPY ? apart_in_memory(w, d, x, n)
                                              : both_in_memory(w, d, x, n);
  branch_native(w, ok);
  LLVMValueRef dst = LLVMBuildGEP2(w->b, mc->t_i8, w->base, (LLVMValueRef[]){zext64(w, d)}, 1, "dst");
  LLVMValueRef len = zext64(w, n), op;
  if (kind == LOW_LIBC_MEMSET) {
    op = LLVMBuildMemSet(w->b, dst, LLVMBuildTrunc(w->b, x, mc->t_i8, ""), len, 1);
  } else {
    LLVMValueRef src = LLVMBuildGEP2(w->b, mc->t_i8, w->base, (LLVMValueRef[]){zext64(w, x)}, 1, "src");
    op = kind == LOW_LIBC_MEMCPY ? LLVMBuildMemCpy(w->b, dst, 1, src, 1, len)
                                 : LLVMBuildMemMove(w->b, dst, 1, src, 1, len);
  }
  low_tbaa(mc, op, mc->tbaa_memory);
  ret_or_void(w, d);
}

/* stpcpy(d, s) copies s with its NUL to d and returns d + strlen(s).
 * Native when the string ends in memory (twasm_rt_strlen says where) and
 * the copy's destination lies in memory, apart from the source: the Wasm
 * code's order of copies (bytes to a word boundary, then words) matters
 * only where the ranges overlap, and it would trap half-way, after some
 * writes, where the destination runs past the end.  musl's strcpy and
 * strcat call it; mujs copies its property and variable names with it. */
static void wrap_stpcpy(wrap_ctx *w) {
  low_module_ctx *mc = w->mc;
  LLVMValueRef d64 = zext64(w, param(w, 1)), s64 = zext64(w, param(w, 2));
  LLVMValueRef len = strlen_value(w, param(w, 2));
  LLVMValueRef found = LLVMBuildICmp(w->b, LLVMIntNE, len,
                                     LLVMConstInt(mc->t_i64, (uint64_t)TWASM_RT_LIBC_FALLBACK, false), "");
  LLVMValueRef n = LLVMBuildAdd(w->b, len, LLVMConstInt(mc->t_i64, 1, false), "");
  LLVMValueRef d_end = LLVMBuildAdd(w->b, d64, n, "");
  LLVMValueRef ok = LLVMBuildAnd(w->b, found, LLVMBuildICmp(w->b, LLVMIntULE, d_end, w->size, ""), "");
  branch_native(w, LLVMBuildAnd(w->b, ok, apart(w, d64, s64, n), ""));
  LLVMValueRef ret = LLVMBuildTrunc(w->b, LLVMBuildAdd(w->b, d64, len, ""), mc->t_i32, "");
  LLVMValueRef dst = LLVMBuildGEP2(w->b, mc->t_i8, w->base, &d64, 1, "dst");
  LLVMValueRef src = LLVMBuildGEP2(w->b, mc->t_i8, w->base, &s64, 1, "src");
  low_tbaa(mc, LLVMBuildMemCpy(w->b, dst, 1, src, 1, n), mc->tbaa_memory);
  ret_or_void(w, ret);
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
  low_wasm_abi_fn(mc, wrap);
  wrap_ctx w = {.mc = mc, .b = LLVMCreateBuilderInContext(mc->ctx), .wrap = wrap, .wasm = wasm, .kind = kind,
               .code = &mc->m->funcs[i]};
  LLVMPositionBuilderAtEnd(w.b, LLVMAppendBasicBlockInContext(mc->ctx, wrap, "entry"));
  w.base = invariant_load(mc, w.b, mc->t_ptr, param(&w, 0), 0, "mem_base");
  LLVMValueRef mem = invariant_load(mc, w.b, mc->t_ptr, param(&w, 0), 8, "mem");
  /* memory.grow changes the size: loaded at every call. */
  LLVMValueRef size_at = LLVMBuildInBoundsGEP2(w.b, mc->t_i8, mem, (LLVMValueRef[]){LLVMConstInt(mc->t_i64, 8, false)}, 1, "");
  w.size = LLVMBuildLoad2(w.b, mc->t_i64, size_at, "size_bytes");
  if (kind == LOW_LIBC_MEMCMP || kind == LOW_LIBC_MEMCPY) {
    /* memcmp's inline chunks make it larger than the inliner's threshold
     * in a big caller (kvstore's main); memcpy's wrapper (cost 65) is
     * above the threshold of a call LLVM guesses cold (45), as is every
     * call in one case of a large switch (SQLite's VDBE: 0.66 M calls
     * out of line, 27 instructions each, PERFORMANCE.md round 12).
     * Inlined all the same, as the smaller wrappers are by the threshold
     * (a call costs what it saves). */
    unsigned always = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
    LLVMAddAttributeAtIndex(wrap, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(mc->ctx, always, 0));
  }
  if (kind == LOW_LIBC_MEMCMP) {
    wrap_memcmp(&w);
  }
  else if (kind == LOW_LIBC_STRCMP || kind == LOW_LIBC_STRLEN) wrap_scan(&w, kind);
  else if (kind == LOW_LIBC_STPCPY) wrap_stpcpy(&w);
  else wrap_bulk(&w, kind);
  LLVMDisposeBuilder(w.b);
  return wrap;
}

/* Signature each kind must have: its params after vmctx, all i32, and an
 * i32 result, which wasm-opt drops from memcpy, memmove, memset and
 * stpcpy when no caller uses it (a program that calls strcpy but never
 * stpcpy; a fingerprint already pins the type; checked again). */
static bool signature_ok(const wasm_functype *ft, low_libc_kind kind) {
  uint32_t want = kind == LOW_LIBC_STRCMP || kind == LOW_LIBC_STPCPY ? 2 : kind == LOW_LIBC_STRLEN ? 1 : 3;
  bool bulk = kind == LOW_LIBC_MEMCPY || kind == LOW_LIBC_MEMMOVE || kind == LOW_LIBC_MEMSET ||
              kind == LOW_LIBC_STPCPY;
  bool result_ok = (ft->nresults == 1 && ft->results[0] == VT_I32) || (bulk && ft->nresults == 0);
  if (ft->nparams != want || !result_ok) return false;
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
    if (kind != LOW_LIBC_NONE && signature_ok(&m->types[m->funcs[i].type_index], kind))
      mc->callees[i] = build_wrapper(mc, i, kind);
  }
}
