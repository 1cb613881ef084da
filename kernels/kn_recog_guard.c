/* kn_recog_guard.c: guard exits of a nest, branches to a block that never
 * returns (a call, then `unreachable`: C's assert, AssemblyScript's abort,
 * Rust's panic_bounds_check), taken where an affine index of the nest's
 * counters compares against a bound the host computes before the launch
 * (`idx >=u len`, `r >= m->rows`).  Such an exit is no exit of the
 * kernel: the host checks before each launch that no guard fires anywhere
 * in the box (kn_guard, off_guard.c), else the nest runs on the CPU and
 * aborts where the Wasm code does. */
#include <string.h>

#include "ir_pass.h"
#include "kn_internal.h"

/* Whether block b (a cfg index outside the nest) never returns
 * (ir_noreturn_call) and reports first: a call, then Wasm's `unreachable`
 * (which LLVM drops where it proved the callee never returns, as
 * __assert_fail ends in proc_exit).  A bare trap (a bounds check, a stack
 * overflow) is no guard. */
bool kr_guard_exit(const kr_ctx *c, int b) {
  return !kr_nest(c)->in_body[b] && ir_noreturn_call(c->cfg, b);
}

/* The side of block b's conditional branch that leaves the nest to a
 * guard exit: 0 or 1, -1 when none (or both). */
static int guard_side(const kr_ctx *c, int b) {
  LLVMValueRef br = LLVMGetBasicBlockTerminator(c->cfg->blocks[b].bb);
  if (!br || !LLVMIsABranchInst(br) || !LLVMIsConditional(br)) return -1;
  int side = -1;
  for (unsigned s = 0; s < 2; s++) {
    int to = ir_cfg_index(c->cfg, LLVMGetSuccessor(br, s));
    if (to < 0 || kr_nest(c)->in_body[to] || !kr_guard_exit(c, to)) continue;
    if (side >= 0) return -1;
    side = (int)s;
  }
  return side;
}

bool kr_guard_branch(const kr_ctx *c, int b) { return kr_nest(c)->in_body[b] && guard_side(c, b) >= 0; }

/* The innermost chain loop holding block b, or -1 when b lies in a loop
 * of the nest that is no chain loop (a bounds copy's twin, a prologue). */
static int chain_dim_of(const kr_ctx *c, int b) {
  int d = -1;
  for (int k = 0; k < c->depth; k++)
    if (c->chain[k]->in_body[b]) d = k;
  if (d < 0) return -1;
  const ir_loop *l = c->chain[d];
  for (int k = 0; k < l->nchildren; k++)
    if (l->children[k]->in_body[b]) return -1;
  return d;
}

bool kr_guard_min_max(const kr_ctx *c, LLVMValueRef v) {
  kn_cmp cmp;
  return v && LLVMIsACallInst(v) && ir_loop_defines(kr_nest(c), v, c->cfg) && kr_min_max(v, &cmp);
}

/* Whether the host computes v before the launch: kr_host_value's values,
 * and min/max of them (LLVM's `k <u smax(rows, 0)` hoisted out of a k
 * loop whose every index it checks), which off_version.c's host_value
 * clones as it does arithmetic. */
bool kr_guard_host_value(const kr_ctx *c, LLVMValueRef v) {
  if (kr_guard_min_max(c, v))
    return kr_guard_host_value(c, LLVMGetOperand(v, 0)) && kr_guard_host_value(c, LLVMGetOperand(v, 1));
  return kr_host_value(c, v, 0);
}

#define GUARD_COEFF_MAX (INT64_C(1) << 32)

/* One guard exit: the branch of block b, side `side` to the guard. */
static bool read_guard(kr_ctx *c, int b, int side, kn_guard *g) {
  LLVMValueRef br = LLVMGetBasicBlockTerminator(c->cfg->blocks[b].bb), cmp = LLVMGetCondition(br);
  if (!LLVMIsAICmpInst(cmp)) return kr_fail(c, "a guard exit (a call that never returns) under a condition that is no compare");
  LLVMValueRef x = LLVMGetOperand(cmp, 0), y = LLVMGetOperand(cmp, 1);
  if (LLVMGetTypeKind(LLVMTypeOf(x)) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(LLVMTypeOf(x)) != 32)
    return kr_fail(c, "a guard exit (a call that never returns) comparing other than i32 values");
  /* the predicate under which the branch goes to the guard */
  LLVMIntPredicate p = side == 0 ? LLVMGetICmpPredicate(cmp) : ir_inverse_pred(LLVMGetICmpPredicate(cmp));
  bool hx = kr_guard_host_value(c, x), hy = kr_guard_host_value(c, y);
  if (hx && !hy) {
    LLVMValueRef t = x;
    x = y, y = t;
    p = ir_swapped_pred(p);
    hy = true;
  }
  if (!hy) return kr_fail(c, "a guard exit (a call that never returns) whose bound is computed in the loop");
  int d_at = chain_dim_of(c, b);
  if (d_at < 0) return kr_fail(c, "a guard exit (a call that never returns) outside the nest's chain of loops");
  kr_affine f;
  if (kr_guard_host_value(c, x)) f = (kr_affine){.ok = true, .n = 1, .t = {{1, -1, x}}};
  else f = kr_int(c, x);
  if (!f.ok) return kr_fail(c, "a guard exit (a call that never returns) on a value that is no affine index");
  memset(g, 0, sizeof *g);
  g->c = f.c;
  if (f.c >= GUARD_COEFF_MAX || f.c <= -GUARD_COEFF_MAX)
    return kr_fail(c, "a guard exit's index has a constant too large");
  for (int i = 0; i < f.n; i++) {
    const kr_term *t = &f.t[i];
    if (t->dim >= 0 && (t->dim > d_at || t->dim >= KN_GUARD_DIMS))
      return kr_fail(c, "a guard exit's index moves with a loop it is not in");
    if (t->coeff >= GUARD_COEFF_MAX || t->coeff <= -GUARD_COEFF_MAX)
      return kr_fail(c, "a guard exit's index has a coefficient too large");
    if (t->param && (!kr_guard_host_value(c, t->param) || LLVMGetTypeKind(LLVMTypeOf(t->param)) != LLVMIntegerTypeKind ||
                     LLVMGetIntTypeWidth(LLVMTypeOf(t->param)) > 32))
      return kr_fail(c, "a guard exit's index reads a value the host cannot compute");
    if (t->dim >= 0) {
      /* counted 0 .. trip - 1 at every block of the loop: its one exit
       * test (guards aside) at its latch */
      const ir_loop *l = c->chain[t->dim];
      if (l->trip.kind == IR_TRIP_NONE || l->nlatches != 1 || l->trip.exit.from != l->latches[0])
        return kr_fail(c, "a guard exit in a loop not tested at its latch");
    }
    g->coeff[g->nterms] = t->coeff;
    g->dim[g->nterms] = t->dim;
    g->param[g->nterms] = t->param;
    g->nterms++;
  }
  g->ndims = c->depth < KN_GUARD_DIMS ? c->depth : KN_GUARD_DIMS;
  for (int d = 0; d < g->ndims; d++) g->trip[d] = c->trips[d];
  g->bound = y;
  g->fire = kr_icmp(p);
  g->bits = 32;
  return true;
}

bool kr_guards(kr_ctx *c) {
  kn_recog_nest *o = c->out;
  const ir_loop *l = c->chain[0];
  o->guards = NULL;
  o->nguards = 0;
  if (!c->nguard_exits) return true;
  if (c->copies != 1 || c->region || c->pregion || c->prologue || c->tri)
    return kr_fail(c, "a guard exit (a call that never returns) in an unrolled, vector or triangular nest");
  o->guards = tw_arena_alloc(c->arena, (size_t)l->nexits * sizeof *o->guards);
  for (int e = 0; e < l->nexits; e++) {
    if (!kr_guard_exit(c, l->exits[e].to)) continue;
    /* every guard exit read (scan_exits left them out of the nest's
     * exits): one side of a conditional branch */
    int from = l->exits[e].from, side = guard_side(c, from);
    if (side < 0 || LLVMGetSuccessor(LLVMGetBasicBlockTerminator(c->cfg->blocks[from].bb), (unsigned)side) !=
                        c->cfg->blocks[l->exits[e].to].bb)
      return kr_fail(c, "a guard exit (a call that never returns) on both sides of a branch, or from a switch");
    bool dup = false;
    for (int k = 0; k < e; k++) dup |= l->exits[k].from == from;
    if (dup) continue;
    if (!read_guard(c, from, side, &o->guards[o->nguards])) return false;
    o->nguards++;
  }
  return true;
}
