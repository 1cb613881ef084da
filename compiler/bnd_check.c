/* bnd_check.c: recognises the bounds checks low_memory.c emits, as they
 * look after LLVM's pipeline: a conditional branch that leads (maybe
 * through blocks that only branch on) to the out-of-bounds trap, on a
 * compare of an end address with a load of the memory's size. */
#include "bnd.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lower.h"
#include "twasm_abi.h"

/* The TBAA type name of an access tag !{type, type, 0}, type = !{name, ...}. */
static bool tbaa_named(LLVMValueRef inst, const char *name) {
  LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(inst));
  LLVMValueRef tag = LLVMGetMetadata(inst, LLVMGetMDKindIDInContext(ctx, "tbaa", 4));
  if (!tag || LLVMGetMDNodeNumOperands(tag) < 1) return false;
  LLVMValueRef ops[3];
  if (LLVMGetMDNodeNumOperands(tag) > 3) return false;
  LLVMGetMDNodeOperands(tag, ops);
  LLVMValueRef type = ops[0];
  if (!type || !LLVMIsAMDNode(type) || LLVMGetMDNodeNumOperands(type) < 1 ||
      LLVMGetMDNodeNumOperands(type) > 3)
    return false;
  LLVMGetMDNodeOperands(type, ops);
  unsigned len = 0;
  const char *s = ops[0] ? LLVMGetMDString(ops[0], &len) : NULL;
  return s && len == strlen(name) && memcmp(s, name, len) == 0;
}

/* p = base + off (a GEP of one constant index over i8). */
static bool const_gep(LLVMValueRef p, uint64_t off, LLVMValueRef *base) {
  if (!LLVMIsAGetElementPtrInst(p) || LLVMGetNumOperands(p) != 2) return false;
  LLVMValueRef k = LLVMGetOperand(p, 1);
  if (!LLVMIsAConstantInt(k) || LLVMConstIntGetZExtValue(k) != off ||
      LLVMGetGEPSourceElementType(p) != LLVMInt8TypeInContext(LLVMGetTypeContext(LLVMTypeOf(p))))
    return false;
  *base = LLVMGetOperand(p, 0);
  return true;
}

/* The size load, also where LLVM dropped its TBAA tag (merging loads of
 * two paths): i64 at size_bytes of the memory object at vmctx->mem; or
 * GVN's phi of such loads on the paths into a block (each the size when
 * it was loaded, which no call since can have changed). */
static bool is_plain_size_load(LLVMValueRef v) {
  if (!LLVMIsALoadInst(v)) return false;
  if (tbaa_named(v, LOW_TBAA_SIZE)) return true;
  LLVMValueRef obj, vmctx;
  LLVMTypeRef t = LLVMTypeOf(v);
  if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(t) != 64 ||
      !const_gep(LLVMGetOperand(v, 0), offsetof(twasm_memory_abi, size_bytes), &obj) || !LLVMIsALoadInst(obj) ||
      !const_gep(LLVMGetOperand(obj, 0), offsetof(twasm_vmctx, mem), &vmctx) || !LLVMIsAArgument(vmctx))
    return false;
  return vmctx == LLVMGetParam(LLVMGetBasicBlockParent(LLVMGetInstructionParent(v)), 0);
}

bool bnd_phi_web(LLVMValueRef v, unsigned max_phis, bnd_leaf_fn leaf, void *ctx) {
  LLVMValueRef seen[BND_MAX_WEB];
  unsigned nseen = 0, next = 0;
  if (!LLVMIsAPHINode(v)) return leaf(ctx, v);
  if (max_phis > BND_MAX_WEB) max_phis = BND_MAX_WEB;
  seen[nseen++] = v;
  while (next < nseen) {
    LLVMValueRef phi = seen[next++];
    for (unsigned k = 0; k < LLVMCountIncoming(phi); k++) {
      LLVMValueRef in = LLVMGetIncomingValue(phi, k);
      if (!LLVMIsAPHINode(in)) {
        if (!leaf(ctx, in)) return false;
        continue;
      }
      bool known = false;
      for (unsigned j = 0; j < nseen && !known; j++) known = seen[j] == in;
      if (known) continue;
      if (nseen == max_phis) return false;
      seen[nseen++] = in;
    }
  }
  return true;
}

static bool size_leaf(void *ctx, LLVMValueRef v) {
  (void)ctx;
  return is_plain_size_load(v);
}

/* Phis (through loops too) whose every incoming value is a size load or
 * another of them, up to 256 phis (an inlined parser's web of them: 79). */
static bool is_size_load(LLVMValueRef v) {
  return bnd_phi_web(v, BND_MAX_WEB, size_leaf, NULL);
}

/* Computes a value and nothing else: what a group's `bounds_which` block
 * (bnd_insert.c: which access of the group fails first) holds. */
static bool pure(LLVMValueRef i) {
  return LLVMIsAPHINode(i) || LLVMIsABinaryOperator(i) || LLVMIsAICmpInst(i) || LLVMIsASelectInst(i) ||
         LLVMIsACastInst(i) || LLVMIsAGetElementPtrInst(i);
}

/* A block holding nothing but pure instructions (phis, the selects of a
 * group's `bounds_which`) and an unconditional branch. */
static LLVMBasicBlockRef passes_to(LLVMBasicBlockRef bb) {
  LLVMValueRef i = LLVMGetFirstInstruction(bb);
  while (i && pure(i)) i = LLVMGetNextInstruction(i);
  if (!i || !LLVMIsABranchInst(i) || LLVMIsConditional(i)) return NULL;
  return LLVMGetSuccessor(i, 0);
}

/* The block calls twasm_rt_trap with the out-of-bounds code and ends. */
bool bnd_is_oob_trap(LLVMBasicBlockRef bb) {
  for (int hops = 0; bb && hops < 4; hops++) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
    if (term && LLVMIsAUnreachableInst(term)) {
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
        if (!LLVMIsACallInst(i) || LLVMGetNumArgOperands(i) != 4) continue;
        LLVMValueRef code = LLVMGetOperand(i, 1);
        if (strcmp(ir_callee_name(i), "twasm_rt_trap") == 0 && LLVMIsAConstantInt(code) &&
            LLVMConstIntGetZExtValue(code) == TWASM_TRAP_MEMORY_OOB)
          return true;
      }
      return false;
    }
    bb = passes_to(bb);
  }
  return false;
}

static LLVMIntPredicate inverse(LLVMIntPredicate p) {
  switch (p) {
  case LLVMIntUGT: return LLVMIntULE;
  case LLVMIntULE: return LLVMIntUGT;
  case LLVMIntULT: return LLVMIntUGE;
  case LLVMIntUGE: return LLVMIntULT;
  default: return p == LLVMIntEQ ? LLVMIntNE : p == LLVMIntNE ? LLVMIntEQ : p;
  }
}

/* v as x less a constant (an add or sub of one), else x = v, less 0. */
static LLVMValueRef less_const(LLVMValueRef v, int64_t *less) {
  *less = 0;
  LLVMOpcode op = LLVMIsABinaryOperator(v) ? LLVMGetInstructionOpcode(v) : 0;
  if ((op == LLVMAdd || op == LLVMSub) && LLVMIsAConstantInt(LLVMGetOperand(v, 1))) {
    int64_t k = LLVMConstIntGetSExtValue(LLVMGetOperand(v, 1));
    *less = op == LLVMSub ? k : -k;
    v = LLVMGetOperand(v, 0);
  }
  return v;
}

/* One of the size loads a web of size phis (is_size_load) merges. */
static LLVMValueRef a_load(LLVMValueRef phi) {
  for (int hops = 0; hops < 256 && LLVMIsAPHINode(phi); hops++) {
    LLVMValueRef next = NULL;
    for (unsigned k = 0; k < LLVMCountIncoming(phi); k++) {
      LLVMValueRef in = LLVMGetIncomingValue(phi, k);
      if (!LLVMIsAPHINode(in)) return in;
      if (in != phi && !next) next = in;
    }
    phi = next;
  }
  return NULL;
}

/* What is_phi_of_size_less's walk has seen of the leaves so far. */
typedef struct {
  bool first;
  int64_t less;
  LLVMValueRef load;
} size_less;

static bool size_less_leaf(void *ctx, LLVMValueRef in) {
  size_less *s = ctx;
  int64_t d;
  LLVMValueRef x = less_const(in, &d);
  if (!is_size_load(x) || (!s->first && d != s->less)) return false;
  if (s->first) s->less = d, s->load = NULL;
  if (!s->load || LLVMIsAPHINode(s->load)) s->load = x;
  s->first = false;
  return true;
}

/* GVN's phi of `size - less` computed on the paths into a block (loop
 * rotation copies a check into the preheader and the latch): every
 * incoming value, through phis, a size load less the same constant.
 * *load: one of those loads (its metadata stands for all). */
static bool is_phi_of_size_less(LLVMValueRef v, int64_t *less, LLVMValueRef *load) {
  size_less s = {.first = true};
  if (!bnd_phi_web(v, BND_MAX_WEB, size_less_leaf, &s) || s.first) return false;
  *less = s.less;
  *load = LLVMIsAPHINode(s.load) ? a_load(s.load) : s.load;
  return *load != NULL;
}

static unsigned width(LLVMValueRef v) {
  LLVMTypeRef t = LLVMTypeOf(v);
  return LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(t) : 0;
}

/* A size load less a constant (`size - reach`, which bnd_insert.c only
 * forms where it cannot wrap), possibly truncated to i32 (exact: memory
 * stays below 2^32 bytes, so LLVM narrows compares of i32 addresses). */
static bool is_size(LLVMValueRef v, bool *narrow, LLVMValueRef *load, int64_t *less) {
  *narrow = LLVMIsATruncInst(v) != NULL;
  if (*narrow) v = LLVMGetOperand(v, 0);
  v = less_const(v, less);
  /* InstCombine's `trunc(size) - less` for `trunc(size - less)`: the same
   * i32 value (truncation commutes with the subtraction) */
  if (!*narrow && LLVMIsATruncInst(v) && width(v) == 32) *narrow = true, v = LLVMGetOperand(v, 0);
  *load = v;
  if (LLVMIsAPHINode(v) && *less == 0 && !is_size_load(v))
    return is_phi_of_size_less(v, less, load) && *less >= 0 && *less < (INT64_C(1) << 32);
  return *less >= 0 && *less < (INT64_C(1) << 32) && is_size_load(v);
}

bool bnd_check_match(LLVMValueRef br, bnd_check *c) {
  if (!br || !LLVMIsABranchInst(br) || !LLVMIsConditional(br)) return false;
  LLVMValueRef cmp = LLVMGetCondition(br);
  if (!LLVMIsAICmpInst(cmp)) return false;
  unsigned trap_succ;
  if (bnd_is_oob_trap(LLVMGetSuccessor(br, 0))) trap_succ = 0;
  else if (bnd_is_oob_trap(LLVMGetSuccessor(br, 1))) trap_succ = 1;
  else return false;
  /* the predicate under which it traps, the size on the right */
  LLVMIntPredicate p = LLVMGetICmpPredicate(cmp);
  if (trap_succ == 1) p = inverse(p);
  LLVMValueRef a = LLVMGetOperand(cmp, 0), b = LLVMGetOperand(cmp, 1), load;
  bool narrow;
  int64_t less;
  if (is_size(a, &narrow, &load, &less)) {
    LLVMValueRef t = a;
    a = b, b = t;
    p = p == LLVMIntULT ? LLVMIntUGT : p == LLVMIntULE ? LLVMIntUGE : LLVMIntEQ;
  } else if (!is_size(b, &narrow, &load, &less)) {
    return false;
  }
  /* trap iff end > size - less, or end >= size - less */
  if (p != LLVMIntUGT && p != LLVMIntUGE) return false;
  *c = (bnd_check){.br = br, .trap_succ = trap_succ, .end = a, .plus = less + (p == LLVMIntUGE),
                   .narrow = narrow, .size_load = load};
  return width(a) == (narrow ? 32u : 64u);
}

bool bnd_is_size_load(LLVMValueRef v) {
  return !LLVMIsAPHINode(v) && is_plain_size_load(v);
}

bool bnd_size_web(LLVMValueRef v, int64_t *less, LLVMValueRef *like) {
  return LLVMIsAPHINode(v) && is_phi_of_size_less(v, less, like);
}
