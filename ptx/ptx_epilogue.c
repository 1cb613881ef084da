/* ptx_epilogue.c: what the exact kernel does to a finished sum before its
 * compare and select and its store: kn_mm_post's operation, then
 * kn_mm_blend's scaled element added (`C = alpha*sum + beta*C`), each
 * operation on its own (never fused: the PTX keeps mul.rn and add.rn), in
 * the source's operand order.  Built from values the caller loaded, so the
 * same IR runs on the host in the unit test that checks it against C's
 * float arithmetic (test_ptx's blend_reference). */
#include "ptx_internal.h"

LLVMValueRef ptx_mm_combine(LLVMBuilderRef b, const kn_matmul *m, LLVMValueRef sum, const ptx_mm_operands *o) {
  LLVMValueRef y = sum;
  const kn_mm_post *p = &m->post;
  if (p->on) {
    LLVMValueRef f = o->post;
    LLVMValueRef x = p->first ? f : sum, z = p->first ? sum : f;
    if (p->div) y = LLVMBuildFDiv(b, sum, f, "");
    else if (p->add) y = LLVMBuildFAdd(b, x, z, "");
    else if (p->sub) y = LLVMBuildFSub(b, x, z, "");
    else y = LLVMBuildFMul(b, x, z, "");
  }
  const kn_mm_blend *bl = &m->blend;
  if (!bl->on) return y;
  LLVMValueRef t = o->elem;
  if (bl->scaled) t = bl->scale_first ? LLVMBuildFMul(b, o->factor, t, "") : LLVMBuildFMul(b, t, o->factor, "");
  LLVMValueRef both = bl->first ? LLVMBuildFAdd(b, t, y, "") : LLVMBuildFAdd(b, y, t, "");
  if (!bl->guarded) return both;
  /* the source's other arm (`beta == 0`: y alone), picked as bits */
  LLVMTypeRef ity = LLVMIntTypeInContext(LLVMGetTypeContext(LLVMTypeOf(y)),
                                         LLVMGetTypeKind(LLVMTypeOf(y)) == LLVMFloatTypeKind ? 32 : 64);
  LLVMValueRef on = bl->guard_on ? o->guard : LLVMBuildNot(b, o->guard, "");
  LLVMValueRef bits = LLVMBuildSelect(b, on, LLVMBuildBitCast(b, both, ity, ""), LLVMBuildBitCast(b, y, ity, ""), "");
  return LLVMBuildBitCast(b, bits, LLVMTypeOf(y), "");
}
