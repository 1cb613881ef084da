/* kn_lanes.c: a loop of v128 operations (clang's -msimd128 vectorisation,
 * lowered to LLVM vectors) read as the scalar loop it implements: lane l of
 * every vector value as the scalar expression of one iteration.
 *
 * A vector store of L lanes of e bytes at address A, on a loop whose
 * address steps by L * e bytes a trip, is L copies of one scalar store:
 * lane l writes A + l * e, the virtual iteration L * t + l.  The map
 * recogniser (kn_recog_map.c) rebuilds each lane as it rebuilds each copy
 * of an unrolled loop and accepts the loop only when every lane gives the
 * same expression at its own virtual counter, its store one element after
 * the previous lane's: that is the proof that each lane is an independent
 * iteration of the scalar loop (lane l reads and writes only element
 * L * t + l of each array; a lane moved by a shuffle reads another
 * iteration's element, and the copies then differ).  Reads of the written
 * array at another element are refused as a loop-carried dependence, and
 * reads of other arrays must not overlap the written range, which the
 * runtime checks before a launch: then the vector loop, which loads all
 * lanes before it stores any, computes what the scalar loop computes.
 *
 * Lane-wise operations are read as their scalar operation on the lanes of
 * their operands (kn_recog_expr.c builds them); a vector load is the scalar
 * load of its lane's element; a splat (insertelement then shufflevector)
 * and any shuffle pick the lane they name.  Anything else stays on the CPU:
 * vector phis (a vectorised reduction sums each lane's own iterations, an
 * order the scalar loop does not have), horizontal reductions, bitcasts
 * between lane shapes, narrow lanes.
 *
 * Only a single loop at the top of its function is read so, which only
 * the map recogniser (it reads every store) ever sees: a vector loop
 * inside another loop comes with a scalar remainder loop beside it (the
 * pair is one scalar loop), which kn_lanes_region.c reads as one (also an
 * integer row sum in lanes and its remainder: a sum region); alone, the
 * vector loop would launch once per outer iteration. */
#include <string.h>

#include "kn_internal.h"

/* Lanes of a vector type of 32- or 64-bit lanes (f32x4, i32x4, f64x2,
 * i64x2); 0 for anything else. */
unsigned kr_lane_count(LLVMTypeRef t) {
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) return 0;
  kn_type e;
  if (!kr_type_of(LLVMGetElementType(t), &e)) return 0;
  unsigned size = kr_type_size(e), n = LLVMGetVectorSize(t);
  return (e == KN_I32 || e == KN_F32 || e == KN_I64 || e == KN_F64) && n * size == 16 ? n : 0;
}

/* Byte offset of lane `lane` of a store's value from the store's address. */
int64_t kr_lane_offset(LLVMValueRef store, int lane) {
  if (lane <= 0) return 0;
  kn_type e;
  kr_type_of(LLVMGetElementType(LLVMTypeOf(LLVMGetOperand(store, 0))), &e);
  return (int64_t)lane * kr_type_size(e);
}

int kr_lane_items(kr_ctx *c, LLVMValueRef *stores, int *lanes, int n, int max) {
  LLVMValueRef in[64];
  int m = 0;
  if (n > 64) return kr_fail(c, "stores to more than one array"), -1;
  memcpy(in, stores, (size_t)n * sizeof *in);
  for (int i = 0; i < n; i++) {
    LLVMTypeRef t = LLVMTypeOf(LLVMGetOperand(in[i], 0));
    unsigned lanes_of = LLVMGetTypeKind(t) == LLVMVectorTypeKind ? kr_lane_count(t) : 1;
    if (!lanes_of) return kr_fail(c, "vector (SIMD) store of narrow lanes: not recognised"), -1;
    for (unsigned l = 0; l < lanes_of; l++) {
      if (m == max) return kr_fail(c, "stores to more than one array"), -1;
      stores[m] = in[i];
      lanes[m++] = LLVMGetTypeKind(t) == LLVMVectorTypeKind ? (int)l : -1;
    }
  }
  return m;
}

static bool is_zero_index(LLVMValueRef v) { return LLVMIsAConstantInt(v) && LLVMConstIntGetZExtValue(v) == 0; }

static bool float_lanes(LLVMTypeRef t) {
  if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) t = LLVMGetElementType(t);
  LLVMTypeKind k = LLVMGetTypeKind(t);
  return k == LLVMFloatTypeKind || k == LLVMDoubleTypeKind;
}

/* Whether the recurrence of vector phi `phi` in loop l computes in float
 * lanes: a v128 accumulator is an <2 x i64> phi whatever its lanes hold
 * (the Wasm lowering bitcasts around every operation), so its own type
 * does not tell a float sum from an integer one.  The recurrence is what
 * both depends on the phi (its users, in the loop) and flows back into it
 * (its incoming values' operands, in the loop); a float value there makes
 * a float reduction, whatever the terms added are made of.  Past the
 * walk's limits it counts as float: the reason that claims no order. */
#define KR_WALK 128

static bool in_list(LLVMValueRef const *list, int n, LLVMValueRef v) {
  for (int k = 0; k < n; k++)
    if (list[k] == v) return true;
  return false;
}

static bool float_recurrence(const kr_ctx *c, LLVMValueRef phi, const ir_loop *l) {
  LLVMValueRef fwd[KR_WALK], stack[KR_WALK], back[KR_WALK];
  int nfwd = 0, n = 0, nback = 0;
  fwd[nfwd++] = phi;
  for (int at = 0; at < nfwd; at++)
    for (LLVMUseRef u = LLVMGetFirstUse(fwd[at]); u; u = LLVMGetNextUse(u)) {
      LLVMValueRef user = LLVMGetUser(u);
      if (!ir_loop_defines(l, user, c->cfg) || in_list(fwd, nfwd, user)) continue;
      if (nfwd == KR_WALK) return true;
      fwd[nfwd++] = user;
    }
  for (unsigned i = 0; i < LLVMCountIncoming(phi); i++) stack[n++] = LLVMGetIncomingValue(phi, i);
  while (n > 0) {
    LLVMValueRef v = stack[--n];
    if (v == phi || !in_list(fwd, nfwd, v) || in_list(back, nback, v)) continue;
    if (nback == KR_WALK) return true;
    back[nback++] = v;
    if (float_lanes(LLVMTypeOf(v))) return true;
    for (int k = 0; k < LLVMGetNumOperands(v); k++) {
      if (n == KR_WALK) return true;
      stack[n++] = LLVMGetOperand(v, (unsigned)k);
    }
  }
  return false;
}

/* A vector phi: an accumulator of lanes, each over its own iterations. */
static const char *reduction_reason(const kr_ctx *c, LLVMValueRef phi) {
  const ir_loop *l = c->chain[0];
  return float_lanes(LLVMTypeOf(phi)) || float_recurrence(c, phi, l)
             ? "vectorised float reduction (each lane sums its own iterations: not the scalar loop's order)"
             : "vectorised integer reduction (each lane sums its own iterations): not recognised yet";
}

/* Lane `lane` of constant vector v as an integer, or false. */
static bool const_lane(LLVMValueRef v, int lane, int64_t *out) {
  LLVMValueRef e = LLVMIsAConstant(v) ? LLVMGetAggregateElement(v, (unsigned)lane) : NULL;
  if (!e || !LLVMIsAConstantInt(e)) return false;
  *out = LLVMConstIntGetSExtValue(e);
  return true;
}

/* A vector counter (clang's `<0, 1, 2, 3>` induction vector of a loop
 * that uses its counter as a value, `a[i] = (3 * i + b) * 0.5f`): an i32
 * lanes phi in the header of a 1-D nest's vector loop of L lanes,
 * starting at the constant vector s0 + q * l (lane l) and stepping by
 * the splat C = q * L.  Lane l of trip t holds s0 + q (L t + l) modulo
 * 2^32: the value s0 + q j of the scalar loop's iteration j = L t + l the
 * lane stands for (kn_lanes.c's lane numbering), the same in every lane.
 * *s0 and *q: that form. */
static bool vector_counter(const kr_ctx *c, LLVMValueRef phi, int64_t *s0, int64_t *q) {
  const ir_loop *l = c->chain[0];
  LLVMTypeRef t = LLVMTypeOf(phi);
  if (!LLVMIsAPHINode(phi)) return false;
  /* in a region at the top of a function (kn_recog_top.c), read as one
   * loop around its loops: the vector loop holding the phi (its lanes
   * are then read in that loop, chain[0], by the region's proof) */
  if (c->top && l == c->top) l = kr_innermost_at(c, ir_cfg_index(c->cfg, LLVMGetInstructionParent(phi)));
  if (!l || l == c->top || c->depth != 1 || l->nchildren || LLVMCountIncoming(phi) != 2 ||
      LLVMGetInstructionParent(phi) != c->cfg->blocks[l->header].bb || kr_lane_count(t) != 4 ||
      LLVMGetTypeKind(LLVMGetElementType(t)) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(LLVMGetElementType(t)) != 32)
    return false;
  int lanes = 4, in = -1;
  for (unsigned k = 0; k < 2; k++)
    if (!ir_loop_contains_block(l, LLVMGetIncomingBlock(phi, k), c->cfg)) in = (int)k;
  if (in < 0) return false;
  LLVMValueRef start = LLVMGetIncomingValue(phi, (unsigned)in), next = LLVMGetIncomingValue(phi, (unsigned)(1 - in));
  if (!LLVMIsABinaryOperator(next) || LLVMGetInstructionOpcode(next) != LLVMAdd ||
      LLVMGetOperand(next, 0) != phi)
    return false;
  int64_t step, first, x;
  LLVMValueRef by = LLVMGetOperand(next, 1);
  if (!const_lane(by, 0, &step) || !const_lane(start, 0, &first) || step % lanes) return false;
  for (int k = 1; k < lanes; k++)
    if (!const_lane(by, k, &x) || x != step || !const_lane(start, k, &x) || x != first + step / lanes * k)
      return false;
  *s0 = first;
  *q = step / lanes;
  return true;
}

/* Whether v is a vector counter's phi or its step (the add into it). */
static bool counter_part(const kr_ctx *c, LLVMValueRef v) {
  int64_t s0, q;
  if (LLVMIsAPHINode(v)) return vector_counter(c, v, &s0, &q);
  return LLVMIsABinaryOperator(v) && LLVMGetInstructionOpcode(v) == LLVMAdd &&
         LLVMIsAPHINode(LLVMGetOperand(v, 0)) && vector_counter(c, LLVMGetOperand(v, 0), &s0, &q);
}

/* A vector phi anywhere in the nest, or NULL: the reason a nest holding a
 * vectorised reduction gives, before any other about its vector code. */
static LLVMValueRef vector_phi(kr_ctx *c) {
  const ir_loop *l = c->chain[0];
  for (int b = 0; b < l->nbody; b++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(c->cfg->blocks[l->body[b]].bb); i && LLVMIsAPHINode(i);
         i = LLVMGetNextInstruction(i))
      if (LLVMGetTypeKind(LLVMTypeOf(i)) == LLVMVectorTypeKind && !kr_region_sum_ok(c, i) && !counter_part(c, i) &&
          !kr_lane_sum_ok(c, i))
        return i;
  return NULL;
}

/* Whether v is a bitcast between vectors of the same lanes (count and
 * size) of insertelements whose lane `lane` (every inserted lane when -1)
 * is a scalar load of linear memory: that lane read in v's lane type. */
static LLVMValueRef inserted_load(const kr_ctx *c, LLVMValueRef v, int lane) {
  LLVMTypeRef to = LLVMTypeOf(v), from = LLVMTypeOf(LLVMGetOperand(v, 0));
  if (LLVMGetTypeKind(from) != LLVMVectorTypeKind || LLVMGetVectorSize(from) != LLVMGetVectorSize(to) ||
      !kr_lane_count(to) || LLVMABISizeOfType(c->td, LLVMGetElementType(from)) != LLVMABISizeOfType(c->td, LLVMGetElementType(to)))
    return NULL;
  LLVMValueRef found = NULL;
  for (LLVMValueRef x = LLVMGetOperand(v, 0); LLVMIsAInsertElementInst(x); x = LLVMGetOperand(x, 0)) {
    LLVMValueRef idx = LLVMGetOperand(x, 2), ld = LLVMGetOperand(x, 1);
    if (!LLVMIsAConstantInt(idx) || !kr_is_mem_load(c, ld)) return NULL;
    if (lane < 0 || (int)LLVMConstIntGetZExtValue(idx) == lane) return found ? found : (found = ld);
  }
  return found;
}

/* Whether i is a load of two i32 or f32 lanes (8 bytes:
 * v128.load32x2_s/u, v128.load64_zero promoted) whose every use extends it
 * to i64x2 or f64x2: lane l of the extension is the 4-byte element at
 * the load's address + 4 l, extended (lane_load reads the
 * element type's size per lane, whatever the vector's width). */
static bool half_load_extended(const kr_ctx *c, LLVMValueRef i) {
  LLVMTypeRef t = LLVMTypeOf(i);
  LLVMTypeRef e = LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMGetElementType(t) : NULL;
  bool is_int = e && LLVMGetTypeKind(e) == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(e) == 32;
  bool is_float = e && LLVMGetTypeKind(e) == LLVMFloatTypeKind;
  if (!kr_is_mem_load(c, i) || LLVMGetVectorSize(t) != 2 || !(is_int || is_float) || !LLVMGetFirstUse(i)) return false;
  for (LLVMUseRef u = LLVMGetFirstUse(i); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef x = LLVMGetUser(u);
    bool ext = is_int ? LLVMIsASExtInst(x) || LLVMIsAZExtInst(x) : LLVMIsAFPExtInst(x) != NULL;
    if (!ext || !kr_lane_count(LLVMTypeOf(x))) return false;
  }
  return true;
}

bool kr_lanes_allowed(kr_ctx *c, LLVMValueRef i) {
  /* an integer sum in lanes with its scalar remainder, proved one sum
   * (kn_lanes_region.c): its accumulator and the lanes added up after it */
  if (kr_region_sum_ok(c, i)) return true;
  /* an integer sum in lanes over its whole loop (kn_lanes_sum.c): its
   * accumulator, term and lanes added up, read by the product recogniser */
  if (kr_lane_sum_ok(c, i)) return true;
  LLVMValueRef phi = vector_phi(c);
  if (phi) return kr_fail(c, reduction_reason(c, phi));
  /* in a vector loop read with its remainder as one scalar loop
   * (kn_lanes_region.c): lane by lane, as a loop at the top */
  bool region = c->chain[0]->nchildren && kr_region_vector_ok(c, i);
  if (c->reason) return false; /* a region whose shape is not the one proved */
  if (c->chain[0]->parent && !region)
    return kr_fail(c, "vector (SIMD) loop inside another loop: its scalar remainder loop beside it makes "
                      "the pair one scalar loop, not recognised yet");
  /* one loop: only the map recogniser, which reads every store, sees it */
  if (c->chain[0]->nchildren && !region)
    return kr_fail(c, "vector (SIMD) operations in a loop nest: not recognised yet");
  /* i8 lanes widened and multiplied in i16 lanes: read lane by lane
   * (narrow_product) where the i32 lanes they make are read */
  if (region && kr_narrow_lane_link(i)) return true;
  LLVMTypeRef t = LLVMTypeOf(i);
  /* one lane taken out (a scalar call per lane): read as that lane, which
   * must be the one being read (kr_lane_extract) */
  if (LLVMIsAExtractElementInst(i) && LLVMIsAConstantInt(LLVMGetOperand(i, 1)) &&
      kr_lane_count(LLVMTypeOf(LLVMGetOperand(i, 0))))
    return true;
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind && !LLVMIsAStoreInst(i) && !LLVMIsABitCastInst(i))
    return kr_fail(c, "vector (SIMD) lanes combined into one value: not recognised");
  if (LLVMGetTypeKind(t) == LLVMVectorTypeKind && !kr_lane_count(t) &&
      !(LLVMIsAFCmpInst(i) || LLVMIsAICmpInst(i)) && !half_load_extended(c, i))
    return kr_fail(c, "vector (SIMD) operations on narrow lanes: not recognised yet");
  /* a v128 load read in another lane shape is a load of that shape */
  if (LLVMIsABitCastInst(i) && kr_is_mem_load(c, LLVMGetOperand(i, 0))) return true;
  /* a scalar load put in a lane and read in another type of that size
   * (v128.load32_splat of an f32: an i32 load, bitcast, splat) */
  if (LLVMIsABitCastInst(i) && inserted_load(c, i, -1)) return true;
  if (LLVMIsAExtractElementInst(i) || LLVMIsABitCastInst(i))
    return kr_fail(c, "vector (SIMD) lanes moved between shapes or out of the vector: not recognised");
  return true;
}

/* The scalar load of lane `lane` of vector load ld read as vector type vt
 * (ld's own, or another shape of the same 16 bytes), extended to type. */
static int32_t lane_load(kr_ctx *c, LLVMValueRef ld, LLVMTypeRef vt, int lane, kn_type type, bool sign) {
  kn_type mem;
  if (!kr_type_of(LLVMGetElementType(vt), &mem) || mem == KN_I1)
    return kr_fail(c, "loads an unsupported type"), -1;
  kr_affine a = kr_address(c, LLVMGetOperand(ld, 0));
  if (!a.ok) return kr_fail(c, "non-affine address"), -1;
  a.c += (int64_t)lane * kr_type_size(mem);
  kn_expr e = kr_node(KN_E_LOAD, type, -1, -1, -1);
  e.load.mem = mem;
  e.load.sign = sign;
  int d0 = c->depth >= 2 ? c->depth - 2 : 0, d1 = c->depth >= 2 ? c->depth - 1 : -1;
  if (!kr_to_addr(c, &a, d0, d1, 1, &e.load.addr)) return kr_fail(c, "address uses an outer loop counter"), -1;
  if (!kr_add_range(c, &a, kr_type_size(mem), false)) return -1;
  return kr_push(c, e);
}

/* Element `lane` of a constant vector, as a scalar constant. */
static int32_t lane_constant(kr_ctx *c, LLVMValueRef v, int lane) {
  LLVMValueRef e = LLVMGetAggregateElement(v, (unsigned)lane);
  if (!e || LLVMIsUndef(e) || LLVMIsPoison(e)) return kr_fail(c, "undefined vector lane"), -1;
  return kr_expr(c, e);
}

/* Narrow lanes (i8 widened to i16x8 and multiplied there, then widened to
 * i32x4: clang's i8 products at -msimd128).  The i8 value in lane `lane`
 * of vector x, as its scalar extended to i32: a byte of a v128 load, a
 * byte of a 4-byte load put in lane 0 and read as i8x16
 * (`v128.load32_zero`), a splat of a scalar i8 load, through shuffles. */
static int32_t byte_lane(kr_ctx *c, LLVMValueRef x, int lane, bool sign, int depth) {
  LLVMTypeRef vt = LLVMTypeOf(x);
  if (depth > 8 || LLVMGetTypeKind(vt) != LLVMVectorTypeKind || LLVMGetIntTypeWidth(LLVMGetElementType(vt)) != 8 ||
      lane < 0 || lane >= (int)LLVMGetVectorSize(vt))
    return kr_fail(c, "vector (SIMD) operations on narrow lanes: not recognised yet"), -1;
  if (LLVMIsAShuffleVectorInst(x)) {
    int k = LLVMGetMaskValue(x, (unsigned)lane), w = (int)LLVMGetVectorSize(LLVMTypeOf(LLVMGetOperand(x, 0)));
    if (k == LLVMGetUndefMaskElem() || k < 0) return kr_fail(c, "undefined vector lane"), -1;
    return byte_lane(c, LLVMGetOperand(x, k < w ? 0 : 1), k % w, sign, depth + 1);
  }
  if (LLVMIsAInsertElementInst(x)) {
    LLVMValueRef idx = LLVMGetOperand(x, 2), s = LLVMGetOperand(x, 1);
    if (!LLVMIsAConstantInt(idx)) return kr_fail(c, "vector lane chosen at run time"), -1;
    if ((int)LLVMConstIntGetZExtValue(idx) != lane) return byte_lane(c, LLVMGetOperand(x, 0), lane, sign, depth + 1);
    if (!kr_is_mem_load(c, s)) return kr_fail(c, "vector (SIMD) operations on narrow lanes: not recognised yet"), -1;
    return kr_load(c, s, KN_I32, sign);
  }
  if (kr_is_mem_load(c, x)) {
    if (!ir_loop_defines(c->chain[c->depth - 1], x, c->cfg))
      return kr_fail(c, "a vector value computed before the loop"), -1;
    return lane_load(c, x, vt, lane, KN_I32, sign);
  }
  /* the bytes of a scalar load in lane 0 of a wider vector */
  if (LLVMIsABitCastInst(x)) {
    LLVMValueRef ins = LLVMGetOperand(x, 0);
    LLVMTypeRef it = LLVMTypeOf(ins);
    if (!LLVMIsAInsertElementInst(ins) || LLVMGetTypeKind(it) != LLVMVectorTypeKind ||
        !is_zero_index(LLVMGetOperand(ins, 2)) || !kr_is_mem_load(c, LLVMGetOperand(ins, 1)))
      return kr_fail(c, "vector (SIMD) lanes moved between shapes: not recognised"), -1;
    LLVMValueRef ld = LLVMGetOperand(ins, 1);
    int64_t bytes = (int64_t)LLVMABISizeOfType(c->td, LLVMTypeOf(ld));
    if (lane >= bytes) return kr_fail(c, "undefined vector lane"), -1;
    if (!ir_loop_defines(c->chain[c->depth - 1], ld, c->cfg))
      return kr_fail(c, "a vector value computed before the loop"), -1;
    kr_affine a = kr_address(c, LLVMGetOperand(ld, 0));
    if (!a.ok) return kr_fail(c, "non-affine address"), -1;
    a.c += lane;
    return kr_load_at(c, &a, KN_I8, KN_I32, sign);
  }
  return kr_fail(c, "vector (SIMD) operations on narrow lanes: not recognised yet"), -1;
}

/* x's lane *lane through up to four shuffles: the vector it comes from
 * (its lane in *lane), or NULL for an undefined lane. */
static LLVMValueRef lane_source(LLVMValueRef x, int *lane) {
  for (int n = 0; n < 4 && LLVMIsAShuffleVectorInst(x); n++) {
    int k = LLVMGetMaskValue(x, (unsigned)*lane), w = (int)LLVMGetVectorSize(LLVMTypeOf(LLVMGetOperand(x, 0)));
    if (k == LLVMGetUndefMaskElem() || k < 0) return NULL;
    x = LLVMGetOperand(x, k < w ? 0 : 1);
    *lane = k % w;
  }
  return x;
}

/* Whether the product of two i8 values, each widened by sign (sa, sb) or
 * by zero, fits an i16 lane read back by sign (sign) or by zero: s8 * s8
 * lies in [-16256, 16384] and u8 * s8 in [-32640, 32385] (signed i16),
 * u8 * u8 in [0, 65025] (unsigned i16). */
bool kr_i16_product_fits(bool sa, bool sb, bool sign) { return sign ? sa || sb : !sa && !sb; }

/* v = sext or zext (i16 lanes -> i32 lanes) of (shuffles of) `mul <N x
 * i16>` of two sext or zext (i8 lanes -> i16 lanes): each i16 product of
 * two i8 values is exact where it fits the i16 lane as v reads it back
 * (kr_i16_product_fits), so its extension is the i32 product of the i8
 * values widened to i32 each its own way, the scalar loop's `mul i32`
 * (ext a, ext b).  -2 when v has not that shape. */
static int32_t narrow_product(kr_ctx *c, LLVMValueRef v, int lane) {
  LLVMValueRef x = LLVMGetOperand(v, 0);
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  if ((op != LLVMSExt && op != LLVMZExt) || LLVMGetTypeKind(LLVMTypeOf(x)) != LLVMVectorTypeKind ||
      LLVMGetIntTypeWidth(LLVMGetElementType(LLVMTypeOf(x))) != 16 ||
      LLVMGetIntTypeWidth(LLVMGetElementType(LLVMTypeOf(v))) != 32)
    return -2;
  if (!(x = lane_source(x, &lane))) return -2;
  if (!LLVMIsAInstruction(x) || LLVMGetInstructionOpcode(x) != LLVMMul) return -2;
  LLVMValueRef e[2];
  bool sign[2];
  for (unsigned k = 0; k < 2; k++) {
    e[k] = LLVMGetOperand(x, k);
    LLVMOpcode ek = LLVMIsAInstruction(e[k]) ? LLVMGetInstructionOpcode(e[k]) : 0;
    if ((ek != LLVMSExt && ek != LLVMZExt) ||
        LLVMGetIntTypeWidth(LLVMGetElementType(LLVMTypeOf(LLVMGetOperand(e[k], 0)))) != 8)
      return -2;
    sign[k] = ek == LLVMSExt;
  }
  if (!kr_i16_product_fits(sign[0], sign[1], op == LLVMSExt)) return -2;
  int32_t f[2];
  for (unsigned k = 0; k < 2; k++)
    if ((f[k] = byte_lane(c, LLVMGetOperand(e[k], 0), lane, sign[k], 0)) < 0) return -1;
  return kr_push(c, kr_node(KN_E_MUL, KN_I32, f[0], f[1], -1));
}

/* v = sext or zext (i16 lanes -> i32 lanes) of (shuffles of) a sext or
 * zext of i8 lanes: clang's product of an i32 splat and bytes widened
 * twice (`x * b[j]`, x already an i32).  Lane `lane` is that byte
 * extended to i32 once: sext of sext is a sext, an extension of a zext a
 * zext; zext of sext (not one extension) is refused.  -2 when v has not
 * that shape. */
static int32_t widened_bytes(kr_ctx *c, LLVMValueRef v, int lane) {
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  LLVMValueRef x = LLVMGetOperand(v, 0);
  if (LLVMGetTypeKind(LLVMTypeOf(x)) != LLVMVectorTypeKind ||
      LLVMGetIntTypeWidth(LLVMGetElementType(LLVMTypeOf(x))) != 16 ||
      LLVMGetIntTypeWidth(LLVMGetElementType(LLVMTypeOf(v))) != 32)
    return -2;
  if (!(x = lane_source(x, &lane))) return -2;
  if (!LLVMIsAInstruction(x)) return -2;
  LLVMOpcode in = LLVMGetInstructionOpcode(x);
  if ((in != LLVMSExt && in != LLVMZExt) ||
      LLVMGetIntTypeWidth(LLVMGetElementType(LLVMTypeOf(LLVMGetOperand(x, 0)))) != 8)
    return -2;
  if (op == LLVMZExt && in == LLVMSExt) return -2;
  return byte_lane(c, LLVMGetOperand(x, 0), lane, in == LLVMSExt, 0);
}

bool kr_narrow_lane_link(LLVMValueRef i) {
  LLVMTypeRef t = LLVMTypeOf(i);
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind || LLVMGetTypeKind(LLVMGetElementType(t)) != LLVMIntegerTypeKind)
    return false;
  unsigned w = LLVMGetIntTypeWidth(LLVMGetElementType(t));
  switch (LLVMGetInstructionOpcode(i)) {
  case LLVMSExt:
  case LLVMZExt:
  case LLVMShuffleVector:
  case LLVMInsertElement:
    return w == 8 || w == 16;
  case LLVMMul:
    return w == 16;
  case LLVMBitCast:
    return w == 8;
  default:
    return false;
  }
}

/* Lane `lane` of a vector counter phi of n lanes, read as copy `lane` of
 * n (c->copies, c->copy): s0 + q j at the lane's own iteration j (the
 * kernel's index 0); false for any other phi. */
static bool counter_form(const kr_ctx *c, LLVMValueRef phi, int lane, int n, kr_affine *form) {
  int64_t s0, q;
  if (!vector_counter(c, phi, &s0, &q) || c->copies != n || c->copy != lane) return false;
  *form = (kr_affine){.ok = true, .c = s0, .n = 1};
  form->t[0] = (kr_term){.coeff = q, .dim = 0, .param = NULL};
  return true;
}

/* Lane `lane` of i32 arithmetic on a vector counter (`<0, 1, 2, 3> * 3 +
 * splat(from)`: adds, subtractions, multiplications and shifts by
 * constant lanes, splats of scalars) as one affine form over the lane's
 * own iteration j, the form a scalar loop's counter arithmetic takes
 * (kn_recog_expr.c counts), so that both read alike.  *counter: a vector
 * counter was met (else the form is of no use). */
static bool lane_form(kr_ctx *c, LLVMValueRef v, int lane, kr_affine *out, bool *counter, int depth) {
  int64_t k;
  LLVMTypeRef t = LLVMTypeOf(v);
  if (depth > 8 || LLVMGetTypeKind(t) != LLVMVectorTypeKind) return false;
  int n = (int)LLVMGetVectorSize(t);
  if (lane < 0 || lane >= n) return false;
  if (LLVMIsAConstant(v)) {
    if (!const_lane(v, lane, &k)) return false;
    *out = (kr_affine){.ok = true, .c = (int32_t)k};
    return true;
  }
  if (!LLVMIsAInstruction(v)) return false;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  switch (op) {
  case LLVMPHI:
    return *counter = counter_form(c, v, lane, n, out);
  case LLVMShuffleVector: {
    int m = LLVMGetMaskValue(v, (unsigned)lane);
    LLVMValueRef a = LLVMGetOperand(v, 0);
    int w = (int)LLVMGetVectorSize(LLVMTypeOf(a));
    if (m == LLVMGetUndefMaskElem()) return false;
    return lane_form(c, LLVMGetOperand(v, m < w ? 0 : 1), m % w, out, counter, depth + 1);
  }
  case LLVMInsertElement: {
    LLVMValueRef idx = LLVMGetOperand(v, 2);
    if (!LLVMIsAConstantInt(idx)) return false;
    if ((int)LLVMConstIntGetZExtValue(idx) != lane) return lane_form(c, LLVMGetOperand(v, 0), lane, out, counter, depth + 1);
    /* a scalar computed before the loop (a splat's) */
    LLVMValueRef x = LLVMGetOperand(v, 1);
    if (ir_loop_defines(kr_nest(c), x, c->cfg)) return false;
    *out = kr_int(c, x);
    return out->ok;
  }
  case LLVMAdd:
  case LLVMSub: {
    kr_affine y;
    if (!lane_form(c, LLVMGetOperand(v, 0), lane, out, counter, depth + 1) ||
        !lane_form(c, LLVMGetOperand(v, 1), lane, &y, counter, depth + 1))
      return false;
    kr_affine_add(out, &y, op == LLVMAdd ? 1 : -1);
    return out->ok;
  }
  case LLVMMul:
  case LLVMShl:
    for (int o = 0; o < (op == LLVMMul ? 2 : 1); o++) {
      LLVMValueRef f = LLVMGetOperand(v, 1 - (unsigned)o);
      kr_affine x;
      if (!LLVMIsAConstant(f) || !const_lane(f, lane, &k) || (op == LLVMShl && (k < 0 || k > 30)) ||
          !lane_form(c, LLVMGetOperand(v, (unsigned)o), lane, &x, counter, depth + 1))
        continue;
      *out = (kr_affine){.ok = true};
      kr_affine_add(out, &x, op == LLVMShl ? INT64_C(1) << k : k);
      return out->ok;
    }
    return false;
  default:
    return false;
  }
}

int32_t kr_lane_extract(kr_ctx *c, LLVMValueRef x) {
  LLVMValueRef idx = LLVMGetOperand(x, 1);
  if (!c->in_lanes || !LLVMIsAConstantInt(idx)) return kr_fail(c, "vector (SIMD) lanes combined into one value: not recognised"), -1;
  if ((int)LLVMConstIntGetZExtValue(idx) != c->lane)
    return kr_fail(c, "a vector (SIMD) lane read in another lane's iteration"), -1;
  return kr_lane_expr(c, LLVMGetOperand(x, 0));
}

int32_t kr_lane_expr(kr_ctx *c, LLVMValueRef v) {
  if (!c->in_lanes) return kr_fail(c, "vector (SIMD) operations: not recognised yet"), -1;
  LLVMTypeRef vt = LLVMTypeOf(v);
  kn_type t;
  if (!kr_type_of(LLVMGetElementType(vt), &t)) return kr_fail(c, "unsupported vector lane type"), -1;
  int lane = c->lane, n = (int)LLVMGetVectorSize(vt);
  if (lane < 0 || lane >= n) return kr_fail(c, "vector lanes of another shape"), -1;
  if (LLVMIsAConstant(v)) return lane_constant(c, v, lane);
  if (!LLVMIsAInstruction(v)) return kr_fail(c, "unsupported vector value"), -1;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  /* a splat made before the loop is traced to its scalar, a live value */
  if (op != LLVMShuffleVector && op != LLVMInsertElement && !ir_loop_defines(kr_nest(c), v, c->cfg))
    return kr_fail(c, "a vector value computed before the loop"), -1;
  int32_t r;
  kr_affine form;
  bool counter = false;
  if (t == KN_I32 && (op == LLVMAdd || op == LLVMSub || op == LLVMMul || op == LLVMShl) &&
      lane_form(c, v, lane, &form, &counter, 0) && counter)
    return kr_counter_value(c, &form, KN_I32);
  switch (op) {
  case LLVMLoad:
    return lane_load(c, v, vt, lane, t, false);
  case LLVMBitCast: {
    LLVMValueRef ld = inserted_load(c, v, lane);
    if (ld) {
      /* the scalar load's bytes read as lane type t */
      kr_affine a = kr_address(c, LLVMGetOperand(ld, 0));
      if (!a.ok) return kr_fail(c, "non-affine address"), -1;
      return kr_load_at(c, &a, t, t, false);
    }
    if (!kr_is_mem_load(c, LLVMGetOperand(v, 0)) || !kr_lane_count(vt))
      return kr_fail(c, "vector (SIMD) lanes moved between shapes: not recognised"), -1;
    return lane_load(c, LLVMGetOperand(v, 0), vt, lane, t, false);
  }
  case LLVMSExt:
  case LLVMZExt: {
    LLVMValueRef x = LLVMGetOperand(v, 0);
    if ((r = narrow_product(c, v, lane)) != -2) return r;
    if ((r = widened_bytes(c, v, lane)) != -2) return r;
    if (kr_is_mem_load(c, x)) return lane_load(c, x, LLVMTypeOf(x), lane, t, op == LLVMSExt);
    return kr_instruction(c, v, t);
  }
  case LLVMShuffleVector: {
    int k = LLVMGetMaskValue(v, (unsigned)lane);
    if (k == LLVMGetUndefMaskElem()) return kr_fail(c, "undefined vector lane"), -1;
    LLVMValueRef a = LLVMGetOperand(v, 0);
    int w = (int)LLVMGetVectorSize(LLVMTypeOf(a));
    c->lane = k % w;
    r = kr_expr(c, LLVMGetOperand(v, k < w ? 0 : 1));
    c->lane = lane;
    return r;
  }
  case LLVMInsertElement: {
    LLVMValueRef idx = LLVMGetOperand(v, 2);
    if (!LLVMIsAConstantInt(idx)) return kr_fail(c, "vector lane chosen at run time"), -1;
    if ((int)LLVMConstIntGetZExtValue(idx) == lane) return kr_expr(c, LLVMGetOperand(v, 1));
    return kr_expr(c, LLVMGetOperand(v, 0));
  }
  case LLVMPHI:
    if (!counter_form(c, v, lane, n, &form)) return kr_fail(c, reduction_reason(c, v)), -1;
    return kr_counter_value(c, &form, KN_I32);
  default:
    /* lane-wise: the scalar operation on this lane of each operand */
    return kr_instruction(c, v, t);
  }
}
