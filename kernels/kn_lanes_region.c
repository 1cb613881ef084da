/* kn_lanes_region.c: a v128 loop inside another loop read, with the scalar
 * code clang puts beside it, as the one scalar loop over j in [0, n) they
 * implement (issue 19 item 4; docs/PERFORMANCE.md "vector loops inside
 * other loops").
 *
 * At -O2 -msimd128 clang turns `for (j = 0; j < n; j++) C[j] = f(j)` inside
 * an outer loop into a region of the outer loop's body:
 *
 *   if (n < 1) goto done;                      (the guard G)
 *   s = 0;
 *   if (!(n < L || overlap)) {                 (the skip S)
 *     for (c = M; c != 0; c -= L) lanes ...;   (V: M = n & ~(L-1), L lanes)
 *     if (M == n) goto done;                   (the test E)
 *     s = M;
 *   }
 *   if (n & 1) { C[s] = f(s); s' = s | 1; } else s' = s;   (the peel P)
 *   if (s == n - 1) goto done;                 (the test D)
 *   for (c = n - s'; c != 0; c -= 2) two copies of the body;  (R)
 *   done:
 *
 * and the bounds pass may copy V and R (fast and checked copies with one
 * `!twasm.loop`).  What is proved here before the region is presented to
 * the recognisers as the scalar loop (its fast remainder copy standing for
 * it, kr_region_find and kn_recog.c):
 *
 *   (a) the copies: every loop of the region is one of two Wasm loops
 *       (the same `!twasm.loop` node): V, whose stores are vectors, and R,
 *       whose stores are scalars.
 *   (b) coverage, from the shape above, checked block by block: V counts
 *       M = n & (2^31 - L) down by L to 0, so it runs M / L trips when
 *       entered, and it is entered only when n >= L (the skip S tests
 *       n < L), so M >= L; its lanes store [0, M) (by (c)).  s joins M
 *       after V and 0 on the skip.  E leaves with everything stored when
 *       M == n.  s is even (0, or a multiple of L >= 2); P runs exactly when
 *       n is odd and stores j = s, s' = s + 1; so n - s' is even.  D leaves
 *       when s == n - 1, which (s even) happens only when n is odd: P
 *       stored the last element.  Otherwise n - s' >= 2 (n - s' = 0 would
 *       need M == n, or n == 1 with s == 0, both left before), and R, which
 *       counts n - s' down by 2, runs (n - s') / 2 trips storing
 *       [s', n) (two copies a trip, by (c)).  G leaves when n < 1, when the
 *       scalar loop runs no iteration either.  So on every path each
 *       j in [0, n) is stored exactly once, and nothing else.
 *   (c) every store (each lane of V's, P's, each copy of R's, in every
 *       copy of the loops) is the same expression at its own j: built as
 *       recogniser nodes with j as the inner counter (V's lane l of trip t
 *       at j = L t + l, P's at j = s, R's copy u of trip t at
 *       j = s' + 2 t + u, read with s' = 0 after checking that R's
 *       counters start at their step per j times s' plus a value that
 *       does not vary with s') and compared node by node (kr_region_prove).
 *   (d) each j reads the stored array only at the element it stores, and
 *       the other arrays do not overlap it: the recognisers' own checks on
 *       the representative and the runtime's overlap check before a
 *       launch.  Then V, which loads its lanes before storing them, and
 *       the order of the parts do not matter.
 *
 * A sum region is the same shape around a row sum `s += f(j)` (an i32
 * or i64 sum clang keeps in i32x4 or i64x2 lanes): V and R store nothing
 * and add into accumulators, V's lanes are added up after V (block E) and
 * R continues that sum; (e) in sum_shape proves that the sum after the
 * region is, on every path, the scalar loop's (integer addition wraps and
 * is associative and commutative, so the lanes' order does not matter),
 * and kr_region_prove compares each lane's term with R's.  Float sums in
 * lanes are no sum region (their order differs from the scalar loop's).
 *
 * A remainder unrolled by U >= 4 has, instead of the peel, a prologue
 * loop P (a Wasm loop of its own, in its bounds copies) before R:
 *
 *   K = (n - s) & (U-1)    (or n & (U-1) when U divides L)
 *   if (K != 0) for (c = K; c != 0; c--) { C[j] = f(j); j++ }  (P, j from s)
 *   s' = s + K;                                (block D)
 *   if (s - n >u -U) goto done;                (n - s in [1, U-1])
 *   for (c = n - s'; c != 0; c -= U) U copies of the body;  (R)
 *
 *   (b') s is 0 (from the skip, n >= 1 by G) or M != n (from E), so
 *   n - s >= 1; K = (n - s) mod U (with the n & (U-1) form, s is 0 or a
 *   multiple of L, so of U).  P runs K trips storing [s, s + K).  D
 *   leaves when n - s < U, then K = n - s: everything stored.
 *   Otherwise n - s' = n - s - K is a multiple of U and >= 1, so >= U,
 *   and R runs (n - s') / U trips storing [s', n).  P's store is
 *   compared at j = s + t, its counters read at s = 0 (prol_shape,
 *   kr_region_prove, prol_j in kn_recog_affine.c).
 *
 * A triangle's row (syrk's `j <= i`): n is the row loop's widened i + 1,
 * the tests read that i64 counter, and no guard G stands before S (n >= 1);
 * tri_count has what each test then means and why, and kr_region_tri
 * hands the region to the product over a triangle, the only taker.
 *
 * j from j0: a row `for (j = j0; j < e; j++)`, j0 a constant in [1, 64]
 * (a stencil's interior from 1 to n - 1), one copy a trip (U = 1: clang's
 * remainder after a vector loop is not unrolled), no P, no sum, no
 * triangle.  clang counts n = e - j0 (`add x, k`, e = x + k + j0 as
 * plus_const reads both, modulo 2^32), M = n & -L or n & (2^31 - L), and
 * moves the region by j0: s = phi(M + j0 from E, j0 from the skips), R
 * runs j from s' = s to e (it counts e - s' down, `sub e, s'` or `add
 * (xor s', -1), e + 1`, or an IV up to e).  Read with jj = j - j0:
 *
 *   (b'') G (below) leaves exactly when n < 1; past it n >= 1, so n's
 *   sign bit is 0 and n & -L = n & (2^31 - L) (the -L mask is taken only
 *   with a G).  s - j0 is 0 on the skips and M after V, the shape (b)
 *   with jj for j: V's lanes store jj in [0, M), E leaves when M == n,
 *   and R runs e - s' = n - (s - j0) trips (modulo 2^32, in [1, n])
 *   storing jj in [s - j0, n).  So each jj in [0, n), j = j0 + jj in
 *   [j0, e), is stored once on every path, and nothing else.  The nest
 *   presents the scalar loop over jj from 0 while jj < n; V's counters
 *   start at jj = 0's values as before, R's are read at s' = j0
 *   (kn_recog_affine.c kr_region_iv and sprime_drop), and (c) compares
 *   them lane by lane: a misread j0 stores other elements there.
 *   A counter of R may start at 0 with s' in the row base it is added to
 *   (`local + (s' + i w) * 4 + out`): its s' part must then equal its j
 *   part, checked in sprime_drop as for any address of R.
 *   G is `n < 1`, `x < 1 - k` or `x > -k` (either edge into S) on n = x +
 *   k, k <= 0; where x >= 1 - k, x + k does not wrap and n >= 1.  Where
 *   G leaves and x + k wraps (x < INT_MIN - k, no nsw on the add) n reads
 *   positive while the region runs nothing: the trip is then bound with
 *   G's condition (kr_region.guard, a live value of the host) and reads
 *   0 where G leaves.  A G before the nest needs none of this: the nest
 *   does not run where it leaves.
 *
 * Anything else (another order of the blocks, a second peel, a guard that
 * skips part of the range, a float sum in lanes) is not a region: the
 * nest is refused with the reason kn_lanes.c gives. */
#include <string.h>

#include "ir_pass.h"
#include "kn_internal.h"

static unsigned md_kind(LLVMValueRef v, const char *name) {
  return LLVMGetMDKindIDInContext(LLVMGetTypeContext(LLVMTypeOf(v)), name, (unsigned)strlen(name));
}

static LLVMValueRef latch_branch(const kr_ctx *c, const ir_loop *l) {
  return LLVMGetBasicBlockTerminator(c->cfg->blocks[l->latches[0]].bb);
}

/* The Wasm loop a loop comes from: its latch's `!twasm.loop` node. */
static LLVMValueRef wasm_loop(const kr_ctx *c, const ir_loop *l) {
  LLVMValueRef br = latch_branch(c, l);
  return br ? LLVMGetMetadata(br, md_kind(br, IR_MD_LOOP)) : NULL;
}

/* Stores of l: how many, and whether they are vectors (all or none). */
static int loop_stores(const kr_ctx *c, const ir_loop *l, bool *vector, LLVMValueRef *out, int max) {
  int n = 0, nvec = 0;
  for (int b = 0; b < l->nbody; b++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(c->cfg->blocks[l->body[b]].bb); i;
         i = LLVMGetNextInstruction(i)) {
      if (!LLVMIsAStoreInst(i)) continue;
      if (n == max) return -1;
      nvec += LLVMGetTypeKind(LLVMTypeOf(LLVMGetOperand(i, 0))) == LLVMVectorTypeKind;
      out[n++] = i;
    }
  if (nvec != 0 && nvec != n) return -1;
  *vector = nvec > 0;
  return n;
}

static bool is_const(LLVMValueRef v, int64_t k) {
  return v && LLVMIsAConstantInt(v) && LLVMConstIntGetSExtValue(v) == k;
}

static bool is_op(LLVMValueRef v, LLVMOpcode op) {
  return v && LLVMIsAInstruction(v) && LLVMGetInstructionOpcode(v) == op;
}

/* v read as x + k, k a constant: `add x, k`, `sub x, k`, `or disjoint x,
 * k` (an add: no bits in common), up to four of them; x is v and k 0
 * for any other value.  k sums i32 constants: no int64 overflow. */
static LLVMValueRef plus_const(LLVMValueRef v, int64_t *k) {
  *k = 0;
  for (int n = 0; n < 4 && v && LLVMIsAInstruction(v) && LLVMGetNumOperands(v) == 2; n++) {
    LLVMValueRef c = LLVMGetOperand(v, 1);
    if (!LLVMIsAConstantInt(c)) break;
    int64_t x = LLVMConstIntGetSExtValue(c);
    if (is_op(v, LLVMAdd) || (is_op(v, LLVMOr) && LLVMGetIsDisjoint(v))) *k += x;
    else if (is_op(v, LLVMSub)) *k -= x;
    else break;
    v = LLVMGetOperand(v, 0);
  }
  return v;
}

/* The scalar loop's first j when its end e is n + j0 (i32, wrapping):
 * e and n the same value plus constants (plus_const), j0 = their
 * difference in [0, KR_J0_MAX]; -1 otherwise.  ("j from j0" in the
 * header.) */
#define KR_J0_MAX 64
static int64_t first_j(LLVMValueRef e, int64_t add, LLVMValueRef n) {
  if (e == n && add == 0) return 0;
  int64_t ke, kn;
  if (plus_const(e, &ke) != plus_const(n, &kn)) return -1;
  int64_t j0 = (int32_t)(uint32_t)(ke + add - kn);
  return j0 >= 0 && j0 <= KR_J0_MAX ? j0 : -1;
}

/* The i32 start of a counter: its start, or x for an i64 counter LLVM
 * widened from an i32 one starting at x (kr_region_widened_start); NULL
 * for any other. */
static LLVMValueRef start32(const ir_iv *iv) {
  LLVMValueRef s = kr_region_widened_start(iv);
  return s && LLVMGetIntTypeWidth(LLVMTypeOf(s)) == 32 ? s : NULL;
}

/* The latch's compare when the latch is a conditional branch that stays in
 * the loop while the compare's operands differ (`eq` leaving, `ne`
 * staying); NULL otherwise. */
static LLVMValueRef stays_while_differ(const kr_ctx *c, const ir_loop *l) {
  LLVMValueRef br = latch_branch(c, l);
  if (!br || !LLVMIsABranchInst(br) || !LLVMIsConditional(br)) return NULL;
  LLVMValueRef cond = LLVMGetCondition(br);
  if (!LLVMIsAICmpInst(cond)) return NULL;
  LLVMIntPredicate p = LLVMGetICmpPredicate(cond);
  LLVMBasicBlockRef header = c->cfg->blocks[l->header].bb;
  bool stays = (p == LLVMIntEQ && LLVMGetSuccessor(br, 1) == header) ||
               (p == LLVMIntNE && LLVMGetSuccessor(br, 0) == header);
  return stays ? cond : NULL;
}

/* The loop counts `start` down by `step` to 0: an IV of step -step whose
 * next value the latch compares with 0, leaving when equal (other exits
 * only to traps); *start its start. */
static bool counts_down(const kr_ctx *c, const ir_loop *l, int64_t step, LLVMValueRef *start) {
  LLVMValueRef cond = stays_while_differ(c, l); /* stays while next != 0 */
  if (!cond || !is_const(LLVMGetOperand(cond, 1), 0)) return false;
  for (int k = 0; k < l->nivs; k++) {
    const ir_iv *iv = &l->ivs[k];
    if (iv->next == LLVMGetOperand(cond, 0) && !iv->step_inv && iv->step == -step && (*start = start32(iv)))
      return true;
  }
  return false;
}

/* A triangle's R (r->wide): an i32 IV from s' up by U while zext(next)
 * differs from wide (`icmp eq i64 wide, zext(j + U)`): the same trips as
 * j against n = trunc(wide), wide being below 2^32 (tri_count). */
static bool counts_up_to_row(const kr_ctx *c, const kr_region *r, const ir_loop *l, int U, LLVMValueRef *start) {
  LLVMValueRef cond = stays_while_differ(c, l);
  if (!cond) return false;
  LLVMValueRef a = LLVMGetOperand(cond, 0), b = LLVMGetOperand(cond, 1), x = a == r->wide ? b : b == r->wide ? a : NULL;
  if (!x || !LLVMIsAZExtInst(x)) return false;
  x = LLVMGetOperand(x, 0);
  for (int k = 0; k < l->nivs; k++) {
    const ir_iv *iv = &l->ivs[k];
    if (iv->next == x && !iv->step_inv && iv->step == U && iv->bits == 32 && (*start = start32(iv))) return true;
  }
  return false;
}

/* R runs j from s' (*start) to e = n + j0 by U (*j0, first_j; 0 for a
 * triangle's row): it counts e - s' down by U to 0 (clang's `sub e,
 * s'`), or an IV from s' up by U until it equals e. */
static bool remainder_from(const kr_ctx *c, const kr_region *r, const ir_loop *l, int U, LLVMValueRef n,
                           LLVMValueRef *start, int64_t *j0) {
  LLVMValueRef x;
  *j0 = 0;
  if (r->wide && counts_up_to_row(c, r, l, U, start)) return true;
  if (counts_down(c, l, U, &x)) {
    if (is_op(x, LLVMSub)) {
      *start = LLVMGetOperand(x, 1);
      return (*j0 = first_j(LLVMGetOperand(x, 0), 0, n)) >= 0;
    }
    /* `add (xor s', -1), X`: ~s' = -s' - 1, so X - 1 - s', e = X - 1 */
    for (int o = 0; is_op(x, LLVMAdd) && o < 2; o++) {
      LLVMValueRef nx = LLVMGetOperand(x, (unsigned)o);
      if (!is_op(nx, LLVMXor) || !is_const(LLVMGetOperand(nx, 1), -1)) continue;
      *start = LLVMGetOperand(nx, 0);
      return (*j0 = first_j(LLVMGetOperand(x, (unsigned)(1 - o)), -1, n)) >= 0;
    }
    return false;
  }
  LLVMValueRef br = latch_branch(c, l);
  if (!br || !LLVMIsABranchInst(br) || !LLVMIsConditional(br)) return false;
  LLVMValueRef cond = LLVMGetCondition(br);
  LLVMBasicBlockRef header = c->cfg->blocks[l->header].bb;
  if (!LLVMIsAICmpInst(cond)) return false;
  /* an i64 counter widened from s' (start32) against zext(n): both
   * below 2^32, the same trips as the i32 counter against n when
   * s' <= n, n - s' a multiple of U (kr_region_find's shape) */
  LLVMValueRef bound = LLVMGetOperand(cond, 1);
  bool wide = LLVMGetIntTypeWidth(LLVMTypeOf(bound)) == 64;
  if (wide && LLVMIsAZExtInst(bound)) bound = LLVMGetOperand(bound, 0);
  if ((*j0 = first_j(bound, 0, n)) < 0) return false;
  LLVMIntPredicate p = LLVMGetICmpPredicate(cond);
  if (!((p == LLVMIntEQ && LLVMGetSuccessor(br, 1) == header) || (p == LLVMIntNE && LLVMGetSuccessor(br, 0) == header)))
    return false;
  for (int k = 0; k < l->nivs; k++) {
    const ir_iv *iv = &l->ivs[k];
    if (iv->next == LLVMGetOperand(cond, 0) && !iv->step_inv && iv->step == U && iv->bits == (wide ? 64 : 32) &&
        (*start = start32(iv)))
      return true;
  }
  return false;
}

/* A triangle's test E: `wide == wide & (2^32 - L)` (i64), which is
 * M == n for wide below 2^32 (tri_count). */
static bool wide_all_lanes(const kr_region *r, LLVMValueRef cond) {
  if (!r->wide || !LLVMIsAICmpInst(cond) || LLVMGetICmpPredicate(cond) != LLVMIntEQ) return false;
  LLVMValueRef a = LLVMGetOperand(cond, 0), b = LLVMGetOperand(cond, 1), m = a == r->wide ? b : b == r->wide ? a : NULL;
  return is_op(m, LLVMAnd) && LLVMGetOperand(m, 0) == r->wide &&
         is_const(LLVMGetOperand(m, 1), (int64_t)(0xffffffffu & ~(r->lanes - 1)));
}

/* Follows single-successor blocks from b (LCSSA exit blocks). */
static int straight(const kr_ctx *c, int b) {
  for (int n = 0; n < 8 && c->cfg->blocks[b].nsuccs == 1; n++) b = c->cfg->blocks[b].succs[0];
  return b;
}

static bool traps(const kr_ctx *c, int b) {
  for (LLVMValueRef i = LLVMGetFirstInstruction(c->cfg->blocks[b].bb); i; i = LLVMGetNextInstruction(i))
    if (LLVMIsACallInst(i)) return strcmp(ir_callee_name(i), "twasm_rt_trap") == 0;
  return false;
}

/* Where a loop's exits go, after straight-line blocks, traps aside: one
 * block, or -1. */
static int exit_block(const kr_ctx *c, const ir_loop *l) {
  int to = -1;
  for (int e = 0; e < l->nexits; e++) {
    int x = straight(c, l->exits[e].to);
    if (traps(c, x)) continue;
    if (to >= 0 && to != x) return -1;
    to = x;
  }
  return to;
}

/* The conditional branch ending block b: its condition, and the blocks
 * taken when it is true and false (after straight-line blocks). */
static bool branch_of(const kr_ctx *c, int b, LLVMValueRef *cond, int *on_true, int *on_false) {
  LLVMValueRef br = LLVMGetBasicBlockTerminator(c->cfg->blocks[b].bb);
  if (!br || !LLVMIsABranchInst(br) || !LLVMIsConditional(br)) return false;
  *cond = LLVMGetCondition(br);
  *on_true = straight(c, ir_cfg_index(c->cfg, LLVMGetSuccessor(br, 0)));
  *on_false = straight(c, ir_cfg_index(c->cfg, LLVMGetSuccessor(br, 1)));
  return true;
}

/* cond is `icmp pred x, k` (or the swapped form) for this x and k. */
static bool compares(LLVMValueRef cond, LLVMIntPredicate pred, LLVMValueRef x, LLVMValueRef k) {
  if (!cond || !LLVMIsAICmpInst(cond)) return false;
  LLVMValueRef a = LLVMGetOperand(cond, 0), b = LLVMGetOperand(cond, 1);
  LLVMIntPredicate p = LLVMGetICmpPredicate(cond);
  bool same_k = LLVMIsAConstantInt(k) ? is_const(b, LLVMConstIntGetSExtValue(k)) : b == k;
  bool same_k_swapped = LLVMIsAConstantInt(k) ? is_const(a, LLVMConstIntGetSExtValue(k)) : a == k;
  return (a == x && same_k && p == pred) || (b == x && same_k_swapped && ir_swapped_pred(p) == pred);
}

/* n = `add x, k` (k <= 0, the count of a loop from j0, `for (j = 1; j
 * < w - 1; j++)`: n = w - 2, which clang guards as `w > 2` or `w < 3`):
 * x, *k, *nsw n's flag; NULL otherwise.  Wherever x >= 1 - k, x + k
 * does not wrap (x + k <= INT_MAX + k) and n = x + k >= 1; where x <
 * 1 - k, n < 1 unless x + k wraps (x < INT_MIN - k), which nsw (LLVM
 * put it where it does not) excludes. */
static LLVMValueRef count_base(LLVMValueRef n, int64_t *k, bool *nsw) {
  if (!is_op(n, LLVMAdd) || !LLVMIsAConstantInt(LLVMGetOperand(n, 1))) return NULL;
  *k = LLVMConstIntGetSExtValue(LLVMGetOperand(n, 1));
  *nsw = LLVMGetNSW(n);
  return *k <= 0 ? LLVMGetOperand(n, 0) : NULL;
}

/* The guard G: true when n < 1 (`n < 1`, `n <= 0`, or on n = x + k
 * (count_base) `x < 1 - k`, `x <= -k`).  *exact: true exactly when n <
 * 1; otherwise (x + k without nsw) also when x + k wraps, where n is
 * positive: the region then runs nothing while n says otherwise, which
 * the kernel's trip, read as 0 when G holds (kr_region.guard), keeps
 * exact. */
static bool none_when_true(LLVMValueRef cond, LLVMValueRef n, bool *exact) {
  LLVMValueRef one = LLVMConstInt(LLVMTypeOf(n), 1, 0), zero = LLVMConstInt(LLVMTypeOf(n), 0, 0);
  *exact = true;
  if (compares(cond, LLVMIntSLT, n, one) || compares(cond, LLVMIntSLE, n, zero)) return true;
  int64_t k;
  LLVMValueRef x = count_base(n, &k, exact);
  return x && (compares(cond, LLVMIntSLT, x, LLVMConstInt(LLVMTypeOf(n), (unsigned long long)(1 - k), 1)) ||
               compares(cond, LLVMIntSLE, x, LLVMConstInt(LLVMTypeOf(n), (unsigned long long)-k, 1)));
}

/* A guard G's other form: true when n >= 1 (`n > 0`, `n >= 1`, on n =
 * x + k `x > -k`, `x >= 1 - k`, where x + k does not wrap); *exact as
 * for none_when_true (false exactly when n < 1). */
static bool some_when_true(LLVMValueRef cond, LLVMValueRef n, bool *exact) {
  if (!cond || !LLVMIsAICmpInst(cond)) return false;
  LLVMIntPredicate p = LLVMGetICmpPredicate(cond);
  LLVMValueRef a = LLVMGetOperand(cond, 0), b = LLVMGetOperand(cond, 1);
  int64_t k = 0;
  LLVMValueRef x = count_base(n, &k, exact);
  for (int side = 0; side < 2; side++) {
    LLVMValueRef v = side ? b : a, kk = side ? a : b;
    LLVMIntPredicate q = side ? ir_swapped_pred(p) : p; /* v q kk */
    if (!LLVMIsAConstantInt(kk)) continue;
    int64_t K = LLVMConstIntGetSExtValue(kk);
    /* v q K means v >= lo */
    int64_t lo = q == LLVMIntSGT ? K + 1 : q == LLVMIntSGE ? K : INT64_MIN;
    if (lo == INT64_MIN) continue;
    if (v == n && lo == 1) return *exact = true;
    if (x && v == x && lo == 1 - k) return true;
  }
  return false;
}

/* G before the nest the other way round: some_when_true alone or and'ed
 * with other conditions (its true side, the one into the nest, then has
 * n >= 1). */
static bool some_when_all(LLVMValueRef cond, LLVMValueRef n, int depth) {
  bool exact;
  if (depth > 4 || !cond || !LLVMIsAInstruction(cond)) return false;
  if (LLVMIsAICmpInst(cond)) return some_when_true(cond, n, &exact);
  /* `and a, b` or its select form `select a, b, false`: either operand */
  if (is_op(cond, LLVMAnd) || (is_op(cond, LLVMSelect) && is_const(LLVMGetOperand(cond, 2), 0)))
    return some_when_all(LLVMGetOperand(cond, 0), n, depth + 1) || some_when_all(LLVMGetOperand(cond, 1), n, depth + 1);
  return false;
}

/* G before the nest: true when n < 1, alone or or'ed (`or`, `select c,
 * true, x`) with other conditions (-O3 tests every count of the nest at
 * once: `m < 1 || k < 1 || n < 1`).  Its false side, the only one into
 * the nest, then has n >= 1; the other conditions only keep the whole
 * nest from running, which the nest's own versioning keeps as it is. */
static bool none_when_any(LLVMValueRef cond, LLVMValueRef n, int depth) {
  bool exact;
  if (none_when_true(cond, n, &exact)) return true;
  if (depth > 4 || !cond || !LLVMIsAInstruction(cond)) return false;
  if (is_op(cond, LLVMOr))
    return none_when_any(LLVMGetOperand(cond, 0), n, depth + 1) || none_when_any(LLVMGetOperand(cond, 1), n, depth + 1);
  if (is_op(cond, LLVMSelect) && is_const(LLVMGetOperand(cond, 1), -1))
    return none_when_any(LLVMGetOperand(cond, 0), n, depth + 1) || none_when_any(LLVMGetOperand(cond, 2), n, depth + 1);
  return false;
}

/* One test the skip S is true on (neg: false on): `n < K` (K >= L), and
 * `x != 1` (x a live value, into *unit).  Anything else only skips V
 * more often, which the rest of the region covers. */
static bool skip_leaf(const kr_ctx *c, LLVMValueRef cmp, bool neg, LLVMValueRef n, unsigned lanes,
                      LLVMValueRef *unit) {
  LLVMValueRef a = LLVMGetOperand(cmp, 0), b = LLVMGetOperand(cmp, 1);
  LLVMIntPredicate p = LLVMGetICmpPredicate(cmp);
  if (neg) p = ir_inverse_pred(p);
  if (LLVMIsAConstantInt(a) && !LLVMIsAConstantInt(b)) {
    LLVMValueRef t = a;
    a = b;
    b = t;
    p = ir_swapped_pred(p);
  }
  if (!LLVMIsAConstantInt(b)) return false;
  int64_t k = LLVMConstIntGetSExtValue(b);
  /* (`n == 1` with L = 2: n < 2, since n >= 1 wherever S runs, the guard
   * G or a triangle's row count being required before it) */
  if (a == n) return ((p == LLVMIntULT || p == LLVMIntSLT) && k >= (int64_t)lanes) ||
                     ((p == LLVMIntULE || p == LLVMIntSLE) && k + 1 >= (int64_t)lanes) ||
                     (p == LLVMIntEQ && k == 1 && lanes <= 2);
  if (p == LLVMIntNE && k == 1 && !*unit && !ir_loop_defines(kr_nest(c), a, c->cfg)) *unit = a;
  return false;
}

/* Whether integer v is 0 or 1: `x & 1`, an i1 extended, or, and, xor
 * and phis of such values and constants 0 and 1. */
static bool is_bit(LLVMValueRef v, int depth) {
  if (!v || depth > 6) return false;
  if (LLVMIsAConstantInt(v)) return LLVMConstIntGetZExtValue(v) <= 1;
  if (LLVMIsAZExtInst(v)) return LLVMGetIntTypeWidth(LLVMTypeOf(LLVMGetOperand(v, 0))) == 1;
  if (is_op(v, LLVMAnd) && is_const(LLVMGetOperand(v, 1), 1)) return true;
  if (is_op(v, LLVMAnd)) return is_bit(LLVMGetOperand(v, 0), depth + 1) || is_bit(LLVMGetOperand(v, 1), depth + 1);
  if (is_op(v, LLVMOr) || is_op(v, LLVMXor))
    return is_bit(LLVMGetOperand(v, 0), depth + 1) && is_bit(LLVMGetOperand(v, 1), depth + 1);
  if (LLVMIsAPHINode(v)) {
    for (unsigned i = 0; i < LLVMCountIncoming(v); i++)
      if (LLVMGetIncomingValue(v, i) == v || !is_bit(LLVMGetIncomingValue(v, i), depth + 1)) return false;
    return LLVMCountIncoming(v) > 0;
  }
  return false;
}

/* The skip S's condition (neg: its negation), read as tests or'ed
 * together (`or`, `select c, true, x`, and under a negation `and`,
 * `select c, x, false`; `xor` with true negates; `trunc` to i1 reads the
 * low bit, which `or`, `and`, `xor` and `zext` of an i1 keep bit-wise,
 * as `x & 1` and `x == 0`, `x != 0` of an x that is 0 or 1 do):
 * true when one of them is `n < K` for a K >= L, so that V runs only when
 * n >= L; a test `x != 1` found on the way is *unit (V runs only when x
 * == 1).  clang's skips: `n < K` or'ed with its alias check, `n > K - 1`
 * and'ed with it (false enters J), `~zext(n >u 3 & x == 1)` truncated
 * or masked with 1 and tested `== 0` (the versioning on a stride of 1,
 * or'ed with the alias check). */
static bool skip_reads(const kr_ctx *c, LLVMValueRef cond, bool neg, LLVMValueRef n, unsigned lanes,
                       LLVMValueRef *unit, int depth) {
  if (depth > 8 || !cond || !LLVMIsAInstruction(cond)) return false;
  LLVMValueRef a = LLVMGetNumOperands(cond) > 0 ? LLVMGetOperand(cond, 0) : NULL;
  /* `x == 0` / `x != 0` of an i32 x that is 0 or 1: x's low bit */
  if (LLVMIsAICmpInst(cond) && is_const(LLVMGetOperand(cond, 1), 0) && is_bit(a, 0) &&
      (LLVMGetICmpPredicate(cond) == LLVMIntEQ || LLVMGetICmpPredicate(cond) == LLVMIntNE))
    return skip_reads(c, a, neg ^ (LLVMGetICmpPredicate(cond) == LLVMIntEQ), n, lanes, unit, depth + 1);
  if (LLVMIsAICmpInst(cond)) return skip_leaf(c, cond, neg, n, lanes, unit);
  /* x & k, k odd: x's low bit */
  if (is_op(cond, LLVMAnd) && LLVMIsAConstantInt(LLVMGetOperand(cond, 1)) &&
      (LLVMConstIntGetZExtValue(LLVMGetOperand(cond, 1)) & 1))
    return skip_reads(c, a, neg, n, lanes, unit, depth + 1);
  if ((LLVMIsATruncInst(cond) && LLVMGetIntTypeWidth(LLVMTypeOf(cond)) == 1) ||
      (LLVMIsAZExtInst(cond) && LLVMGetIntTypeWidth(LLVMTypeOf(a)) == 1))
    return skip_reads(c, a, neg, n, lanes, unit, depth + 1);
  if (is_op(cond, LLVMXor) && LLVMIsAConstantInt(LLVMGetOperand(cond, 1)))
    return skip_reads(c, a, neg ^ (LLVMConstIntGetZExtValue(LLVMGetOperand(cond, 1)) & 1), n, lanes, unit, depth + 1);
  bool any = !neg && (is_op(cond, LLVMOr) || (is_op(cond, LLVMSelect) && is_const(LLVMGetOperand(cond, 1), -1)));
  bool all = neg && (is_op(cond, LLVMAnd) || (is_op(cond, LLVMSelect) && is_const(LLVMGetOperand(cond, 2), 0)));
  if (!any && !all) return false;
  LLVMValueRef x = LLVMGetOperand(cond, is_op(cond, LLVMSelect) ? (any ? 2 : 1) : 1);
  bool below = skip_reads(c, a, neg, n, lanes, unit, depth + 1);
  return skip_reads(c, x, neg, n, lanes, unit, depth + 1) || below;
}

static bool fail(kr_ctx *c, const char *why) {
  c->reason = why;
  return false;
}

#define KR_SKIPS 4
#define REGION_FAIL "vector (SIMD) loop inside another loop: not the shape of a vector loop and its scalar remainder"

/* Whether x op x == x: a lane may then be combined more than once. */
static bool idempotent(kn_red_op op) {
  return op == KN_RED_AND || op == KN_RED_OR || op == KN_RED_SMIN || op == KN_RED_SMAX || op == KN_RED_UMIN ||
         op == KN_RED_UMAX;
}

/* The terms a sum adds to phi on its way to v, in the order added: v =
 * add(add(phi, t0), t1) (operands of each add in either order, the inner
 * add used once), at most KR_SUM_TERMS of them; 0 when v is no such chain.
 * "add" is v's own reduction operator (kr_red_op), the same at every link. */
#define KR_SUM_TERMS 2
static int sum_chain(const ir_loop *l, const kr_ctx *c, LLVMValueRef v, LLVMValueRef phi, LLVMValueRef *terms) {
  LLVMValueRef back[KR_SUM_TERMS];
  int n = 0;
  kn_red_op op = kr_red_op(v);
  while (v != phi) {
    if (n == KR_SUM_TERMS || op == KN_RED_COUNT || kr_red_op(v) != op || !ir_loop_defines(l, v, c->cfg)) return 0;
    LLVMValueRef a = LLVMGetOperand(v, 0), b = LLVMGetOperand(v, 1);
    bool la = a == phi || (kr_red_op(a) == op && LLVMGetFirstUse(a) && !LLVMGetNextUse(LLVMGetFirstUse(a)) &&
                           ir_loop_defines(l, a, c->cfg));
    bool lb = b == phi || (kr_red_op(b) == op && LLVMGetFirstUse(b) && !LLVMGetNextUse(LLVMGetFirstUse(b)) &&
                           ir_loop_defines(l, b, c->cfg));
    if (la && lb) {
      /* add(phi, x) with x itself an add: the phi's side is the chain */
      if (a == phi) lb = false;
      else if (b == phi) la = false;
      else return 0;
    }
    if (!la && !lb) return 0;
    back[n++] = la ? b : a;
    v = la ? a : b;
  }
  for (int k = 0; k < n; k++) terms[k] = back[n - 1 - k];
  return n;
}

/* The accumulator of a loop that stores nothing: its one header phi that
 * is no counter, of an integer type (i32 or i64, or lanes of them), whose
 * value from the latch is an integer `add` (or another reduction operator,
 * kr_red_op: the same at every link) of the phi and a term (either
 * order; for R, up to two terms, an unrolled remainder: sum_chain), and
 * from outside the loop *init; *term the first term.  NULL when there is
 * none. */
static LLVMValueRef sum_acc(const kr_ctx *c, const ir_loop *l, LLVMValueRef *latch, LLVMValueRef *term,
                            LLVMValueRef *init) {
  LLVMValueRef phi = NULL;
  for (LLVMValueRef p = LLVMGetFirstInstruction(c->cfg->blocks[l->header].bb); p && LLVMIsAPHINode(p);
       p = LLVMGetNextInstruction(p)) {
    if (ir_iv_of(l, p)) continue;
    if (phi) return NULL;
    phi = p;
  }
  if (!phi || LLVMCountIncoming(phi) != 2) return NULL;
  LLVMTypeRef t = LLVMTypeOf(phi), e = LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMGetElementType(t) : t;
  if (LLVMGetTypeKind(e) != LLVMIntegerTypeKind || (LLVMGetIntTypeWidth(e) != 32 && LLVMGetIntTypeWidth(e) != 64))
    return NULL;
  if (LLVMGetTypeKind(t) == LLVMVectorTypeKind && !kr_lane_count(t)) return NULL;
  LLVMBasicBlockRef lb = c->cfg->blocks[l->latches[0]].bb;
  *latch = *init = NULL;
  for (unsigned i = 0; i < 2; i++) {
    if (LLVMGetIncomingBlock(phi, i) == lb) *latch = LLVMGetIncomingValue(phi, i);
    else if (!l->in_body[ir_cfg_index(c->cfg, LLVMGetIncomingBlock(phi, i))]) *init = LLVMGetIncomingValue(phi, i);
  }
  if (!*latch || !*init) return NULL;
  LLVMValueRef terms[KR_SUM_TERMS];
  int n = sum_chain(l, c, *latch, phi, terms);
  if (n == 0 || (n > 1 && LLVMGetTypeKind(t) == LLVMVectorTypeKind)) return NULL;
  *term = terms[0];
  return phi;
}

/* The Wasm loop of outer's innermost loops that runs before the region:
 * of two Wasm loops with scalar stores, the one whose copies all exit to
 * a block dominating a vector loop's header (R's exit after it); NULL
 * when outer has one such Wasm loop. */
static LLVMValueRef before_loop(const kr_ctx *c, const ir_loop *outer) {
  LLVMValueRef ids[2] = {NULL, NULL};
  const ir_loop *vec = NULL;
  int nids = 0;
  for (int k = 0; k < outer->nchildren; k++) {
    const ir_loop *l = outer->children[k];
    LLVMValueRef st[KR_REGION_STORES], id = wasm_loop(c, l);
    bool vector;
    if (l->nchildren || loop_stores(c, l, &vector, st, KR_REGION_STORES) <= 0 || !id) continue;
    if (vector) vec = l;
    if (vector || id == ids[0] || id == ids[1]) continue;
    if (nids == 2) return NULL;
    ids[nids++] = id;
  }
  if (nids < 2 || !vec) return NULL;
  for (int i = 0; i < 2; i++) {
    bool all = true;
    for (int k = 0; k < outer->nchildren && all; k++) {
      const ir_loop *l = outer->children[k];
      if (l->nchildren || wasm_loop(c, l) != ids[i]) continue;
      int to = exit_block(c, l);
      all = to >= 0 && ir_dominates(c->dom, to, vec->header);
    }
    if (all) return ids[i];
  }
  return NULL;
}

/* v is `x & (U - 1)` for a power of two U >= 2 (U <= 16): U, else 0. */
static int low_bits_of(LLVMValueRef v, LLVMValueRef x) {
  if (!is_op(v, LLVMAnd) || (x && LLVMGetOperand(v, 0) != x) || !LLVMIsAConstantInt(LLVMGetOperand(v, 1))) return 0;
  int64_t k = LLVMConstIntGetSExtValue(LLVMGetOperand(v, 1));
  return k >= 1 && k <= 15 && (k & (k + 1)) == 0 ? (int)(k + 1) : 0;
}

/* A prologue loop's shape alone: one scalar store, and a counter from
 * `x & (U - 1)` down by 1 to 0 (counts_down). */
static bool prol_like(const kr_ctx *c, const ir_loop *l) {
  LLVMValueRef st[KR_REGION_STORES], start;
  bool vector;
  return !l->nchildren && l->nlatches == 1 && loop_stores(c, l, &vector, st, KR_REGION_STORES) == 1 && !vector &&
         counts_down(c, l, 1, &start) && low_bits_of(start, NULL);
}

/* The Wasm loop of the prologue loop P (kr_region.prol): of two Wasm
 * loops with scalar stores (the loop before the region, bid, aside), the
 * one whose every copy is prol_like while the other's are not; NULL when
 * there is none.  Which of them P is only names the parts: prol_shape
 * and kr_region_find prove what each does. */
static LLVMValueRef prol_loop(const kr_ctx *c, const ir_loop *outer, LLVMValueRef bid) {
  LLVMValueRef ids[2] = {NULL, NULL};
  bool like[2] = {true, true};
  int nids = 0;
  for (int k = 0; k < outer->nchildren; k++) {
    const ir_loop *l = outer->children[k];
    LLVMValueRef st[KR_REGION_STORES], id = wasm_loop(c, l);
    bool vector;
    if (l->nchildren || !id || id == bid || loop_stores(c, l, &vector, st, KR_REGION_STORES) <= 0 || vector) continue;
    int at = id == ids[0] ? 0 : id == ids[1] ? 1 : nids;
    if (at == 2) return NULL;
    if (at == nids) ids[nids++] = id;
    like[at] &= prol_like(c, l);
  }
  if (nids != 2 || like[0] == like[1]) return NULL;
  return like[0] ? ids[0] : ids[1];
}

/* The loops of the region, (a): V's copies and R's copies (and P's,
 * a Wasm loop of its own, when R has a prologue loop). */
static bool region_loops(kr_ctx *c, const ir_loop *outer, kr_region *r) {
  LLVMValueRef vid = NULL, rid = NULL, bid = before_loop(c, outer), pid = prol_loop(c, outer, bid);
  r->nloops = 0;
  r->nbefore = 0;
  r->nprol = 0;
  for (int k = 0; k < outer->nchildren; k++) {
    const ir_loop *l = outer->children[k];
    if (bid && !l->nchildren && wasm_loop(c, l) == bid) {
      if (r->nbefore == KR_REGION_LOOPS) return false;
      r->before[r->nbefore++] = l;
      continue;
    }
    if (pid && !l->nchildren && wasm_loop(c, l) == pid) {
      if (r->nprol == KR_REGION_LOOPS) return false;
      r->prol[r->nprol++] = l;
      continue;
    }
    if (l->nchildren) {
      /* a nest beside the region: it is then a prologue */
      if (r->inner) return false;
      r->inner = l;
      continue;
    }
    LLVMValueRef st[KR_REGION_STORES];
    bool vector;
    int n = loop_stores(c, l, &vector, st, KR_REGION_STORES);
    LLVMValueRef id = wasm_loop(c, l), latch, term, init, acc = NULL;
    if (n == 0 && l->nlatches == 1) {
      /* a sum region's loop: an accumulator, in lanes for V */
      acc = sum_acc(c, l, &latch, &term, &init);
      vector = acc && LLVMGetTypeKind(LLVMTypeOf(acc)) == LLVMVectorTypeKind;
    }
    if (r->nloops && r->sum != (acc != NULL)) return false;
    r->sum = acc != NULL;
    if (l->nlatches != 1 || (n <= 0 && !acc) || !id || r->nloops == KR_REGION_LOOPS) return false;
    LLVMValueRef *want = vector ? &vid : &rid;
    if (*want && *want != id) return false;
    *want = id;
    bool checked = ir_loop_checked(c->cfg, l);
    r->loops[r->nloops] = l;
    r->vector[r->nloops++] = vector;
    if (!vector && !checked) {
      if (r->rep) return false;
      r->rep = l;
      r->nstores = n;
      memcpy(r->stores, st, (size_t)n * sizeof *st);
    } else if (vector && !checked) {
      if (r->vec) return false;
      r->vec = l;
    }
  }
  return vid && rid && r->rep && r->vec && !(r->nbefore && (r->inner || r->sum)) &&
         !(r->nprol && (r->inner || r->sum || r->nbefore));
}

/* The block from which every path enters l (its bounds copies' test):
 * the first block above l's preheader with more than one successor. */
static int entry_of(const kr_ctx *c, const ir_loop *l) {
  int b = l->preheader;
  for (int n = 0; b >= 0 && n < 8 && c->cfg->blocks[b].nsuccs == 1 && c->cfg->blocks[b].npreds == 1; n++)
    b = c->cfg->blocks[b].preds[0];
  return b;
}

/* The loop before the region (r->before): entered from one block, its
 * every copy leaving to the skip S; that block, or -1. */
static int before_entry(const kr_ctx *c, const kr_region *r, int S) {
  int entry = entry_of(c, r->before[0]);
  for (int k = 0; k < r->nbefore; k++)
    if (entry < 0 || entry_of(c, r->before[k]) != entry || exit_block(c, r->before[k]) != S) return -1;
  /* each way out of the entry goes into a copy */
  const ir_block *e = &c->cfg->blocks[entry];
  for (int s = 0; s < e->nsuccs; s++) {
    bool into = false;
    for (int k = 0; k < r->nbefore; k++) into |= straight(c, e->succs[s]) == r->before[k]->header;
    if (!into) return -1;
  }
  return entry;
}

/* A guard G before the nest (clang's version of the loops for n >= 1,
 * -O3): a block outside the nest, dominating its header, branching on
 * n < 1 (or'ed with other counts' tests: none_when_any) with its false
 * side dominating the header and its true side not, so n >= 1 whenever
 * the region runs (n is computed before the nest); -1 when none. */
static int guard_outside(const kr_ctx *c, LLVMValueRef n) {
  const ir_loop *root = c->chain[0];
  for (int b = 0; b < c->cfg->nblocks; b++) {
    if (root->in_body[b] || !ir_dominates(c->dom, b, root->header)) continue;
    LLVMValueRef br = LLVMGetBasicBlockTerminator(c->cfg->blocks[b].bb);
    if (!br || !LLVMIsABranchInst(br) || !LLVMIsConditional(br)) continue;
    int t = ir_cfg_index(c->cfg, LLVMGetSuccessor(br, 0)), f = ir_cfg_index(c->cfg, LLVMGetSuccessor(br, 1));
    /* (or the other way round: true into the nest when n >= 1) */
    if (!none_when_any(LLVMGetCondition(br), n, 0)) {
      if (!some_when_all(LLVMGetCondition(br), n, 0)) continue;
      int x = t;
      t = f;
      f = x;
    }
    if (ir_dominates(c->dom, f, root->header) && !ir_dominates(c->dom, t, root->header)) return b;
  }
  return -1;
}

/* The peel P before a remainder unrolled by 2: s' = phi(s | 1 after P,
 * s) in block D (which tests s == n - 1), P run from block J (where
 * s = phi(M, 0)) when n & 1 != 0, straight code holding one store. */
static bool peel_shape(kr_ctx *c, const ir_loop *outer, kr_region *r, LLVMValueRef n, LLVMValueRef s1,
                       LLVMValueRef *s_out, int *J_out, int *D_out) {
  /* s' = phi(s | 1 after P, s): the block D of the test s == n - 1 */
  if (!LLVMIsAPHINode(s1)) return false;
  int D = ir_cfg_index(c->cfg, LLVMGetInstructionParent(s1)), P_end = -1, noP = -1;
  LLVMValueRef ins[2], s = NULL, cond;
  *D_out = D;
  LLVMBasicBlockRef from[2];
  /* (a sum's D also joins the accumulator: s' need not be its first phi) */
  if (LLVMCountIncoming(s1) != 2) return false;
  for (unsigned k = 0; k < 2; k++) {
    ins[k] = LLVMGetIncomingValue(s1, k);
    from[k] = LLVMGetIncomingBlock(s1, k);
  }
  for (int k = 0; k < 2; k++) {
    LLVMValueRef v = ins[k];
    if ((is_op(v, LLVMOr) && is_const(LLVMGetOperand(v, 1), 1)) ||
        (is_op(v, LLVMAdd) && is_const(LLVMGetOperand(v, 1), 1))) {
      P_end = ir_cfg_index(c->cfg, from[k]);
      if (s && s != LLVMGetOperand(v, 0)) return false;
      s = LLVMGetOperand(v, 0);
    } else {
      noP = ir_cfg_index(c->cfg, from[k]);
      if (s && s != v) return false;
      s = v;
    }
  }
  if (P_end < 0 || noP < 0 || !LLVMIsAPHINode(s)) return false;
  /* the block J of s = phi(M, 0), ending in P's test `n & 1 == 0` */
  int J = ir_cfg_index(c->cfg, LLVMGetInstructionParent(s)), t, f;
  *J_out = J;
  *s_out = s;
  if (J != noP || !branch_of(c, J, &cond, &t, &f) || t != D) return false;
  if (!LLVMIsAICmpInst(cond) || LLVMGetICmpPredicate(cond) != LLVMIntEQ || !is_const(LLVMGetOperand(cond, 1), 0) ||
      !is_op(LLVMGetOperand(cond, 0), LLVMAnd) || LLVMGetOperand(LLVMGetOperand(cond, 0), 0) != n ||
      !is_const(LLVMGetOperand(LLVMGetOperand(cond, 0), 1), 1))
    return false;
  int P = f;
  /* P: straight code from J's false edge to P_end (traps aside), one store */
  r->peel = NULL;
  for (int b = P, steps = 0; steps < 16; steps++) {
    if (!outer->in_body[b] || b == D) return false;
    for (int k = 0; k < outer->nchildren; k++)
      if (outer->children[k]->in_body[b]) return false;
    for (LLVMValueRef i = LLVMGetFirstInstruction(c->cfg->blocks[b].bb); i; i = LLVMGetNextInstruction(i))
      if (LLVMIsAStoreInst(i)) {
        /* a sum's peel adds its term (sum_shape) and stores nothing */
        if (r->peel || r->sum) return false;
        r->peel = i;
      }
    if (b == P_end) break;
    int next = -1;
    for (int k = 0; k < c->cfg->blocks[b].nsuccs; k++) {
      int x = c->cfg->blocks[b].succs[k];
      if (outer->in_body[x]) {
        if (next >= 0) return false;
        next = x;
      }
    }
    if (next < 0) return false;
    b = next;
  }
  return r->peel || r->sum;
}

/* Whether block b is reached, through blocks of one predecessor each,
 * only from a block of one of P's copies. */
static bool after_prol(const kr_ctx *c, const kr_region *r, int b) {
  for (int n = 0; n < 8 && b >= 0; n++) {
    for (int k = 0; k < r->nprol; k++)
      if (r->prol[k]->in_body[b]) return true;
    if (c->cfg->blocks[b].npreds != 1) return false;
    b = c->cfg->blocks[b].preds[0];
  }
  return false;
}

/* The prologue loop P before a remainder unrolled by U (clang's runtime
 * unroll of the scalar rest, U >= 2 a power of two): K, the count of
 * P's trips, is one value, `(n - s) & (U-1)`, or `n & (U-1)` when U
 * divides L (s, 0 or M, is then a multiple of U, so that n & (U-1) is
 * (n - s) & (U-1)); s' = phi(s from J, s + K from P's exits) in block D
 * (`add` of s and K, or `or disjoint s, n & (U-1)`, an add then since s's
 * low bits are 0); J (where s = phi(M, 0)) branches on K == 0 to D, else
 * to P's entry Pe; every copy of P counts K down by 1 to 0 (its one store
 * at j = s + t), is entered only through Pe (Pe dominates its header)
 * and exits to D. */
static bool prol_shape(kr_ctx *c, kr_region *r, LLVMValueRef n, LLVMValueRef s1, int U, LLVMValueRef *s_out,
                       int *J_out, int *D_out) {
  LLVMValueRef K = NULL, s = NULL;
  if (!LLVMIsAPHINode(s1) || !r->nprol || !counts_down(c, r->prol[0], 1, &K) || low_bits_of(K, NULL) != U)
    return false;
  int D = ir_cfg_index(c->cfg, LLVMGetInstructionParent(s1)), fromJ = -1;
  *D_out = D;
  /* the value from J: s itself (the one that is not s + K) */
  for (unsigned i = 0; i < LLVMCountIncoming(s1); i++) {
    LLVMValueRef v = LLVMGetIncomingValue(s1, i);
    if ((is_op(v, LLVMOr) || is_op(v, LLVMAdd)) && (LLVMGetOperand(v, 0) == K || LLVMGetOperand(v, 1) == K)) continue;
    if (s) return false;
    s = v;
    fromJ = ir_cfg_index(c->cfg, LLVMGetIncomingBlock(s1, i));
  }
  if (!s || !LLVMIsAPHINode(s)) return false;
  int J = ir_cfg_index(c->cfg, LLVMGetInstructionParent(s));
  *J_out = J;
  *s_out = s;
  /* K's two forms */
  LLVMValueRef x = LLVMGetOperand(K, 0);
  bool low_n = x == n && U <= (int)r->lanes;
  if (!low_n && !(is_op(x, LLVMSub) && LLVMGetOperand(x, 0) == n && LLVMGetOperand(x, 1) == s)) return false;
  bool any = false;
  for (unsigned i = 0; i < LLVMCountIncoming(s1); i++) {
    LLVMValueRef v = LLVMGetIncomingValue(s1, i);
    int b = ir_cfg_index(c->cfg, LLVMGetIncomingBlock(s1, i));
    if (v == s) continue;
    /* s + K, from a P exit only */
    LLVMValueRef o0 = LLVMGetOperand(v, 0), o1 = LLVMGetOperand(v, 1);
    bool sum = is_op(v, LLVMAdd) ? (o0 == s && o1 == K) || (o0 == K && o1 == s)
                                 : low_n && LLVMGetIsDisjoint(v) && o0 == s && o1 == K;
    if (!sum || !after_prol(c, r, b)) return false;
    any = true;
  }
  if (!any || fromJ != J) return false;
  /* J: `K == 0` to D, else Pe */
  LLVMValueRef cond;
  int t, Pe;
  if (!branch_of(c, J, &cond, &t, &Pe) || t != D || !compares(cond, LLVMIntEQ, K, LLVMConstInt(LLVMTypeOf(K), 0, 0)))
    return false;
  /* P's copies: K down by 1, entered through Pe, out to D */
  for (int k = 0; k < r->nprol; k++) {
    const ir_loop *l = r->prol[k];
    LLVMValueRef start;
    if (!counts_down(c, l, 1, &start) || start != K || exit_block(c, l) != D || !ir_dominates(c->dom, Pe, l->header))
      return false;
  }
  return true;
}

#define SUM_FAIL "vectorised integer reduction: not the shape of a sum in lanes and its scalar remainder"

/* Adds to counts[] how many times each lane of x is summed into lane
 * `lane` of v (v the integer reduction op of vectors, an `add` for a sum,
 * a shuffle, or x itself; x
 * of `lanes` lanes): V's final accumulator here, a whole-loop sum's
 * latch in kn_lanes_sum.c. */
bool kr_lane_counts(LLVMValueRef v, kn_red_op op, unsigned lane, LLVMValueRef x, int *counts, unsigned lanes,
                    int depth) {
  if (depth > 16 || !v || LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMVectorTypeKind || LLVMTypeOf(v) != LLVMTypeOf(x) ||
      lane >= lanes)
    return false;
  if (v == x) return ++counts[lane], true;
  if (kr_red_op(v) == op)
    return kr_lane_counts(LLVMGetOperand(v, 0), op, lane, x, counts, lanes, depth + 1) &&
           kr_lane_counts(LLVMGetOperand(v, 1), op, lane, x, counts, lanes, depth + 1);
  if (is_op(v, LLVMShuffleVector)) {
    int k = LLVMGetMaskValue(v, lane);
    if (k == LLVMGetUndefMaskElem() || k < 0) return false;
    unsigned w = LLVMGetVectorSize(LLVMTypeOf(LLVMGetOperand(v, 0)));
    return kr_lane_counts(LLVMGetOperand(v, (unsigned)k < w ? 0 : 1), op, (unsigned)k % w, x, counts, lanes,
                             depth + 1);
  }
  return false;
}

/* The latch value of one of V's copies (vector) or R's copies. */
static bool latch_of(const kr_ctx *c, const kr_region *r, LLVMValueRef v, bool vector) {
  for (int k = 0; k < r->nloops; k++) {
    LLVMValueRef latch, term, init;
    if (r->vector[k] == vector && sum_acc(c, r->loops[k], &latch, &term, &init) && latch == v) return true;
  }
  return false;
}

/* Whether block b is reached only from block from (through blocks of one
 * predecessor each). */
static bool only_from(const kr_ctx *c, int b, int from) {
  for (int n = 0; n < 8; n++) {
    if (b == from) return true;
    if (c->cfg->blocks[b].npreds != 1) return false;
    b = c->cfg->blocks[b].preds[0];
  }
  return false;
}

/* The identity of op on integers of type t (0, 1, all ones, the
 * extremes), or NULL. */
static LLVMValueRef red_identity(kn_red_op op, LLVMTypeRef t) {
  if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind) return NULL;
  unsigned w = LLVMGetIntTypeWidth(t);
  uint64_t ones = w == 64 ? ~0ull : (1ull << w) - 1, sign = 1ull << (w - 1);
  switch (op) {
  case KN_RED_ADD: case KN_RED_OR: case KN_RED_XOR: case KN_RED_UMAX: return LLVMConstInt(t, 0, false);
  case KN_RED_MUL: return LLVMConstInt(t, 1, false);
  case KN_RED_AND: case KN_RED_UMIN: return LLVMConstInt(t, ones, false);
  case KN_RED_SMAX: return LLVMConstInt(t, sign, false);
  case KN_RED_SMIN: return LLVMConstInt(t, sign - 1, false);
  default: return NULL;
  }
}

/* Whether constant vector v holds e in each of its lanes. */
static bool splat_of(LLVMValueRef v, LLVMValueRef e, unsigned lanes) {
  for (unsigned l = 0; l < lanes; l++)
    if (LLVMGetAggregateElement(v, l) != e) return false;
  return true;
}

/* (e), a sum region: V adds, in lanes, a term per j of [0, M) to an
 * accumulator whose lanes start summing to X0 (a zero vector and X0 = 0,
 * or X0 put in one lane of zeros); after V (block E) the lanes are added
 * up, each exactly once (kr_lane_counts): hsum = X0 + the terms of [0, M),
 * modulo 2^w whatever the order, since integer addition wraps and is
 * associative and commutative.  J starts R's accumulator (every copy's)
 * at acc0 = phi(hsum from E, X0 from the skip S): R adds the terms of
 * [s, n) one a trip.  The done block's phi gives X0 from the guard G (no
 * j), hsum from E (M == n) and R's sums from R's exits: on every path,
 * X0 + the terms of [0, n), each j once ((b)).  With G before the nest
 * (guard_outside: -O3 versions the nest for n >= 1) no path comes from
 * G, since n >= 1 whenever the nest runs, and only_from(b, G) holds for
 * no block of the outer loop (the walk up single predecessors stops at
 * its header, which has two).  The terms themselves are
 * compared lane by lane with R's in kr_region_prove ((c)). */
static bool sum_shape(kr_ctx *c, kr_region *r, int G, int E, int S, int J, int D, int *done_at) {
  int done = *done_at;
  LLVMValueRef vinit = NULL, x0 = NULL, acc0 = NULL, pd = NULL;
  kn_red_op op = KN_RED_COUNT;
  for (int k = 0; k < r->nloops; k++) {
    LLVMValueRef latch, term, init;
    if (!sum_acc(c, r->loops[k], &latch, &term, &init)) return false;
    /* one operator in every copy of V and R */
    if (op != KN_RED_COUNT && kr_red_op(latch) != op) return false;
    op = kr_red_op(latch);
    LLVMValueRef *want = r->vector[k] ? &vinit : &acc0;
    if (*want && *want != init) return false;
    *want = init;
  }
  /* V's start: lanes combining to X0 (the operator's identity in every
   * lane but one, which holds X0; for an idempotent operator X0 in every
   * lane, a constant) */
  if (!vinit || !acc0) return false;
  LLVMValueRef id = red_identity(op, LLVMGetElementType(LLVMTypeOf(vinit)));
  if (!id) return false;
  if (LLVMIsAConstant(vinit)) {
    /* identities but in at most one lane (X0 there, else the identity),
     * or X0 in every lane of an idempotent operator */
    int others = 0;
    x0 = id;
    for (unsigned l = 0; l < r->lanes; l++)
      if (LLVMGetAggregateElement(vinit, l) != id) others++, x0 = LLVMGetAggregateElement(vinit, l);
    if (others > 1 && !(idempotent(op) && splat_of(vinit, x0, r->lanes))) return false;
  } else if (LLVMIsAInsertElementInst(vinit) && LLVMIsAConstantInt(LLVMGetOperand(vinit, 2)) &&
             LLVMIsAConstant(LLVMGetOperand(vinit, 0))) {
    unsigned at = (unsigned)LLVMConstIntGetZExtValue(LLVMGetOperand(vinit, 2));
    for (unsigned l = 0; l < r->lanes; l++)
      if (l != at && LLVMGetAggregateElement(LLVMGetOperand(vinit, 0), l) != id) return false;
    x0 = LLVMGetOperand(vinit, 1);
  } else {
    return false;
  }
  /* with a peel (D >= 0): R starts at pd = phi(acc0 + the peel's term
   * from P, acc0 from J) in D, the sum after j = s when n is odd */
  if (D >= 0) {
    pd = acc0;
    acc0 = NULL;
    if (!LLVMIsAPHINode(pd) || LLVMGetInstructionParent(pd) != c->cfg->blocks[D].bb || LLVMCountIncoming(pd) != 2)
      return false;
    LLVMValueRef added = NULL;
    for (unsigned i = 0; i < 2; i++) {
      LLVMValueRef v = LLVMGetIncomingValue(pd, i);
      if (ir_cfg_index(c->cfg, LLVMGetIncomingBlock(pd, i)) == J) acc0 = v;
      else added = v;
    }
    LLVMValueRef tp[KR_SUM_TERMS];
    if (!acc0 || !added || sum_chain(r->outer, c, added, acc0, tp) != 1 || !ir_loop_defines(r->outer, added, c->cfg))
      return false;
    /* the add made in P (it is not J's or D's) */
    int at = ir_cfg_index(c->cfg, LLVMGetInstructionParent(added));
    if (at == J || at == D) return false;
    r->peel = tp[0];
    r->peel_sum = pd;
  }
  /* acc0 = phi(hsum from E, X0 from S) in J */
  if (!LLVMIsAPHINode(acc0) || LLVMGetInstructionParent(acc0) != c->cfg->blocks[J].bb ||
      LLVMCountIncoming(acc0) != 2)
    return false;
  LLVMValueRef hsum = NULL;
  bool from_s = false;
  for (unsigned i = 0; i < 2; i++) {
    int b = ir_cfg_index(c->cfg, LLVMGetIncomingBlock(acc0, i));
    LLVMValueRef v = LLVMGetIncomingValue(acc0, i);
    if (b == E) hsum = v;
    /* (from S itself, or through the block GVN put on S's edge to J) */
    else if (only_from(c, b, S) && (v == x0 || (LLVMIsAConstantInt(v) && LLVMIsAConstantInt(x0) && LLVMIsNull(v) && LLVMIsNull(x0))))
      from_s = true;
  }
  if (!hsum || !from_s) return false;
  /* hsum: one lane of adds and shuffles of V's final accumulator, each
   * lane of it counted once */
  if (!LLVMIsAExtractElementInst(hsum) || !LLVMIsAConstantInt(LLVMGetOperand(hsum, 1))) return false;
  LLVMValueRef xv = NULL;
  for (LLVMValueRef p = LLVMGetFirstInstruction(c->cfg->blocks[E].bb); p && LLVMIsAPHINode(p);
       p = LLVMGetNextInstruction(p)) {
    if (LLVMTypeOf(p) != LLVMTypeOf(vinit)) continue;
    for (unsigned i = 0; i < LLVMCountIncoming(p); i++)
      if (!latch_of(c, r, LLVMGetIncomingValue(p, i), true)) return false;
    if (xv) return false;
    xv = p;
  }
  int counts[4] = {0};
  if (!xv || !kr_lane_counts(LLVMGetOperand(hsum, 0), op, (unsigned)LLVMConstIntGetZExtValue(LLVMGetOperand(hsum, 1)),
                             xv, counts, r->lanes, 0))
    return false;
  /* each lane once (an idempotent operator: at least once) */
  for (unsigned l = 0; l < r->lanes; l++)
    if (idempotent(op) ? counts[l] < 1 : counts[l] != 1) return false;
  /* done: X0 from G, hsum from E, R's sums from R's exits.  At the top
   * of a function the phi may stand in a block before done, which leads
   * there in a straight line (the inlined kernel's return block, its
   * caller's code after it): that block is then the region's done, where
   * all its paths meet */
  LLVMValueRef res = NULL;
  for (LLVMValueRef p = LLVMGetFirstInstruction(c->cfg->blocks[done].bb); p && LLVMIsAPHINode(p);
       p = LLVMGetNextInstruction(p))
    for (unsigned i = 0; i < LLVMCountIncoming(p); i++)
      if (LLVMGetIncomingValue(p, i) == hsum) {
        if (res && res != p) return false;
        res = p;
      }
  for (LLVMUseRef u = LLVMGetFirstUse(hsum); !res && c->top && r->outer == c->top && u; u = LLVMGetNextUse(u)) {
    LLVMValueRef p = LLVMGetUser(u);
    int b = LLVMIsAPHINode(p) ? ir_cfg_index(c->cfg, LLVMGetInstructionParent(p)) : -1;
    if (b < 0 || b == J || straight(c, b) != done) continue;
    res = p;
    done = *done_at = b;
  }
  if (!res) return false;
  int from_r = 0;
  for (unsigned i = 0; i < LLVMCountIncoming(res); i++) {
    int b = ir_cfg_index(c->cfg, LLVMGetIncomingBlock(res, i));
    LLVMValueRef v = LLVMGetIncomingValue(res, i);
    if (LLVMIsAPHINode(v) && LLVMCountIncoming(v) == 1 && ir_cfg_index(c->cfg, LLVMGetInstructionParent(v)) == b)
      v = LLVMGetIncomingValue(v, 0); /* LCSSA */
    if (pd && v == pd && only_from(c, b, D)) continue; /* s == n - 1 after the peel */
    if (b == E ? v != hsum : only_from(c, b, G) ? v != x0 : !latch_of(c, r, v, false)) return false;
    from_r += b != E && !only_from(c, b, G);
  }
  if (from_r == 0) return false;
  r->result = res;
  r->init = x0;
  r->hsum = hsum;
  r->sum_op = op;
  return true;
}

/* A row loop around the nest (row_outside: the region in a nest that a
 * loop L holds, reference BLAS's ssyrk l-i nest inside its j loop; n =
 * trunc(wide) a live value of the nest): wide = t + 1 on L's trip t (an
 * i64 IV from 1 by 1), and n is LLVM's `trunc nuw` of it, poison unless
 * wide < 2^32, which the region's branches on n would then be (undefined
 * behaviour in the IR the CPU code is made from): so n = wide in [1,
 * 2^32 - 1] wherever the region runs, n >= 1 (no guard G needed), and the
 * region stores j in [0, n) for n read unsigned: the region's trip is
 * then j from 0 while j <u n. */
static bool row_outside_ok(LLVMValueRef n) { return LLVMIsATruncInst(n) && LLVMGetNUW(n); }

/* A triangle's row count (syrk's `for (j = 0; j <= i; j++)` at -O2
 * -msimd128): n = trunc(wide), wide an i64 IV of a chain loop row (outer
 * or a loop around it) from 1 by 1: LLVM's i + 1 widened, i that loop's
 * counter.  The region then reads wide where its i32 forms read n (the
 * skip `wide <u K`, the test E `wide == wide & (2^32 - L)`, R's exit
 * `wide == zext(j + U)`), and D's `s == n - 1` as `s == i` (last, the
 * loop's i32 IV from 0 by 1, when it has one).  Only a product over a
 * triangle takes such a region (kr_loop_trip in kn_recog.c, with
 * allow_tri): its launch checks that C's corner (m - 1, m - 1) lies in
 * memory with j moving C by a constant (kn_recog_matmul.c finish), so the
 * row loop's count m is below 2^32 / 8 when the kernel runs: wide =
 * i + 1 <= m is below 2^31, n = trunc(wide) exact and positive, and
 * unsigned and signed compares of n, of wide and of i + 1 agree.  n >= 1
 * on every row: no guard G (the skip S must then dominate the latch of
 * the loop holding the region, so that the region runs on each of its
 * iterations, as G's path to S shows otherwise).  A row loop around the
 * nest (row_outside_ok) is read the same way, n then below 2^32 (not
 * 2^31): every test above reads wide or i unsigned, and the region's
 * trip is unsigned; the nest takes n as a live value (kr_loop_trip). */
static bool tri_count(const kr_ctx *c, LLVMValueRef n, kr_region *r) {
  if (!LLVMIsATruncInst(n)) return false;
  LLVMValueRef w = LLVMGetOperand(n, 0);
  if (!LLVMIsAPHINode(w) || LLVMGetIntTypeWidth(LLVMTypeOf(w)) != 64) return false;
  /* the chain's loops, then (row_outside) the loops around the nest */
  const ir_loop *around = c->chain[0]->parent;
  for (int d = 0; d < c->depth || around; d++) {
    const ir_loop *l = d < c->depth ? c->chain[d] : around;
    if (d >= c->depth) {
      around = around->parent;
      if (!row_outside_ok(n)) continue;
    }
    const ir_iv *iv = NULL;
    for (int k = 0; k < l->nivs; k++)
      if (l->ivs[k].phi == w) iv = &l->ivs[k];
    if (!iv || iv->step_inv || iv->step != 1 || !is_const(iv->start, 1)) continue;
    r->wide = w;
    r->row = l;
    r->row_outside = d >= c->depth;
    r->last = NULL;
    for (int k = 0; k < l->nivs; k++) {
      const ir_iv *i = &l->ivs[k];
      if (!i->step_inv && i->step == 1 && i->bits == 32 && is_const(i->start, 0)) r->last = i->phi;
    }
    return true;
  }
  return false;
}

/* D's `s == n - 1` of a triangle's row in i64 (reference BLAS's ssyrk_un
 * built with a main, its j loop around the l-i nest): `zext(s) == q`, q
 * an i64 IV of the row loop from 0 by 1.  On that loop's trip t, q = t
 * and wide = t + 1 = n (tri_count), both below 2^32 where the region runs
 * (n = trunc nuw of wide), and s is an i32 in [0, n): zext(s) == q
 * exactly when s == n - 1, the i32 test r->last stands for. */
static bool last_wide(const kr_region *r, LLVMValueRef cond, LLVMValueRef s) {
  if (!r->row || !LLVMIsAICmpInst(cond) || LLVMGetICmpPredicate(cond) != LLVMIntEQ) return false;
  for (int o = 0; o < 2; o++) {
    LLVMValueRef z = LLVMGetOperand(cond, o), q = LLVMGetOperand(cond, 1 - o);
    if (!LLVMIsAZExtInst(z) || LLVMGetOperand(z, 0) != s) continue;
    for (int k = 0; k < r->row->nivs; k++) {
      const ir_iv *iv = &r->row->ivs[k];
      if (iv->phi == q && !iv->step_inv && iv->step == 1 && iv->bits == 64 && is_const(iv->start, 0)) return true;
    }
  }
  return false;
}

/* Whether the stores of outer's body are the region's (V's, P's, R's,
 * the peel's) only, the inner nest's, or (with a loop before the region)
 * that loop's and what runs before it. */
static bool only_region_stores(const kr_ctx *c, const ir_loop *outer, const kr_region *r, int S) {
  for (int b = 0; b < outer->nbody; b++) {
    int x = outer->body[b];
    bool in_loop = r->inner && r->inner->in_body[x];
    for (int k = 0; k < r->nloops; k++) in_loop |= r->loops[k]->in_body[x];
    /* the loop before the region and what runs before G: another part's */
    for (int k = 0; k < r->nbefore; k++) in_loop |= r->before[k]->in_body[x];
    for (int k = 0; k < r->nprol; k++) in_loop |= r->prol[k]->in_body[x];
    in_loop |= r->nbefore && ir_dominates(c->dom, x, before_entry(c, r, S));
    if (in_loop) continue;
    for (LLVMValueRef i = LLVMGetFirstInstruction(c->cfg->blocks[x].bb); i; i = LLVMGetNextInstruction(i))
      if (LLVMIsAStoreInst(i) && i != r->peel) return false;
  }
  return true;
}

/* A constant count N (a multiple of L) has no remainder: clang's vector
 * loop V (N / L trips) stands alone, with the scalar loop R (N trips, not
 * unrolled) as its alternative behind the alias check (the constant
 * products, matmul_f32_large's `c[i*N + j] += t * b[k*N + j]`):
 *
 *   if (overlap) for (j = 0; j < N; j++) C[j] = f(j);   (R)
 *   else for (t = 0; t < N / L; t++) lanes of j = L t .. L t + L - 1; (V)
 *   done:
 *
 * (f) coverage: one block X, in outer's body and in none of its loops, on
 * every iteration of outer (it dominates outer's latch), branches to two
 * blocks of one predecessor each, one dominating V's header, the other
 * R's: so every path through X runs exactly one of V and R, entered once
 * (X is in no cycle of outer's body), and each leaves only to done (traps
 * aside), after its whole count (constant, no other exit): R stores j in
 * [0, N), V its lanes L t + l for t in [0, N / L), l in [0, L): [0, N)
 * too, each j once.  Whichever the test takes, [0, N) is stored once;
 * (c), (d) then as for the shape above (R's counters start at j = 0's
 * values, as V's: kr_region_of gives no region for them, start is NULL).
 * One copy of each: a bounds-checked pair (traps: no constant trip) is
 * no such region. */
static bool alt_shape(const kr_ctx *c, const ir_loop *outer, kr_region *r, unsigned lanes, int *X_out, int *done_out) {
  const ir_loop *V = r->vec, *R = r->rep;
  if (r->sum || r->nloops != 2 || r->nprol || r->nbefore || r->inner || r->nstores < 1 ||
      V->trip.kind != IR_TRIP_CONST || R->trip.kind != IR_TRIP_CONST || V->trip.other_exits ||
      R->trip.other_exits || V->trip.count == 0 || R->trip.count * (uint64_t)r->nstores != V->trip.count * lanes)
    return false;
  int X = entry_of(c, V), done = exit_block(c, V);
  if (X < 0 || X != entry_of(c, R) || done < 0 || done != exit_block(c, R) || !outer->in_body[X] ||
      !ir_dominates(c->dom, X, outer->latches[0]))
    return false;
  for (int k = 0; k < outer->nchildren; k++)
    if (outer->children[k]->in_body[X]) return false;
  const ir_block *x = &c->cfg->blocks[X];
  if (x->nsuccs != 2 || x->succs[0] == x->succs[1]) return false;
  for (int k = 0; k < 2; k++)
    if (c->cfg->blocks[x->succs[k]].npreds != 1) return false;
  bool v0 = ir_dominates(c->dom, x->succs[0], V->header), r1 = ir_dominates(c->dom, x->succs[1], R->header);
  bool v1 = ir_dominates(c->dom, x->succs[1], V->header), r0 = ir_dominates(c->dom, x->succs[0], R->header);
  if (!((v0 && r1) || (v1 && r0))) return false;
  *X_out = X;
  *done_out = done;
  return true;
}

/* The skips of V, in order, from the blocks zero[] that give s = 0 to J
 * (their count, 0 when they are no chain): clang tests `n < L` in one
 * block and its alias check (a row pointer loaded in between, styles.c's
 * mtv_rows) in the next, each with its own edge to J.  A chain S_1 ..
 * S_k: each S_i branches to J on one edge and, for i < k, to S_{i+1} on
 * the other, S_{i+1} having S_i as its only predecessor; so every path
 * from S_1 to V passes the non-J edge of each S_i (kr_region_find checks
 * that the last one's dominates V), and every path from S_1 to J gives s
 * = 0 or comes through V and E.  V then runs only when every skip lets
 * it, so one skip reading n < K (K >= L) keeps M >= L wherever V runs,
 * as for one skip; the others only send more rows to J with s = 0,
 * where P and R store all of [0, n) ((b) in the header). */
static int skip_chain(const kr_ctx *c, int J, const int *zero, int nzero, int *out) {
  int first = -1;
  for (int k = 0; k < nzero; k++) {
    bool dom = true;
    for (int i = 0; i < nzero; i++) dom &= ir_dominates(c->dom, zero[k], zero[i]);
    if (dom) first = zero[k];
  }
  if (first < 0) return 0;
  int n = 0;
  for (int b = first; b >= 0;) {
    bool listed = false;
    for (int k = 0; k < nzero; k++) listed |= zero[k] == b;
    if (!listed || n == nzero) return 0;
    out[n++] = b;
    LLVMValueRef cond;
    int t, f, next = -1;
    if (!branch_of(c, b, &cond, &t, &f) || (t == J) == (f == J)) return 0;
    /* the non-J edge: the next skip, if it is one of zero[] and has b as
     * its only predecessor */
    const ir_block *blk = &c->cfg->blocks[b];
    for (int k = 0; k < blk->nsuccs; k++) {
      int x = blk->succs[k];
      if (straight(c, x) == J) continue;
      for (int i = 0; i < nzero; i++)
        if (zero[i] == x && c->cfg->blocks[x].npreds == 1) next = x;
    }
    b = next;
  }
  return n == nzero ? n : 0;
}

/* The bytes of a constant vector (little-endian, 16 at most); false for
 * anything but integer or float lanes known bit for bit. */
static bool const_bytes(LLVMValueRef v, uint8_t *bytes) {
  LLVMTypeRef t = LLVMTypeOf(v), e = LLVMGetElementType(t);
  unsigned n = LLVMGetVectorSize(t), size;
  LLVMTypeKind k = LLVMGetTypeKind(e);
  if (k == LLVMIntegerTypeKind) size = LLVMGetIntTypeWidth(e) / 8;
  else if (k == LLVMFloatTypeKind) size = 4;
  else if (k == LLVMDoubleTypeKind) size = 8;
  else return false;
  if (!size || size > 8 || n * size != 16 || (k == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(e) % 8)) return false;
  for (unsigned l = 0; l < n; l++) {
    LLVMValueRef x = LLVMGetAggregateElement(v, l);
    uint64_t bits;
    if (!x || LLVMIsUndef(x) || LLVMIsPoison(x)) return false;
    if (k == LLVMIntegerTypeKind) {
      if (!LLVMIsAConstantInt(x)) return false;
      bits = LLVMConstIntGetZExtValue(x);
    } else {
      LLVMBool loses = 0;
      if (!LLVMIsAConstantFP(x)) return false;
      double d = LLVMConstRealGetDouble(x, &loses);
      if (loses || d != d) return false; /* a NaN's payload is not read back */
      if (size == 4) {
        float f = (float)d;
        uint32_t b32;
        memcpy(&b32, &f, 4);
        bits = b32;
      } else {
        memcpy(&bits, &d, 8);
      }
    }
    for (unsigned b = 0; b < size; b++) bytes[l * size + b] = (uint8_t)(bits >> (8 * b));
  }
  return true;
}

/* A vector loop that stores a constant in other lanes than its remainder
 * stores scalars of (clang's `x[i] = 0.5f` by four: `store <2 x i64>` of
 * f32 pairs, its remainder `store i32`): each such store of the region's
 * vector loops is given the same 16 bytes as a vector of R's integer
 * type, which is the same store (the same bytes to the same address),
 * so that its lanes are R's iterations.  Exact whether or not the region
 * is then taken. */
static void const_stores_as_rep(const kr_ctx *c, const kr_region *r) {
  /* R's stores (region_loops: scalars, at least one) */
  LLVMTypeRef et = LLVMTypeOf(LLVMGetOperand(r->stores[0], 0));
  if (LLVMGetTypeKind(et) != LLVMIntegerTypeKind) return;
  unsigned width = LLVMGetIntTypeWidth(et);
  if (width != 32 && width != 64) return;
  for (int s = 1; s < r->nstores; s++)
    if (LLVMTypeOf(LLVMGetOperand(r->stores[s], 0)) != et) return;
  bool vector;
  for (int k = 0; k < r->nloops; k++) {
    LLVMValueRef st[KR_REGION_STORES];
    int m = r->vector[k] ? loop_stores(c, r->loops[k], &vector, st, KR_REGION_STORES) : 0;
    for (int s = 0; s < m; s++) {
      LLVMValueRef v = LLVMGetOperand(st[s], 0);
      LLVMTypeRef vt = LLVMTypeOf(v);
      uint8_t bytes[16];
      if (LLVMGetElementType(vt) == et || !LLVMIsConstant(v) || !const_bytes(v, bytes)) continue;
      unsigned lanes = 128 / width, size = width / 8;
      LLVMValueRef elems[4];
      for (unsigned l = 0; l < lanes; l++) {
        uint64_t bits = 0;
        for (unsigned b = 0; b < size; b++) bits |= (uint64_t)bytes[l * size + b] << (8 * b);
        elems[l] = LLVMConstInt(et, bits, false);
      }
      LLVMSetOperand(st[s], 0, LLVMConstVector(elems, lanes));
    }
  }
}

bool kr_region_find(kr_ctx *c, const ir_loop *outer, kr_region *r) {
  memset(r, 0, sizeof *r);
  r->outer = outer;
  if (!region_loops(c, outer, r)) return fail(c, c->reason);
  const char *why = c->reason;
  /* V: counts M = n & (2^31 - L) down by L */
  LLVMValueRef vst[KR_REGION_STORES], M, latch, term, init;
  bool vector;
  unsigned lanes;
  if (r->sum) {
    /* the lanes of V's accumulator (sum_acc: i32x4 or i64x2) */
    lanes = kr_lane_count(LLVMTypeOf(sum_acc(c, r->vec, &latch, &term, &init)));
  } else {
    const_stores_as_rep(c, r);
    if (loop_stores(c, r->vec, &vector, vst, KR_REGION_STORES) != 1) return fail(c, REGION_FAIL);
    lanes = kr_lane_count(LLVMTypeOf(LLVMGetOperand(vst[0], 0)));
  }
  if (!lanes) return fail(c, REGION_FAIL);
  r->lanes = lanes;
  /* copies a trip of R: its stores, or for a sum the terms it adds */
  int U = r->nstores;
  if (r->sum) {
    LLVMValueRef rt[KR_SUM_TERMS], phi = sum_acc(c, r->rep, &latch, &term, &init);
    U = phi ? sum_chain(r->rep, c, latch, phi, rt) : 0;
    if (!U) return fail(c, REGION_FAIL);
  }
  r->copies = U;
  int X, alt_done;
  if (alt_shape(c, outer, r, lanes, &X, &alt_done)) {
    if (!only_region_stores(c, outer, r, X)) return fail(c, REGION_FAIL);
    c->reason = why;
    r->done = alt_done;
    r->skip = X;
    r->count = NULL;
    r->start = NULL;
    r->trip = (ir_trip){.kind = IR_TRIP_CONST, .count = r->rep->trip.count * (uint64_t)U, .step = 1, .bits = 32};
    return true;
  }
  M = NULL;
  for (int k = 0; k < r->nloops; k++)
    if (r->vector[k]) {
      LLVMValueRef start;
      if (!counts_down(c, r->loops[k], lanes, &start) || (M && start != M)) return fail(c, REGION_FAIL);
      M = start;
    }
  if (!is_op(M, LLVMAnd)) return fail(c, REGION_FAIL);
  LLVMValueRef n = LLVMGetOperand(M, 0), s1 = NULL;
  if (LLVMGetIntTypeWidth(LLVMTypeOf(n)) != 32) return fail(c, REGION_FAIL);
  /* n computed before the nest, or a triangle's row count (tri_count),
   * which clang masks with 2^32 - L (n below 2^31 either way there) */
  if (ir_loop_defines(kr_nest(c), n, c->cfg) && (r->sum || !tri_count(c, n, r))) return fail(c, REGION_FAIL);
  /* n live, masked with 2^32 - L: a row of a loop around the nest, or
   * (neg_mask) a count from j0 that G proves positive (below) */
  bool neg_mask = false;
  if (!ir_loop_defines(kr_nest(c), n, c->cfg) && is_const(LLVMGetOperand(M, 1), -(int64_t)lanes) &&
      (r->sum || !tri_count(c, n, r) || !r->row_outside)) {
    if (r->wide) return fail(c, REGION_FAIL);
    neg_mask = true;
  }
  if (!is_const(LLVMGetOperand(M, 1), (int64_t)(0x7fffffffu & ~(lanes - 1))) &&
      !((r->wide || neg_mask) && is_const(LLVMGetOperand(M, 1), -(int64_t)lanes)))
    return fail(c, REGION_FAIL);
  /* R: j from s' to n + j0 by U (U copies a trip): by 2 after a peel, by 1 from s */
  int64_t j0 = -1;
  for (int k = 0; k < r->nloops; k++)
    if (!r->vector[k]) {
      LLVMValueRef start;
      int64_t jk;
      if (!remainder_from(c, r, r->loops[k], U, n, &start, &jk) || (s1 && (start != s1 || jk != j0)))
        return fail(c, REGION_FAIL);
      s1 = start;
      j0 = jk;
    }
  /* with a prologue loop P: U copies, U a power of two (prol_shape);
   * from j0 > 0: one copy, no P, no sum, no triangle ("j from j0") */
  if (!s1 || (r->nprol ? U < 2 || r->wide : U > 2) || (j0 && (U != 1 || r->nprol || r->sum || r->wide)) ||
      (neg_mask && !j0))
    return fail(c, REGION_FAIL);
  r->j0 = j0;
  LLVMValueRef s = s1, cond;
  int J = -1, D = -1, t, f;
  r->peel = NULL;
  if (!LLVMIsAPHINode(s1)) return fail(c, REGION_FAIL);
  if (r->nprol) {
    if (!prol_shape(c, r, n, s1, U, &s, &J, &D)) return fail(c, REGION_FAIL);
  } else if (U == 2 && !peel_shape(c, outer, r, n, s1, &s, &J, &D)) {
    return fail(c, REGION_FAIL);
  }
  if (U == 1) J = ir_cfg_index(c->cfg, LLVMGetInstructionParent(s));
  /* s = phi(M from E's false edge, 0 from the skip S, or from each skip
   * of a chain: skip_chain) (a sum region's J also joins the
   * accumulator: s need not be its first phi) */
  unsigned ns = LLVMCountIncoming(s);
  if (LLVMGetInstructionParent(s) != c->cfg->blocks[J].bb || ns < 2 || ns > 1 + KR_SKIPS ||
      (r->sum && ns != 2))
    return fail(c, REGION_FAIL);
  int E = -1, zeros[KR_SKIPS], nzeros = 0;
  for (unsigned k = 0; k < ns; k++) {
    LLVMValueRef v = LLVMGetIncomingValue(s, k);
    int b = ir_cfg_index(c->cfg, LLVMGetIncomingBlock(s, k));
    int64_t kv;
    if (plus_const(v, &kv) == M && kv == j0 && E < 0) E = b;
    else if (is_const(v, j0)) zeros[nzeros++] = b;
    else return fail(c, REGION_FAIL);
  }
  if (E < 0 || !nzeros) return fail(c, REGION_FAIL);
  /* 0 may come through a block GVN put on the skip's edge to J (the
   * critical edge split for its partial redundancies): the skip is the
   * block before it */
  for (int k = 0; k < nzeros; k++)
    for (int n = 0; n < 4 && c->cfg->blocks[zeros[k]].nsuccs == 1 && c->cfg->blocks[zeros[k]].npreds == 1; n++)
      zeros[k] = c->cfg->blocks[zeros[k]].preds[0];
  int skips[KR_SKIPS], nskips = skip_chain(c, J, zeros, nzeros, skips);
  if (!nskips) return fail(c, REGION_FAIL);
  int S = skips[0];
  /* the done block: where E's true edge, D's true edge and R's exits go */
  int done, x;
  if (!branch_of(c, E, &cond, &done, &x) || x != J || !(compares(cond, LLVMIntEQ, M, n) || wide_all_lanes(r, cond)))
    return fail(c, REGION_FAIL);
  int R_entry = J;
  if (r->nprol) {
    /* D: done when s - n >u -U, i.e. n - s in [1, U-1] (prol_shape's
     * coverage note in the header, (b')) */
    if (!branch_of(c, D, &cond, &x, &t) || x != done || !LLVMIsAICmpInst(cond) ||
        LLVMGetICmpPredicate(cond) != LLVMIntUGT || !is_const(LLVMGetOperand(cond, 1), -(int64_t)U) ||
        !is_op(LLVMGetOperand(cond, 0), LLVMSub) || LLVMGetOperand(LLVMGetOperand(cond, 0), 0) != s ||
        LLVMGetOperand(LLVMGetOperand(cond, 0), 1) != n)
      return fail(c, REGION_FAIL);
    R_entry = t;
  } else if (U == 2) {
    if (!branch_of(c, D, &cond, &x, &t) || x != done) return fail(c, REGION_FAIL);
    if (last_wide(r, cond, s)) {
      R_entry = t;
      goto tested;
    }
    LLVMValueRef n1 = LLVMIsAICmpInst(cond) ? LLVMGetOperand(cond, 1) : NULL;
    if (n1 == s) n1 = LLVMGetOperand(cond, 0);
    bool last = r->last && n1 == r->last; /* a triangle's i = n - 1 */
    if (!compares(cond, LLVMIntEQ, s, n1) ||
        (!last && (!is_op(n1, LLVMAdd) || LLVMGetOperand(n1, 0) != n || !is_const(LLVMGetOperand(n1, 1), -1))))
      return fail(c, REGION_FAIL);
    R_entry = t;
  }
tested:;
  /* every loop of the region: V's copies exit to E, R's to done; R
   * entered (through its versioning test) from D's false edge, V from the
   * skip's false edge */
  for (int k = 0; k < r->nloops; k++) {
    int to = exit_block(c, r->loops[k]);
    if (to < 0 || to != (r->vector[k] ? E : done)) return fail(c, REGION_FAIL);
    int head = r->loops[k]->header;
    if (!ir_dominates(c->dom, r->vector[k] ? S : R_entry, head)) return fail(c, REGION_FAIL);
  }
  /* the skip S: true when n < L (V then never runs with M = 0), or false
   * when n > K - 1 (clang's form before a sum in lanes); of a chain, one
   * of its skips (each only keeps V from running) */
  LLVMValueRef unit = NULL;
  bool reads_n = false;
  for (int k = 0; k < nskips; k++) {
    if (!branch_of(c, skips[k], &cond, &t, &f) || (t == J) == (f == J)) return fail(c, REGION_FAIL);
    reads_n |= skip_reads(c, cond, f == J, n, lanes, &unit, 0) ||
               (r->wide && skip_reads(c, cond, f == J, r->wide, lanes, &unit, 0));
    t = t == J ? f : t;
  }
  if (!reads_n || !ir_dominates(c->dom, t, r->vec->header)) return fail(c, REGION_FAIL);
  /* the guard G before S: true when n < 1, to done */
  int G = -1;
  for (int b = S, steps = 0; steps < 8 && G < 0 && !r->wide; steps++) {
    const ir_block *blk = &c->cfg->blocks[b];
    if (blk->npreds != 1 && r->nbefore && b == S && (b = before_entry(c, r, S)) >= 0) continue;
    /* S on every iteration of outer: G before the nest, if any */
    if (b == outer->header) {
      G = guard_outside(c, n);
      break;
    }
    if (blk->npreds != 1 || b < 0) return fail(c, REGION_FAIL);
    int p = blk->preds[0];
    /* (a bounds check on the way: one side traps) */
    if (branch_of(c, p, &cond, &t, &f) && !traps(c, t) && !traps(c, f)) {
      /* true to done when n < 1, or (enters) true on into S when n >= 1 */
      bool exact, enters = f == done && t == straight(c, b);
      if (enters ? !some_when_true(cond, n, &exact)
                 : t != done || f != straight(c, b) || !none_when_true(cond, n, &exact))
        return fail(c, REGION_FAIL);
      /* n positive where G leaves (x + k wrapped): the trip reads 0 there,
       * G's condition a live value of the nest's host */
      if (!exact && (r->sum || ir_loop_defines(kr_nest(c), cond, c->cfg))) return fail(c, REGION_FAIL);
      r->guard = exact ? NULL : cond;
      r->guard_enters = enters;
      G = p;
    }
    b = p;
  }
  if (G < 0 && !r->wide) return fail(c, REGION_FAIL);
  /* n >= 1 by G wherever the region runs: n & -L is n & (2^31 - L) */
  if (neg_mask && G < 0) return fail(c, REGION_FAIL);
  /* a triangle's row has no G: S itself then runs on every iteration of
   * the loop holding the region (it dominates that loop's latch) */
  if (r->wide && !ir_dominates(c->dom, S, outer->latches[0])) return fail(c, REGION_FAIL);
  /* the region's stores are V's, P's and R's only: nothing else of the
   * outer loop stores between G and done */
  if (!r->sum && !only_region_stores(c, outer, r, S)) return fail(c, REGION_FAIL);
  r->lanes = lanes;
  if (r->sum && !sum_shape(c, r, G, E, S, J, U == 2 ? D : -1, &done)) return fail(c, SUM_FAIL);
  /* other operators than add only where the region is the whole nest, a
   * reduction (kn_recog_top.c): a product's k loop sums */
  if (r->sum && r->sum_op != KN_RED_ADD && !(c->top && outer == c->top)) return fail(c, SUM_FAIL);
  c->reason = why;
  r->done = done;
  r->skip = S;
  r->count = n;
  r->lanes = lanes;
  r->start = s1;
  r->unit = unit;
  r->peel_at = s;
  r->prol_at = r->nprol ? s : NULL;
  r->trip = (ir_trip){.kind = IR_TRIP_SYMBOLIC, .start = LLVMConstInt(LLVMTypeOf(n), 0, 0), .bound = n,
                      .step = 1, .pred = r->row_outside ? LLVMIntULT : LLVMIntSLT, .bits = 32};
  return true;
}

bool kr_region_tri(kr_ctx *c, const kr_region *r, kn_size *out) {
  int o = -1;
  for (int d = 0; d < c->depth; d++)
    if (c->chain[d] == r->row) o = d;
  if (!c->allow_tri || o < 0 || c->chain[o] == r->rep) return kr_fail(c, "trip count depends on an outer loop");
  if (c->tri && (c->tri_outer != o || c->tri_add != 1)) return kr_fail(c, "two loops over triangles");
  c->last_tri = true;
  c->tri_outer = o;
  c->tri_add = 1;
  *out = c->trips[o];
  return true;
}

/* The innermost loop of the nest whose body holds block b, or NULL. */
const ir_loop *kr_innermost_at(const kr_ctx *c, int b) {
  const ir_loop *l = c->chain[0];
  if (b < 0 || !l->in_body[b]) return NULL;
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (int k = 0; k < l->nchildren; k++)
      if (l->children[k]->in_body[b]) {
        l = l->children[k];
        deeper = true;
        break;
      }
  }
  return l;
}

/* Whether v (a vector instruction of the nest) lies in a region's vector
 * loop, or feeds only such loops (the splat of `alpha * A[i][k]` made in
 * the outer loop's body). */
bool kr_region_vector_ok(kr_ctx *c, LLVMValueRef v) {
  const ir_loop *root = c->chain[0];
  int b = ir_cfg_index(c->cfg, LLVMGetInstructionParent(v));
  const ir_loop *l = kr_innermost_at(c, b);
  if (!l) return false;
  kr_region r;
  const char *why = c->reason;
  /* (a loop at the top of a function: the blocks of c->top around it) */
  const ir_loop *up = l->parent ? l->parent : l != root && root == c->top ? root : NULL;
  if (l->nchildren == 0 && up && l != root) {
    bool ok = kr_region_find(c, up, &r);
    if (ok || why) c->reason = why; /* else the shape's failure, if any */
    for (int k = 0; ok && k < r.nloops; k++)
      if (r.loops[k] == l) return r.vector[k];
    return false;
  }
  /* a value of the outer loop's body: every use in the region's V loops */
  bool ok = kr_region_find(c, l, &r);
  if (ok || why) c->reason = why;
  if (!ok) return false;
  int nuses = 0;
  for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    int ub = ir_cfg_index(c->cfg, LLVMGetInstructionParent(user));
    bool in_v = false;
    for (int k = 0; k < r.nloops; k++) in_v |= r.vector[k] && r.loops[k]->in_body[ub];
    /* an insertelement feeding the splat's shuffle */
    if (!in_v && LLVMGetTypeKind(LLVMTypeOf(user)) == LLVMVectorTypeKind && ub == b &&
        kr_region_vector_ok(c, user))
      in_v = true;
    if (!in_v) return false;
    nuses++;
  }
  return nuses > 0;
}

/* The nodes of one store (its address and value) at the region's j,
 * appended to c->nodes; its address into *a.  -1 on failure. */
static int32_t store_nodes(kr_ctx *c, LLVMValueRef st, int lane, kr_affine *a) {
  c->nmemo = 0;
  *a = kr_address(c, LLVMGetOperand(st, 1));
  if (!a->ok) return -1;
  a->c += kr_lane_offset(st, lane);
  c->in_lanes = lane >= 0;
  c->lane = lane;
  int32_t r = kr_expr(c, LLVMGetOperand(st, 0));
  c->in_lanes = false;
  c->lane = 0;
  c->nmemo = 0;
  return r;
}

/* Appends the nodes of store st of region loop l (chain[depth-1] for the
 * time) at lane `lane` (-1: a scalar store) with unroll copy `copy` of
 * `copies`; compares them with the reference (*len 0: becomes it). */
static bool same_as_reference(kr_ctx *c, const ir_loop *l, LLVMValueRef st, int lane, int copies, int copy,
                              int32_t *root, kr_affine *first) {
  kr_affine a;
  c->chain[c->depth - 1] = l;
  c->copies = copies;
  c->copy = copy;
  int32_t at = store_nodes(c, st, lane, &a);
  if (at < 0) return false;
  if (*root < 0) {
    *root = at;
    *first = a;
    return true;
  }
  return kr_same_tree(c, *root, at, 0) && kr_same_affine(&a, first);
}

/* The copy number of each scalar store of l (U stores a trip, one element
 * apart): from their addresses read as copy 0. */
static bool scalar_copies(kr_ctx *c, const ir_loop *l, LLVMValueRef *st, int n, int *copy_of, LLVMValueRef unit) {
  int64_t keys[KR_REGION_STORES];
  kr_affine a0 = {0};
  /* read as copy 0 of n (j's stride per copy: a stride s' adds is
   * checked against it, kr_int), the trip's step n times that */
  c->chain[c->depth - 1] = l;
  c->copies = n;
  c->copy = 0;
  LLVMValueRef keep = c->unit_param;
  c->unit_param = unit;
  for (int s = 0; s < n; s++) {
    kr_affine a = kr_address(c, LLVMGetOperand(st[s], 1));
    if (!a.ok) return c->unit_param = keep, false;
    if (s == 0) a0 = a;
    keys[s] = a.c;
  }
  c->unit_param = keep;
  return kr_assign_copies(keys, n, kr_coeff(&a0, c->depth - 1) * n, copy_of);
}

/* The nodes of term v of loop l (chain[depth-1] for the time) at lane
 * `lane` (-1: scalar) with unroll copy `copy` of `copies`. */
static int32_t term_nodes(kr_ctx *c, const ir_loop *l, LLVMValueRef v, int lane, int copies, int copy) {
  c->chain[c->depth - 1] = l;
  c->copies = copies;
  c->copy = copy;
  c->nmemo = 0;
  c->in_lanes = lane >= 0;
  c->lane = lane >= 0 ? lane : 0;
  int32_t at = kr_expr(c, v);
  c->in_lanes = false;
  c->lane = 0;
  c->nmemo = 0;
  return at;
}


/* Whether the U terms of one trip of R's copy l add the terms of j = s'
 * + U t + u, u = 0 .. U-1, each once, in any order (integer addition
 * commutes: clang may add copy 1's before copy 0's): term q is copy
 * (q + first) mod U for one first (U <= 2), compared with root; with
 * root < 0, the representative: *root becomes the copy 0 term's nodes,
 * *zero its index. */
static bool copies_alike(kr_ctx *c, const ir_loop *l, LLVMValueRef *terms, int U, int32_t *root, int *zero) {
  for (int first = 0; first < U; first++) {
    /* term q is copy (q + first) mod U: copy 0 is term z */
    int z = (U - first) % U;
    int32_t ref = *root;
    if (ref < 0 && (ref = term_nodes(c, l, terms[z], -1, U, 0)) < 0) continue;
    bool ok = true;
    for (int q = 0; q < U && ok; q++) {
      if (q == z && *root < 0) continue;
      int32_t at = term_nodes(c, l, terms[q], -1, U, (q + first) % U);
      ok = at >= 0 && kr_same_tree(c, ref, at, 0);
    }
    if (ok) {
      *root = ref;
      if (zero) *zero = z;
      return true;
    }
  }
  return false;
}

/* (c) of a sum region: every lane of the term V adds, in each of V's
 * copies, is R's term at its own j (lane l of trip t at j = L t + l), and
 * each copy of R adds that term; the reference is R's fast copy's. */
static bool sum_terms_alike(kr_ctx *c, const kr_region *r, int32_t *root) {
  LLVMValueRef latch, term, init, phi, terms[KR_SUM_TERMS];
  int U = r->copies, zero = 0;
  *root = -1;
  if (!(phi = sum_acc(c, r->rep, &latch, &term, &init)) || sum_chain(r->rep, c, latch, phi, terms) != U ||
      !copies_alike(c, r->rep, terms, U, root, &zero))
    return false;
  /* V's lanes against R's term read with r->unit as 1 (V runs only then) */
  int32_t vroot = *root;
  if (r->unit) {
    c->unit_param = r->unit;
    vroot = term_nodes(c, r->rep, terms[zero], -1, U, 0);
    c->unit_param = NULL;
    if (vroot < 0) return false;
  }
  for (int k = 0; k < r->nloops; k++) {
    if (!(phi = sum_acc(c, r->loops[k], &latch, &term, &init))) return false;
    if (r->vector[k]) {
      c->unit_param = r->unit;
      for (int lane = 0; lane < (int)r->lanes; lane++) {
        int32_t at = term_nodes(c, r->loops[k], term, lane, (int)r->lanes, lane);
        if (at < 0 || !kr_same_tree(c, vroot, at, 0)) return c->unit_param = NULL, false;
      }
      c->unit_param = NULL;
      continue;
    }
    /* R's copies add the terms of j = s' + U t + u, each once */
    if (r->loops[k] != r->rep && (sum_chain(r->loops[k], c, latch, phi, terms) != U ||
                                  !copies_alike(c, r->loops[k], terms, U, root, NULL)))
      return false;
  }
  /* the peel's term at j = s */
  if (r->peel) {
    c->peel_j = r;
    int32_t at = term_nodes(c, r->rep, r->peel, -1, 1, 0);
    c->peel_j = NULL;
    if (at < 0 || !kr_same_tree(c, *root, at, 0)) return false;
  }
  return true;
}

/* (c): every store of the region, in every copy, the representative's
 * expression at its own j.  c: the chain built with the region's
 * representative innermost; c and c->out are left as they were. */
bool kr_region_prove(kr_ctx *c, const kr_region *r) {
  kr_ctx keep = *c;
  kn_recog_nest out_keep = *c->out;
  bool ok = c->depth >= 2 || (c->top && r->outer == c->top);
  int32_t root = -1;
  kr_affine first = {0};
  /* compared in the region's outer loop (the loops around it give live
   * values, the same for every store) */
  c->region_proof = true;
  if (r->sum) {
    ok = ok && sum_terms_alike(c, r, &root);
    goto out;
  }
  /* R's fast copy first: the reference */
  const ir_loop *order[KR_REGION_LOOPS];
  int no = 0;
  order[no++] = r->rep;
  for (int k = 0; k < r->nloops; k++)
    if (r->loops[k] != r->rep) order[no++] = r->loops[k];
  /* with a unit x (V runs only when x == 1) a second pass compares V's
   * lanes with R's fast copy, both read with x as 1; the first pass then
   * compares R's copies only */
  for (int pass = 0; pass < (r->unit ? 2 : 1) && ok; pass++) {
    c->unit_param = pass ? r->unit : NULL;
    if (pass) root = -1;
    for (int k = 0; k < no && ok; k++) {
      const ir_loop *l = order[k];
      LLVMValueRef st[KR_REGION_STORES];
      int copy_of[KR_REGION_STORES];
      bool vector;
      int n = loop_stores(c, l, &vector, st, KR_REGION_STORES);
      if (vector) {
        for (int s = 0; s < n && ok && (pass || !r->unit); s++)
          for (int lane = 0; lane < (int)r->lanes && ok; lane++)
            ok = same_as_reference(c, l, st[s], lane, (int)r->lanes, lane, &root, &first);
        continue;
      }
      if (pass && l != r->rep) continue;
      /* the copy numbers from the addresses (a stride of x read with x as
       * 1 where the constant parts alone do not tell them apart: only a
       * guess, each copy's nodes are then compared at its own j) */
      ok = n == r->nstores &&
           (scalar_copies(c, l, st, n, copy_of, NULL) || (r->unit && scalar_copies(c, l, st, n, copy_of, r->unit)));
      for (int u = 0; u < n && ok; u++) {
        int s = 0;
        while (copy_of[s] != u) s++;
        ok = same_as_reference(c, l, st[s], -1, n, u, &root, &first);
      }
    }
    /* the prologue loop P's stores at j = s + t, read at s = 0 (its
     * counters' starts against s as R's against s': prol_j) */
    for (int k = 0; ok && !pass && k < r->nprol; k++) {
      LLVMValueRef st[KR_REGION_STORES];
      bool vector;
      ok = loop_stores(c, r->prol[k], &vector, st, KR_REGION_STORES) == 1 && !vector;
      c->prol_j = r;
      ok = ok && same_as_reference(c, r->prol[k], st[0], -1, 1, 0, &root, &first);
      c->prol_j = NULL;
    }
    /* P's store at j = s */
    if (ok && r->peel && !pass) {
      c->peel_j = r;
      ok = same_as_reference(c, r->rep, r->peel, -1, 1, 0, &root, &first);
      c->peel_j = NULL;
    }
    c->unit_param = NULL;
  }
out:;
  const char *why = c->reason;
  *c = keep;
  *c->out = out_keep;
  if (!ok && r->sum) return kr_fail(c, why ? why : "vectorised integer reduction: its lanes add other terms than its remainder");
  if (!ok) return kr_fail(c, why ? why : "vector (SIMD) loop inside another loop: its parts store different values");
  return true;
}

/* Whether v is in the hsum tree of a sum region (the adds and shuffles
 * from V's final accumulator to hsum, the phi of it) */
static bool in_hsum(LLVMValueRef v, LLVMValueRef at, kn_red_op op, int depth) {
  if (v == at) return true;
  if (depth > 16 || !(kr_red_op(at) == op || is_op(at, LLVMShuffleVector) || LLVMIsAExtractElementInst(at)))
    return false;
  /* (a call's operands: its two arguments, then the callee) */
  int n = LLVMIsACallInst(at) ? 2 : LLVMGetNumOperands(at);
  for (int k = 0; k < n; k++)
    if (LLVMIsAInstruction(LLVMGetOperand(at, (unsigned)k)) && in_hsum(v, LLVMGetOperand(at, (unsigned)k), op, depth + 1))
      return true;
  return false;
}

bool kr_region_sum_ok(kr_ctx *c, LLVMValueRef v) {
  int b = ir_cfg_index(c->cfg, LLVMGetInstructionParent(v));
  const ir_loop *root = c->chain[0];
  if (b < 0 || !root->in_body[b] || !root->nchildren) return false;
  /* the loop of the nest whose body (its loops aside) holds v, or whose
   * child does */
  const ir_loop *l = root;
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (int k = 0; k < l->nchildren; k++)
      if (l->children[k]->in_body[b] && l->children[k]->nchildren) {
        l = l->children[k];
        deeper = true;
        break;
      }
  }
  kr_region r;
  const char *why = c->reason;
  bool ok = kr_region_find(c, l, &r);
  c->reason = why; /* no sum region: the nest's other reasons stand */
  if (!ok || !r.sum) return false;
  for (int k = 0; k < r.nloops; k++)
    if (r.vector[k] && r.loops[k]->in_body[b]) {
      LLVMValueRef latch, term, init;
      /* V's accumulator and its add; the rest of V is read lane by lane */
      return sum_acc(c, r.loops[k], &latch, &term, &init) == v || latch == v;
    }
  /* V's start, used by V's copies' phis only */
  LLVMValueRef latch, term, init;
  if (sum_acc(c, r.vec, &latch, &term, &init) && init == v) return true;
  return in_hsum(v, r.hsum, r.sum_op, 0);
}

/* Whether block b is a loop's header: a predecessor it dominates. */
static bool loop_header(const kr_ctx *c, int b) {
  for (int k = 0; k < c->cfg->blocks[b].npreds; k++)
    if (ir_dominates(c->dom, b, c->cfg->blocks[b].preds[k])) return true;
  return false;
}

/* Whether every use of v, followed through integer arithmetic and phis,
 * ends in a branch's condition or in the offset a trap reports (a phi of
 * the trap's block): a value that only steers. */
static bool only_steers(const kr_ctx *c, LLVMValueRef v, int depth) {
  /* (the bounds pass's tests of a remainder after a peel are and'ed i128
   * sums: up to about a dozen links from the load to the branch) */
  if (depth > 16) return false;
  for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    if (LLVMIsABranchInst(user)) continue;
    if (LLVMIsAPHINode(user)) {
      int b = ir_cfg_index(c->cfg, LLVMGetInstructionParent(user));
      if (b >= 0 && traps(c, b)) continue;
      /* a join of such values (GVN's phi of the limit a bounds check
       * compares with, computed on both paths to the remainder) steers
       * as they do; not a loop header's phi (no cycles to follow) */
      if (b < 0 || loop_header(c, b) || !only_steers(c, user, depth + 1)) return false;
      continue;
    }
    /* (the checked copy's test hoisted before V: its trips left within
     * the size, `umax(size - 15, p)` and a shift) */
    kn_red_op call = LLVMIsACallInst(user) ? kr_red_op(user) : KN_RED_COUNT;
    if (call == KN_RED_UMAX || call == KN_RED_UMIN) {
      if (!only_steers(c, user, depth + 1)) return false;
      continue;
    }
    switch (LLVMGetInstructionOpcode(user)) {
    case LLVMAdd: case LLVMSub: case LLVMZExt: case LLVMSExt: case LLVMTrunc: case LLVMICmp:
    case LLVMAnd: case LLVMOr: case LLVMXor: case LLVMSelect: case LLVMShl: case LLVMLShr:
      if (!only_steers(c, user, depth + 1)) return false;
      break;
    default:
      return false;
    }
  }
  return true;
}

/* A read of host state (the memory's size, loaded in a region's guards)
 * that only steers branches of a region's outer loop: to the bounds
 * pass's copy of V or R (proved alike, (c)) or to traps, which the
 * runtime's range check before a launch subsumes. */
bool kr_region_host_read(kr_ctx *c, LLVMValueRef ld) {
  if (!only_steers(c, ld, 0)) return false;
  int b = ir_cfg_index(c->cfg, LLVMGetInstructionParent(ld));
  const ir_loop *l = c->chain[0];
  if (b < 0 || !l->in_body[b]) return false;
  for (bool deeper = true; deeper;) {
    deeper = false;
    int nested = 0;
    const ir_loop *only = NULL;
    for (int k = 0; k < l->nchildren; k++)
      if (l->children[k]->nchildren) nested++, only = l->children[k];
    for (int k = 0; k < l->nchildren; k++)
      if (l->children[k]->in_body[b] && l->children[k]->nchildren) {
        l = l->children[k];
        deeper = true;
        break;
      }
    /* hoisted out of the loop holding the region (LICM moves the size
     * read of a region's bounds test to the loop around): the one nest
     * of l, when l holds no region itself */
    if (!deeper && nested == 1 && l->nchildren == 1) {
      l = only;
      deeper = true;
    }
  }
  kr_region r;
  const char *why = c->reason;
  bool ok = kr_region_find(c, l, &r);
  if (ok || why) c->reason = why;
  return ok;
}

/* The pointers pass (compiler/ir/ir_address_loop.c) puts nuw on an i32
 * pointer's increment p + s where an access at p bounds it, and LLVM then
 * widens p to an i64 counter q = phi(zext(x), q + s): q is zext(p) in
 * every iteration (p never wraps), so q reads as the Wasm address x + s t
 * that p did.  Read so, V's counters give the same live values (x, not
 * its extension) as R's i32 ones, which the lane compare needs. */
LLVMValueRef kr_region_widened_start(const ir_iv *iv) {
  LLVMValueRef s = iv->start;
  if (iv->bits == 64 && s && LLVMIsAZExtInst(s) && LLVMGetIntTypeWidth(LLVMTypeOf(LLVMGetOperand(s, 0))) == 32)
    return LLVMGetOperand(s, 0);
  return s;
}

const kr_region *kr_region_of(const kr_ctx *c, const ir_loop *l) {
  const kr_region *rs[2] = {c->region, c->pregion};
  for (int i = 0; i < 2; i++)
    for (int k = 0; rs[i] && k < rs[i]->nloops; k++)
      if (rs[i]->loops[k] == l && !rs[i]->vector[k] && rs[i]->start) return rs[i]; /* (alt_shape: none) */
  for (int i = 0; i < 2; i++)
    for (int k = 0; rs[i] && k < rs[i]->nprol; k++)
      if (rs[i]->prol[k] == l) return rs[i];
  return NULL;
}

/* Every path of the region reaches its done block, which dominates l: the
 * region runs (whole) before l on each iteration of its outer loop.  The
 * done block may be l's header itself (read past straight-line blocks:
 * -O3 unswitches `m > 0` out of syrk's i loop, so the region's exits fall
 * through the k loop's preheader into its header): the region's blocks lie
 * outside l (its loops are l's siblings), so they reach l's first
 * iteration, never a later one. */
bool kr_region_before(const kr_ctx *c, const kr_region *r, const ir_loop *l) {
  if (r->done < 0) return false;
  if (r->done == l->header) {
    for (int k = 0; k < r->nloops; k++)
      if (l->in_body[r->loops[k]->header]) return false;
    return true;
  }
  return ir_dominates(c->dom, r->done, l->header) && !l->in_body[r->done];
}

bool kr_region_copies_fork(const kr_ctx *c, const ir_loop *outer, int b) {
  const ir_block *blk = &c->cfg->blocks[b];
  const ir_loop *into[2] = {NULL, NULL};
  if (blk->nsuccs != 2) return false;
  for (int s = 0; s < 2; s++)
    for (int k = 0; k < outer->nchildren; k++)
      if (!outer->children[k]->nchildren && straight(c, blk->succs[s]) == outer->children[k]->header)
        into[s] = outer->children[k];
  if (!into[0] || !into[1] || into[0] == into[1] || wasm_loop(c, into[0]) != wasm_loop(c, into[1]) ||
      !wasm_loop(c, into[0]))
    return false;
  return ir_loop_checked(c->cfg, into[0]) != ir_loop_checked(c->cfg, into[1]);
}

bool kr_region_trap_check(const kr_ctx *c, int b) {
  LLVMValueRef cond;
  int t, f;
  return branch_of(c, b, &cond, &t, &f) && (traps(c, t) != traps(c, f));
}
