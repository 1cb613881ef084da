/* low_variable.c: local.get/set/tee on allocas, global.get/set through the
 * vmctx's global cells. */
#include "low_internal.h"

/* Pointer to the cell of global i (twasm_global_cell, 8-aligned).  An
 * imported global's cell is another instance's or the host's:
 * vmctx->globals[i], which never changes once the instance exists (the
 * value inside it may).  The module's own globals lie in the instance, one
 * stride apart from vmctx->own_globals (twasm_abi.h, ABI 13): one
 * invariant load serves them all (the shadow-stack pointer at every
 * frame's entry and exit), where each took two (vmctx->globals, then its
 * cell pointer).  Not addressed from the vmctx register directly: that
 * keeps the vmctx live through loops that call nothing, and LLVM's
 * register allocator then spilled other values there (compress +4.8 %,
 * Lua fib +2.7 % instructions, 30 Nov 2026). */
static LLVMValueRef global_cell(low_fn *f, uint32_t global_index) {
  const wasm_global *g = &f->mc->m->globals[global_index];
  if (g->imported) return low_vmctx_entry(f, offsetof(twasm_vmctx, globals), global_index, "global_cell");
  uint64_t own = global_index - f->mc->m->nglobal_imports;
  LLVMValueRef base = low_vmctx_load(f, offsetof(twasm_vmctx, own_globals), f->mc->t_ptr, "own_globals");
  LLVMValueRef off = LLVMConstInt(f->mc->t_i64, own * TWASM_OWN_GLOBAL_STRIDE, false);
  return LLVMBuildGEP2(f->b, f->mc->t_i8, base, &off, 1, "global_cell");
}

static void emit_global_get(low_fn *f, uint32_t global_index) {
  const wasm_global *g = &f->mc->m->globals[global_index];
  LLVMValueRef cell = global_cell(f, global_index);
  LLVMValueRef v = LLVMBuildLoad2(f->b, low_valtype(f->mc, g->valtype), cell, "global");
  LLVMSetAlignment(v, 8); /* a v128 would assume 16 */
  low_tbaa(f->mc, v, f->mc->tbaa_global);
  low_push(f, v);
}

static void emit_global_set(low_fn *f, uint32_t global_index) {
  LLVMValueRef v = low_pop(f);
  LLVMValueRef st = LLVMBuildStore(f->b, v, global_cell(f, global_index));
  LLVMSetAlignment(st, 8);
  low_tbaa(f->mc, st, f->mc->tbaa_global);
}

static LLVMValueRef local_get(low_fn *f, uint32_t i) {
  return LLVMBuildLoad2(f->b, low_valtype(f->mc, f->local_types[i]), f->locals[i], "");
}

bool low_emit_variable(low_fn *f, const wasm_insn *insn) {
  uint32_t i = insn->u.index;
  switch (insn->op) {
  case OP_LOCAL_GET: low_push(f, local_get(f, i)); return true;
  case OP_LOCAL_SET: LLVMBuildStore(f->b, low_pop(f), f->locals[i]); return true;
  case OP_LOCAL_TEE: LLVMBuildStore(f->b, f->stack[f->sp - 1], f->locals[i]); return true;
  case OP_GLOBAL_GET: emit_global_get(f, i); return true;
  case OP_GLOBAL_SET: emit_global_set(f, i); return true;
  default: return false;
  }
}
