/* bnd_widen.c: in the unchecked copy of a versioned nest, the i32 address
 * sums its proved checks cover become i64 sums, so that LLVM sees the
 * accesses as a base plus its induction variable.
 *
 * Why: clang's wasm32 code adds a row base and a loop offset in i32
 * (`zext(base + j)`); the add may wrap as far as LLVM knows, so each access
 * recomputes base + j in 32 bits and zero-extends it (SIMD matmul: two
 * `lea`, two `mov` and two `add` for four doubles, against one `add`).
 *
 * Why it is exact: the check of an access at zext(a + b) (its end that
 * sum, narrowed to i32 by LLVM, or zext(a + b) [+ k] in i64) is proved
 * when the form of the end (bnd_lin.c: form(a) + form(b) [+ k], a + b
 * congruent to its form and, for a zext, the form within [0, 2^32) by
 * the form's own condition) lies in [0, size] for every counter value of
 * the nest.  When
 * besides each non-constant operand's form lies in [0, 2^32) (a run-time
 * condition of the fast path, true unless the program counts on i32
 * wraparound), that operand equals its form, so
 *     zext(a + b) == form(a + b) == zext(a) + zext(b)
 * with no wrap in 64 bits either; a constant operand c reads signed in its
 * form (sext), and zext(a + c) == zext(a) + sext(c).  An operand whose
 * form starts at a negative constant (clang's counters that run up to
 * zero, -64 .. 0) is sign-extended instead, under the condition that its
 * form lies in [-2^31, 2^31): then it equals sext(a) the same way.  Where
 * the condition is false at compile time (a counter from -64 read as
 * unsigned, before that rule) widening would kill the fast copy, and the
 * check is left as it is.
 *
 * Not widened: a check whose accesses are all one-byte loads or stores and
 * whose sum has such a signed (up-to-zero) counter operand.  imgproc's sum
 * of absolute byte differences (`for i < n: s += |x[i] - y[i]|` into a
 * u64, clang's counter -n .. 0): widened, its scalar loop's addresses are
 * one i64 induction variable plus constants, and LLVM 19's loop vectoriser
 * finds vectorising it not beneficial (its remark); with the i32 sums
 * (an add and a 32-bit mask per access) it vectorises (2 x 2 lanes, the
 * select an llvm.abs by ir_lanes.c), 1.01 G instructions fewer over the
 * run.  Byte loops with counters from zero up (json's scanners) gain from
 * the widening and keep it; no other bench program has the shape. */
#include "bnd.h"

#include <stdint.h>

static bool is_add(LLVMValueRef v) {
  return LLVMIsAInstruction(v) && LLVMGetInstructionOpcode(v) == LLVMAdd;
}

LLVMValueRef bnd_widen_sum(const bnd_check *c) {
  LLVMValueRef v = c->end;
  if (!c->narrow) {
    /* zext(a + b), maybe plus a constant: the i64 form of the same end */
    if (is_add(v) && LLVMIsAConstantInt(LLVMGetOperand(v, 1))) v = LLVMGetOperand(v, 0);
    if (!LLVMIsAZExtInst(v)) return NULL;
    v = LLVMGetOperand(v, 0);
  }
  return is_add(v) && LLVMGetIntTypeWidth(LLVMTypeOf(v)) == 32 ? v : NULL;
}

int64_t bnd_end_past(const bnd_check *c, LLVMValueRef *base) {
  LLVMValueRef e = c->end;
  int64_t d = c->plus;
  if (!c->narrow && is_add(e) && LLVMIsAConstantInt(LLVMGetOperand(e, 1))) {
    d += LLVMConstIntGetSExtValue(LLVMGetOperand(e, 1));
    e = LLVMGetOperand(e, 0);
  }
  *base = e;
  return d;
}

/* Whether every access at the i32 sum `add` (through its zext to i64 and a
 * GEP) is a one-byte load or store, and there is one; other users (the
 * check's own end) do not count. */
static bool bytes_only(LLVMValueRef add) {
  unsigned n = 0;
  for (LLVMUseRef u = LLVMGetFirstUse(add); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef z = LLVMGetUser(u);
    if (!LLVMIsAZExtInst(z)) continue;
    for (LLVMUseRef g = LLVMGetFirstUse(z); g; g = LLVMGetNextUse(g)) {
      LLVMValueRef gep = LLVMGetUser(g);
      if (!LLVMIsAGetElementPtrInst(gep)) continue;
      for (LLVMUseRef a = LLVMGetFirstUse(gep); a; a = LLVMGetNextUse(a)) {
        LLVMValueRef m = LLVMGetUser(a);
        LLVMTypeRef t;
        if (LLVMIsALoadInst(m))
          t = LLVMTypeOf(m);
        else if (LLVMIsAStoreInst(m) && LLVMGetOperand(m, 1) == gep)
          t = LLVMTypeOf(LLVMGetOperand(m, 0));
        else
          return false;
        if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(t) != 8) return false;
        n++;
      }
    }
  }
  return n > 0;
}

LLVMValueRef bnd_widen_cond(bnd_nest *n, const bnd_check *c, unsigned *sext) {
  LLVMValueRef v = bnd_widen_sum(c);
  *sext = 0;
  if (!v || !ir_loop_defines(n->root, v, n->cfg)) return NULL;
  bnd_lin l[2];
  LLVMValueRef lo[2], hi[2];
  bool neg[2], konst[2];
  for (unsigned k = 0; k < 2; k++) {
    LLVMValueRef x = LLVMGetOperand(v, k);
    konst[k] = LLVMIsAConstantInt(x) != NULL;
    if (konst[k]) {
      neg[k] = LLVMConstIntGetSExtValue(x) < 0;
      continue;
    }
    if (!bnd_lin_of(n, x, &l[k])) return NULL;
    bnd_lin_range(n, &l[k], &lo[k], &hi[k]);
    /* a counter clang runs up to zero (-64 .. 0) reads signed: where the
     * lower end is a negative constant, sign-extend */
    neg[k] = LLVMIsAConstantInt(lo[k]) && LLVMConstIntGetSExtValue(lo[k]) < 0;
    /* a byte loop counting up to zero stays as it is (see the head) */
    if (neg[k] && bytes_only(v)) return NULL;
  }
  /* form(v) = form(a) + form(b), so hi(a) <= hi(v) - lo(b) <= 2^32 - d
   * where lo(b) >= 0 (b a constant >= 0, or zero-extended under its own
   * test lo(b) >= 0): with d >= 1 the check's end test in the same block
   * implies a's upper test (bnd_loop.c's drop_implied_hi, for v itself) */
  LLVMValueRef base;
  bool implied = bnd_end_past(c, &base) >= 1;
  LLVMValueRef cond = NULL;
  for (unsigned k = 0; k < 2; k++) {
    if (konst[k]) continue;
    LLVMValueRef in;
    if (!neg[k] && !neg[!k] && implied)
      in = LLVMBuildICmp(n->b, LLVMIntSGE, lo[k], LLVMConstInt(n->i128, 0, false), "");
    else
      in = bnd_lin_in32(n, lo[k], hi[k], neg[k]);
    if (l[k].cond) in = LLVMBuildAnd(n->b, in, l[k].cond, "");
    if (bnd_is_false(in)) return NULL; /* never: the fast copy would never run */
    if (neg[k]) *sext |= 1u << k;
    cond = cond ? LLVMBuildAnd(n->b, cond, in, "") : in;
  }
  return cond && !bnd_is_false(cond) ? cond : NULL;
}

/* x as i64: zext, or sext (a constant, as its form reads it, or an operand
 * whose form is signed). */
static LLVMValueRef wide(LLVMBuilderRef b, LLVMValueRef x, LLVMTypeRef i64, bool sext, bool *negative) {
  if (!LLVMIsAConstantInt(x)) {
    *negative |= sext;
    return sext ? LLVMBuildSExt(b, x, i64, "") : LLVMBuildZExt(b, x, i64, "");
  }
  int64_t c = LLVMConstIntGetSExtValue(x);
  *negative |= c < 0;
  return LLVMConstInt(i64, (unsigned long long)c, true);
}

unsigned bnd_widen_uses(LLVMBuilderRef b, LLVMValueRef add, unsigned sext) {
  LLVMTypeRef i64 = LLVMInt64TypeInContext(LLVMGetTypeContext(LLVMTypeOf(add)));
  unsigned n = 0;
  for (LLVMUseRef u = LLVMGetFirstUse(add), next; u; u = next) {
    next = LLVMGetNextUse(u);
    LLVMValueRef z = LLVMGetUser(u);
    if (!LLVMIsAZExtInst(z) || LLVMTypeOf(z) != i64) continue;
    LLVMPositionBuilderBefore(b, z);
    bool negative = false;
    LLVMValueRef x = wide(b, LLVMGetOperand(add, 0), i64, sext & 1, &negative);
    LLVMValueRef y = wide(b, LLVMGetOperand(add, 1), i64, sext & 2, &negative);
    LLVMValueRef sum = LLVMBuildAdd(b, x, y, "wide");
    if (LLVMIsAInstruction(sum)) {
      LLVMSetNSW(sum, true);
      LLVMSetNUW(sum, !negative);
    }
    LLVMReplaceAllUsesWith(z, sum);
    LLVMInstructionEraseFromParent(z);
    n++;
  }
  return n;
}
