/* low_table.c: table.*, elem.drop and ref.* instructions. */
#include "low_internal.h"


static LLVMValueRef table_obj(low_fn *f, uint32_t table_index) {
  return low_vmctx_entry(f, offsetof(twasm_vmctx, tables), table_index, "table");
}

/* Size and elems change on table.grow, so both are loaded at every use,
 * unless the table is fixed (low_sealed.c): then the loads are invariant,
 * and LLVM hoists them out of loops and keeps them across calls. */
static LLVMValueRef table_field(low_fn *f, uint32_t table_index, LLVMValueRef table, LLVMTypeRef ty,
                                uint32_t field_offset, const char *name) {
  LLVMValueRef v = low_load_at(f, ty, table, field_offset, name);
  return f->mc->table_fixed[table_index] ? low_mark_invariant(f->mc, v) : v;
}

/* &elems[index] after trapping with trap_code when index >= size. */
LLVMValueRef low_table_elem_ptr(low_fn *f, uint32_t table_index, LLVMValueRef index,
                                uint32_t trap_code, uint32_t offset) {
  low_module_ctx *mc = f->mc;
  LLVMValueRef table = table_obj(f, table_index);
  LLVMValueRef size = table_field(f, table_index, table, mc->t_i32, offsetof(twasm_table_abi, size), "table_size");
  LLVMValueRef out = LLVMBuildICmp(f->b, LLVMIntUGE, index, size, "");
  low_trap_if(f, out, trap_code, offset);
  LLVMValueRef elems = table_field(f, table_index, table, mc->t_ptr, offsetof(twasm_table_abi, elems), "elems");
  LLVMValueRef idx = LLVMBuildZExt(f->b, index, mc->t_i64, "");
  return LLVMBuildInBoundsGEP2(f->b, mc->t_ptr, elems, &idx, 1, "elem");
}

static void emit_table_get(low_fn *f, const wasm_insn *insn) {
  LLVMValueRef index = low_pop(f);
  LLVMValueRef at = low_table_elem_ptr(f, insn->u.index, index, TWASM_TRAP_TABLE_OOB, insn->offset);
  low_push(f, LLVMBuildLoad2(f->b, f->mc->t_ptr, at, "ref"));
}

static void emit_table_set(low_fn *f, const wasm_insn *insn) {
  LLVMValueRef value = low_pop(f), index = low_pop(f);
  LLVMValueRef at = low_table_elem_ptr(f, insn->u.index, index, TWASM_TRAP_TABLE_OOB, insn->offset);
  LLVMBuildStore(f->b, value, at);
}

static LLVMValueRef const_u32(low_fn *f, uint32_t v) {
  return LLVMConstInt(f->mc->t_i32, v, false);
}

static void emit_table_grow(low_fn *f, const wasm_insn *insn) {
  LLVMValueRef delta = low_pop(f), init = low_pop(f);
  LLVMValueRef args[] = {f->vmctx, const_u32(f, insn->u.index), init, delta};
  low_push(f, LLVMBuildCall2(f->b, f->mc->table_grow_ty, f->mc->table_grow_fn, args, 4, "old_size"));
}

/* Calls a bulk helper with vmctx, the leading immediates, then the last n
 * stack operands, and traps at this instruction if it reports a trap. */
static void call_bulk(low_fn *f, const wasm_insn *insn, LLVMTypeRef ty, LLVMValueRef fn,
                      const uint32_t *imms, uint32_t nimms, uint32_t nops) {
  LLVMValueRef args[8];
  uint32_t n = 0;
  args[n++] = f->vmctx;
  for (uint32_t i = 0; i < nimms; i++) args[n++] = const_u32(f, imms[i]);
  for (uint32_t i = 0; i < nops; i++) args[n++] = f->stack[f->sp - nops + i];
  f->sp -= nops;
  LLVMValueRef code = LLVMBuildCall2(f->b, ty, fn, args, n, "");
  LLVMValueRef failed = LLVMBuildICmp(f->b, LLVMIntNE, code, const_u32(f, 0), "");
  low_trap_if(f, failed, TWASM_TRAP_TABLE_OOB, insn->offset);
}

static void emit_drop_segment(low_fn *f, uint32_t elem_index) {
  LLVMValueRef args[] = {f->vmctx, const_u32(f, elem_index)};
  LLVMBuildCall2(f->b, f->mc->elem_drop_ty, f->mc->elem_drop_fn, args, 2, "");
}

static void emit_ref_is_null(low_fn *f) {
  LLVMValueRef is_null = LLVMBuildIsNull(f->b, low_pop(f), "");
  low_push(f, LLVMBuildZExt(f->b, is_null, f->mc->t_i32, "is_null"));
}

bool low_emit_table(low_fn *f, const wasm_insn *insn) {
  low_module_ctx *mc = f->mc;
  switch (insn->op) {
  case OP_TABLE_GET: emit_table_get(f, insn); return true;
  case OP_TABLE_SET: emit_table_set(f, insn); return true;
  case OP_TABLE_SIZE:
    low_push(f, table_field(f, insn->u.index, table_obj(f, insn->u.index), f->mc->t_i32,
                            offsetof(twasm_table_abi, size), "table_size"));
    return true;
  case OP_TABLE_GROW: emit_table_grow(f, insn); return true;
  case OP_TABLE_FILL:
    /* twasm_rt_table_fill(vmctx, table, dst, value, n) */
    call_bulk(f, insn, mc->table_fill_ty, mc->table_fill_fn, &insn->u.index, 1, 3);
    return true;
  case OP_TABLE_COPY: {
    const uint32_t tables[] = {insn->u.pair.a, insn->u.pair.b}; /* dst, src */
    call_bulk(f, insn, mc->table_copy_ty, mc->table_copy_fn, tables, 2, 3);
    return true;
  }
  case OP_TABLE_INIT: {
    const uint32_t imms[] = {insn->u.pair.b, insn->u.pair.a}; /* table, segment */
    call_bulk(f, insn, mc->table_init_ty, mc->table_init_fn, imms, 2, 3);
    return true;
  }
  case OP_ELEM_DROP: emit_drop_segment(f, insn->u.index); return true;
  case OP_REF_NULL: low_push(f, LLVMConstNull(mc->t_ptr)); return true;
  case OP_REF_IS_NULL: emit_ref_is_null(f); return true;
  case OP_REF_FUNC: low_push(f, low_func_ref(f, insn->u.index)); return true;
  default: return false;
  }
}
