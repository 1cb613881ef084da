/* low_desc.c: emits the module descriptor (twasm_module_abi of
 * include/twasm_abi.h) as LLVM constants, each field placed at its C
 * offset (ir_abi.h). */
#include <stdio.h>
#include <string.h>

#include "ir_abi.h"
#include "low_internal.h"
#include "wasm_simd.h"

bool low_descriptor(low_module_ctx *mc, LLVMValueRef *invokers,
                    LLVMValueRef *trampolines, tw_diag *d);

static LLVMValueRef u8(low_module_ctx *mc, uint64_t v) { return LLVMConstInt(mc->t_i8, v, false); }
static LLVMValueRef u32(low_module_ctx *mc, uint64_t v) { return LLVMConstInt(mc->t_i32, v, false); }
static LLVMValueRef u64(low_module_ctx *mc, uint64_t v) { return LLVMConstInt(mc->t_i64, v, false); }
static LLVMValueRef null_ptr(low_module_ctx *mc) { return LLVMConstNull(mc->t_ptr); }

static LLVMValueRef pad(low_module_ctx *mc, unsigned n) {
  return LLVMConstNull(LLVMArrayType2(mc->t_i8, n));
}

/* A constant of ABI struct T from IR_ABI_FIELD(T, ...) initialisers. */
#define ABI_STRUCT(mc, T, ...) \
  abi_struct(mc, sizeof(T), (const ir_abi_field[]){__VA_ARGS__}, \
             sizeof((const ir_abi_field[]){__VA_ARGS__}) / sizeof(ir_abi_field))

static LLVMValueRef abi_struct(low_module_ctx *mc, size_t size, const ir_abi_field *f, unsigned n) {
  LLVMValueRef s = ir_abi_struct(mc->ctx, size, f, n);
  if (!s) mc->abi_broken = true;
  return s ? s : LLVMConstNull(LLVMInt8TypeInContext(mc->ctx));
}

/* A private constant global holding init; returns its address. */
LLVMValueRef low_private_const(low_module_ctx *mc, LLVMValueRef init, const char *name) {
  LLVMValueRef g = LLVMAddGlobal(mc->mod, LLVMTypeOf(init), name);
  LLVMSetInitializer(g, init);
  LLVMSetGlobalConstant(g, true);
  LLVMSetLinkage(g, LLVMPrivateLinkage);
  LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
  return g;
}

LLVMValueRef low_bytes_const(low_module_ctx *mc, const void *bytes, size_t len, const char *name) {
  LLVMValueRef s = LLVMConstStringInContext2(mc->ctx, bytes, len, false); /* NUL-terminated */
  return low_private_const(mc, s, name);
}

/* Array of same-typed constants, or null when empty. */
static LLVMValueRef array_const(low_module_ctx *mc, LLVMValueRef *elems, uint32_t n, const char *name) {
  if (n == 0) return null_ptr(mc);
  return low_private_const(mc, LLVMConstArray2(LLVMTypeOf(elems[0]), elems, n), name);
}

/* TWASM_CE_V128: the address of the 16 bytes, as the value field. */
static LLVMValueRef v128_constexpr(low_module_ctx *mc, const uint8_t *bytes) {
  LLVMValueRef g = low_bytes_const(mc, bytes, 16, "twasm_v128_const");
  return ABI_STRUCT(mc, twasm_constexpr_abi, IR_ABI_FIELD(twasm_constexpr_abi, op, u32(mc, TWASM_CE_V128)),
                    IR_ABI_FIELD(twasm_constexpr_abi, pad, u32(mc, 0)),
                    IR_ABI_FIELD(twasm_constexpr_abi, value, LLVMConstPtrToInt(g, mc->t_i64)));
}

static LLVMValueRef constexpr_abi(low_module_ctx *mc, const wasm_constexpr *ce) {
  uint32_t op = TWASM_CE_I32;
  uint64_t value = 0;
  if (ce->ncode > 0 && ce->code[0].op == OP_SIMD + SIMD_V128_CONST)
    return v128_constexpr(mc, ce->code[0].u.bytes);
  if (ce->ncode > 0) {
    const wasm_insn *in = &ce->code[0];
    switch (in->op) {
    case OP_I32_CONST: op = TWASM_CE_I32; value = (uint32_t)in->u.i32; break;
    case OP_I64_CONST: op = TWASM_CE_I64; value = (uint64_t)in->u.i64; break;
    case OP_F32_CONST: op = TWASM_CE_F32; value = in->u.f32; break;
    case OP_F64_CONST: op = TWASM_CE_F64; value = in->u.f64; break;
    case OP_GLOBAL_GET: op = TWASM_CE_GLOBAL_GET; value = in->u.index; break;
    case OP_REF_NULL: op = TWASM_CE_REF_NULL; value = in->valtype; break;
    case OP_REF_FUNC: op = TWASM_CE_REF_FUNC; value = in->u.index; break;
    default: break; /* validation admits no other constant instruction */
    }
  }
  return ABI_STRUCT(mc, twasm_constexpr_abi, IR_ABI_FIELD(twasm_constexpr_abi, op, u32(mc, op)),
                    IR_ABI_FIELD(twasm_constexpr_abi, pad, u32(mc, 0)),
                    IR_ABI_FIELD(twasm_constexpr_abi, value, u64(mc, value)));
}

static LLVMValueRef types_abi(low_module_ctx *mc) {
  const wasm_module *m = mc->m;
  LLVMValueRef *v = tw_arena_alloc(&mc->arena, (m->ntypes + 1) * sizeof *v);
  for (uint32_t t = 0; t < m->ntypes; t++) {
    const wasm_functype *ft = &m->types[t];
    uint32_t n = ft->nparams + ft->nresults;
    uint8_t *all = tw_arena_alloc(&mc->arena, n + 1);
    memcpy(all, ft->params, ft->nparams);
    memcpy(all + ft->nparams, ft->results, ft->nresults);
    v[t] = ABI_STRUCT(mc, twasm_functype_abi, IR_ABI_FIELD(twasm_functype_abi, nparams, u32(mc, ft->nparams)),
                      IR_ABI_FIELD(twasm_functype_abi, nresults, u32(mc, ft->nresults)),
                      IR_ABI_FIELD(twasm_functype_abi, types, low_bytes_const(mc, all, n, "twasm_type")));
  }
  return array_const(mc, v, m->ntypes, "twasm_types");
}

static LLVMValueRef name_const(low_module_ctx *mc, wasm_name n) {
  return low_bytes_const(mc, n.bytes ? n.bytes : "", n.len, "twasm_name");
}

static LLVMValueRef imports_abi(low_module_ctx *mc) {
  const wasm_module *m = mc->m;
  LLVMValueRef *v = tw_arena_alloc(&mc->arena, (m->nimports + 1) * sizeof *v);
  for (uint32_t i = 0; i < m->nimports; i++) {
    const wasm_import *im = &m->imports[i];
    uint32_t type_index = 0;
    uint8_t valtype = 0, mut = 0;
    const wasm_limits *lim = NULL;
    switch (im->kind) {
    case EXT_FUNC: type_index = m->funcs[im->index].type_index; break;
    case EXT_TABLE: valtype = m->tables[im->index].elem_type; lim = &m->tables[im->index].limits; break;
    case EXT_MEMORY: lim = &m->mems[im->index].limits; break;
    default: valtype = m->globals[im->index].valtype; mut = m->globals[im->index].mutable_; break;
    }
#define F(field, v) IR_ABI_FIELD(twasm_import_abi, field, v)
    v[i] = ABI_STRUCT(mc, twasm_import_abi, F(module, name_const(mc, im->module)), F(name, name_const(mc, im->name)),
                      F(module_len, u32(mc, im->module.len)), F(name_len, u32(mc, im->name.len)),
                      F(kind, u32(mc, im->kind)), F(type_index, u32(mc, type_index)), F(valtype, u8(mc, valtype)),
                      F(mutable_, u8(mc, mut)), F(has_max, u8(mc, lim && lim->has_max)), F(pad, u8(mc, 0)),
                      F(pad2, u32(mc, 0)), F(min, u64(mc, lim ? lim->min : 0)), F(max, u64(mc, lim ? lim->max : 0)));
#undef F
  }
  return array_const(mc, v, m->nimports, "twasm_imports");
}

static LLVMValueRef funcs_abi(low_module_ctx *mc, uint32_t *count, LLVMValueRef *offsets) {
  const wasm_module *m = mc->m;
  LLVMValueRef *v = tw_arena_alloc(&mc->arena, (m->nfuncs + 1) * sizeof *v);
  LLVMValueRef *offs = tw_arena_alloc(&mc->arena, (m->nfuncs + 1) * sizeof *offs);
  uint32_t n = 0;
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    if (m->funcs[i].imported) continue;
    v[n] = ABI_STRUCT(mc, twasm_func_def_abi, IR_ABI_FIELD(twasm_func_def_abi, code, mc->funcs[i]),
                      IR_ABI_FIELD(twasm_func_def_abi, type_index, u32(mc, m->funcs[i].type_index)),
                      IR_ABI_FIELD(twasm_func_def_abi, pad, u32(mc, 0)));
    offs[n++] = u32(mc, m->funcs[i].body_offset);
  }
  *count = n;
  *offsets = array_const(mc, offs, n, "twasm_func_offsets");
  return array_const(mc, v, n, "twasm_funcs");
}

static LLVMValueRef tables_abi(low_module_ctx *mc, uint32_t *count) {
  const wasm_module *m = mc->m;
  LLVMValueRef *v = tw_arena_alloc(&mc->arena, (m->ntables + 1) * sizeof *v);
  uint32_t n = 0;
  for (uint32_t i = 0; i < m->ntables; i++) {
    const wasm_table *t = &m->tables[i];
    if (t->imported) continue;
#define F(field, v) IR_ABI_FIELD(twasm_table_def_abi, field, v)
    v[n++] = ABI_STRUCT(mc, twasm_table_def_abi, F(elem_type, u8(mc, t->elem_type)),
                        F(has_max, u8(mc, t->limits.has_max)), F(pad, pad(mc, 6)),
                        F(min, u64(mc, t->limits.min)), F(max, u64(mc, t->limits.max)));
#undef F
  }
  *count = n;
  return array_const(mc, v, n, "twasm_tables");
}

static LLVMValueRef memories_abi(low_module_ctx *mc, uint32_t *count) {
  const wasm_module *m = mc->m;
  LLVMValueRef *v = tw_arena_alloc(&mc->arena, (m->nmems + 1) * sizeof *v);
  uint32_t n = 0;
  for (uint32_t i = 0; i < m->nmems; i++) {
    const wasm_memory *mem = &m->mems[i];
    if (mem->imported) continue;
#define F(field, v) IR_ABI_FIELD(twasm_memory_def_abi, field, v)
    v[n++] = ABI_STRUCT(mc, twasm_memory_def_abi, F(has_max, u8(mc, mem->limits.has_max)), F(pad, pad(mc, 7)),
                        F(min, u64(mc, mem->limits.min)), F(max, u64(mc, mem->limits.max)));
#undef F
  }
  *count = n;
  return array_const(mc, v, n, "twasm_memories");
}

static LLVMValueRef globals_abi(low_module_ctx *mc, uint32_t *count) {
  const wasm_module *m = mc->m;
  LLVMValueRef *v = tw_arena_alloc(&mc->arena, (m->nglobals + 1) * sizeof *v);
  uint32_t n = 0;
  for (uint32_t i = 0; i < m->nglobals; i++) {
    const wasm_global *g = &m->globals[i];
    if (g->imported) continue;
#define F(field, v) IR_ABI_FIELD(twasm_global_def_abi, field, v)
    v[n++] = ABI_STRUCT(mc, twasm_global_def_abi, F(valtype, u8(mc, g->valtype)), F(mutable_, u8(mc, g->mutable_)),
                        F(pad, pad(mc, 6)), F(init, constexpr_abi(mc, &g->init)));
#undef F
  }
  *count = n;
  return array_const(mc, v, n, "twasm_globals");
}

static LLVMValueRef exports_abi(low_module_ctx *mc) {
  const wasm_module *m = mc->m;
  LLVMValueRef *v = tw_arena_alloc(&mc->arena, (m->nexports + 1) * sizeof *v);
  for (uint32_t i = 0; i < m->nexports; i++) {
    const wasm_export *e = &m->exports[i];
#define F(field, v) IR_ABI_FIELD(twasm_export_abi, field, v)
    v[i] = ABI_STRUCT(mc, twasm_export_abi, F(name, name_const(mc, e->name)), F(name_len, u32(mc, e->name.len)),
                      F(kind, u32(mc, e->kind)), F(index, u32(mc, e->index)), F(pad, u32(mc, 0)));
#undef F
  }
  return array_const(mc, v, m->nexports, "twasm_exports");
}

static LLVMValueRef elems_abi(low_module_ctx *mc) {
  const wasm_module *m = mc->m;
  LLVMValueRef *v = tw_arena_alloc(&mc->arena, (m->nelems + 1) * sizeof *v);
  for (uint32_t i = 0; i < m->nelems; i++) {
    const wasm_elem *e = &m->elems[i];
    LLVMValueRef *items = tw_arena_alloc(&mc->arena, (e->nitems + 1) * sizeof *items);
    for (uint32_t k = 0; k < e->nitems; k++) items[k] = constexpr_abi(mc, &e->items[k]);
#define F(field, v) IR_ABI_FIELD(twasm_elem_abi, field, v)
    v[i] = ABI_STRUCT(mc, twasm_elem_abi, F(mode, u32(mc, e->mode)), F(table_index, u32(mc, e->table_index)),
                      F(offset, constexpr_abi(mc, &e->offset_expr)), F(elem_type, u32(mc, e->elem_type)),
                      F(count, u32(mc, e->nitems)), F(items, array_const(mc, items, e->nitems, "twasm_elem_items")));
#undef F
  }
  return array_const(mc, v, m->nelems, "twasm_elems");
}

static LLVMValueRef datas_abi(low_module_ctx *mc) {
  const wasm_module *m = mc->m;
  LLVMValueRef *v = tw_arena_alloc(&mc->arena, (m->ndatas + 1) * sizeof *v);
  for (uint32_t i = 0; i < m->ndatas; i++) {
    const wasm_data *s = &m->datas[i];
#define F(field, v) IR_ABI_FIELD(twasm_data_abi, field, v)
    v[i] = ABI_STRUCT(mc, twasm_data_abi, F(mode, u32(mc, s->mode)), F(mem_index, u32(mc, s->mem_index)),
                      F(offset, constexpr_abi(mc, &s->offset_expr)),
                      F(bytes, low_bytes_const(mc, s->bytes, s->size, "twasm_data_bytes")), F(size, u64(mc, s->size)));
#undef F
  }
  return array_const(mc, v, m->ndatas, "twasm_datas");
}

static LLVMValueRef func_names_abi(low_module_ctx *mc) {
  const wasm_module *m = mc->m;
  LLVMValueRef *v = tw_arena_alloc(&mc->arena, (m->nfuncs + 1) * sizeof *v);
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    const char *n = m->funcs[i].name;
    v[i] = n ? low_bytes_const(mc, n, strlen(n), "twasm_func_name") : null_ptr(mc);
  }
  return array_const(mc, v, m->nfuncs, "twasm_func_names");
}

/* The kernel table the offload stage fills in (IR_KERNEL_TABLE): empty
 * here, with nkernels 0. */
static LLVMValueRef kernel_table(low_module_ctx *mc) {
  LLVMValueRef g = LLVMAddGlobal(mc->mod, LLVMArrayType2(mc->t_i8, 0), IR_KERNEL_TABLE);
  LLVMSetInitializer(g, LLVMConstNull(LLVMArrayType2(mc->t_i8, 0)));
  LLVMSetGlobalConstant(g, true);
  LLVMSetLinkage(g, LLVMPrivateLinkage);
  return g;
}

/* __start_ or __stop_ of the pcmap section (guard mode with a memory,
 * the only code that has a table): weak, so that a link without the
 * section has NULL; hidden, so that each executable or shared object
 * reads its own table. */
static LLVMValueRef pcmap_bound(low_module_ctx *mc, const char *edge) {
  if (mc->opt->bounds_mode != TWASM_BOUNDS_GUARD || mc->m->nmems == 0) return null_ptr(mc);
  char name[64];
  snprintf(name, sizeof name, "__%s_%s", edge, TWASM_PCMAP_SECTION);
  LLVMValueRef g = LLVMAddGlobal(mc->mod, mc->t_i8, name);
  LLVMSetLinkage(g, LLVMExternalWeakLinkage);
  LLVMSetVisibility(g, LLVMHiddenVisibility);
  return g;
}

bool low_descriptor(low_module_ctx *mc, LLVMValueRef *invokers,
                    LLVMValueRef *trampolines, tw_diag *d) {
  const wasm_module *m = mc->m;
  const low_options *o = mc->opt;
  uint32_t nfuncs, ntables, nmems, nglobals;
  LLVMValueRef offsets;
  const char *stem = o->module_name ? o->module_name : "wasm";
  const char *file = m->filename ? m->filename : stem;
  if (strrchr(file, '/')) file = strrchr(file, '/') + 1; /* traps name the file, not where it was built */
  LLVMValueRef funcs = funcs_abi(mc, &nfuncs, &offsets);
  LLVMValueRef tables = tables_abi(mc, &ntables);
  LLVMValueRef mems = memories_abi(mc, &nmems);
  LLVMValueRef globals = globals_abi(mc, &nglobals);
#define F(field, v) IR_ABI_FIELD(twasm_module_abi, field, v)
  LLVMValueRef desc = ABI_STRUCT(mc, twasm_module_abi,
      F(abi_version, u32(mc, TWASM_ABI_VERSION)), F(bounds_mode, u32(mc, (uint32_t)o->bounds_mode)),
      F(name, low_bytes_const(mc, stem, strlen(stem), "twasm_module_name")),
      F(ntypes, u32(mc, m->ntypes)), F(nimports, u32(mc, m->nimports)), F(types, types_abi(mc)),
      F(imports, imports_abi(mc)), F(nfuncs, u32(mc, nfuncs)), F(ntables, u32(mc, ntables)),
      F(funcs, funcs), F(tables, tables), F(nmemories, u32(mc, nmems)), F(nglobals, u32(mc, nglobals)),
      F(memories, mems), F(globals, globals), F(nexports, u32(mc, m->nexports)),
      F(nelems, u32(mc, m->nelems)), F(exports, exports_abi(mc)), F(elems, elems_abi(mc)),
      F(ndatas, u32(mc, m->ndatas)), F(start_func, u32(mc, m->has_start ? m->start : (uint32_t)-1)),
      F(datas, datas_abi(mc)), F(invokers, array_const(mc, invokers, m->ntypes, "twasm_invokers")),
      F(host_trampolines, array_const(mc, trampolines, m->ntypes, "twasm_trampolines")),
      F(func_names, func_names_abi(mc)), F(nfuncs_total, u32(mc, m->nfuncs)), F(pad, u32(mc, 0)),
      F(filename, low_bytes_const(mc, file, strlen(file), "twasm_filename")), F(func_offsets, offsets),
      F(nkernels, u32(mc, 0)), F(pad2, u32(mc, 0)), F(kernels, kernel_table(mc)),
      F(pcmap, pcmap_bound(mc, "start")), F(pcmap_end, pcmap_bound(mc, "stop")));
#undef F
  if (mc->abi_broken)
    return tw_fail(d, TW_DIAG_NO_OFFSET, "internal error: a module descriptor field disagrees with twasm_abi.h");
  LLVMValueRef g = LLVMAddGlobal(mc->mod, LLVMTypeOf(desc), o->desc_symbol ? o->desc_symbol : "twasm_module");
  LLVMSetInitializer(g, desc);
  LLVMSetGlobalConstant(g, true);
  return true;
}
