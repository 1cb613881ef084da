/* kn_access.c: every load and store of a loop nest as base + affine offset. */
#include "kn.h"

/* The deepest loop of nest's tree whose body holds block b. */
static const kn_loop *innermost(const kn_loop *nest, int b) {
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

static kn_access describe(LLVMValueRef insn, const kn_loop *loop, const kn_cfg *cfg,
                          LLVMTargetDataRef td) {
  kn_access a = {.insn = insn, .is_store = LLVMIsAStoreInst(insn) != NULL, .loop = loop};
  LLVMValueRef ptr = LLVMGetOperand(insn, a.is_store ? 1 : 0);
  a.elem_type = a.is_store ? LLVMTypeOf(LLVMGetOperand(insn, 0)) : LLVMTypeOf(insn);
  a.size = (unsigned)LLVMStoreSizeOfType(td, a.elem_type);
  a.offset = kn_address_of(ptr, loop, cfg, td, &a.base);
  return a;
}

kn_access *kn_accesses(const kn_loop *nest, const kn_cfg *cfg, LLVMTargetDataRef td, int *count) {
  int n = 0;
  for (int i = 0; i < nest->nbody; i++)
    for (LLVMValueRef insn = LLVMGetFirstInstruction(cfg->blocks[nest->body[i]].bb); insn;
         insn = LLVMGetNextInstruction(insn))
      n += is_access(insn);
  kn_access *out = tw_arena_alloc(cfg->arena, (size_t)(n + 1) * sizeof *out);
  *count = 0;
  for (int i = 0; i < nest->nbody; i++) {
    int b = nest->body[i];
    const kn_loop *loop = innermost(nest, b);
    for (LLVMValueRef insn = LLVMGetFirstInstruction(cfg->blocks[b].bb); insn;
         insn = LLVMGetNextInstruction(insn))
      if (is_access(insn)) out[(*count)++] = describe(insn, loop, cfg, td);
  }
  return out;
}
