/* low_sealed.c: call_indirect through sealed tables.  A table nobody can
 * change after instantiation (defined here, neither imported nor exported,
 * no table.set/grow/fill/copy/init writing it, every active segment at a
 * constant offset naming functions of this module) has contents known at
 * compile time.  Its call_indirect then reads a constant image in two
 * arrays, the code pointers and their type keys (one array of {code, key}
 * pairs of 16 bytes costs a shift of the index at every call, where x86
 * scales by 4 and 8 in the address): one bounds compare against a
 * constant size, one compare of the entry's key with the expected one
 * (null entries hold a key no type has, so the null check is folded into
 * it), and a call with the caller's own vmctx, every entry being a
 * function of this instance.
 * LLVM sees the image's initialiser, so a constant index becomes a direct
 * call it may inline.  C programs' function-pointer tables are all sealed. */
#include <stdio.h>

#include "low_internal.h"

/* Images above this many entries are not worth their size in the object. */
#define SEALED_MAX_ENTRIES 65536u
/* The key of a null entry: no type index reaches it. */
#define NULL_KEY UINT32_MAX

/* Type t's key: the lowest index of a type with the same signature, so
 * structurally equal types match, as the spec's type check demands. */
uint32_t low_sealed_key(const wasm_module *m, uint32_t t) {
  const wasm_functype *a = &m->types[t];
  for (uint32_t k = 0; k < t; k++) {
    const wasm_functype *b = &m->types[k];
    if (a->nparams != b->nparams || a->nresults != b->nresults) continue;
    bool same = true;
    for (uint32_t i = 0; same && i < a->nparams; i++) same = a->params[i] == b->params[i];
    for (uint32_t i = 0; same && i < a->nresults; i++) same = a->results[i] == b->results[i];
    if (same) return k;
  }
  return t;
}

/* Marks in open[] every table that an instruction of the module may write. */
static void mark_written(const wasm_module *m, bool *open) {
  for (uint32_t f = 0; f < m->nfuncs; f++) {
    const wasm_func *fn = &m->funcs[f];
    for (uint32_t i = 0; !fn->imported && i < fn->ncode; i++) {
      const wasm_insn *in = &fn->code[i];
      switch (in->op) {
      case OP_TABLE_SET: case OP_TABLE_GROW: case OP_TABLE_FILL: open[in->u.index] = true; break;
      case OP_TABLE_COPY: open[in->u.pair.a] = true; break;
      case OP_TABLE_INIT: open[in->u.pair.b] = true; break;
      default: break;
      }
    }
  }
}

/* Whether table t can be sealed, as far as its own declaration and the
 * exports say. */
static bool closed_table(const wasm_module *m, uint32_t t) {
  const wasm_table *tb = &m->tables[t];
  if (tb->imported || tb->elem_type != VT_FUNCREF || tb->limits.min > SEALED_MAX_ENTRIES) return false;
  for (uint32_t e = 0; e < m->nexports; e++)
    if (m->exports[e].kind == EXT_TABLE && m->exports[e].index == t) return false;
  return true;
}

/* Applies active segment seg to image (function index + 1 per entry, 0 for
 * null), in order as instantiation does; false when its offset or an item
 * is not a compile-time constant of this module, or it does not fit (then
 * instantiation fails and no code runs, but the image stays simple). */
static bool apply_segment(const wasm_module *m, const wasm_elem *seg, uint32_t size, uint32_t *image) {
  if (seg->offset_expr.ncode != 1 || seg->offset_expr.code[0].op != OP_I32_CONST) return false;
  uint64_t at = (uint32_t)seg->offset_expr.code[0].u.i32;
  if (at + seg->nitems > size) return false;
  for (uint32_t i = 0; i < seg->nitems; i++) {
    const wasm_constexpr *item = &seg->items[i];
    if (item->ncode != 1) return false;
    const wasm_insn *in = &item->code[0];
    if (in->op == OP_REF_NULL) {
      image[at + i] = 0;
    } else if (in->op == OP_REF_FUNC && in->u.index < m->nfuncs && !m->funcs[in->u.index].imported) {
      image[at + i] = in->u.index + 1;
    } else {
      return false;
    }
  }
  return true;
}

/* A private constant array named name<t> holding n values of ty. */
static LLVMValueRef const_array(low_module_ctx *mc, const char *name, uint32_t t, LLVMTypeRef ty,
                                LLVMValueRef *values, uint32_t n) {
  char g_name[48];
  snprintf(g_name, sizeof g_name, "%s%u", name, t);
  return low_private_const(mc, LLVMConstArray2(ty, values, n), g_name);
}

/* The constant image of table t (its code pointers to mc->sealed[t], its
 * type keys to mc->sealed_keys[t]), or false when t is not sealed; its
 * entries' function indices (+ 1, 0 for null) go to mc->sealed_funcs[t]. */
static bool build_image(low_module_ctx *mc, uint32_t t) {
  const wasm_module *m = mc->m;
  uint32_t size = (uint32_t)m->tables[t].limits.min;
  uint32_t *image = tw_arena_alloc(&mc->arena, (size + 1) * sizeof *image);
  for (uint32_t i = 0; i < size; i++) image[i] = 0;
  for (uint32_t e = 0; e < m->nelems; e++) {
    const wasm_elem *seg = &m->elems[e];
    if (seg->mode == SEG_ACTIVE && seg->table_index == t && !apply_segment(m, seg, size, image))
      return false;
  }
  mc->sealed_funcs[t] = image;
  LLVMValueRef *codes = tw_arena_alloc(&mc->arena, (size + 1) * sizeof *codes);
  LLVMValueRef *keys = tw_arena_alloc(&mc->arena, (size + 1) * sizeof *keys);
  for (uint32_t i = 0; i < size; i++) {
    uint32_t f = image[i];
    codes[i] = f ? mc->callees[f - 1] : LLVMConstNull(mc->t_ptr);
    keys[i] = LLVMConstInt(mc->t_i32, f ? low_sealed_key(m, m->funcs[f - 1].type_index) : NULL_KEY, false);
  }
  mc->sealed[t] = const_array(mc, "twasm_sealed_table", t, mc->t_ptr, codes, size);
  mc->sealed_keys[t] = const_array(mc, "twasm_sealed_keys", t, mc->t_i32, keys, size);
  return true;
}

/* Marks in fixed[] the tables whose size and element array never change
 * (no table.grow of this module, and no other module can reach them:
 * defined here, not exported). */
static void mark_fixed(const wasm_module *m, bool *fixed) {
  for (uint32_t t = 0; t < m->ntables; t++) fixed[t] = !m->tables[t].imported;
  for (uint32_t e = 0; e < m->nexports; e++)
    if (m->exports[e].kind == EXT_TABLE) fixed[m->exports[e].index] = false;
  for (uint32_t f = 0; f < m->nfuncs; f++) {
    const wasm_func *fn = &m->funcs[f];
    for (uint32_t i = 0; !fn->imported && i < fn->ncode; i++)
      if (fn->code[i].op == OP_TABLE_GROW) fixed[fn->code[i].u.index] = false;
  }
}

void low_sealed_init(low_module_ctx *mc) {
  const wasm_module *m = mc->m;
  mc->table_fixed = tw_arena_alloc(&mc->arena, m->ntables + 1);
  mark_fixed(m, mc->table_fixed);
  mc->sealed = tw_arena_alloc(&mc->arena, (m->ntables + 1) * sizeof *mc->sealed);
  mc->sealed_keys = tw_arena_alloc(&mc->arena, (m->ntables + 1) * sizeof *mc->sealed_keys);
  mc->sealed_funcs = tw_arena_alloc(&mc->arena, (m->ntables + 1) * sizeof *mc->sealed_funcs);
  for (uint32_t t = 0; t < m->ntables; t++) mc->sealed_funcs[t] = NULL;
  bool *open = tw_arena_alloc(&mc->arena, m->ntables + 1);
  for (uint32_t t = 0; t < m->ntables; t++) open[t] = !closed_table(m, t);
  mark_written(m, open);
  for (uint32_t t = 0; t < m->ntables; t++) {
    mc->sealed[t] = mc->sealed_keys[t] = NULL;
    if (!open[t]) build_image(mc, t);
  }
}

LLVMValueRef low_sealed_code(low_fn *f, uint32_t type_index, uint32_t table_index, LLVMValueRef index,
                             uint32_t offset) {
  low_module_ctx *mc = f->mc;
  LLVMValueRef image = mc->sealed[table_index];
  if (!image) return NULL;
  uint32_t size = (uint32_t)mc->m->tables[table_index].limits.min;
  LLVMValueRef out = LLVMBuildICmp(f->b, LLVMIntUGE, index, LLVMConstInt(mc->t_i32, size, false), "");
  low_trap_if(f, out, TWASM_TRAP_UNDEFINED_ELEMENT, offset);
  /* A constant index past the table traps above; the address below is
   * dead then, but as a constant it would still be emitted, as a
   * relocation whose offset need not fit (-O0 keeps the block). */
  if (LLVMIsAConstantInt(index) && LLVMConstIntGetZExtValue(index) >= size) index = LLVMConstInt(mc->t_i32, 0, false);
  LLVMValueRef keys = mc->sealed_keys[table_index];
  LLVMValueRef idx[] = {LLVMConstInt(mc->t_i64, 0, false), LLVMBuildZExt(f->b, index, mc->t_i64, "")};
  LLVMValueRef key_at = LLVMBuildInBoundsGEP2(f->b, LLVMGlobalGetValueType(keys), keys, idx, 2, "");
  LLVMValueRef key = LLVMBuildLoad2(f->b, mc->t_i32, key_at, "type_key");
  LLVMValueRef want = LLVMConstInt(mc->t_i32, low_sealed_key(mc->m, type_index), false);
  LLVMValueRef differs = LLVMBuildICmp(f->b, LLVMIntNE, key, want, "");
  /* Cold path: which of the spec's two traps, null first. */
  LLVMBasicBlockRef here = LLVMGetInsertBlock(f->b);
  LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(mc->ctx, f->fn, "sealed_bad");
  LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(mc->ctx, f->fn, "sealed_ok");
  LLVMMoveBasicBlockAfter(ok, here);
  low_mark_unlikely(mc, LLVMBuildCondBr(f->b, differs, bad, ok), true);
  LLVMPositionBuilderAtEnd(f->b, bad);
  LLVMValueRef is_null = LLVMBuildICmp(f->b, LLVMIntEQ, key, LLVMConstInt(mc->t_i32, NULL_KEY, false), "");
  low_trap_if(f, is_null, TWASM_TRAP_UNINITIALIZED_ELEMENT, offset);
  low_trap(f, TWASM_TRAP_INDIRECT_TYPE_MISMATCH, offset);
  LLVMBuildUnreachable(f->b);
  LLVMPositionBuilderAtEnd(f->b, ok);
  LLVMValueRef code_at = LLVMBuildInBoundsGEP2(f->b, LLVMGlobalGetValueType(image), image, idx, 2, "");
  return LLVMBuildLoad2(f->b, mc->t_ptr, code_at, "code");
}
