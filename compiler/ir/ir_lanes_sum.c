/* ir_lanes_sum.c: sums of bytes that clang's wasm vectoriser computes four
 * lanes at a time (a 3x3 blur: each of the four i32x4 quarters of sixteen
 * pixels is a sum of nine zero-extended byte groups, every group picked
 * out of its 16-byte load with a shuffle) rewritten as sums of whole
 * halves in 16-bit lanes, shared by the two quarters of each half:
 *
 *   quarter q of sum_t zext(X_t)  =  zext(lanes 4(q%2).. of
 *                                     sum_t zext16(X_t[8(q/2) .. +7]))
 *
 * Exact: every lane of the i32 value is proven, lane by lane, to be the sum
 * of the same bytes (X_1[o + i] + ... + X_n[o + i]), and n * 255 fits 16
 * bits, so no 16-bit sum wraps.  On x86 each load is then widened by one
 * unpack per half (instead of a shuffle and two unpacks per quarter) and
 * added eight lanes at a time.  Part of the lanes pass (driver.c). */
#include <stdlib.h>
#include <string.h>

#include "ir_pass.h"

#define MAX_TERMS 64

typedef struct {
  LLVMValueRef base; /* a <16 x i8> value */
  unsigned byte;
  unsigned rank; /* base's place in the function (value_rank) */
} sum_term;

/* ---- Where a value is in its function --------------------------------- */

/* The <16 x i8> parameters and instructions of one function, numbered in
 * the function's order, kept sorted by address for the look-up: terms are
 * ordered by that number, never by address, so that the sums are built in
 * the same order in every run (addresses differ from run to run). */
typedef struct {
  LLVMValueRef v;
  unsigned rank;
} ranked;

typedef struct {
  ranked *items;
  unsigned n, cap;
} rank_map;

static void rank_push(rank_map *m, LLVMValueRef v) {
  if (m->n == m->cap) {
    unsigned cap = m->cap ? m->cap * 2 : 64;
    ranked *items = realloc(m->items, cap * sizeof *items);
    if (!items) return;
    m->items = items;
    m->cap = cap;
  }
  m->items[m->n] = (ranked){v, m->n};
  m->n++;
}

static int by_address(const void *pa, const void *pb) {
  uintptr_t a = (uintptr_t)((const ranked *)pa)->v, b = (uintptr_t)((const ranked *)pb)->v;
  return a < b ? -1 : a > b;
}

static bool is_vec_of(LLVMTypeRef t, unsigned bits, unsigned lanes) {
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind || (lanes && LLVMGetVectorSize(t) != lanes)) return false;
  LLVMTypeRef e = LLVMGetElementType(t);
  return LLVMGetTypeKind(e) == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(e) == bits;
}

static void rank_function(rank_map *m, LLVMValueRef fn) {
  m->n = 0;
  for (LLVMValueRef p = LLVMGetFirstParam(fn); p; p = LLVMGetNextParam(p))
    if (is_vec_of(LLVMTypeOf(p), 8, 16)) rank_push(m, p);
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef v = LLVMGetFirstInstruction(bb); v; v = LLVMGetNextInstruction(v))
      if (is_vec_of(LLVMTypeOf(v), 8, 16)) rank_push(m, v);
  if (m->n) qsort(m->items, m->n, sizeof *m->items, by_address);
}

/* v's number; false when v is not in the map (a global, say). */
static bool value_rank(const rank_map *m, LLVMValueRef v, unsigned *rank) {
  ranked key = {v, 0};
  const ranked *r = m->n ? bsearch(&key, m->items, m->n, sizeof *m->items, by_address) : NULL;
  if (!r) return false;
  *rank = r->rank;
  return true;
}

/* Lane i of a vector of bytes, back through shuffles, to a byte of a
 * 16-byte value. */
static bool byte_source(LLVMValueRef v, unsigned i, sum_term *out) {
  for (unsigned steps = 0; steps < 16; steps++) {
    if (!LLVMIsAInstruction(v) || LLVMGetInstructionOpcode(v) != LLVMShuffleVector) break;
    int k = LLVMGetMaskValue(v, i);
    if (k == LLVMGetUndefMaskElem()) return false;
    unsigned n = LLVMGetVectorSize(LLVMTypeOf(LLVMGetOperand(v, 0)));
    v = LLVMGetOperand(v, (unsigned)k < n ? 0 : 1);
    i = (unsigned)k % n;
  }
  if (!is_vec_of(LLVMTypeOf(v), 8, 16) || LLVMIsAConstant(v)) return false;
  *out = (sum_term){v, i, 0};
  return true;
}

/* The bytes whose zero-extended sum lane i of v is: through adds, zero
 * extensions and shuffles; false for anything else. */
static bool lane_terms(LLVMValueRef v, unsigned i, sum_term *terms, unsigned *n, unsigned depth) {
  if (!LLVMIsAInstruction(v) || depth > 40) return false;
  switch (LLVMGetInstructionOpcode(v)) {
  case LLVMAdd:
    return lane_terms(LLVMGetOperand(v, 0), i, terms, n, depth + 1) &&
           lane_terms(LLVMGetOperand(v, 1), i, terms, n, depth + 1);
  case LLVMZExt: {
    LLVMValueRef a = LLVMGetOperand(v, 0);
    if (LLVMGetTypeKind(LLVMTypeOf(a)) != LLVMVectorTypeKind) return false;
    if (!is_vec_of(LLVMTypeOf(a), 8, 0)) return lane_terms(a, i, terms, n, depth + 1);
    if (*n >= MAX_TERMS) return false;
    return byte_source(a, i, &terms[(*n)++]);
  }
  case LLVMShuffleVector: {
    int k = LLVMGetMaskValue(v, i);
    if (k == LLVMGetUndefMaskElem()) return false;
    unsigned w = LLVMGetVectorSize(LLVMTypeOf(LLVMGetOperand(v, 0)));
    return lane_terms(LLVMGetOperand(v, (unsigned)k < w ? 0 : 1), (unsigned)k % w, terms, n, depth + 1);
  }
  default:
    return false;
  }
}

static int term_order(const void *pa, const void *pb) {
  const sum_term *a = pa, *b = pb;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  return (int)a->byte - (int)b->byte;
}

/* Numbers the terms' bases and sorts the terms by them. */
static bool sort_terms(const rank_map *m, sum_term *terms, unsigned n) {
  for (unsigned t = 0; t < n; t++)
    if (!value_rank(m, terms[t].base, &terms[t].rank)) return false;
  qsort(terms, n, sizeof *terms, term_order);
  return true;
}

/* ---- Shared halves and sums, per block ---------------------------------- */

typedef struct {
  LLVMBasicBlockRef bb;
  unsigned half, nterms;
  LLVMValueRef bases[MAX_TERMS]; /* sorted; one base for a single half */
  LLVMValueRef value;
} shared_value;

typedef struct {
  shared_value *items;
  unsigned n, cap;
} shared_list;

static LLVMValueRef shared_find(shared_list *l, LLVMBasicBlockRef bb, unsigned half,
                                LLVMValueRef *bases, unsigned nterms) {
  for (unsigned i = 0; i < l->n; i++) {
    shared_value *s = &l->items[i];
    if (s->bb == bb && s->half == half && s->nterms == nterms &&
        !memcmp(s->bases, bases, nterms * sizeof *bases))
      return s->value;
  }
  return NULL;
}

static void shared_add(shared_list *l, LLVMBasicBlockRef bb, unsigned half, LLVMValueRef *bases,
                       unsigned nterms, LLVMValueRef value) {
  if (l->n == l->cap) {
    unsigned cap = l->cap ? l->cap * 2 : 16;
    shared_value *items = realloc(l->items, cap * sizeof *items);
    if (!items) return;
    l->items = items;
    l->cap = cap;
  }
  shared_value *s = &l->items[l->n++];
  s->bb = bb;
  s->half = half;
  s->nterms = nterms;
  memcpy(s->bases, bases, nterms * sizeof *bases);
  s->value = value;
}

static LLVMValueRef lane_mask(LLVMContextRef ctx, unsigned first, unsigned count) {
  LLVMValueRef idx[8];
  for (unsigned i = 0; i < count; i++) idx[i] = LLVMConstInt(LLVMInt32TypeInContext(ctx), first + i, 0);
  return LLVMConstVector(idx, count);
}

/* zext16(X[8h .. 8h+7]), made once per block. */
static LLVMValueRef half_of(shared_list *l, LLVMBuilderRef b, LLVMBasicBlockRef bb, LLVMValueRef x,
                            unsigned h) {
  LLVMValueRef v = shared_find(l, bb, h, &x, 1);
  if (v) return v;
  LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(x));
  LLVMValueRef bytes = LLVMBuildShuffleVector(b, x, LLVMGetPoison(LLVMTypeOf(x)), lane_mask(ctx, 8 * h, 8), "half");
  v = LLVMBuildZExt(b, bytes, LLVMVectorType(LLVMInt16TypeInContext(ctx), 8), "half16");
  shared_add(l, bb, h, &x, 1, v);
  return v;
}

/* Instructions of the old tree that nothing uses any more. */
static void drop_dead(LLVMValueRef v, unsigned depth) {
  if (!LLVMIsAInstruction(v) || LLVMGetFirstUse(v) || depth > 64) return;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  if (op != LLVMAdd && op != LLVMZExt && op != LLVMShuffleVector) return;
  LLVMValueRef ops[2] = {NULL, NULL};
  for (unsigned k = 0; k < 2 && k < (unsigned)LLVMGetNumOperands(v); k++) ops[k] = LLVMGetOperand(v, k);
  LLVMInstructionEraseFromParent(v);
  for (unsigned k = 0; k < 2; k++)
    if (ops[k]) drop_dead(ops[k], depth + 1);
}

/* root: <4 x i32>, each lane i the sum of X_t[o + i], t = 1..n. */
static bool share_sum(shared_list *l, const rank_map *ranks, LLVMBuilderRef b, LLVMValueRef root) {
  sum_term first[MAX_TERMS], lane[MAX_TERMS];
  unsigned n = 0;
  if (!lane_terms(root, 0, first, &n, 0) || n < 2 || n * 255u > 65535u) return false;
  if (!sort_terms(ranks, first, n)) return false;
  unsigned o = first[0].byte;
  for (unsigned t = 0; t < n; t++)
    if (first[t].byte != o) return false;
  if (o % 8 + 4 > 8) return false;
  for (unsigned i = 1; i < 4; i++) {
    unsigned m = 0;
    if (!lane_terms(root, i, lane, &m, 0) || m != n) return false;
    if (!sort_terms(ranks, lane, m)) return false;
    for (unsigned t = 0; t < n; t++)
      if (lane[t].base != first[t].base || lane[t].byte != o + i) return false;
  }
  LLVMValueRef bases[MAX_TERMS];
  for (unsigned t = 0; t < n; t++) bases[t] = first[t].base;
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(root);
  unsigned h = o / 8;
  LLVMPositionBuilderBefore(b, root);
  LLVMValueRef sum = shared_find(l, bb, h + 2, bases, n);
  if (!sum) {
    sum = half_of(l, b, bb, bases[0], h);
    for (unsigned t = 1; t < n; t++) sum = LLVMBuildNUWAdd(b, sum, half_of(l, b, bb, bases[t], h), "sum16");
    shared_add(l, bb, h + 2, bases, n, sum);
  }
  LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(root));
  LLVMValueRef quarter = LLVMBuildShuffleVector(b, sum, LLVMGetPoison(LLVMTypeOf(sum)), lane_mask(ctx, o % 8, 4), "quarter");
  LLVMValueRef wide = LLVMBuildZExt(b, quarter, LLVMTypeOf(root), "quarter32");
  LLVMReplaceAllUsesWith(root, wide);
  drop_dead(root, 0);
  return true;
}

/* A root: an i32x4 add, or zero extension (of a sum InstCombine already
 * narrowed), some non-add uses. */
static bool is_root(LLVMValueRef v) {
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  if ((op != LLVMAdd && op != LLVMZExt) || !is_vec_of(LLVMTypeOf(v), 32, 4)) return false;
  for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    if (!LLVMIsAInstruction(user) || LLVMGetInstructionOpcode(user) != LLVMAdd) return true;
  }
  return false;
}

unsigned ir_share_byte_sums(LLVMModuleRef mod) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(mod));
  shared_list l = {0};
  rank_map ranks = {0};
  unsigned count = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    l.n = 0;
    bool ranked_yet = false;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
      unsigned nroots = 0, cap = 0;
      LLVMValueRef *roots = NULL;
      for (LLVMValueRef v = LLVMGetFirstInstruction(bb); v; v = LLVMGetNextInstruction(v)) {
        if (!is_root(v)) continue;
        if (nroots == cap) {
          LLVMValueRef *r = realloc(roots, (cap = cap ? cap * 2 : 8) * sizeof *r);
          if (!r) break;
          roots = r;
        }
        roots[nroots++] = v;
      }
      if (nroots && !ranked_yet) {
        rank_function(&ranks, fn);
        ranked_yet = true;
      }
      for (unsigned i = 0; i < nroots; i++) count += share_sum(&l, &ranks, b, roots[i]);
      free(roots);
    }
  }
  free(l.items);
  free(ranks.items);
  LLVMDisposeBuilder(b);
  return count;
}
