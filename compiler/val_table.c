/* val_table.c: table instructions, elem.drop and the reference instructions. */
#include "val_internal.h"

static bool table(val_ctx *c, uint32_t x, uint8_t *elem_type) {
  if (x >= c->m->ntables) return val_unknown(c, "table", x);
  *elem_type = c->m->tables[x].elem_type;
  return true;
}

static bool elem_segment(val_ctx *c, uint32_t x, uint8_t *elem_type) {
  if (x >= c->m->nelems) return val_unknown(c, "elem segment", x);
  *elem_type = c->m->elems[x].elem_type;
  return true;
}

/* table.copy and table.init move references between places of one type. */
static bool copy_init(val_ctx *c, const wasm_insn *in) {
  uint8_t t1 = 0, t2 = 0;
  if (in->op == OP_TABLE_COPY) {
    if (!table(c, in->u.pair.a, &t1) || !table(c, in->u.pair.b, &t2)) return false;
  } else if (!table(c, in->u.pair.b, &t1) || !elem_segment(c, in->u.pair.a, &t2)) {
    return false;
  }
  if (t1 != t2) return val_fail(c, "type mismatch");
  return val_pop_i32s(c, 3);
}

static bool ref(val_ctx *c, const wasm_insn *in) {
  uint8_t t = 0;
  switch (in->op) {
  case OP_REF_NULL: return val_push(c, in->valtype);
  case OP_REF_IS_NULL:
    if (!val_pop(c, &t)) return false;
    if (t != VT_UNKNOWN && !val_is_reftype(t)) return val_fail(c, "type mismatch");
    return val_push(c, VT_I32);
  default:
    if (in->u.index >= c->m->nfuncs) return val_unknown(c, "function", in->u.index);
    if (!c->declared[in->u.index]) return val_fail(c, "undeclared function reference");
    return val_push(c, VT_FUNCREF);
  }
}

bool val_table(val_ctx *c, const wasm_insn *in) {
  uint8_t t = 0;
  switch (in->op) {
  case OP_REF_NULL: case OP_REF_IS_NULL: case OP_REF_FUNC: return ref(c, in);
  case OP_TABLE_COPY: case OP_TABLE_INIT: return copy_init(c, in);
  case OP_ELEM_DROP: return elem_segment(c, in->u.index, &t);
  default: break;
  }
  if (!table(c, in->u.index, &t)) return false;
  switch (in->op) {
  case OP_TABLE_GET: return val_pop_expect(c, VT_I32) && val_push(c, t);
  case OP_TABLE_SET: return val_pop_expect(c, t) && val_pop_expect(c, VT_I32);
  case OP_TABLE_SIZE: return val_push(c, VT_I32);
  case OP_TABLE_GROW:
    return val_pop_expect(c, VT_I32) && val_pop_expect(c, t) && val_push(c, VT_I32);
  default: /* table.fill */
    return val_pop_expect(c, VT_I32) && val_pop_expect(c, t) && val_pop_expect(c, VT_I32);
  }
}
