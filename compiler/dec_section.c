/* dec_section.c: the type, import, function, table, memory, global, export,
 * start and data count sections. */
#include "dec_internal.h"

#include <string.h>

static bool functype(dec_reader *r, wasm_functype *t) {
  size_t at = r->pos;
  uint64_t form;
  /* The form is an s7 (0x60 is -0x20), so an overlong one is "too long". */
  if (!dec_leb(r->bytes, r->end, &r->pos, 7, true, &form,
               "unexpected end of section or function", r->d))
    return false;
  if (dec_form_feature((int64_t)form)) return dec_unsupported(r, at, dec_form_feature((int64_t)form));
  if ((int64_t)form != -0x20) return tw_fail(r->d, (uint32_t)at, "malformed function type");
  uint8_t *params, *results;
  if (!dec_count(r, &t->nparams)) return false;
  params = tw_arena_alloc(r->arena, t->nparams + 1);
  for (uint32_t i = 0; i < t->nparams; i++)
    if (!dec_valtype(r, &params[i])) return false;
  if (!dec_count(r, &t->nresults)) return false;
  results = tw_arena_alloc(r->arena, t->nresults + 1);
  for (uint32_t i = 0; i < t->nresults; i++)
    if (!dec_valtype(r, &results[i])) return false;
  t->params = params;
  t->results = results;
  return true;
}

bool dec_type_section(dec_reader *r) {
  wasm_module *m = r->m;
  if (!dec_count(r, &m->ntypes)) return false;
  m->types = tw_arena_alloc(r->arena, (size_t)m->ntypes * sizeof *m->types);
  for (uint32_t i = 0; i < m->ntypes; i++)
    if (!functype(r, &m->types[i])) return false;
  return true;
}

static bool globaltype(dec_reader *r, wasm_global *g) {
  size_t at;
  uint8_t mut;
  if (!dec_valtype(r, &g->valtype)) return false;
  at = r->pos;
  if (!dec_byte(r, &mut)) return false;
  if (mut > 1) return tw_fail(r->d, (uint32_t)at, "malformed mutability");
  g->mutable_ = mut;
  return true;
}

static bool tabletype(dec_reader *r, wasm_table *t) {
  if (dec_table_feature(r)) return dec_unsupported(r, r->pos, dec_table_feature(r));
  return dec_reftype(r, &t->elem_type) && dec_limits(r, &t->limits);
}

/* One import's descriptor, appended to its kind's index space (the arrays
 * were sized for the worst case, every import of one kind). */
static bool import_desc(dec_reader *r, wasm_import *imp, uint32_t import_index) {
  wasm_module *m = r->m;
  size_t at = r->pos;
  if (!dec_byte(r, &imp->kind)) return false;
  switch (imp->kind) {
  case EXT_FUNC: {
    wasm_func *f = &m->funcs[imp->index = m->nfunc_imports++];
    f->imported = true;
    f->import_index = import_index;
    return dec_u32r(r, &f->type_index);
  }
  case EXT_TABLE: {
    wasm_table *t = &m->tables[imp->index = m->ntable_imports++];
    t->imported = true;
    t->import_index = import_index;
    return tabletype(r, t);
  }
  case EXT_MEMORY: {
    if (m->nmem_imports) return dec_unsupported(r, at, dec_multi_memory_feature());
    wasm_memory *mem = &m->mems[imp->index = m->nmem_imports++];
    mem->imported = true;
    mem->import_index = import_index;
    return dec_limits(r, &mem->limits);
  }
  case EXT_GLOBAL: {
    wasm_global *g = &m->globals[imp->index = m->nglobal_imports++];
    g->imported = true;
    g->import_index = import_index;
    return globaltype(r, g);
  }
  case 4: return dec_unsupported(r, at, dec_tag_feature());
  default:
    return tw_fail(r->d, (uint32_t)at, "malformed import kind");
  }
}

bool dec_import_section(dec_reader *r) {
  wasm_module *m = r->m;
  uint32_t n;
  if (!dec_count(r, &n)) return false;
  m->imports = tw_arena_alloc(r->arena, (size_t)n * sizeof *m->imports);
  m->funcs = tw_arena_alloc(r->arena, (size_t)n * sizeof *m->funcs);
  m->tables = tw_arena_alloc(r->arena, (size_t)n * sizeof *m->tables);
  m->mems = tw_arena_alloc(r->arena, (size_t)n * sizeof *m->mems);
  m->globals = tw_arena_alloc(r->arena, (size_t)n * sizeof *m->globals);
  for (uint32_t i = 0; i < n; i++) {
    wasm_import *imp = &m->imports[i];
    imp->offset = (uint32_t)r->pos;
    if (!dec_name(r, &imp->module) || !dec_name(r, &imp->name) || !import_desc(r, imp, i))
      return false;
    m->nimports = i + 1;
  }
  m->nfuncs = m->nfunc_imports;
  m->ntables = m->ntable_imports;
  m->nmems = m->nmem_imports;
  m->nglobals = m->nglobal_imports;
  return true;
}

/* Makes room for n defined entities after the imported ones. */
static void *extend(dec_reader *r, void *old, uint32_t nold, uint32_t n, size_t elem) {
  unsigned char *p = tw_arena_alloc(r->arena, ((size_t)nold + n) * elem);
  if (nold) memcpy(p, old, nold * elem);
  return p;
}

bool dec_function_section(dec_reader *r) {
  wasm_module *m = r->m;
  uint32_t n;
  if (!dec_count(r, &n)) return false;
  m->funcs = extend(r, m->funcs, m->nfuncs, n, sizeof *m->funcs);
  for (uint32_t i = 0; i < n; i++)
    if (!dec_u32r(r, &m->funcs[m->nfuncs + i].type_index)) return false;
  m->nfuncs += n;
  r->ndefined_funcs = n;
  return true;
}

bool dec_table_section(dec_reader *r) {
  wasm_module *m = r->m;
  uint32_t n;
  if (!dec_count(r, &n)) return false;
  m->tables = extend(r, m->tables, m->ntables, n, sizeof *m->tables);
  for (uint32_t i = 0; i < n; i++)
    if (!tabletype(r, &m->tables[m->ntables + i])) return false;
  m->ntables += n;
  return true;
}

bool dec_memory_section(dec_reader *r) {
  wasm_module *m = r->m;
  uint32_t n;
  if (!dec_count(r, &n)) return false;
  m->mems = extend(r, m->mems, m->nmems, n, sizeof *m->mems);
  for (uint32_t i = 0; i < n; i++) {
    if (m->nmems + i > 0) return dec_unsupported(r, r->pos, dec_multi_memory_feature());
    if (!dec_limits(r, &m->mems[m->nmems + i].limits)) return false;
  }
  m->nmems += n;
  return true;
}

bool dec_global_section(dec_reader *r) {
  wasm_module *m = r->m;
  uint32_t n;
  if (!dec_count(r, &n)) return false;
  m->globals = extend(r, m->globals, m->nglobals, n, sizeof *m->globals);
  for (uint32_t i = 0; i < n; i++) {
    wasm_global *g = &m->globals[m->nglobals + i];
    if (!globaltype(r, g) || !dec_constexpr(r, &g->init)) return false;
  }
  m->nglobals += n;
  return true;
}

bool dec_export_section(dec_reader *r) {
  wasm_module *m = r->m;
  if (!dec_count(r, &m->nexports)) return false;
  m->exports = tw_arena_alloc(r->arena, (size_t)m->nexports * sizeof *m->exports);
  for (uint32_t i = 0; i < m->nexports; i++) {
    wasm_export *e = &m->exports[i];
    e->offset = (uint32_t)r->pos;
    if (!dec_name(r, &e->name)) return false;
    size_t at = r->pos;
    if (!dec_byte(r, &e->kind)) return false;
    if (e->kind == 4) return dec_unsupported(r, at, dec_tag_feature());
    if (e->kind > EXT_GLOBAL) return tw_fail(r->d, (uint32_t)at, "malformed export kind");
    if (!dec_u32r(r, &e->index)) return false;
  }
  return true;
}

bool dec_start_section(dec_reader *r) {
  r->m->has_start = true;
  return dec_u32r(r, &r->m->start);
}

bool dec_datacount_section(dec_reader *r) {
  r->m->has_datacount = true;
  return dec_u32r(r, &r->m->datacount);
}
