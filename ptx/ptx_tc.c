/* ptx_tc.c: the packed tensor-core product of sm_90a modules (ABI 5, see
 * twasm_abi.h): two more entries next to the wgmma kernel.
 *
 * NAME_pack turns A and B into the exact shared-memory images the product
 * multiplies from: per k-tile of 128 bytes of k, a 128-row tile of A and
 * a 256-column tile of B, both K-major in the no-swizzle core-matrix
 * layout (byte (r, x) of a tile at (x / 16) * rows * 16 + r * 16 + x % 16),
 * zero-padded past M, N and K (exact: adding 0 products changes no int8
 * sum and no float sum that is not -0), tf32 values rounded with cvt.rna
 * as on every other tf32 path.  B is transposed on the way, which no
 * tensor-core copy can do for int8 or tf32.
 *
 * NAME_tc then never touches A or B in linear memory: a block of 384
 * threads owns a 128x256 tile of C; warpgroup 0 is the producer, one
 * thread of which copies each k-tile's two images (48 KiB) with
 * cp.async.bulk into one of 4 stages of dynamic shared memory, completion
 * counted by the stage's `full` mbarrier; warpgroups 1 and 2 each compute
 * 64 rows x 256 columns (two wgmma m64n128 accumulator sets, 128
 * registers, raised by setmaxnreg), wait on `full`, keep one k-tile of
 * wgmma in flight, and release the stage before it on its `empty`
 * mbarrier (one arrival per consumer warp).  The copies bypass L1 and the
 * registers, the wall of the older kernel in ptx_wgmma.c. */
#include <stdio.h>
#include <string.h>

#include "ptx_internal.h"
#include "twasm_abi.h"

enum {
  TM = TWASM_TC_TILE_M,
  TN = TWASM_TC_TILE_N,
  KB = TWASM_TC_K_BYTES,
  STAGES = TWASM_TC_STAGES,
  A_BYTES = TM * KB,
  B_BYTES = TN * KB,
  STAGE_BYTES = A_BYTES + B_BYTES,
  A_KSTEP = TM * 16,         /* bytes between k chunks of an A image */
  B_KSTEP = TN * 16,
  ROW_STEP = 128,            /* bytes between row groups of 8 */
  PACK = TWASM_TC_PACK_THREADS,
  CONSUMER_WARPS = 8,
  PRODUCER_REGS = 40,
  CONSUMER_REGS = 232,
};

_Static_assert(TWASM_TC_SHARED_BYTES == STAGES * STAGE_BYTES, "stage sizes agree with the ABI");
_Static_assert(TWASM_TC_THREADS == 3 * 128, "one producer and two consumer warpgroups");
_Static_assert(TM == 2 * 64 && TN == 2 * 128, "two m64 consumers of two n128 sets");

typedef struct {
  ptx_gen *g;
  bool tf32;
  unsigned es;                 /* bytes per A/B element */
  int64_t ke;                  /* elements of k per k-tile */
  LLVMValueRef scratch;
  LLVMValueRef M, N, K, mt, nt, kt;  /* sizes and tile counts */
  LLVMValueRef tid;
} tc_gen;

static LLVMValueRef i32c(ptx_gen *g, uint32_t v) { return LLVMConstInt(g->i32, v, false); }

static LLVMValueRef ceil_div(ptx_gen *g, LLVMValueRef v, int64_t d) {
  return LLVMBuildSDiv(g->b, ptx_add(g, v, ptx_i64(g, d - 1)), ptx_i64(g, d), "");
}

static LLVMValueRef and2(ptx_gen *g, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildAnd(g->b, a, b, ""); }

static LLVMValueRef at_most(ptx_gen *g, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildICmp(g->b, LLVMIntSLE, a, b, "");
}

static LLVMValueRef scratch_at(tc_gen *t, LLVMValueRef off) {
  return LLVMBuildGEP2(t->g->b, t->g->i8, t->scratch, &off, 1, "");
}

static void sizes(tc_gen *t) {
  ptx_gen *g = t->g;
  const kn_matmul *m = &g->d->matmul;
  t->M = ptx_size(g, m->m), t->N = ptx_size(g, m->n), t->K = ptx_size(g, m->k);
  t->mt = ceil_div(g, t->M, TM);
  t->nt = ceil_div(g, t->N, TN);
  t->kt = ceil_div(g, t->K, t->ke);
}

/* Byte offsets in scratch of A's image (tile row mt, k-tile k) and B's
 * (tile column nt, k-tile k). */
static LLVMValueRef a_image(tc_gen *t, LLVMValueRef mt, LLVMValueRef k) {
  ptx_gen *g = t->g;
  return ptx_mul_c(g, ptx_add(g, LLVMBuildMul(g->b, mt, t->kt, ""), k), A_BYTES);
}

static LLVMValueRef b_image(tc_gen *t, LLVMValueRef nt, LLVMValueRef k) {
  ptx_gen *g = t->g;
  LLVMValueRef a_all = ptx_mul_c(g, LLVMBuildMul(g->b, t->mt, t->kt, ""), A_BYTES);
  return ptx_add(g, a_all, ptx_mul_c(g, ptx_add(g, LLVMBuildMul(g->b, nt, t->kt, ""), k), B_BYTES));
}

/* Element (row, col) of l, `bytes` wide, of type et, loaded with
 * alignment `align`, or 0 when it lies outside rows x cols.  The address
 * is clamped into the matrix, so every load is of an element the loop
 * reads (rows, cols >= 1 here). */
static LLVMValueRef element_or_zero(ptx_gen *g, const kn_layout *l, unsigned bytes, LLVMTypeRef et,
                                    unsigned align, LLVMValueRef row, LLVMValueRef col, LLVMValueRef rows,
                                    LLVMValueRef cols) {
  LLVMValueRef one = ptx_i64(g, 1);
  LLVMValueRef in = and2(g, ptx_below(g, row, rows), ptx_below(g, col, cols));
  LLVMValueRef rc = ptx_smin(g, row, LLVMBuildSub(g->b, rows, one, ""));
  LLVMValueRef cc = ptx_smin(g, col, LLVMBuildSub(g->b, cols, one, ""));
  LLVMValueRef x = ptx_load(g, et, ptx_element_at(g, l, bytes, NULL, rc, cc), align);
  return LLVMBuildSelect(g->b, in, x, LLVMConstNull(et), "");
}

/* 16 bytes of the operand l: elements (row + e drow, col + e dcol) for
 * e = 0 .. 16 / es - 1, 0 past (rows, cols), tf32 rounded, as <4 x i32>. */
static LLVMValueRef gather(tc_gen *t, const kn_layout *l, LLVMValueRef row, LLVMValueRef col,
                           unsigned drow, unsigned dcol, LLVMValueRef rows, LLVMValueRef cols) {
  ptx_gen *g = t->g;
  unsigned n = 16 / t->es;
  LLVMTypeRef et = t->tf32 ? g->f32 : g->i8;
  LLVMValueRef v = LLVMGetUndef(LLVMVectorType(t->tf32 ? g->i32 : g->i8, n));
  for (unsigned e = 0; e < n; e++) {
    LLVMValueRef r = ptx_add(g, row, ptx_i64(g, (int64_t)(e * drow)));
    LLVMValueRef c = ptx_add(g, col, ptx_i64(g, (int64_t)(e * dcol)));
    LLVMValueRef x = element_or_zero(g, l, t->es, et, 1, r, c, rows, cols);
    if (t->tf32) x = ptx_round_tf32(g, x);  /* +0 stays +0 */
    v = LLVMBuildInsertElement(g->b, v, x, i32c(g, e), "");
  }
  return LLVMBuildBitCast(g->b, v, LLVMVectorType(g->i32, 4), "");
}

/* Emits `if (fast) body(ctx, arg, true) else body(ctx, arg, false)`. */
static void two_ways(ptx_gen *g, LLVMValueRef fast, void (*body)(void *, LLVMValueRef, bool), void *ctx,
                     LLVMValueRef arg) {
  LLVMBasicBlockRef yes = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "vector");
  LLVMBasicBlockRef no = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "gather");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "packed");
  LLVMBuildCondBr(g->b, fast, yes, no);
  LLVMPositionBuilderAtEnd(g->b, yes);
  body(ctx, arg, true);
  LLVMBuildBr(g->b, join);
  LLVMPositionBuilderAtEnd(g->b, no);
  body(ctx, arg, false);
  LLVMBuildBr(g->b, join);
  LLVMPositionBuilderAtEnd(g->b, join);
}

/* A's image (tile row ctaid.y, k-tile ctaid.x): task q = tid + 256 i is
 * chunk q % 8 of row q / 8, so a warp reads 4 rows of 128 contiguous
 * bytes and writes 64-byte runs. */
static void pack_a_body(void *ctx, LLVMValueRef img, bool fast) {
  tc_gen *t = ctx;
  ptx_gen *g = t->g;
  const kn_matmul *m = &g->d->matmul;
  LLVMValueRef i0 = ptx_mul_c(g, ptx_sreg(g, "ctaid.y"), TM);
  LLVMValueRef k0 = ptx_mul_c(g, ptx_sreg(g, "ctaid.x"), t->ke);
  for (unsigned i = 0; i < A_BYTES / 16 / PACK; i++) {
    LLVMValueRef q = ptx_add(g, t->tid, ptx_i64(g, (int64_t)i * PACK));
    LLVMValueRef c = LLVMBuildURem(g->b, q, ptx_i64(g, 8), ""), r = LLVMBuildUDiv(g->b, q, ptx_i64(g, 8), "");
    LLVMValueRef row = ptx_add(g, i0, r), col = ptx_add(g, k0, ptx_mul_c(g, c, 16 / t->es));
    LLVMValueRef v;
    if (fast) {
      v = ptx_load(g, t->tf32 ? LLVMVectorType(g->f32, 4) : LLVMVectorType(g->i32, 4),
                   ptx_element_at(g, &m->a, t->es, NULL, row, col), 16);
      if (t->tf32) v = ptx_round_tf32x4(g, v);
    } else {
      v = gather(t, &m->a, row, col, 0, 1, t->M, t->K);
    }
    LLVMValueRef dst = ptx_add(g, img, ptx_add(g, ptx_mul_c(g, c, A_KSTEP), ptx_mul_c(g, r, 16)));
    ptx_store(g, v, scratch_at(t, dst), 16);
  }
}

/* B's image (tile column ctaid.y - MT, k-tile ctaid.x): task q = tid +
 * 256 i is columns 4 (q % 64) .. + 3 by chunk q / 64 of k, read as rows
 * of 4 columns (a warp reads 128 or 512 contiguous bytes per row) and
 * written as one 16-byte chunk per column: int8 bytes transposed by prmt,
 * tf32 values by lanes. */
static void pack_b_body(void *ctx, LLVMValueRef img, bool fast) {
  tc_gen *t = ctx;
  ptx_gen *g = t->g;
  const kn_matmul *m = &g->d->matmul;
  LLVMValueRef j0 = ptx_mul_c(g, LLVMBuildSub(g->b, ptx_sreg(g, "ctaid.y"), t->mt, ""), TN);
  LLVMValueRef k0 = ptx_mul_c(g, ptx_sreg(g, "ctaid.x"), t->ke);
  unsigned rows = 16 / t->es;   /* k values per chunk */
  for (unsigned i = 0; i < B_BYTES / 16 / 4 / PACK; i++) {
    LLVMValueRef q = ptx_add(g, t->tid, ptx_i64(g, (int64_t)i * PACK));
    LLVMValueRef quad = LLVMBuildURem(g->b, q, ptx_i64(g, 64), ""), c = LLVMBuildUDiv(g->b, q, ptx_i64(g, 64), "");
    LLVMValueRef col = ptx_add(g, j0, ptx_mul_c(g, quad, 4));
    LLVMValueRef krow = ptx_add(g, k0, ptx_mul_c(g, c, rows));
    LLVMValueRef chunk[4];
    if (!fast) {
      for (unsigned e = 0; e < 4; e++)
        chunk[e] = gather(t, &m->b, krow, ptx_add(g, col, ptx_i64(g, e)), 1, 0, t->K, t->N);
    } else if (t->tf32) {
      LLVMValueRef x[4];
      for (unsigned r = 0; r < 4; r++)
        x[r] = ptx_load(g, LLVMVectorType(g->f32, 4),
                        ptx_element_at(g, &m->b, 4, NULL, ptx_add(g, krow, ptx_i64(g, r)), col), 16);
      for (unsigned e = 0; e < 4; e++) {
        LLVMValueRef v = LLVMGetUndef(LLVMVectorType(g->f32, 4));
        for (unsigned r = 0; r < 4; r++)
          v = LLVMBuildInsertElement(g->b, v, LLVMBuildExtractElement(g->b, x[r], i32c(g, e), ""), i32c(g, r), "");
        chunk[e] = ptx_round_tf32x4(g, v);
      }
    } else {
      LLVMValueRef w[16];
      for (unsigned r = 0; r < 16; r++)
        w[r] = ptx_load(g, g->i32, ptx_element_at(g, &m->b, 1, NULL, ptx_add(g, krow, ptx_i64(g, r)), col), 4);
      for (unsigned e = 0; e < 4; e++) {
        /* byte e of two words, then two such pairs: 4 k values of column e */
        LLVMValueRef sel = i32c(g, e | (e + 4) << 4);
        LLVMValueRef v = LLVMGetUndef(LLVMVectorType(g->i32, 4));
        for (unsigned j = 0; j < 4; j++) {
          LLVMValueRef lo = ptx_prmt(g, w[4 * j], w[4 * j + 1], sel);
          LLVMValueRef hi = ptx_prmt(g, w[4 * j + 2], w[4 * j + 3], sel);
          v = LLVMBuildInsertElement(g->b, v, ptx_prmt(g, lo, hi, i32c(g, 0x5410)), i32c(g, j), "");
        }
        chunk[e] = v;
      }
    }
    for (unsigned e = 0; e < 4; e++) {
      LLVMValueRef n = ptx_add(g, ptx_mul_c(g, quad, 4), ptx_i64(g, e));
      LLVMValueRef dst = ptx_add(g, img, ptx_add(g, ptx_mul_c(g, c, B_KSTEP), ptx_mul_c(g, n, 16)));
      ptx_store(g, chunk[e], scratch_at(t, dst), 16);
    }
  }
}

/* Launch bounds of an entry run with blocks of `threads` x 1 x 1. */
static void entry_block(ptx_gen *g, unsigned threads) {
  ptx_annotate(g, "maxntidx", threads);
  ptx_annotate(g, "maxntidy", 1);
  ptx_annotate(g, "maxntidz", 1);
}

static void build_pack(tc_gen *t) {
  ptx_gen *g = t->g;
  const kn_matmul *m = &g->d->matmul;
  entry_block(g, PACK);
  sizes(t);
  t->tid = ptx_sreg(g, "tid.x");
  LLVMValueRef by = ptx_sreg(g, "ctaid.y"), bx = ptx_sreg(g, "ctaid.x");
  LLVMValueRef k_whole = at_most(g, ptx_mul_c(g, ptx_add(g, bx, ptx_i64(g, 1)), t->ke), t->K);
  LLVMBasicBlockRef join = ptx_if_begin(g, ptx_below(g, by, t->mt));
  LLVMValueRef whole = and2(g, k_whole, at_most(g, ptx_mul_c(g, ptx_add(g, by, ptx_i64(g, 1)), TM), t->M));
  two_ways(g, and2(g, whole, ptx_rows_aligned(g, &m->a, t->es, 16)), pack_a_body, t, a_image(t, by, bx));
  LLVMBuildRetVoid(g->b);
  LLVMPositionBuilderAtEnd(g->b, join);
  LLVMValueRef nt = LLVMBuildSub(g->b, by, t->mt, "");
  whole = and2(g, k_whole, at_most(g, ptx_mul_c(g, ptx_add(g, nt, ptx_i64(g, 1)), TN), t->N));
  two_ways(g, and2(g, whole, ptx_rows_aligned(g, &m->b, t->es, t->tf32 ? 16 : 4)), pack_b_body, t,
           b_image(t, nt, bx));
  LLVMBuildRetVoid(g->b);
}

/* ---- the product ------------------------------------------------------ */

typedef struct {
  tc_gen *t;
  LLVMValueRef bars;           /* shared i64[2 * STAGES]: full, then empty */
  LLVMValueRef tiles;          /* dynamic shared memory */
  LLVMTypeRef acc_ty;
  LLVMValueRef acc[2];         /* allocas: columns 0-127 and 128-255 */
  LLVMValueRef aligned4;       /* C's (and the bias's) elements 4-byte aligned */
  unsigned elem_align;         /* what element moves may assume */
} tc_main;

static LLVMValueRef shared32(ptx_gen *g, LLVMValueRef p, LLVMValueRef byte_off) {
  LLVMValueRef a = LLVMBuildPtrToInt(g->b, p, g->i32, "");
  return byte_off ? LLVMBuildAdd(g->b, a, ptx_low32(g, byte_off), "") : a;
}

static LLVMValueRef bar(tc_main *c, bool empty, LLVMValueRef stage) {
  ptx_gen *g = c->t->g;
  LLVMValueRef slot = empty ? ptx_add(g, stage, ptx_i64(g, STAGES)) : stage;
  return shared32(g, c->bars, ptx_mul_c(g, slot, 8));
}

static void asm_args(ptx_gen *g, const char *text, const char *cons, LLVMValueRef *args, unsigned n) {
  ptx_asm(g, LLVMVoidTypeInContext(g->ctx), text, cons, args, n, true);
}

/* Spins until the phase of parity `parity` of mbarrier at (shared) addr
 * completed; the labels are local to the braces. */
static void bar_wait(ptx_gen *g, LLVMValueRef addr, LLVMValueRef parity) {
  LLVMValueRef args[2] = {addr, ptx_low32(g, parity)};
  asm_args(g,
           "{\n.reg .pred done;\nwait:\nmbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n"
           "@!done bra wait;\n}",
           "r,r,~{memory}", args, 2);
}

static void producer(tc_main *c) {
  tc_gen *t = c->t;
  ptx_gen *g = t->g;
  LLVMValueRef mt = ptx_sreg(g, "ctaid.y"), nt = ptx_sreg(g, "ctaid.x");
  ptx_loop k;
  ptx_loop_begin(g, &k, ptx_i64(g, 0), t->kt, ptx_i64(g, 1));
  LLVMValueRef s = LLVMBuildURem(g->b, k.iv, ptx_i64(g, STAGES), "");
  LLVMValueRef round = LLVMBuildUDiv(g->b, k.iv, ptx_i64(g, STAGES), "");
  LLVMBasicBlockRef join = ptx_if_begin(g, at_most(g, ptx_i64(g, STAGES), k.iv));
  /* the consumers released this stage's use round - 1 */
  bar_wait(g, bar(c, true, s), LLVMBuildAnd(g->b, ptx_add(g, round, ptx_i64(g, 1)), ptx_i64(g, 1), ""));
  ptx_if_end(g, join);
  LLVMValueRef full = bar(c, false, s);
  LLVMValueRef expect[2] = {full, i32c(g, STAGE_BYTES)};
  asm_args(g, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r,~{memory}", expect, 2);
  LLVMValueRef base = ptx_mul_c(g, s, STAGE_BYTES);
  LLVMValueRef copies[2][3] = {
    {shared32(g, c->tiles, base), scratch_at(t, a_image(t, mt, k.iv)), i32c(g, A_BYTES)},
    {shared32(g, c->tiles, ptx_add(g, base, ptx_i64(g, A_BYTES))), scratch_at(t, b_image(t, nt, k.iv)),
     i32c(g, B_BYTES)}};
  for (unsigned i = 0; i < 2; i++) {
    LLVMValueRef args[4] = {copies[i][0], copies[i][1], copies[i][2], full};
    asm_args(g, "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1], $2, [$3];",
             "r,l,r,r,~{memory}", args, 4);
  }
  ptx_loop_end(g, &k);
}

/* Accumulator register j*4 + h*2 + e of set s is C row 16 (warp % 4) +
 * lane / 4 + 8 h of the warpgroup's 64, column 128 s + 8 j + 2 (lane %
 * 4) + e: element (r, e) of pair p = (j, h) at row_of + 8 h, col_of +
 * 128 s + 8 j + e.  Whole tiles of a C (and bias) with 8-byte aligned
 * contiguous rows move pairs; others move the elements inside C one at a
 * time. */
static void pair_origin(tc_main *c, LLVMValueRef w, LLVMValueRef *row, LLVMValueRef *col) {
  tc_gen *t = c->t;
  ptx_gen *g = t->g;
  LLVMValueRef warp = LLVMBuildUDiv(g->b, t->tid, ptx_i64(g, 32), "");
  LLVMValueRef lane = LLVMBuildURem(g->b, t->tid, ptx_i64(g, 32), "");
  *row = ptx_add(g, ptx_add(g, ptx_mul_c(g, ptx_sreg(g, "ctaid.y"), TM), ptx_mul_c(g, w, 64)),
                 ptx_add(g, ptx_mul_c(g, LLVMBuildURem(g->b, warp, ptx_i64(g, 4), ""), 16),
                         LLVMBuildUDiv(g->b, lane, ptx_i64(g, 4), "")));
  *col = ptx_add(g, ptx_mul_c(g, ptx_sreg(g, "ctaid.x"), TN),
                 ptx_mul_c(g, LLVMBuildURem(g->b, lane, ptx_i64(g, 4), ""), 2));
  /* opaque copies: the start's loads and the stores would otherwise share
   * 64 addresses, live (and spilled) across the whole k loop */
  LLVMValueRef v[2] = {*row, *col};
  for (unsigned i = 0; i < 2; i++) v[i] = ptx_asm(g, g->i64, "mov.b64 $0, $1;", "=l,l", &v[i], 1, true);
  *row = v[0], *col = v[1];
}

static void pair_at(unsigned set, unsigned pair, tc_main *c, LLVMValueRef row0, LLVMValueRef col0,
                    LLVMValueRef *row, LLVMValueRef *col) {
  ptx_gen *g = c->t->g;
  unsigned j = pair / 2, h = pair % 2;
  *row = ptx_add(g, row0, ptx_i64(g, 8 * h));
  *col = ptx_add(g, col0, ptx_i64(g, 128 * set + 8 * j));
}

/* With accumulate, the accumulators start from the old sums (C, or the
 * bias): exact for int8, where i32 sums wrap in any order; one rounding
 * order of several for tf32.  64 loads per thread at once, before the
 * first k-tile lands, instead of load-then-store at the end. */
static void load_start(tc_main *c, LLVMValueRef w, bool fast) {
  tc_gen *t = c->t;
  ptx_gen *g = t->g;
  const kn_layout *start = kn_matmul_start(&g->d->matmul);
  LLVMTypeRef elem = t->tf32 ? g->f32 : g->i32;
  LLVMValueRef row0, col0;
  pair_origin(c, w, &row0, &col0);
  for (unsigned set = 0; set < 2; set++) {
    LLVMValueRef acc = LLVMGetUndef(c->acc_ty);
    for (unsigned pair = 0; pair < PTX_WGMMA_REGS / 2; pair++) {
      LLVMValueRef row, col, v[2];
      pair_at(set, pair, c, row0, col0, &row, &col);
      if (fast) {
        LLVMValueRef x = ptx_load(g, LLVMVectorType(elem, 2), ptx_element_at(g, start, 4, NULL, row, col), 8);
        for (unsigned e = 0; e < 2; e++) v[e] = LLVMBuildExtractElement(g->b, x, i32c(g, e), "");
      } else {
        for (unsigned e = 0; e < 2; e++)
          v[e] = element_or_zero(g, start, 4, elem, c->elem_align, row, ptx_add(g, col, ptx_i64(g, e)), t->M,
                                 t->N);
      }
      for (unsigned e = 0; e < 2; e++) acc = LLVMBuildInsertValue(g->b, acc, v[e], 2 * pair + e, "");
    }
    LLVMBuildStore(g->b, acc, c->acc[set]);
  }
}

static void store_c(tc_main *c, LLVMValueRef w, bool fast) {
  tc_gen *t = c->t;
  ptx_gen *g = t->g;
  const kn_matmul *m = &g->d->matmul;
  LLVMTypeRef v2 = LLVMVectorType(t->tf32 ? g->f32 : g->i32, 2);
  LLVMValueRef row0, col0;
  pair_origin(c, w, &row0, &col0);
  for (unsigned set = 0; set < 2; set++) {
    LLVMValueRef acc = LLVMBuildLoad2(g->b, c->acc_ty, c->acc[set], "");
    for (unsigned pair = 0; pair < PTX_WGMMA_REGS / 2; pair++) {
      LLVMValueRef row, col;
      pair_at(set, pair, c, row0, col0, &row, &col);
      if (fast) {
        LLVMValueRef v = LLVMGetUndef(v2);
        for (unsigned e = 0; e < 2; e++)
          v = LLVMBuildInsertElement(g->b, v, LLVMBuildExtractValue(g->b, acc, 2 * pair + e, ""), i32c(g, e), "");
        ptx_store(g, v, ptx_element_at(g, &m->c, 4, NULL, row, col), 8);
        continue;
      }
      for (unsigned e = 0; e < 2; e++) {
        LLVMValueRef cc = ptx_add(g, col, ptx_i64(g, e));
        LLVMBasicBlockRef join = ptx_if_begin(g, and2(g, ptx_below(g, row, t->M), ptx_below(g, cc, t->N)));
        ptx_store(g, LLVMBuildExtractValue(g->b, acc, 2 * pair + e, ""), ptx_element_at(g, &m->c, 4, NULL, row, cc),
                  c->elem_align);
        ptx_if_end(g, join);
      }
    }
  }
}

/* Consumer warpgroup w (0, 1): rows 64 w .. 64 w + 63 of the tile, from
 * its start to its stores; fast: whole tile, aligned C (and bias). */
static void consume(void *ctx, LLVMValueRef w, bool fast) {
  tc_main *c = ctx;
  tc_gen *t = c->t;
  ptx_gen *g = t->g;
  if (g->d->matmul.accumulate)
    load_start(c, w, fast);
  else
    for (unsigned h = 0; h < 2; h++) LLVMBuildStore(g->b, LLVMConstNull(c->acc_ty), c->acc[h]);
  LLVMValueRef da = ptx_wgmma_desc(g, c->tiles, ptx_mul_c(g, w, 8 * ROW_STEP), A_KSTEP, ROW_STEP);
  LLVMValueRef db[2];
  for (unsigned h = 0; h < 2; h++)
    db[h] = ptx_wgmma_desc(g, c->tiles, ptx_i64(g, A_BYTES + h * 16 * ROW_STEP), B_KSTEP, ROW_STEP);
  LLVMValueRef lane0 = LLVMBuildICmp(g->b, LLVMIntEQ, LLVMBuildURem(g->b, t->tid, ptx_i64(g, 32), ""),
                                     ptx_i64(g, 0), "");
  ptx_loop k;
  ptx_loop_begin(g, &k, ptx_i64(g, 0), t->kt, ptx_i64(g, 1));
  LLVMValueRef s = LLVMBuildURem(g->b, k.iv, ptx_i64(g, STAGES), "");
  LLVMValueRef round = LLVMBuildUDiv(g->b, k.iv, ptx_i64(g, STAGES), "");
  bar_wait(g, bar(c, false, s), LLVMBuildAnd(g->b, round, ptx_i64(g, 1), ""));
  LLVMValueRef shift = ptx_mul_c(g, s, STAGE_BYTES / 16);
  ptx_asm_void(g, "wgmma.fence.sync.aligned;");
  LLVMValueRef acc[2];
  for (unsigned h = 0; h < 2; h++) acc[h] = LLVMBuildLoad2(g->b, c->acc_ty, c->acc[h], "");
  for (unsigned q = 0; q < KB / 32; q++) {
    LLVMValueRef a = ptx_add(g, ptx_add(g, da, shift), ptx_i64(g, q * 2 * A_KSTEP / 16));
    for (unsigned h = 0; h < 2; h++)
      acc[h] = ptx_wgmma_op(g, c->acc_ty, acc[h], a,
                            ptx_add(g, ptx_add(g, db[h], shift), ptx_i64(g, q * 2 * B_KSTEP / 16)));
  }
  for (unsigned h = 0; h < 2; h++) LLVMBuildStore(g->b, acc[h], c->acc[h]);
  ptx_asm_void(g, "wgmma.commit_group.sync.aligned;");
  ptx_asm_void(g, "wgmma.wait_group.sync.aligned 1;");
  /* k-tile k - 1's products are done: its stage may be refilled */
  LLVMValueRef prev = LLVMBuildURem(g->b, ptx_add(g, k.iv, ptx_i64(g, STAGES - 1)), ptx_i64(g, STAGES), "");
  LLVMValueRef release = and2(g, lane0, LLVMBuildICmp(g->b, LLVMIntSGT, k.iv, ptx_i64(g, 0), ""));
  LLVMBasicBlockRef join = ptx_if_begin(g, release);
  LLVMValueRef arg = bar(c, true, prev);
  asm_args(g, "{\n.reg .b64 state;\nmbarrier.arrive.shared::cta.b64 state, [$0];\n}", "r,~{memory}", &arg, 1);
  ptx_if_end(g, join);
  ptx_loop_end(g, &k);
  for (unsigned h = 0; h < 2; h++) {
    LLVMValueRef v = LLVMBuildLoad2(g->b, c->acc_ty, c->acc[h], "");
    LLVMBuildStore(g->b, ptx_wgmma_wait(g, c->acc_ty, v, 0), c->acc[h]);
  }
  store_c(c, w, fast);
}

/* Edge tiles and unpaired layouts: elements 4-byte aligned (as C code
 * has them) or not, each a copy of its own (byte moves need registers
 * the aligned copy should not pay for). */
static void consume_elements(void *ctx, LLVMValueRef w, bool aligned4) {
  tc_main *c = ctx;
  c->elem_align = aligned4 ? 4 : 1;
  consume(c, w, false);
}

static void consume_any(void *ctx, LLVMValueRef w, bool fast) {
  tc_main *c = ctx;
  if (fast)
    consume(c, w, true);
  else
    two_ways(c->t->g, c->aligned4, consume_elements, c, w);
}

static void build_main(tc_gen *t) {
  ptx_gen *g = t->g;
  const kn_matmul *m = &g->d->matmul;
  entry_block(g, TWASM_TC_THREADS);
  ptx_annotate(g, "minctasm", 1);
  tc_main c = {.t = t};
  c.bars = ptx_shared_array(g, g->i64, 2 * STAGES, "tc_bars");
  LLVMTypeRef dyn_ty = LLVMArrayType2(g->i8, 0);
  c.tiles = LLVMAddGlobalInAddressSpace(g->mod, dyn_ty, "tc_stages", PTX_ADDRSPACE_SHARED);
  LLVMSetLinkage(c.tiles, LLVMExternalLinkage);
  LLVMSetAlignment(c.tiles, 128);
  LLVMTypeRef fields[PTX_WGMMA_REGS];
  for (unsigned r = 0; r < PTX_WGMMA_REGS; r++) fields[r] = t->tf32 ? g->f32 : g->i32;
  c.acc_ty = LLVMStructTypeInContext(g->ctx, fields, PTX_WGMMA_REGS, false);
  for (unsigned h = 0; h < 2; h++) c.acc[h] = ptx_var(g, c.acc_ty, NULL);
  sizes(t);
  t->tid = ptx_sreg(g, "tid.x");
  LLVMValueRef wg = LLVMBuildUDiv(g->b, t->tid, ptx_i64(g, 128), "");
  LLVMBasicBlockRef join = ptx_if_begin(g, LLVMBuildICmp(g->b, LLVMIntEQ, t->tid, ptx_i64(g, 0), ""));
  for (unsigned s = 0; s < 2 * STAGES; s++) {
    LLVMValueRef args[2] = {shared32(g, c.bars, ptx_i64(g, 8 * s)), i32c(g, s < STAGES ? 1 : CONSUMER_WARPS)};
    asm_args(g, "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r,~{memory}", args, 2);
  }
  ptx_asm_void(g, "fence.mbarrier_init.release.cluster;");
  ptx_if_end(g, join);
  ptx_barrier(g);
  char text[64];
  LLVMBasicBlockRef consumers = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "consumers");
  LLVMBasicBlockRef prod = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "producer");
  LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, wg, ptx_i64(g, 0), ""), prod, consumers);
  LLVMPositionBuilderAtEnd(g->b, prod);
  snprintf(text, sizeof text, "setmaxnreg.dec.sync.aligned.u32 %d;", PRODUCER_REGS);
  ptx_asm_void(g, text);
  join = ptx_if_begin(g, LLVMBuildICmp(g->b, LLVMIntEQ, t->tid, ptx_i64(g, 0), ""));
  producer(&c);
  ptx_if_end(g, join);
  LLVMBuildRetVoid(g->b);
  LLVMPositionBuilderAtEnd(g->b, consumers);
  snprintf(text, sizeof text, "setmaxnreg.inc.sync.aligned.u32 %d;", CONSUMER_REGS);
  ptx_asm_void(g, text);
  LLVMValueRef w = LLVMBuildSub(g->b, wg, ptx_i64(g, 1), "");
  LLVMValueRef mt = ptx_sreg(g, "ctaid.y"), nt = ptx_sreg(g, "ctaid.x");
  LLVMValueRef whole = and2(g, at_most(g, ptx_mul_c(g, ptx_add(g, mt, ptx_i64(g, 1)), TM), t->M),
                            at_most(g, ptx_mul_c(g, ptx_add(g, nt, ptx_i64(g, 1)), TN), t->N));
  LLVMValueRef aligned = ptx_rows_aligned(g, &m->c, 4, 8);
  if (m->accumulate && m->has_start) aligned = and2(g, aligned, ptx_rows_aligned(g, &m->start, 4, 8));
  /* two whole copies of the consumer: accumulators that two paths set
   * before the loop would meet in a phi, and ptxas then serialises every
   * wgmma (C7515) */
  c.aligned4 = ptx_layout_aligned(g, &m->c, 4);
  if (m->accumulate && m->has_start) c.aligned4 = and2(g, c.aligned4, ptx_layout_aligned(g, &m->start, 4));
  two_ways(g, and2(g, whole, aligned), consume_any, &c, w);
  LLVMBuildRetVoid(g->b);
}

bool ptx_tc_build(ptx_gen *g) {
  size_t len;
  const char *name = LLVMGetValueName2(g->fn, &len);
  const kn_matmul *m = &g->d->matmul;
  tc_gen t = {.g = g, .tf32 = m->type == KN_MM_F32};
  t.es = t.tf32 ? 4 : 1;
  t.ke = KB / t.es;
  char entry[300];
  snprintf(entry, sizeof entry, "%.*s_pack", (int)len, name);
  ptx_gen_entry(g, entry, false, &t.scratch);
  build_pack(&t);
  snprintf(entry, sizeof entry, "%.*s_tc", (int)len, name);
  ptx_gen_entry(g, entry, false, &t.scratch);
  build_main(&t);
  return true;
}
