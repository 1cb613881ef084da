/* val_simd.c: the 0xFD-prefixed instructions, typed by wasm_simd.h's table. */
#include "val_internal.h"
#include "wasm_simd.h"

/* Memory instructions: a memory, and an alignment at most the access size. */
static bool memory_access(val_ctx *c, const wasm_simd_op *op, const wasm_insn *in) {
  if (c->m->nmems == 0) return val_unknown(c, "memory", 0);
  if (in->u.mem.align > op->align) return val_fail(c, "alignment must not be larger than natural");
  return true;
}

static bool lane_indices(val_ctx *c, const wasm_simd_op *op, const wasm_insn *in) {
  switch (op->imm) {
  case SIMD_IM_LANE:
    return in->u.lane < op->lanes || val_fail(c, "invalid lane index");
  case SIMD_IM_MEM_LANE:
    return in->u.mem.lane < op->lanes || val_fail(c, "invalid lane index");
  case SIMD_IM_BYTES: /* shuffle's 16 lane indices into both operands */
    for (unsigned i = 0; op->lanes && i < 16; i++)
      if (in->u.bytes[i] >= op->lanes) return val_fail(c, "invalid lane index");
    return true;
  default:
    return true;
  }
}

bool val_simd(val_ctx *c, const wasm_insn *in) {
  const wasm_simd_op *op = wasm_simd_info(wasm_simd_sub(in));
  if (!op) return val_fail(c, "illegal opcode");
  bool is_memory = op->imm == SIMD_IM_MEM || op->imm == SIMD_IM_MEM_LANE;
  if (is_memory && !memory_access(c, op, in)) return false;
  if (!lane_indices(c, op, in)) return false;
  unsigned n = 0;
  while (n < 3 && op->params[n]) n++;
  while (n > 0)
    if (!val_pop_expect(c, op->params[--n])) return false;
  return !op->result || val_push(c, op->result);
}
