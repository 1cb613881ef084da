/* ir_address.c: after mem2reg, rewrites linear-memory addresses zext(x + c)
 * into zext(x) + c where an earlier access of the same block proves that
 * x + c does not wrap, so that LLVM sees neighbouring accesses as such.
 *
 * Why: clang's wasm32 output interleaves loops (`p`, `p + 8`, ...) with
 * i32 adds that may wrap, so zext(p + 8) is not provably zext(p) + 8 and
 * the loop vectoriser finds no adjacent accesses (matrix: 2.9x native).
 *
 * Why it is exact: linear memory never shrinks and is at most max_bytes
 * (its declared maximum, and always below 2^32: the runtime stops one page
 * short).
 * Once an access at zext(r) + reach - w, w bytes wide, has executed (an
 * earlier instruction of the same block), r + reach <= size <= max_bytes.
 * Then for k < reach + (2^32 - max_bytes), r + k < 2^32: the i32 sum
 * r + k does not wrap and zext(r + k) == zext(r) + k.  A faulting earlier
 * access traps before the rewritten one runs, in both bounds modes. */
#include "ir_address.h"
#include "ir_pass.h"

#include <stdint.h>
#include <stdlib.h>

/* Bounded tables: a full one only means fewer rewrites. */
#define MAX_FACTS 256u

/* zext(value) == zext(root) + k from here to the end of the block. */
typedef struct {
  LLVMValueRef value, root;
  uint64_t k;
} addr_fact;

/* root + reach <= memory size (an access ending there has executed). */
typedef struct {
  LLVMValueRef root;
  uint64_t reach;
} addr_reach;

typedef struct {
  LLVMBuilderRef b;
  LLVMTypeRef i8, i64;
  unsigned invariant_kind; /* "invariant.load" */
  uint64_t slack; /* 2^32 - largest possible memory size */
  addr_fact facts[MAX_FACTS];
  unsigned nfacts;
  addr_reach reaches[MAX_FACTS];
  unsigned nreaches;
  unsigned rewritten;
} addr_pass;

typedef ir_mem_access mem_access;

static bool is_memory_base(LLVMValueRef fn, LLVMValueRef v, unsigned invariant_kind) {
  return LLVMIsALoadInst(v) && LLVMGetOperand(v, 0) == LLVMGetParam(fn, 0) &&
         LLVMGetMetadata(v, invariant_kind) != NULL;
}

/* Bytes an access of type ty reads or writes; 0 for a type no access of
 * linear memory has.  v128 accesses are vectors of 16 bytes (<2 x i64>
 * .. <16 x i8>, low_simd.c), the load-and-extend forms of 8. */
static uint64_t width_of(LLVMTypeRef ty) {
  switch (LLVMGetTypeKind(ty)) {
  case LLVMIntegerTypeKind: return LLVMGetIntTypeWidth(ty) / 8;
  case LLVMFloatTypeKind: return 4;
  case LLVMDoubleTypeKind: return 8;
  case LLVMVectorTypeKind: return LLVMGetVectorSize(ty) * width_of(LLVMGetElementType(ty));
  default: return 0;
  }
}

static bool is_zext_i32(LLVMValueRef v) {
  return LLVMIsAZExtInst(v) && LLVMGetIntTypeWidth(LLVMTypeOf(LLVMGetOperand(v, 0))) == 32;
}

/* Matches the form access_ptr (low_memory.c) builds:
 * gep i8, base, zext(value) [+ offset]. */
bool ir_match_access(LLVMValueRef fn, LLVMValueRef inst, LLVMTypeRef i8, unsigned invariant_kind,
                     ir_mem_access *a) {
  bool is_load = LLVMIsALoadInst(inst) != NULL;
  if (!is_load && !LLVMIsAStoreInst(inst)) return false;
  a->inst = inst;
  a->ptr_operand = is_load ? 0 : 1;
  a->width = width_of(LLVMTypeOf(is_load ? inst : LLVMGetOperand(inst, 0)));
  LLVMValueRef gep = LLVMGetOperand(inst, a->ptr_operand);
  if (!a->width || !LLVMIsAGetElementPtrInst(gep) || LLVMGetNumOperands(gep) != 2 ||
      LLVMGetGEPSourceElementType(gep) != i8)
    return false;
  a->base = LLVMGetOperand(gep, 0);
  if (!is_memory_base(fn, a->base, invariant_kind)) return false;
  LLVMValueRef index = LLVMGetOperand(gep, 1);
  a->offset = 0;
  if (LLVMIsABinaryOperator(index) && LLVMGetInstructionOpcode(index) == LLVMAdd &&
      LLVMIsAConstantInt(LLVMGetOperand(index, 1))) {
    a->offset = LLVMConstIntGetZExtValue(LLVMGetOperand(index, 1));
    index = LLVMGetOperand(index, 0);
  }
  if (!is_zext_i32(index)) return false;
  a->value = LLVMGetOperand(index, 0);
  return true;
}

static const addr_fact *fact_of(const addr_pass *p, LLVMValueRef v) {
  for (unsigned i = p->nfacts; i-- > 0;)
    if (p->facts[i].value == v) return &p->facts[i];
  return NULL;
}

static addr_reach *reach_of(addr_pass *p, LLVMValueRef root) {
  for (unsigned i = 0; i < p->nreaches; i++)
    if (p->reaches[i].root == root) return &p->reaches[i];
  return NULL;
}

/* The addend of v = add x, c (either side), with x in *x; 0 otherwise. */
static uint64_t const_addend(LLVMValueRef v, LLVMValueRef *x) {
  if (!LLVMIsABinaryOperator(v) || LLVMGetInstructionOpcode(v) != LLVMAdd) return 0;
  for (unsigned side = 0; side < 2; side++) {
    LLVMValueRef c = LLVMGetOperand(v, side);
    if (LLVMIsAConstantInt(c)) {
      *x = LLVMGetOperand(v, 1 - side);
      return LLVMConstIntGetZExtValue(c);
    }
  }
  return 0;
}

/* Writes value's root and k: a known fact, or one proved from a reach
 * (see the top of the file), or value itself with k = 0. */
static void resolve(addr_pass *p, LLVMValueRef value, LLVMValueRef *root, uint64_t *k) {
  const addr_fact *known = fact_of(p, value);
  if (known) {
    *root = known->root, *k = known->k;
    return;
  }
  *root = value, *k = 0;
  LLVMValueRef x;
  uint64_t c = const_addend(value, &x);
  if (!c) return;
  LLVMValueRef r = x;
  uint64_t kx = 0;
  if ((known = fact_of(p, x))) r = known->root, kx = known->k;
  const addr_reach *reach = reach_of(p, r);
  if (!reach || kx + c >= reach->reach + p->slack) return;
  *root = r, *k = kx + c;
  if (p->nfacts < MAX_FACTS) p->facts[p->nfacts++] = (addr_fact){value, r, kx + c};
}

static void note_reach(addr_pass *p, LLVMValueRef root, uint64_t reach) {
  addr_reach *r = reach_of(p, root);
  if (r) {
    if (reach > r->reach) r->reach = reach;
  } else if (p->nreaches < MAX_FACTS) {
    p->reaches[p->nreaches++] = (addr_reach){root, reach};
  }
}

/* gep i8, base, zext(root) + k + offset: never overflows i64. */
static void rewrite(addr_pass *p, const mem_access *a, LLVMValueRef root, uint64_t k) {
  LLVMPositionBuilderBefore(p->b, a->inst);
  LLVMValueRef index = LLVMBuildZExt(p->b, root, p->i64, "");
  index = LLVMBuildNUWAdd(p->b, index, LLVMConstInt(p->i64, k + a->offset, false), "ea");
  LLVMSetNSW(index, true);
  LLVMValueRef old = LLVMGetOperand(a->inst, a->ptr_operand);
  LLVMValueRef ptr = LLVMBuildGEP2(p->b, p->i8, a->base, &index, 1, "");
  /* the access marker: guard mode's exact check (bnd_insert.c) goes
   * where it is, and k may lie past the reach that proved it */
  ir_copy_metadata(old, ptr);
  LLVMSetOperand(a->inst, a->ptr_operand, ptr);
  p->rewritten++;
}

static void fold_block(addr_pass *p, LLVMValueRef fn, LLVMBasicBlockRef bb) {
  p->nfacts = p->nreaches = 0;
  LLVMValueRef base = NULL;
  for (LLVMValueRef inst = LLVMGetFirstInstruction(bb); inst; inst = LLVMGetNextInstruction(inst)) {
    mem_access a;
    if (!ir_match_access(fn, inst, p->i8, p->invariant_kind, &a)) continue;
    /* One memory, one base: facts from another base prove nothing. */
    if (base && a.base != base) continue;
    base = a.base;
    LLVMValueRef root;
    uint64_t k;
    resolve(p, a.value, &root, &k);
    if (root != a.value) rewrite(p, &a, root, k);
    note_reach(p, root, k + a.offset + a.width);
  }
}

unsigned ir_fold_address_adds(LLVMModuleRef mod, uint64_t max_memory_bytes) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  addr_pass *p = calloc(1, sizeof *p);
  if (!p) return 0;
  p->b = LLVMCreateBuilderInContext(ctx);
  p->i8 = LLVMInt8TypeInContext(ctx);
  p->i64 = LLVMInt64TypeInContext(ctx);
  p->invariant_kind = LLVMGetMDKindIDInContext(ctx, "invariant.load", 14);
  p->slack = (1ull << 32) - max_memory_bytes;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    if (LLVMCountParams(fn) == 0) continue;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
      fold_block(p, fn, bb);
  }
  unsigned n = p->rewritten;
  LLVMDisposeBuilder(p->b);
  free(p);
  return n;
}
