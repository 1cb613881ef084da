/* ir_lanes.c: exact rewrites of vector integer code that clang's wasm
 * vectoriser writes in wider lanes than the values need, so that x86
 * without SSE4.1 gets short instruction sequences.  Runs last, on
 * optimised IR (driver.c).  Two rewrites, each proven lane by lane:
 *
 * - A multiply of i32 lanes whose operands are both below 2^15 gets its
 *   non-constant operands masked with 0x7fff.  The mask changes nothing
 *   (the bound is proven), and it shows LLVM's instruction selection, whose
 *   known-bits search stops six operations deep, that one pmaddwd computes
 *   the product: SSE2 has no 32-bit multiply (pmulld is SSE4.1), and its
 *   emulation is two pmuludq and four shuffles.  A 3x3 blur's nine-term
 *   sum of bytes is too deep for LLVM to see the bound itself.
 *
 * - select(a >u b, a - b, b - a) where a and b are zero-extended from
 *   narrower lanes and the comparison is made on the narrow lanes before
 *   widening and shuffling (a sum of absolute byte differences): the
 *   comparison's lanes are traced back through shuffles and extensions to
 *   the very lanes a and b come from, and the select becomes
 *   llvm.abs(a - b), which cannot overflow (a, b < 2^(w-1)).  A sign
 *   extension of a value proven below 2^(w-1) becomes a zero extension.
 *
 * The bounds are unsigned upper bounds of every lane, computed without
 * LLVM's depth limit (memoised per function; phis are unknown). */
#include <stdlib.h>
#include <string.h>

#include "ir_pass.h"

#define LANES_UNKNOWN UINT64_MAX

/* ---- Bounds: the largest unsigned value any lane can hold --------------- */

typedef struct {
  LLVMValueRef *keys;
  uint64_t *vals;
  unsigned cap, used;
} bound_map;

static unsigned slot_of(const bound_map *m, LLVMValueRef v) {
  unsigned h = (unsigned)(((uintptr_t)v >> 4) * 2654435761u) & (m->cap - 1);
  while (m->keys[h] && m->keys[h] != v) h = (h + 1) & (m->cap - 1);
  return h;
}

static bool map_grow(bound_map *m) {
  bound_map n = {calloc(m->cap * 2, sizeof *n.keys), calloc(m->cap * 2, sizeof *n.vals), m->cap * 2,
                 m->used};
  if (!n.keys || !n.vals) {
    free(n.keys);
    free(n.vals);
    return false;
  }
  for (unsigned i = 0; i < m->cap; i++)
    if (m->keys[i]) {
      unsigned s = slot_of(&n, m->keys[i]);
      n.keys[s] = m->keys[i];
      n.vals[s] = m->vals[i];
    }
  free(m->keys);
  free(m->vals);
  *m = n;
  return true;
}

static void map_clear(bound_map *m) {
  memset(m->keys, 0, m->cap * sizeof *m->keys);
  m->used = 0;
}

/* Bit width of an integer or integer-vector type's lanes (0 otherwise). */
static unsigned lane_bits(LLVMTypeRef t) {
  if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) t = LLVMGetElementType(t);
  return LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(t) : 0;
}

static uint64_t lane_max(unsigned bits) { return bits >= 64 ? UINT64_MAX : (1ull << bits) - 1; }

static uint64_t umax64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static uint64_t umin64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* The largest element of an integer constant (scalar or vector; undefined
 * lanes count as 0: whatever they hold, the result's lane is undefined). */
static uint64_t const_bound(LLVMValueRef c, unsigned bits) {
  if (LLVMIsAConstantInt(c)) return LLVMConstIntGetZExtValue(c);
  if (LLVMIsUndef(c) || LLVMIsPoison(c) || LLVMIsAConstantAggregateZero(c)) return 0;
  LLVMTypeRef t = LLVMTypeOf(c);
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) return lane_max(bits);
  uint64_t most = 0;
  for (unsigned i = 0, n = LLVMGetVectorSize(t); i < n; i++) {
    LLVMValueRef e = LLVMGetAggregateElement(c, i);
    if (!e) return lane_max(bits);
    if (LLVMIsAConstantInt(e)) most = umax64(most, LLVMConstIntGetZExtValue(e));
    else if (!LLVMIsUndef(e) && !LLVMIsPoison(e)) return lane_max(bits);
  }
  return most;
}

/* A shift or mask amount: a constant's smallest element, or -1. */
static int64_t const_min(LLVMValueRef c) {
  if (LLVMIsAConstantInt(c)) return (int64_t)LLVMConstIntGetZExtValue(c);
  if (!LLVMIsAConstant(c) || LLVMGetTypeKind(LLVMTypeOf(c)) != LLVMVectorTypeKind) return -1;
  int64_t least = -1;
  for (unsigned i = 0, n = LLVMGetVectorSize(LLVMTypeOf(c)); i < n; i++) {
    LLVMValueRef e = LLVMGetAggregateElement(c, i);
    if (!e || !LLVMIsAConstantInt(e)) return -1;
    int64_t x = (int64_t)LLVMConstIntGetZExtValue(e);
    if (least < 0 || x < least) least = x;
  }
  return least;
}

static uint64_t bound(bound_map *m, LLVMValueRef v, unsigned depth);

static uint64_t intrinsic_bound(bound_map *m, LLVMValueRef call, unsigned depth) {
  LLVMValueRef callee = LLVMGetCalledValue(call);
  unsigned id = callee && LLVMIsAFunction(callee) ? LLVMGetIntrinsicID(callee) : 0;
  if (!id || LLVMGetNumArgOperands(call) < 2) return LANES_UNKNOWN;
  size_t len;
  const char *name = LLVMGetValueName2(callee, &len);
  uint64_t a = bound(m, LLVMGetOperand(call, 0), depth), b = bound(m, LLVMGetOperand(call, 1), depth);
  if (!strncmp(name, "llvm.umin.", 10)) return umin64(a, b);
  if (!strncmp(name, "llvm.umax.", 10)) return umax64(a, b);
  /* |x - y| of x, y no larger than half the lane range: at most max(x, y). */
  LLVMValueRef s = LLVMGetOperand(call, 0);
  unsigned bits = lane_bits(LLVMTypeOf(s));
  if (strncmp(name, "llvm.abs.", 9) || !LLVMIsAInstruction(s) || LLVMGetInstructionOpcode(s) != LLVMSub)
    return LANES_UNKNOWN;
  a = bound(m, LLVMGetOperand(s, 0), depth), b = bound(m, LLVMGetOperand(s, 1), depth);
  return umax64(a, b) <= lane_max(bits - 1) ? umax64(a, b) : LANES_UNKNOWN;
}

static uint64_t compute_bound(bound_map *m, LLVMValueRef v, unsigned bits, unsigned depth) {
  if (LLVMIsAConstant(v)) return const_bound(v, bits);
  if (!LLVMIsAInstruction(v)) return LANES_UNKNOWN;
  LLVMValueRef a = LLVMGetNumOperands(v) > 0 ? LLVMGetOperand(v, 0) : NULL;
  LLVMValueRef b = LLVMGetNumOperands(v) > 1 ? LLVMGetOperand(v, 1) : NULL;
  switch (LLVMGetInstructionOpcode(v)) {
  case LLVMZExt:
    return bound(m, a, depth);
  case LLVMSExt: {
    uint64_t x = bound(m, a, depth);
    return x <= lane_max(lane_bits(LLVMTypeOf(a)) - 1) ? x : LANES_UNKNOWN;
  }
  case LLVMTrunc:
    return bound(m, a, depth);
  case LLVMAnd:
    return umin64(bound(m, a, depth), bound(m, b, depth));
  case LLVMOr:
  case LLVMXor: {
    uint64_t x = umax64(bound(m, a, depth), bound(m, b, depth));
    uint64_t p = 1;
    while (p <= x && p) p <<= 1;
    return p ? p - 1 : LANES_UNKNOWN;
  }
  case LLVMLShr: {
    int64_t s = const_min(b);
    uint64_t x = bound(m, a, depth);
    return s >= 0 && s < 64 ? x >> s : x;
  }
  case LLVMAdd: {
    uint64_t x = bound(m, a, depth), y = bound(m, b, depth);
    return x == LANES_UNKNOWN || y == LANES_UNKNOWN || x + y < x ? LANES_UNKNOWN : x + y;
  }
  case LLVMMul: {
    uint64_t x = bound(m, a, depth), y = bound(m, b, depth);
    return x != 0 && y > UINT64_MAX / x ? LANES_UNKNOWN : x * y;
  }
  case LLVMShuffleVector:
  case LLVMSelect:
    if (LLVMGetInstructionOpcode(v) == LLVMSelect) a = b, b = LLVMGetOperand(v, 2);
    return umax64(bound(m, a, depth), bound(m, b, depth));
  case LLVMInsertElement:
    return umax64(bound(m, a, depth), bound(m, b, depth));
  case LLVMCall:
    return intrinsic_bound(m, v, depth);
  default:
    return LANES_UNKNOWN;
  }
}

/* Every lane of v is at most the result (as an unsigned number of v's
 * lane width); the type's maximum when nothing better is known. */
static uint64_t bound(bound_map *m, LLVMValueRef v, unsigned depth) {
  unsigned bits = lane_bits(LLVMTypeOf(v));
  if (!bits || bits > 64) return LANES_UNKNOWN;
  uint64_t top = lane_max(bits);
  if (depth > 200) return top;
  unsigned s = slot_of(m, v);
  if (m->keys[s] == v) return m->vals[s];
  uint64_t x = umin64(compute_bound(m, v, bits, depth + 1), top);
  if ((m->used + 1) * 2 > m->cap && !map_grow(m)) return x;
  s = slot_of(m, v);
  m->keys[s] = v;
  m->vals[s] = x;
  m->used++;
  return x;
}

/* ---- Lanes: where a lane's value comes from ----------------------------- */

/* Follows lane i of v back through shuffles and zero extensions (which
 * keep a lane's unsigned value) to the lane of the value they start
 * from; false for a lane a shuffle leaves undefined. */
static bool lane_source(LLVMValueRef v, unsigned i, LLVMValueRef *base, unsigned *lane) {
  for (unsigned steps = 0; steps < 64; steps++) {
    if (!LLVMIsAInstruction(v)) break;
    LLVMOpcode op = LLVMGetInstructionOpcode(v);
    if (op == LLVMZExt && LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMVectorTypeKind) {
      v = LLVMGetOperand(v, 0);
    } else if (op == LLVMShuffleVector) {
      int k = LLVMGetMaskValue(v, i);
      if (k == LLVMGetUndefMaskElem()) return false;
      unsigned n = LLVMGetVectorSize(LLVMTypeOf(LLVMGetOperand(v, 0)));
      v = LLVMGetOperand(v, (unsigned)k < n ? 0 : 1);
      i = (unsigned)k % n;
    } else {
      break;
    }
  }
  *base = v;
  *lane = i;
  return true;
}

/* Lane i of cond is (x >u y) or (x >=u y) lane i, for x and y of the same
 * lanes as cond: cond's lanes come from an unsigned comparison whose
 * operands' lanes come from the lanes of x and y, unsigned values kept.
 * *undefined: cond's lane i is undefined (any choice will do). */
static bool lane_is_greater(LLVMValueRef cond, unsigned i, LLVMValueRef x, LLVMValueRef y,
                            bool *undefined) {
  LLVMValueRef cmp;
  unsigned k;
  *undefined = !lane_source(cond, i, &cmp, &k);
  if (*undefined) return true;
  if (!LLVMIsAICmpInst(cmp)) return false;
  LLVMValueRef p = LLVMGetOperand(cmp, 0), q = LLVMGetOperand(cmp, 1);
  switch (LLVMGetICmpPredicate(cmp)) {
  case LLVMIntUGT:
  case LLVMIntUGE:
    break;
  case LLVMIntULT:
  case LLVMIntULE: {
    LLVMValueRef t = p;
    p = q, q = t;
    break;
  }
  default:
    return false;
  }
  LLVMValueRef pb, qb, xb, yb;
  unsigned pl, ql, xl, yl;
  return lane_source(p, k, &pb, &pl) && lane_source(q, k, &qb, &ql) && lane_source(x, i, &xb, &xl) &&
         lane_source(y, i, &yb, &yl) && pb == xb && pl == xl && qb == yb && ql == yl;
}

static bool is_sub(LLVMValueRef v, LLVMValueRef *a, LLVMValueRef *b) {
  if (!LLVMIsAInstruction(v) || LLVMGetInstructionOpcode(v) != LLVMSub) return false;
  *a = LLVMGetOperand(v, 0);
  *b = LLVMGetOperand(v, 1);
  return true;
}

static LLVMValueRef call2(LLVMModuleRef mod, LLVMBuilderRef b, const char *name, LLVMValueRef x,
                          LLVMValueRef y) {
  LLVMTypeRef t = LLVMTypeOf(x);
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(mod, LLVMLookupIntrinsicID(name, strlen(name)), &t, 1);
  LLVMValueRef args[2] = {x, y};
  return LLVMBuildCall2(b, LLVMGlobalGetValueType(fn), fn, args, 2, "absdiff8");
}

/* |x - y| where lane i of x and of y are the same byte j_i of two 16-byte
 * values A and B, zero-extended: the bytes' difference taken before
 * widening, usub.sat(A, B) | usub.sat(B, A) (x86: psubusb twice, por),
 * then its bytes j_i widened.  NULL where the lanes do not trace so. */
static LLVMValueRef byte_abs_diff(LLVMModuleRef mod, LLVMBuilderRef b, LLVMValueRef x, LLVMValueRef y,
                                  LLVMTypeRef t) {
  unsigned n = LLVMGetVectorSize(t);
  LLVMValueRef a = NULL, c = NULL, idx[64];
  if (n > 64) return NULL;
  LLVMContextRef ctx = LLVMGetTypeContext(t);
  for (unsigned i = 0; i < n; i++) {
    LLVMValueRef xb, yb;
    unsigned xl, yl;
    if (!lane_source(x, i, &xb, &xl) || !lane_source(y, i, &yb, &yl) || xl != yl) return NULL;
    if (LLVMGetTypeKind(LLVMTypeOf(xb)) != LLVMVectorTypeKind || lane_bits(LLVMTypeOf(xb)) != 8 ||
        LLVMGetVectorSize(LLVMTypeOf(xb)) != 16 || LLVMTypeOf(yb) != LLVMTypeOf(xb))
      return NULL;
    if ((a && xb != a) || (c && yb != c)) return NULL;
    a = xb, c = yb;
    idx[i] = LLVMConstInt(LLVMInt32TypeInContext(ctx), xl, 0);
  }
  LLVMValueRef d = LLVMBuildOr(b, call2(mod, b, "llvm.usub.sat", a, c), call2(mod, b, "llvm.usub.sat", c, a),
                               "absdiff8");
  LLVMValueRef picked = LLVMBuildShuffleVector(b, d, LLVMGetPoison(LLVMTypeOf(d)), LLVMConstVector(idx, n), "");
  return LLVMBuildZExt(b, picked, t, "absdiff");
}

/* select(c, x - y, y - x) with c lane by lane x >u y: |x - y|. */
static bool rewrite_abs_diff(bound_map *m, LLVMModuleRef mod, LLVMBuilderRef b, LLVMValueRef sel) {
  LLVMTypeRef t = LLVMTypeOf(sel);
  unsigned bits = lane_bits(t);
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind || bits < 8 || bits > 64) return false;
  LLVMValueRef c = LLVMGetOperand(sel, 0), x, y, y2, x2;
  if (!is_sub(LLVMGetOperand(sel, 1), &x, &y) || !is_sub(LLVMGetOperand(sel, 2), &y2, &x2) ||
      x != x2 || y != y2)
    return false;
  if (LLVMGetTypeKind(LLVMTypeOf(c)) != LLVMVectorTypeKind) return false;
  uint64_t half = lane_max(bits - 1);
  if (bound(m, x, 0) > half || bound(m, y, 0) > half) return false;
  bool any = false;
  for (unsigned i = 0, n = LLVMGetVectorSize(t); i < n; i++) {
    bool undefined;
    if (!lane_is_greater(c, i, x, y, &undefined)) return false;
    any |= !undefined;
  }
  if (!any) return false;
  LLVMPositionBuilderBefore(b, sel);
  LLVMValueRef bytes = byte_abs_diff(mod, b, x, y, t);
  if (bytes) {
    LLVMReplaceAllUsesWith(sel, bytes);
    LLVMInstructionEraseFromParent(sel);
    return true;
  }
  LLVMValueRef diff = LLVMBuildNSWSub(b, x, y, "absdiff");
  unsigned id = LLVMLookupIntrinsicID("llvm.abs", 8);
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(mod, id, &t, 1);
  LLVMValueRef args[2] = {diff, LLVMConstInt(LLVMInt1TypeInContext(LLVMGetModuleContext(mod)), 1, 0)};
  LLVMValueRef abs = LLVMBuildCall2(b, LLVMGlobalGetValueType(fn), fn, args, 2, "absdiff");
  LLVMReplaceAllUsesWith(sel, abs);
  LLVMInstructionEraseFromParent(sel);
  return true;
}

/* sext of a value proven below 2^(w-1): zext nneg (x86: one unpack with
 * zero instead of a compare and an unpack). */
static bool rewrite_sext(bound_map *m, LLVMBuilderRef b, LLVMValueRef v) {
  LLVMValueRef a = LLVMGetOperand(v, 0);
  unsigned bits = lane_bits(LLVMTypeOf(a));
  if (LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMVectorTypeKind || !bits) return false;
  if (bound(m, a, 0) > lane_max(bits - 1)) return false;
  LLVMPositionBuilderBefore(b, v);
  LLVMValueRef z = LLVMBuildZExt(b, a, LLVMTypeOf(v), "");
  LLVMSetNNeg(z, 1);
  LLVMReplaceAllUsesWith(v, z);
  LLVMInstructionEraseFromParent(v);
  return true;
}

/* Operand already narrow where LLVM's selection sees it at once. */
static bool visibly_narrow(LLVMValueRef v) {
  if (LLVMIsAConstant(v)) return true;
  if (!LLVMIsAInstruction(v)) return false;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  if (op == LLVMZExt) return lane_bits(LLVMTypeOf(LLVMGetOperand(v, 0))) <= 15;
  if (op != LLVMAnd) return false;
  int64_t mask = -1;
  for (unsigned k = 0; k < 2 && mask < 0; k++)
    if (LLVMIsAConstant(LLVMGetOperand(v, k))) mask = (int64_t)const_bound(LLVMGetOperand(v, k), 64);
  return mask >= 0 && mask <= 0x7fff;
}

static bool rewrite_mul(bound_map *m, LLVMBuilderRef b, LLVMValueRef mul) {
  LLVMTypeRef t = LLVMTypeOf(mul);
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind || lane_bits(t) != 32) return false;
  LLVMValueRef ops[2] = {LLVMGetOperand(mul, 0), LLVMGetOperand(mul, 1)};
  if (bound(m, ops[0], 0) > 0x7fff || bound(m, ops[1], 0) > 0x7fff) return false;
  if (visibly_narrow(ops[0]) && visibly_narrow(ops[1])) return false;
  LLVMValueRef mask = LLVMConstInt(LLVMInt32TypeInContext(LLVMGetTypeContext(t)), 0x7fff, 0);
  unsigned n = LLVMGetVectorSize(t);
  LLVMValueRef *lanes = malloc(n * sizeof *lanes);
  if (!lanes) return false;
  for (unsigned i = 0; i < n; i++) lanes[i] = mask;
  LLVMValueRef splat = LLVMConstVector(lanes, n);
  free(lanes);
  LLVMPositionBuilderBefore(b, mul);
  LLVMValueRef masked = NULL;
  for (unsigned k = 0; k < 2; k++) {
    if (visibly_narrow(ops[k])) continue;
    if (!masked || ops[k] != ops[0]) masked = LLVMBuildAnd(b, ops[k], splat, "lo15");
    LLVMSetOperand(mul, k, masked);
  }
  return true;
}

static unsigned rewrite_function(LLVMModuleRef mod, LLVMBuilderRef b, LLVMValueRef fn, bound_map *m) {
  unsigned n = 0;
  for (int round = 0; round < 2; round++) {
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
      LLVMValueRef next;
      for (LLVMValueRef v = LLVMGetFirstInstruction(bb); v; v = next) {
        next = LLVMGetNextInstruction(v);
        LLVMOpcode op = LLVMGetInstructionOpcode(v);
        bool done = false;
        if (round == 0 && op == LLVMSelect) done = rewrite_abs_diff(m, mod, b, v);
        else if (round == 1 && op == LLVMSExt) done = rewrite_sext(m, b, v);
        else if (round == 1 && op == LLVMMul) done = rewrite_mul(m, b, v);
        /* A rewrite frees and makes instructions (whose addresses the
         * map may hold): bounds start again. */
        if (done) map_clear(m), n++;
      }
    }
  }
  map_clear(m);
  return n;
}

unsigned ir_narrow_lanes(LLVMModuleRef mod) {
  bound_map m = {calloc(1024, sizeof *m.keys), calloc(1024, sizeof *m.vals), 1024, 0};
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(mod));
  unsigned n = 0;
  if (m.keys && m.vals)
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
      if (LLVMCountBasicBlocks(fn)) n += rewrite_function(mod, b, fn, &m);
  LLVMDisposeBuilder(b);
  free(m.keys);
  free(m.vals);
  return n;
}

bool ir_touches_vector(LLVMValueRef i) {
  if (LLVMGetTypeKind(LLVMTypeOf(i)) == LLVMVectorTypeKind) return true;
  int nops = LLVMGetNumOperands(i);
  for (int k = 0; k < nops; k++) {
    LLVMValueRef op = LLVMGetOperand(i, (unsigned)k);
    if (op && LLVMGetTypeKind(LLVMTypeOf(op)) == LLVMVectorTypeKind) return true;
  }
  return false;
}
