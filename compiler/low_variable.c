/* low_variable.c: local.get/set/tee on allocas, global.get/set through the
 * vmctx's global cells. */
#include "low_internal.h"

/* vmctx->own_globals, kept in f->own_slot: loaded at entry, and again at
 * a global access that a call dominates since the last load (f->own_stale,
 * set by low_call_emit, restored at else and end as low_control.c does
 * for the stack check).  The pointer never changes, so one invariant load
 * would be right, but LLVM then keeps the one loaded at entry for the
 * frame's exit, which code generation holds across every call in
 * between: spilled at entry and reloaded at the exit where the
 * callee-saved registers are taken (mujs's js_call, round 9 of issue 22).
 * Loaded again after a call (no !invariant.load; its own TBAA tag, so no
 * store to linear memory or to a global kills it) it lives from one call
 * to the next.  Where a path without a call reaches the access (an
 * allocator's fast path to its exit), the entry's load serves it, as
 * before: loading it at every access after a call, dominating or not,
 * cost bintrees' malloc a load per call (+0.61 %). */
void low_own_globals_init(low_fn *f) {
  if (f->mc->m->nglobals <= f->mc->m->nglobal_imports) return;
  f->own_slot = LLVMBuildAlloca(f->b, f->mc->t_ptr, "own_globals_slot");
  low_own_globals_reload(f);
}

void low_own_globals_reload(low_fn *f) {
  if (!f->own_slot) return;
  LLVMValueRef p = low_load_at(f, f->mc->t_ptr, f->vmctx, offsetof(twasm_vmctx, own_globals), "own_globals");
  low_tbaa(f->mc, p, f->mc->tbaa_own);
  LLVMBuildStore(f->b, p, f->own_slot);
  f->own_stale = false;
}

/* Pointer to the cell of global i (twasm_global_cell, 8-aligned).  An
 * imported global's cell is another instance's or the host's:
 * vmctx->globals[i], which never changes once the instance exists (the
 * value inside it may).  The module's own globals lie in the instance, one
 * stride apart from vmctx->own_globals (twasm_abi.h, ABI 13): one load
 * serves them all (the shadow-stack pointer at every frame's entry and
 * exit) between two calls, where each took two (vmctx->globals, then its
 * cell pointer).  Not addressed from the vmctx register directly: that
 * keeps the vmctx live through loops that call nothing, and LLVM's
 * register allocator then spilled other values there (compress +4.8 %,
 * Lua fib +2.7 % instructions, 30 Nov 2026). */
static LLVMValueRef global_cell(low_fn *f, uint32_t global_index) {
  const wasm_global *g = &f->mc->m->globals[global_index];
  if (g->imported) return low_vmctx_entry(f, offsetof(twasm_vmctx, globals), global_index, "global_cell");
  uint64_t own = global_index - f->mc->m->nglobal_imports;
  if (f->own_stale) low_own_globals_reload(f);
  LLVMValueRef base = LLVMBuildLoad2(f->b, f->mc->t_ptr, f->own_slot, "own_globals");
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
