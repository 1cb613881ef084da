/* ir_access.c: every load and store of a loop nest as base + affine offset. */
#include "ir.h"

/* The deepest loop of nest's tree whose body holds block b. */
static const ir_loop *innermost(const ir_loop *nest, int b) {
  for (bool descended = true; descended;) {
    descended = false;
    for (int i = 0; i < nest->nchildren && !descended; i++)
      if (nest->children[i]->in_body[b]) {
        nest = nest->children[i];
        descended = true;
      }
  }
  return nest;
}

static bool is_access(LLVMValueRef insn) {
  return LLVMIsALoadInst(insn) || LLVMIsAStoreInst(insn);
}

static ir_access describe(LLVMValueRef insn, const ir_loop *loop, const ir_cfg *cfg,
                          LLVMTargetDataRef td) {
  ir_access a = {.insn = insn, .is_store = LLVMIsAStoreInst(insn) != NULL, .loop = loop};
  LLVMValueRef ptr = LLVMGetOperand(insn, a.is_store ? 1 : 0);
  a.elem_type = a.is_store ? LLVMTypeOf(LLVMGetOperand(insn, 0)) : LLVMTypeOf(insn);
  a.size = (unsigned)LLVMStoreSizeOfType(td, a.elem_type);
  a.offset = ir_address_of(ptr, loop, cfg, td, &a.base);
  return a;
}

ir_access *ir_accesses(const ir_loop *nest, const ir_cfg *cfg, LLVMTargetDataRef td, int *count) {
  int n = 0;
  for (int i = 0; i < nest->nbody; i++)
    for (LLVMValueRef insn = LLVMGetFirstInstruction(cfg->blocks[nest->body[i]].bb); insn;
         insn = LLVMGetNextInstruction(insn))
      n += is_access(insn);
  ir_access *out = tw_arena_alloc(cfg->arena, (size_t)(n + 1) * sizeof *out);
  *count = 0;
  for (int i = 0; i < nest->nbody; i++) {
    int b = nest->body[i];
    const ir_loop *loop = innermost(nest, b);
    for (LLVMValueRef insn = LLVMGetFirstInstruction(cfg->blocks[b].bb); insn;
         insn = LLVMGetNextInstruction(insn))
      if (is_access(insn)) out[(*count)++] = describe(insn, loop, cfg, td);
  }
  return out;
}
