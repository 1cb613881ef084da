/* low_simd_widen.c: integer lanes changing width: extend, extmul,
 * extadd_pairwise, dot and the saturating narrows. */
#include "low_simd.h"

typedef enum { WD_EXTEND = 1, WD_EXTMUL, WD_EXTADD, WD_DOT, WD_NARROW } widen_kind;

typedef struct {
  uint8_t kind;  /* widen_kind, 0 in the table's holes */
  uint8_t shape; /* low_shape of the result */
  bool high;     /* the high half of the operands' lanes */
  bool is_signed;
} widen_op;

/* extend_low_s extend_high_s extend_low_u extend_high_u (or extmul's). */
#define HALVES(k, s) {k, s, false, true}, {k, s, true, true}, {k, s, false, false}, {k, s, true, false}

static const widen_op widen_ops[] = {
    [0x65] = {WD_NARROW, SH_I8, false, true}, {WD_NARROW, SH_I8, false, false},
    [0x7C] = {WD_EXTADD, SH_I16, false, true}, {WD_EXTADD, SH_I16, false, false},
    {WD_EXTADD, SH_I32, false, true}, {WD_EXTADD, SH_I32, false, false},
    [0x85] = {WD_NARROW, SH_I16, false, true}, {WD_NARROW, SH_I16, false, false},
    [0x87] = HALVES(WD_EXTEND, SH_I16), [0x9C] = HALVES(WD_EXTMUL, SH_I16),
    [0xA7] = HALVES(WD_EXTEND, SH_I32), [0xBA] = {WD_DOT, SH_I32, false, true},
    [0xBC] = HALVES(WD_EXTMUL, SH_I32),
    [0xC7] = HALVES(WD_EXTEND, SH_I64), [0xDC] = HALVES(WD_EXTMUL, SH_I64),
};

static unsigned lane_bits(LLVMValueRef v) {
  return LLVMGetIntTypeWidth(LLVMGetElementType(LLVMTypeOf(v)));
}

/* One half of v's lanes, each widened to twice its width. */
static LLVMValueRef extend(low_fn *f, LLVMValueRef v, bool high, bool is_signed) {
  return low_simd_resize(f, low_simd_half(f, v, high), 2 * lane_bits(v), is_signed);
}

/* Adjacent lane pairs summed in lanes twice as wide. */
static LLVMValueRef extadd(low_fn *f, LLVMValueRef v, bool is_signed) {
  LLVMValueRef wide = low_simd_resize(f, v, 2 * lane_bits(v), is_signed);
  return LLVMBuildAdd(f->b, low_simd_pick(f, wide, false), low_simd_pick(f, wide, true), "");
}

/* i32x4.dot_i16x8_s: pairwise sums of the i32 products (pmaddwd). */
static LLVMValueRef dot(low_fn *f, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef p = LLVMBuildMul(f->b, low_simd_resize(f, a, 32, true), low_simd_resize(f, b, 32, true), "");
  return LLVMBuildAdd(f->b, low_simd_pick(f, p, false), low_simd_pick(f, p, true), "");
}

/* Both operands' signed lanes clamped to the narrow type's range (signed,
 * or unsigned for _u), a's lanes first (packsswb/packuswb and their i32
 * forms). */
static LLVMValueRef narrow(low_fn *f, LLVMValueRef a, LLVMValueRef b, bool is_signed) {
  LLVMValueRef both = low_simd_concat(f, a, b);
  LLVMTypeRef ty = LLVMTypeOf(both);
  unsigned bits = lane_bits(a) / 2;
  uint64_t lo = is_signed ? -(1ull << (bits - 1)) : 0;
  uint64_t hi = is_signed ? (1ull << (bits - 1)) - 1 : (1ull << bits) - 1;
  LLVMValueRef args[] = {both, low_simd_const_int(ty, lo)};
  args[0] = low_intrinsic(f, "llvm.smax", &ty, 1, args, 2);
  args[1] = low_simd_const_int(ty, hi);
  return low_simd_resize(f, low_intrinsic(f, "llvm.smin", &ty, 1, args, 2), bits, false);
}

bool low_simd_widen(low_fn *f, const wasm_insn *insn, uint32_t sub) {
  (void)insn;
  if (sub >= sizeof widen_ops / sizeof widen_ops[0] || !widen_ops[sub].kind) return false;
  const widen_op *op = &widen_ops[sub];
  /* operands have lanes half as wide as the result's */
  low_shape from = (low_shape)(op->shape - 1);
  LLVMValueRef a, b;
  switch ((widen_kind)op->kind) {
  case WD_EXTEND:
    low_simd_push(f, extend(f, low_simd_pop(f, from), op->high, op->is_signed));
    break;
  case WD_EXTADD: low_simd_push(f, extadd(f, low_simd_pop(f, from), op->is_signed)); break;
  case WD_EXTMUL:
    b = low_simd_pop(f, from), a = low_simd_pop(f, from);
    low_simd_push(f, LLVMBuildMul(f->b, extend(f, a, op->high, op->is_signed),
                                  extend(f, b, op->high, op->is_signed), ""));
    break;
  case WD_DOT:
    b = low_simd_pop(f, from), a = low_simd_pop(f, from);
    low_simd_push(f, dot(f, a, b));
    break;
  case WD_NARROW: /* operands have lanes twice as wide */
    b = low_simd_pop(f, (low_shape)(op->shape + 1)), a = low_simd_pop(f, (low_shape)(op->shape + 1));
    low_simd_push(f, narrow(f, a, b, op->is_signed));
    break;
  }
  return true;
}
