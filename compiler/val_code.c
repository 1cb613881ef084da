/* val_code.c: one function body: locals, the instruction walk, and the parametric instructions. */
#include "val_internal.h"
#include "wasm_simd.h"

#include <stdlib.h>
#include <string.h>

static bool is_numeric_or_vector(uint8_t t) {
  return t == VT_UNKNOWN || t == VT_I32 || t == VT_I64 || t == VT_F32 || t == VT_F64 ||
         t == VT_V128;
}

/* drop, select, select t. */
static bool parametric(val_ctx *c, const wasm_insn *in) {
  uint8_t t1, t2;
  if (in->op == OP_DROP) return val_pop(c, &t1);
  if (in->op == OP_SELECT_T) {
    /* decode records any arity but one as valtype 0 */
    if (in->valtype == 0) return val_fail(c, "invalid result arity");
    return val_pop_expect(c, VT_I32) && val_pop_expect(c, in->valtype) &&
           val_pop_expect(c, in->valtype) && val_push(c, in->valtype);
  }
  if (!val_pop_expect(c, VT_I32) || !val_pop(c, &t1) || !val_pop(c, &t2)) return false;
  /* untyped select may not pick between references */
  if (!is_numeric_or_vector(t1) || !is_numeric_or_vector(t2)) return val_fail(c, "type mismatch");
  if (t1 != t2 && t1 != VT_UNKNOWN && t2 != VT_UNKNOWN) return val_fail(c, "type mismatch");
  return val_push(c, t1 == VT_UNKNOWN ? t2 : t1);
}

static bool in_range(uint16_t op, uint16_t first, uint16_t last) {
  return op >= first && op <= last;
}

static bool insn(val_ctx *c, const wasm_insn *in) {
  uint16_t op = in->op;
  if (in_range(op, OP_I32_CONST, OP_I64_EXTEND32_S) ||
      in_range(op, OP_I32_TRUNC_SAT_F32_S, OP_I32_TRUNC_SAT_F32_S + 7))
    return val_numeric(c, in);
  if (in_range(op, OP_I32_LOAD, OP_MEMORY_GROW) || in_range(op, OP_MEMORY_INIT, OP_MEMORY_FILL))
    return val_memory(c, in);
  if (op == OP_TABLE_GET || op == OP_TABLE_SET || in_range(op, OP_TABLE_INIT, OP_TABLE_FILL) ||
      in_range(op, OP_REF_NULL, OP_REF_FUNC))
    return val_table(c, in);
  if (in_range(op, OP_LOCAL_GET, OP_GLOBAL_SET)) return val_variable(c, in);
  if (op == OP_CALL || op == OP_CALL_INDIRECT) return val_call(c, in);
  if (op == OP_DROP || op == OP_SELECT || op == OP_SELECT_T) return parametric(c, in);
  if (wasm_is_simd(op)) return val_simd(c, in);
  return val_control(c, in);
}

/* Parameters then declared locals, in one array indexed by local index. */
static bool set_locals(val_ctx *c, const wasm_func *f) {
  uint64_t n = (uint64_t)c->func_type->nparams + f->nlocals;
  if (n > UINT32_MAX) return val_fail(c, "too many locals");
  if (n > c->locals_cap) {
    uint8_t *p = realloc(c->locals, n);
    if (!p) return val_fail(c, "out of memory");
    c->locals = p;
    c->locals_cap = (uint32_t)n;
  }
  if (c->func_type->nparams)
    memcpy(c->locals, c->func_type->params, c->func_type->nparams);
  if (f->nlocals) memcpy(c->locals + c->func_type->nparams, f->locals, f->nlocals);
  c->nlocals = (uint32_t)n;
  return true;
}

bool val_func(val_ctx *c, uint32_t func_index) {
  const wasm_func *f = &c->m->funcs[func_index];
  c->func_type = &c->m->types[f->type_index];
  c->offset = f->body_offset;
  if (!set_locals(c, f)) return false;
  c->nvals = c->nctrls = 0;
  /* the body is a block whose label is the function's results */
  if (!val_push_ctrl(c, OP_END, NULL, 0, c->func_type->results, c->func_type->nresults))
    return false;
  for (uint32_t i = 0; i < f->ncode; i++) {
    c->offset = f->code[i].offset;
    if (c->nctrls == 0) return val_fail(c, "operator after function end");
    if (!insn(c, &f->code[i])) return false;
  }
  if (c->nctrls != 0) return val_fail(c, "END opcode expected");
  return true;
}
