/* kn_recog.c: runs the recognisers on every outermost loop nest of a
 * function: safety checks first, then map, reduction or matmul. */
#include <stddef.h>
#include <string.h>

#include "ir_pass.h"
#include "kn_internal.h"
#include "twasm_abi.h"

static const char *trap_reason(uint64_t code) {
  switch (code) {
  case 2: return "may trap: integer division";
  case 3: return "may trap: integer overflow (division or float to integer conversion)";
  case 4: return "may trap: float to integer conversion";
  case 1: return "may trap: unreachable";
  case 10: return "calls a function (inlined: its stack check may trap)";
  default: return "may trap";
  }
}

/* The trap code when bb only calls @twasm_rt_trap, else -1. */
static int64_t trap_code(LLVMBasicBlockRef bb) {
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
    if (!LLVMIsACallInst(i)) continue;
    if (strcmp(ir_callee_name(i), "twasm_rt_trap") != 0) return -1;
    LLVMValueRef code = LLVMGetOperand(i, 1);
    return LLVMIsAConstantInt(code) ? (int64_t)LLVMConstIntGetZExtValue(code) : 0;
  }
  return -1;
}

/* The block a trap exit reaches through LCSSA blocks (phis or selects of
 * the trap's offset, and the arithmetic and compares choosing them, then
 * one branch):
 * bounds checks the bounds pass left in the copies inside a nest
 * (kn_lanes_region.c), two of them merged by SimplifyCFG into one exit
 * that selects the offset (syrk's V at -msimd128 compares which of its
 * two loads is out of bounds there). */
LLVMBasicBlockRef kr_past_phis(const kr_ctx *c, int b) {
  for (int n = 0; n < 4 && c->cfg->blocks[b].nsuccs == 1; n++) {
    LLVMValueRef first = LLVMGetFirstInstruction(c->cfg->blocks[b].bb);
    while (first && (LLVMIsAPHINode(first) || LLVMIsASelectInst(first) || LLVMIsAICmpInst(first) ||
                     LLVMIsABinaryOperator(first) || LLVMIsACastInst(first)))
      first = LLVMGetNextInstruction(first);
    if (!first || !LLVMIsABranchInst(first)) break;
    b = c->cfg->blocks[b].succs[0];
  }
  return c->cfg->blocks[b].bb;
}

bool kr_trap_way(const kr_ctx *c, int b) { return trap_code(kr_past_phis(c, b)) >= 0; }

/* Exits to out-of-bounds traps are guards that the runtime's pre-launch
 * range check subsumes (when it passes, no access traps); any other trap
 * exit rejects the nest; the rest are the nest's exit blocks. */
static bool scan_exits(kr_ctx *c) {
  const ir_loop *l = c->chain[0];
  kn_recog_nest *o = c->out;
  o->exits = tw_arena_alloc(c->arena, (size_t)(l->nexits + 1) * sizeof *o->exits);
  for (int i = 0; i < l->nexits; i++) {
    LLVMBasicBlockRef to = c->cfg->blocks[l->exits[i].to].bb;
    int64_t code = trap_code(kr_past_phis(c, l->exits[i].to));
    if (code == 5) continue;
    /* a call that never returns (assert, abort): a guard the host checks
     * before a launch (kn_recog_guard.c) */
    if (kr_guard_exit(c, l->exits[i].to)) {
      c->nguard_exits++;
      continue;
    }
    if (code >= 0) return kr_fail(c, trap_reason((uint64_t)code));
    bool seen = false;
    for (int k = 0; k < o->nexits; k++) seen |= o->exits[k] == to;
    if (!seen) o->exits[o->nexits++] = to;
  }
  return true;
}

static bool only_compared(LLVMValueRef v) {
  for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u))
    if (!LLVMIsAICmpInst(LLVMGetUser(u))) return false;
  return true;
}

/* Whether v only reaches compares, directly or through adding a
 * constant and truncating: the bounds pass's `limit = size - 4` of a
 * check it left in the nest (a row table's, round 13).  With phis: a
 * region at the top of a function (kn_recog_top.c), whose bounds tests
 * before its loops GVN may merge (the memory size loaded on two paths). */
static bool only_bounded(LLVMValueRef v, int depth, bool phis) {
  for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    if (LLVMIsAICmpInst(user)) continue;
    bool step = LLVMIsATruncInst(user) || (phis && LLVMIsAPHINode(user)) ||
                (LLVMIsABinaryOperator(user) && LLVMGetInstructionOpcode(user) == LLVMAdd &&
                 (LLVMIsAConstantInt(LLVMGetOperand(user, 0)) || LLVMIsAConstantInt(LLVMGetOperand(user, 1))));
    if (!step || depth > 3 || !only_bounded(user, depth + 1, phis)) return false;
  }
  return true;
}

bool kr_safe_divisor(LLVMValueRef div) {
  LLVMOpcode op = LLVMGetInstructionOpcode(div);
  LLVMValueRef d = LLVMGetOperand(div, 1);
  return LLVMIsAConstantInt(d) && LLVMConstIntGetZExtValue(d) != 0 &&
         !((op == LLVMSDiv || op == LLVMSRem) && LLVMConstIntGetSExtValue(d) == -1);
}

/* p = base + off, a GEP of one constant byte offset. */
static bool byte_gep(LLVMValueRef p, uint64_t off, LLVMValueRef *base) {
  if (!LLVMIsAGetElementPtrInst(p) || LLVMGetNumOperands(p) != 2) return false;
  LLVMValueRef k = LLVMGetOperand(p, 1);
  if (!LLVMIsAConstantInt(k) || LLVMConstIntGetZExtValue(k) != off) return false;
  *base = LLVMGetOperand(p, 0);
  return true;
}

/* A load of the memory's size (the i64 at size_bytes of the memory object
 * at vmctx->mem), which bounds checks read: inside a nest it means the
 * bounds pass could not test the nest's accesses once before it. */
static bool memory_size_load(LLVMValueRef ld) {
  LLVMValueRef obj, vmctx;
  LLVMTypeRef t = LLVMTypeOf(ld);
  return LLVMGetTypeKind(t) == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == 64 &&
         byte_gep(LLVMGetOperand(ld, 0), offsetof(twasm_memory_abi, size_bytes), &obj) && LLVMIsALoadInst(obj) &&
         byte_gep(LLVMGetOperand(obj, 0), offsetof(twasm_vmctx, mem), &vmctx) && LLVMIsAArgument(vmctx);
}

static bool scan_insn(kr_ctx *c, LLVMValueRef i) {
  LLVMOpcode op = LLVMGetInstructionOpcode(i);
  if (ir_touches_vector(i) && !kr_lanes_allowed(c, i)) return false;
  if ((op == LLVMUDiv || op == LLVMSDiv || op == LLVMURem || op == LLVMSRem) && !kr_safe_divisor(i))
    return kr_fail(c, "may trap: integer division");
  if (op == LLVMLoad || op == LLVMStore) {
    LLVMValueRef base, ptr = LLVMGetOperand(i, op == LLVMLoad ? 0 : 1);
    for (base = ptr; LLVMIsAGetElementPtrInst(base);) base = LLVMGetOperand(base, 0);
    if (base != c->mem_base && !(op == LLVMLoad && (only_compared(i) || kr_region_host_read(c, i) ||
                                                     (memory_size_load(i) && only_bounded(i, 0, c->top != NULL))))) {
      if (op == LLVMLoad && memory_size_load(i))
        return kr_fail(c, "reads the memory size inside the nest (a bounds check the bounds pass could not "
                          "test once before the nest)");
      return kr_fail(c, op == LLVMLoad ? "reads host state" : "writes host state");
    }
    if (LLVMGetVolatile(i) || LLVMGetOrdering(i) != LLVMAtomicOrderingNotAtomic)
      return kr_fail(c, "volatile or atomic access");
  }
  if (op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg || op == LLVMFence)
    return kr_fail(c, "atomic operation");
  return true;
}

static bool is_real_call(LLVMValueRef i) {
  if (LLVMGetInstructionOpcode(i) != LLVMCall) return false;
  const char *name = ir_callee_name(i);
  return strncmp(name, "llvm.", 5) != 0 || strncmp(name, "llvm.mem", 8) == 0;
}

/* Calls first: they are the most telling reason (the loads that fetch an
 * imported callee would otherwise be reported as "reads host state"). */
static bool scan_nest(kr_ctx *c) {
  const ir_loop *l = c->chain[0];
  for (int pass = 0; pass < 2; pass++)
    for (int b = 0; b < l->nbody; b++)
      for (LLVMValueRef i = LLVMGetFirstInstruction(c->cfg->blocks[l->body[b]].bb); i;
           i = LLVMGetNextInstruction(i))
        if (pass == 0 ? is_real_call(i) && !kr_pure_call(c, i) : !scan_insn(c, i))
          return false;
  return scan_exits(c);
}

bool kr_scan(kr_ctx *c) { return scan_nest(c); }

/* LLVM writes `trunc(iv.next) == 0` on a widened i64 IV as
 * `(iv.next & mask) == 0`, mask dropping the low bits the step keeps zero. */
static const ir_trip *masked_trip(kr_ctx *c, const ir_loop *l) {
  if (l->nivs == 0 || l->nexits != 1) return NULL;
  LLVMValueRef br = LLVMGetBasicBlockTerminator(c->cfg->blocks[l->exits[0].from].bb);
  if (!LLVMIsABranchInst(br) || !LLVMIsConditional(br)) return NULL;
  LLVMValueRef cmp = LLVMGetCondition(br), and;
  if (!LLVMIsAICmpInst(cmp) || LLVMGetICmpPredicate(cmp) != LLVMIntEQ) return NULL;
  if (LLVMGetSuccessor(br, 0) != c->cfg->blocks[l->exits[0].to].bb) return NULL;
  and = LLVMGetOperand(cmp, 0);
  LLVMValueRef zero = LLVMGetOperand(cmp, 1);
  if (!LLVMIsAConstantInt(zero) || LLVMConstIntGetZExtValue(zero) != 0 || !LLVMIsABinaryOperator(and) ||
      LLVMGetInstructionOpcode(and) != LLVMAnd || !LLVMIsAConstantInt(LLVMGetOperand(and, 1)))
    return NULL;
  for (int k = 0; k < l->nivs; k++) {
    const ir_iv *iv = &l->ivs[k];
    if (iv->next != LLVMGetOperand(and, 0) || !LLVMIsAConstantInt(iv->start) || iv->step == 0) continue;
    uint64_t mask = LLVMConstIntGetZExtValue(LLVMGetOperand(and, 1));
    uint64_t low = (uint64_t)(iv->step & -iv->step) - 1; /* bits the step never sets */
    uint64_t start = LLVMConstIntGetZExtValue(iv->start);
    if ((start & low) || (mask | low) != 0xffffffffu) continue;
    ir_trip *t = tw_arena_alloc(c->arena, sizeof *t);
    *t = (ir_trip){.kind = IR_TRIP_CONST, .iv = iv, .start = iv->start, .step = iv->step,
                   .pred = LLVMIntNE, .cmp_next = true, .bits = 32, .exit = l->exits[0]};
    if (ir_trip_eval(t, (int64_t)start, 0, &t->count)) return t;
  }
  return NULL;
}

/* The loop of outer other than l whose one exit, traps aside, is the edge
 * from block `from` to block `to`, or NULL. */
static const ir_loop *sibling_exiting(const kr_ctx *c, const ir_loop *outer, const ir_loop *l, int from, int to) {
  for (int s = 0; s < outer->nchildren; s++) {
    const ir_loop *x = outer->children[s];
    if (x == l || !x->in_body[from]) continue;
    int out = 0;
    for (int e = 0; e < x->nexits; e++) {
      if (x->exits[e].from == from && x->exits[e].to == to) out++;
      else if (trap_code(c->cfg->blocks[x->exits[e].to].bb) != 5) return NULL;
    }
    return out == 1 ? x : NULL;
  }
  return NULL;
}

/* The value of v on the first iteration of the nest's outer loop (t_0 =
 * 0), v computed from t_0 and constants alone by adds, ands and ors:
 * false when it is not such a value. */
static bool value_at_first(kr_ctx *c, LLVMValueRef v, uint64_t *out, int depth) {
  if (depth > 8 || LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMIntegerTypeKind) return false;
  unsigned bits = LLVMGetIntTypeWidth(LLVMTypeOf(v));
  uint64_t mask = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
  LLVMOpcode op = LLVMIsABinaryOperator(v) ? LLVMGetInstructionOpcode(v) : 0;
  if (op == LLVMAnd || op == LLVMOr) {
    uint64_t x, y;
    if (!value_at_first(c, LLVMGetOperand(v, 0), &x, depth + 1) ||
        !value_at_first(c, LLVMGetOperand(v, 1), &y, depth + 1))
      return false;
    *out = (op == LLVMAnd ? x & y : x | y) & mask;
    return true;
  }
  kr_affine a = kr_int(c, v);
  if (!a.ok) return false;
  for (int i = 0; i < a.n; i++)
    if (a.t[i].dim != 0 || a.t[i].param) return false;
  *out = (uint64_t)a.c & mask;
  return true;
}

/* Whether v is t_0 itself (the outer loop's counter from 0 by 1), at
 * least 32 bits wide. */
static bool is_outer_counter(kr_ctx *c, LLVMValueRef v) {
  if (LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(LLVMTypeOf(v)) < 32)
    return false;
  kr_affine a = kr_int(c, v);
  return a.ok && a.c == 0 && a.n == 1 && a.t[0].dim == 0 && !a.t[0].param && a.t[0].coeff == 1;
}

/* Whether a branch on cond, computed in the nest, never skips the loop
 * behind it (skip: the value of cond that skips): the re-roller's bypass
 * of a loop re-rolled inside an outer loop, `(x & 1 | t_0) == 0` after
 * InstCombine, where x is the outer loop's t_0 + 1.  Proved for every
 * t_0: cond = (v == 0) or (v != 0) with v an or of values one of which is
 * t_0 (so v != 0 for 0 < t_0 < 2^32), and v != 0 at t_0 = 0 by
 * evaluation.  Taken only for the j loop of a product over a triangle
 * (kr_loop_trip), whose outer loop, the product's i, runs fewer than
 * 2^32 times: C's j stride is a constant other than 0 (kr_matmul's
 * finish), so the runtime's bounds check of C's corner (m-1, m-1) fails
 * for any larger m. */
static bool never_skips(kr_ctx *c, LLVMValueRef cond, bool skip) {
  if (!cond || !LLVMIsAICmpInst(cond)) return false;
  LLVMIntPredicate p = LLVMGetICmpPredicate(cond);
  LLVMValueRef v = LLVMGetOperand(cond, 0), zero = LLVMGetOperand(cond, 1);
  if (!LLVMIsAConstantInt(zero) || LLVMConstIntGetZExtValue(zero) != 0) return false;
  /* skipped where v == 0 */
  if (!((p == LLVMIntEQ && skip) || (p == LLVMIntNE && !skip))) return false;
  uint64_t first;
  if (!value_at_first(c, v, &first, 0) || first == 0) return false;
  LLVMValueRef parts[8];
  int n = 0, seen = 0;
  parts[n++] = v;
  while (seen < n) {
    LLVMValueRef x = parts[seen++];
    if (is_outer_counter(c, x)) return true;
    if (LLVMIsABinaryOperator(x) && LLVMGetInstructionOpcode(x) == LLVMOr && n + 2 <= 8) {
      parts[n++] = LLVMGetOperand(x, 0);
      parts[n++] = LLVMGetOperand(x, 1);
    }
  }
  return false;
}

/* Whether chain[d] runs on every iteration of chain[d-1]: its header
 * dominates the outer latch, or the one branch that skips it tests a value
 * computed before the nest (`w > 2` that LICM hoisted but nothing
 * unswitched), which the host folds into the trip param (*guard, *enters).
 * A loop entered from the one exit of a loop before it in the same outer
 * loop (atax's two j loops) runs whenever that one does: its guard.  A
 * loop under any other condition (flag[y]) is no part of a map or
 * product. */
static bool entered_always(kr_ctx *c, const ir_loop *l, const ir_loop *outer, LLVMValueRef *guard,
                           bool *enters) {
  *guard = NULL;
  if (ir_dominates(c->dom, l->header, outer->latches[0])) return true;
  const ir_block *h = &c->cfg->blocks[l->header];
  int entry = -1;
  for (int i = 0; i < h->npreds; i++) {
    if (l->in_body[h->preds[i]]) continue;
    if (entry >= 0) return false;
    entry = h->preds[i];
  }
  /* back along the straight path into the loop, to the deciding branch
   * (the entry block itself when the loop has no preheader) */
  if (entry < 0) return false;
  int x = l->header, p = entry;
  for (;;) {
    const ir_loop *before = sibling_exiting(c, outer, l, p, x);
    if (before) return entered_always(c, before, outer, guard, enters);
    /* the bounds pass's choice between the loop's copies: one runs; a
     * bounds check before them: the launch's range checks pass it */
    if (c->cfg->blocks[p].nsuccs != 1 && !kr_region_copies_fork(c, outer, p) && !kr_region_trap_check(c, p) &&
        !kr_guard_branch(c, p)) {
      LLVMValueRef br = LLVMGetBasicBlockTerminator(c->cfg->blocks[p].bb);
      if (!br || !LLVMIsABranchInst(br) || !LLVMIsConditional(br) ||
          !outer->in_body[p] || !ir_dominates(c->dom, p, outer->latches[0]))
        return false;
      LLVMValueRef cond = LLVMGetCondition(br);
      LLVMBasicBlockRef in = c->cfg->blocks[x].bb;
      if (LLVMGetSuccessor(br, 0) == LLVMGetSuccessor(br, 1)) return false;
      /* a bypass in the nest that never skips: taken only by products
       * over a triangle, whose j loops sit behind one */
      if (ir_loop_defines(kr_nest(c), cond, c->cfg) && !kr_host_value(c, cond, 0))
        return c->allow_tri && (c->bypassed = never_skips(c, cond, LLVMGetSuccessor(br, 0) != in));
      *guard = cond;
      *enters = LLVMGetSuccessor(br, 0) == in;
      return true;
    }
    /* back to outer's header past copies' forks and bounds checks only */
    if (p == outer->header) return true;
    if (c->cfg->blocks[p].npreds != 1) return false;
    x = p;
    p = c->cfg->blocks[x].preds[0];
  }
}

/* A loop over a triangle's row: counting from 0 by 1 while the next
 * counter differs from t_o + add (o an outer chain dim, add 1), or down
 * by 1 from t_o + add while the next differs from 0 (clang's form without
 * unrolling), so it runs t_o + add times, never 0 (t_o + 1 < 2^32: the
 * outer loop runs at most 2^32 times); *out: o's count (kn_mm_tri's
 * rectangle). */
static bool triangle_trip(kr_ctx *c, const ir_loop *l, const ir_trip *t, kn_size *out) {
  if (t->kind != IR_TRIP_SYMBOLIC || (t->step != 1 && t->step != -1) || t->start_add || !t->cmp_next ||
      t->pred != LLVMIntNE || t->other_exits || ir_loop_defines(l, t->bound, c->cfg) ||
      ir_loop_defines(l, t->start, c->cfg))
    return false;
  /* the end that is 0, and the one that is t_o + add */
  LLVMValueRef zero = t->step == 1 ? t->start : t->bound, far = t->step == 1 ? t->bound : t->start;
  if (!LLVMIsAConstantInt(zero) || LLVMConstIntGetZExtValue(zero) != 0) return false;
  kr_affine b = kr_int(c, far);
  if (!b.ok || b.n != 1 || b.t[0].param || b.t[0].coeff != 1 || b.t[0].dim < 0 || b.c != 1) return false;
  int o = b.t[0].dim;
  if (o >= c->depth || c->chain[o] == l || !ir_loop_contains_block(c->chain[o], c->cfg->blocks[l->header].bb, c->cfg))
    return false;
  if (c->tri && (c->tri_upper || c->tri_outer != o || c->tri_add != b.c)) return false;
  c->last_tri = true;
  c->tri_upper = false;
  c->tri_outer = o;
  c->tri_add = b.c;
  *out = c->trips[o];
  return true;
}

/* v without zero extensions. */
static LLVMValueRef unzext(LLVMValueRef v) {
  while (v && LLVMIsAZExtInst(v)) v = LLVMGetOperand(v, 0);
  return v;
}

/* b's bound less add: b itself for add 0, `b + -1` for add 1 (what
 * clang writes for `i < m - 1`), zero extensions aside. */
static bool bound_less(LLVMValueRef outer, LLVMValueRef b, int64_t add) {
  outer = unzext(outer);
  b = unzext(b);
  if (add == 0) return outer == b;
  return outer && LLVMIsABinaryOperator(outer) && LLVMGetInstructionOpcode(outer) == LLVMAdd &&
         unzext(LLVMGetOperand(outer, 0)) == b && LLVMIsAConstantInt(LLVMGetOperand(outer, 1)) &&
         LLVMConstIntGetSExtValue(LLVMGetOperand(outer, 1)) == -add;
}

/* A loop over an upper triangle's row (covariance's `for (j = i; j < m;
 * j++)`, add 0; correlation's `for (i = 0; i < m - 1; i++) for (j = i +
 * 1; j < m; j++)`, add 1): counting by 1 from t_o + add (o an outer chain
 * dim) while the next counter differs from a bound b, where chain loop o
 * counts by 1 from 0 while its next counter differs from b - add (b + -1
 * for add 1; either maybe zero-extended), so o's count T is b - add and
 * on row t_o < T this loop runs t_o + add, ..., b - 1 (never 0 times, no
 * wrap).  *out: the rectangle's columns, T for add 0, b (zero-extended:
 * T + 1) for add 1; the loop's counter then reads as the column itself
 * (kn_recog_affine.c). */
static bool upper_trip(kr_ctx *c, const ir_loop *l, const ir_trip *t, kn_size *out) {
  if (c->region || c->pregion || t->kind != IR_TRIP_SYMBOLIC || t->step != 1 || t->start_add || !t->cmp_next ||
      t->pred != LLVMIntNE || t->other_exits || ir_loop_defines(kr_nest(c), t->bound, c->cfg) ||
      ir_loop_defines(l, t->start, c->cfg))
    return false;
  kr_affine b = kr_int(c, t->start);
  if (!b.ok || b.n != 1 || b.t[0].param || b.t[0].coeff != 1 || b.t[0].dim < 0 || b.c < 0 || b.c > 1) return false;
  int o = b.t[0].dim;
  if (o >= c->depth || c->chain[o] == l || !ir_loop_contains_block(c->chain[o], c->cfg->blocks[l->header].bb, c->cfg))
    return false;
  const ir_trip *ot = &c->chain[o]->trip;
  if (ot->kind != IR_TRIP_SYMBOLIC || ot->step != 1 || ot->start_add || !ot->cmp_next || ot->pred != LLVMIntNE ||
      ot->other_exits || !LLVMIsAConstantInt(ot->start) || LLVMConstIntGetZExtValue(ot->start) != 0 ||
      ot->bits < t->bits || t->bits != 32 || !bound_less(ot->bound, t->bound, b.c) || !c->trips[o].is_param)
    return false;
  if (c->tri && (!c->tri_upper || c->tri_outer != o || c->tri_add != b.c)) return false;
  kn_size cols = c->trips[o];
  if (b.c == 1) {
    int p = kr_param(c, (kn_bind){.kind = KN_BIND_VALUE, .value = unzext(t->bound)});
    if (p < 0) return kr_fail(c, "too many live values");
    cols = (kn_size){true, p};
  }
  c->last_tri = true;
  c->tri_upper = true;
  c->tri_outer = o;
  c->tri_add = b.c;
  *out = cols;
  return true;
}

/* The count of loop l on each iteration of outer (NULL for the nest's
 * outermost loop), *out: a constant or a trip param. */
bool kr_loop_trip(kr_ctx *c, const ir_loop *l, const ir_loop *outer, unsigned copies, kn_size *out) {
  const ir_trip *t = &l->trip;
  LLVMValueRef guard = NULL;
  bool enters = false;
  c->last_tri = false;
  c->bypassed = false;
  const kr_region *region = c->region && l == c->region->rep     ? c->region
                            : c->pregion && l == c->pregion->rep ? c->pregion
                                                                 : NULL;
  if (region && region->wide && !region->row_outside) return kr_region_tri(c, region, out); /* a triangle's row */
  if (region && region->trip.kind == IR_TRIP_CONST) {
    /* a vector loop and its alternative over a constant count */
    *out = (kn_size){false, (int64_t)region->trip.count};
    return true;
  }
  if (region) {
    /* a region's scalar loop: j from 0 while j < n (kn_lanes_region.c) */
    int p = kr_param(c, (kn_bind){.kind = KN_BIND_TRIP, .trip = &region->trip, .scale = 1, .top_tested = true,
                                  .guard = region->guard, .guard_enters = region->guard_enters});
    if (p < 0) return kr_fail(c, "too many live values");
    *out = (kn_size){true, p};
    return true;
  }
  if (outer && !entered_always(c, l, outer, &guard, &enters))
    return kr_fail(c, "inner loop runs only under a condition");
  if (c->allow_tri && outer && copies == 1 && !guard && (triangle_trip(c, l, t, out) || upper_trip(c, l, t, out)))
    return true;
  /* a bypass proved never taken only behind a triangle's row loop */
  if (c->bypassed) return kr_fail(c, "inner loop runs only under a condition");
  if (t->kind == IR_TRIP_NONE) t = masked_trip(c, l);
  if (!t || t->kind == IR_TRIP_NONE) return kr_fail(c, "trip count unknown");
  if (t->kind == IR_TRIP_CONST && t->count > INT64_MAX / copies) return kr_fail(c, "trip count too large");
  /* a constant count stays one unless a guard may zero it: the host then
   * passes count = guard == enters ? count : 0 */
  if (t->kind == IR_TRIP_CONST && !guard) {
    *out = (kn_size){false, (int64_t)(t->count * copies)};
    return true;
  }
  if (t->kind == IR_TRIP_SYMBOLIC && (!kr_host_value(c, t->start, 0) || !kr_host_value(c, t->bound, 0)))
    return kr_fail(c, "trip count depends on an outer loop");
  int p = kr_param(c, (kn_bind){.kind = KN_BIND_TRIP, .trip = t, .scale = copies, .guard = guard,
                                .guard_enters = enters});
  if (p < 0) return kr_fail(c, "too many live values");
  *out = (kn_size){true, p};
  return true;
}

bool kr_set_trips(kr_ctx *c, unsigned copies) {
  c->tri = false;
  for (int d = 0; d < c->depth; d++) {
    if (!kr_loop_trip(c, c->chain[d], d ? c->chain[d - 1] : NULL, d == c->depth - 1 ? copies : 1, &c->trips[d]))
      return false;
    if (!c->last_tri) continue;
    if (c->tri) return kr_fail(c, "two loops over triangles");
    c->tri = true;
    c->tri_dim = d;
  }
  return true;
}

/* Whether v, computed in l, changes from one iteration of l to the next:
 * it depends on a phi of l's header. */
static bool varies_in(const kr_ctx *c, const ir_loop *l, LLVMValueRef v, int depth) {
  if (!LLVMIsAInstruction(v) || depth > 12 || !ir_loop_defines(l, v, c->cfg)) return false;
  if (LLVMIsAPHINode(v)) return LLVMGetInstructionParent(v) == c->cfg->blocks[l->header].bb;
  for (int k = 0; k < LLVMGetNumOperands(v); k++)
    if (varies_in(c, l, LLVMGetOperand(v, (unsigned)k), depth + 1)) return true;
  return false;
}

/* A load of the Wasm memory in l's body that v, computed in l, is made
 * from (through anything but phis), or NULL. */
static LLVMValueRef load_under(const kr_ctx *c, const ir_loop *l, LLVMValueRef v, int depth) {
  if (!LLVMIsAInstruction(v) || depth > 12 || LLVMIsAPHINode(v) || !ir_loop_defines(l, v, c->cfg)) return NULL;
  if (LLVMIsALoadInst(v)) {
    LLVMValueRef base = LLVMGetOperand(v, 0);
    while (LLVMIsAGetElementPtrInst(base)) base = LLVMGetOperand(base, 0);
    return base == c->mem_base ? v : NULL;
  }
  for (int k = 0; k < LLVMGetNumOperands(v); k++) {
    LLVMValueRef ld = load_under(c, l, LLVMGetOperand(v, (unsigned)k), depth + 1);
    if (ld) return ld;
  }
  return NULL;
}

/* Where an inner loop's array is located by a value loaded inside the
 * nest (a row pointer `A[i]` of a `float **`, a struct's `m->data` or
 * `m->stride` that a store in the nest may change), the bounds pass
 * cannot test the loop's accesses once before the nest: it versions the
 * inner loop on each iteration of l (compiler/bnd_loop.c), so l holds
 * two loops, the fast copy and the checked one, behind a test made from
 * that load.  The reason naming the load, or NULL for any other pair of
 * loops.  No product reads its layout from memory the nest may write;
 * a table of row pointers would need each row's range checked before a
 * launch, which no descriptor says.  (ir_loop_checked: the mark is on
 * every block's branch of the checked copy; LICM may leave a header
 * without.) */
static const char *loaded_layout(const kr_ctx *c, const ir_loop *l, const ir_loop **fast) {
  *fast = NULL;
  if (l->nchildren != 2) return NULL;
  bool checked0 = ir_loop_checked(c->cfg, l->children[0]);
  if (checked0 == ir_loop_checked(c->cfg, l->children[1])) return NULL;
  const ir_loop *checked = l->children[checked0 ? 0 : 1];
  if (checked->preheader < 0 || c->cfg->blocks[checked->preheader].npreds != 1) return NULL;
  LLVMValueRef br = LLVMGetBasicBlockTerminator(c->cfg->blocks[c->cfg->blocks[checked->preheader].preds[0]].bb);
  if (!br || !LLVMIsABranchInst(br) || !LLVMIsConditional(br)) return NULL;
  /* the test made in l, or hoisted out of it into a loop around it in the
   * nest (clang -O3's LICM: mm_rows's test of `A[i]`'s row, in the i
   * loop, chooses between the copies of the k loop in each j iteration) */
  LLVMValueRef ld = load_under(c, c->chain[0], LLVMGetCondition(br), 0);
  if (!ld) return NULL;
  /* a row pointer's address moves with l or a loop around it, a field's
   * with none */
  bool row = false;
  for (const ir_loop *p = l; p && !row; p = p->parent) row = varies_in(c, p, LLVMGetOperand(ld, 0), 0);
  /* a row pointer: the fast copy stands for the loop as for a field
   * (below); the product's layout then reads its rows through the table
   * (kr_row_load, kn_layout's row_table), whose every row the runtime
   * checks before a launch as the checked copy would */
  int fork = c->cfg->blocks[checked->preheader].preds[0];
  if (row) {
    if (LLVMGetTypeKind(LLVMTypeOf(ld)) == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(LLVMTypeOf(ld)) == 32 &&
        !LLVMGetVolatile(ld) && kr_region_copies_fork(c, l, fork))
      *fast = l->children[checked0 ? 1 : 0];
    return "an inner loop's rows located through pointers loaded in the nest (a row-pointer array, "
           "`float **`) that are no row table of a product";
  }
  /* a field: the fast copy stands for the loop when both are copies of
   * one Wasm loop (kr_region_copies_fork) and the test's load is a field
   * the host can load before the launch (kr_field_load); the checked
   * copy computes the same when it does not trap, and it cannot once the
   * launch's ranges pass */
  if (kr_field_load(c, ld) && kr_region_copies_fork(c, l, fork)) *fast = l->children[checked0 ? 1 : 0];
  return "an inner loop's array or stride loaded from memory inside the nest (a struct field that a "
         "store in the nest may change): no product reads its layout from memory it may write";
}

/* The nest's loops, outer to inner.  One loop may hold, before the rest of
 * the chain, an innermost loop of its own: a candidate prologue (`C[i][j]
 * *= beta` before the k loop of an ikj product), which only the product
 * recogniser accepts, and only around its i loop (kr_matmul). */
static bool build_chain(kr_ctx *c, const ir_loop *root) {
  c->depth = 0;
  c->prologue = NULL;
  memset(c->twin, 0, sizeof c->twin);
  for (const ir_loop *l = root; l;) {
    if (c->depth == KR_MAX_DIMS) return kr_fail(c, "loop nest deeper than 4");
    if (l->nlatches != 1) return kr_fail(c, "loop not in simplified form");
    c->chain[c->depth++] = l;
    kr_region r;
    if (l->nchildren >= 2 && kr_region_find(c, l, &r)) {
      /* a vector loop and its scalar remainder: one scalar loop, the
       * remainder's stores the kernel's; before a nest of l, a prologue
       * (kn_lanes_region.c) */
      /* with a loop before it, the region is a part of its own */
      if (r.nbefore) return kr_fail(c, "loop nest is not a single chain of loops");
      kr_region *keep = tw_arena_alloc(c->arena, sizeof *keep);
      *keep = r;
      if (r.inner) {
        if (c->prologue) return kr_fail(c, "loop nest is not a single chain of loops");
        c->pregion = keep;
        c->prologue = keep->rep;
        c->prologue_parent = c->depth - 1;
        l = r.inner;
        continue;
      }
      c->region = keep;
      /* a sum region stores nothing: the nest's stores are the kernel's */
      c->slice = keep->sum ? NULL : keep->stores;
      c->nslice = keep->sum ? 0 : keep->nstores;
      if (c->depth == KR_MAX_DIMS) return kr_fail(c, "loop nest deeper than 4");
      c->chain[c->depth++] = keep->rep;
      break;
    }
    const ir_loop *fast;
    const char *loaded = loaded_layout(c, l, &fast);
    if (loaded && !fast) return kr_fail(c, loaded);
    if (fast) {
      c->twin[c->depth] = l->children[l->children[0] == fast ? 1 : 0];
      l = fast;
      continue;
    }
    if (l->nchildren == 2 && !c->prologue && l->children[0]->nchildren == 0 &&
        l->children[0]->nlatches == 1) {
      c->prologue = l->children[0];
      c->prologue_parent = c->depth - 1;
      l = l->children[1];
      continue;
    }
    if (l->nchildren > 1) return kr_fail(c, "loop nest is not a single chain of loops");
    l = l->nchildren ? l->children[0] : NULL;
  }
  /* the prologue must sit in the product's i loop, two above the inner */
  if (c->prologue && (c->depth < 3 || c->prologue_parent != c->depth - 3))
    return kr_fail(c, "loop nest is not a single chain of loops");
  return true;
}

/* Whether store is one of the kernel's: in the slice where there is one,
 * and never in the bounds pass's checked copy of a chain loop (c->twin):
 * that copy stores what its fast copy stores (both copies of one Wasm
 * loop, build_chain), so the fast copy's store stands for both
 * (mtv_rows: `y[j] += A[i][j] * x[i]` in each copy of the j loop). */
bool kr_in_slice(const kr_ctx *c, LLVMValueRef store) {
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(store);
  for (int d = 0; d < KR_MAX_DIMS; d++)
    if (c->twin[d] && ir_loop_contains_block(c->twin[d], bb, c->cfg)) return false;
  if (!c->slice) return true;
  for (int i = 0; i < c->nslice; i++)
    if (c->slice[i] == store) return true;
  return false;
}

static bool has_store(const kr_ctx *c) {
  const ir_loop *l = c->chain[0];
  for (int b = 0; b < l->nbody; b++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(c->cfg->blocks[l->body[b]].bb); i;
         i = LLVMGetNextInstruction(i))
      if (LLVMIsAStoreInst(i) && kr_in_slice(c, i)) return true;
  return false;
}

/* A nest whose every count is a constant and whose iterations are fewer
 * than KR_MIN_ITERATIONS would never pay for a launch: the 3 taps of a
 * blur's inner loop are no kernel (a lone 16x16x16 product still is). */
#define KR_MIN_ITERATIONS 64

/* Whether block h is reached only past a branch on `icmp eq v, 0` (or
 * `ne`, either operand order) along its side where v is not 0: that
 * successor has the branch as its one way in and dominates h. */
static bool entered_nonzero(const kr_ctx *c, LLVMValueRef v, int h) {
  for (int b = 0; b < c->cfg->nblocks; b++) {
    LLVMValueRef br = LLVMGetBasicBlockTerminator(c->cfg->blocks[b].bb);
    if (!br || !LLVMIsABranchInst(br) || !LLVMIsConditional(br)) continue;
    LLVMValueRef cmp = LLVMGetCondition(br);
    if (!LLVMIsAICmpInst(cmp)) continue;
    LLVMIntPredicate p = LLVMGetICmpPredicate(cmp);
    LLVMValueRef l = LLVMGetOperand(cmp, 0), r = LLVMGetOperand(cmp, 1), z = l == v ? r : r == v ? l : NULL;
    if ((p != LLVMIntEQ && p != LLVMIntNE) || !z || !LLVMIsAConstantInt(z) || LLVMConstIntGetZExtValue(z) != 0)
      continue;
    LLVMBasicBlockRef in = LLVMGetSuccessor(br, p == LLVMIntEQ ? 1 : 0), other = LLVMGetSuccessor(br, p == LLVMIntEQ ? 0 : 1);
    int s = ir_cfg_index(c->cfg, in);
    if (in != other && s >= 0 && c->cfg->blocks[s].npreds == 1 && ir_dominates(c->dom, s, h)) return true;
  }
  return false;
}

/* The most v can be where its form bounds it, else UINT64_MAX: `x & C`
 * is at most C; a phi (GVN's merge of the same remainder count from two
 * ways in, as after a re-roll that kept its checked copy) at most the
 * largest of its incoming values, each `x & C` or a constant (depth: how
 * many phis deep to look). */
static uint64_t masked_at_most(LLVMValueRef v, int depth) {
  if (LLVMIsABinaryOperator(v) && LLVMGetInstructionOpcode(v) == LLVMAnd) {
    LLVMValueRef m = LLVMGetOperand(v, 1);
    return LLVMIsAConstantInt(m) ? LLVMConstIntGetZExtValue(m) : UINT64_MAX;
  }
  if (!LLVMIsAPHINode(v) || depth <= 0) return UINT64_MAX;
  uint64_t most = 0;
  for (unsigned k = 0; k < LLVMCountIncoming(v); k++) {
    LLVMValueRef x = LLVMGetIncomingValue(v, k);
    uint64_t in = LLVMIsAConstantInt(x) ? LLVMConstIntGetZExtValue(x) : masked_at_most(x, depth - 1);
    if (in == UINT64_MAX) return UINT64_MAX;
    if (in > most) most = in;
  }
  return most;
}

/* The most a trip param counts where its form bounds it, else UINT64_MAX:
 * a down counter from `x & C` (or a phi of such, masked_at_most) by -1
 * while its next value is not 0,
 * entered only with that start not 0 (clang's remainder loop after a loop
 * it unrolled by C + 1, fill_halves in tests/gpu/detect/fill.c): C trips
 * at most, times the copies. */
static uint64_t trip_at_most(const kr_ctx *c, const kn_bind *b) {
  const ir_trip *t = b->trip;
  if (b->kind != KN_BIND_TRIP || !t || !t->iv || t->kind != IR_TRIP_SYMBOLIC || t->step != -1 || !t->cmp_next ||
      t->start_add || t->pred != LLVMIntNE || !LLVMIsAConstantInt(t->bound) || LLVMConstIntGetZExtValue(t->bound))
    return UINT64_MAX;
  LLVMValueRef s = t->start;
  uint64_t most = masked_at_most(s, 1);
  if (most >= KR_MIN_ITERATIONS || !entered_nonzero(c, s, t->iv->loop->header)) return UINT64_MAX;
  return most * b->scale;
}

/* Whether the nest does fewer than KR_MIN_ITERATIONS iterations: constant
 * sizes, or trip params bounded by their form (trip_at_most). */
static bool too_little_work(const kr_ctx *c, const kn_desc *d) {
  const kn_size *sizes[3] = {NULL, NULL, NULL};
  switch (d->kind) {
  case KN_MAP:
    sizes[0] = &d->map.trip[0];
    if (d->map.ndims == 2) sizes[1] = &d->map.trip[1];
    break;
  case KN_REDUCE: sizes[0] = &d->reduce.trip; break;
  case KN_MATMUL:
    sizes[0] = &d->matmul.m;
    sizes[1] = &d->matmul.n;
    sizes[2] = &d->matmul.k;
    break;
  }
  uint64_t total = 1;
  for (int i = 0; i < 3; i++) {
    if (!sizes[i]) continue;
    uint64_t most = sizes[i]->is_param ? trip_at_most(c, &c->out->binds[sizes[i]->value]) : (uint64_t)sizes[i]->value;
    if (most >= KR_MIN_ITERATIONS) return false;
    total *= most;
    if (total >= KR_MIN_ITERATIONS) return false;
  }
  return true;
}

/* A store of the outer loop of a 2-deep nest, after its inner loop: a
 * matrix-vector product (y[i] = sum over k), taken as a product with one
 * column; no map has one. */
static bool stores_outside_inner(const kr_ctx *c) {
  const ir_loop *l = c->chain[0], *inner = c->chain[1];
  for (int b = 0; b < l->nbody; b++) {
    if (inner->in_body[l->body[b]]) continue;
    for (LLVMValueRef i = LLVMGetFirstInstruction(c->cfg->blocks[l->body[b]].bb); i;
         i = LLVMGetNextInstruction(i))
      if (LLVMIsAStoreInst(i) && kr_in_slice(c, i)) return true;
  }
  return false;
}

bool kr_kind(kr_ctx *c) {
  kn_recog_nest *o = c->out;
  bool ok = true;
  if (has_store(c) && c->depth == 2 && !stores_outside_inner(c)) {
    /* a map, or else a product with one row or column whose sum is kept
     * in memory (y[j] += x[k] * A[k][j], y[i] += A[i][k] * x[k]) */
    kr_ctx before = *c;
    kn_recog_nest out_before = *o;
    ok = kr_map(c);
    if (!ok) {
      const char *why = c->reason;
      *c = before;
      *o = out_before;
      ok = kr_matmul(c);
      if (!ok) c->reason = why;
    }
  } else if (has_store(c))
    ok = c->depth >= 2 ? kr_matmul(c) : kr_map(c);
  else ok = c->depth == 1 ? kr_reduce(c) : kr_fail(c, "nested loop without stores");
  if (ok) ok = kr_guards(c);
  if (ok) ok = kr_field_ranges(c);
  if (ok && too_little_work(c, &o->desc)) ok = kr_fail(c, "too little work for a kernel (a few iterations: a fixed count, or one a mask bounds)");
  return ok;
}

static void recognise_nest(kr_ctx *c, const ir_loop *root) {
  kn_recog_nest *o = c->out;
  o->nest = root;
  o->cfg = c->cfg;
  o->preheader = root->preheader >= 0 ? c->cfg->blocks[root->preheader].bb : NULL;
  c->chain[0] = root;
  c->depth = 1;
  bool ok = c->mem_base ? true : kr_fail(c, "no linear memory");
  ok = ok && scan_nest(c);
  kr_ctx scanned_only = *c;
  kn_recog_nest out_scanned_only = *o;
  bool was_scanned = ok;
  ok = ok && build_chain(c, root);
  kr_ctx scanned = *c;
  kn_recog_nest out_scanned = *o;
  bool chained = ok;
  if (!ok && was_scanned && root->nchildren >= 2) {
    /* inner loops side by side, each storing its own arrays: one part
     * each, in their order (kn_recog_split.c) */
    const char *why = c->reason;
    ok = kr_split_loops(c, &scanned_only, &out_scanned_only);
    if (!ok && !c->reason) c->reason = why;
  } else {
    ok = ok && (!c->region || kr_region_prove(c, c->region)) && (!c->pregion || kr_region_prove(c, c->pregion)) &&
         kr_kind(c);
  }
  /* two or more outputs in one nest: one kernel each (kn_recog_split.c) */
  if (!ok && chained && c->reason && strcmp(c->reason, "stores to more than one array") == 0) {
    const char *why = c->reason;
    ok = kr_split(c, &scanned, &out_scanned);
    if (!ok && !c->reason) c->reason = why;
  }
  /* guard exits left out of the nest's exits: each kernel checks them
   * before a launch (kr_guards), or the nest stays on the CPU */
  for (int p = 0; ok && c->nguard_exits && p <= o->nparts; p++)
    if (!(p ? &o->parts[p - 1] : o)->nguards) ok = kr_fail(c, "a guard exit (a call that never returns) no kernel checks");
  o->ok = ok;
  o->reason = ok ? NULL : (c->reason ? c->reason : "not recognised");
  if (ok) {
    o->desc.nodes = c->nodes;
    o->desc.nnodes = c->nnodes;
  }
}

/* A nest, and when it is no kernel, each loop nest inside it: a time-step
 * or repetition loop around a map or a product leaves the inner nest to
 * be launched once per outer iteration. */
static void recognise_tree(const ir_loop *l, const kr_ctx *proto, kn_recog_result *out) {
  kr_ctx c = *proto;
  c.out = &out->nests[out->nnests++];
  recognise_nest(&c, l);
  if (c.out->ok) return;
  for (int i = 0; i < l->nchildren; i++) recognise_tree(l->children[i], proto, out);
}

/* %mem_base: the pointer loaded from offset 0 of vmctx (parameter 0). */
static LLVMValueRef find_mem_base(const ir_cfg *cfg, LLVMValueRef fn) {
  if (LLVMCountParams(fn) == 0) return NULL;
  LLVMValueRef vmctx = LLVMGetParam(fn, 0);
  for (int b = 0; b < cfg->nblocks; b++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(cfg->blocks[b].bb); i; i = LLVMGetNextInstruction(i))
      if (LLVMIsALoadInst(i) && LLVMGetOperand(i, 0) == vmctx &&
          LLVMGetTypeKind(LLVMTypeOf(i)) == LLVMPointerTypeKind)
        return i;
  return NULL;
}

bool kn_recognise_opts(LLVMValueRef fn, const kn_recog_opts *opts, kn_recog_result *out,
                       tw_arena *arena) {
  ir_cfg *cfg = tw_arena_alloc(arena, sizeof *cfg);
  ir_dom *dom = tw_arena_alloc(arena, sizeof *dom);
  ir_loops *lp = tw_arena_alloc(arena, sizeof *lp);
  *out = (kn_recog_result){0};
  if (!ir_cfg_build(cfg, arena, fn)) return false;
  ir_dom_build(dom, cfg);
  ir_loops_build(lp, cfg, dom);
  lp->guard_exits = true;
  ir_indvar_build(lp, dom);
  LLVMModuleRef mod = LLVMGetGlobalParent(fn);
  LLVMTargetDataRef td = LLVMCreateTargetData(LLVMGetDataLayoutStr(mod));
  LLVMValueRef mem_base = find_mem_base(cfg, fn);
  out->nests = tw_arena_alloc(arena, (size_t)(2 * lp->nloops + 1) * sizeof *out->nests);
  const kr_ctx proto = {.arena = arena, .cfg = cfg, .dom = dom, .td = td, .opts = opts, .mem_base = mem_base, .copies = 1};
  /* a vector loop at the top and its remainder: one nest, in place of
   * the first of their loops (kn_recog_top.c) */
  bool *claimed = tw_arena_alloc(arena, (size_t)(lp->nroots + 1) * sizeof *claimed);
  int *region_of = tw_arena_alloc(arena, (size_t)(lp->nroots + 1) * sizeof *region_of);
  kn_recog_nest *regions = tw_arena_alloc(arena, (size_t)(lp->nroots + 1) * sizeof *regions);
  int nregions = 0;
  for (int r = 0; r < lp->nroots; r++) region_of[r] = -1;
  for (int r = 0; r < lp->nroots && !opts->loops_alone; r++) {
    if (claimed[r]) continue;
    kr_ctx c = proto;
    c.out = &regions[nregions];
    if (!kr_top_region(&c, lp, lp->roots[r], claimed)) continue;
    for (int k = 0; k < lp->nroots; k++)
      if (claimed[k] && region_of[k] < 0) region_of[k] = nregions;
    nregions++;
  }
  for (int r = 0; r < lp->nroots; r++) {
    if (region_of[r] >= 0) {
      bool first = true;
      for (int k = 0; k < r; k++) first &= region_of[k] != region_of[r];
      if (first) out->nests[out->nnests++] = regions[region_of[r]];
      continue;
    }
    recognise_tree(lp->roots[r], &proto, out);
  }
  kr_refuse_rests(cfg, lp, out);
  LLVMDisposeTargetData(td);
  return true;
}

bool kn_recognise(LLVMValueRef fn, kn_recog_result *out, tw_arena *arena) {
  static const kn_recog_opts defaults = {.fp_reassociate = false};
  return kn_recognise_opts(fn, &defaults, out, arena);
}
