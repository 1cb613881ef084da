/* low_simd_logic.c: bitwise operations, bitselect, any_true, all_true and
 * bitmask. */
#include "low_simd.h"

typedef enum { LG_NOT = 1, LG_BINARY, LG_ANDNOT, LG_BITSELECT, LG_ANY_TRUE, LG_ALL_TRUE, LG_BITMASK } logic_kind;

typedef struct {
  uint8_t kind;   /* logic_kind, 0 in the table's holes */
  uint8_t shape;  /* low_shape: all_true, bitmask */
  uint8_t opcode; /* LLVMOpcode: LG_BINARY */
} logic_op;

static const logic_op logic_ops[] = {
    [0x4D] = {LG_NOT, SH_I64, 0},      [0x4E] = {LG_BINARY, SH_I64, LLVMAnd},
    [0x4F] = {LG_ANDNOT, SH_I64, 0},   [0x50] = {LG_BINARY, SH_I64, LLVMOr},
    [0x51] = {LG_BINARY, SH_I64, LLVMXor}, [0x52] = {LG_BITSELECT, SH_I64, 0},
    [0x53] = {LG_ANY_TRUE, SH_I64, 0},
    [0x63] = {LG_ALL_TRUE, SH_I8, 0},  [0x64] = {LG_BITMASK, SH_I8, 0},
    [0x83] = {LG_ALL_TRUE, SH_I16, 0}, [0x84] = {LG_BITMASK, SH_I16, 0},
    [0xA3] = {LG_ALL_TRUE, SH_I32, 0}, [0xA4] = {LG_BITMASK, SH_I32, 0},
    [0xC3] = {LG_ALL_TRUE, SH_I64, 0}, [0xC4] = {LG_BITMASK, SH_I64, 0},
};

LLVMValueRef low_simd_bitselect(low_fn *f, LLVMValueRef v1, LLVMValueRef v2, LLVMValueRef c) {
  LLVMValueRef pick1 = LLVMBuildAnd(f->b, v1, c, "");
  LLVMValueRef pick2 = LLVMBuildAnd(f->b, v2, LLVMBuildNot(f->b, c, ""), "");
  return LLVMBuildOr(f->b, pick1, pick2, "bitselect");
}

/* A lane-wise i1 vector as the integer of its bits (lane 0 lowest). */
static LLVMValueRef bits_of(low_fn *f, LLVMValueRef cond) {
  unsigned n = LLVMGetVectorSize(LLVMTypeOf(cond));
  return LLVMBuildBitCast(f->b, cond, LLVMIntTypeInContext(f->mc->ctx, n), "");
}

static LLVMValueRef to_i32(low_fn *f, LLVMValueRef x) {
  return LLVMBuildZExtOrBitCast(f->b, x, f->mc->t_i32, "");
}

static LLVMValueRef all_true(low_fn *f, low_shape s) {
  LLVMValueRef v = low_simd_pop(f, s);
  LLVMValueRef nonzero = LLVMBuildICmp(f->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
  LLVMValueRef bits = bits_of(f, nonzero);
  return to_i32(f, LLVMBuildICmp(f->b, LLVMIntEQ, bits, LLVMConstAllOnes(LLVMTypeOf(bits)), ""));
}

/* Each lane's top bit. */
static LLVMValueRef bitmask(low_fn *f, low_shape s) {
  LLVMValueRef v = low_simd_pop(f, s);
  LLVMValueRef negative = LLVMBuildICmp(f->b, LLVMIntSLT, v, LLVMConstNull(LLVMTypeOf(v)), "");
  return to_i32(f, bits_of(f, negative));
}

static LLVMValueRef any_true(low_fn *f) {
  LLVMTypeRef i128 = LLVMIntTypeInContext(f->mc->ctx, 128);
  LLVMValueRef v = LLVMBuildBitCast(f->b, low_pop(f), i128, "");
  return to_i32(f, LLVMBuildICmp(f->b, LLVMIntNE, v, LLVMConstNull(i128), ""));
}

bool low_simd_logic(low_fn *f, const wasm_insn *insn, uint32_t sub) {
  (void)insn;
  if (sub >= sizeof logic_ops / sizeof logic_ops[0] || !logic_ops[sub].kind) return false;
  const logic_op *op = &logic_ops[sub];
  LLVMValueRef a, b, c;
  switch ((logic_kind)op->kind) {
  case LG_NOT: low_push(f, LLVMBuildNot(f->b, low_pop(f), "")); break;
  case LG_BINARY:
    b = low_pop(f), a = low_pop(f);
    low_push(f, LLVMBuildBinOp(f->b, (LLVMOpcode)op->opcode, a, b, ""));
    break;
  case LG_ANDNOT:
    b = low_pop(f), a = low_pop(f);
    low_push(f, LLVMBuildAnd(f->b, a, LLVMBuildNot(f->b, b, ""), ""));
    break;
  case LG_BITSELECT:
    c = low_pop(f), b = low_pop(f), a = low_pop(f);
    low_push(f, low_simd_bitselect(f, a, b, c));
    break;
  case LG_ANY_TRUE: low_push(f, any_true(f)); break;
  case LG_ALL_TRUE: low_push(f, all_true(f, (low_shape)op->shape)); break;
  case LG_BITMASK: low_push(f, bitmask(f, (low_shape)op->shape)); break;
  }
  return true;
}
