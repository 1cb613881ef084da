/* low_convert.c: conversions between value types (0xA7..0xC4, 0xFC00..0xFC07). */
#include "low_convert.h"

typedef enum {
  CV_WRAP, CV_EXTEND_S, CV_EXTEND_U, CV_TRUNC_S, CV_TRUNC_U, CV_TRUNC_SAT_S, CV_TRUNC_SAT_U,
  CV_CONVERT_S, CV_CONVERT_U, CV_DEMOTE, CV_PROMOTE, CV_REINTERPRET, CV_SIGN_EXTEND,
} cv_kind;

typedef struct {
  uint8_t kind;   /* cv_kind */
  uint8_t result; /* VT_* */
  uint8_t bits;   /* CV_SIGN_EXTEND: width of the low part extended */
} conversion;

/* Indexed by opcode - OP_I32_WRAP_I64. */
static const conversion conversions[] = {
    {CV_WRAP, VT_I32, 0},        {CV_TRUNC_S, VT_I32, 0},     {CV_TRUNC_U, VT_I32, 0},
    {CV_TRUNC_S, VT_I32, 0},     {CV_TRUNC_U, VT_I32, 0},     {CV_EXTEND_S, VT_I64, 0},
    {CV_EXTEND_U, VT_I64, 0},    {CV_TRUNC_S, VT_I64, 0},     {CV_TRUNC_U, VT_I64, 0},
    {CV_TRUNC_S, VT_I64, 0},     {CV_TRUNC_U, VT_I64, 0},     {CV_CONVERT_S, VT_F32, 0},
    {CV_CONVERT_U, VT_F32, 0},   {CV_CONVERT_S, VT_F32, 0},   {CV_CONVERT_U, VT_F32, 0},
    {CV_DEMOTE, VT_F32, 0},      {CV_CONVERT_S, VT_F64, 0},   {CV_CONVERT_U, VT_F64, 0},
    {CV_CONVERT_S, VT_F64, 0},   {CV_CONVERT_U, VT_F64, 0},   {CV_PROMOTE, VT_F64, 0},
    {CV_REINTERPRET, VT_I32, 0}, {CV_REINTERPRET, VT_I64, 0}, {CV_REINTERPRET, VT_F32, 0},
    {CV_REINTERPRET, VT_F64, 0}, {CV_SIGN_EXTEND, VT_I32, 8}, {CV_SIGN_EXTEND, VT_I32, 16},
    {CV_SIGN_EXTEND, VT_I64, 8}, {CV_SIGN_EXTEND, VT_I64, 16}, {CV_SIGN_EXTEND, VT_I64, 32},
};
_Static_assert(sizeof conversions / sizeof conversions[0] == OP_I64_EXTEND32_S - OP_I32_WRAP_I64 + 1,
               "one conversion per opcode");

/* Indexed by opcode - OP_I32_TRUNC_SAT_F32_S. */
static const conversion saturating[] = {
    {CV_TRUNC_SAT_S, VT_I32, 0}, {CV_TRUNC_SAT_U, VT_I32, 0}, {CV_TRUNC_SAT_S, VT_I32, 0},
    {CV_TRUNC_SAT_U, VT_I32, 0}, {CV_TRUNC_SAT_S, VT_I64, 0}, {CV_TRUNC_SAT_U, VT_I64, 0},
    {CV_TRUNC_SAT_S, VT_I64, 0}, {CV_TRUNC_SAT_U, VT_I64, 0},
};

/* x truncates to an N-bit integer iff lo < x < hi (lo <= x when
 * lo_inclusive).  hi is 2^(N-1) or 2^N, exact in both float types.  The
 * unsigned floor is -1 (exclusive: -0.9 truncates to 0).  The signed floor
 * is -2^(N-1) - 1 where the float type represents it (a mantissa wider
 * than N: f64 for N = 32), else -2^(N-1) itself, inclusive. */
static void trunc_bounds(bool is_signed, unsigned bits, bool from_f32, double *lo,
                         bool *lo_inclusive, double *hi) {
  double half = (double)(1ull << (bits - 1));
  unsigned mantissa_bits = from_f32 ? 24 : 53;
  *hi = is_signed ? half : 2.0 * half;
  *lo_inclusive = is_signed && mantissa_bits <= bits;
  *lo = !is_signed ? -1.0 : *lo_inclusive ? -half : -half - 1.0;
}

static LLVMValueRef emit_trapping_trunc(low_fn *f, bool is_signed, LLVMTypeRef to, LLVMValueRef x,
                                        uint32_t offset) {
  LLVMBuilderRef b = f->b;
  LLVMTypeRef from = LLVMTypeOf(x);
  double lo, hi;
  bool lo_inclusive;
  trunc_bounds(is_signed, LLVMGetIntTypeWidth(to), from == f->mc->t_f32, &lo, &lo_inclusive, &hi);
  low_trap_if(f, LLVMBuildFCmp(b, LLVMRealUNO, x, x, ""), TWASM_TRAP_INVALID_CONVERSION, offset);
  LLVMValueRef too_low = LLVMBuildFCmp(b, lo_inclusive ? LLVMRealOLT : LLVMRealOLE, x,
                                       LLVMConstReal(from, lo), "");
  LLVMValueRef too_high = LLVMBuildFCmp(b, LLVMRealOGE, x, LLVMConstReal(from, hi), "");
  low_trap_if(f, LLVMBuildOr(b, too_low, too_high, ""), TWASM_TRAP_INT_OVERFLOW, offset);
  return is_signed ? LLVMBuildFPToSI(b, x, to, "") : LLVMBuildFPToUI(b, x, to, "");
}

/* NaN -> 0, out of range -> the nearest bound: exactly llvm.fpto*i.sat. */
static LLVMValueRef emit_saturating_trunc(low_fn *f, bool is_signed, LLVMTypeRef to,
                                          LLVMValueRef x) {
  LLVMTypeRef over[] = {to, LLVMTypeOf(x)};
  return low_intrinsic(f, is_signed ? "llvm.fptosi.sat" : "llvm.fptoui.sat", over, 2, &x, 1);
}

/* LLVM folds demote(promote(x)) back to x, which lets a signalling NaN x
 * through; Wasm wants it quiet.  So a NaN x is promoted as x + x, which the
 * hardware quiets and no fold removes. */
static LLVMValueRef emit_promote(LLVMBuilderRef b, LLVMTypeRef to, LLVMValueRef x) {
  LLVMValueRef is_nan = LLVMBuildFCmp(b, LLVMRealUNO, x, x, "");
  LLVMValueRef quiet = LLVMBuildFPExt(b, LLVMBuildFAdd(b, x, x, ""), to, "");
  return LLVMBuildSelect(b, is_nan, quiet, LLVMBuildFPExt(b, x, to, ""), "");
}

static LLVMValueRef emit_conversion(low_fn *f, const conversion *cv, LLVMValueRef x,
                                    uint32_t offset) {
  LLVMBuilderRef b = f->b;
  LLVMTypeRef to = low_valtype(f->mc, cv->result);
  switch ((cv_kind)cv->kind) {
  case CV_WRAP: return LLVMBuildTrunc(b, x, to, "");
  case CV_EXTEND_S: return LLVMBuildSExt(b, x, to, "");
  case CV_EXTEND_U: return LLVMBuildZExt(b, x, to, "");
  case CV_TRUNC_S: return emit_trapping_trunc(f, true, to, x, offset);
  case CV_TRUNC_U: return emit_trapping_trunc(f, false, to, x, offset);
  case CV_TRUNC_SAT_S: return emit_saturating_trunc(f, true, to, x);
  case CV_TRUNC_SAT_U: return emit_saturating_trunc(f, false, to, x);
  case CV_CONVERT_S: return LLVMBuildSIToFP(b, x, to, "");
  case CV_CONVERT_U: return LLVMBuildUIToFP(b, x, to, "");
  case CV_DEMOTE: return LLVMBuildFPTrunc(b, x, to, "");
  case CV_PROMOTE: return emit_promote(b, to, x);
  case CV_REINTERPRET: return LLVMBuildBitCast(b, x, to, "");
  case CV_SIGN_EXTEND: {
    LLVMValueRef low = LLVMBuildTrunc(b, x, LLVMIntTypeInContext(f->mc->ctx, cv->bits), "");
    return LLVMBuildSExt(b, low, to, "");
  }
  }
  return x;
}

bool low_emit_convert(low_fn *f, const wasm_insn *insn) {
  const conversion *cv;
  if (insn->op >= OP_I32_WRAP_I64 && insn->op <= OP_I64_EXTEND32_S)
    cv = &conversions[insn->op - OP_I32_WRAP_I64];
  else if (insn->op >= OP_I32_TRUNC_SAT_F32_S &&
           insn->op < OP_I32_TRUNC_SAT_F32_S + sizeof saturating / sizeof saturating[0])
    cv = &saturating[insn->op - OP_I32_TRUNC_SAT_F32_S];
  else
    return false;
  low_push(f, emit_conversion(f, cv, low_pop(f), insn->offset));
  return true;
}
