/* low_call.c: call and call_indirect, through the typed native signatures
 * of twasm_abi.h. */
#include "low_internal.h"


/* The struct twasm_func of any function: vmctx->funcs[i]. */
LLVMValueRef low_func_ref(low_fn *f, uint32_t func_index) {
  return low_vmctx_entry(f, offsetof(twasm_vmctx, funcs), func_index, "funcref");
}

/* Pops the arguments of type_index into an array for low_call_emit, the
 * callee's vmctx first. */
LLVMValueRef *low_call_pop_args(low_fn *f, uint32_t type_index, LLVMValueRef callee_vmctx) {
  uint32_t n = f->mc->m->types[type_index].nparams;
  LLVMValueRef *args = tw_arena_alloc(&f->mc->arena, (n + 1) * sizeof *args);
  args[0] = callee_vmctx;
  for (uint32_t i = 0; i < n; i++) args[i + 1] = f->stack[f->sp - n + i];
  f->sp -= n;
  return args;
}

/* Checks the stack before a call unless the callee's stack use is
 * bounded.  One check covers every later call it dominates: the stack
 * pointer does not move within a function (low_control.c keeps the flag). */
void low_call_stack_check(low_fn *f, bool bounded) {
  if (f->stack_check_at_calls && !bounded && !f->stack_checked) {
    low_stack_check(f);
    f->stack_checked = true;
  }
}

LLVMValueRef low_call_emit(low_fn *f, uint32_t type_index, LLVMValueRef code, LLVMValueRef *args) {
  low_module_ctx *mc = f->mc;
  unsigned n = mc->m->types[type_index].nparams + 1;
  LLVMValueRef r = LLVMBuildCall2(f->b, mc->fn_types[type_index], code, args, n, "");
  low_wasm_abi_call(mc, r);
  /* Wasm has no tail calls: a runaway recursion must exhaust the stack,
   * not become a loop through tail recursion elimination or a sibcall. */
  LLVMSetTailCallKind(r, LLVMTailCallKindNoTail);
  return r;
}

void low_call_allow_tail(LLVMValueRef call) { LLVMSetTailCallKind(call, LLVMTailCallKindTail); }

void low_call_push_results(low_fn *f, uint32_t type_index, LLVMValueRef r) {
  const wasm_functype *ft = &f->mc->m->types[type_index];
  if (ft->nresults == 1) {
    low_push(f, r);
  } else {
    for (uint32_t i = 0; i < ft->nresults; i++) low_push(f, LLVMBuildExtractValue(f->b, r, i, ""));
  }
}

/* tail: the call may be a sibling call (low_call_allow_tail). */
static void call_typed(low_fn *f, uint32_t type_index, LLVMValueRef code, LLVMValueRef callee_vmctx,
                       bool bounded, bool tail) {
  LLVMValueRef *args = low_call_pop_args(f, type_index, callee_vmctx);
  low_call_stack_check(f, bounded);
  LLVMValueRef r = low_call_emit(f, type_index, code, args);
  if (tail) low_call_allow_tail(r);
  low_call_push_results(f, type_index, r);
}

static void emit_call(low_fn *f, uint32_t func_index) {
  const wasm_func *callee = &f->mc->m->funcs[func_index];
  if (!callee->imported) {
    call_typed(f, callee->type_index, f->mc->callees[func_index], f->vmctx,
               !low_stack_call_checked(f->mc, f->func_index, func_index),
               low_tail_call(f->mc, f->func_index, func_index));
    return;
  }
  LLVMValueRef ref = low_func_ref(f, func_index);
  LLVMValueRef code = low_load_at(f, f->mc->t_ptr, ref, offsetof(twasm_func_abi, code), "code");
  LLVMValueRef vmctx = low_load_at(f, f->mc->t_ptr, ref, offsetof(twasm_func_abi, vmctx), "callee_vmctx");
  call_typed(f, callee->type_index, code, vmctx, false, false);
}

/* Checks in the spec's order: bounds, null, then the signature, which is
 * compared by canonical id so types equal across modules match. */
static void emit_call_indirect(low_fn *f, const wasm_insn *insn) {
  low_module_ctx *mc = f->mc;
  uint32_t type_index = insn->u.pair.a, table_index = insn->u.pair.b;
  LLVMValueRef index = low_pop(f);
  if (low_devirt_call(f, type_index, table_index, index, insn->offset)) return;
  LLVMValueRef sealed = low_sealed_code(f, type_index, table_index, index, insn->offset);
  if (sealed) {
    bool bounded = !low_stack_indirect_checked(mc, type_index, table_index);
    call_typed(f, type_index, sealed, f->vmctx, bounded, low_tail_indirect(mc, f->func_index, type_index, table_index));
    return;
  }
  LLVMValueRef slot = low_table_elem_ptr(f, table_index, index, TWASM_TRAP_UNDEFINED_ELEMENT, insn->offset);
  LLVMValueRef ref = LLVMBuildLoad2(f->b, mc->t_ptr, slot, "callee");
  LLVMValueRef is_null = LLVMBuildIsNull(f->b, ref, "");
  low_trap_if(f, is_null, TWASM_TRAP_UNINITIALIZED_ELEMENT, insn->offset);
  LLVMValueRef sig = low_load_at(f, mc->t_i32, ref, offsetof(twasm_func_abi, sig_id), "sig_id");
  /* The canonical ids are fixed at instantiation (invariant: hoistable). */
  LLVMValueRef expected = low_vmctx_entry_u32(f, offsetof(twasm_vmctx, sig_ids), type_index, "expected_sig");
  LLVMValueRef differs = LLVMBuildICmp(f->b, LLVMIntNE, sig, expected, "");
  low_trap_if(f, differs, TWASM_TRAP_INDIRECT_TYPE_MISMATCH, insn->offset);
  LLVMValueRef code = low_load_at(f, mc->t_ptr, ref, offsetof(twasm_func_abi, code), "code");
  LLVMValueRef vmctx = low_load_at(f, mc->t_ptr, ref, offsetof(twasm_func_abi, vmctx), "callee_vmctx");
  call_typed(f, type_index, code, vmctx, false, false);
}

bool low_emit_call(low_fn *f, const wasm_insn *insn) {
  switch (insn->op) {
  case OP_CALL: emit_call(f, insn->u.index); return true;
  case OP_CALL_INDIRECT: emit_call_indirect(f, insn); return true;
  default: return false;
  }
}
