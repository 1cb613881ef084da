/* val_memory.c: loads, stores, memory.size/grow and the bulk memory instructions. */
#include "val_internal.h"

/* Loads and stores 0x28..0x3E, by opcode: the value type and log2 of the
 * access width, the largest alignment allowed. */
static const struct {
  uint8_t type, natural_align;
} memops[] = {
  {VT_I32, 2}, {VT_I64, 3}, {VT_F32, 2}, {VT_F64, 3},            /* full loads */
  {VT_I32, 0}, {VT_I32, 0}, {VT_I32, 1}, {VT_I32, 1},            /* i32.load8/16 */
  {VT_I64, 0}, {VT_I64, 0}, {VT_I64, 1}, {VT_I64, 1},            /* i64.load8/16 */
  {VT_I64, 2}, {VT_I64, 2},                                      /* i64.load32 */
  {VT_I32, 2}, {VT_I64, 3}, {VT_F32, 2}, {VT_F64, 3},            /* full stores */
  {VT_I32, 0}, {VT_I32, 1}, {VT_I64, 0}, {VT_I64, 1}, {VT_I64, 2}, /* narrow stores */
};

static bool has_memory(val_ctx *c) {
  if (c->m->nmems == 0) return val_unknown(c, "memory", 0);
  return true;
}

static bool load_store(val_ctx *c, const wasm_insn *in) {
  uint8_t t = memops[in->op - OP_I32_LOAD].type;
  if (in->u.mem.align > memops[in->op - OP_I32_LOAD].natural_align)
    return val_fail(c, "alignment must not be larger than natural");
  if (in->op >= OP_I32_STORE)
    return val_pop_expect(c, t) && val_pop_expect(c, VT_I32);
  return val_pop_expect(c, VT_I32) && val_push(c, t);
}

static bool data_segment(val_ctx *c, uint32_t x) {
  if (x >= c->m->ndatas) return val_unknown(c, "data segment", x);
  return true;
}

bool val_memory(val_ctx *c, const wasm_insn *in) {
  if (in->op == OP_DATA_DROP) return data_segment(c, in->u.index);
  if (!has_memory(c)) return false;
  switch (in->op) {
  case OP_MEMORY_SIZE: return val_push(c, VT_I32);
  case OP_MEMORY_GROW: return val_pop_expect(c, VT_I32) && val_push(c, VT_I32);
  case OP_MEMORY_INIT: return data_segment(c, in->u.index) && val_pop_i32s(c, 3);
  case OP_MEMORY_COPY: case OP_MEMORY_FILL: return val_pop_i32s(c, 3);
  default: return load_store(c, in);
  }
}
