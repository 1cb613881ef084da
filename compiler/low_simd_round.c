/* low_simd_round.c: f32x4/f64x2 ceil, floor, trunc and nearest for
 * portable x86-64.  SSE2 has no rounding instruction (roundps is SSE4.1),
 * so llvm.ceil and friends become a C library call per lane there; this
 * computes them with adds instead, exactly:
 *   nearest(x) = copysign((|x| + 2^p) - 2^p, x) for |x| < 2^p (p = 23 for
 *     f32, 52 for f64: the add rounds to an integer, ties to even, in the
 *     default rounding mode Wasm code always runs in), x itself when
 *     |x| >= 2^p (already an integer), x + x for NaN (quiet);
 *   floor, ceil, trunc: nearest of x (of |x| for trunc) stepped by one
 *     where it passed x, the sign copied from x (so ceil(-0.5) is -0).
 * With an explicit --cpu the intrinsics stay (roundps where it exists). */
#include "low_simd.h"

static LLVMValueRef splat_f(LLVMTypeRef ty, double v) {
  LLVMValueRef lanes[4];
  unsigned n = LLVMGetVectorSize(ty);
  for (unsigned i = 0; i < n; i++) lanes[i] = LLVMConstReal(LLVMGetElementType(ty), v);
  return LLVMConstVector(lanes, n);
}

static LLVMValueRef fabs_of(low_fn *f, LLVMValueRef x) {
  LLVMTypeRef ty = LLVMTypeOf(x);
  return low_intrinsic(f, "llvm.fabs", &ty, 1, &x, 1);
}

static LLVMValueRef copysign_of(low_fn *f, LLVMValueRef mag, LLVMValueRef sign) {
  LLVMTypeRef ty = LLVMTypeOf(mag);
  LLVMValueRef args[] = {mag, sign};
  return low_intrinsic(f, "llvm.copysign", &ty, 1, args, 2);
}

/* a >= 0, |a| < 2^p: the integer nearest a, ties to even. */
static LLVMValueRef nearest_small(low_fn *f, LLVMValueRef a, double two_p) {
  LLVMValueRef big = splat_f(LLVMTypeOf(a), two_p);
  return LLVMBuildFSub(f->b, LLVMBuildFAdd(f->b, a, big, ""), big, "");
}

/* r - 1 where r > x (floor), r + 1 where r < x (ceil). */
static LLVMValueRef step(low_fn *f, LLVMValueRef r, LLVMValueRef x, bool up) {
  LLVMValueRef passed = LLVMBuildFCmp(f->b, up ? LLVMRealOLT : LLVMRealOGT, r, x, "");
  LLVMValueRef one = splat_f(LLVMTypeOf(x), 1.0);
  LLVMValueRef moved = up ? LLVMBuildFAdd(f->b, r, one, "") : LLVMBuildFSub(f->b, r, one, "");
  return LLVMBuildSelect(f->b, passed, moved, r, "");
}

/* kind: 0 ceil, 1 floor, 2 trunc, 3 nearest (the unary_intrinsics order
 * of low_simd_float.c). */
LLVMValueRef low_simd_round_sse2(low_fn *f, LLVMValueRef x, unsigned kind) {
  LLVMTypeRef ty = LLVMTypeOf(x);
  double two_p = LLVMGetVectorSize(ty) == 4 ? 8388608.0 : 4503599627370496.0;
  LLVMValueRef a = fabs_of(f, x), r;
  switch (kind) {
  case 0: r = step(f, copysign_of(f, nearest_small(f, a, two_p), x), x, true); break;
  case 1: r = step(f, copysign_of(f, nearest_small(f, a, two_p), x), x, false); break;
  case 2: r = step(f, nearest_small(f, a, two_p), a, false); break;
  default: r = nearest_small(f, a, two_p); break;
  }
  r = copysign_of(f, r, x);
  /* |x| >= 2^p is an integer already; NaN (unordered) comes out quiet */
  LLVMValueRef small = LLVMBuildFCmp(f->b, LLVMRealOLT, a, splat_f(ty, two_p), "");
  LLVMValueRef is_nan = LLVMBuildFCmp(f->b, LLVMRealUNO, x, x, "");
  LLVMValueRef other = LLVMBuildSelect(f->b, is_nan, LLVMBuildFAdd(f->b, x, x, ""), x, "");
  return LLVMBuildSelect(f->b, small, r, other, "round");
}
