/* ptx_reduce.c: 1-D reductions.  Each thread folds a grid-stride slice,
 * each block folds its threads with a tree in shared memory, and thread 0
 * of each block folds the block's value into the result cell with one
 * atomic.  One launch, no second pass: the cell starts at init (written by
 * the runtime) and the ops are associative and commutative, so the order
 * in which blocks arrive does not matter for integers.  Float add is only
 * accepted with reassociate set (order then unspecified). */
#include "ptx_internal.h"

enum { RED_BLOCK = 256, RED_MAX_GRID = 1024 };

static bool reduce_check(const kn_desc *d, tw_diag *diag) {
  const kn_reduce *r = &d->reduce;
  bool int_type = r->type == KN_I32 || r->type == KN_I64;
  bool float_ok = (r->type == KN_F32 || r->type == KN_F64) && r->op == KN_RED_ADD &&
                  r->reassociate;
  if ((unsigned)r->op >= KN_RED_COUNT || !(int_type || float_ok))
    return tw_fail(diag, TW_DIAG_NO_OFFSET,
                   "reduce kernel: only integer ops, or float add with reassociate");
  if (r->init_param >= d->nparams)
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "reduce kernel: init param %u of %u",
                   r->init_param, d->nparams);
  if (!ptx_size_check(d, r->trip, "trip count", diag) || !ptx_expr_check(d, r->value, diag))
    return false;
  if (d->nodes[r->value].type != r->type)
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "reduce kernel: value type is not the result type");
  return true;
}

static LLVMValueRef identity(ptx_gen *g, const kn_reduce *r) {
  LLVMTypeRef t = ptx_type(g, r->type);
  unsigned bits = ptx_type_bytes(r->type) * 8;
  uint64_t ones = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
  uint64_t sign = 1ull << (bits - 1);
  switch (r->op) {
  case KN_RED_ADD:
    return r->type == KN_F32 || r->type == KN_F64 ? LLVMConstReal(t, -0.0)
                                                   : LLVMConstInt(t, 0, false);
  case KN_RED_MUL: return LLVMConstInt(t, 1, false);
  case KN_RED_AND: case KN_RED_UMIN: return LLVMConstInt(t, ones, false);
  case KN_RED_SMIN: return LLVMConstInt(t, ones >> 1, false);
  case KN_RED_SMAX: return LLVMConstInt(t, sign, false);
  default: return LLVMConstInt(t, 0, false);   /* or, xor, umax */
  }
}

static const LLVMIntPredicate keep_left[KN_RED_COUNT] = {
  [KN_RED_SMIN] = LLVMIntSLT, [KN_RED_SMAX] = LLVMIntSGT,
  [KN_RED_UMIN] = LLVMIntULT, [KN_RED_UMAX] = LLVMIntUGT,
};

static LLVMValueRef combine(ptx_gen *g, const kn_reduce *r, LLVMValueRef a, LLVMValueRef b) {
  switch (r->op) {
  case KN_RED_ADD:
    return r->type == KN_F32 || r->type == KN_F64 ? LLVMBuildFAdd(g->b, a, b, "")
                                                   : LLVMBuildAdd(g->b, a, b, "");
  case KN_RED_MUL: return LLVMBuildMul(g->b, a, b, "");
  case KN_RED_AND: return LLVMBuildAnd(g->b, a, b, "");
  case KN_RED_OR: return LLVMBuildOr(g->b, a, b, "");
  case KN_RED_XOR: return LLVMBuildXor(g->b, a, b, "");
  default: break;
  }
  LLVMValueRef left = LLVMBuildICmp(g->b, keep_left[r->op], a, b, "");
  return LLVMBuildSelect(g->b, left, a, b, "");
}

static const LLVMAtomicRMWBinOp rmw_ops[KN_RED_COUNT] = {
  [KN_RED_ADD] = LLVMAtomicRMWBinOpAdd, [KN_RED_AND] = LLVMAtomicRMWBinOpAnd,
  [KN_RED_OR] = LLVMAtomicRMWBinOpOr, [KN_RED_XOR] = LLVMAtomicRMWBinOpXor,
  [KN_RED_SMIN] = LLVMAtomicRMWBinOpMin, [KN_RED_SMAX] = LLVMAtomicRMWBinOpMax,
  [KN_RED_UMIN] = LLVMAtomicRMWBinOpUMin, [KN_RED_UMAX] = LLVMAtomicRMWBinOpUMax,
};

/* PTX has no atomic multiply: a compare-and-swap loop stands in. */
static void atomic_mul(ptx_gen *g, const kn_reduce *r, LLVMValueRef v) {
  LLVMTypeRef t = ptx_type(g, r->type);
  LLVMValueRef seen = ptx_var(g, t, ptx_load(g, t, g->result, ptx_type_bytes(r->type)));
  LLVMBasicBlockRef retry = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "cas");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "cas_done");
  LLVMBuildBr(g->b, retry);
  LLVMPositionBuilderAtEnd(g->b, retry);
  LLVMValueRef old = LLVMBuildLoad2(g->b, t, seen, "");
  LLVMValueRef pair = LLVMBuildAtomicCmpXchg(g->b, g->result, old, combine(g, r, old, v),
                                             LLVMAtomicOrderingMonotonic,
                                             LLVMAtomicOrderingMonotonic, false);
  LLVMBuildStore(g->b, LLVMBuildExtractValue(g->b, pair, 0, ""), seen);
  LLVMBuildCondBr(g->b, LLVMBuildExtractValue(g->b, pair, 1, ""), done, retry);
  LLVMPositionBuilderAtEnd(g->b, done);
}

static void fold_into_result(ptx_gen *g, const kn_reduce *r, LLVMValueRef v) {
  if (r->op == KN_RED_MUL) {
    atomic_mul(g, r, v);
    return;
  }
  bool fl = r->type == KN_F32 || r->type == KN_F64;
  LLVMBuildAtomicRMW(g->b, fl ? LLVMAtomicRMWBinOpFAdd : rmw_ops[r->op], g->result, v,
                     LLVMAtomicOrderingMonotonic, false);
}

static bool reduce_build(ptx_gen *g) {
  const kn_reduce *r = &g->d->reduce;
  LLVMTypeRef t = ptx_type(g, r->type);
  unsigned align = ptx_type_bytes(r->type);
  LLVMValueRef acc = ptx_var(g, t, identity(g, r));
  LLVMValueRef first, stride;
  ptx_loop loop;
  ptx_grid_axis(g, 'x', &first, &stride);
  ptx_loop_begin(g, &loop, first, ptx_size(g, r->trip), stride);
  LLVMValueRef ivs[KN_MAX_DIMS] = {loop.iv, NULL};
  LLVMValueRef v = ptx_expr_build(g, r->value, ivs);
  LLVMBuildStore(g->b, combine(g, r, LLVMBuildLoad2(g->b, t, acc, ""), v), acc);
  ptx_loop_end(g, &loop);

  LLVMValueRef tree = ptx_shared_array(g, t, RED_BLOCK, "reduce_tree");
  LLVMValueRef tid = ptx_sreg(g, "tid.x");
  LLVMValueRef mine = LLVMBuildGEP2(g->b, t, tree, &tid, 1, "");
  ptx_store(g, LLVMBuildLoad2(g->b, t, acc, ""), mine, align);
  ptx_barrier(g);
  for (unsigned half = RED_BLOCK / 2; half > 0; half /= 2) {
    LLVMValueRef active = LLVMBuildICmp(g->b, LLVMIntULT, tid, ptx_i64(g, half), "");
    LLVMBasicBlockRef join = ptx_if_begin(g, active);
    LLVMValueRef other_index = LLVMBuildAdd(g->b, tid, ptx_i64(g, half), "");
    LLVMValueRef other = LLVMBuildGEP2(g->b, t, tree, &other_index, 1, "");
    LLVMValueRef sum = combine(g, r, ptx_load(g, t, mine, align), ptx_load(g, t, other, align));
    ptx_store(g, sum, mine, align);
    ptx_if_end(g, join);
    ptx_barrier(g);
  }
  LLVMBasicBlockRef join = ptx_if_begin(g, LLVMBuildICmp(g->b, LLVMIntEQ, tid, ptx_i64(g, 0), ""));
  fold_into_result(g, r, ptx_load(g, t, mine, align));
  ptx_if_end(g, join);
  LLVMBuildRetVoid(g->b);
  return true;
}

static void reduce_launch(const kn_desc *d, ptx_launch *l) {
  *l = (ptx_launch){.block = {RED_BLOCK, 1, 1},
                    .count = {d->reduce.trip, {false, 1}, {false, 1}},
                    .per_block = {RED_BLOCK, 1, 1},
                    .max_grid = {RED_MAX_GRID, 1, 1},
                    .result_arg = true,
                    .result_bytes = ptx_type_bytes(d->reduce.type)};
}

const ptx_kind ptx_kind_reduce = {reduce_check, reduce_build, reduce_launch, true};
