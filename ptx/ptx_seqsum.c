/* ptx_seqsum.c: an exact float sum in source order (kn_reduce.sequential:
 * no --fp-reassociate), the path TWASM_PATH_SEQ.  One warp, one block:
 * the 32 lanes compute a chunk of SEQ_CHUNK terms (each term is
 * independent of the sum: loads, products, conversions) into shared
 * memory, then the running sum adds them one after the other (every
 * lane the same sum; lane 0 stores it), the result cell's start first, in
 * iteration order, one add.rn each: the loop's own sequence of roundings,
 * bit for bit.  The sum is a chain
 * of dependent adds, so its rate is the add's latency at best; what this
 * shape buys is that no add waits for memory: the next chunk's loads are
 * issued before the current one is added, and their arithmetic is done
 * after (its values have arrived by then).  Slower than the CPU's loop
 * over data the CPU holds: the runtime takes it only where the data lies
 * on the device (runtime/rt_seq.c). */
#include "ptx_internal.h"

enum {
  SEQ_LANES = 32,
  SEQ_UNROLL = 16,                    /* terms per lane and chunk */
  SEQ_CHUNK = SEQ_LANES * SEQ_UNROLL, /* 512: 2048 cycles of f32 adds hide a load */
};

static bool seq_check(const kn_desc *d, tw_diag *diag) {
  const kn_reduce *r = &d->reduce;
  if (!r->sequential || r->reassociate || r->op != KN_RED_ADD || (r->type != KN_F32 && r->type != KN_F64))
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "sequential sum kernel: only an exact f32 or f64 sum");
  if (r->init_param >= d->nparams)
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "sequential sum kernel: init param %u of %u", r->init_param,
                   d->nparams);
  if (!ptx_size_check(d, r->trip, "trip count", diag) || !ptx_expr_check(d, r->value, diag)) return false;
  if (d->nodes[r->value].type != r->type)
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "sequential sum kernel: value type is not the result type");
  return true;
}

/* Iteration `start + u * SEQ_LANES + lane`, clamped to the last: loads
 * past the trip count read the last iteration's elements, which the
 * run-time checks proved in bounds, and are never added. */
static LLVMValueRef seq_iteration(ptx_gen *g, LLVMValueRef start, unsigned u, LLVMValueRef lane,
                                  LLVMValueRef last) {
  LLVMValueRef i = ptx_add(g, ptx_add(g, start, ptx_i64(g, (int64_t)u * SEQ_LANES)), lane);
  return ptx_smin(g, i, last);
}

/* The loads of every term of the chunk at start, issued now; their
 * values land in loaded[u * nnodes + node]. */
static void seq_loads(ptx_gen *g, LLVMValueRef start, LLVMValueRef lane, LLVMValueRef last,
                      const bool *used, LLVMValueRef *loaded) {
  unsigned nn = g->d->nnodes;
  for (unsigned u = 0; u < SEQ_UNROLL; u++) {
    LLVMValueRef ivs[KN_MAX_DIMS] = {seq_iteration(g, start, u, lane, last), NULL};
    for (unsigned i = 0; i < nn; i++)
      loaded[u * nn + i] = used[i] && g->d->nodes[i].op == KN_E_LOAD ? ptx_expr_build(g, (int32_t)i, ivs) : NULL;
  }
}

/* Each lane's terms of the chunk at start from its loaded values, into
 * the shared buffer at u * SEQ_LANES + lane. */
static void seq_terms(ptx_gen *g, LLVMValueRef start, LLVMValueRef lane, LLVMValueRef last,
                      LLVMValueRef *loaded, LLVMValueRef buf) {
  const kn_reduce *r = &g->d->reduce;
  LLVMTypeRef t = ptx_type(g, r->type);
  unsigned bytes = ptx_type_bytes(r->type);
  for (unsigned u = 0; u < SEQ_UNROLL; u++) {
    LLVMValueRef ivs[KN_MAX_DIMS] = {seq_iteration(g, start, u, lane, last), NULL};
    g->preset = loaded + u * g->d->nnodes;
    LLVMValueRef v = ptx_expr_build(g, r->value, ivs);
    g->preset = NULL;
    LLVMValueRef at = ptx_add(g, lane, ptx_i64(g, (int64_t)u * SEQ_LANES));
    ptx_store(g, v, LLVMBuildGEP2(g->b, t, buf, &at, 1, ""), bytes);
  }
}

/* sum += buf[0], buf[1], ... buf[SEQ_CHUNK - 1], in that order, as
 * straight-line code.  Every lane adds (the same values from the same
 * shared words, broadcast: the same sum in each), so the chunk's loop body
 * is one block: ptxas may issue the next chunk's loads between the adds,
 * and no lane branches around the sum (a lane-0 branch let the code
 * generator sink those loads below the sum, where they waited). */
static void seq_add_chunk(ptx_gen *g, LLVMValueRef sum, LLVMValueRef buf) {
  const kn_reduce *r = &g->d->reduce;
  LLVMTypeRef t = ptx_type(g, r->type);
  unsigned bytes = ptx_type_bytes(r->type);
  LLVMValueRef s = LLVMBuildLoad2(g->b, t, sum, "");
  for (unsigned j = 0; j < SEQ_CHUNK; j++) {
    LLVMValueRef at = ptx_i64(g, j);
    s = LLVMBuildFAdd(g->b, s, ptx_load(g, t, LLVMBuildGEP2(g->b, t, buf, &at, 1, ""), bytes), "");
  }
  LLVMBuildStore(g->b, s, sum);
}

/* The iterations past the last whole chunk: sum += buf[0 .. count - 1]. */
static void seq_add_rest(ptx_gen *g, LLVMValueRef sum, LLVMValueRef buf, LLVMValueRef count) {
  const kn_reduce *r = &g->d->reduce;
  LLVMTypeRef t = ptx_type(g, r->type);
  unsigned bytes = ptx_type_bytes(r->type);
  ptx_loop j;
  ptx_loop_begin(g, &j, ptx_i64(g, 0), count, ptx_i64(g, 1));
  LLVMValueRef x = ptx_load(g, t, LLVMBuildGEP2(g->b, t, buf, &j.iv, 1, ""), bytes);
  LLVMBuildStore(g->b, LLVMBuildFAdd(g->b, LLVMBuildLoad2(g->b, t, sum, ""), x, ""), sum);
  ptx_loop_end(g, &j);
}

static bool seq_build(ptx_gen *g) {
  const kn_reduce *r = &g->d->reduce;
  LLVMTypeRef t = ptx_type(g, r->type);
  unsigned bytes = ptx_type_bytes(r->type);
  unsigned nn = g->d->nnodes;
  bool used[nn];
  ptx_expr_used(g->d, r->value, used);
  LLVMValueRef trip = ptx_size(g, r->trip);
  LLVMBasicBlockRef work = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "work");
  LLVMBasicBlockRef none = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "none");
  /* no iteration: the cell keeps its start (the runtime wrote it) */
  LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntSGT, trip, ptx_i64(g, 0), ""), work, none);
  LLVMPositionBuilderAtEnd(g->b, none);
  LLVMBuildRetVoid(g->b);
  LLVMPositionBuilderAtEnd(g->b, work);

  LLVMValueRef lane = ptx_sreg(g, "tid.x");
  LLVMValueRef last = LLVMBuildSub(g->b, trip, ptx_i64(g, 1), "");
  LLVMValueRef whole = LLVMBuildMul(g->b, LLVMBuildSDiv(g->b, trip, ptx_i64(g, SEQ_CHUNK), ""),
                                    ptx_i64(g, SEQ_CHUNK), "");
  LLVMValueRef buf = ptx_shared_array(g, t, SEQ_CHUNK, "seq_terms");
  LLVMValueRef sum = ptx_var(g, t, ptx_load(g, t, g->result, bytes));
  LLVMValueRef loaded[SEQ_UNROLL * nn];
  seq_loads(g, ptx_i64(g, 0), lane, last, used, loaded);
  seq_terms(g, ptx_i64(g, 0), lane, last, loaded, buf);

  /* whole chunks; each iteration's end leaves the next chunk's terms in buf */
  ptx_loop chunk;
  ptx_loop_begin(g, &chunk, ptx_i64(g, 0), whole, ptx_i64(g, SEQ_CHUNK));
  ptx_barrier(g);
  /* the next chunk's loads in flight while this one is added */
  LLVMValueRef next = ptx_add(g, chunk.iv, ptx_i64(g, SEQ_CHUNK));
  seq_loads(g, next, lane, last, used, loaded);
  seq_add_chunk(g, sum, buf);
  ptx_barrier(g);
  seq_terms(g, next, lane, last, loaded, buf);
  ptx_loop_end(g, &chunk);

  ptx_barrier(g);
  seq_add_rest(g, sum, buf, LLVMBuildSub(g->b, trip, whole, ""));
  LLVMBasicBlockRef join = ptx_if_begin(g, LLVMBuildICmp(g->b, LLVMIntEQ, lane, ptx_i64(g, 0), ""));
  ptx_store(g, LLVMBuildLoad2(g->b, t, sum, ""), g->result, bytes);
  ptx_if_end(g, join);
  LLVMBuildRetVoid(g->b);
  ptx_annotate(g, "maxntidx", SEQ_LANES);
  return true;
}

/* One block of one warp, whatever the trip count. */
static void seq_launch(const kn_desc *d, ptx_launch *l) {
  *l = (ptx_launch){.block = {SEQ_LANES, 1, 1},
                    .count = {{false, 1}, {false, 1}, {false, 1}},
                    .per_block = {1, 1, 1},
                    .max_grid = {1, 1, 1},
                    .result_arg = true,
                    .result_bytes = ptx_type_bytes(d->reduce.type)};
}

const ptx_kind ptx_kind_seqsum = {seq_check, seq_build, seq_launch, true};
