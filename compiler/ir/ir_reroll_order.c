/* ir_reroll_order.c: the version that makes re-rolling exact where clang's
 * unrolled copies store in another order than the iterations.
 *
 * clang's Wasm backend emits the F copies of a store-only loop unrolled by
 * F in an order of its own (a+16, a+12, a+8, a+4; copies 0, 3, 2, 1).
 * Disjoint stores commute, except under a trap: the old trip that traps
 * at its first out-of-bounds store leaves stored the copies it ran before,
 * which are others than the re-rolled loop's, and an embedder sees memory
 * after a trap.  So the re-rolled loop L' runs only behind a test, built
 * here in a new block V before the loop, that every access of every
 * iteration lies inside memory (memory never shrinks, and a loop of loads
 * and stores neither grows it nor calls): then no access traps, the copies
 * touch disjoint bytes (rr_disjoint_copies), and the order of the stores
 * of one trip is unobservable.  When the test fails, a copy of the
 * original unrolled loop runs (marked as a checked copy, IR_MD_CHECKED,
 * which the offload stage never takes), then E and the remainder loop as
 * before.
 *
 * The test, for an access at `base + zext(A) + C` (A an i32 expression of
 * the loop, B bytes wide), A(j) = A0 + c * j mod 2^32 at iteration j of
 * L' (c a constant: A's image under one iteration minus A), T iterations:
 * with c >= 0, zext(A0) + c * (T - 1) + C + B <= size; with c < 0,
 * zext(A0) + c * (T - 1) >= 0 and zext(A0) + C + B <= size; in i64, where
 * nothing overflows (zext(A0) < 2^32, |c| < 2^31, T <= 2^32).  Both say
 * that every A(j) computed without wrapping lies in [0, size - C - B], so
 * the i32 value, which wraps only past 2^32 > size, equals it: the access
 * is in bounds.  T == 0 (2^w trips) takes the original loop.
 *
 * Copies matched on folded addresses (rr_folded_addr: clang's pointer
 * walks, `*a++` unrolled by 4 as `a+12, a+8, a+4, a` off one i32 a that
 * steps by 16, where one iteration of the re-rolled loop is zext(a + 4)
 * + 0): copy g's `zext(A_g) + C_g` equals copy 0's `zext(A_0) + C_0` one
 * iteration j = F t + g later modulo 2^32 only.  With U = A_0(j) as above
 * (no wrap: U + C_0 + B <= size), A_g = U - delta_g mod 2^32, delta_g =
 * C_g - C_0; where U >= delta_g (or delta_g <= 0, as U + |delta_g| + C_g
 * = U + C_0 < 2^32) that is U - delta_g itself and copy g's address is U +
 * C_0, the re-rolled loop's.  So the test also asks, per access, that the
 * lowest U over the T iterations is at least floor = max(0, delta_g). */
#include <stdint.h>
#include <string.h>

#include "ir_pass.h"
#include "ir_reroll.h"
#include "twasm_abi.h"

/* ptr = gep i8 base, idx with idx = zext i32 A or (zext i32 A) + C, base
 * loaded from the instance's first field (linear memory's base). */
static bool split_address(LLVMValueRef ptr, LLVMValueRef *base, LLVMValueRef *a, uint64_t *c) {
  if (!LLVMIsAGetElementPtrInst(ptr) || LLVMGetNumOperands(ptr) != 2) return false;
  if (LLVMGetGEPSourceElementType(ptr) != LLVMInt8TypeInContext(LLVMGetTypeContext(LLVMTypeOf(ptr))))
    return false;
  *base = LLVMGetOperand(ptr, 0);
  LLVMValueRef idx = LLVMGetOperand(ptr, 1);
  *c = 0;
  if (LLVMIsAInstruction(idx) && LLVMGetInstructionOpcode(idx) == LLVMAdd &&
      LLVMIsAConstantInt(LLVMGetOperand(idx, 1))) {
    *c = LLVMConstIntGetZExtValue(LLVMGetOperand(idx, 1));
    idx = LLVMGetOperand(idx, 0);
  }
  if (!LLVMIsAZExtInst(idx) || *c > (1ull << 32)) return false;
  *a = LLVMGetOperand(idx, 0);
  if (rr_width(LLVMTypeOf(*a)) != 32) return false;
  LLVMValueRef b = *base;
  return LLVMIsALoadInst(b) && LLVMGetOperand(b, 0) == LLVMGetParam(LLVMGetBasicBlockParent(LLVMGetInstructionParent(b)), 0);
}

/* An access's address folded to 32 bits: the i32 expression A + C of
 * `base + zext(A) + C`, or -1.  Two accesses with the same folded address
 * touch the same bytes when neither `A + C` wraps past 2^32 (the range
 * test's floor, below, sees to it for the copies of a re-rolled loop). */
int rr_folded_addr(rr_pass *p, LLVMValueRef inst, uint64_t *c) {
  LLVMValueRef base, a;
  if (!split_address(LLVMGetOperand(inst, LLVMIsAStoreInst(inst) ? 1 : 0), &base, &a, c)) return -1;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(p->ctx);
  int ea = rr_eval(p, a, 0);
  return ea < 0 ? -1 : rr_poly_add(p, i32, ea, rr_poly_const(p, i32, *c & 0xffffffffu), 1);
}

uint64_t rr_access_bytes(LLVMValueRef inst);
static uint64_t access_bytes(LLVMValueRef inst) { return rr_access_bytes(inst); }
uint64_t rr_access_bytes(LLVMValueRef inst) {
  LLVMTypeRef t = LLVMIsAStoreInst(inst) ? LLVMTypeOf(LLVMGetOperand(inst, 0)) : LLVMTypeOf(inst);
  LLVMTargetDataRef td = LLVMGetModuleDataLayout(LLVMGetGlobalParent(LLVMGetBasicBlockParent(LLVMGetInstructionParent(inst))));
  return LLVMStoreSizeOfType(td, t);
}

/* The constant difference b - a of two i32 expressions, as a signed value. */
bool rr_const_diff(rr_pass *p, int a, int b, int64_t *d);
static bool const_diff(rr_pass *p, int a, int b, int64_t *d) { return rr_const_diff(p, a, b, d); }
bool rr_const_diff(rr_pass *p, int a, int b, int64_t *d) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(p->ctx);
  int n = rr_poly_add(p, i32, b, a, ~0ull);
  if (n < 0) return false;
  const rr_node *x = &p->nodes[n];
  if (x->kind != RR_POLY || x->nt > 1 || (x->nt == 1 && x->t[0].nf != 0)) return false;
  *d = x->nt ? (int64_t)(int32_t)(uint32_t)x->t[0].coeff : 0;
  return true;
}

bool rr_disjoint_copies(rr_pass *p, LLVMValueRef s0, LLVMValueRef s1, unsigned F) {
  LLVMValueRef b0, b1, a0, a1;
  uint64_t c0, c1;
  if (!split_address(LLVMGetOperand(s0, 1), &b0, &a0, &c0) || !split_address(LLVMGetOperand(s1, 1), &b1, &a1, &c1) ||
      b0 != b1)
    return false;
  int64_t d;
  if (!const_diff(p, rr_eval(p, a0, 0), rr_eval(p, a1, 0), &d)) return false;
  d += (int64_t)c1 - (int64_t)c0; /* both sides' bytes */
  uint64_t step = (uint64_t)(d < 0 ? -d : d), bytes = access_bytes(s0);
  /* copies g and g' lie (g - g') * step apart modulo 2^32, at least step
   * and at most (F - 1) * step: apart by `bytes` either way round */
  return bytes == access_bytes(s1) && step >= bytes && step <= (1ull << 32) &&
         (uint64_t)(F - 1) * step + bytes <= (1ull << 32);
}

/* insts[0..F-1]: one load's copies 0..F-1, matched on folded addresses.
 * They are `base + zext(a) + C_g` with one a and C_g = C_0 + g d, d > 0,
 * C_0 + (F - 1) d + B <= 65536: then copy g's address differs from the
 * re-rolled loop's, zext(a + g d) + C_0, only where a + g d wraps, a >
 * 2^32 - 65536, and there copy 0 itself, at a + C_0 in both loops, lies
 * past every memory twasmc allows (TWASM_MAX_PAGES: 4 GiB less a page):
 * both trap in that trip, and with loads only in the loop the memory they
 * leave is the same. */
bool rr_walk_copies(rr_pass *p, const LLVMValueRef *insts, unsigned F) {
  (void)p;
  LLVMValueRef b0, a0;
  uint64_t c0, c1;
  if (F < 2 || !LLVMIsALoadInst(insts[0]) || !split_address(LLVMGetOperand(insts[0], 0), &b0, &a0, &c0)) return false;
  LLVMValueRef b, a;
  if (!split_address(LLVMGetOperand(insts[1], 0), &b, &a, &c1) || b != b0 || a != a0 || c1 <= c0) return false;
  uint64_t d = c1 - c0, bytes = access_bytes(insts[0]);
  if (c0 + (F - 1) * d + bytes > TWASM_PAGE_SIZE) return false;
  for (unsigned g = 1; g < F; g++) {
    uint64_t c;
    if (!LLVMIsALoadInst(insts[g]) || !split_address(LLVMGetOperand(insts[g], 0), &b, &a, &c) || b != b0 ||
        a != a0 || c != c0 + g * d || access_bytes(insts[g]) != bytes)
      return false;
  }
  return true;
}

/* Clones v (an i32 value of the loop L built from its phis) into the
 * builder's block with each phi replaced by its entry value. */
static LLVMValueRef at_entry(rr_pass *p, LLVMValueRef v, LLVMBasicBlockRef L, LLVMBasicBlockRef pre, int depth) {
  if (!LLVMIsAInstruction(v) || LLVMGetInstructionParent(v) != L) return v;
  if (depth > RR_MAX_DEPTH) return NULL;
  if (LLVMIsAPHINode(v)) {
    for (unsigned k = 0; k < LLVMCountIncoming(v); k++)
      if (LLVMGetIncomingBlock(v, k) == pre) return LLVMGetIncomingValue(v, k);
    return NULL;
  }
  if (LLVMIsALoadInst(v) || LLVMIsAStoreInst(v) || LLVMIsACallInst(v) || LLVMGetNumOperands(v) > 3) return NULL;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  if (op != LLVMAdd && op != LLVMSub && op != LLVMMul && op != LLVMShl && op != LLVMOr && op != LLVMAnd &&
      op != LLVMXor)
    return NULL;
  LLVMValueRef ops[2];
  for (int k = 0; k < 2; k++)
    if (!(ops[k] = at_entry(p, LLVMGetOperand(v, (unsigned)k), L, pre, depth + 1))) return NULL;
  return LLVMBuildBinOp(p->b, op, ops[0], ops[1], "reroll.a0");
}

LLVMValueRef rr_at_entry(rr_pass *p, LLVMValueRef v, LLVMBasicBlockRef L, LLVMBasicBlockRef pre) {
  return at_entry(p, v, L, pre, 0);
}

bool rr_split_address(LLVMValueRef ptr, LLVMValueRef *a, uint64_t *c) {
  LLVMValueRef base;
  return split_address(ptr, &base, a, c);
}

/* At the builder: i1, every access of copy 0 (n of them, eff) in bounds in
 * each of the `trips` iterations of the re-rolled loop; NULL if some
 * access is not of the form above.  step: the IVs moved by one iteration. */
LLVMValueRef rr_range_test(rr_pass *p, const rr_effect *eff, int n, const uint64_t *floor, const rr_subst *step,
                           LLVMBasicBlockRef L, LLVMBasicBlockRef pre, LLVMValueRef trips) {
  LLVMBuilderRef b = p->b;
  LLVMTypeRef i64 = LLVMInt64TypeInContext(p->ctx), i8 = LLVMInt8TypeInContext(p->ctx);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(p->ctx, 0);
  LLVMValueRef fn = LLVMGetBasicBlockParent(L);
  LLVMValueRef eight = LLVMConstInt(i64, 8, false);
  LLVMValueRef mem = LLVMBuildLoad2(b, ptr, LLVMBuildInBoundsGEP2(b, i8, LLVMGetParam(fn, 0), &eight, 1, ""), "reroll.mem");
  LLVMValueRef size = LLVMBuildLoad2(b, i64, LLVMBuildInBoundsGEP2(b, i8, mem, &eight, 1, ""), "reroll.size");
  LLVMValueRef t64 = LLVMBuildZExt(b, trips, i64, "");
  LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntNE, trips, LLVMConstNull(LLVMTypeOf(trips)), "reroll.some");
  LLVMValueRef last = LLVMBuildSub(b, t64, LLVMConstInt(i64, 1, false), "");
  for (int i = 0; i < n; i++) {
    LLVMValueRef base, a;
    uint64_t c;
    if (!split_address(LLVMGetOperand(eff[i].inst, eff[i].is_store ? 1 : 0), &base, &a, &c)) return NULL;
    int ea = rr_eval(p, a, 0);
    int64_t d;
    if (ea < 0 || !const_diff(p, ea, rr_subst_apply(p, ea, step, 0), &d)) return NULL;
    LLVMValueRef a0 = at_entry(p, a, L, pre, 0);
    if (!a0) return NULL;
    LLVMValueRef lo = LLVMBuildZExt(b, a0, i64, "");
    LLVMValueRef span = LLVMBuildMul(b, LLVMConstInt(i64, (uint64_t)d, true), last, "");
    LLVMValueRef far = LLVMBuildAdd(b, lo, span, "");
    LLVMValueRef reach = LLVMConstInt(i64, c + access_bytes(eff[i].inst), false);
    LLVMValueRef hi = d >= 0 ? far : lo, in;
    in = LLVMBuildICmp(b, LLVMIntULE, LLVMBuildAdd(b, hi, reach, ""), size, "");
    if (d < 0) in = LLVMBuildAnd(b, in, LLVMBuildICmp(b, LLVMIntSGE, far, LLVMConstNull(i64), ""), "");
    /* folded copies: the lowest A(j) at least floor (see the header) */
    if (floor && floor[i])
      in = LLVMBuildAnd(b, in, LLVMBuildICmp(b, LLVMIntSGE, d >= 0 ? lo : far, LLVMConstInt(i64, floor[i], false), ""),
                        "");
    ok = LLVMBuildAnd(b, ok, in, "reroll.in");
  }
  return ok;
}

/* A copy of the one-block loop L entered from V (L's phis' entry values
 * from pre) that leaves to a new block going to E; its back branch is
 * marked as a checked copy.  *exit gets that block, *map_of the clone's
 * values in L's order (n_map of them). */
LLVMBasicBlockRef rr_clone_loop(rr_pass *p, LLVMBasicBlockRef L, LLVMBasicBlockRef pre, LLVMBasicBlockRef V,
                                LLVMBasicBlockRef E, LLVMBasicBlockRef *exit, LLVMValueRef *from, LLVMValueRef *to,
                                int cap, int *n_map) {
  LLVMBasicBlockRef C = LLVMInsertBasicBlockInContext(p->ctx, E, "reroll.kept");
  LLVMBasicBlockRef X = LLVMInsertBasicBlockInContext(p->ctx, E, "reroll.kept.exit");
  int n = 0;
  LLVMPositionBuilderAtEnd(p->b, C);
  for (LLVMValueRef i = LLVMGetFirstInstruction(L); i; i = LLVMGetNextInstruction(i)) {
    if (n == cap) return NULL;
    LLVMValueRef c = LLVMInstructionClone(i);
    LLVMInsertIntoBuilder(p->b, c);
    from[n] = i, to[n] = c, n++;
  }
  /* operands: L's values -> the clone's; phis rebuilt (blocks differ) */
  for (int k = 0; k < n; k++) {
    LLVMValueRef c = to[k];
    if (LLVMIsAPHINode(c)) continue;
    for (int o = 0; o < LLVMGetNumOperands(c); o++) {
      LLVMValueRef v = LLVMGetOperand(c, (unsigned)o);
      for (int m = 0; m < n; m++)
        if (from[m] == v) LLVMSetOperand(c, (unsigned)o, to[m]);
    }
  }
  for (int k = 0; k < n && LLVMIsAPHINode(from[k]); k++) {
    LLVMValueRef old = from[k];
    LLVMPositionBuilderBefore(p->b, to[k]);
    LLVMValueRef phi = LLVMBuildPhi(p->b, LLVMTypeOf(old), "reroll.kept.phi");
    for (unsigned e = 0; e < LLVMCountIncoming(old); e++) {
      LLVMBasicBlockRef in = LLVMGetIncomingBlock(old, e);
      LLVMValueRef v = LLVMGetIncomingValue(old, e);
      for (int m = 0; m < n; m++)
        if (from[m] == v) v = to[m];
      LLVMBasicBlockRef bb = in == L ? C : in == pre ? V : NULL;
      if (!bb) return NULL;
      LLVMAddIncoming(phi, &v, &bb, 1);
    }
    LLVMReplaceAllUsesWith(to[k], phi);
    LLVMInstructionEraseFromParent(to[k]);
    to[k] = phi;
  }
  /* the back branch: to C or X */
  LLVMValueRef term = LLVMGetBasicBlockTerminator(C);
  for (unsigned s = 0; s < LLVMGetNumSuccessors(term); s++)
    LLVMSetSuccessor(term, s, LLVMGetSuccessor(term, s) == L ? C : X);
  unsigned kind = LLVMGetMDKindIDInContext(p->ctx, IR_MD_CHECKED, strlen(IR_MD_CHECKED));
  LLVMSetMetadata(term, kind, LLVMMDNodeInContext(p->ctx, NULL, 0));
  LLVMPositionBuilderAtEnd(p->b, X);
  LLVMBuildBr(p->b, E);
  *exit = X;
  *n_map = n;
  return C;
}

LLVMBasicBlockRef rr_test_begin(rr_pass *p, LLVMBasicBlockRef L) {
  LLVMBasicBlockRef T = LLVMAppendBasicBlockInContext(p->ctx, LLVMGetBasicBlockParent(L), "reroll.test");
  LLVMPositionBuilderAtEnd(p->b, T);
  return T;
}

bool rr_test_end(rr_pass *p, LLVMBasicBlockRef T, LLVMValueRef ok, LLVMValueRef at) {
  if (ok) {
    LLVMPositionBuilderBefore(p->b, at);
    for (LLVMValueRef i = LLVMGetFirstInstruction(T), next; i; i = next) {
      next = LLVMGetNextInstruction(i);
      LLVMInstructionRemoveFromParent(i);
      LLVMInsertIntoBuilder(p->b, i);
    }
  }
  LLVMDeleteBasicBlock(T);
  return ok != NULL;
}
