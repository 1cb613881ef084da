/* val_control.c: control instructions: blocks, branches, return, unreachable, nop. */
#include "val_internal.h"

/* The types a branch to the frame carries: a loop's label is its start. */
static void label_types(const val_frame *f, const uint8_t **ts, uint32_t *n) {
  bool loop = f->op == OP_LOOP;
  *ts = loop ? f->start : f->end;
  *n = loop ? f->nstart : f->nend;
}

static bool label(val_ctx *c, uint32_t depth, const val_frame **out) {
  if (depth >= c->nctrls) return val_unknown(c, "label", depth);
  *out = &c->ctrls[c->nctrls - 1 - depth];
  return true;
}

static bool block_type(val_ctx *c, const wasm_insn *in, const uint8_t **start, uint32_t *nstart,
                       const uint8_t **end, uint32_t *nend) {
  *start = *end = NULL;
  *nstart = *nend = 0;
  if (in->u.block.kind == BT_VALTYPE) {
    *end = val_single_type(in->valtype);
    if (!*end) return val_fail(c, "malformed value type");
    *nend = 1;
  } else if (in->u.block.kind == BT_TYPEIDX) {
    uint32_t x = in->u.block.type_index;
    if (x >= c->m->ntypes) return val_unknown(c, "type", x);
    const wasm_functype *ft = &c->m->types[x];
    *start = ft->params;
    *nstart = ft->nparams;
    *end = ft->results;
    *nend = ft->nresults;
  }
  return true;
}

static bool open_block(val_ctx *c, const wasm_insn *in) {
  const uint8_t *start, *end;
  uint32_t nstart, nend;
  if (!block_type(c, in, &start, &nstart, &end, &nend)) return false;
  if (in->op == OP_IF && !val_pop_expect(c, VT_I32)) return false;
  return val_pop_n(c, start, nstart) && val_push_ctrl(c, in->op, start, nstart, end, nend);
}

static bool else_(val_ctx *c) {
  val_frame f;
  if (c->nctrls == 0 || c->ctrls[c->nctrls - 1].op != OP_IF)
    return val_fail(c, "else without if");
  return val_pop_ctrl(c, &f) && val_push_ctrl(c, OP_ELSE, f.start, f.nstart, f.end, f.nend);
}

/* An if without else has an empty else branch, valid only when the
 * block's parameters are its results. */
static bool end(val_ctx *c) {
  val_frame f;
  if (!val_pop_ctrl(c, &f)) return false;
  if (f.op == OP_IF &&
      !(val_push_ctrl(c, OP_ELSE, f.start, f.nstart, f.end, f.nend) && val_pop_ctrl(c, &f)))
    return false;
  return val_push_n(c, f.end, f.nend);
}

static bool br(val_ctx *c, const wasm_insn *in) {
  const val_frame *f = NULL;
  const uint8_t *ts;
  uint32_t n;
  if (!label(c, in->u.index, &f)) return false;
  label_types(f, &ts, &n);
  if (in->op == OP_BR_IF)
    return val_pop_expect(c, VT_I32) && val_pop_n(c, ts, n) && val_push_n(c, ts, n);
  if (!val_pop_n(c, ts, n)) return false;
  val_set_unreachable(c);
  return true;
}

/* Every target must take the same number of values, each checked against
 * the operands on its own, so unreachable code may feed differing types. */
static bool br_table(val_ctx *c, const wasm_insn *in) {
  const uint32_t *labels = in->u.br_table.labels;
  uint32_t count = in->u.br_table.count;
  const val_frame *f = NULL;
  const uint8_t *ts;
  uint32_t arity, n;
  if (!val_pop_expect(c, VT_I32) || !label(c, labels[count], &f)) return false;
  label_types(f, &ts, &arity);
  for (uint32_t i = 0; i < count; i++) {
    if (!label(c, labels[i], &f)) return false;
    label_types(f, &ts, &n);
    if (n != arity) return val_fail(c, "type mismatch");
    if (!val_peek_n(c, ts, n)) return false;
  }
  if (!label(c, labels[count], &f)) return false;
  label_types(f, &ts, &n);
  if (!val_pop_n(c, ts, n)) return false;
  val_set_unreachable(c);
  return true;
}

bool val_control(val_ctx *c, const wasm_insn *in) {
  switch (in->op) {
  case OP_UNREACHABLE: val_set_unreachable(c); return true;
  case OP_NOP: return true;
  case OP_BLOCK: case OP_LOOP: case OP_IF: return open_block(c, in);
  case OP_ELSE: return else_(c);
  case OP_END: return end(c);
  case OP_BR: case OP_BR_IF: return br(c, in);
  case OP_BR_TABLE: return br_table(c, in);
  case OP_RETURN:
    if (!val_pop_n(c, c->func_type->results, c->func_type->nresults)) return false;
    val_set_unreachable(c);
    return true;
  default: return val_fail(c, "illegal opcode");
  }
}
