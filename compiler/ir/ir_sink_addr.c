/* ir_sink_addr.c: late, on optimised IR: a byte address `P + X` (a
 * one-index i8 getelementptr) that loads and stores in other blocks use
 * is computed again beside each of those accesses, and an invariant
 * `Q + C1` in P or `X' + C2` in an i64 X is folded into the copy as
 * `(Q + X') + (C1 + C2)`, so that code generation folds the whole of it
 * into the access's addressing mode ([Q + X' + C]).  An address in its
 * accesses' own block whose pointer is a `Q + C1` computed in another
 * block (LICM reassociates `(Q + X) + C` into such a hoisted
 * "invariant.gep") is rebuilt the same way.  (Doing so also where only
 * its `X' + C2` came from another block did not pay: Lua strings +0.5 %
 * instructions, fib unchanged; an X that a bounds check also compares
 * then stays live beside X'.)
 *
 * Why: LLVM's LICM hoists such addresses (and their offsets) out of
 * every loop they are invariant in, to the loop's preheader, and code
 * generation then keeps each of them live across the loop: a linear
 * memory's address is `base + zext(p) + offset`, so one guest pointer
 * gives one native value per field reached through it.  Lua's bytecode
 * loop (luaV_execute) is entered again at each Lua call and return, and
 * runs three or four opcodes each time in a recursive program; its
 * preheader computed seven addresses from the call frame's pointer
 * (`ci + 16`, `ci + 20`, ...) and spilled each to the stack (fourteen
 * instructions per entry), where native code keeps `ci` and addresses
 * `16(%rci)`.  Computed at the access, only `ci` (X') and the memory
 * base (Q) stay live, and the access reads `16(%base,%rci)`.
 *
 * Exact: the copy computes the same address (a getelementptr without
 * inbounds is arithmetic modulo 2^64, associative whatever flags the
 * adds carried; an index narrower than 64 bits is sign-extended, which
 * does not distribute over its add, so such a one is not taken apart);
 * only where it is computed changes.  The original, and the offset and
 * pointer it read, go when nothing else uses them. */
#include <stdlib.h>

#include "ir.h"
#include "ir_pass.h"

/* v is `getelementptr i8, ptr P, i64 X`. */
static bool byte_gep(LLVMValueRef v) {
  if (!v || !LLVMIsAGetElementPtrInst(v) || LLVMGetNumOperands(v) != 2) return false;
  LLVMTypeRef t = LLVMGetGEPSourceElementType(v);
  return LLVMGetTypeKind(t) == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == 8;
}

/* The operand index at which u uses g as the address it loads or stores
 * (and only so), or -1. */
static int address_operand(LLVMValueRef u, LLVMValueRef g) {
  if (LLVMIsALoadInst(u)) return LLVMGetOperand(u, 0) == g ? 0 : -1;
  if (LLVMIsAStoreInst(u)) return LLVMGetOperand(u, 1) == g && LLVMGetOperand(u, 0) != g ? 1 : -1;
  return -1;
}

typedef struct {
  LLVMBasicBlockRef bb;
  LLVMValueRef addr;
} sunk;

/* v is `add X', C` (any flags) with C a constant int: *base = X', *c = C. */
static bool plus_const(LLVMValueRef v, LLVMValueRef *base, LLVMValueRef *c) {
  if (!v || !LLVMIsAInstruction(v) || LLVMGetInstructionOpcode(v) != LLVMAdd) return false;
  if (!LLVMIsAConstantInt(LLVMGetOperand(v, 1))) return false;
  *base = LLVMGetOperand(v, 0);
  *c = LLVMGetOperand(v, 1);
  return true;
}

/* g's address computed again before at, in the form code generation
 * folds: (Q + X') + C when g is P + X with P = Q + C1 or X = X' + C2
 * (C = C1 + C2).  Exact: a getelementptr without inbounds is arithmetic
 * modulo 2^64, which is associative, whatever flags the add carried. */
static LLVMValueRef copy_before(LLVMBuilderRef b, LLVMValueRef g, LLVMValueRef at) {
  LLVMTypeRef i8 = LLVMGetGEPSourceElementType(g);
  LLVMValueRef p = LLVMGetOperand(g, 0), x = LLVMGetOperand(g, 1), c1 = NULL, c2 = NULL, xb;
  LLVMTypeRef ix = LLVMTypeOf(x);
  /* an index narrower than a pointer is sign-extended, which does not
   * distribute over its add: only i64 indices are taken apart */
  bool wide = LLVMGetIntTypeWidth(ix) == 64;
  if (wide && byte_gep(p) && LLVMIsAConstantInt(LLVMGetOperand(p, 1)) && LLVMTypeOf(LLVMGetOperand(p, 1)) == ix) {
    c1 = LLVMGetOperand(p, 1);
    p = LLVMGetOperand(p, 0);
  }
  if (wide && plus_const(x, &xb, &c2)) x = xb;
  long long c = (c1 ? LLVMConstIntGetSExtValue(c1) : 0) + (c2 ? LLVMConstIntGetSExtValue(c2) : 0);
  LLVMPositionBuilderBefore(b, at);
  LLVMValueRef a = LLVMBuildGEP2(b, i8, p, &x, 1, "addr.sunk");
  if (!c1 && !c2) return a;
  LLVMValueRef k = LLVMConstInt(ix, (unsigned long long)c, true);
  return LLVMBuildGEP2(b, i8, a, &k, 1, "addr.sunk");
}

/* Whether g, in bb, reads a pointer `Q + C` computed in another block
 * (LICM's reassociated "invariant.gep", hoisted and kept across the
 * loop). */
static bool pointer_elsewhere(LLVMValueRef g, LLVMBasicBlockRef bb) {
  LLVMValueRef p = LLVMGetOperand(g, 0), x = LLVMGetOperand(g, 1);
  return LLVMGetIntTypeWidth(LLVMTypeOf(x)) == 64 && byte_gep(p) && LLVMIsAConstantInt(LLVMGetOperand(p, 1)) &&
         LLVMTypeOf(LLVMGetOperand(p, 1)) == LLVMTypeOf(x) && LLVMGetInstructionParent(p) != bb;
}

/* Sinks g into the blocks of its accesses elsewhere; true when it did. */
static bool sink_one(LLVMBuilderRef b, LLVMValueRef g) {
  LLVMBasicBlockRef home = LLVMGetInstructionParent(g);
  unsigned nusers = 0;
  for (LLVMUseRef u = LLVMGetFirstUse(g); u; u = LLVMGetNextUse(u)) nusers++;
  if (nusers == 0) return false;
  LLVMValueRef *users = malloc(nusers * sizeof *users);
  sunk *done = malloc(nusers * sizeof *done);
  unsigned n = 0, ndone = 0;
  for (LLVMUseRef u = LLVMGetFirstUse(g); u; u = LLVMGetNextUse(u)) users[n++] = LLVMGetUser(u);
  bool changed = false;
  for (unsigned i = 0; i < n; i++) {
    LLVMValueRef u = users[i];
    int op = LLVMIsAInstruction(u) ? address_operand(u, g) : -1;
    LLVMBasicBlockRef bb = op >= 0 ? LLVMGetInstructionParent(u) : NULL;
    if (!bb || LLVMGetOperand(u, (unsigned)op) != g) continue; /* a user listed twice */
    if (bb == home && !pointer_elsewhere(g, bb)) continue;
    LLVMValueRef addr = NULL;
    for (unsigned k = 0; k < ndone && !addr; k++)
      if (done[k].bb == bb) addr = done[k].addr;
    if (!addr) {
      /* before the block's first access through g, so that later ones in
       * the block reuse it */
      LLVMValueRef first = u;
      for (LLVMValueRef j = LLVMGetFirstInstruction(bb); j; j = LLVMGetNextInstruction(j))
        if (address_operand(j, g) >= 0) {
          first = j;
          break;
        }
      addr = copy_before(b, g, first);
      done[ndone++] = (sunk){bb, addr};
    }
    LLVMSetOperand(u, (unsigned)op, addr);
    changed = true;
  }
  free(users);
  free(done);
  if (changed && !LLVMGetFirstUse(g)) {
    /* the offset `X' + C` and pointer `Q + C` it read go too when dead */
    LLVMValueRef x = LLVMGetOperand(g, 1), p = LLVMGetOperand(g, 0);
    LLVMInstructionEraseFromParent(g);
    if (LLVMIsAInstruction(x) && !LLVMGetFirstUse(x) && LLVMGetInstructionOpcode(x) == LLVMAdd)
      LLVMInstructionEraseFromParent(x);
    if (byte_gep(p) && !LLVMGetFirstUse(p)) LLVMInstructionEraseFromParent(p);
  }
  return changed;
}

unsigned ir_sink_addresses(LLVMModuleRef mod) {
  unsigned n = 0;
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(mod));
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    if (LLVMIsDeclaration(fn)) continue;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
      LLVMValueRef i = LLVMGetFirstInstruction(bb);
      while (i) {
        LLVMValueRef next = LLVMGetNextInstruction(i);
        if (byte_gep(i) && sink_one(b, i)) n++;
        i = next;
      }
    }
  }
  LLVMDisposeBuilder(b);
  return n;
}
