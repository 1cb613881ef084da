/* ptx_ir.c: building blocks for kernel IR: the kernel signature, thread
 * indices, addresses in global memory, loops and conditionals. */
#include <stdio.h>
#include <string.h>

#include "ptx_internal.h"

static void gen_entry(ptx_gen *g, const char *name, bool result_arg, bool out_base, LLVMValueRef *scratch);

void ptx_gen_init(ptx_gen *g, LLVMContextRef ctx, const kn_desc *d, const char *name,
                  bool result_arg, bool out_base, tw_diag *diag) {
  *g = (ptx_gen){.d = d, .diag = diag, .ctx = ctx};
  g->mod = LLVMModuleCreateWithNameInContext(name, ctx);
  g->b = LLVMCreateBuilderInContext(ctx);
  g->i1 = LLVMInt1TypeInContext(ctx);
  g->i8 = LLVMInt8TypeInContext(ctx);
  g->i16 = LLVMInt16TypeInContext(ctx);
  g->i32 = LLVMInt32TypeInContext(ctx);
  g->i64 = LLVMInt64TypeInContext(ctx);
  g->f32 = LLVMFloatTypeInContext(ctx);
  g->f64 = LLVMDoubleTypeInContext(ctx);
  g->gptr = LLVMPointerTypeInContext(ctx, PTX_ADDRSPACE_GLOBAL);
  g->sptr = LLVMPointerTypeInContext(ctx, PTX_ADDRSPACE_SHARED);

  gen_entry(g, name, result_arg, out_base, NULL);
}

void ptx_gen_entry(ptx_gen *g, const char *name, bool result_arg, LLVMValueRef *scratch) {
  gen_entry(g, name, result_arg, false, scratch);
}

static void gen_entry(ptx_gen *g, const char *name, bool result_arg, bool out_base, LLVMValueRef *scratch) {
  const kn_desc *d = g->d;
  LLVMTypeRef args[KN_MAX_PARAMS + 3];
  unsigned n = 0;
  args[n++] = g->gptr;
  for (unsigned i = 0; i < d->nparams; i++) args[n++] = g->i64;
  if (result_arg || scratch) args[n++] = g->gptr;
  if (out_base) args[n++] = g->gptr;
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(g->ctx), args, n, false);
  g->fn = LLVMAddFunction(g->mod, name, fty);
  LLVMSetFunctionCallConv(g->fn, PTX_KERNEL_CALLCONV);
  g->mem = LLVMGetParam(g->fn, 0);
  LLVMSetValueName2(g->mem, "mem", 3);
  for (unsigned i = 0; i < d->nparams; i++) {
    char pname[16];
    int len = snprintf(pname, sizeof pname, "p%u", i);
    g->params[i] = LLVMGetParam(g->fn, i + 1);
    LLVMSetValueName2(g->params[i], pname, (size_t)len);
  }
  g->result = result_arg ? LLVMGetParam(g->fn, d->nparams + 1) : NULL;
  if (scratch) *scratch = LLVMGetParam(g->fn, d->nparams + 1);
  g->out_base = g->mem;
  if (out_base) {
    g->out_base = LLVMGetParam(g->fn, n - 1);
    LLVMSetValueName2(g->out_base, "out_base", 8);
  }
  g->entry = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "entry");
  LLVMPositionBuilderAtEnd(g->b, g->entry);
}

void ptx_annotate(ptx_gen *g, const char *key, unsigned value) {
  LLVMMetadataRef ops[3] = {LLVMValueAsMetadata(g->fn), LLVMMDStringInContext2(g->ctx, key, strlen(key)),
                            LLVMValueAsMetadata(LLVMConstInt(g->i32, value, false))};
  LLVMValueRef node = LLVMMetadataAsValue(g->ctx, LLVMMDNodeInContext2(g->ctx, ops, 3));
  LLVMAddNamedMetadataOperand(g->mod, "nvvm.annotations", node);
}

void ptx_gen_dispose(ptx_gen *g) {
  LLVMDisposeBuilder(g->b);
  LLVMDisposeModule(g->mod);
}

LLVMTypeRef ptx_type(const ptx_gen *g, kn_type t) {
  switch (t) {
  case KN_I1: return g->i1;
  case KN_I8: return g->i8;
  case KN_I16: return g->i16;
  case KN_I32: return g->i32;
  case KN_I64: return g->i64;
  case KN_F32: return g->f32;
  case KN_F64: return g->f64;
  }
  return NULL;
}

unsigned ptx_type_bytes(kn_type t) {
  static const unsigned bytes[] = {[KN_I1] = 1, [KN_I8] = 1, [KN_I16] = 2, [KN_I32] = 4,
                                   [KN_I64] = 8, [KN_F32] = 4, [KN_F64] = 8};
  return bytes[t];
}

/* Declares intrinsics and external functions by name on first use; LLVM
 * recognises intrinsic names, overloaded ones included (llvm.sqrt.f32). */
LLVMValueRef ptx_call(ptx_gen *g, const char *name, LLVMTypeRef ret, LLVMValueRef *args,
                      unsigned nargs) {
  LLVMValueRef fn = LLVMGetNamedFunction(g->mod, name);
  LLVMTypeRef fty;
  if (fn) {
    fty = LLVMGlobalGetValueType(fn);
  } else {
    LLVMTypeRef types[PTX_CALL_MAX_ARGS];
    for (unsigned i = 0; i < nargs && i < PTX_CALL_MAX_ARGS; i++) types[i] = LLVMTypeOf(args[i]);
    fty = LLVMFunctionType(ret, types, nargs, false);
    fn = LLVMAddFunction(g->mod, name, fty);
  }
  return LLVMBuildCall2(g->b, fty, fn, args, nargs, "");
}

LLVMValueRef ptx_sreg(ptx_gen *g, const char *reg) {
  char name[64];
  snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s", reg);
  LLVMValueRef v = ptx_call(g, name, g->i32, NULL, 0);
  return LLVMBuildZExt(g->b, v, g->i64, "");
}

void ptx_barrier(ptx_gen *g) {
  ptx_call(g, "llvm.nvvm.barrier0", LLVMVoidTypeInContext(g->ctx), NULL, 0);
}

LLVMValueRef ptx_i64(ptx_gen *g, int64_t v) {
  return LLVMConstInt(g->i64, (unsigned long long)v, true);
}

LLVMValueRef ptx_size(ptx_gen *g, kn_size s) {
  return s.is_param ? g->params[s.value] : ptx_i64(g, s.value);
}

LLVMValueRef ptx_global_at(ptx_gen *g, LLVMValueRef byte_offset) {
  return LLVMBuildGEP2(g->b, g->i8, g->mem, &byte_offset, 1, "");
}

LLVMValueRef ptx_addr(ptx_gen *g, const kn_addr *a, const LLVMValueRef *ivs) {
  LLVMValueRef off = ptx_i64(g, a->c0);
  for (unsigned d = 0; d < KN_MAX_DIMS; d++) {
    LLVMValueRef stride = a->iv_coeff[d] ? ptx_i64(g, a->iv_coeff[d]) : NULL;
    if (a->iv_pcoeff[d]) {
      LLVMValueRef s = LLVMBuildMul(g->b, g->params[a->iv_pindex[d]], ptx_i64(g, a->iv_pcoeff[d]), "");
      stride = stride ? LLVMBuildAdd(g->b, stride, s, "") : s;
    }
    if (!stride) continue;
    off = LLVMBuildAdd(g->b, off, LLVMBuildMul(g->b, ivs[d], stride, ""), "");
  }
  for (unsigned t = 0; t < a->nparam_terms; t++) {
    LLVMValueRef p = g->params[a->param_index[t]];
    LLVMValueRef term = LLVMBuildMul(g->b, p, ptx_i64(g, a->param_coeff[t]), "");
    off = LLVMBuildAdd(g->b, off, term, "");
  }
  return ptx_global_at(g, off);
}

LLVMValueRef ptx_load(ptx_gen *g, LLVMTypeRef t, LLVMValueRef p, unsigned align) {
  LLVMValueRef v = LLVMBuildLoad2(g->b, t, p, "");
  LLVMSetAlignment(v, align ? align : 1);
  return v;
}

unsigned ptx_access_align(const ptx_gen *g, const kn_addr *a, kn_type mem) {
  unsigned natural = g->natural_align ? ptx_type_bytes(mem) : 1;
  return a->align > natural ? a->align : natural;
}

void ptx_store(ptx_gen *g, LLVMValueRef v, LLVMValueRef p, unsigned align) {
  LLVMValueRef s = LLVMBuildStore(g->b, v, p);
  LLVMSetAlignment(s, align ? align : 1);
}

/* A local variable: an entry-block alloca that SROA turns into registers. */
LLVMValueRef ptx_var(ptx_gen *g, LLVMTypeRef t, LLVMValueRef init) {
  LLVMBasicBlockRef here = LLVMGetInsertBlock(g->b);
  LLVMValueRef first = LLVMGetFirstInstruction(g->entry);
  if (first) LLVMPositionBuilderBefore(g->b, first);
  else LLVMPositionBuilderAtEnd(g->b, g->entry);
  LLVMValueRef var = LLVMBuildAlloca(g->b, t, "");
  LLVMPositionBuilderAtEnd(g->b, here);
  if (init) LLVMBuildStore(g->b, init, var);
  return var;
}

LLVMValueRef ptx_shared_array(ptx_gen *g, LLVMTypeRef elem, unsigned count, const char *name) {
  LLVMTypeRef ty = LLVMArrayType2(elem, count);
  LLVMValueRef gv = LLVMAddGlobalInAddressSpace(g->mod, ty, name, PTX_ADDRSPACE_SHARED);
  LLVMSetInitializer(gv, LLVMGetUndef(ty));
  LLVMSetLinkage(gv, LLVMInternalLinkage);
  LLVMSetAlignment(gv, 16);
  return gv;
}

LLVMValueRef ptx_smin(ptx_gen *g, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef lt = LLVMBuildICmp(g->b, LLVMIntSLT, a, b, "");
  return LLVMBuildSelect(g->b, lt, a, b, "");
}

void ptx_loop_begin(ptx_gen *g, ptx_loop *l, LLVMValueRef start, LLVMValueRef end,
                    LLVMValueRef step) {
  l->var = ptx_var(g, g->i64, start);
  l->end = end;
  l->step = step;
  l->cond = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "loop");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "body");
  l->exit = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "done");
  LLVMBuildBr(g->b, l->cond);
  LLVMPositionBuilderAtEnd(g->b, l->cond);
  l->iv = LLVMBuildLoad2(g->b, g->i64, l->var, "");
  LLVMValueRef go = LLVMBuildICmp(g->b, LLVMIntSLT, l->iv, end, "");
  LLVMBuildCondBr(g->b, go, body, l->exit);
  LLVMPositionBuilderAtEnd(g->b, body);
}

void ptx_loop_end(ptx_gen *g, ptx_loop *l) {
  LLVMBuildStore(g->b, LLVMBuildAdd(g->b, l->iv, l->step, ""), l->var);
  LLVMBuildBr(g->b, l->cond);
  LLVMPositionBuilderAtEnd(g->b, l->exit);
}

LLVMBasicBlockRef ptx_if_begin(ptx_gen *g, LLVMValueRef cond) {
  LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "then");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "join");
  LLVMBuildCondBr(g->b, cond, then, join);
  LLVMPositionBuilderAtEnd(g->b, then);
  return join;
}

void ptx_if_end(ptx_gen *g, LLVMBasicBlockRef join) {
  LLVMBuildBr(g->b, join);
  LLVMPositionBuilderAtEnd(g->b, join);
}

void ptx_grid_axis(ptx_gen *g, char axis, LLVMValueRef *first, LLVMValueRef *stride) {
  char tid[8], ntid[8], ctaid[8], nctaid[16];
  snprintf(tid, sizeof tid, "tid.%c", axis);
  snprintf(ntid, sizeof ntid, "ntid.%c", axis);
  snprintf(ctaid, sizeof ctaid, "ctaid.%c", axis);
  snprintf(nctaid, sizeof nctaid, "nctaid.%c", axis);
  LLVMValueRef block = ptx_sreg(g, ntid);
  LLVMValueRef base = LLVMBuildMul(g->b, ptx_sreg(g, ctaid), block, "");
  *first = LLVMBuildAdd(g->b, base, ptx_sreg(g, tid), "");
  *stride = LLVMBuildMul(g->b, ptx_sreg(g, nctaid), block, "");
}

LLVMValueRef ptx_mul_c(ptx_gen *g, LLVMValueRef v, int64_t c) {
  return LLVMBuildMul(g->b, v, ptx_i64(g, c), "");
}

LLVMValueRef ptx_add(ptx_gen *g, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildAdd(g->b, a, b, "");
}

LLVMValueRef ptx_below(ptx_gen *g, LLVMValueRef a, LLVMValueRef end) {
  return LLVMBuildICmp(g->b, LLVMIntSLT, a, end, "");
}

LLVMValueRef ptx_low32(ptx_gen *g, LLVMValueRef v) { return LLVMBuildTrunc(g->b, v, g->i32, ""); }

LLVMValueRef ptx_widen_operand(ptx_gen *g, const kn_layout *l, LLVMValueRef v, LLVMTypeRef acc) {
  const kn_matmul *m = &g->d->matmul;
  if (LLVMTypeOf(v) == acc) return v;
  bool sign = l == &m->a ? m->a_signed : m->b_signed;
  return sign ? LLVMBuildSExt(g->b, v, acc, "") : LLVMBuildZExt(g->b, v, acc, "");
}

LLVMValueRef ptx_multiple_of(ptx_gen *g, LLVMValueRef v, unsigned bytes) {
  LLVMValueRef low = LLVMBuildAnd(g->b, v, ptx_i64(g, (int64_t)bytes - 1), "");
  return LLVMBuildICmp(g->b, LLVMIntEQ, low, ptx_i64(g, 0), "");
}

LLVMValueRef ptx_layout_aligned(ptx_gen *g, const kn_layout *l, unsigned bytes) {
  /* rows through a table: each row's start aligned to its elements (the
   * runtime checked every one), the offset from it as the matrix's */
  if (l->row_table) return ptx_multiple_of(g, ptx_size(g, l->offset), bytes);
  LLVMValueRef zero = ptx_i64(g, 0);
  LLVMValueRef at = LLVMBuildPtrToInt(g->b, ptx_element_at(g, l, bytes, NULL, zero, zero), g->i64, "");
  return ptx_multiple_of(g, at, bytes);
}

LLVMValueRef ptx_rows_aligned(ptx_gen *g, const kn_layout *l, unsigned bytes, unsigned align) {
  LLVMValueRef zero = ptx_i64(g, 0);
  LLVMValueRef base = LLVMBuildPtrToInt(g->b, ptx_element_at(g, l, bytes, NULL, zero, zero), g->i64, "");
  LLVMValueRef ok = ptx_multiple_of(g, base, align);
  ok = LLVMBuildAnd(g->b, ok, ptx_multiple_of(g, ptx_mul_c(g, ptx_size(g, l->row_stride), bytes), align), "");
  LLVMValueRef unit = LLVMBuildICmp(g->b, LLVMIntEQ, ptx_size(g, l->col_stride), ptx_i64(g, 1), "");
  return LLVMBuildAnd(g->b, ok, unit, "");
}

/* Row `row`'s start through a table of row pointers (kn_layout's
 * row_table): the i32 at byte offset table + 4 row, in 32-bit arithmetic
 * as Wasm computes the table's address. */
static LLVMValueRef row_start(ptx_gen *g, const kn_layout *l, LLVMValueRef row) {
  LLVMValueRef at = LLVMBuildMul(g->b, ptx_low32(g, row), LLVMConstInt(g->i32, 4, false), "");
  at = LLVMBuildAdd(g->b, ptx_low32(g, ptx_size(g, l->table)), at, "");
  return ptx_load(g, g->i32, ptx_global_at(g, LLVMBuildZExt(g->b, at, g->i64, "")), 4);
}

LLVMValueRef ptx_element_at(ptx_gen *g, const kn_layout *l, unsigned bytes, LLVMValueRef batch,
                            LLVMValueRef row, LLVMValueRef col) {
  if (l->row_table) {
    LLVMValueRef c = LLVMBuildMul(g->b, ptx_low32(g, col), ptx_low32(g, ptx_size(g, l->col_stride)), "");
    LLVMValueRef off = LLVMBuildMul(g->b, c, LLVMConstInt(g->i32, bytes, false), "");
    off = LLVMBuildAdd(g->b, ptx_low32(g, ptx_size(g, l->offset)), off, "");
    off = LLVMBuildAdd(g->b, row_start(g, l, row), off, "");
    return ptx_global_at(g, LLVMBuildZExt(g->b, off, g->i64, ""));
  }
  LLVMValueRef r = LLVMBuildMul(g->b, ptx_low32(g, row), ptx_low32(g, ptx_size(g, l->row_stride)), "");
  LLVMValueRef c = LLVMBuildMul(g->b, ptx_low32(g, col), ptx_low32(g, ptx_size(g, l->col_stride)), "");
  LLVMValueRef elems = LLVMBuildAdd(g->b, r, c, "");
  if (batch) {
    LLVMValueRef b = LLVMBuildMul(g->b, ptx_low32(g, batch), ptx_low32(g, ptx_size(g, l->batch_stride)), "");
    elems = LLVMBuildAdd(g->b, b, elems, "");
  }
  LLVMValueRef off = LLVMBuildMul(g->b, elems, LLVMConstInt(g->i32, bytes, false), "");
  off = LLVMBuildAdd(g->b, ptx_low32(g, ptx_size(g, l->offset)), off, "");
  return ptx_global_at(g, LLVMBuildZExt(g->b, off, g->i64, ""));
}
