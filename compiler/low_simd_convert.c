/* low_simd_convert.c: conversions between integer and float lanes, and
 * between f32 and f64 lanes. */
#include "low_simd.h"

typedef enum {
  CV_DEMOTE_ZERO = 1, CV_PROMOTE_LOW, CV_TRUNC_SAT, CV_TRUNC_SAT_ZERO, CV_CONVERT, CV_CONVERT_LOW,
} convert_kind;

typedef struct {
  uint8_t kind;  /* convert_kind, 0 in the table's holes */
  uint8_t from;  /* low_shape of the operand */
  bool is_signed;
} convert_op;

static const convert_op convert_ops[] = {
    [0x5E] = {CV_DEMOTE_ZERO, SH_F64, false},     [0x5F] = {CV_PROMOTE_LOW, SH_F32, false},
    [0xF8] = {CV_TRUNC_SAT, SH_F32, true},        {CV_TRUNC_SAT, SH_F32, false},
    {CV_CONVERT, SH_I32, true},                   {CV_CONVERT, SH_I32, false},
    {CV_TRUNC_SAT_ZERO, SH_F64, true},            {CV_TRUNC_SAT_ZERO, SH_F64, false},
    {CV_CONVERT_LOW, SH_I32, true},               {CV_CONVERT_LOW, SH_I32, false},
};

/* v's two lanes followed by two zero lanes. */
static LLVMValueRef with_zero_high(low_fn *f, LLVMValueRef v) {
  return low_simd_concat(f, v, LLVMConstNull(LLVMTypeOf(v)));
}

/* NaN -> 0, out of range -> the nearest bound: exactly llvm.fpto*i.sat. */
LLVMValueRef low_simd_trunc_sat(low_fn *f, LLVMValueRef x, bool is_signed) {
  unsigned n = LLVMGetVectorSize(LLVMTypeOf(x));
  LLVMTypeRef over[] = {LLVMVectorType(f->mc->t_i32, n), LLVMTypeOf(x)};
  return low_intrinsic(f, is_signed ? "llvm.fptosi.sat" : "llvm.fptoui.sat", over, 2, &x, 1);
}

/* LLVM folds demote(promote(x)) back to x, letting a signalling NaN through;
 * Wasm wants it quiet, so NaN lanes are promoted as x + x. */
static LLVMValueRef promote(low_fn *f, LLVMValueRef x) {
  LLVMTypeRef to = LLVMVectorType(f->mc->t_f64, LLVMGetVectorSize(LLVMTypeOf(x)));
  LLVMValueRef is_nan = LLVMBuildFCmp(f->b, LLVMRealUNO, x, x, "");
  LLVMValueRef quiet = LLVMBuildFPExt(f->b, LLVMBuildFAdd(f->b, x, x, ""), to, "");
  return LLVMBuildSelect(f->b, is_nan, quiet, LLVMBuildFPExt(f->b, x, to, ""), "");
}

static LLVMValueRef int_to_float(low_fn *f, LLVMValueRef x, LLVMTypeRef lane, bool is_signed) {
  LLVMTypeRef to = LLVMVectorType(lane, LLVMGetVectorSize(LLVMTypeOf(x)));
  return is_signed ? LLVMBuildSIToFP(f->b, x, to, "") : LLVMBuildUIToFP(f->b, x, to, "");
}

static LLVMValueRef convert(low_fn *f, const convert_op *op, LLVMValueRef x) {
  low_module_ctx *mc = f->mc;
  switch ((convert_kind)op->kind) {
  case CV_DEMOTE_ZERO:
    return with_zero_high(f, LLVMBuildFPTrunc(f->b, x, LLVMVectorType(mc->t_f32, 2), ""));
  case CV_PROMOTE_LOW: return promote(f, low_simd_half(f, x, false));
  case CV_TRUNC_SAT: return low_simd_trunc_sat(f, x, op->is_signed);
  case CV_TRUNC_SAT_ZERO: return with_zero_high(f, low_simd_trunc_sat(f, x, op->is_signed));
  case CV_CONVERT: return int_to_float(f, x, mc->t_f32, op->is_signed);
  case CV_CONVERT_LOW: return int_to_float(f, low_simd_half(f, x, false), mc->t_f64, op->is_signed);
  }
  return x;
}

bool low_simd_convert(low_fn *f, const wasm_insn *insn, uint32_t sub) {
  (void)insn;
  if (sub >= sizeof convert_ops / sizeof convert_ops[0] || !convert_ops[sub].kind) return false;
  const convert_op *op = &convert_ops[sub];
  low_simd_push(f, convert(f, op, low_simd_pop(f, (low_shape)op->from)));
  return true;
}
