/* val_segment.c: globals, element and data segments, and the function references they declare. */
#include "val_internal.h"

static void declare(const wasm_module *m, bool *declared, const wasm_constexpr *e) {
  for (uint32_t i = 0; i < e->ncode; i++)
    if (e->code[i].op == OP_REF_FUNC && e->code[i].u.index < m->nfuncs)
      declared[e->code[i].u.index] = true;
}

/* C.refs of the spec: functions named anywhere outside function bodies
 * (global inits, segments, exports) may be referenced by ref.func. */
void val_declared_refs(const wasm_module *m, bool *declared) {
  for (uint32_t i = m->nglobal_imports; i < m->nglobals; i++)
    declare(m, declared, &m->globals[i].init);
  for (uint32_t i = 0; i < m->nelems; i++) {
    declare(m, declared, &m->elems[i].offset_expr);
    for (uint32_t k = 0; k < m->elems[i].nitems; k++) declare(m, declared, &m->elems[i].items[k]);
  }
  for (uint32_t i = 0; i < m->ndatas; i++) declare(m, declared, &m->datas[i].offset_expr);
  for (uint32_t i = 0; i < m->nexports; i++)
    if (m->exports[i].kind == EXT_FUNC && m->exports[i].index < m->nfuncs)
      declared[m->exports[i].index] = true;
}

bool val_globals(val_ctx *c) {
  const wasm_module *m = c->m;
  for (uint32_t i = m->nglobal_imports; i < m->nglobals; i++)
    if (!val_const_expr(c, &m->globals[i].init, m->globals[i].valtype)) return false;
  return true;
}

static bool elem(val_ctx *c, const wasm_elem *e) {
  for (uint32_t k = 0; k < e->nitems; k++)
    if (!val_const_expr(c, &e->items[k], e->elem_type)) return false;
  if (e->mode != SEG_ACTIVE) return true;
  c->offset = e->offset;
  if (e->table_index >= c->m->ntables) return val_unknown(c, "table", e->table_index);
  if (c->m->tables[e->table_index].elem_type != e->elem_type)
    return val_fail(c, "type mismatch");
  return val_const_expr(c, &e->offset_expr, VT_I32);
}

bool val_elems(val_ctx *c) {
  for (uint32_t i = 0; i < c->m->nelems; i++)
    if (!elem(c, &c->m->elems[i])) return false;
  return true;
}

bool val_datas(val_ctx *c) {
  for (uint32_t i = 0; i < c->m->ndatas; i++) {
    const wasm_data *s = &c->m->datas[i];
    if (s->mode != SEG_ACTIVE) continue;
    c->offset = s->offset;
    if (s->mem_index >= c->m->nmems) return val_unknown(c, "memory", s->mem_index);
    if (!val_const_expr(c, &s->offset_expr, VT_I32)) return false;
  }
  return true;
}
