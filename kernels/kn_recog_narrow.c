/* kn_recog_narrow.c: i8 and i16 arithmetic in kernel expressions, and
 * integer division by constants.
 *
 * LLVM narrows sums of bytes to i16 (`zext i8 to i16`, `add nuw i16`,
 * `udiv i16 %s, 9`, `trunc to i8`); kernels compute in 32 bits.  A narrow
 * value is an i32 node holding its zero extension: operations that keep
 * that form (and/or/xor, lshr, unsigned division) apply as they are, the
 * others are masked back to the width (skipped where `nuw` promises the
 * result fits), and signed readings sign-extend first.  Every i32 result
 * then equals the zero extension of LLVM's narrow result. */
#include "kn_internal.h"

bool kr_is_narrow(LLVMValueRef v) {
  LLVMTypeRef t = LLVMTypeOf(v);
  if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind) return false;
  unsigned bits = LLVMGetIntTypeWidth(t);
  return bits == 8 || bits == 16;
}

static unsigned width(LLVMValueRef v) { return LLVMGetIntTypeWidth(LLVMTypeOf(v)); }

static int32_t constant(kr_ctx *c, uint64_t bits) {
  kn_expr e = kr_node(KN_E_CONST, KN_I32, -1, -1, -1);
  e.bits = (uint32_t)bits;
  return kr_push(c, e);
}

static int32_t binary(kr_ctx *c, kn_op op, int32_t a, int32_t b) {
  return a < 0 || b < 0 ? -1 : kr_push(c, kr_node(op, KN_I32, a, b, -1));
}

/* x (an i32 node) reduced to its low `bits` bits. */
static int32_t mask_to(kr_ctx *c, int32_t x, unsigned bits) {
  return binary(c, KN_E_AND, x, constant(c, (UINT64_C(1) << bits) - 1));
}

/* The zero-extended narrow x read as signed: shifted up and back. */
static int32_t sext_from(kr_ctx *c, int32_t x, unsigned bits) {
  int32_t sh = constant(c, 32 - bits);
  return binary(c, KN_E_ASHR, binary(c, KN_E_SHL, x, sh), sh);
}

/* An operand of a narrow operation, as its zero extension. */
static int32_t operand(kr_ctx *c, LLVMValueRef x) {
  if (kr_is_mem_load(c, x)) return kr_load(c, x, KN_I32, false);
  return kr_expr(c, x);
}

static bool nuw(LLVMValueRef v) { return LLVMGetNUW(v) != 0; }

static kn_op divide_op(LLVMOpcode op) {
  return op == LLVMUDiv ? KN_E_UDIV : op == LLVMSDiv ? KN_E_SDIV : op == LLVMURem ? KN_E_UREM : KN_E_SREM;
}

static int32_t divide_narrow(kr_ctx *c, LLVMValueRef v, LLVMOpcode op, unsigned bits) {
  LLVMValueRef d = LLVMGetOperand(v, 1);
  if (!kr_safe_divisor(v)) return kr_fail(c, "may trap: integer division"), -1;
  int32_t a = operand(c, LLVMGetOperand(v, 0));
  if (a < 0) return -1;
  if (op == LLVMUDiv || op == LLVMURem)
    return binary(c, divide_op(op), a, constant(c, LLVMConstIntGetZExtValue(d)));
  int32_t q = binary(c, divide_op(op), sext_from(c, a, bits), constant(c, (uint64_t)LLVMConstIntGetSExtValue(d)));
  return mask_to(c, q, bits);
}

/* llvm.smin/smax/umin/umax on narrow values: the chosen operand itself. */
static int32_t min_max(kr_ctx *c, LLVMValueRef call, unsigned bits) {
  kn_cmp pred;
  if (!kr_min_max(call, &pred)) return kr_fail(c, "calls a function"), -1;
  int32_t a = operand(c, LLVMGetOperand(call, 0)), b = a < 0 ? -1 : operand(c, LLVMGetOperand(call, 1));
  if (b < 0) return -1;
  bool is_signed = pred == KN_CMP_SLT || pred == KN_CMP_SGT;
  int32_t x = is_signed ? sext_from(c, a, bits) : a, y = is_signed ? sext_from(c, b, bits) : b;
  if (x < 0 || y < 0) return -1;
  kn_expr e = kr_node(KN_E_CMP, KN_I1, x, y, -1);
  e.cmp = pred;
  return kr_push(c, kr_node(KN_E_SELECT, KN_I32, kr_push(c, e), a, b));
}

int32_t kr_narrow(kr_ctx *c, LLVMValueRef v, kn_type t) {
  unsigned bits = t == KN_I8 ? 8 : 16;
  if (!LLVMIsAInstruction(v)) return kr_fail(c, "narrow integer arithmetic"), -1;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  LLVMValueRef x = LLVMGetNumOperands(v) > 0 ? LLVMGetOperand(v, 0) : NULL;
  switch (op) {
  case LLVMLoad: return kr_load(c, v, KN_I32, false);
  case LLVMZExt:
  case LLVMSExt:
    if (width(x) == 1) {
      int32_t b = kr_expr(c, x);
      b = b < 0 ? -1 : kr_push(c, kr_node(op == LLVMZExt ? KN_E_ZEXT : KN_E_SEXT, KN_I32, b, -1, -1));
      return b < 0 || op == LLVMZExt ? b : mask_to(c, b, bits);
    }
    if (op == LLVMZExt) return operand(c, x); /* i8 -> i16: the same zero extension */
    return mask_to(c, sext_from(c, operand(c, x), width(x)), bits);
  case LLVMTrunc: {
    int32_t a = kr_expr(c, x);
    if (a >= 0 && width(x) == 64) a = kr_push(c, kr_node(KN_E_TRUNC, KN_I32, a, -1, -1));
    return a < 0 ? -1 : mask_to(c, a, bits);
  }
  case LLVMAnd: case LLVMOr: case LLVMXor: case LLVMLShr: {
    kn_op k = op == LLVMAnd ? KN_E_AND : op == LLVMOr ? KN_E_OR : op == LLVMXor ? KN_E_XOR : KN_E_LSHR;
    return binary(c, k, operand(c, x), operand(c, LLVMGetOperand(v, 1)));
  }
  case LLVMAdd: case LLVMSub: case LLVMMul: case LLVMShl: {
    kn_op k = op == LLVMAdd ? KN_E_ADD : op == LLVMSub ? KN_E_SUB : op == LLVMMul ? KN_E_MUL : KN_E_SHL;
    int32_t r = binary(c, k, operand(c, x), operand(c, LLVMGetOperand(v, 1)));
    return r < 0 || nuw(v) ? r : mask_to(c, r, bits);
  }
  case LLVMAShr: {
    int32_t r = binary(c, KN_E_ASHR, sext_from(c, operand(c, x), bits), operand(c, LLVMGetOperand(v, 1)));
    return r < 0 ? -1 : mask_to(c, r, bits);
  }
  case LLVMUDiv: case LLVMSDiv: case LLVMURem: case LLVMSRem: return divide_narrow(c, v, op, bits);
  case LLVMSelect: {
    int32_t cond = kr_expr(c, x);
    int32_t a = cond < 0 ? -1 : operand(c, LLVMGetOperand(v, 1));
    int32_t b = a < 0 ? -1 : operand(c, LLVMGetOperand(v, 2));
    return b < 0 ? -1 : kr_push(c, kr_node(KN_E_SELECT, KN_I32, cond, a, b));
  }
  case LLVMPHI: return kr_fail(c, "loop-carried dependence"), -1;
  case LLVMCall: return min_max(c, v, bits);
  default: return kr_fail(c, "narrow integer arithmetic"), -1;
  }
}

/* zext/sext/uitofp/sitofp of a narrow value to a type kernels have. */
int32_t kr_widen(kr_ctx *c, LLVMValueRef cast, kn_type t) {
  LLVMOpcode op = LLVMGetInstructionOpcode(cast);
  LLVMValueRef x = LLVMGetOperand(cast, 0);
  int32_t a = operand(c, x);
  if (a < 0) return -1;
  if (op == LLVMSExt || op == LLVMSIToFP) a = sext_from(c, a, width(x));
  if (a < 0) return -1;
  switch (op) {
  case LLVMZExt:
  case LLVMSExt:
    if (t == KN_I32) return a;
    return kr_push(c, kr_node(op == LLVMZExt ? KN_E_ZEXT : KN_E_SEXT, t, a, -1, -1));
  case LLVMUIToFP: return kr_push(c, kr_node(KN_E_UITOFP, t, a, -1, -1));
  default: return kr_push(c, kr_node(KN_E_SITOFP, t, a, -1, -1));
  }
}

int32_t kr_narrow_compare(kr_ctx *c, LLVMValueRef cmp) {
  LLVMIntPredicate p = LLVMGetICmpPredicate(cmp);
  LLVMValueRef x = LLVMGetOperand(cmp, 0), y = LLVMGetOperand(cmp, 1);
  bool is_signed = p >= LLVMIntSGT && p <= LLVMIntSLE;
  int32_t a = operand(c, x), b = a < 0 ? -1 : operand(c, y);
  if (b < 0) return -1;
  if (is_signed) {
    a = sext_from(c, a, width(x));
    b = a < 0 ? -1 : sext_from(c, b, width(y));
    if (b < 0) return -1;
  }
  kn_expr e = kr_node(KN_E_CMP, KN_I1, a, b, -1);
  e.cmp = kr_icmp(p);
  return kr_push(c, e);
}

/* i32/i64 division by a constant that is not 0 (nor -1 when signed). */
int32_t kr_divide(kr_ctx *c, LLVMValueRef v, kn_type t) {
  if (!kr_safe_divisor(v)) return kr_fail(c, "may trap: integer division"), -1;
  int32_t a = kr_expr(c, LLVMGetOperand(v, 0)), b = a < 0 ? -1 : kr_expr(c, LLVMGetOperand(v, 1));
  if (b < 0) return -1;
  return kr_push(c, kr_node(divide_op(LLVMGetInstructionOpcode(v)), t, a, b, -1));
}
