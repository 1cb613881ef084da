/* val_call.c: call and call_indirect. */
#include "val_internal.h"

static bool call_type(val_ctx *c, const wasm_functype *ft) {
  return val_pop_n(c, ft->params, ft->nparams) && val_push_n(c, ft->results, ft->nresults);
}

bool val_call(val_ctx *c, const wasm_insn *in) {
  const wasm_module *m = c->m;
  if (in->op == OP_CALL) {
    if (in->u.index >= m->nfuncs) return val_unknown(c, "function", in->u.index);
    return call_type(c, &m->types[m->funcs[in->u.index].type_index]);
  }
  uint32_t type_index = in->u.pair.a, table_index = in->u.pair.b;
  if (table_index >= m->ntables) return val_unknown(c, "table", table_index);
  if (m->tables[table_index].elem_type != VT_FUNCREF) return val_fail(c, "type mismatch");
  if (type_index >= m->ntypes) return val_unknown(c, "type", type_index);
  /* the callee's index comes last, above the arguments */
  return val_pop_expect(c, VT_I32) && call_type(c, &m->types[type_index]);
}
