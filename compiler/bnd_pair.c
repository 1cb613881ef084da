/* bnd_pair.c: guard mode, after the last IR pass (bnd_late.c): a guarded
 * byte load and the plain load of the byte before it, or'ed together (an
 * interpreter's 16-bit operand), become one volatile 16-bit load. */
#include "bnd_late.h"

/* v as shl(zext(load i8), s) (s = 0: the zext alone), one use each; the
 * load in *load. */
static bool shifted_byte(LLVMValueRef v, LLVMValueRef *load, unsigned *s) {
  *s = 0;
  if (LLVMIsABinaryOperator(v) && LLVMGetInstructionOpcode(v) == LLVMShl &&
      LLVMIsAConstantInt(LLVMGetOperand(v, 1))) {
    *s = (unsigned)LLVMConstIntGetZExtValue(LLVMGetOperand(v, 1));
    if (LLVMGetNextUse(LLVMGetFirstUse(v))) return false;
    v = LLVMGetOperand(v, 0);
  }
  if (!LLVMIsAZExtInst(v) || LLVMGetNextUse(LLVMGetFirstUse(v))) return false;
  *load = LLVMGetOperand(v, 0);
  return LLVMIsALoadInst(*load) && LLVMGetTypeKind(LLVMTypeOf(*load)) == LLVMIntegerTypeKind &&
         LLVMGetIntTypeWidth(LLVMTypeOf(*load)) == 8 && LLVMGetFirstUse(*load) &&
         !LLVMGetNextUse(LLVMGetFirstUse(*load));
}

/* Guarded byte load g (volatile, its label before it) whose value is
 * or'ed, 8 bits up, with the byte just below it, read by a plain load p
 * later in the block with nothing but computations and plain loads
 * between (an interpreter's 16-bit operand `pc[1] | pc[2] << 8`, clang's
 * wasm code reading pc[2] first): both become one volatile 16-bit load
 * at g's place.  It faults exactly when g does (its last byte is g's; the
 * guard pages start at a page boundary, so a 2-byte load faults iff its
 * last byte lies past memory), under g's label; p could not fault (it is
 * plain: proved inside memory) and no store lies between, so it reads
 * the same byte.  Returns the new load, or NULL. */
LLVMValueRef late_pair_bytes(late_ctx *c, LLVMValueRef g) {
  LLVMUseRef u = LLVMGetFirstUse(g);
  if (!LLVMIsALoadInst(g) || !u || LLVMGetNextUse(u) || LLVMGetTypeKind(LLVMTypeOf(g)) != LLVMIntegerTypeKind ||
      LLVMGetIntTypeWidth(LLVMTypeOf(g)) != 8)
    return NULL;
  LLVMValueRef z = LLVMGetUser(u), top = z;
  if (!LLVMIsAZExtInst(z) || !LLVMGetFirstUse(z) || LLVMGetNextUse(LLVMGetFirstUse(z))) return NULL;
  LLVMValueRef user = LLVMGetUser(LLVMGetFirstUse(z));
  if (LLVMIsABinaryOperator(user) && LLVMGetInstructionOpcode(user) == LLVMShl) {
    top = user;
    if (!LLVMGetFirstUse(top) || LLVMGetNextUse(LLVMGetFirstUse(top))) return NULL;
    user = LLVMGetUser(LLVMGetFirstUse(top));
  }
  if (!LLVMIsABinaryOperator(user) || LLVMGetInstructionOpcode(user) != LLVMOr) return NULL;
  LLVMValueRef other = LLVMGetOperand(user, LLVMGetOperand(user, 0) == top ? 1 : 0), p, gl;
  unsigned sg, sp;
  if (!shifted_byte(top, &gl, &sg) || gl != g || !shifted_byte(other, &p, &sp) || sg != sp + 8 ||
      LLVMGetVolatile(p) || LLVMGetOrdering(p) != LLVMAtomicOrderingNotAtomic)
    return NULL;
  LLVMValueRef gi, pi;
  int64_t gk, pk;
  if (!late_split_address(c, LLVMGetOperand(g, 0), &gi, &gk) || !late_split_address(c, LLVMGetOperand(p, 0), &pi, &pk) ||
      gi != pi || pk != gk - 1)
    return NULL;
  /* p after g in its block, nothing with an effect between */
  LLVMValueRef i = LLVMGetNextInstruction(g);
  for (; i && i != p; i = LLVMGetNextInstruction(i))
    if (!late_pure(c, i) && !(LLVMIsALoadInst(i) && !LLVMGetVolatile(i))) return NULL;
  if (i != p) return NULL;
  LLVMTypeRef i8 = LLVMInt8TypeInContext(c->ctx), i16 = LLVMInt16TypeInContext(c->ctx);
  LLVMPositionBuilderBefore(c->b, g);
  LLVMValueRef minus1 = LLVMConstInt(LLVMInt64TypeInContext(c->ctx), (unsigned long long)-1, true);
  LLVMValueRef at = LLVMBuildGEP2(c->b, i8, LLVMGetOperand(g, 0), &minus1, 1, "");
  LLVMValueRef w = LLVMBuildLoad2(c->b, i16, at, "");
  LLVMSetVolatile(w, true);
  LLVMSetAlignment(w, 1);
  LLVMPositionBuilderBefore(c->b, user);
  LLVMValueRef v = LLVMBuildZExt(c->b, w, LLVMTypeOf(user), "");
  if (sp) v = LLVMBuildShl(c->b, v, LLVMConstInt(LLVMTypeOf(user), sp, false), "");
  LLVMReplaceAllUsesWith(user, v);
  LLVMInstructionEraseFromParent(user);
  late_erase_dead(c, other);
  LLVMValueRef dead = top;
  LLVMInstructionEraseFromParent(dead);
  if (top != z) LLVMInstructionEraseFromParent(z);
  LLVMInstructionEraseFromParent(g);
  return w;
}
