/* val_variable.c: local.get/set/tee and global.get/set. */
#include "val_internal.h"

static bool local(val_ctx *c, const wasm_insn *in) {
  if (in->u.index >= c->nlocals) return val_unknown(c, "local", in->u.index);
  uint8_t t = c->locals[in->u.index];
  switch (in->op) {
  case OP_LOCAL_GET: return val_push(c, t);
  case OP_LOCAL_SET: return val_pop_expect(c, t);
  default: return val_pop_expect(c, t) && val_push(c, t); /* local.tee */
  }
}

static bool global(val_ctx *c, const wasm_insn *in) {
  if (in->u.index >= c->m->nglobals) return val_unknown(c, "global", in->u.index);
  const wasm_global *g = &c->m->globals[in->u.index];
  if (in->op == OP_GLOBAL_GET) return val_push(c, g->valtype);
  if (!g->mutable_) return val_fail(c, "global is immutable");
  return val_pop_expect(c, g->valtype);
}

bool val_variable(val_ctx *c, const wasm_insn *in) {
  if (in->op == OP_GLOBAL_GET || in->op == OP_GLOBAL_SET) return global(c, in);
  return local(c, in);
}
