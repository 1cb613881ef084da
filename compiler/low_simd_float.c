/* low_simd_float.c: f32x4 and f64x2 arithmetic, min/max, pmin/pmax,
 * rounding and comparisons, with Wasm's NaN and signed-zero rules. */
#include "low_simd.h"

typedef enum {
  FL_BINARY = 1, /* fadd fsub fmul fdiv */
  FL_UNARY,      /* an intrinsic of one operand */
  FL_NEG, FL_MIN, FL_MAX, FL_PMIN, FL_PMAX, FL_CMP,
} float_kind;

typedef struct {
  uint8_t kind;  /* float_kind, 0 in the table's holes */
  uint8_t shape; /* SH_F32 or SH_F64 */
  uint8_t arg;   /* FL_BINARY: LLVMOpcode; FL_UNARY: unary_intrinsics[]; FL_CMP: LLVMRealPredicate */
} float_op;

/* The first four in low_simd_round_sse2's order. */
enum { U_CEIL, U_FLOOR, U_TRUNC, U_NEAREST, U_ABS, U_SQRT };
static const char *const unary_intrinsics[] = {
    [U_CEIL] = "llvm.ceil", [U_FLOOR] = "llvm.floor", [U_TRUNC] = "llvm.trunc",
    [U_NEAREST] = "llvm.roundeven", [U_ABS] = "llvm.fabs", [U_SQRT] = "llvm.sqrt",
};

/* eq ne lt gt le ge: only ne is true on NaN operands. */
#define FCMPS(s) {FL_CMP, s, LLVMRealOEQ}, {FL_CMP, s, LLVMRealUNE}, {FL_CMP, s, LLVMRealOLT}, \
    {FL_CMP, s, LLVMRealOGT}, {FL_CMP, s, LLVMRealOLE}, {FL_CMP, s, LLVMRealOGE}
/* abs neg _ sqrt add sub mul div min max pmin pmax, from 0xE0 (f32x4) and 0xEC (f64x2). */
#define ARITH(s) {FL_UNARY, s, U_ABS}, {FL_NEG, s, 0}, {0, 0, 0}, {FL_UNARY, s, U_SQRT},    \
    {FL_BINARY, s, LLVMFAdd}, {FL_BINARY, s, LLVMFSub}, {FL_BINARY, s, LLVMFMul},         \
    {FL_BINARY, s, LLVMFDiv}, {FL_MIN, s, 0}, {FL_MAX, s, 0}, {FL_PMIN, s, 0}, {FL_PMAX, s, 0}

static const float_op float_ops[] = {
    [0x41] = FCMPS(SH_F32), [0x47] = FCMPS(SH_F64),
    [0x67] = {FL_UNARY, SH_F32, U_CEIL}, {FL_UNARY, SH_F32, U_FLOOR}, {FL_UNARY, SH_F32, U_TRUNC},
    {FL_UNARY, SH_F32, U_NEAREST},
    [0x74] = {FL_UNARY, SH_F64, U_CEIL}, {FL_UNARY, SH_F64, U_FLOOR},
    [0x7A] = {FL_UNARY, SH_F64, U_TRUNC}, [0x94] = {FL_UNARY, SH_F64, U_NEAREST},
    [0xE0] = ARITH(SH_F32), [0xEC] = ARITH(SH_F64),
};

static LLVMValueRef intrinsic(low_fn *f, const char *name, LLVMValueRef *args, unsigned n) {
  LLVMTypeRef ty = LLVMTypeOf(args[0]);
  return low_intrinsic(f, name, &ty, 1, args, n);
}

/* x + x: a NaN comes out quiet (any other x is not used). */
static LLVMValueRef nan_quieted(low_fn *f, LLVMValueRef nan_lanes, LLVMValueRef x,
                                LLVMValueRef result) {
  return LLVMBuildSelect(f->b, nan_lanes, LLVMBuildFAdd(f->b, x, x, ""), result, "");
}

/* LLVM folds x * 1, x / 1, x - 0, x + -0 to x and x * -1, x / -1, -0 - x
 * to -x, letting a signalling NaN x through where Wasm wants it quiet:
 * with a constant operand whose lanes are all 0 or +-1, NaN lanes of x give
 * x + x instead. */
static bool is_identity_like(LLVMValueRef c) {
  if (!LLVMIsAConstant(c)) return false;
  unsigned n = LLVMGetVectorSize(LLVMTypeOf(c));
  for (unsigned i = 0; i < n; i++) {
    LLVMValueRef lane = LLVMGetAggregateElement(c, i);
    LLVMBool loses_info;
    if (!lane || !LLVMIsAConstantFP(lane)) return false;
    double v = LLVMConstRealGetDouble(lane, &loses_info);
    if (v != 0.0 && v != 1.0 && v != -1.0) return false;
  }
  return true;
}

static LLVMValueRef arith(low_fn *f, LLVMOpcode opcode, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef r = LLVMBuildBinOp(f->b, opcode, a, b, "");
  bool const_a = LLVMIsAConstant(a) != NULL, const_b = LLVMIsAConstant(b) != NULL;
  if (const_a == const_b || !is_identity_like(const_a ? a : b)) return r;
  LLVMValueRef x = const_a ? b : a;
  return nan_quieted(f, LLVMBuildFCmp(f->b, LLVMRealUNO, x, x, ""), x, r);
}

/* minps/maxps (minpd/maxpd): x < y ? x : y (x > y ? x : y), so y when
 * either is NaN or both are zeros.  Called as x86 intrinsics: LLVM's
 * selection does not find them in selects of f64 lanes. */
static LLVMValueRef x86_minmax(low_fn *f, LLVMValueRef x, LLVMValueRef y, bool is_max) {
  static const char *const names[2][2] = {{"llvm.x86.sse.min.ps", "llvm.x86.sse.max.ps"},
                                          {"llvm.x86.sse2.min.pd", "llvm.x86.sse2.max.pd"}};
  LLVMValueRef args[] = {x, y};
  return low_intrinsic(f, names[LLVMGetVectorSize(LLVMTypeOf(x)) == 2][is_max], NULL, 0, args, 2);
}

/* Wasm's min/max: NaN if either lane is NaN, -0 below +0.  (llvm.minimum
 * means that too, but its x86 lowering is long.)  minps both ways agrees
 * but for zeros of opposite signs, where or-ing (min) or and-ing (max)
 * the two gives -0 or +0; NaN lanes give a + b, which the hardware quiets. */
LLVMValueRef low_simd_fminmax(low_fn *f, LLVMValueRef a, LLVMValueRef b, bool is_max) {
  LLVMTypeRef ty = LLVMTypeOf(a);
  unsigned lanes = LLVMGetVectorSize(ty);
  LLVMTypeRef bits_ty = LLVMVectorType(LLVMIntTypeInContext(f->mc->ctx, 128 / lanes), lanes);
  LLVMValueRef x = LLVMBuildBitCast(f->b, x86_minmax(f, a, b, is_max), bits_ty, "");
  LLVMValueRef y = LLVMBuildBitCast(f->b, x86_minmax(f, b, a, is_max), bits_ty, "");
  LLVMValueRef both = is_max ? LLVMBuildAnd(f->b, x, y, "") : LLVMBuildOr(f->b, x, y, "");
  LLVMValueRef any_nan = LLVMBuildFCmp(f->b, LLVMRealUNO, a, b, "");
  return LLVMBuildSelect(f->b, any_nan, LLVMBuildFAdd(f->b, a, b, ""),
                         LLVMBuildBitCast(f->b, both, ty, ""), is_max ? "fmax" : "fmin");
}

/* The spec's pmin: b < a ? b : a, i.e. minps(b, a); pmax: a < b ? b : a,
 * i.e. maxps(b, a). */
static LLVMValueRef pminmax(low_fn *f, LLVMValueRef a, LLVMValueRef b, bool is_max) {
  return x86_minmax(f, b, a, is_max);
}

static LLVMValueRef binary(low_fn *f, const float_op *op, LLVMValueRef a, LLVMValueRef b) {
  switch ((float_kind)op->kind) {
  case FL_BINARY: return arith(f, (LLVMOpcode)op->arg, a, b);
  case FL_MIN: case FL_MAX: return low_simd_fminmax(f, a, b, op->kind == FL_MAX);
  case FL_PMIN: case FL_PMAX: return pminmax(f, a, b, op->kind == FL_PMAX);
  default: {
    LLVMValueRef c = LLVMBuildFCmp(f->b, (LLVMRealPredicate)op->arg, a, b, "");
    return low_simd_mask(f, c, op->shape == SH_F32 ? 32 : 64);
  }
  }
}

bool low_simd_float(low_fn *f, const wasm_insn *insn, uint32_t sub) {
  (void)insn;
  if (sub >= sizeof float_ops / sizeof float_ops[0] || !float_ops[sub].kind) return false;
  const float_op *op = &float_ops[sub];
  low_shape s = (low_shape)op->shape;
  if (op->kind == FL_NEG) {
    low_simd_push(f, LLVMBuildFNeg(f->b, low_simd_pop(f, s), ""));
  } else if (op->kind == FL_UNARY && op->arg <= U_NEAREST && f->mc->opt->portable_cpu) {
    low_simd_push(f, low_simd_round_sse2(f, low_simd_pop(f, s), op->arg));
  } else if (op->kind == FL_UNARY) {
    LLVMValueRef x = low_simd_pop(f, s);
    low_simd_push(f, intrinsic(f, unary_intrinsics[op->arg], &x, 1));
  } else {
    LLVMValueRef b = low_simd_pop(f, s), a = low_simd_pop(f, s);
    low_simd_push(f, binary(f, op, a, b));
  }
  return true;
}
