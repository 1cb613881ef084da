/* ir_mask.c: a Wasm address is a 32-bit value, and lowering widens it to
 * 64 bits for the access with zext, which InstCombine writes as
 * `and i64 x, 0xffffffff`.  Where the low bits of x are known zero (an
 * induction variable stepping by 16 from an aligned start), InstCombine
 * narrows the constant to, say, 0xfffffff0: the same value, but x86's
 * instruction selection then needs an `and` where a 32-bit operation
 * would have zero-extended for free, and loop strength reduction no longer
 * sees a plain zero extension.  In clang's vectorised loops that count up
 * to zero this costs a lea and an and per access.  This pass, last on
 * optimised IR (driver.c), puts 0xffffffff back where it proves the
 * cleared bits of x zero (the result is then identical). */
#include <stddef.h>

#include "ir_pass.h"

#define TZ_FULL 64

/* How many low bits of v are known zero (64: all).  A phi being evaluated
 * counts as all zero: each operation's bound g(t) satisfies
 * g(t) >= min(t, g(64)), so the least fixpoint is found in one pass. */
static unsigned tz_of(LLVMValueRef v, LLVMValueRef *active, unsigned nactive, unsigned depth);

static unsigned umin_u(unsigned a, unsigned b) { return a < b ? a : b; }

static unsigned tz_phi(LLVMValueRef v, LLVMValueRef *active, unsigned nactive, unsigned depth) {
  for (unsigned i = 0; i < nactive; i++)
    if (active[i] == v) return TZ_FULL;
  if (nactive >= 8) return 0;
  active[nactive] = v;
  unsigned tz = TZ_FULL;
  for (unsigned i = 0, n = LLVMCountIncoming(v); i < n && tz; i++)
    tz = umin_u(tz, tz_of(LLVMGetIncomingValue(v, i), active, nactive + 1, depth));
  return tz;
}

static unsigned tz_of(LLVMValueRef v, LLVMValueRef *active, unsigned nactive, unsigned depth) {
  if (LLVMIsAConstantInt(v)) {
    unsigned long long x = LLVMConstIntGetZExtValue(v);
    return x ? (unsigned)__builtin_ctzll(x) : TZ_FULL;
  }
  if (!LLVMIsAInstruction(v) || depth > 24) return 0;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  if (op == LLVMPHI) return tz_phi(v, active, nactive, depth + 1);
  LLVMValueRef a = LLVMGetNumOperands(v) > 0 ? LLVMGetOperand(v, 0) : NULL;
  LLVMValueRef b = LLVMGetNumOperands(v) > 1 ? LLVMGetOperand(v, 1) : NULL;
  switch (op) {
  case LLVMAdd:
  case LLVMSub:
  case LLVMOr:
  case LLVMXor:
    return umin_u(tz_of(a, active, nactive, depth + 1), tz_of(b, active, nactive, depth + 1));
  case LLVMAnd: {
    unsigned x = tz_of(a, active, nactive, depth + 1);
    unsigned y = tz_of(b, active, nactive, depth + 1);
    return x > y ? x : y;
  }
  case LLVMMul:
    return umin_u(tz_of(a, active, nactive, depth + 1) + tz_of(b, active, nactive, depth + 1), TZ_FULL);
  case LLVMShl:
    if (!LLVMIsAConstantInt(b)) return tz_of(a, active, nactive, depth + 1);
    return umin_u(tz_of(a, active, nactive, depth + 1) + (unsigned)LLVMConstIntGetZExtValue(b), TZ_FULL);
  case LLVMZExt:
  case LLVMSExt:
  case LLVMTrunc:
    return tz_of(a, active, nactive, depth + 1);
  default:
    return 0;
  }
}

/* and i64 x, M with M = 0xffffffff less some low bits that x has zero. */
static bool widen_mask(LLVMValueRef and) {
  LLVMTypeRef t = LLVMTypeOf(and);
  if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(t) != 64) return false;
  LLVMValueRef c = LLVMGetOperand(and, 1);
  if (!LLVMIsAConstantInt(c)) return false;
  unsigned long long m = LLVMConstIntGetZExtValue(c);
  if (m == 0xffffffffull || (m | 0xffffffffull) != 0xffffffffull || !m) return false;
  unsigned low = (unsigned)__builtin_ctzll(m);
  if ((m | ((1ull << low) - 1)) != 0xffffffffull) return false;
  LLVMValueRef active[8];
  if (tz_of(LLVMGetOperand(and, 0), active, 0, 0) < low) return false;
  LLVMSetOperand(and, 1, LLVMConstInt(t, 0xffffffffull, false));
  return true;
}

unsigned ir_widen_address_masks(LLVMModuleRef mod) {
  unsigned n = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef v = LLVMGetFirstInstruction(bb); v; v = LLVMGetNextInstruction(v))
        if (LLVMGetInstructionOpcode(v) == LLVMAnd) n += widen_mask(v);
  return n;
}
