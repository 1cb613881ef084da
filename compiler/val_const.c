/* val_const.c: constant expressions (global inits, segment offsets and items). */
#include "val_internal.h"
#include "wasm_simd.h"

/* Every instruction must be constant before any typing, as in the
 * reference interpreter; a global read must name an imported immutable
 * global (Wasm 2.0: the only globals a constant expression sees). */
static bool constant(val_ctx *c, const wasm_insn *in) {
  switch (in->op) {
  case OP_I32_CONST: case OP_I64_CONST: case OP_F32_CONST: case OP_F64_CONST:
  case OP_REF_NULL: case OP_REF_FUNC: case OP_SIMD + SIMD_V128_CONST:
    return true;
  case OP_GLOBAL_GET:
    if (in->u.index >= c->m->nglobal_imports) return val_unknown(c, "global", in->u.index);
    if (c->m->globals[in->u.index].mutable_) return val_fail(c, "constant expression required");
    return true;
  default:
    return val_fail(c, "constant expression required");
  }
}

static bool push_const(val_ctx *c, const wasm_insn *in) {
  switch (in->op) {
  case OP_I32_CONST: return val_push(c, VT_I32);
  case OP_I64_CONST: return val_push(c, VT_I64);
  case OP_F32_CONST: return val_push(c, VT_F32);
  case OP_F64_CONST: return val_push(c, VT_F64);
  case OP_SIMD + SIMD_V128_CONST: return val_push(c, VT_V128);
  case OP_REF_NULL: return val_push(c, in->valtype);
  case OP_GLOBAL_GET: return val_push(c, c->m->globals[in->u.index].valtype);
  default: /* ref.func: outside bodies a reference declares itself */
    if (in->u.index >= c->m->nfuncs) return val_unknown(c, "function", in->u.index);
    return val_push(c, VT_FUNCREF);
  }
}

bool val_const_expr(val_ctx *c, const wasm_constexpr *e, uint8_t t) {
  for (uint32_t i = 0; i < e->ncode; i++) {
    c->offset = e->code[i].offset;
    if (!constant(c, &e->code[i])) return false;
  }
  c->nvals = c->nctrls = 0;
  c->offset = e->offset;
  const uint8_t *result = val_single_type(t);
  if (!result) return val_fail(c, "malformed value type");
  if (!val_push_ctrl(c, OP_END, NULL, 0, result, 1)) return false;
  for (uint32_t i = 0; i < e->ncode; i++) {
    c->offset = e->code[i].offset;
    if (!push_const(c, &e->code[i])) return false;
  }
  c->offset = e->offset;
  val_frame f;
  return val_pop_ctrl(c, &f);
}
