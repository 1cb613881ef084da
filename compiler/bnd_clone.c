/* bnd_clone.c: copies of a loop nest's blocks (the fast copy of bounds
 * versioning), and the pointer map both the copy and bnd_lin.c use. */
#include "bnd.h"

#include <stdint.h>

static unsigned slot_of(const void *key, unsigned cap) {
  uintptr_t h = (uintptr_t)key >> 3;
  return (unsigned)((h * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static void map_grow(bnd_map *m) {
  unsigned old_cap = m->cap;
  const void **old_keys = m->keys;
  void **old_vals = m->vals;
  m->cap = old_cap ? old_cap * 2 : 64;
  m->keys = tw_arena_alloc(m->arena, m->cap * sizeof *m->keys);
  m->vals = tw_arena_alloc(m->arena, m->cap * sizeof *m->vals);
  m->count = 0;
  for (unsigned i = 0; i < old_cap; i++)
    if (old_keys[i]) bnd_map_put(m, old_keys[i], old_vals[i]);
}

void bnd_map_put(bnd_map *m, const void *key, void *val) {
  if ((m->count + 1) * 2 > m->cap) map_grow(m);
  unsigned i = slot_of(key, m->cap);
  while (m->keys[i] && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
  if (!m->keys[i]) m->count++;
  m->keys[i] = key;
  m->vals[i] = val;
}

void *bnd_map_get(const bnd_map *m, const void *key) {
  if (!m->cap) return NULL;
  for (unsigned i = slot_of(key, m->cap); m->keys[i]; i = (i + 1) & (m->cap - 1))
    if (m->keys[i] == key) return m->vals[i];
  return NULL;
}

LLVMValueRef bnd_clone_value(const bnd_clone *c, LLVMValueRef v) {
  LLVMValueRef copy = bnd_map_get(&c->map, v);
  return copy ? copy : v;
}

static LLVMValueRef block_value(LLVMBasicBlockRef bb) { return LLVMBasicBlockAsValue(bb); }

/* Each instruction copied in place, phis as empty phis (their incoming
 * values may be defined later in the region). */
static void copy_instructions(bnd_clone *c, LLVMBuilderRef b) {
  for (int i = 0; i < c->nblocks; i++) {
    LLVMPositionBuilderAtEnd(b, c->copies[i]);
    for (LLVMValueRef in = LLVMGetFirstInstruction(c->blocks[i]); in; in = LLVMGetNextInstruction(in)) {
      LLVMValueRef copy;
      if (LLVMIsAPHINode(in)) {
        copy = LLVMBuildPhi(b, LLVMTypeOf(in), "");
      } else {
        copy = LLVMInstructionClone(in);
        LLVMInsertIntoBuilder(b, copy);
      }
      bnd_map_put(&c->map, in, copy);
    }
  }
}

/* Operands (successor blocks included) that the region defines now name
 * their copies; phis get their incoming edges, mapped the same way. */
static void remap(bnd_clone *c) {
  for (int i = 0; i < c->nblocks; i++)
    for (LLVMValueRef in = LLVMGetFirstInstruction(c->blocks[i]); in; in = LLVMGetNextInstruction(in)) {
      LLVMValueRef copy = bnd_map_get(&c->map, in);
      if (LLVMIsAPHINode(in)) {
        for (unsigned k = 0; k < LLVMCountIncoming(in); k++) {
          LLVMValueRef v = bnd_clone_value(c, LLVMGetIncomingValue(in, k));
          LLVMBasicBlockRef from = LLVMGetIncomingBlock(in, k);
          LLVMValueRef from_copy = bnd_map_get(&c->map, block_value(from));
          if (from_copy) from = LLVMValueAsBasicBlock(from_copy);
          LLVMAddIncoming(copy, &v, &from, 1);
        }
        continue;
      }
      int n = LLVMGetNumOperands(copy);
      for (int k = 0; k < n; k++) {
        LLVMValueRef op = LLVMGetOperand(copy, (unsigned)k);
        LLVMValueRef mapped = op ? bnd_map_get(&c->map, op) : NULL;
        if (mapped) LLVMSetOperand(copy, (unsigned)k, mapped);
      }
    }
}

void bnd_clone_region(bnd_clone *c, tw_arena *a, LLVMBasicBlockRef *blocks, int nblocks) {
  *c = (bnd_clone){.blocks = blocks, .nblocks = nblocks, .map = {.arena = a}};
  c->copies = tw_arena_alloc(a, (size_t)(nblocks + 1) * sizeof *c->copies);
  LLVMValueRef fn = LLVMGetBasicBlockParent(blocks[0]);
  LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(fn));
  for (int i = 0; i < nblocks; i++) {
    c->copies[i] = LLVMAppendBasicBlockInContext(ctx, fn, "bnd.fast");
    bnd_map_put(&c->map, block_value(blocks[i]), block_value(c->copies[i]));
  }
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  copy_instructions(c, b);
  LLVMDisposeBuilder(b);
  remap(c);
}

static bool is_copy(const bnd_clone *c, LLVMBasicBlockRef bb) {
  for (int i = 0; i < c->nblocks; i++)
    if (c->copies[i] == bb) return true;
  return false;
}

void bnd_clone_exits(bnd_clone *c) {
  for (int i = 0; i < c->nblocks; i++) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(c->copies[i]);
    for (unsigned s = 0; term && s < LLVMGetNumSuccessors(term); s++) {
      LLVMBasicBlockRef to = LLVMGetSuccessor(term, s);
      if (is_copy(c, to)) continue;
      for (LLVMValueRef phi = LLVMGetFirstInstruction(to); phi && LLVMIsAPHINode(phi);
           phi = LLVMGetNextInstruction(phi)) {
        LLVMValueRef v = bnd_clone_value(c, ir_incoming_from(phi, c->blocks[i]));
        LLVMBasicBlockRef from = c->copies[i];
        LLVMAddIncoming(phi, &v, &from, 1);
      }
    }
  }
}
