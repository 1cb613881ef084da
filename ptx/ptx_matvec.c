/* ptx_matvec.c: exact matrix-vector products, a matmul with one output
 * column (out[o] = sum_k W[o][k] * v[k]: W is A, v is B's column) or one
 * output row (out[o] = sum_k v[k] * W[k][o]: v is A's row, W is B).  Each
 * output element is one thread's running sum in k order, a separate
 * multiply and add per k (never fused), as the CPU loop computes it; what
 * makes it fast is how W reaches that thread.  A block of 256 threads owns
 * ROWS outputs and walks k in chunks of KC: all its threads copy the
 * ROWS x KC tile of W (and the KC elements of v) from global memory into
 * shared memory, consecutive threads at consecutive addresses (along k
 * where W's rows are contiguous, with 16-byte vectors where they are
 * aligned; along the outputs where W's columns are), then the ROWS owning
 * threads (one warp) add their rows' products from shared memory while the
 * next chunk's loads are in flight (registers, then the other of two
 * shared buffers: one barrier per chunk), a whole chunk as straight-line
 * code whose shared loads run ahead of the adds.  16 KiB of W per chunk per
 * block keeps HBM busy; 16 rows per block measured best on the H200
 * (docs/PERFORMANCE.md).  Indices past the matrix are clamped to its last
 * row or k (a real element, never added nor stored), so loads need no
 * branches.  Blocks stride over groups of ROWS outputs, so any grid is
 * correct. */
#include <stdio.h>
#include <string.h>

#include "ptx_internal.h"

/* Measurement builds (tests/gpu/matvec/variants.sh) override these. */
#ifndef PTX_MV_ROWS
#define PTX_MV_ROWS 16
#endif
#ifndef PTX_MV_TILE
#define PTX_MV_TILE 16384
#endif
#ifndef PTX_MV_DEPTH
#define PTX_MV_DEPTH 1
#endif
#ifndef PTX_MV_AHEAD
#define PTX_MV_AHEAD 4
#endif
/* Warp-specialised variants (measurement builds only; 0: the scheme
 * above): PTX_MV_WS buffers of W in a ring, PTX_MV_FIRST terms of a row
 * in the first chunk (0: a whole chunk), PTX_MV_PDL programmatic
 * dependent launch on sm_90 (docs/PERFORMANCE.md, "Matrix-vector round
 * 10"). */
#ifndef PTX_MV_WS
#define PTX_MV_WS 0
#endif
#ifndef PTX_MV_FIRST
#define PTX_MV_FIRST 0
#endif
#ifndef PTX_MV_PDL
#define PTX_MV_PDL 0
#endif
/* Round 12 (docs/PERFORMANCE.md, "Matrix-vector round 12"; measurement
 * builds only): PTX_MV_MULS N (0: each product just before its add) forms
 * the products of N vectors (4 f32 terms each) before the adds of the
 * first of them, so no add waits for its multiply; PTX_MV_SPREAD S (1:
 * lanes 0 .. ROWS-1 of warp 0) has the ROWS outputs summed by S warps,
 * lanes 0 .. ROWS/S-1 of each, so each of the SM's schedulers can run a
 * chain.  Either way every output is one thread's in-order chain of
 * separate mul.rn and add.rn. */
#ifndef PTX_MV_MULS
#define PTX_MV_MULS 0
#endif
#ifndef PTX_MV_SPREAD
#define PTX_MV_SPREAD 1
#endif
/* PTX_MV_VROT 1: v's chunk in shared memory rotated by one element in
 * each 16-byte group (lane L holds the group's element L + 1 mod lanes),
 * so a term's W and v elements come from registers of different parity
 * (a 16-byte load fills four consecutive registers: unrotated, W's lane
 * e and v's lane e always share a register bank). */
#ifndef PTX_MV_VROT
#define PTX_MV_VROT 0
#endif
_Static_assert(PTX_MV_AHEAD >= 1, "the adds of a vector follow its loads");
_Static_assert(PTX_MV_DEPTH == 1 || PTX_MV_DEPTH == 2, "one or two register stages");

enum {
  THREADS = 256,
  ROWS = PTX_MV_ROWS,              /* outputs (and owning threads) per block */
  TILE_BYTES = PTX_MV_TILE,        /* of W per chunk */
  VEC_BYTES = 16,
  GROUP = 8,                       /* 16-byte vectors a step of a short chunk's loop */
  AHEAD = PTX_MV_AHEAD,            /* vectors read ahead of the adds */
  DEPTH = PTX_MV_DEPTH,            /* chunks of W in flight (registers) while one is summed: 1 or 2 */
  CHUNK_VECS = TILE_BYTES / (ROWS * VEC_BYTES),  /* 16-byte vectors of a row in a chunk */
  WS = PTX_MV_WS,                  /* ring buffers of the warp-specialised body, 0: none */
  NBUF = WS ? WS : 2,              /* shared buffers of W and v */
  FIRST = PTX_MV_FIRST,            /* terms of a row in the warp-specialised body's first chunk */
  PDL = PTX_MV_PDL,
  MULS = PTX_MV_MULS,              /* vectors of products formed ahead of their adds, 0: none */
  SPREAD = PTX_MV_SPREAD,          /* warps that sum a block's outputs */
  ROWS_PER_WARP = ROWS / SPREAD,
  VROT = PTX_MV_VROT,
};
_Static_assert(VROT == 0 || (VROT == 1 && WS == 0), "v rotated by one, not in the ring");
_Static_assert(SPREAD >= 1 && SPREAD <= THREADS / 32 && ROWS % SPREAD == 0 && ROWS_PER_WARP <= 32,
               "the outputs spread evenly over at most 8 warps");
_Static_assert(SPREAD == 1 || WS == 0, "the ring has one summing warp");
_Static_assert(MULS >= 0 && MULS <= AHEAD + 1, "products only of vectors already loaded");
_Static_assert(WS == 0 || (WS >= 2 && 2 * WS + 1 <= 16), "a ring of 2 or more buffers, two named barriers each");
_Static_assert(WS == 0 || ROWS <= 32, "one summing warp");
_Static_assert(WS == 0 || NBUF * (TILE_BYTES + ROWS * VEC_BYTES + TILE_BYTES / ROWS) <= 48 * 1024,
               "the ring fits in static shared memory");
_Static_assert(FIRST % 4 == 0 && FIRST * 8 * ROWS <= TILE_BYTES, "the first chunk: whole vectors, within a buffer");
/* every thread stages whole 16-byte vectors of W in the vector body */
_Static_assert(TILE_BYTES % (THREADS * VEC_BYTES) == 0, "W's tile is whole vectors per thread");

/* The product as one matrix W (rows: outputs, columns: k), one vector v
 * (v[k] at row k of its layout) and the outputs (out[o] at row o); each
 * a layout of the matmul's, transposed where the product has one row. */
typedef struct {
  ptx_gen *g;
  kn_layout w, v, out, start;
  bool w_first;                    /* the product is w * v (A is W), else v * w */
  LLVMTypeRef elem, vec;
  unsigned esize, kc, pitch, per, lanes;   /* lanes: elements of one 16-byte vector */
  bool fl;
  LLVMValueRef OUT, K, tid;
  LLVMValueRef row;                /* the output of the block this thread sums (if it sums): tid unless SPREAD */
  LLVMValueRef shared_w, shared_v; /* [2][ROWS][pitch], [2][kc] */
  /* register stage of the next chunk: W's elements (or vectors), v's */
  LLVMValueRef staged_w[2][TILE_BYTES / THREADS / 4], staged_x[2][TILE_BYTES / THREADS / VEC_BYTES];
  LLVMValueRef staged_v[2][TILE_BYTES / THREADS / 4 + 1];
  unsigned nstaged_v;
  unsigned set;                    /* which register stage load_stage and store_stage use */
  bool vector;                     /* this copy of the body loads W as 16-byte vectors */
  bool ws;                         /* this copy is the warp-specialised body (PTX_MV_WS) */
  bool late_wait;                  /* PDL: griddepcontrol.wait after W's first loads (row_group) */
  LLVMValueRef batch;              /* the product of a batch this block works on, NULL without one */
  unsigned align;                  /* of scalar global accesses in this copy */
} mv_gen;

static bool is_const(kn_size s, int64_t v) { return !s.is_param && s.value == v; }

static kn_layout transposed(kn_layout l) {
  return (kn_layout){l.offset, l.col_stride, l.row_stride, l.batch_stride, false, {false, 0}};
}

/* A batch too (attention's scores and weighted values of every head in
 * one launch): its products along grid y, each block's rows in one. */
bool ptx_matvec_takes(const kn_matmul *m) {
  bool one = is_const(m->n, 1) || is_const(m->m, 1);
  return one && m->type != KN_MM_I8_I32 && !kn_matmul_scaled(m) && !kn_matmul_row_tables(m);
}

static bool matvec_check(const kn_desc *d, tw_diag *diag) {
  const kn_matmul *m = &d->matmul;
  if (!ptx_matvec_takes(m))
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "matvec kernel: not a one-column or one-row product of f32, f64 or i32");
  if (m->align & (m->align - 1))
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "matvec kernel: alignment is not a power of 2");
  const kn_size sizes[] = {m->m, m->n, m->k, m->a.offset, m->a.row_stride, m->a.col_stride,
                           m->b.offset, m->b.row_stride, m->b.col_stride, m->c.offset,
                           m->c.row_stride, m->c.col_stride, kn_mm_batch(m), m->a.batch_stride,
                           m->b.batch_stride, m->c.batch_stride};
  for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    if (!ptx_size_check(d, sizes[i], "matvec size", diag)) return false;
  if (m->has_start) {
    const kn_size s[] = {m->start.offset, m->start.row_stride, m->start.col_stride, m->start.batch_stride};
    for (unsigned i = 0; i < 4; i++)
      if (!ptx_size_check(d, s[i], "matvec size", diag)) return false;
  }
  return true;
}

/* Whether W is read along the outputs (its columns contiguous and its
 * rows not): then consecutive threads take consecutive outputs. */
static bool outputs_fastest(const kn_layout *w) {
  return is_const(w->row_stride, 1) && !is_const(w->col_stride, 1);
}

/* Output o of layout l (the outputs, or the start a product adds to),
 * addressed from g->out_base: on the device copy of pinned host memory
 * the host memory itself (TWASM_ENTRY_HOST_OUT), so the outputs need no
 * copy back and the start no copy in. */
static LLVMValueRef out_at(mv_gen *v, const kn_layout *l, LLVMValueRef o) {
  ptx_gen *g = v->g;
  LLVMValueRef mem = g->mem;
  g->mem = g->out_base;
  LLVMValueRef p = ptx_element_at(g, l, v->esize, v->batch, o, ptx_i64(g, 0));
  g->mem = mem;
  return p;
}

static LLVMValueRef out_aligned(mv_gen *v, const kn_layout *l) {
  ptx_gen *g = v->g;
  LLVMValueRef mem = g->mem;
  g->mem = g->out_base;
  LLVMValueRef ok = ptx_layout_aligned(g, l, v->esize);
  g->mem = mem;
  return ok;
}

static LLVMValueRef w_at(mv_gen *v, LLVMValueRef o, LLVMValueRef k) {
  return ptx_element_at(v->g, &v->w, v->esize, v->batch, o, k);
}

static LLVMValueRef shared_at(mv_gen *v, LLVMValueRef arr, LLVMValueRef index) {
  return LLVMBuildGEP2(v->g->b, v->elem, arr, &index, 1, "");
}

/* Staged element q of this thread: its row and k within the tile. */
static void place(mv_gen *v, unsigned q, LLVMValueRef *row, LLVMValueRef *kk) {
  ptx_gen *g = v->g;
  LLVMValueRef e = ptx_add(g, v->tid, ptx_i64(g, (int64_t)q * THREADS));
  if (v->vector) {
    unsigned per_row = v->kc / v->lanes;
    *row = LLVMBuildUDiv(g->b, e, ptx_i64(g, per_row), "");
    *kk = ptx_mul_c(g, LLVMBuildURem(g->b, e, ptx_i64(g, per_row), ""), v->lanes);
  } else if (outputs_fastest(&v->w)) {
    *row = LLVMBuildURem(g->b, e, ptx_i64(g, ROWS), "");
    *kk = LLVMBuildUDiv(g->b, e, ptx_i64(g, ROWS), "");
  } else {
    *row = LLVMBuildUDiv(g->b, e, ptx_i64(g, v->kc), "");
    *kk = LLVMBuildURem(g->b, e, ptx_i64(g, v->kc), "");
  }
}

/* Staged element q of v's chunk for this thread: threads past a chunk
 * shorter than the block copy its last element again (the same value). */
static LLVMValueRef v_place(mv_gen *v, unsigned q) {
  ptx_gen *g = v->g;
  LLVMValueRef kk = ptx_add(g, v->tid, ptx_i64(g, (int64_t)q * THREADS));
  return v->kc % THREADS ? ptx_smin(g, kk, ptx_i64(g, v->kc - 1)) : kk;
}

/* Whether this thread sums an output of the block (v->row): lanes 0 ..
 * ROWS - 1 of warp 0, or with SPREAD lanes 0 .. ROWS/SPREAD - 1 of warps
 * 0 .. SPREAD - 1. */
static LLVMValueRef sums(mv_gen *v) {
  ptx_gen *g = v->g;
  if (SPREAD == 1) return ptx_below(g, v->tid, ptx_i64(g, ROWS));
  LLVMValueRef lane = LLVMBuildAnd(g->b, v->tid, ptx_i64(g, 31), "");
  return LLVMBuildAnd(g->b, ptx_below(g, lane, ptx_i64(g, ROWS_PER_WARP)),
                      ptx_below(g, v->tid, ptx_i64(g, 32 * SPREAD)), "");
}

/* Where element kk of v's chunk lies in its shared buffer: kk, or with
 * VROT at lane (kk - 1) mod lanes of its 16-byte group. */
static LLVMValueRef v_slot(mv_gen *v, LLVMValueRef kk) {
  if (!VROT) return kk;
  ptx_gen *g = v->g;
  int64_t mask = v->lanes - 1;
  LLVMValueRef lane = LLVMBuildAnd(g->b, ptx_add(g, kk, ptx_i64(g, mask)), ptx_i64(g, mask), "");
  return LLVMBuildOr(g->b, LLVMBuildAnd(g->b, kk, ptx_i64(g, ~mask), ""), lane, "");
}

/* The lane of v's 16-byte group that holds its element e. */
static unsigned v_lane(const mv_gen *v, unsigned e) { return VROT ? (e + v->lanes - 1) % v->lanes : e; }

static unsigned staged_w_count(const mv_gen *v) { return v->vector ? v->per / v->lanes : v->per; }

/* Global -> registers: the chunk at k0 of the rows from o0.  Rows past the
 * outputs and k past K are clamped (vectors to the last whole one: K is a
 * multiple of the lanes on the vector body).  With wait_before_v (PDL),
 * griddepcontrol.wait between W's loads and v's. */
static void load_stage(mv_gen *v, LLVMValueRef o0, LLVMValueRef k0, bool wait_before_v) {
  ptx_gen *g = v->g;
  LLVMValueRef one = ptx_i64(g, 1);
  LLVMValueRef last_o = LLVMBuildSub(g->b, v->OUT, one, "");
  LLVMValueRef last_k = LLVMBuildSub(g->b, v->K, ptx_i64(g, v->vector ? v->lanes : 1), "");
  for (unsigned q = 0; q < staged_w_count(v); q++) {
    LLVMValueRef row, kk;
    place(v, q, &row, &kk);
    LLVMValueRef o = ptx_smin(g, ptx_add(g, o0, row), last_o);
    LLVMValueRef k = ptx_smin(g, ptx_add(g, k0, kk), last_k);
    LLVMValueRef x = v->vector ? ptx_load(g, v->vec, w_at(v, o, k), VEC_BYTES)
                               : ptx_load(g, v->elem, w_at(v, o, k), v->align);
    LLVMBuildStore(g->b, x, v->vector ? v->staged_x[v->set][q] : v->staged_w[v->set][q]);
  }
  if (wait_before_v) ptx_asm_void(g, "griddepcontrol.wait;");
  last_k = LLVMBuildSub(g->b, v->K, one, "");
  for (unsigned q = 0; q < v->nstaged_v; q++) {
    LLVMValueRef k = ptx_smin(g, ptx_add(g, k0, v_place(v, q)), last_k);
    LLVMValueRef p = ptx_element_at(g, &v->v, v->esize, v->batch, k, ptx_i64(g, 0));
    LLVMBuildStore(g->b, ptx_load(g, v->elem, p, v->align), v->staged_v[v->set][q]);
  }
}

/* Registers -> shared buffer buf (0 or 1). */
static void store_stage(mv_gen *v, LLVMValueRef buf) {
  ptx_gen *g = v->g;
  LLVMValueRef wbase = ptx_mul_c(g, buf, (int64_t)ROWS * v->pitch);
  for (unsigned q = 0; q < staged_w_count(v); q++) {
    LLVMValueRef row, kk;
    place(v, q, &row, &kk);
    LLVMValueRef index = ptx_add(g, wbase, ptx_add(g, ptx_mul_c(g, row, v->pitch), kk));
    LLVMTypeRef t = v->vector ? v->vec : v->elem;
    LLVMValueRef x = LLVMBuildLoad2(g->b, t, v->vector ? v->staged_x[v->set][q] : v->staged_w[v->set][q], "");
    ptx_store(g, x, shared_at(v, v->shared_w, index),
              v->vector ? VEC_BYTES : v->esize);
  }
  LLVMValueRef vbase = ptx_mul_c(g, buf, v->kc);
  for (unsigned q = 0; q < v->nstaged_v; q++) {
    LLVMValueRef index = ptx_add(g, vbase, v_slot(v, v_place(v, q)));
    ptx_store(g, LLVMBuildLoad2(g->b, v->elem, v->staged_v[v->set][q], ""), shared_at(v, v->shared_v, index),
              v->esize);
  }
}

/* sum = sum + w * x (or x * w, the source's operand order): one rounding
 * for the multiply and one for the add. */
static LLVMValueRef add_product(mv_gen *v, LLVMValueRef sum, LLVMValueRef w, LLVMValueRef x) {
  LLVMBuilderRef b = v->g->b;
  LLVMValueRef l = v->w_first ? w : x, r = v->w_first ? x : w;
  return v->fl ? LLVMBuildFAdd(b, sum, LLVMBuildFMul(b, l, r, ""), "")
               : LLVMBuildAdd(b, sum, LLVMBuildMul(b, l, r, ""), "");
}

/* PTX_MV_MULS: the adds of vector i, the products of vectors i .. i +
 * MULS - 1 formed first where not yet (products[j], NULL until formed),
 * each kept until its add; the adds in k order as ever, so the sum is
 * the same bits. */
typedef LLVMValueRef mv_products[VEC_BYTES / 4];
static LLVMValueRef add_products_ahead(mv_gen *v, LLVMValueRef sum, const LLVMValueRef *ws, const LLVMValueRef *xs,
                                       mv_products *products, unsigned i, unsigned nvec) {
  LLVMBuilderRef b = v->g->b;
  for (unsigned j = i; j < nvec && j < i + MULS; j++) {
    if (products[j][0]) continue;
    for (unsigned e = 0; e < v->lanes; e++) {
      LLVMValueRef lane = LLVMConstInt(v->g->i32, e, false), vl = LLVMConstInt(v->g->i32, v_lane(v, e), false);
      LLVMValueRef w = LLVMBuildExtractElement(b, ws[j], lane, ""), x = LLVMBuildExtractElement(b, xs[j], vl, "");
      LLVMValueRef l = v->w_first ? w : x, r = v->w_first ? x : w;
      products[j][e] = v->fl ? LLVMBuildFMul(b, l, r, "") : LLVMBuildMul(b, l, r, "");
    }
  }
  for (unsigned e = 0; e < v->lanes; e++)
    sum = v->fl ? LLVMBuildFAdd(b, sum, products[i][e], "") : LLVMBuildAdd(b, sum, products[i][e], "");
  return sum;
}

/* nvec 16-byte vectors of the owning thread's terms from element at of
 * the chunk (wrow, vrow: where its row and v start in this buffer),
 * straight-line: the shared loads of vector i + AHEAD are issued before
 * the adds of vector i, so the add chain does not wait for shared memory
 * (a loop that loads and adds a vector or two an iteration waits for each
 * load: about 8.7 cycles a term measured, against the add's 4). */
static void sum_vectors(mv_gen *v, LLVMValueRef acc, LLVMValueRef wrow, LLVMValueRef vrow, LLVMValueRef at,
                        unsigned nvec) {
  ptx_gen *g = v->g;
  LLVMValueRef ws[CHUNK_VECS], xs[CHUNK_VECS];
  mv_products products[CHUNK_VECS];
  for (unsigned i = 0; i < nvec; i++) ws[i] = xs[i] = products[i][0] = NULL;
  LLVMValueRef sum = LLVMBuildLoad2(g->b, v->elem, acc, "");
  for (unsigned i = 0; i < nvec; i++) {
    for (unsigned j = i; j < nvec && j <= i + AHEAD; j++) {
      if (ws[j]) continue;
      LLVMValueRef kk = ptx_add(g, at, ptx_i64(g, (int64_t)j * v->lanes));
      ws[j] = ptx_load(g, v->vec, shared_at(v, v->shared_w, ptx_add(g, wrow, kk)), VEC_BYTES);
      xs[j] = ptx_load(g, v->vec, shared_at(v, v->shared_v, ptx_add(g, vrow, kk)), VEC_BYTES);
    }
    if (MULS) {
      sum = add_products_ahead(v, sum, ws, xs, products, i, nvec);
      continue;
    }
    for (unsigned e = 0; e < v->lanes; e++) {
      LLVMValueRef lane = LLVMConstInt(g->i32, e, false);
      sum = add_product(v, sum, LLVMBuildExtractElement(g->b, ws[i], lane, ""),
                        LLVMBuildExtractElement(g->b, xs[i], VROT ? LLVMConstInt(g->i32, v_lane(v, e), false) : lane, ""));
    }
  }
  LLVMBuildStore(g->b, sum, acc);
}

/* The owning thread's terms k0 .. k0+n-1 from buffer buf, in k order.
 * The sum is one chain of dependent adds, so its speed is the add's
 * latency if nothing else waits: in the vector body a whole chunk
 * (every chunk but a short last one) straight-line; a short one (and
 * every chunk of the other bodies) in groups of GROUP vectors
 * (straight-line each), then vector by vector, then element by element. */
static void sum_chunk(mv_gen *v, LLVMValueRef acc, LLVMValueRef buf, LLVMValueRef n, unsigned whole_n) {
  ptx_gen *g = v->g;
  LLVMValueRef wrow = ptx_add(g, ptx_mul_c(g, buf, (int64_t)ROWS * v->pitch), ptx_mul_c(g, v->row, v->pitch));
  LLVMValueRef vrow = ptx_mul_c(g, buf, v->kc);
  LLVMBasicBlockRef after = NULL;
  if (v->vector) { /* the other bodies (rare) keep their PTX, and its JIT, smaller */
    LLVMBasicBlockRef whole_bb = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "mv_whole");
    LLVMBasicBlockRef partial = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "mv_partial");
    after = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "mv_summed");
    LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, n, ptx_i64(g, whole_n), ""), whole_bb, partial);
    LLVMPositionBuilderAtEnd(g->b, whole_bb);
    sum_vectors(v, acc, wrow, vrow, ptx_i64(g, 0), whole_n / v->lanes);
    LLVMBuildBr(g->b, after);
    LLVMPositionBuilderAtEnd(g->b, partial);
  }
  int64_t span = (int64_t)GROUP * v->lanes;
  LLVMValueRef grouped = LLVMBuildAnd(g->b, n, ptx_i64(g, -span), "");
  ptx_loop grp;
  ptx_loop_begin(g, &grp, ptx_i64(g, 0), grouped, ptx_i64(g, span));
  sum_vectors(v, acc, wrow, vrow, grp.iv, GROUP);
  ptx_loop_end(g, &grp);
  LLVMValueRef whole = LLVMBuildAnd(g->b, n, ptx_i64(g, -(int64_t)v->lanes), "");
  ptx_loop kk;
  ptx_loop_begin(g, &kk, grouped, whole, ptx_i64(g, v->lanes));
  sum_vectors(v, acc, wrow, vrow, kk.iv, 1);
  ptx_loop_end(g, &kk);
  ptx_loop rest;
  ptx_loop_begin(g, &rest, whole, n, ptx_i64(g, 1));
  LLVMValueRef we = ptx_load(g, v->elem, shared_at(v, v->shared_w, ptx_add(g, wrow, rest.iv)), v->esize);
  LLVMValueRef xe = ptx_load(g, v->elem, shared_at(v, v->shared_v, ptx_add(g, vrow, v_slot(v, rest.iv))), v->esize);
  LLVMBuildStore(g->b, add_product(v, LLVMBuildLoad2(g->b, v->elem, acc, ""), we, xe), acc);
  ptx_loop_end(g, &rest);
  if (after) {
    LLVMBuildBr(g->b, after);
    LLVMPositionBuilderAtEnd(g->b, after);
  }
}

/* One chunk of the two-stage loop (DEPTH 2): chunk c (parity p, its
 * buffer p) summed while register stage p loads chunk c + 2 and stage
 * 1 - p, loaded a chunk earlier, goes into buffer 1 - p; so each chunk's
 * loads have two chunks' sums to arrive. */
static void two_ahead_step(mv_gen *v, LLVMValueRef acc, LLVMValueRef o0, LLVMValueRef chunks, LLVMValueRef c,
                           unsigned p) {
  ptx_gen *g = v->g;
  LLVMValueRef k0 = ptx_mul_c(g, c, v->kc);
  LLVMBasicBlockRef join = ptx_if_begin(g, ptx_below(g, ptx_add(g, c, ptx_i64(g, 2)), chunks));
  v->set = p;
  load_stage(v, o0, ptx_add(g, k0, ptx_i64(g, 2 * (int64_t)v->kc)), false);
  ptx_if_end(g, join);
  join = ptx_if_begin(g, sums(v));
  sum_chunk(v, acc, ptx_i64(g, p), ptx_smin(g, LLVMBuildSub(g->b, v->K, k0, ""), ptx_i64(g, v->kc)), v->kc);
  ptx_if_end(g, join);
  join = ptx_if_begin(g, ptx_below(g, ptx_add(g, c, ptx_i64(g, 1)), chunks));
  v->set = 1 - p;
  store_stage(v, ptx_i64(g, 1 - p));
  ptx_if_end(g, join);
  ptx_barrier(g);
}

/* The chunks with two in flight: chunk 0 into buffer 0 and chunk 1 into
 * stage 1 first, then pairs of steps (conditions uniform in the block). */
static void two_ahead(mv_gen *v, LLVMValueRef acc, LLVMValueRef o0, LLVMValueRef chunks, bool wait) {
  ptx_gen *g = v->g;
  LLVMBasicBlockRef join = ptx_if_begin(g, ptx_below(g, ptx_i64(g, 0), chunks));
  v->set = 0;
  load_stage(v, o0, ptx_i64(g, 0), wait);
  store_stage(v, ptx_i64(g, 0));
  ptx_if_end(g, join);
  join = ptx_if_begin(g, ptx_below(g, ptx_i64(g, 1), chunks));
  v->set = 1;
  load_stage(v, o0, ptx_i64(g, v->kc), false);
  ptx_if_end(g, join);
  ptx_barrier(g);
  ptx_loop c;
  ptx_loop_begin(g, &c, ptx_i64(g, 0), chunks, ptx_i64(g, 2));
  two_ahead_step(v, acc, o0, chunks, c.iv, 0);
  LLVMValueRef odd = ptx_add(g, c.iv, ptx_i64(g, 1));
  join = ptx_if_begin(g, ptx_below(g, odd, chunks));
  two_ahead_step(v, acc, o0, chunks, odd, 1);
  ptx_if_end(g, join);
  ptx_loop_end(g, &c);
  v->set = 0;
}

/* Whether this thread owns output o (a row of the block inside the
 * product). */
static LLVMValueRef owns(mv_gen *v, LLVMValueRef o) {
  ptx_gen *g = v->g;
  return LLVMBuildAnd(g->b, sums(v), ptx_below(g, o, v->OUT), "");
}

/* griddepcontrol.wait where the first chunk's load (which waits) did
 * not run, before the outputs are stored. */
static void wait_if_no_chunk(mv_gen *v, LLVMValueRef chunks, bool wait) {
  if (!wait) return;
  ptx_gen *g = v->g;
  LLVMBasicBlockRef join = ptx_if_begin(g, LLVMBuildICmp(g->b, LLVMIntSLE, chunks, ptx_i64(g, 0), ""));
  ptx_asm_void(g, "griddepcontrol.wait;");
  ptx_if_end(g, join);
}

/* The ROWS outputs from o0 over all of k.  Loop bounds depend only on
 * block indices and sizes, so every thread reaches every barrier. */
static void row_group(mv_gen *v, LLVMValueRef o0) {
  ptx_gen *g = v->g;
  const kn_matmul *m = &g->d->matmul;
  LLVMValueRef o = ptx_add(g, o0, v->row);
  LLVMValueRef acc = ptx_var(g, v->elem, LLVMConstNull(v->elem));
  if (v->late_wait && m->accumulate) ptx_asm_void(g, "griddepcontrol.wait;");
  if (m->accumulate) {
    LLVMBasicBlockRef join = ptx_if_begin(g, owns(v, o));
    LLVMBuildStore(g->b, ptx_load(g, v->elem, out_at(v, &v->start, o), v->align), acc);
    ptx_if_end(g, join);
  }
  LLVMValueRef chunks = LLVMBuildSDiv(g->b, ptx_add(g, v->K, ptx_i64(g, v->kc - 1)), ptx_i64(g, v->kc), "");
  /* PDL (late_wait): the first chunk's W loads go out before
   * griddepcontrol.wait, v's after it (the stores follow); with no chunk
   * at all the wait precedes the store (the start's load waited above) */
  bool wait = v->late_wait && !m->accumulate;
  if (DEPTH == 2) {
    two_ahead(v, acc, o0, chunks, wait);
    wait_if_no_chunk(v, chunks, wait);
    LLVMBasicBlockRef join = ptx_if_begin(g, owns(v, o));
    ptx_store(g, LLVMBuildLoad2(g->b, v->elem, acc, ""), out_at(v, &v->out, o), v->align);
    ptx_if_end(g, join);
    return;
  }
  LLVMBasicBlockRef join = ptx_if_begin(g, ptx_below(g, ptx_i64(g, 0), chunks));
  load_stage(v, o0, ptx_i64(g, 0), wait);
  store_stage(v, ptx_i64(g, 0));
  ptx_if_end(g, join);
  ptx_barrier(g);
  ptx_loop c;
  ptx_loop_begin(g, &c, ptx_i64(g, 0), chunks, ptx_i64(g, 1));
  LLVMValueRef k0 = ptx_mul_c(g, c.iv, v->kc);
  LLVMValueRef buf = LLVMBuildAnd(g->b, c.iv, ptx_i64(g, 1), "");
  LLVMValueRef more = ptx_below(g, ptx_add(g, c.iv, ptx_i64(g, 1)), chunks);
  join = ptx_if_begin(g, more);
  load_stage(v, o0, ptx_add(g, k0, ptx_i64(g, v->kc)), false);
  ptx_if_end(g, join);
  join = ptx_if_begin(g, sums(v));
  sum_chunk(v, acc, buf, ptx_smin(g, LLVMBuildSub(g->b, v->K, k0, ""), ptx_i64(g, v->kc)), v->kc);
  ptx_if_end(g, join);
  join = ptx_if_begin(g, more);
  store_stage(v, LLVMBuildXor(g->b, buf, ptx_i64(g, 1), ""));
  ptx_if_end(g, join);
  ptx_barrier(g);
  ptx_loop_end(g, &c);
  wait_if_no_chunk(v, chunks, wait);
  join = ptx_if_begin(g, owns(v, o));
  ptx_store(g, LLVMBuildLoad2(g->b, v->elem, acc, ""), out_at(v, &v->out, o), v->align);
  ptx_if_end(g, join);
}

/* ---- the warp-specialised body (PTX_MV_WS, sm_80+, vector body only) ----
 * Warp 0 sums (its first ROWS threads own the outputs); the other seven
 * warps copy chunks of W and v into a ring of WS shared buffers with
 * cp.async, so the summing warp never waits at a whole-block barrier.
 * Buffer b has two named barriers, both of all 256 threads: FULL (1 + b:
 * the producers arrive once their copies landed, the summing warp waits)
 * and EMPTY (1 + WS + b: the summing warp arrives once it has read the
 * buffer, the producers wait before refilling it).  Every arrival has
 * its wait: the summing warp arrives at EMPTY only for a chunk with a
 * successor WS chunks later.  Producers keep LAG = WS - 1 chunks' copies
 * in flight (cp.async.wait_group LAG before announcing the oldest).  The
 * first chunk may be shorter (FIRST terms) so the first adds start
 * sooner; then chunk t >= 1 covers k from first + (t - 1) kc. */
enum { PRODUCERS = THREADS - 32, LAG = NBUF - 1 };

/* barrier.OP on the named barrier first + b (b < NBUF, uniform in the
 * warp), its id an immediate: one case of a switch per buffer, so ptxas
 * counts only the 2 NBUF + 1 barriers used (an id in a register reserves
 * all 16). */
static void named_barrier(mv_gen *v, const char *op, unsigned first, LLVMValueRef b) {
  ptx_gen *g = v->g;
  LLVMBasicBlockRef after = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "mv_barrier_done");
  LLVMValueRef sw = LLVMBuildSwitch(g->b, b, after, NBUF);
  for (unsigned i = 0; i < NBUF; i++) {
    LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "mv_barrier");
    LLVMAddCase(sw, ptx_i64(g, i), bb);
    LLVMPositionBuilderAtEnd(g->b, bb);
    char text[64];
    snprintf(text, sizeof text, "barrier.%s %u, %u;", op, first + i, THREADS);
    ptx_asm_void(g, text);
    LLVMBuildBr(g->b, after);
  }
  LLVMPositionBuilderAtEnd(g->b, after);
}

enum { FULL = 1, EMPTY = 1 + NBUF };  /* the first named barrier of each kind */
static LLVMValueRef ring_of(mv_gen *v, LLVMValueRef t) {
  return LLVMBuildURem(v->g->b, t, ptx_i64(v->g, NBUF), "");
}

/* cp.async of `bytes` from global p to shared s (16: .cg, bypassing L1). */
static void copy_async(mv_gen *v, LLVMValueRef s, LLVMValueRef p, unsigned bytes) {
  ptx_gen *g = v->g;
  char text[80];
  snprintf(text, sizeof text, "cp.async.%s.shared.global [$0], [$1], %u;", bytes == 16 ? "cg" : "ca", bytes);
  LLVMValueRef args[2] = {LLVMBuildPtrToInt(g->b, s, g->i64, ""), LLVMBuildPtrToInt(g->b, p, g->i64, "")};
  ptx_asm(g, LLVMVoidTypeInContext(g->ctx), text, "l,l,~{memory}", args, 2, true);
}

/* A producer's share of chunk (k0, nk terms a row) into buffer b: W as
 * 16-byte vectors, v as elements, consecutive producers at consecutive
 * addresses; indices past the copy's end clamped to its last (the same
 * bytes copied twice), past the matrix to its last row or vector.
 * With wait_before_v (PDL), griddepcontrol.wait between W's copies and v's. */
static void ws_issue(mv_gen *v, LLVMValueRef o0, LLVMValueRef b, LLVMValueRef k0, unsigned nk, bool wait_before_v) {
  ptx_gen *g = v->g;
  LLVMValueRef p = LLVMBuildSub(g->b, v->tid, ptx_i64(g, 32), "");
  LLVMValueRef last_o = LLVMBuildSub(g->b, v->OUT, ptx_i64(g, 1), "");
  LLVMValueRef last_k = LLVMBuildSub(g->b, v->K, ptx_i64(g, v->lanes), "");
  unsigned per_row = nk / v->lanes, nvec = ROWS * per_row;
  LLVMValueRef wbase = ptx_mul_c(g, b, (int64_t)ROWS * v->pitch);
  for (unsigned q = 0; q * PRODUCERS < nvec; q++) {
    LLVMValueRef e = ptx_smin(g, ptx_add(g, p, ptx_i64(g, (int64_t)q * PRODUCERS)), ptx_i64(g, nvec - 1));
    LLVMValueRef row = LLVMBuildUDiv(g->b, e, ptx_i64(g, per_row), "");
    LLVMValueRef kk = ptx_mul_c(g, LLVMBuildURem(g->b, e, ptx_i64(g, per_row), ""), v->lanes);
    LLVMValueRef o = ptx_smin(g, ptx_add(g, o0, row), last_o);
    LLVMValueRef k = ptx_smin(g, ptx_add(g, k0, kk), last_k);
    LLVMValueRef index = ptx_add(g, wbase, ptx_add(g, ptx_mul_c(g, row, v->pitch), kk));
    copy_async(v, shared_at(v, v->shared_w, index), w_at(v, o, k), VEC_BYTES);
  }
  if (wait_before_v) ptx_asm_void(g, "griddepcontrol.wait;");
  last_k = LLVMBuildSub(g->b, v->K, ptx_i64(g, 1), "");
  LLVMValueRef vbase = ptx_mul_c(g, b, v->kc);
  for (unsigned q = 0; q * PRODUCERS < nk; q++) {
    LLVMValueRef e = ptx_smin(g, ptx_add(g, p, ptx_i64(g, (int64_t)q * PRODUCERS)), ptx_i64(g, nk - 1));
    LLVMValueRef k = ptx_smin(g, ptx_add(g, k0, e), last_k);
    LLVMValueRef src = ptx_element_at(g, &v->v, v->esize, v->batch, k, ptx_i64(g, 0));
    copy_async(v, shared_at(v, v->shared_v, ptx_add(g, vbase, e)), src, v->esize);
  }
  ptx_asm_void(g, "cp.async.commit_group;");
}

/* The producers' side of one row group: the first chunk peeled (its own
 * length), then chunk t into buffer t mod NBUF once the summing warp has
 * handed it back, announcing chunk t - LAG; then the last ones. */
static void ws_produce(mv_gen *v, LLVMValueRef o0, LLVMValueRef chunks, unsigned first) {
  ptx_gen *g = v->g;
  LLVMBasicBlockRef join = ptx_if_begin(g, ptx_below(g, ptx_i64(g, 0), chunks));
  ws_issue(v, o0, ptx_i64(g, 0), ptx_i64(g, 0), first, PDL && g->sm >= 90);
  ptx_if_end(g, join);
  ptx_loop t;
  ptx_loop_begin(g, &t, ptx_i64(g, 1), chunks, ptx_i64(g, 1));
  LLVMValueRef b = ring_of(v, t.iv);
  join = ptx_if_begin(g, LLVMBuildICmp(g->b, LLVMIntSGE, t.iv, ptx_i64(g, NBUF), ""));
  named_barrier(v, "sync", EMPTY, b);
  ptx_if_end(g, join);
  LLVMValueRef k0 = ptx_add(g, ptx_i64(g, first), ptx_mul_c(g, LLVMBuildSub(g->b, t.iv, ptx_i64(g, 1), ""), v->kc));
  ws_issue(v, o0, b, k0, v->kc, false);
  join = ptx_if_begin(g, LLVMBuildICmp(g->b, LLVMIntSGE, t.iv, ptx_i64(g, LAG), ""));
  char text[48];
  snprintf(text, sizeof text, "cp.async.wait_group %u;", LAG);
  ptx_asm_void(g, text);
  named_barrier(v, "arrive", FULL, ring_of(v, LLVMBuildSub(g->b, t.iv, ptx_i64(g, LAG), "")));
  ptx_if_end(g, join);
  ptx_loop_end(g, &t);
  /* the last LAG chunks (or fewer): every copy landed, announced in order */
  ptx_asm_void(g, "cp.async.wait_group 0;");
  LLVMValueRef from = LLVMBuildSub(g->b, chunks, ptx_i64(g, LAG), "");
  from = LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntSLT, from, ptx_i64(g, 0), ""), ptx_i64(g, 0), from, "");
  ptx_loop s;
  ptx_loop_begin(g, &s, from, chunks, ptx_i64(g, 1));
  named_barrier(v, "arrive", FULL, ring_of(v, s.iv));
  ptx_loop_end(g, &s);
}

/* The summing warp's side: chunk t waited for, summed by the owning
 * threads, its buffer handed back when a later chunk needs it. */
static void ws_consume(mv_gen *v, LLVMValueRef acc, LLVMValueRef chunks, unsigned first) {
  ptx_gen *g = v->g;
  LLVMValueRef rows = ptx_below(g, v->tid, ptx_i64(g, ROWS));
  ptx_loop t;
  ptx_loop_begin(g, &t, ptx_i64(g, 0), chunks, ptx_i64(g, 1));
  LLVMValueRef b = ring_of(v, t.iv);
  named_barrier(v, "sync", FULL, b);
  LLVMValueRef is_first = LLVMBuildICmp(g->b, LLVMIntEQ, t.iv, ptx_i64(g, 0), "");
  LLVMValueRef k0 = ptx_add(g, ptx_i64(g, first), ptx_mul_c(g, LLVMBuildSub(g->b, t.iv, ptx_i64(g, 1), ""), v->kc));
  k0 = LLVMBuildSelect(g->b, is_first, ptx_i64(g, 0), k0, "");
  LLVMValueRef left = LLVMBuildSub(g->b, v->K, k0, "");
  if (first != v->kc) {
    LLVMBasicBlockRef join = ptx_if_begin(g, LLVMBuildAnd(g->b, rows, is_first, ""));
    sum_chunk(v, acc, b, ptx_smin(g, left, ptx_i64(g, first)), first);
    ptx_if_end(g, join);
    rows = LLVMBuildAnd(g->b, rows, LLVMBuildNot(g->b, is_first, ""), "");
  }
  LLVMBasicBlockRef join = ptx_if_begin(g, rows);
  sum_chunk(v, acc, b, ptx_smin(g, left, ptx_i64(g, v->kc)), v->kc);
  ptx_if_end(g, join);
  join = ptx_if_begin(g, ptx_below(g, ptx_add(g, t.iv, ptx_i64(g, NBUF)), chunks));
  named_barrier(v, "arrive", EMPTY, b);
  ptx_if_end(g, join);
  ptx_loop_end(g, &t);
}

/* One row group, warp-specialised; a block barrier at its end so the
 * next group's copies do not overwrite buffers still being summed. */
static void ws_row_group(mv_gen *v, LLVMValueRef o0) {
  ptx_gen *g = v->g;
  const kn_matmul *m = &g->d->matmul;
  unsigned first = FIRST ? FIRST * 4 / v->esize : v->kc;  /* the same bytes a row for f64 */
  LLVMValueRef o = ptx_add(g, o0, v->tid);
  LLVMValueRef k_after_first = LLVMBuildSub(g->b, v->K, ptx_i64(g, first), "");
  LLVMValueRef more = LLVMBuildSDiv(g->b, ptx_add(g, k_after_first, ptx_i64(g, v->kc - 1)), ptx_i64(g, v->kc), "");
  LLVMValueRef chunks = LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntSLE, v->K, ptx_i64(g, first), ""),
                                        LLVMBuildZExt(g->b, ptx_below(g, ptx_i64(g, 0), v->K), g->i64, ""),
                                        ptx_add(g, more, ptx_i64(g, 1)), "");
  LLVMBasicBlockRef consumer = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "mv_summer");
  LLVMBasicBlockRef producer = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "mv_producer");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "mv_group_done");
  LLVMBuildCondBr(g->b, ptx_below(g, v->tid, ptx_i64(g, 32)), consumer, producer);
  LLVMPositionBuilderAtEnd(g->b, consumer);
  if (PDL && g->sm >= 90) ptx_asm_void(g, "griddepcontrol.wait;");
  LLVMValueRef acc = ptx_var(g, v->elem, LLVMConstNull(v->elem));
  if (m->accumulate) {
    LLVMBasicBlockRef join = ptx_if_begin(g, owns(v, o));
    LLVMBuildStore(g->b, ptx_load(g, v->elem, out_at(v, &v->start, o), v->align), acc);
    ptx_if_end(g, join);
  }
  ws_consume(v, acc, chunks, first);
  LLVMBasicBlockRef join = ptx_if_begin(g, owns(v, o));
  ptx_store(g, LLVMBuildLoad2(g->b, v->elem, acc, ""), out_at(v, &v->out, o), v->align);
  ptx_if_end(g, join);
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, producer);
  ws_produce(v, o0, chunks, first);
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, done);
  ptx_barrier(g);
}

/* Blocks stride over groups of ROWS outputs along x and, with a batch,
 * over its products along y (bounds uniform in the block). */
static void all_groups(mv_gen *v) {
  ptx_gen *g = v->g;
  const kn_matmul *m = &g->d->matmul;
  ptx_loop prod;
  if (m->batched) {
    ptx_loop_begin(g, &prod, ptx_sreg(g, "ctaid.y"), ptx_size(g, m->batch), ptx_sreg(g, "nctaid.y"));
    v->batch = prod.iv;
  }
  LLVMValueRef groups = LLVMBuildSDiv(g->b, ptx_add(g, v->OUT, ptx_i64(g, ROWS - 1)), ptx_i64(g, ROWS), "");
  ptx_loop grp;
  ptx_loop_begin(g, &grp, ptx_sreg(g, "ctaid.x"), groups, ptx_sreg(g, "nctaid.x"));
  if (v->ws)
    ws_row_group(v, ptx_mul_c(g, grp.iv, ROWS));
  else
    row_group(v, ptx_mul_c(g, grp.iv, ROWS));
  ptx_loop_end(g, &grp);
  if (m->batched) ptx_loop_end(g, &prod);
  v->batch = NULL;
}

static void gen_init(mv_gen *v, ptx_gen *g) {
  const kn_matmul *m = &g->d->matmul;
  static const kn_type elems[] = {[KN_MM_F32] = KN_F32, [KN_MM_F64] = KN_F64, [KN_MM_I32] = KN_I32};
  kn_type t = elems[m->type];
  *v = (mv_gen){.g = g, .w_first = is_const(m->n, 1), .esize = ptx_type_bytes(t), .fl = t != KN_I32};
  /* one output column: W is A, v B's column, out C's column; one row: W
   * is B transposed, v A's row, out C's row */
  v->w = v->w_first ? m->a : transposed(m->b);
  v->v = v->w_first ? m->b : transposed(m->a);
  v->out = v->w_first ? m->c : transposed(m->c);
  v->start = v->w_first ? *kn_matmul_start(m) : transposed(*kn_matmul_start(m));
  v->elem = ptx_type(g, t);
  v->lanes = VEC_BYTES / v->esize;
  v->vec = LLVMVectorType(v->elem, v->lanes);
  v->kc = TILE_BYTES / (ROWS * v->esize);
  v->pitch = v->kc + v->lanes;     /* rows 16 bytes apart in banks: no conflicts */
  v->per = ROWS * v->kc / THREADS;
  v->nstaged_v = (v->kc + THREADS - 1) / THREADS;
  v->OUT = ptx_size(g, v->w_first ? m->m : m->n);
  v->K = ptx_size(g, m->k);
  v->tid = ptx_sreg(g, "tid.x");
  v->row = v->tid;
  if (SPREAD > 1)  /* warp w's lane l sums row w ROWS/SPREAD + l */
    v->row = ptx_add(g, ptx_mul_c(g, LLVMBuildLShr(g->b, v->tid, ptx_i64(g, 5), ""), ROWS_PER_WARP),
                     LLVMBuildAnd(g->b, v->tid, ptx_i64(g, 31), ""));
  v->shared_w = ptx_shared_array(g, v->elem, NBUF * ROWS * v->pitch, "mv_w");
  v->shared_v = ptx_shared_array(g, v->elem, NBUF * v->kc, "mv_v");
  for (unsigned s = 0; s < DEPTH; s++) {
    for (unsigned q = 0; q < v->per; q++) v->staged_w[s][q] = ptx_var(g, v->elem, NULL);
    for (unsigned q = 0; q < v->per / v->lanes; q++) v->staged_x[s][q] = ptx_var(g, v->vec, NULL);
    for (unsigned q = 0; q < v->nstaged_v; q++) v->staged_v[s][q] = ptx_var(g, v->elem, NULL);
  }
}

/* Three bodies behind uniform run-time tests: W's rows contiguous and
 * 16-byte aligned with K a whole number of vectors (vector loads; every
 * element aligned too), every element aligned to its size, and the
 * descriptor's alignment (bytes, as the detector proves nothing). */
static bool matvec_build(ptx_gen *g) {
  const kn_matmul *m = &g->d->matmul;
  mv_gen v;
  gen_init(&v, g);
  ptx_annotate(g, "maxntidx", THREADS);
  /* PDL: the next launch may start its blocks (and W's loads) now; each
   * thread waits (griddepcontrol.wait) before touching v, the start or
   * the outputs: at the start of the element bodies, after the first
   * chunk's W loads in the vector bodies (the ring's producers, and
   * row_group's late_wait) */
  if (PDL && g->sm >= 90) ptx_asm_void(g, "griddepcontrol.launch_dependents;");
  LLVMValueRef aligned = LLVMBuildAnd(g->b, ptx_layout_aligned(g, &v.w, v.esize),
                                      ptx_layout_aligned(g, &v.v, v.esize), "");
  aligned = LLVMBuildAnd(g->b, aligned, out_aligned(&v, &v.out), "");
  if (m->accumulate) aligned = LLVMBuildAnd(g->b, aligned, out_aligned(&v, &v.start), "");
  LLVMValueRef vec_ok = LLVMBuildAnd(g->b, aligned, ptx_rows_aligned(g, &v.w, v.esize, VEC_BYTES), "");
  vec_ok = LLVMBuildAnd(g->b, vec_ok, ptx_multiple_of(g, v.K, v.lanes), "");
  /* every product's W rows as aligned as the first's */
  if (m->batched)
    vec_ok = LLVMBuildAnd(g->b, vec_ok, ptx_multiple_of(g, ptx_size(g, v.w.batch_stride), v.lanes), "");
  LLVMBasicBlockRef vec_body = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "vectors");
  LLVMBasicBlockRef not_vec = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "elements");
  LLVMBasicBlockRef elem_body = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "aligned");
  LLVMBasicBlockRef byte_body = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "unaligned");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "finished");
  LLVMBuildCondBr(g->b, vec_ok, vec_body, not_vec);
  LLVMPositionBuilderAtEnd(g->b, not_vec);
  LLVMBuildCondBr(g->b, aligned, elem_body, byte_body);
  const struct {
    LLVMBasicBlockRef at;
    bool vector;
    unsigned align;
  } bodies[] = {{vec_body, true, v.esize}, {elem_body, false, v.esize},
                {byte_body, false, m->align && m->align < v.esize ? m->align : v.esize}};
  for (unsigned i = 0; i < 3; i++) {
    LLVMPositionBuilderAtEnd(g->b, bodies[i].at);
    v.vector = bodies[i].vector;
    v.align = bodies[i].align;
    v.ws = WS && v.vector && g->sm >= 80;
    v.late_wait = PDL && g->sm >= 90 && v.vector && !v.ws;
    if (PDL && g->sm >= 90 && !v.ws && !v.late_wait) ptx_asm_void(g, "griddepcontrol.wait;");
    all_groups(&v);
    LLVMBuildBr(g->b, done);
  }
  LLVMPositionBuilderAtEnd(g->b, done);
  LLVMBuildRetVoid(g->b);
  return true;
}

static void matvec_launch(const kn_desc *d, ptx_launch *l) {
  const kn_matmul *m = &d->matmul;
  *l = (ptx_launch){.block = {THREADS, 1, 1},
                    .count = {is_const(m->n, 1) ? m->m : m->n, kn_mm_batch(m), {false, 1}},
                    .per_block = {ROWS, 1, 1},
                    .max_grid = {65535, 65535, 1}};
}

const ptx_kind ptx_kind_matvec = {matvec_check, matvec_build, matvec_launch, false};
