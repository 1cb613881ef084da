/* ptx_wgmma.c: the Hopper (sm_90a) tensor-core matmul: wgmma.mma_async
 * issued by warpgroups, A and B read by the tensor cores from shared
 * memory through matrix descriptors, C in registers.  int8: m64n128k32
 * s8/u8 with s32 accumulation and no .satfinite (wraps like Wasm i32, as
 * mma.sync does); f32: m64n128k8 tf32 (only with --tensor-cores=tf32),
 * inputs rounded with cvt.rna as on the wmma path, so ptx.h's bound holds.
 *
 * A block (the wmma kernel's 256 threads: 2 warpgroups) owns a 128x128
 * tile of C; warpgroup w computes its rows 64w..64w+63.  tf32 and s8/u8
 * wgmma want both operands K-major in shared memory, while B[k][n] is
 * n-contiguous: the copies go through registers (global loads one k-tile
 * ahead, then shared stores), which transposes B (and rounds tf32) on the
 * way at no extra shared-memory traffic.  Shared tiles are 128 rows x 64
 * bytes of k in the no-swizzle core-matrix layout (8 rows x 16 bytes, 128
 * contiguous bytes each), 3 buffers: k-tile t is multiplied from buffer
 * t % 3 while t + 1 is stored into the next one, one barrier per k-tile.
 *
 * The fast body needs M, N multiples of 128, K of a k-tile, contiguous
 * 16-byte aligned rows of A and B and 8-byte aligned rows of C; anything
 * else takes the wmma kernel's body (ptx_wmma.c) inside the same entry,
 * decided at run time the same way by every thread, so the choice is
 * always safe.  Both bodies share one static shared-memory pool. */
#include <stdio.h>
#include <string.h>

#include "ptx_internal.h"

/* The layout, the k-tile and the occupancy were chosen by measurement on
 * the H100 (tests/gpu/wmma/wmma_mm.c wgmma mode): the 64- and 128-byte
 * swizzled layouts, core matrices grouped by rows, and a 128-byte k-tile
 * in 96 KiB of dynamic shared memory (2 blocks per SM with spills, or 1
 * without) all ran no faster. */
enum {
  TILE = 128,              /* rows and columns of C per block */
  KB = 64,                 /* bytes of k per k-tile (64 int8, 16 tf32) */
  THREADS = 256,
  BUFFERS = 3,
  K_STEP = TILE * 16,      /* bytes between neighbouring core matrices along k */
  ROW_STEP = 128,          /* ... and along rows */
  OPERAND_BYTES = TILE * KB,
  BUFFER_BYTES = 2 * OPERAND_BYTES,
  POOL_BYTES = 48 * 1024,  /* static shared memory: the wmma body's 48 KiB, our buffers */
  NREGS = PTX_WGMMA_REGS,  /* accumulator registers of m64n128 per thread */
  A_CHUNKS = TILE * KB / 16 / THREADS,  /* 16-byte chunks of A per thread */
  B_UNITS = KB / 64,       /* B pieces per thread: 4 k x 2 n (tf32), 8 k x 4 n (int8) */
  NSTAGE = A_CHUNKS + 8 * B_UNITS,
};

_Static_assert(BUFFERS * BUFFER_BYTES <= POOL_BYTES, "the buffers fit the pool");

typedef struct {
  ptx_gen *g;
  bool tf32;
  unsigned esize;          /* bytes per A/B element */
  LLVMTypeRef acc_elem, acc_ty; /* i32 or f32; struct of NREGS */
  LLVMValueRef pool;       /* the shared pool */
  LLVMValueRef tid, lane, warp, wg;
  LLVMValueRef acc;        /* alloca of acc_ty */
  LLVMValueRef stage[NSTAGE];   /* variables: registers of the next k-tile (A, then B) */
  LLVMValueRef desc0;      /* i64 descriptor of buffer 0, warpgroup's A rows */
  LLVMValueRef bdesc0;
} wg_gen;

static LLVMValueRef i32c(ptx_gen *g, uint32_t v) { return LLVMConstInt(g->i32, v, false); }

static LLVMValueRef is_mod0(ptx_gen *g, LLVMValueRef v, int64_t m) {
  LLVMValueRef r = LLVMBuildSRem(g->b, v, ptx_i64(g, m), "");
  return LLVMBuildICmp(g->b, LLVMIntEQ, r, ptx_i64(g, 0), "");
}

static LLVMValueRef and3(ptx_gen *g, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  return LLVMBuildAnd(g->b, LLVMBuildAnd(g->b, a, b, ""), c, "");
}

/* Byte offset of element (row, col) of layout l (32-bit wrapping, exact
 * for every element a Wasm32 memory holds, as in ptx_wmma.c). */
static LLVMValueRef offset_of(wg_gen *w, const kn_layout *l, LLVMValueRef row, LLVMValueRef col,
                              unsigned esize) {
  ptx_gen *g = w->g;
  LLVMValueRef r = LLVMBuildMul(g->b, ptx_low32(g, row), ptx_low32(g, ptx_size(g, l->row_stride)), "");
  LLVMValueRef off = LLVMBuildMul(g->b, LLVMBuildAdd(g->b, r, ptx_low32(g, col), ""), i32c(g, esize), "");
  off = LLVMBuildAdd(g->b, ptx_low32(g, ptx_size(g, l->offset)), off, "");
  return LLVMBuildZExt(g->b, off, g->i64, "");
}

/* Whether the fast body applies (the same answer in every thread). */
static LLVMValueRef eligible(wg_gen *w) {
  ptx_gen *g = w->g;
  const kn_matmul *m = &g->d->matmul;
  LLVMValueRef M = ptx_size(g, m->m), N = ptx_size(g, m->n), K = ptx_size(g, m->k);
  LLVMValueRef pos = LLVMBuildICmp(g->b, LLVMIntSGT, K, ptx_i64(g, 0), "");
  pos = and3(g, pos, LLVMBuildICmp(g->b, LLVMIntSGT, M, ptx_i64(g, 0), ""),
             LLVMBuildICmp(g->b, LLVMIntSGT, N, ptx_i64(g, 0), ""));
  LLVMValueRef shape = and3(g, is_mod0(g, M, TILE), is_mod0(g, N, TILE), is_mod0(g, K, KB / w->esize));
  LLVMValueRef lay = and3(g, ptx_rows_aligned(g, &m->a, w->esize, 16), ptx_rows_aligned(g, &m->b, w->esize, 16),
                          ptx_rows_aligned(g, &m->c, 4, 8));
  /* mixed signs and bias starts: only the packed product (ptx_tc.c) was
   * checked on them; here the wmma body takes them */
  bool other = m->a_signed != m->b_signed || (m->accumulate && m->has_start);
  return other ? LLVMConstInt(g->i1, 0, false) : and3(g, pos, shape, lay);
}

/* Shared byte offset of 16-byte chunk c (k bytes 16c..16c+15) of row r
 * of an operand tile: core matrices of 8 rows x 16 bytes, 128 contiguous
 * bytes each; the 16 row groups of one chunk column follow each other
 * (ROW_STEP), then the next chunk column (K_STEP). */
static LLVMValueRef tile_offset(wg_gen *w, LLVMValueRef r, LLVMValueRef c) {
  ptx_gen *g = w->g;
  LLVMValueRef rg = LLVMBuildUDiv(g->b, r, ptx_i64(g, 8), "");
  LLVMValueRef rl = LLVMBuildURem(g->b, r, ptx_i64(g, 8), "");
  return ptx_add(g, ptx_add(g, ptx_mul_c(g, c, K_STEP), ptx_mul_c(g, rg, ROW_STEP)), ptx_mul_c(g, rl, 16));
}

static LLVMValueRef pool_at(wg_gen *w, LLVMValueRef off) {
  return LLVMBuildGEP2(w->g->b, w->g->i8, w->pool, &off, 1, "");
}

static LLVMValueRef global_load(ptx_gen *g, LLVMTypeRef t, LLVMValueRef off, unsigned align) {
  return ptx_load(g, t, ptx_global_at(g, off), align);
}

/* A's chunks of this thread: q = tid + 256 i, row (q / (KB / 2)) * 8 +
 * q % 8, chunk (q / 8) % (KB / 16), so that 8 consecutive lanes fill one
 * core matrix (conflict-free 16-byte stores) and a warp reads whole 32-byte
 * sectors of 8 rows. */
static void a_place(wg_gen *w, unsigned i, LLVMValueRef *row, LLVMValueRef *chunk) {
  ptx_gen *g = w->g;
  LLVMValueRef q = ptx_add(g, w->tid, ptx_i64(g, (int64_t)i * THREADS));
  *row = ptx_add(g, ptx_mul_c(g, LLVMBuildUDiv(g->b, q, ptx_i64(g, KB / 2), ""), 8),
                 LLVMBuildURem(g->b, q, ptx_i64(g, 8), ""));
  *chunk = LLVMBuildURem(g->b, LLVMBuildUDiv(g->b, q, ptx_i64(g, 8), ""), ptx_i64(g, KB / 16), "");
}

/* B piece v of this thread, u = tid + 256 v.  tf32: 4 k x 2 n, k group
 * u / 64 (chunk of the K-major row), columns 2 (u % 64).  int8: 8 k x 4 n,
 * k bytes 16 (u / 64) + 8 (u % 2) (chunk u / 64, half u % 2), column quad
 * 16 ((u / 32) % 2) + (u % 32) / 2. */
typedef struct {
  LLVMValueRef chunk, col, half;
} wg_piece;

static wg_piece b_place(wg_gen *w, unsigned v) {
  ptx_gen *g = w->g;
  LLVMValueRef u = ptx_add(g, w->tid, ptx_i64(g, (int64_t)v * THREADS));
  wg_piece p;
  p.chunk = LLVMBuildUDiv(g->b, u, ptx_i64(g, 64), "");
  if (w->tf32) {
    p.col = ptx_mul_c(g, LLVMBuildURem(g->b, u, ptx_i64(g, 64), ""), 2);
    p.half = NULL;
    return p;
  }
  LLVMValueRef lane = LLVMBuildURem(g->b, u, ptx_i64(g, 32), "");
  p.half = LLVMBuildURem(g->b, u, ptx_i64(g, 2), "");
  LLVMValueRef quad = ptx_add(g, ptx_mul_c(g, LLVMBuildURem(g->b, LLVMBuildUDiv(g->b, u, ptx_i64(g, 32), ""),
                                                             ptx_i64(g, 2), ""), 16),
                              LLVMBuildUDiv(g->b, lane, ptx_i64(g, 2), ""));
  p.col = ptx_mul_c(g, quad, 4);
  return p;
}

/* The stage variables: entry-block allocas, typed at first use. */
static void stage_put(wg_gen *w, unsigned i, LLVMValueRef v) {
  if (!w->stage[i]) w->stage[i] = ptx_var(w->g, LLVMTypeOf(v), NULL);
  LLVMBuildStore(w->g->b, v, w->stage[i]);
}

static LLVMValueRef stage_get(wg_gen *w, unsigned i) {
  return LLVMBuildLoad2(w->g->b, LLVMGetAllocatedType(w->stage[i]), w->stage[i], "");
}

/* Loads k-tile k0 of block tile (i0, j0) into the stage variables. */
static void load_tile(wg_gen *w, LLVMValueRef i0, LLVMValueRef j0, LLVMValueRef k0) {
  ptx_gen *g = w->g;
  const kn_matmul *m = &g->d->matmul;
  LLVMTypeRef v4 = LLVMVectorType(g->i32, 4), v2 = LLVMVectorType(g->f32, 2);
  for (unsigned i = 0; i < A_CHUNKS; i++) {
    LLVMValueRef row, chunk;
    a_place(w, i, &row, &chunk);
    LLVMValueRef col = ptx_add(g, k0, ptx_mul_c(g, chunk, 16 / w->esize));
    stage_put(w, i, global_load(g, v4, offset_of(w, &m->a, ptx_add(g, i0, row), col, w->esize), 16));
  }
  for (unsigned v = 0; v < B_UNITS; v++) {
    wg_piece p = b_place(w, v);
    unsigned at = A_CHUNKS + 8 * v;
    LLVMValueRef col = ptx_add(g, j0, p.col);
    if (w->tf32) {
      LLVMValueRef k = ptx_add(g, k0, ptx_mul_c(g, p.chunk, 4));
      for (unsigned j = 0; j < 4; j++) {
        LLVMValueRef x = global_load(g, v2, offset_of(w, &m->b, ptx_add(g, k, ptx_i64(g, j)), col, 4), 8);
        for (unsigned e = 0; e < 2; e++)
          stage_put(w, at + j * 2 + e, LLVMBuildExtractElement(g->b, x, i32c(g, e), ""));
      }
    } else {
      LLVMValueRef k = ptx_add(g, ptx_add(g, k0, ptx_mul_c(g, p.chunk, 16)), ptx_mul_c(g, p.half, 8));
      for (unsigned j = 0; j < 8; j++)
        stage_put(w, at + j, global_load(g, g->i32, offset_of(w, &m->b, ptx_add(g, k, ptx_i64(g, j)), col, 1), 4));
    }
  }
}

/* tf32 piece: column col + e is 16 bytes (4 k, rounded) of K-major row
 * col + e, chunk p.chunk; lanes of odd column octets store their second
 * column first, so 8 lanes hit 8 distinct 16-byte bank groups. */
static void store_b_tf32(wg_gen *w, LLVMValueRef b_base, wg_piece p, LLVMValueRef *b) {
  ptx_gen *g = w->g;
  LLVMTypeRef v4 = LLVMVectorType(g->i32, 4);
  LLVMValueRef odd = LLVMBuildICmp(g->b, LLVMIntNE, LLVMBuildAnd(g->b, p.col, ptx_i64(g, 8), ""),
                                   ptx_i64(g, 0), "");
  LLVMValueRef col[2];
  for (unsigned e = 0; e < 2; e++) {
    LLVMValueRef r = LLVMGetUndef(v4);
    for (unsigned j = 0; j < 4; j++)
      r = LLVMBuildInsertElement(g->b, r, ptx_round_tf32(g, b[j * 2 + e]), i32c(g, j), "");
    col[e] = r;
  }
  for (unsigned s = 0; s < 2; s++) {
    LLVMValueRef e = LLVMBuildSelect(g->b, odd, ptx_i64(g, 1 - s), ptx_i64(g, s), "");
    LLVMValueRef v = LLVMBuildSelect(g->b, odd, col[1 - s], col[s], "");
    ptx_store(g, v, pool_at(w, ptx_add(g, b_base, tile_offset(w, ptx_add(g, p.col, e), p.chunk))), 16);
  }
}

/* int8 piece: b holds 8 rows (k) of 4 columns as words; column c becomes
 * 8 bytes of K-major row col + c (byte transposes by prmt).  Store j
 * writes column (j + lane / 4) % 4, so 16 lanes hit 16 distinct 8-byte
 * bank pairs. */
static void store_b_i8(wg_gen *w, LLVMValueRef b_base, wg_piece p, LLVMValueRef *b) {
  ptx_gen *g = w->g;
  LLVMTypeRef v2 = LLVMVectorType(g->i32, 2);
  LLVMValueRef rot = LLVMBuildUDiv(g->b, w->lane, ptx_i64(g, 4), "");
  for (unsigned j = 0; j < 4; j++) {
    LLVMValueRef c = LLVMBuildURem(g->b, ptx_add(g, rot, ptx_i64(g, j)), ptx_i64(g, 4), "");
    LLVMValueRef c32 = ptx_low32(g, c);
    /* selector: byte c of the first word, byte c of the second */
    LLVMValueRef sel = LLVMBuildOr(g->b, c32, LLVMBuildShl(g->b, LLVMBuildAdd(g->b, c32, i32c(g, 4), ""),
                                                           i32c(g, 4), ""), "");
    LLVMValueRef words = LLVMGetUndef(v2);
    for (unsigned half = 0; half < 2; half++) {
      LLVMValueRef *r = &b[half * 4];
      LLVMValueRef lo = ptx_prmt(g, r[0], r[1], sel), hi = ptx_prmt(g, r[2], r[3], sel);
      words = LLVMBuildInsertElement(g->b, words, ptx_prmt(g, lo, hi, i32c(g, 0x5410)), i32c(g, half), "");
    }
    LLVMValueRef off = ptx_add(g, tile_offset(w, ptx_add(g, p.col, c), p.chunk), ptx_mul_c(g, p.half, 8));
    ptx_store(g, words, pool_at(w, ptx_add(g, b_base, off)), 8);
  }
}

/* Stores the stage variables into buffer buf: A as it is (tf32 rounded),
 * B transposed to K-major. */
static void store_tile(wg_gen *w, LLVMValueRef buf) {
  ptx_gen *g = w->g;
  LLVMTypeRef v4f = LLVMVectorType(g->f32, 4);
  LLVMValueRef a_base = ptx_mul_c(g, buf, BUFFER_BYTES);
  LLVMValueRef b_base = ptx_add(g, a_base, ptx_i64(g, OPERAND_BYTES));
  for (unsigned i = 0; i < A_CHUNKS; i++) {
    LLVMValueRef row, chunk;
    a_place(w, i, &row, &chunk);
    LLVMValueRef v = stage_get(w, i);
    if (w->tf32) v = ptx_round_tf32x4(g, LLVMBuildBitCast(g->b, v, v4f, ""));
    ptx_store(g, v, pool_at(w, ptx_add(g, a_base, tile_offset(w, row, chunk))), 16);
  }
  for (unsigned v = 0; v < B_UNITS; v++) {
    wg_piece p = b_place(w, v);
    LLVMValueRef b[8];
    for (unsigned i = 0; i < 8; i++) b[i] = stage_get(w, A_CHUNKS + 8 * v + i);
    if (w->tf32) store_b_tf32(w, b_base, p, b);
    else store_b_i8(w, b_base, p, b);
  }
}

/* Descriptor of our tiles: k chunks K_STEP apart (leading), row groups
 * ROW_STEP apart (stride); measured: not the other way round. */
static LLVMValueRef descriptor(wg_gen *w, LLVMValueRef byte_off) {
  return ptx_wgmma_desc(w->g, w->pool, byte_off, K_STEP, ROW_STEP);
}

/* The warpgroup's 64x128 of C += k-tile in buffer buf: KB / 32 wgmma. */
static void multiply(wg_gen *w, LLVMValueRef buf) {
  ptx_gen *g = w->g;
  LLVMValueRef shift = LLVMBuildLShr(g->b, ptx_mul_c(g, buf, BUFFER_BYTES), ptx_i64(g, 4), "");
  ptx_asm_void(g, "wgmma.fence.sync.aligned;");
  LLVMValueRef acc = LLVMBuildLoad2(g->b, w->acc_ty, w->acc, "");
  for (unsigned s = 0; s < KB / 32; s++) {
    int64_t step = s * 2 * K_STEP / 16;
    acc = ptx_wgmma_op(g, w->acc_ty, acc, ptx_add(g, ptx_add(g, w->desc0, shift), ptx_i64(g, step)),
                       ptx_add(g, ptx_add(g, w->bdesc0, shift), ptx_i64(g, step)));
  }
  LLVMBuildStore(g->b, acc, w->acc);
  ptx_asm_void(g, "wgmma.commit_group.sync.aligned;");
}

/* Waits for every wgmma of this warpgroup; the accumulators pass through
 * the asm so nothing reads them before. */
static void wait_all(wg_gen *w) {
  ptx_gen *g = w->g;
  LLVMValueRef acc = LLVMBuildLoad2(g->b, w->acc_ty, w->acc, "");
  LLVMBuildStore(g->b, ptx_wgmma_wait(g, w->acc_ty, acc, 0), w->acc);
}

/* Accumulator register j*4 + h*2 + e is C row 16 (warp % 4) + lane / 4 +
 * 8 h of the warpgroup's 64, column 8 j + 2 (lane % 4) + e.  With
 * accumulate, C's old values are loaded STORE_BATCH pairs at a time before
 * any of them is stored (a load after a store to C would wait for it). */
enum { STORE_BATCH = 8 };

static void store_c(wg_gen *w, LLVMValueRef i0, LLVMValueRef j0) {
  ptx_gen *g = w->g;
  const kn_matmul *m = &g->d->matmul;
  LLVMTypeRef v2 = LLVMVectorType(w->acc_elem, 2);
  LLVMValueRef acc = LLVMBuildLoad2(g->b, w->acc_ty, w->acc, "");
  LLVMValueRef row0 = ptx_add(g, ptx_add(g, i0, ptx_mul_c(g, w->wg, 64)),
                              ptx_add(g, ptx_mul_c(g, LLVMBuildURem(g->b, w->warp, ptx_i64(g, 4), ""), 16),
                                      LLVMBuildUDiv(g->b, w->lane, ptx_i64(g, 4), "")));
  LLVMValueRef col0 = ptx_add(g, j0, ptx_mul_c(g, LLVMBuildURem(g->b, w->lane, ptx_i64(g, 4), ""), 2));
  for (unsigned first = 0; first < NREGS / 2; first += STORE_BATCH) {
    LLVMValueRef ptr[STORE_BATCH], old[STORE_BATCH];
    for (unsigned q = 0; q < STORE_BATCH; q++) {
      unsigned j = (first + q) / 2, h = (first + q) % 2;
      LLVMValueRef off = offset_of(w, &m->c, ptx_add(g, row0, ptx_i64(g, 8 * h)),
                                   ptx_add(g, col0, ptx_i64(g, 8 * j)), 4);
      ptr[q] = ptx_global_at(g, off);
      old[q] = m->accumulate ? ptx_load(g, v2, ptr[q], 8) : NULL;
    }
    for (unsigned q = 0; q < STORE_BATCH; q++) {
      unsigned r = (first + q) * 2;  /* = j * 4 + h * 2 */
      LLVMValueRef v = LLVMGetUndef(v2);
      for (unsigned e = 0; e < 2; e++)
        v = LLVMBuildInsertElement(g->b, v, LLVMBuildExtractValue(g->b, acc, r + e, ""), i32c(g, e), "");
      if (old[q]) v = w->tf32 ? LLVMBuildFAdd(g->b, old[q], v, "") : LLVMBuildAdd(g->b, old[q], v, "");
      ptx_store(g, v, ptr[q], 8);
    }
  }
}

/* One 128x128 block tile over all k-tiles.  Iteration t: multiply buffer
 * t % 3, wait until only that group is pending (the multiply of t - 1 is
 * done), store k-tile t + 1 (loaded during iteration t - 1) into buffer
 * (t + 1) % 3, which the multiply of t - 2 read last (done in every
 * warpgroup: each waited before the previous barrier), start the loads of
 * t + 2, fence the generic-proxy stores for the tensor cores, barrier. */
static void block_tile(wg_gen *w, LLVMValueRef i0, LLVMValueRef j0) {
  ptx_gen *g = w->g;
  int64_t ke = KB / w->esize;
  LLVMValueRef tiles = LLVMBuildSDiv(g->b, ptx_size(g, g->d->matmul.k), ptx_i64(g, ke), "");
  LLVMBuildStore(g->b, LLVMConstNull(w->acc_ty), w->acc);
  load_tile(w, i0, j0, ptx_i64(g, 0));
  store_tile(w, ptx_i64(g, 0));
  LLVMBasicBlockRef join = ptx_if_begin(g, ptx_below(g, ptx_i64(g, 1), tiles));
  load_tile(w, i0, j0, ptx_i64(g, ke));
  ptx_if_end(g, join);
  ptx_asm_void(g, "fence.proxy.async.shared::cta;");
  ptx_barrier(g);
  ptx_loop kt;
  ptx_loop_begin(g, &kt, ptx_i64(g, 0), tiles, ptx_i64(g, 1));
  multiply(w, LLVMBuildURem(g->b, kt.iv, ptx_i64(g, BUFFERS), ""));
  ptx_asm_void(g, "wgmma.wait_group.sync.aligned 1;");
  LLVMValueRef next = ptx_add(g, kt.iv, ptx_i64(g, 1));
  join = ptx_if_begin(g, ptx_below(g, next, tiles));
  store_tile(w, LLVMBuildURem(g->b, next, ptx_i64(g, BUFFERS), ""));
  LLVMBasicBlockRef join2 = ptx_if_begin(g, ptx_below(g, ptx_add(g, next, ptx_i64(g, 1)), tiles));
  load_tile(w, i0, j0, ptx_mul_c(g, ptx_add(g, next, ptx_i64(g, 1)), ke));
  ptx_if_end(g, join2);
  ptx_asm_void(g, "fence.proxy.async.shared::cta;");
  ptx_if_end(g, join);
  ptx_barrier(g);
  ptx_loop_end(g, &kt);
  wait_all(w);
  store_c(w, i0, j0);
}

static void all_tiles(wg_gen *w) {
  ptx_gen *g = w->g;
  const kn_matmul *m = &g->d->matmul;
  LLVMValueRef tiles_m = LLVMBuildSDiv(g->b, ptx_size(g, m->m), ptx_i64(g, TILE), "");
  LLVMValueRef tiles_n = LLVMBuildSDiv(g->b, ptx_size(g, m->n), ptx_i64(g, TILE), "");
  ptx_loop ti, tj;
  ptx_loop_begin(g, &ti, ptx_sreg(g, "ctaid.y"), tiles_m, ptx_sreg(g, "nctaid.y"));
  ptx_loop_begin(g, &tj, ptx_sreg(g, "ctaid.x"), tiles_n, ptx_sreg(g, "nctaid.x"));
  block_tile(w, ptx_mul_c(g, ti.iv, TILE), ptx_mul_c(g, tj.iv, TILE));
  /* the next block tile's first stores reuse buffer 0 */
  ptx_barrier(g);
  ptx_loop_end(g, &tj);
  ptx_loop_end(g, &ti);
}

static bool wgmma_build(ptx_gen *g) {
  const kn_matmul *m = &g->d->matmul;
  ptx_wmma_annotate(g);
  wg_gen w = {.g = g, .tf32 = m->type == KN_MM_F32};
  w.esize = w.tf32 ? 4 : 1;
  w.acc_elem = w.tf32 ? g->f32 : g->i32;
  LLVMTypeRef fields[NREGS];
  for (unsigned r = 0; r < NREGS; r++) fields[r] = w.acc_elem;
  w.acc_ty = LLVMStructTypeInContext(g->ctx, fields, NREGS, false);
  w.pool = ptx_shared_array(g, g->i8, POOL_BYTES, "tc_tiles");
  LLVMSetAlignment(w.pool, 128);
  g->shared_pool = w.pool;
  w.tid = ptx_add(g, ptx_mul_c(g, ptx_sreg(g, "tid.y"), 16), ptx_sreg(g, "tid.x"));
  w.warp = LLVMBuildUDiv(g->b, w.tid, ptx_i64(g, 32), "");
  w.lane = LLVMBuildURem(g->b, w.tid, ptx_i64(g, 32), "");
  w.wg = LLVMBuildUDiv(g->b, w.tid, ptx_i64(g, 128), "");
  w.acc = ptx_var(g, w.acc_ty, NULL);
  LLVMValueRef ok = eligible(&w);
  LLVMBasicBlockRef fast = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "wgmma");
  LLVMBasicBlockRef other = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "wmma");
  LLVMBuildCondBr(g->b, ok, fast, other);
  LLVMPositionBuilderAtEnd(g->b, fast);
  w.desc0 = descriptor(&w, ptx_mul_c(g, w.wg, 8 * ROW_STEP));
  w.bdesc0 = descriptor(&w, ptx_i64(g, OPERAND_BYTES));
  all_tiles(&w);
  LLVMBuildRetVoid(g->b);
  LLVMPositionBuilderAtEnd(g->b, other);
  return ptx_wmma_body(g);
}

static bool wgmma_check(const kn_desc *d, tw_diag *diag) { return ptx_kind_wmma.check(d, diag); }

const ptx_kind ptx_kind_wgmma = {wgmma_check, wgmma_build, NULL, false};
