/* low_simd_relaxed.c: relaxed SIMD (Wasm 3.0).  Each instruction gets one
 * of the results the spec allows, always the same one, whatever the
 * machine (docs/ARCHITECTURE.md lists the choices):
 *   relaxed_swizzle, relaxed_trunc*, relaxed_min/max, relaxed_q15mulr_s:
 *     the result of swizzle, trunc_sat*, min/max, q15mulr_sat_s;
 *   relaxed_laneselect: bitselect (every bit of the mask counts);
 *   relaxed_madd/nmadd: a * b + c and -(a * b) + c, rounded twice (not fused);
 *   relaxed_dot*: b's bytes signed, the i16 pair sums wrapping. */
#include "low_simd.h"

typedef enum {
  RX_SWIZZLE = 1, RX_TRUNC, RX_TRUNC_ZERO, RX_MADD, RX_NMADD, RX_LANESELECT, RX_MIN, RX_MAX,
  RX_Q15MULR, RX_DOT, RX_DOT_ADD,
} relaxed_kind;

typedef struct {
  uint8_t kind;  /* relaxed_kind, 0 in the table's holes */
  uint8_t shape; /* low_shape of the operands */
  bool is_signed;
} relaxed_op;

static const relaxed_op relaxed_ops[] = {
    [0x100] = {RX_SWIZZLE, SH_I8, false},
    [0x101] = {RX_TRUNC, SH_F32, true},      {RX_TRUNC, SH_F32, false},
    {RX_TRUNC_ZERO, SH_F64, true},           {RX_TRUNC_ZERO, SH_F64, false},
    [0x105] = {RX_MADD, SH_F32, false},      {RX_NMADD, SH_F32, false},
    {RX_MADD, SH_F64, false},                {RX_NMADD, SH_F64, false},
    [0x109] = {RX_LANESELECT, SH_I8, false}, {RX_LANESELECT, SH_I16, false},
    {RX_LANESELECT, SH_I32, false},          {RX_LANESELECT, SH_I64, false},
    [0x10D] = {RX_MIN, SH_F32, false},       {RX_MAX, SH_F32, false},
    {RX_MIN, SH_F64, false},                 {RX_MAX, SH_F64, false},
    [0x111] = {RX_Q15MULR, SH_I16, true},    {RX_DOT, SH_I8, true},
    {RX_DOT_ADD, SH_I8, true},
};

/* i16 lanes: a[2i] * b[2i] + a[2i+1] * b[2i+1], bytes signed, wrapping. */
static LLVMValueRef dot_i16(low_fn *f, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef p = LLVMBuildMul(f->b, low_simd_resize(f, a, 16, true), low_simd_resize(f, b, 16, true), "");
  return LLVMBuildAdd(f->b, low_simd_pick(f, p, false), low_simd_pick(f, p, true), "");
}

/* dot_i16, then its lane pairs summed into i32 (extadd_pairwise_s) plus c. */
static LLVMValueRef dot_add(low_fn *f, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  LLVMValueRef wide = low_simd_resize(f, dot_i16(f, a, b), 32, true);
  LLVMValueRef sums = LLVMBuildAdd(f->b, low_simd_pick(f, wide, false), low_simd_pick(f, wide, true), "");
  return LLVMBuildAdd(f->b, sums, LLVMBuildBitCast(f->b, c, LLVMTypeOf(sums), ""), "");
}

static LLVMValueRef unary(low_fn *f, const relaxed_op *op, LLVMValueRef x) {
  LLVMValueRef r = low_simd_trunc_sat(f, x, op->is_signed);
  if (op->kind == RX_TRUNC) return r;
  return low_simd_concat(f, r, LLVMConstNull(LLVMTypeOf(r)));
}

static LLVMValueRef binary(low_fn *f, const relaxed_op *op, LLVMValueRef a, LLVMValueRef b) {
  switch ((relaxed_kind)op->kind) {
  case RX_SWIZZLE: return low_simd_swizzle(f, a, b);
  case RX_MIN: case RX_MAX: return low_simd_fminmax(f, a, b, op->kind == RX_MAX);
  case RX_Q15MULR: return low_simd_q15mulr(f, a, b);
  default: return dot_i16(f, a, b);
  }
}

static LLVMValueRef ternary(low_fn *f, const relaxed_op *op, LLVMValueRef a, LLVMValueRef b,
                            LLVMValueRef c) {
  switch ((relaxed_kind)op->kind) {
  case RX_MADD: return LLVMBuildFAdd(f->b, LLVMBuildFMul(f->b, a, b, ""), c, "");
  case RX_NMADD: return LLVMBuildFAdd(f->b, LLVMBuildFNeg(f->b, LLVMBuildFMul(f->b, a, b, ""), ""), c, "");
  case RX_LANESELECT: return low_simd_bitselect(f, a, b, c);
  default: return dot_add(f, a, b, c);
  }
}

bool low_simd_relaxed(low_fn *f, const wasm_insn *insn, uint32_t sub) {
  (void)insn;
  if (sub >= sizeof relaxed_ops / sizeof relaxed_ops[0] || !relaxed_ops[sub].kind) return false;
  const relaxed_op *op = &relaxed_ops[sub];
  low_shape s = (low_shape)op->shape;
  unsigned arity = 0;
  while (arity < 3 && wasm_simd_info(sub)->params[arity]) arity++;
  LLVMValueRef args[3];
  for (unsigned i = arity; i-- > 0;) args[i] = low_simd_pop(f, s);
  if (arity == 1) low_simd_push(f, unary(f, op, args[0]));
  else if (arity == 2) low_simd_push(f, binary(f, op, args[0], args[1]));
  else low_simd_push(f, ternary(f, op, args[0], args[1], args[2]));
  return true;
}
