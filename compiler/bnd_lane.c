/* bnd_lane.c: a lane of a vector induction variable, read as a scalar
 * induction variable of its own, where a program extracts it.
 *
 * Why: clang's -msimd128 build of a strided loop (`re[i] = z[2 * i]`)
 * keeps a vector of indices <i, i+1, i+2, i+3>, doubles it and extracts
 * each lane for a scalar load or store.  The extracted lane is no affine
 * form bnd_lin.c can read, so those checks stayed in the loop and kept it
 * from being versioned (dsp: 8 checked accesses per 4 pairs, its SIMD
 * build 19 % above the plain one).  Here
 *     extractelement(shl(bitcast(phi <2 x i64>)), k)
 * becomes shl(phi_k) with phi_k a new i32 phi taking lane k of the start
 * and of the step: the loads are then at base + 8 * t.
 *
 * Why it is exact: each rule computes lane k of the same operation on the
 * same lanes (lane-wise add, sub, mul, shl wrap in the lane's width as
 * the scalar ones do; and, or, xor are bitwise, so any lane shape reads
 * them the same; a bitcast between two vector types of the same size
 * keeps every bit in place, and a lane of <N x iW> is the same bits in
 * either reading; a phi's lane is the phi of the incoming lanes).  Only
 * chains of these that reach a phi are rewritten; the vector code stays
 * for its other users and LLVM deletes what nothing uses. */
#include "bnd.h"

#include <stdint.h>

/* One rewritten (value, lane) pair. */
typedef struct {
  LLVMValueRef vec, scalar;
  unsigned lanes, bits, k;
} lane_memo;

typedef struct {
  tw_arena *arena;
  LLVMBuilderRef b;
  lane_memo *memo;
  unsigned nmemo, cap;
} lane_ctx;

static bool is_int_vector(LLVMTypeRef t) {
  return LLVMGetTypeKind(t) == LLVMVectorTypeKind && LLVMGetTypeKind(LLVMGetElementType(t)) == LLVMIntegerTypeKind;
}

static unsigned vector_bits(LLVMTypeRef t) {
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) return 0;
  LLVMTypeRef e = LLVMGetElementType(t);
  unsigned w = LLVMGetTypeKind(e) == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(e)
               : LLVMGetTypeKind(e) == LLVMFloatTypeKind  ? 32
               : LLVMGetTypeKind(e) == LLVMDoubleTypeKind ? 64
                                                          : 0;
  return w * LLVMGetVectorSize(t);
}

/* The same lane shape: lane width, lane count. */
static bool shaped(LLVMValueRef v, unsigned lanes, unsigned bits) {
  LLVMTypeRef t = LLVMTypeOf(v);
  return is_int_vector(t) && LLVMGetVectorSize(t) == lanes && LLVMGetIntTypeWidth(LLVMGetElementType(t)) == bits;
}

static bool bitwise(LLVMOpcode op) { return op == LLVMAnd || op == LLVMOr || op == LLVMXor; }

static bool lanewise(LLVMOpcode op) { return op == LLVMAdd || op == LLVMSub || op == LLVMMul || op == LLVMShl; }

/* Bits [k * bits, (k + 1) * bits) of a constant vector of integers (its
 * elements in order from the low bits, as a bitcast reads them; a
 * constant bitcast is read through, which IR folding leaves as an
 * expression between shapes). */
static bool const_lane(LLVMValueRef c, unsigned bits, unsigned k, uint64_t *out) {
  if (LLVMIsAConstantExpr(c))
    return LLVMGetConstOpcode(c) == LLVMBitCast && const_lane(LLVMGetOperand(c, 0), bits, k, out);
  LLVMTypeRef t = LLVMTypeOf(c);
  if (!is_int_vector(t) || bits > 64) return false;
  if (LLVMIsAConstantAggregateZero(c)) {
    *out = 0;
    return true;
  }
  unsigned ew = LLVMGetIntTypeWidth(LLVMGetElementType(t));
  if (ew > 64 || (bits < ew ? ew % bits : bits % ew)) return false;
  uint64_t v = 0;
  for (unsigned got = 0; got < bits;) {
    unsigned at = k * bits + got, i = at / ew, shift = at % ew;
    LLVMValueRef e = LLVMGetAggregateElement(c, i);
    if (!e || !LLVMIsAConstantInt(e)) return false;
    uint64_t x = LLVMConstIntGetZExtValue(e) >> shift;
    unsigned take = ew - shift < bits - got ? ew - shift : bits - got;
    if (take < 64) x &= (UINT64_C(1) << take) - 1;
    v |= got < 64 ? x << got : 0;
    got += take;
  }
  *out = v;
  return true;
}

/* Whether lane k of v (read as <lanes x i bits>) has a scalar form here
 * (seen: phis on the path, so that a cycle through the latch is one);
 * *iv: the chain reaches a phi. */
static bool readable(LLVMValueRef v, unsigned lanes, unsigned bits, unsigned k, bool *iv, LLVMValueRef *seen,
                     int nseen, int depth) {
  if (depth > 12 || vector_bits(LLVMTypeOf(v)) != lanes * bits) return false;
  uint64_t c;
  if (LLVMIsAConstant(v)) return const_lane(v, bits, k, &c);
  if (!LLVMIsAInstruction(v)) return false;
  if (LLVMIsABitCastInst(v)) return readable(LLVMGetOperand(v, 0), lanes, bits, k, iv, seen, nseen, depth + 1);
  if (LLVMIsAPHINode(v)) {
    for (int i = 0; i < nseen; i++)
      if (seen[i] == v) return true;
    if (nseen == 8 || LLVMCountIncoming(v) != 2) return false;
    *iv = true;
    seen[nseen] = v;
    for (unsigned i = 0; i < 2; i++)
      if (!readable(LLVMGetIncomingValue(v, i), lanes, bits, k, iv, seen, nseen + 1, depth + 1)) return false;
    return true;
  }
  if (!LLVMIsABinaryOperator(v)) return false;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  if (!bitwise(op) && !(lanewise(op) && shaped(v, lanes, bits))) return false;
  /* one operand a constant: the other carries the lane */
  LLVMValueRef a = LLVMGetOperand(v, 0), cv = LLVMGetOperand(v, 1);
  if (!LLVMIsAConstant(cv)) return false;
  return readable(a, lanes, bits, k, iv, seen, nseen, depth + 1) && readable(cv, lanes, bits, k, iv, seen, nseen, depth + 1);
}

static LLVMValueRef memo_get(const lane_ctx *x, LLVMValueRef v, unsigned lanes, unsigned bits, unsigned k) {
  for (unsigned i = 0; i < x->nmemo; i++)
    if (x->memo[i].vec == v && x->memo[i].lanes == lanes && x->memo[i].bits == bits && x->memo[i].k == k)
      return x->memo[i].scalar;
  return NULL;
}

static void memo_put(lane_ctx *x, LLVMValueRef v, unsigned lanes, unsigned bits, unsigned k, LLVMValueRef s) {
  if (x->nmemo == x->cap) {
    unsigned cap = x->cap ? x->cap * 2 : 32;
    lane_memo *m = tw_arena_alloc(x->arena, cap * sizeof *m);
    for (unsigned i = 0; i < x->nmemo; i++) m[i] = x->memo[i];
    x->memo = m;
    x->cap = cap;
  }
  x->memo[x->nmemo++] = (lane_memo){.vec = v, .scalar = s, .lanes = lanes, .bits = bits, .k = k};
}

/* Where a scalar copy of instruction v goes: after it (after the phis
 * for a phi). */
static void after(LLVMBuilderRef b, LLVMValueRef v) {
  LLVMValueRef next = LLVMGetNextInstruction(v);
  while (next && LLVMIsAPHINode(next)) next = LLVMGetNextInstruction(next);
  LLVMPositionBuilderBefore(b, next);
}

/* Lane k of v, built (readable() said it can be). */
static LLVMValueRef lane(lane_ctx *x, LLVMValueRef v, unsigned lanes, unsigned bits, unsigned k) {
  LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(v));
  LLVMTypeRef it = LLVMIntTypeInContext(ctx, bits);
  uint64_t c;
  if (LLVMIsAConstant(v) && const_lane(v, bits, k, &c)) return LLVMConstInt(it, c, false);
  if (LLVMIsABitCastInst(v)) return lane(x, LLVMGetOperand(v, 0), lanes, bits, k);
  LLVMValueRef s = memo_get(x, v, lanes, bits, k);
  if (s) return s;
  if (LLVMIsAPHINode(v)) {
    LLVMPositionBuilderBefore(x->b, LLVMGetFirstInstruction(LLVMGetInstructionParent(v)));
    s = LLVMBuildPhi(x->b, it, "lane");
    memo_put(x, v, lanes, bits, k, s);
    for (unsigned i = 0; i < LLVMCountIncoming(v); i++) {
      LLVMValueRef in = lane(x, LLVMGetIncomingValue(v, i), lanes, bits, k);
      LLVMBasicBlockRef from = LLVMGetIncomingBlock(v, i);
      LLVMAddIncoming(s, &in, &from, 1);
    }
    return s;
  }
  LLVMValueRef a = lane(x, LLVMGetOperand(v, 0), lanes, bits, k);
  LLVMValueRef y = lane(x, LLVMGetOperand(v, 1), lanes, bits, k);
  after(x->b, v);
  s = LLVMBuildBinOp(x->b, LLVMGetInstructionOpcode(v), a, y, "lane");
  memo_put(x, v, lanes, bits, k, s);
  return s;
}

/* Rewrites e = extractelement(v, k) where lane k of v reaches a phi. */
static bool rewrite(lane_ctx *x, LLVMValueRef e) {
  LLVMValueRef v = LLVMGetOperand(e, 0), idx = LLVMGetOperand(e, 1);
  LLVMTypeRef t = LLVMTypeOf(v);
  if (!is_int_vector(t) || !LLVMIsAConstantInt(idx)) return false;
  unsigned lanes = LLVMGetVectorSize(t), bits = LLVMGetIntTypeWidth(LLVMGetElementType(t));
  uint64_t k = LLVMConstIntGetZExtValue(idx);
  LLVMValueRef seen[8];
  bool iv = false;
  if (k >= lanes || !readable(v, lanes, bits, (unsigned)k, &iv, seen, 0, 0) || !iv) return false;
  LLVMValueRef s = lane(x, v, lanes, bits, (unsigned)k);
  LLVMReplaceAllUsesWith(e, s);
  LLVMInstructionEraseFromParent(e);
  return true;
}

unsigned bnd_scalar_lanes(LLVMModuleRef mod) {
  unsigned n = 0;
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(mod));
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    tw_arena arena = {0};
    lane_ctx x = {.arena = &arena, .b = b};
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef in = LLVMGetFirstInstruction(bb), next; in; in = next) {
        next = LLVMGetNextInstruction(in);
        if (LLVMIsAExtractElementInst(in)) n += rewrite(&x, in);
      }
    tw_arena_free(&arena);
  }
  LLVMDisposeBuilder(b);
  return n;
}
