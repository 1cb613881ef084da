/* low_simd_int.c: lane-wise integer arithmetic, comparisons, shifts,
 * saturating arithmetic, min/max, avgr_u, popcnt and q15mulr_sat_s. */
#include "low_simd.h"

typedef enum {
  IN_BINARY = 1, /* a plain LLVM instruction */
  IN_INTRINSIC2, /* an intrinsic of two operands */
  IN_NEG, IN_ABS, IN_POPCNT, IN_SHIFT, IN_AVGR, IN_Q15MULR, IN_CMP,
} int_kind;

typedef struct {
  uint8_t kind;  /* int_kind, 0 in the table's holes */
  uint8_t shape; /* low_shape */
  uint8_t arg;   /* IN_BINARY, IN_SHIFT: LLVMOpcode; IN_INTRINSIC2: intrinsics[];
                    IN_CMP: LLVMIntPredicate */
} int_op;

enum { X_SADD_SAT, X_UADD_SAT, X_SSUB_SAT, X_USUB_SAT, X_SMIN, X_UMIN, X_SMAX, X_UMAX };
static const char *const intrinsics[] = {
    [X_SADD_SAT] = "llvm.sadd.sat", [X_UADD_SAT] = "llvm.uadd.sat",
    [X_SSUB_SAT] = "llvm.ssub.sat", [X_USUB_SAT] = "llvm.usub.sat",
    [X_SMIN] = "llvm.smin", [X_UMIN] = "llvm.umin", [X_SMAX] = "llvm.smax", [X_UMAX] = "llvm.umax",
};

/* Comparisons of one shape, in spec order from its first sub-opcode. */
#define CMP(s, p) {IN_CMP, s, p}
#define ICMPS(s) CMP(s, LLVMIntEQ), CMP(s, LLVMIntNE), CMP(s, LLVMIntSLT), CMP(s, LLVMIntULT), \
    CMP(s, LLVMIntSGT), CMP(s, LLVMIntUGT), CMP(s, LLVMIntSLE), CMP(s, LLVMIntULE),           \
    CMP(s, LLVMIntSGE), CMP(s, LLVMIntUGE)
/* shl shr_s shr_u add add_sat_s add_sat_u sub sub_sat_s sub_sat_u (i8x16, i16x8). */
#define SHIFTS(s) {IN_SHIFT, s, LLVMShl}, {IN_SHIFT, s, LLVMAShr}, {IN_SHIFT, s, LLVMLShr}
#define SAT_ARITH(s) {IN_BINARY, s, LLVMAdd}, {IN_INTRINSIC2, s, X_SADD_SAT},             \
    {IN_INTRINSIC2, s, X_UADD_SAT}, {IN_BINARY, s, LLVMSub}, {IN_INTRINSIC2, s, X_SSUB_SAT}, \
    {IN_INTRINSIC2, s, X_USUB_SAT}
#define MINMAX(s) {IN_INTRINSIC2, s, X_SMIN}, {IN_INTRINSIC2, s, X_UMIN},                  \
    {IN_INTRINSIC2, s, X_SMAX}, {IN_INTRINSIC2, s, X_UMAX}

static const int_op int_ops[] = {
    [0x23] = ICMPS(SH_I8), [0x2D] = ICMPS(SH_I16), [0x37] = ICMPS(SH_I32),
    [0x60] = {IN_ABS, SH_I8, 0}, {IN_NEG, SH_I8, 0}, {IN_POPCNT, SH_I8, 0},
    [0x6B] = SHIFTS(SH_I8), SAT_ARITH(SH_I8),
    [0x76] = MINMAX(SH_I8), [0x7B] = {IN_AVGR, SH_I8, 0},
    [0x80] = {IN_ABS, SH_I16, 0}, {IN_NEG, SH_I16, 0}, {IN_Q15MULR, SH_I16, 0},
    [0x8B] = SHIFTS(SH_I16), SAT_ARITH(SH_I16),
    [0x95] = {IN_BINARY, SH_I16, LLVMMul}, MINMAX(SH_I16), [0x9B] = {IN_AVGR, SH_I16, 0},
    [0xA0] = {IN_ABS, SH_I32, 0}, {IN_NEG, SH_I32, 0},
    [0xAB] = SHIFTS(SH_I32), {IN_BINARY, SH_I32, LLVMAdd},
    [0xB1] = {IN_BINARY, SH_I32, LLVMSub}, [0xB5] = {IN_BINARY, SH_I32, LLVMMul}, MINMAX(SH_I32),
    [0xC0] = {IN_ABS, SH_I64, 0}, {IN_NEG, SH_I64, 0},
    [0xCB] = SHIFTS(SH_I64), {IN_BINARY, SH_I64, LLVMAdd},
    [0xD1] = {IN_BINARY, SH_I64, LLVMSub}, [0xD5] = {IN_BINARY, SH_I64, LLVMMul},
    [0xD6] = CMP(SH_I64, LLVMIntEQ), CMP(SH_I64, LLVMIntNE), CMP(SH_I64, LLVMIntSLT),
    CMP(SH_I64, LLVMIntSGT), CMP(SH_I64, LLVMIntSLE), CMP(SH_I64, LLVMIntSGE),
};

static LLVMValueRef intrinsic(low_fn *f, const char *name, LLVMValueRef *args, unsigned n) {
  LLVMTypeRef ty = LLVMTypeOf(args[0]);
  return low_intrinsic(f, name, &ty, 1, args, n);
}

static unsigned lane_bits(LLVMValueRef v) {
  return LLVMGetIntTypeWidth(LLVMGetElementType(LLVMTypeOf(v)));
}

/* Wasm takes the count modulo the lane width (LLVM: poison past it). */
static LLVMValueRef shift(low_fn *f, LLVMOpcode opcode, LLVMValueRef v, LLVMValueRef count) {
  LLVMTypeRef ty = LLVMTypeOf(v);
  unsigned bits = lane_bits(v);
  count = LLVMBuildAnd(f->b, count, LLVMConstInt(f->mc->t_i32, bits - 1, false), "");
  if (bits < 32) count = LLVMBuildTrunc(f->b, count, LLVMGetElementType(ty), "");
  if (bits > 32) count = LLVMBuildZExt(f->b, count, LLVMGetElementType(ty), "");
  return LLVMBuildBinOp(f->b, opcode, v, low_simd_splat(f, count, LLVMGetVectorSize(ty)), "");
}

/* (a + b + 1) >> 1 without overflow: in lanes twice as wide (pavgb/pavgw). */
static LLVMValueRef avgr(low_fn *f, LLVMValueRef a, LLVMValueRef b) {
  unsigned bits = lane_bits(a);
  LLVMValueRef wa = low_simd_resize(f, a, 2 * bits, false), wb = low_simd_resize(f, b, 2 * bits, false);
  LLVMTypeRef wide = LLVMTypeOf(wa);
  LLVMValueRef sum = LLVMBuildAdd(f->b, LLVMBuildAdd(f->b, wa, wb, ""), low_simd_const_int(wide, 1), "");
  return low_simd_resize(f, LLVMBuildLShr(f->b, sum, low_simd_const_int(wide, 1), ""), bits, false);
}

/* (a * b + 0x4000) >> 15 in i32 lanes; only -0x8000 * -0x8000 overflows
 * i16 (to 0x8000), and it saturates to 0x7fff. */
LLVMValueRef low_simd_q15mulr(low_fn *f, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef wa = low_simd_resize(f, a, 32, true), wb = low_simd_resize(f, b, 32, true);
  LLVMTypeRef wide = LLVMTypeOf(wa);
  LLVMValueRef p = LLVMBuildAdd(f->b, LLVMBuildMul(f->b, wa, wb, ""), low_simd_const_int(wide, 0x4000), "");
  LLVMValueRef args[] = {LLVMBuildAShr(f->b, p, low_simd_const_int(wide, 15), ""),
                         low_simd_const_int(wide, 0x7fff)};
  return low_simd_resize(f, intrinsic(f, "llvm.smin", args, 2), 16, true);
}

static LLVMValueRef unary(low_fn *f, int_kind kind, LLVMValueRef v) {
  LLVMTypeRef ty = LLVMTypeOf(v);
  switch (kind) {
  case IN_NEG: return LLVMBuildSub(f->b, LLVMConstNull(ty), v, "");
  case IN_ABS: { /* abs(INT_MIN) is INT_MIN: not poison */
    LLVMValueRef args[] = {v, LLVMConstInt(f->mc->t_i1, 0, false)};
    return intrinsic(f, "llvm.abs", args, 2);
  }
  default: return intrinsic(f, "llvm.ctpop", &v, 1);
  }
}

static LLVMValueRef binary(low_fn *f, const int_op *op, LLVMValueRef a, LLVMValueRef b) {
  switch ((int_kind)op->kind) {
  case IN_BINARY: return LLVMBuildBinOp(f->b, (LLVMOpcode)op->arg, a, b, "");
  case IN_AVGR: return avgr(f, a, b);
  case IN_Q15MULR: return low_simd_q15mulr(f, a, b);
  case IN_CMP: {
    LLVMValueRef c = LLVMBuildICmp(f->b, (LLVMIntPredicate)op->arg, a, b, "");
    return low_simd_mask(f, c, lane_bits(a));
  }
  default: {
    LLVMValueRef args[] = {a, b};
    return intrinsic(f, intrinsics[op->arg], args, 2);
  }
  }
}

bool low_simd_int(low_fn *f, const wasm_insn *insn, uint32_t sub) {
  (void)insn;
  if (sub >= sizeof int_ops / sizeof int_ops[0] || !int_ops[sub].kind) return false;
  const int_op *op = &int_ops[sub];
  low_shape s = (low_shape)op->shape;
  switch ((int_kind)op->kind) {
  case IN_NEG: case IN_ABS: case IN_POPCNT:
    low_simd_push(f, unary(f, (int_kind)op->kind, low_simd_pop(f, s)));
    break;
  case IN_SHIFT: {
    LLVMValueRef count = low_pop(f);
    low_simd_push(f, shift(f, (LLVMOpcode)op->arg, low_simd_pop(f, s), count));
    break;
  }
  default: {
    LLVMValueRef b = low_simd_pop(f, s), a = low_simd_pop(f, s);
    low_simd_push(f, binary(f, op, a, b));
    break;
  }
  }
  return true;
}
