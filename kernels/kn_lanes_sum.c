/* kn_lanes_sum.c: an integer sum clang keeps in v128 lanes over the whole
 * of its loop (no scalar remainder: a constant count the lanes divide),
 * read as the scalar sum it implements (issue 19 item 4, docs/PERFORMANCE.md
 * "Issue 19 round 16b").
 *
 * At -O2 -msimd128, `for (k = 0; k < K; k++) s += a[..k..] * b[..k..]`
 * with K a multiple of L (L = 4 lanes of i32, 2 of i64) becomes, in the
 * innermost loop l,
 *
 *   acc = phi(zero from before l, acc + term from l's latch)   (L lanes)
 *   ... after l: s = extractelement(adds and shuffles of acc's last value, e)
 *
 * with lane l of trip t computing the scalar loop's term at k = L t + l.
 * What is proved before it is read as the scalar sum (kr_lane_sum_find and
 * the product recogniser, kn_recog_matmul.c):
 *
 *   (a) acc starts at zero in every lane and only adds: after l, lane l
 *       holds the sum of its own terms, modulo 2^w;
 *   (b) s adds up every lane of acc's last value exactly once (a walk back
 *       through the adds and shuffles, counting each lane): s is the sum of
 *       all the terms of all the trips, modulo 2^w, whatever the order,
 *       since integer addition wraps and is associative and commutative;
 *   (c) each lane's term is the scalar term at its own k = L t + l: the
 *       recogniser reads lane l as copy l of L copies of an unrolled loop
 *       (c->copies = L, c->copy = l: an address's counter read per copy,
 *       kn_recog_affine.c per_copy) and requires every lane to give the
 *       same product; the loop's count is its trips times L (kr_set_trips).
 *
 * So the lanes cover k in [0, L T) once each, and the sum is the scalar
 * loop's, bit for bit.  Lanes read through shuffles, insertelements of
 * scalar loads, bitcasts between lane shapes (little-endian: byte b of a
 * lane of w bytes is at its address + b) and v128 loads (lane_element);
 * the products of i8 lanes widened to i16 lanes, multiplied there and
 * widened to i32 lanes are exact when the i16 product fits the widening
 * (kr_i16_product_fits, kr_lane_product).  A float sum in lanes is none of this (its order is not
 * the scalar loop's): kn_lanes.c refuses it. */
#include <string.h>

#include "kn_internal.h"

static bool is_op(LLVMValueRef v, LLVMOpcode op) { return LLVMIsAInstruction(v) && LLVMGetInstructionOpcode(v) == op; }

static unsigned int_width(LLVMTypeRef t) {
  if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) t = LLVMGetElementType(t);
  return LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(t) : 0;
}

/* The value of l's latch edge into phi, and from outside l. */
static bool phi_edges(const kr_ctx *c, const ir_loop *l, LLVMValueRef phi, LLVMValueRef *latch, LLVMValueRef *init) {
  if (LLVMCountIncoming(phi) != 2 || l->nlatches != 1) return false;
  LLVMBasicBlockRef lb = c->cfg->blocks[l->latches[0]].bb;
  *latch = *init = NULL;
  for (unsigned i = 0; i < 2; i++) {
    LLVMBasicBlockRef b = LLVMGetIncomingBlock(phi, i);
    if (b == lb) *latch = LLVMGetIncomingValue(phi, i);
    else if (!ir_loop_contains_block(l, b, c->cfg)) *init = LLVMGetIncomingValue(phi, i);
  }
  return *latch && *init;
}

/* The one extractelement that the uses of x (outside l) reach through
 * adds, shuffles and one-incoming phis (LCSSA), each use of that walk one
 * of these; NULL when there is another use or another extract. */
static LLVMValueRef hsum_of(const kr_ctx *c, const ir_loop *l, LLVMValueRef x, LLVMValueRef phi, int depth) {
  LLVMValueRef found = NULL;
  if (depth > 16) return NULL;
  for (LLVMUseRef u = LLVMGetFirstUse(x); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u), e = NULL;
    if (user == phi) continue;
    if (ir_loop_defines(l, user, c->cfg)) return NULL;
    if (LLVMIsAExtractElementInst(user)) e = user;
    else if (is_op(user, LLVMAdd) || is_op(user, LLVMShuffleVector) ||
             (LLVMIsAPHINode(user) && LLVMCountIncoming(user) == 1))
      e = hsum_of(c, l, user, phi, depth + 1);
    if (!e || (found && found != e)) return NULL;
    found = e;
  }
  return found;
}

bool kr_lane_sum_find(kr_ctx *c, const ir_loop *l, kr_lane_sum *s) {
  memset(s, 0, sizeof *s);
  if (l->nchildren) return false;
  LLVMValueRef phi = NULL;
  for (LLVMValueRef p = LLVMGetFirstInstruction(c->cfg->blocks[l->header].bb); p && LLVMIsAPHINode(p);
       p = LLVMGetNextInstruction(p)) {
    if (ir_iv_of(l, p)) continue;
    if (phi) return false;
    phi = p;
  }
  LLVMTypeRef t = phi ? LLVMTypeOf(phi) : NULL;
  unsigned w = t ? int_width(t) : 0;
  if (!phi || LLVMGetTypeKind(t) != LLVMVectorTypeKind || (w != 32 && w != 64) || !kr_lane_count(t)) return false;
  LLVMValueRef latch, init;
  if (!phi_edges(c, l, phi, &latch, &init) || !is_op(latch, LLVMAdd) || !ir_loop_defines(l, latch, c->cfg))
    return false;
  /* (a): zero in every lane, one add a trip */
  if (!LLVMIsAConstant(init) || !LLVMIsNull(init)) return false;
  LLVMValueRef a = LLVMGetOperand(latch, 0), b = LLVMGetOperand(latch, 1);
  if ((a == phi) == (b == phi)) return false;
  LLVMValueRef term = a == phi ? b : a;
  for (LLVMUseRef u = LLVMGetFirstUse(phi); u; u = LLVMGetNextUse(u))
    if (LLVMGetUser(u) != latch) return false;
  /* (b): every lane of the last value once into one lane */
  LLVMValueRef hsum = hsum_of(c, l, latch, phi, 0);
  if (!hsum || !LLVMIsAConstantInt(LLVMGetOperand(hsum, 1))) return false;
  /* the last value, or its LCSSA phi */
  LLVMValueRef x = latch;
  unsigned lanes = kr_lane_count(t);
  int counts[4] = {0};
  LLVMValueRef root = LLVMGetOperand(hsum, 0);
  unsigned at = (unsigned)LLVMConstIntGetZExtValue(LLVMGetOperand(hsum, 1));
  for (LLVMUseRef u = LLVMGetFirstUse(latch); u; u = LLVMGetNextUse(u))
    if (LLVMIsAPHINode(LLVMGetUser(u)) && LLVMGetUser(u) != phi) x = LLVMGetUser(u);
  if (!kr_lane_counts(root, KN_RED_ADD, at, x, counts, lanes, 0)) return false;
  for (unsigned k = 0; k < lanes; k++)
    if (counts[k] != 1) return false;
  s->loop = l;
  s->phi = phi;
  s->latch = latch;
  s->term = term;
  s->hsum = hsum;
  s->last = x;
  s->lanes = lanes;
  s->init = LLVMConstNull(LLVMGetElementType(t));
  return true;
}

/* Whether v is reached from `from` through operands defined in l (at most
 * `depth` steps). */
static bool reaches(const kr_ctx *c, const ir_loop *l, LLVMValueRef from, LLVMValueRef v, int depth) {
  if (from == v) return true;
  if (depth > 12 || !LLVMIsAInstruction(from) || LLVMIsAPHINode(from) || !ir_loop_defines(l, from, c->cfg))
    return false;
  for (int k = 0; k < LLVMGetNumOperands(from); k++)
    if (reaches(c, l, LLVMGetOperand(from, (unsigned)k), v, depth + 1)) return true;
  return false;
}

/* Whether v lies in the hsum tree, from hsum back to the last value. */
static bool in_tree(LLVMValueRef at, LLVMValueRef v, LLVMValueRef last, int depth) {
  if (at == v) return true;
  if (at == last || depth > 16 || !(is_op(at, LLVMAdd) || is_op(at, LLVMShuffleVector) || LLVMIsAExtractElementInst(at)))
    return false;
  for (int k = 0; k < LLVMGetNumOperands(at); k++)
    if (in_tree(LLVMGetOperand(at, (unsigned)k), v, last, depth + 1)) return true;
  return false;
}

bool kr_lane_sum_ok(kr_ctx *c, LLVMValueRef v) {
  int b = ir_cfg_index(c->cfg, LLVMGetInstructionParent(v));
  const ir_loop *l = kr_innermost_at(c, b);
  kr_lane_sum s;
  if (!l) return false;
  if (!l->nchildren) {
    /* in the summing loop: its accumulator, its add, its term's tree */
    if (!kr_lane_sum_find(c, l, &s)) return false;
    return v == s.phi || v == s.latch || reaches(c, l, s.term, v, 0);
  }
  /* after it: the hsum tree (the LCSSA phi included) */
  for (int k = 0; k < l->nchildren; k++)
    if (kr_lane_sum_find(c, l->children[k], &s) && (v == s.last || in_tree(s.hsum, v, s.last, 0))) return true;
  return false;
}

/* Lane `lane` of vector v as one element of linear memory: its address
 * (*addr) and its type (*mem, the lane type where it is read).  Through
 * shuffles, insertelements (a scalar load put in the lane), bitcasts (a
 * narrower lane is a byte range of the wider lane it lies in: little
 * endian) and vector loads of the innermost loop. */
static bool lane_element(kr_ctx *c, LLVMValueRef v, int lane, kr_affine *addr, kn_type *mem, int depth) {
  LLVMTypeRef vt = LLVMTypeOf(v);
  const char *narrow = "vector (SIMD) operations on narrow lanes: not recognised yet";
  if (depth > 8 || LLVMGetTypeKind(vt) != LLVMVectorTypeKind || lane < 0 || lane >= (int)LLVMGetVectorSize(vt) ||
      !kr_type_of(LLVMGetElementType(vt), mem) || *mem == KN_I1)
    return kr_fail(c, narrow);
  if (LLVMIsAShuffleVectorInst(v)) {
    int k = LLVMGetMaskValue(v, (unsigned)lane), w = (int)LLVMGetVectorSize(LLVMTypeOf(LLVMGetOperand(v, 0)));
    if (k == LLVMGetUndefMaskElem() || k < 0) return kr_fail(c, "undefined vector lane");
    return lane_element(c, LLVMGetOperand(v, k < w ? 0 : 1), k % w, addr, mem, depth + 1);
  }
  if (LLVMIsAInsertElementInst(v)) {
    LLVMValueRef idx = LLVMGetOperand(v, 2), x = LLVMGetOperand(v, 1);
    if (!LLVMIsAConstantInt(idx)) return kr_fail(c, "vector lane chosen at run time");
    if ((int)LLVMConstIntGetZExtValue(idx) != lane) return lane_element(c, LLVMGetOperand(v, 0), lane, addr, mem, depth + 1);
    if (!kr_is_mem_load(c, x) || !ir_loop_defines(c->chain[c->depth - 1], x, c->cfg))
      return kr_fail(c, "a vector lane that is not an element of memory");
    *addr = kr_address(c, LLVMGetOperand(x, 0));
    return addr->ok ? true : kr_fail(c, "non-affine address");
  }
  if (kr_is_mem_load(c, v)) {
    if (!ir_loop_defines(c->chain[c->depth - 1], v, c->cfg)) return kr_fail(c, "a vector value computed before the loop");
    *addr = kr_address(c, LLVMGetOperand(v, 0));
    if (!addr->ok) return kr_fail(c, "non-affine address");
    addr->c += (int64_t)lane * kr_type_size(*mem);
    return true;
  }
  if (LLVMIsABitCastInst(v)) {
    LLVMValueRef x = LLVMGetOperand(v, 0);
    LLVMTypeRef xt = LLVMTypeOf(x);
    kn_type xe;
    if (LLVMGetTypeKind(xt) != LLVMVectorTypeKind || !kr_type_of(LLVMGetElementType(xt), &xe))
      return kr_fail(c, "vector (SIMD) lanes moved between shapes: not recognised");
    unsigned to = kr_type_size(*mem), from = kr_type_size(xe);
    kn_type want = *mem;
    /* a lane no wider than the lane it lies in: its bytes of that element */
    if (to > from) return kr_fail(c, "vector (SIMD) lanes moved between shapes: not recognised");
    unsigned byte = (unsigned)lane * to;
    if (!lane_element(c, x, (int)(byte / from), addr, mem, depth + 1)) return false;
    addr->c += byte % from;
    *mem = want;
    return true;
  }
  return kr_fail(c, narrow);
}

/* A lane factor of the product: the i8 or i32 element lane `lane` of v
 * stands for, extended (sign when *sign) to the product's lanes. */
static bool lane_factor(kr_ctx *c, LLVMValueRef v, int lane, kr_lane_factor *f) {
  f->sign = false;
  f->from = 0;
  if (LLVMIsASExtInst(v) || LLVMIsAZExtInst(v)) {
    f->sign = LLVMIsASExtInst(v) != NULL;
    f->from = int_width(LLVMTypeOf(LLVMGetOperand(v, 0)));
    v = LLVMGetOperand(v, 0);
  }
  if (!lane_element(c, v, lane, &f->addr, &f->mem, 0)) return false;
  if (f->from && kr_type_size(f->mem) * 8 != f->from) return kr_fail(c, "vector (SIMD) lanes moved between shapes: not recognised");
  return true;
}

bool kr_lane_product(kr_ctx *c, LLVMValueRef p, int lane, kr_lane_factor *fa, kr_lane_factor *fb) {
  const char *none = "vectorised integer reduction: its lanes add other terms than products of memory";
  LLVMTypeRef pt = LLVMTypeOf(p);
  unsigned w = int_width(pt);
  if (LLVMGetTypeKind(pt) != LLVMVectorTypeKind || !w) return kr_fail(c, none);
  /* i8 lanes multiplied in narrower lanes, the product widened to p's */
  if (LLVMIsASExtInst(p) || LLVMIsAZExtInst(p)) {
    bool sign = LLVMIsASExtInst(p) != NULL;
    LLVMValueRef m = LLVMGetOperand(p, 0);
    unsigned mw = int_width(LLVMTypeOf(m));
    int at = lane;
    for (int n = 0; n < 4 && LLVMIsAShuffleVectorInst(m); n++) {
      int k = LLVMGetMaskValue(m, (unsigned)at), vw = (int)LLVMGetVectorSize(LLVMTypeOf(LLVMGetOperand(m, 0)));
      if (k == LLVMGetUndefMaskElem() || k < 0) return kr_fail(c, "undefined vector lane");
      m = LLVMGetOperand(m, k < vw ? 0 : 1);
      at = k % vw;
    }
    if (!is_op(m, LLVMMul) || !lane_factor(c, LLVMGetOperand(m, 0), at, fa) ||
        !lane_factor(c, LLVMGetOperand(m, 1), at, fb))
      return c->reason ? false : kr_fail(c, none);
    if (fa->mem != KN_I8 || fb->mem != KN_I8 || !fa->from || !fb->from || mw != 16 ||
        !kr_i16_product_fits(fa->sign, fb->sign, sign))
      return kr_fail(c, "vector (SIMD) operations on narrow lanes: a product that may not fit its lanes");
    return true;
  }
  /* products made in p's own lanes: of i32 elements, or of i8 elements
   * widened to them (exact: |x y| < 2^16) */
  if (!is_op(p, LLVMMul) || !lane_factor(c, LLVMGetOperand(p, 0), lane, fa) ||
      !lane_factor(c, LLVMGetOperand(p, 1), lane, fb))
    return c->reason ? false : kr_fail(c, none);
  if (w == 32 && fa->mem == KN_I32 && fb->mem == KN_I32 && !fa->from && !fb->from) return true;
  if (w == 32 && fa->mem == KN_I8 && fb->mem == KN_I8 && fa->from && fb->from) return true;
  return kr_fail(c, "matmul of an unsupported type");
}
