/* ir_indvar.c: canonical induction variables and exit tests of each loop. */
#include "ir.h"

/* The predicate that holds for (b, a) when p holds for (a, b). */
LLVMIntPredicate ir_swapped_pred(LLVMIntPredicate p) {
  static const LLVMIntPredicate sw[] = {
      [LLVMIntEQ] = LLVMIntEQ,   [LLVMIntNE] = LLVMIntNE,   [LLVMIntUGT] = LLVMIntULT,
      [LLVMIntUGE] = LLVMIntULE, [LLVMIntULT] = LLVMIntUGT, [LLVMIntULE] = LLVMIntUGE,
      [LLVMIntSGT] = LLVMIntSLT, [LLVMIntSGE] = LLVMIntSLE, [LLVMIntSLT] = LLVMIntSGT,
      [LLVMIntSLE] = LLVMIntSGE};
  return sw[p];
}

LLVMIntPredicate ir_inverse_pred(LLVMIntPredicate p) {
  static const LLVMIntPredicate inv[] = {
      [LLVMIntEQ] = LLVMIntNE,   [LLVMIntNE] = LLVMIntEQ,   [LLVMIntUGT] = LLVMIntULE,
      [LLVMIntUGE] = LLVMIntULT, [LLVMIntULT] = LLVMIntUGE, [LLVMIntULE] = LLVMIntUGT,
      [LLVMIntSGT] = LLVMIntSLE, [LLVMIntSGE] = LLVMIntSLT, [LLVMIntSLT] = LLVMIntSGE,
      [LLVMIntSLE] = LLVMIntSGT};
  return inv[p];
}

/* A zero-extended compare orders values as the narrow unsigned compare does. */
static LLVMIntPredicate unsigned_pred(LLVMIntPredicate p) {
  static const LLVMIntPredicate un[] = {
      [LLVMIntEQ] = LLVMIntEQ,   [LLVMIntNE] = LLVMIntNE,   [LLVMIntUGT] = LLVMIntUGT,
      [LLVMIntUGE] = LLVMIntUGE, [LLVMIntULT] = LLVMIntULT, [LLVMIntULE] = LLVMIntULE,
      [LLVMIntSGT] = LLVMIntUGT, [LLVMIntSGE] = LLVMIntUGE, [LLVMIntSLT] = LLVMIntULT,
      [LLVMIntSLE] = LLVMIntULE};
  return un[p];
}

static unsigned int_bits(LLVMValueRef v) {
  LLVMTypeRef t = LLVMTypeOf(v);
  return LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(t) : 0;
}

/* step when next is phi + C, phi - C or C + phi; false otherwise. */
static bool constant_step(LLVMValueRef phi, LLVMValueRef next, int64_t *step) {
  if (!LLVMIsABinaryOperator(next)) return false;
  LLVMOpcode op = LLVMGetInstructionOpcode(next);
  LLVMValueRef a = LLVMGetOperand(next, 0), b = LLVMGetOperand(next, 1);
  if (op == LLVMAdd && b == phi) {
    LLVMValueRef t = a;
    a = b;
    b = t;
  }
  if (a != phi || !LLVMIsAConstantInt(b)) return false;
  if (op != LLVMAdd && op != LLVMSub) return false;
  int64_t c = LLVMConstIntGetSExtValue(b);
  *step = op == LLVMAdd ? c : -c;
  return true;
}

/* The step when next is phi + X or X + phi with X defined outside l. */
static LLVMValueRef invariant_step(LLVMValueRef phi, LLVMValueRef next, const ir_loop *l,
                                   const ir_cfg *cfg) {
  if (!LLVMIsABinaryOperator(next) || LLVMGetInstructionOpcode(next) != LLVMAdd) return NULL;
  LLVMValueRef a = LLVMGetOperand(next, 0), b = LLVMGetOperand(next, 1);
  LLVMValueRef x = a == phi ? b : b == phi ? a : NULL;
  return x && !ir_loop_defines(l, x, cfg) ? x : NULL;
}

/* next as a phi joining paths that each add the same constant step to
 * phi: an outer loop whose body branches around its inner loop (under a
 * guard LLVM did not unswitch) keeps one `y + 1` per path. */
static bool merged_step(LLVMValueRef phi, LLVMValueRef next, int64_t *step, bool *nsw, bool *nuw) {
  if (!LLVMIsAPHINode(next) || LLVMCountIncoming(next) == 0) return false;
  *nsw = *nuw = true;
  for (unsigned i = 0; i < LLVMCountIncoming(next); i++) {
    LLVMValueRef v = LLVMGetIncomingValue(next, i);
    int64_t s;
    if (!constant_step(phi, v, &s) || (i > 0 && s != *step)) return false;
    *step = s;
    *nsw &= LLVMGetNSW(v) != 0;
    *nuw &= LLVMGetNUW(v) != 0;
  }
  return true;
}

/* The one value a phi takes from outside the loop, or NULL. */
static LLVMValueRef outside_value(LLVMValueRef phi, const ir_loop *l, const ir_cfg *cfg) {
  LLVMValueRef start = NULL;
  for (unsigned i = 0; i < LLVMCountIncoming(phi); i++) {
    int b = ir_cfg_index(cfg, LLVMGetIncomingBlock(phi, i));
    if (b < 0 || l->in_body[b]) continue;
    LLVMValueRef v = LLVMGetIncomingValue(phi, i);
    if (start && start != v) return NULL;
    start = v;
  }
  return start;
}

static LLVMValueRef latch_value(LLVMValueRef phi, const ir_loop *l, const ir_cfg *cfg) {
  for (unsigned i = 0; i < LLVMCountIncoming(phi); i++)
    if (ir_cfg_index(cfg, LLVMGetIncomingBlock(phi, i)) == l->latches[0])
      return LLVMGetIncomingValue(phi, i);
  return NULL;
}

static void find_ivs(ir_loop *l, const ir_cfg *cfg) {
  if (l->nlatches != 1) return; /* not in LLVM's simplified form */
  LLVMBasicBlockRef h = cfg->blocks[l->header].bb;
  int nphis = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(h); i && LLVMIsAPHINode(i); i = LLVMGetNextInstruction(i))
    nphis++;
  l->ivs = tw_arena_alloc(cfg->arena, (size_t)(nphis + 1) * sizeof *l->ivs);
  for (LLVMValueRef phi = LLVMGetFirstInstruction(h); phi && LLVMIsAPHINode(phi);
       phi = LLVMGetNextInstruction(phi)) {
    ir_iv iv = {.loop = l, .phi = phi, .bits = int_bits(phi)};
    if (iv.bits == 0 || iv.bits > 64) continue;
    iv.start = outside_value(phi, l, cfg);
    iv.next = latch_value(phi, l, cfg);
    if (!iv.start || !iv.next) continue;
    if (constant_step(phi, iv.next, &iv.step) || (iv.step_inv = invariant_step(phi, iv.next, l, cfg))) {
      iv.nsw = LLVMGetNSW(iv.next);
      iv.nuw = LLVMGetNUW(iv.next);
      l->ivs[l->nivs++] = iv;
    } else if (merged_step(phi, iv.next, &iv.step, &iv.nsw, &iv.nuw)) {
      l->ivs[l->nivs++] = iv;
    }
  }
}

const ir_iv *ir_iv_of(const ir_loop *l, LLVMValueRef v) {
  for (; l; l = l->parent)
    for (int i = 0; i < l->nivs; i++)
      if (l->ivs[i].phi == v) return &l->ivs[i];
  return NULL;
}

static bool invariant(const ir_loop *l, LLVMValueRef v, const ir_cfg *cfg) {
  return !ir_loop_defines(l, v, cfg);
}

/* Peels one zext, sext or trunc; returns its opcode or 0. */
static LLVMOpcode peel_cast(LLVMValueRef *v) {
  if (!LLVMIsAInstruction(*v)) return 0;
  LLVMOpcode op = LLVMGetInstructionOpcode(*v);
  if (op != LLVMZExt && op != LLVMSExt && op != LLVMTrunc) return 0;
  *v = LLVMGetOperand(*v, 0);
  return op;
}

/* The IV of l that side is (or whose next value it is). */
static const ir_iv *iv_or_next(const ir_loop *l, LLVMValueRef side, bool *is_next) {
  for (int i = 0; i < l->nivs; i++) {
    if (l->ivs[i].step_inv) continue; /* counts nothing we can evaluate */
    *is_next = side == l->ivs[i].next;
    if (side == l->ivs[i].phi || *is_next) return &l->ivs[i];
  }
  return NULL;
}

/* Matches one side of an exit compare against an IV of l (or its next
 * value), possibly seen through one cast. */
static const ir_iv *match_iv(const ir_loop *l, LLVMValueRef side, bool *is_next, LLVMOpcode *cast,
                             int64_t *add) {
  *cast = peel_cast(&side);
  *add = 0;
  const ir_iv *iv = iv_or_next(l, side, is_next);
  /* iv + C (LLVM tests `iv + 3 == w` for x < w - 2): the compared values
   * are themselves an IV starting C further on, which is all the count
   * needs (the runtime's evaluation refuses wrapping as for any IV) */
  if (iv || !LLVMIsABinaryOperator(side) || LLVMGetInstructionOpcode(side) != LLVMAdd ||
      !LLVMIsAConstantInt(LLVMGetOperand(side, 1)) || LLVMGetIntTypeWidth(LLVMTypeOf(side)) > 64)
    return iv;
  iv = iv_or_next(l, LLVMGetOperand(side, 0), is_next);
  if (iv) *add = LLVMConstIntGetSExtValue(LLVMGetOperand(side, 1));
  return iv;
}

/* Moves the compare into the IV's own width: a cast on the IV side needs
 * the same cast on the bound, or a constant that survives the round trip. */
static bool narrow_compare(ir_trip *t, LLVMOpcode cast, LLVMValueRef bound, unsigned cmp_bits) {
  t->bound = bound;
  t->bits = cast == LLVMTrunc ? cmp_bits : t->iv->bits;
  if (cast != LLVMZExt && cast != LLVMSExt) return true;
  if (cast == LLVMZExt) t->pred = unsigned_pred(t->pred);
  if (LLVMIsAConstantInt(bound)) {
    if (cmp_bits > 64 || t->bits >= 64) return cmp_bits <= 64;
    int64_t half = INT64_C(1) << (t->bits - 1);
    if (cast == LLVMZExt) return LLVMConstIntGetZExtValue(bound) < (uint64_t)half * 2;
    int64_t c = LLVMConstIntGetSExtValue(bound);
    return c >= -half && c < half;
  }
  LLVMValueRef inner = bound;
  if (peel_cast(&inner) != cast || int_bits(inner) != t->iv->bits) return false;
  t->bound = inner;
  return true;
}

static LLVMValueRef exit_compare(const ir_loop *l, ir_edge e, const ir_cfg *cfg, bool *leaves_on_true) {
  LLVMValueRef br = LLVMGetBasicBlockTerminator(cfg->blocks[e.from].bb);
  if (!LLVMIsABranchInst(br) || !LLVMIsConditional(br)) return NULL;
  int t = ir_cfg_index(cfg, LLVMGetSuccessor(br, 0)), f = ir_cfg_index(cfg, LLVMGetSuccessor(br, 1));
  *leaves_on_true = t == e.to;
  int stay = *leaves_on_true ? f : t;
  if (stay < 0 || !l->in_body[stay]) return NULL;
  LLVMValueRef cmp = LLVMGetCondition(br);
  return LLVMIsAICmpInst(cmp) ? cmp : NULL;
}

/* Reads `x pred bound` off the conditional branch of the exiting edge. */
static bool match_exit(const ir_loop *l, ir_edge e, const ir_cfg *cfg, ir_trip *t) {
  bool leaves_on_true;
  LLVMValueRef cmp = exit_compare(l, e, cfg, &leaves_on_true);
  if (!cmp) return false;
  LLVMIntPredicate p = LLVMGetICmpPredicate(cmp);
  if (leaves_on_true) p = ir_inverse_pred(p);
  LLVMValueRef lhs = LLVMGetOperand(cmp, 0), rhs = LLVMGetOperand(cmp, 1);
  bool is_next;
  LLVMOpcode cast;
  int64_t add;
  const ir_iv *iv = match_iv(l, lhs, &is_next, &cast, &add);
  if (!iv) {
    iv = match_iv(l, rhs, &is_next, &cast, &add);
    rhs = lhs;
    p = ir_swapped_pred(p);
  }
  if (!iv || !invariant(l, rhs, cfg)) return false;
  /* through a cast, the offset would have to be applied in the other width */
  if (add && cast) return false;
  *t = (ir_trip){.kind = IR_TRIP_SYMBOLIC, .iv = iv, .start = iv->start, .step = iv->step,
                 .pred = p, .cmp_next = is_next, .start_add = add, .exit = e,
                 .other_exits = l->nexits > 1};
  return narrow_compare(t, cast, rhs, int_bits(lhs));
}

/* An exit into a block that ends the program (a trap: unreachable after
 * the call) is a check, not the loop's end: counting the iterations until
 * a bounds check fails would include the one that traps. */
static bool exits_to_trap(const ir_cfg *cfg, ir_edge e, bool guards) {
  LLVMBasicBlockRef bb = cfg->blocks[e.to].bb;
  for (int hops = 0; bb && hops < 4; hops++) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
    if (!term) return false;
    if (LLVMIsAUnreachableInst(term)) return true;
    if (!LLVMIsABranchInst(term) || LLVMIsConditional(term)) break;
    bb = LLVMGetSuccessor(term, 0);
  }
  return guards && ir_noreturn_call(cfg, e.to);
}

static void find_trip(ir_loop *l, const ir_cfg *cfg, const ir_dom *dom, bool guards) {
  for (int i = 0; i < l->nexits; i++) {
    ir_trip t;
    /* A test that some iteration skips bounds nothing. */
    if (!ir_dominates(dom, l->exits[i].from, l->latches[0]) || exits_to_trap(cfg, l->exits[i], guards)) continue;
    if (!match_exit(l, l->exits[i], cfg, &t)) continue;
    if (LLVMIsAConstantInt(t.start) && LLVMIsAConstantInt(t.bound)) {
      bool ok = ir_trip_eval(&t, LLVMConstIntGetSExtValue(t.start),
                             LLVMConstIntGetSExtValue(t.bound), &t.count);
      t.kind = ok ? IR_TRIP_CONST : IR_TRIP_NONE;
    }
    l->trip = t;
    if (t.kind != IR_TRIP_NONE) return;
  }
}

void ir_indvar_build(ir_loops *lp, const ir_dom *dom) {
  for (int i = 0; i < lp->nloops; i++) {
    find_ivs(lp->loops[i], lp->cfg);
    if (lp->loops[i]->nivs > 0) find_trip(lp->loops[i], lp->cfg, dom, lp->guard_exits);
  }
}
