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

static LLVMValueRef splat_f(LLVMTypeRef ty, double v) {
  LLVMValueRef lanes[4];
  unsigned n = LLVMGetVectorSize(ty);
  for (unsigned i = 0; i < n; i++) lanes[i] = LLVMConstReal(LLVMGetElementType(ty), v);
  return LLVMConstVector(lanes, n);
}

/* x where pred(x, c) holds, else c: clamps (maxps/minps); a NaN x gives c. */
static LLVMValueRef keep_if(low_fn *f, LLVMRealPredicate pred, LLVMValueRef x, double c) {
  LLVMValueRef cv = splat_f(LLVMTypeOf(x), c);
  return LLVMBuildSelect(f->b, LLVMBuildFCmp(f->b, pred, x, cv, ""), x, cv, "");
}

/* cvttps2dq: truncation, 0x80000000 for NaN and out-of-range lanes.
 * (llvm.fptosi.sat has the right meaning but x86 scalarises it.) */
static LLVMValueRef cvttps2dq(low_fn *f, LLVMValueRef x) {
  return low_intrinsic(f, "llvm.x86.sse2.cvttps2dq", NULL, 0, &x, 1);
}

static LLVMValueRef mask_of(low_fn *f, LLVMRealPredicate pred, LLVMValueRef x, double c) {
  return low_simd_mask(f, LLVMBuildFCmp(f->b, pred, x, splat_f(LLVMTypeOf(x), c), ""), 32);
}

/* f32x4 -> i32x4: past 2^31 cvttps2dq's 0x80000000 becomes 0x7fffffff
 * (xor with the lane's mask), NaN lanes become 0. */
static LLVMValueRef trunc_sat_f32_s(low_fn *f, LLVMValueRef x) {
  LLVMValueRef r = LLVMBuildXor(f->b, cvttps2dq(f, x), mask_of(f, LLVMRealOGE, x, 2147483648.0), "");
  return LLVMBuildAnd(f->b, r, low_simd_mask(f, LLVMBuildFCmp(f->b, LLVMRealORD, x, x, ""), 32), "");
}

/* f32x4 -> u32x4: x clamped below at 0 (NaN too), then the part below
 * 2^31 and, from x - 2^31, the part above it, added; past 2^32 the second
 * part is 0x7fffffff and the sum 0xffffffff. */
static LLVMValueRef trunc_sat_f32_u(low_fn *f, LLVMValueRef x) {
  LLVMValueRef x0 = keep_if(f, LLVMRealOGT, x, 0.0);
  LLVMValueRef low = cvttps2dq(f, x0);
  LLVMValueRef t = LLVMBuildFSub(f->b, x0, splat_f(LLVMTypeOf(x), 2147483648.0), "");
  LLVMValueRef high = LLVMBuildXor(f->b, cvttps2dq(f, t), mask_of(f, LLVMRealOGE, t, 2147483648.0), "");
  LLVMTypeRef ty = LLVMTypeOf(high);
  LLVMValueRef args[] = {high, LLVMConstNull(ty)};
  high = low_intrinsic(f, "llvm.smax", &ty, 1, args, 2);
  return LLVMBuildAdd(f->b, low, high, "");
}

/* f64x2 -> two i32 lanes: clamped into range first (NaN to 0), where
 * every f64 value is exact, so plain conversions do (cvttpd2dq). */
static LLVMValueRef trunc_sat_f64(low_fn *f, LLVMValueRef x, bool is_signed) {
  LLVMTypeRef to = LLVMVectorType(f->mc->t_i32, 2);
  if (!is_signed) {
    x = keep_if(f, LLVMRealOLT, keep_if(f, LLVMRealOGT, x, 0.0), 4294967295.0);
    return LLVMBuildFPToUI(f->b, x, to, "");
  }
  x = LLVMBuildSelect(f->b, LLVMBuildFCmp(f->b, LLVMRealORD, x, x, ""), x, LLVMConstNull(LLVMTypeOf(x)), "");
  x = keep_if(f, LLVMRealOLT, keep_if(f, LLVMRealOGT, x, -2147483648.0), 2147483647.0);
  return LLVMBuildFPToSI(f->b, x, to, "");
}

/* NaN -> 0, out of range -> the nearest bound (llvm.fpto*i.sat's meaning). */
LLVMValueRef low_simd_trunc_sat(low_fn *f, LLVMValueRef x, bool is_signed) {
  if (LLVMGetVectorSize(LLVMTypeOf(x)) == 2) return trunc_sat_f64(f, x, is_signed);
  return is_signed ? trunc_sat_f32_s(f, x) : trunc_sat_f32_u(f, x);
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
