/* ptx_wmma.c: tensor-core matrix multiplication: i8 x i8 -> i32 with
 * mma.sync m16n8k32 (exact: without .satfinite the s32 accumulation wraps
 * modulo 2^32 like Wasm i32, measured on the H100), and f32 through tf32
 * wmma m16n16k8 (inexact, only when asked for).  A block of 8 warps owns a
 * 128x128 tile of C; each warp owns 64x32 of it.  A and B pass through
 * shared memory in k-tiles (64 bytes of k for int8, 16 floats for tf32)
 * with STAGES buffers: cp.async copies the k-tiles STAGES-1 ahead of the one
 * the warps multiply, so global latency hides behind the mma of the tiles
 * in between, one barrier per k-tile.  Where a matrix's rows are not
 * 16-byte aligned (or not contiguous), the body taken copies by element
 * loads and shared stores instead (same pipeline, no overlap).  tf32 tiles
 * are stored fragment by fragment (each 16-row fragment contiguous, every
 * wmma.load address 256-bit aligned); int8 tiles are row-major with
 * XOR-swizzled 16-byte chunks, A read by ldmatrix, B by word loads
 * transposed in registers (see compute_direct).  Edges are zero-filled in
 * shared memory (cp.async with a source size, nothing outside the matrices
 * is read), exact for integer sums.  tf32 inputs are rounded (cvt.rna) as
 * fragments leave shared memory.  Launch bounds hold the registers to 128
 * (2 blocks per SM).  The block shape is the exact kernel's, so archs
 * without tensor cores get that kernel under the same launch (the plan,
 * ptx_plan.c). */
#include <string.h>

#include "ptx_internal.h"

/* k-tile, pipeline depth and blocks per SM (overridable with -D to build
 * variants for timing, see tests/gpu/wmma/wmma_mm.c); 48 KiB of static
 * shared memory bounds STAGES * (A tile + B tile). */
#ifndef WM_I8_BK
#define WM_I8_BK 64
#endif
#ifndef WM_I8_STAGES
#define WM_I8_STAGES 3
#endif
#ifndef WM_TF32_BK
#define WM_TF32_BK 16
#endif
#ifndef WM_TF32_STAGES
#define WM_TF32_STAGES 3
#endif
#ifndef WM_BLOCKS_PER_SM
#define WM_BLOCKS_PER_SM 2
#endif

enum {
  BLOCK_TILE = 128,        /* rows and columns of C per block */
  FRAGS = BLOCK_TILE / 16, /* 16-wide fragments along a block tile */
  THREADS = 256,           /* 8 warps: 2 along M times 4 along N */
  WARP_FRAGS_M = 4,        /* a warp owns 64 rows ... */
  WARP_FRAGS_N = 2,        /* ... and 32 columns of the block tile */
  CHUNK = 16,              /* bytes of one copy (one cp.async) */
  MAX_CHUNKS = 4,          /* copies per thread per matrix per k-tile */
  SMEM_LIMIT = 48 * 1024,  /* static shared memory of a block */
  STAGING = THREADS / 32 * 16 * 16 * 4,  /* epilogue: a 16x16 square per warp */
};

/* What differs between the int8 and tf32 kernels. */
typedef struct {
  unsigned fk;             /* k of one fragment */
  unsigned bk;             /* k of a block tile */
  unsigned stages;         /* shared buffers of A and B tiles */
  unsigned esize;          /* bytes of an A/B element in memory */
  unsigned a_regs, b_regs; /* i32 registers of an A / B fragment */
  const char *load_a, *load_b, *mma, *store;
  bool tf32;
  bool direct;             /* mma.sync m16n8k32 + ldmatrix, not wmma (int8) */
} wm_shape;

static const wm_shape shape_i8 = {
  32, WM_I8_BK, WM_I8_STAGES, 1, 4, 2, NULL, NULL,
  "llvm.nvvm.mma.m16n8k32.row.col.s8", NULL, false, true};
static const wm_shape shape_u8 = {
  32, WM_I8_BK, WM_I8_STAGES, 1, 4, 2, NULL, NULL,
  "llvm.nvvm.mma.m16n8k32.row.col.u8", NULL, false, true};
/* mixed signedness: A's type first */
static const wm_shape shape_u8s8 = {
  32, WM_I8_BK, WM_I8_STAGES, 1, 4, 2, NULL, NULL,
  "llvm.nvvm.mma.m16n8k32.row.col.u8.s8", NULL, false, true};
static const wm_shape shape_s8u8 = {
  32, WM_I8_BK, WM_I8_STAGES, 1, 4, 2, NULL, NULL,
  "llvm.nvvm.mma.m16n8k32.row.col.s8.u8", NULL, false, true};
static const wm_shape shape_tf32 = {
  8, WM_TF32_BK, WM_TF32_STAGES, 4, 4, 4,
  "llvm.nvvm.wmma.m16n16k8.load.a.row.stride.tf32.p3",
  "llvm.nvvm.wmma.m16n16k8.load.b.row.stride.tf32.p3",
  "llvm.nvvm.wmma.m16n16k8.mma.row.row.tf32",
  "llvm.nvvm.wmma.m16n16k8.store.d.row.stride.f32.p3", true, false};

static unsigned tile_bytes(const wm_shape *s) { return BLOCK_TILE * s->bk * s->esize; }
static unsigned stage_bytes(const wm_shape *s) { return 2 * tile_bytes(s); }
static unsigned chunks(const wm_shape *s) { return tile_bytes(s) / CHUNK / THREADS; }

_Static_assert(WM_I8_STAGES >= 2 && WM_TF32_STAGES >= 2, "a pipeline needs 2 buffers");
_Static_assert(WM_I8_STAGES * 2 * BLOCK_TILE * WM_I8_BK <= SMEM_LIMIT, "int8 tiles fit");
_Static_assert(WM_TF32_STAGES * 2 * BLOCK_TILE * WM_TF32_BK * 4 <= SMEM_LIMIT, "tf32 tiles fit");
_Static_assert(BLOCK_TILE * WM_I8_BK / CHUNK / THREADS >= 1 &&
               BLOCK_TILE * WM_I8_BK / CHUNK / THREADS <= MAX_CHUNKS, "int8 copies");
_Static_assert(BLOCK_TILE * WM_TF32_BK * 4 / CHUNK / THREADS >= 1 &&
               BLOCK_TILE * WM_TF32_BK * 4 / CHUNK / THREADS <= MAX_CHUNKS, "tf32 copies");
_Static_assert(WM_I8_BK == 64 && WM_TF32_BK % 8 == 0, "whole fragments along k; int8 swizzles 4 chunks of a row");

typedef struct {
  ptx_gen *g;
  const wm_shape *s;
  LLVMTypeRef v4i32, afrag, bfrag, acc;   /* acc: the 8-value C fragment */
  LLVMValueRef smem;                      /* STAGES x (A tile, B tile); epilogue staging */
  LLVMValueRef tid, warp_m, warp_n, lane, warp;
  bool async;                             /* this body copies with cp.async */
  LLVMValueRef accs[WARP_FRAGS_M * WARP_FRAGS_N];
  LLVMValueRef a_lane[2], b_lane;         /* int8: see direct_lanes */
} wm_gen;

static LLVMTypeRef struct_of(ptx_gen *g, LLVMTypeRef t, unsigned n) {
  LLVMTypeRef fields[8];
  for (unsigned i = 0; i < n; i++) fields[i] = t;
  return LLVMStructTypeInContext(g->ctx, fields, n, false);
}

static LLVMValueRef shared_at(wm_gen *w, LLVMValueRef base, LLVMValueRef byte_offset) {
  return LLVMBuildGEP2(w->g->b, w->g->i8, base, &byte_offset, 1, "");
}


static void void_call(ptx_gen *g, const char *name, LLVMValueRef *args, unsigned n) {
  ptx_call(g, name, LLVMVoidTypeInContext(g->ctx), args, n);
}

/* Byte address of element (row, col) of a matrix in global memory. */
static LLVMValueRef element_at(wm_gen *w, const kn_layout *l, LLVMValueRef row, LLVMValueRef col) {
  return ptx_element_at(w->g, l, w->s->esize, NULL, row, col);
}

/* The chunk of `lanes` elements at (row, col..) into shared memory at dst.
 * In the cp.async body: one cp.async whose source size is the bytes inside
 * the matrix (0 to 16; the rest is zero-filled, nothing outside is read;
 * with none inside it names element (0, 0), which exists whenever a k-tile
 * is copied).  Otherwise element loads with zero padding and a shared
 * store. */
static void copy_chunk(wm_gen *w, const kn_layout *l, LLVMValueRef row, LLVMValueRef row_end,
                       LLVMValueRef col, LLVMValueRef col_end, LLVMValueRef dst) {
  ptx_gen *g = w->g;
  int64_t lanes = CHUNK / w->s->esize;
  LLVMValueRef row_in = ptx_below(g, row, row_end);
  if (w->async) {
    LLVMValueRef left = ptx_smin(g, LLVMBuildSub(g->b, col_end, col, ""), ptx_i64(g, lanes));
    LLVMValueRef pos = LLVMBuildICmp(g->b, LLVMIntSGT, left, ptx_i64(g, 0), "");
    LLVMValueRef any = LLVMBuildAnd(g->b, row_in, pos, "");
    LLVMValueRef zero = ptx_i64(g, 0);
    LLVMValueRef bytes = LLVMBuildSelect(g->b, any, ptx_mul_c(g, left, w->s->esize), zero, "");
    LLVMValueRef src = element_at(w, l, LLVMBuildSelect(g->b, any, row, zero, ""),
                                  LLVMBuildSelect(g->b, any, col, zero, ""));
    LLVMValueRef args[3] = {dst, src, ptx_low32(g, bytes)};
    void_call(g, "llvm.nvvm.cp.async.cg.shared.global.16.s", args, 3);
    return;
  }
  LLVMTypeRef lane_ty = w->s->tf32 ? g->f32 : g->i8;
  LLVMTypeRef vec_ty = LLVMVectorType(lane_ty, (unsigned)lanes);
  LLVMValueRef lanes_var = ptx_var(g, vec_ty, LLVMConstNull(vec_ty));
  for (int64_t e = 0; e < lanes; e++) {
    LLVMValueRef c = ptx_add(g, col, ptx_i64(g, e));
    LLVMValueRef in = LLVMBuildAnd(g->b, row_in, ptx_below(g, c, col_end), "");
    LLVMBasicBlockRef after = ptx_if_begin(g, in);
    LLVMValueRef x = ptx_load(g, lane_ty, element_at(w, l, row, c), g->d->matmul.align);
    LLVMValueRef cur = LLVMBuildLoad2(g->b, vec_ty, lanes_var, "");
    cur = LLVMBuildInsertElement(g->b, cur, x, LLVMConstInt(g->i32, (unsigned long long)e, false), "");
    LLVMBuildStore(g->b, cur, lanes_var);
    ptx_if_end(g, after);
  }
  LLVMValueRef all = LLVMBuildLoad2(g->b, vec_ty, lanes_var, "");
  ptx_store(g, LLVMBuildBitCast(g->b, all, w->v4i32, ""), dst, CHUNK);
}

/* Where chunk q of this thread lies in the A tile (row, k) and the B tile
 * (k, col), and its byte offset in the fragment-major shared tile. */
typedef struct {
  LLVMValueRef a_row, a_k, a_off, b_k, b_col, b_off;
} wm_chunk;

/* int8 tiles (mma.sync) are row-major, A [128][64] and B [64][128] bytes,
 * with the 16-byte chunks of a row permuted (XOR) so that the ldmatrix of
 * 8 rows of A and the word loads of B (rows 4t+i, t = 0..3) hit 32
 * different banks.  Byte offset of chunk c of A row r / B row k. */
static LLVMValueRef a_swizzled(wm_gen *w, LLVMValueRef r, LLVMValueRef c) {
  ptx_gen *g = w->g;
  LLVMValueRef x = LLVMBuildAnd(g->b, LLVMBuildLShr(g->b, r, ptx_i64(g, 1), ""), ptx_i64(g, 3), "");
  return ptx_add(g, ptx_mul_c(g, r, w->s->bk), ptx_mul_c(g, LLVMBuildXor(g->b, c, x, ""), 16));
}

static LLVMValueRef b_swizzled(wm_gen *w, LLVMValueRef k, LLVMValueRef c) {
  ptx_gen *g = w->g;
  LLVMValueRef x = ptx_mul_c(g, LLVMBuildAnd(g->b, LLVMBuildLShr(g->b, k, ptx_i64(g, 2), ""), ptx_i64(g, 3), ""), 2);
  return ptx_add(g, ptx_add(g, ptx_i64(g, tile_bytes(w->s)), ptx_mul_c(g, k, BLOCK_TILE)),
             ptx_mul_c(g, LLVMBuildXor(g->b, c, x, ""), 16));
}

static wm_chunk chunk_place(wm_gen *w, unsigned q) {
  ptx_gen *g = w->g;
  const wm_shape *s = w->s;
  int64_t lanes = CHUNK / s->esize, fbytes = 16 * s->fk * s->esize;
  LLVMValueRef c = ptx_add(g, w->tid, ptx_i64(g, (int64_t)q * THREADS));
  wm_chunk p;
  int64_t a_per_row = s->bk / lanes;
  p.a_row = LLVMBuildUDiv(g->b, c, ptx_i64(g, a_per_row), "");
  p.a_k = ptx_mul_c(g, LLVMBuildURem(g->b, c, ptx_i64(g, a_per_row), ""), lanes);
  /* ((k / fk) * FRAGS + row / 16) * fbytes + (row % 16) * fk * esize + (k % fk) * esize */
  LLVMValueRef frag = ptx_add(g, ptx_mul_c(g, LLVMBuildUDiv(g->b, p.a_k, ptx_i64(g, s->fk), ""), FRAGS),
                          LLVMBuildUDiv(g->b, p.a_row, ptx_i64(g, 16), ""));
  LLVMValueRef in = ptx_add(g, ptx_mul_c(g, LLVMBuildURem(g->b, p.a_row, ptx_i64(g, 16), ""), s->fk),
                        LLVMBuildURem(g->b, p.a_k, ptx_i64(g, s->fk), ""));
  p.a_off = ptx_add(g, ptx_mul_c(g, frag, fbytes), ptx_mul_c(g, in, s->esize));
  int64_t b_per_row = BLOCK_TILE / lanes;
  p.b_k = LLVMBuildUDiv(g->b, c, ptx_i64(g, b_per_row), "");
  p.b_col = ptx_mul_c(g, LLVMBuildURem(g->b, c, ptx_i64(g, b_per_row), ""), lanes);
  /* ((k / fk) * FRAGS + col / 16) * fbytes + (k % fk) * 16 * esize + (col % 16) * esize */
  frag = ptx_add(g, ptx_mul_c(g, LLVMBuildUDiv(g->b, p.b_k, ptx_i64(g, s->fk), ""), FRAGS),
             LLVMBuildUDiv(g->b, p.b_col, ptx_i64(g, 16), ""));
  in = ptx_add(g, ptx_mul_c(g, LLVMBuildURem(g->b, p.b_k, ptx_i64(g, s->fk), ""), 16),
           LLVMBuildURem(g->b, p.b_col, ptx_i64(g, 16), ""));
  p.b_off = ptx_add(g, ptx_add(g, ptx_mul_c(g, frag, fbytes), ptx_mul_c(g, in, s->esize)),
                ptx_i64(g, tile_bytes(s)));
  if (s->direct) {
    p.a_off = a_swizzled(w, p.a_row, LLVMBuildUDiv(g->b, p.a_k, ptx_i64(g, 16), ""));
    p.b_off = b_swizzled(w, p.b_k, LLVMBuildUDiv(g->b, p.b_col, ptx_i64(g, 16), ""));
  }
  return p;
}

/* The base of shared buffer `buf` (0 .. STAGES-1). */
static LLVMValueRef buffer_at(wm_gen *w, LLVMValueRef buf) {
  return shared_at(w, w->smem, ptx_mul_c(w->g, buf, stage_bytes(w->s)));
}

/* Starts the copies of the k-tile at k0 of block tile (i0, j0) into
 * buffer `buf`. */
static void copy_tile(wm_gen *w, LLVMValueRef i0, LLVMValueRef j0, LLVMValueRef k0, LLVMValueRef buf) {
  ptx_gen *g = w->g;
  const kn_matmul *m = &g->d->matmul;
  LLVMValueRef M = ptx_size(g, m->m), N = ptx_size(g, m->n), K = ptx_size(g, m->k);
  LLVMValueRef base = buffer_at(w, buf);
  for (unsigned q = 0; q < chunks(w->s); q++) {
    wm_chunk p = chunk_place(w, q);
    copy_chunk(w, &m->a, ptx_add(g, i0, p.a_row), M, ptx_add(g, k0, p.a_k), K, shared_at(w, base, p.a_off));
    copy_chunk(w, &m->b, ptx_add(g, k0, p.b_k), K, ptx_add(g, j0, p.b_col), N, shared_at(w, base, p.b_off));
  }
}

static LLVMValueRef load_frag(wm_gen *w, const char *name, LLVMTypeRef ty, LLVMValueRef base,
                              int64_t frag, unsigned stride) {
  ptx_gen *g = w->g;
  int64_t fbytes = 16 * w->s->fk * w->s->esize;
  LLVMValueRef args[2] = {shared_at(w, base, ptx_i64(g, frag * fbytes)),
                          LLVMConstInt(g->i32, stride, false)};
  return ptx_call(g, name, ty, args, 2);
}

/* Register r of a fragment as the mma takes it: tf32 rounds the f32 bits
 * shared memory holds (cvt.rna), int8 takes them as they are. */
static LLVMValueRef frag_reg(wm_gen *w, LLVMValueRef frag, unsigned r) {
  ptx_gen *g = w->g;
  LLVMValueRef v = LLVMBuildExtractValue(g->b, frag, r, "");
  if (!w->s->tf32) return v;
  v = LLVMBuildBitCast(g->b, v, g->f32, "");
  return ptx_call(g, "llvm.nvvm.f2tf32.rna", g->i32, &v, 1);
}

/* The warp's 4x2 fragments of C += A tile x B tile, from buffer `buf`.
 * Fragment rows of this warp: warp_m * 4 + fi; columns warp_n * 2 + fj. */
static void compute_direct(wm_gen *w, LLVMValueRef buf);
static void direct_lanes(wm_gen *w);

static void compute_tile(wm_gen *w, LLVMValueRef buf) {
  ptx_gen *g = w->g;
  const wm_shape *s = w->s;
  if (s->direct) {
    compute_direct(w, buf);
    return;
  }
  LLVMValueRef base = buffer_at(w, buf);
  int64_t fbytes = 16 * s->fk * s->esize;
  LLVMValueRef a_base = shared_at(w, base, ptx_mul_c(g, w->warp_m, WARP_FRAGS_M * fbytes));
  LLVMValueRef b_base = shared_at(w, base, ptx_add(g, ptx_i64(g, tile_bytes(s)),
                                               ptx_mul_c(g, w->warp_n, WARP_FRAGS_N * fbytes)));
  for (unsigned ks = 0; ks < s->bk / s->fk; ks++) {
    LLVMValueRef a[WARP_FRAGS_M][4], b[WARP_FRAGS_N][4];
    for (unsigned fi = 0; fi < WARP_FRAGS_M; fi++) {
      LLVMValueRef f = load_frag(w, s->load_a, w->afrag, a_base, (int64_t)ks * FRAGS + fi, s->fk);
      for (unsigned r = 0; r < s->a_regs; r++) a[fi][r] = frag_reg(w, f, r);
    }
    for (unsigned fj = 0; fj < WARP_FRAGS_N; fj++) {
      LLVMValueRef f = load_frag(w, s->load_b, w->bfrag, b_base, (int64_t)ks * FRAGS + fj, 16);
      for (unsigned r = 0; r < s->b_regs; r++) b[fj][r] = frag_reg(w, f, r);
    }
    for (unsigned f = 0; f < WARP_FRAGS_M * WARP_FRAGS_N; f++) {
      LLVMValueRef args[16];
      unsigned n = 0;
      for (unsigned r = 0; r < s->a_regs; r++) args[n++] = a[f / WARP_FRAGS_N][r];
      for (unsigned r = 0; r < s->b_regs; r++) args[n++] = b[f % WARP_FRAGS_N][r];
      LLVMValueRef c = LLVMBuildLoad2(g->b, w->acc, w->accs[f], "");
      for (unsigned r = 0; r < 8; r++) args[n++] = LLVMBuildExtractValue(g->b, c, r, "");
      LLVMBuildStore(g->b, ptx_call(g, s->mma, w->acc, args, n), w->accs[f]);
    }
  }
}

/* int8: the warp's 64x32 of C as 4 x 4 mma.sync m16n8k32 tiles, from
 * buffer `buf`.  A comes in by ldmatrix (x4: the 16x32-byte A operand of
 * one mma, rows r0 + lane % 16, k chunk lane / 16).  The B operand wants 4
 * consecutive k of one column in a register while B rows hold consecutive
 * columns: lane (g = lane / 4, t = lane % 4) loads the words of rows 4t..4t+3
 * (and 16 + those) at columns 4g..4g+3 of the warp's 32 and transposes the
 * 4x4 bytes, which gives it 4 columns 4g + j; mma j takes column 4g + j as
 * its column g, so mma j covers columns j, 4 + j, ..., 28 + j (undone when C
 * is stored).  Every product is still one s8/u8 product added to C's
 * element in wrapping s32. */
static void compute_direct(wm_gen *w, LLVMValueRef buf) {
  ptx_gen *g = w->g;
  const wm_shape *s = w->s;
  LLVMValueRef base = buffer_at(w, buf);
  LLVMTypeRef quad = struct_of(g, g->i32, 4);
  LLVMTypeRef v4 = LLVMVectorType(g->i32, 4), v16 = LLVMVectorType(g->i8, 16);
  LLVMValueRef mask[16];
  for (unsigned e = 0; e < 16; e++) mask[e] = LLVMConstInt(g->i32, (e % 4) * 4 + e / 4, false);
  LLVMValueRef transpose = LLVMConstVector(mask, 16);
  /* The swizzle of every address below depends on the lane only: A rows
   * differ by multiples of 16 and B rows keep (k >> 2) & 3 = t, so each is
   * a per-lane offset plus a constant (few registers across the loop). */
  for (unsigned ks = 0; ks < s->bk / 32; ks++) {
    LLVMValueRef a[WARP_FRAGS_M][4], b[4][2];
    for (unsigned fi = 0; fi < WARP_FRAGS_M; fi++) {
      LLVMValueRef p = shared_at(w, shared_at(w, base, w->a_lane[ks]), ptx_i64(g, fi * 16 * s->bk));
      LLVMValueRef f = ptx_call(g, "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16.p3", quad, &p, 1);
      for (unsigned r = 0; r < 4; r++) a[fi][r] = LLVMBuildExtractValue(g->b, f, r, "");
    }
    for (unsigned h = 0; h < 2; h++) {
      LLVMValueRef words = LLVMGetUndef(v4);
      for (unsigned i = 0; i < 4; i++) {
        int64_t k = ks * 32 + h * 16 + i;
        LLVMValueRef p = shared_at(w, shared_at(w, base, w->b_lane), ptx_i64(g, k * BLOCK_TILE));
        LLVMValueRef v = ptx_load(g, g->i32, p, 4);
        words = LLVMBuildInsertElement(g->b, words, v, LLVMConstInt(g->i32, i, false), "");
      }
      LLVMValueRef bytes = LLVMBuildBitCast(g->b, words, v16, "");
      bytes = LLVMBuildShuffleVector(g->b, bytes, LLVMGetUndef(v16), transpose, "");
      LLVMValueRef cols = LLVMBuildBitCast(g->b, bytes, v4, "");
      for (unsigned j = 0; j < 4; j++)
        b[j][h] = LLVMBuildExtractElement(g->b, cols, LLVMConstInt(g->i32, j, false), "");
    }
    for (unsigned f = 0; f < WARP_FRAGS_M * 4; f++) {
      LLVMValueRef args[10];
      unsigned n = 0;
      for (unsigned r = 0; r < 4; r++) args[n++] = a[f / 4][r];
      for (unsigned r = 0; r < 2; r++) args[n++] = b[f % 4][r];
      LLVMValueRef c = LLVMBuildLoad2(g->b, w->acc, w->accs[f / 2], "");
      for (unsigned r = 0; r < 4; r++) args[n++] = LLVMBuildExtractValue(g->b, c, (f % 2) * 4 + r, "");
      LLVMValueRef d = ptx_call(g, s->mma, quad, args, n);
      for (unsigned r = 0; r < 4; r++)
        c = LLVMBuildInsertValue(g->b, c, LLVMBuildExtractValue(g->b, d, r, ""), (f % 2) * 4 + r, "");
      LLVMBuildStore(g->b, c, w->accs[f / 2]);
    }
  }
}

/* The per-lane parts of compute_direct's shared addresses: A row
 * warp_m * 64 + lane % 16, chunk 2 ks + lane / 16 (of k-step ks); B rows
 * 4t (+ constants), word g of the warp's 32 columns. */
static void direct_lanes(wm_gen *w) {
  ptx_gen *g = w->g;
  LLVMValueRef row = ptx_add(g, ptx_mul_c(g, w->warp_m, WARP_FRAGS_M * 16), LLVMBuildURem(g->b, w->lane, ptx_i64(g, 16), ""));
  for (unsigned ks = 0; ks < 2; ks++) {
    LLVMValueRef chunk = ptx_add(g, ptx_i64(g, ks * 2), LLVMBuildUDiv(g->b, w->lane, ptx_i64(g, 16), ""));
    w->a_lane[ks] = a_swizzled(w, row, chunk);
  }
  LLVMValueRef grp = LLVMBuildUDiv(g->b, w->lane, ptx_i64(g, 4), "");
  LLVMValueRef tig = LLVMBuildURem(g->b, w->lane, ptx_i64(g, 4), "");
  LLVMValueRef chunk = ptx_add(g, ptx_mul_c(g, w->warp_n, 2), LLVMBuildUDiv(g->b, grp, ptx_i64(g, 4), ""));
  LLVMValueRef word = ptx_mul_c(g, LLVMBuildURem(g->b, grp, ptx_i64(g, 4), ""), 4);
  w->b_lane = ptx_add(g, b_swizzled(w, ptx_mul_c(g, tig, 4), chunk), word);
}

/* C element (i, j) of the block tile's matrix (i32 or f32): stored, or
 * added to the sum's start (with accumulate), when inside. */
static void store_element(wm_gen *w, LLVMValueRef i, LLVMValueRef j, LLVMValueRef v) {
  ptx_gen *g = w->g;
  const kn_matmul *m = &g->d->matmul;
  LLVMTypeRef ety = LLVMTypeOf(v);
  LLVMValueRef in = LLVMBuildAnd(g->b, ptx_below(g, i, ptx_size(g, m->m)), ptx_below(g, j, ptx_size(g, m->n)), "");
  LLVMBasicBlockRef join = ptx_if_begin(g, in);
  LLVMValueRef p = ptx_element_at(g, &m->c, 4, NULL, i, j);
  if (m->accumulate) {
    LLVMValueRef old = ptx_load(g, ety, ptx_element_at(g, kn_matmul_start(m), 4, NULL, i, j), m->align);
    v = w->s->tf32 ? LLVMBuildFAdd(g->b, old, v, "") : LLVMBuildAdd(g->b, old, v, "");
  }
  ptx_store(g, v, p, m->align);
  ptx_if_end(g, join);
}

/* int8: accumulator register r of mma (fi, j) is C row g + 8 (r / 2) of
 * m-tile fi, and mma column 2t + r % 2, which is column 4 (2t + r % 2) + j
 * of the warp's 32 (see compute_direct). */
static void store_direct(wm_gen *w, LLVMValueRef i0, LLVMValueRef j0) {
  ptx_gen *g = w->g;
  LLVMValueRef grp = LLVMBuildUDiv(g->b, w->lane, ptx_i64(g, 4), "");
  LLVMValueRef tig = LLVMBuildURem(g->b, w->lane, ptx_i64(g, 4), "");
  LLVMValueRef row0 = ptx_add(g, ptx_add(g, i0, ptx_mul_c(g, w->warp_m, WARP_FRAGS_M * 16)), grp);
  LLVMValueRef col0 = ptx_add(g, ptx_add(g, j0, ptx_mul_c(g, w->warp_n, 32)), ptx_mul_c(g, tig, 8));
  for (unsigned f = 0; f < WARP_FRAGS_M * 4; f++) {
    LLVMValueRef c = LLVMBuildLoad2(g->b, w->acc, w->accs[f / 2], "");
    for (unsigned r = 0; r < 4; r++) {
      LLVMValueRef i = ptx_add(g, row0, ptx_i64(g, (f / 4) * 16 + (r / 2) * 8));
      LLVMValueRef j = ptx_add(g, col0, ptx_i64(g, 4 * (r % 2) + f % 4));
      store_element(w, i, j, LLVMBuildExtractValue(g->b, c, (f % 2) * 4 + r, ""));
    }
  }
}

static void warp_sync(ptx_gen *g) {
  LLVMValueRef all = LLVMConstInt(g->i32, 0xffffffffu, false);
  void_call(g, "llvm.nvvm.bar.warp.sync", &all, 1);
}

/* C fragment f -> the warp's staging square (in the tile buffers, free
 * after the k loop) -> C in global memory, element by element with bounds
 * checks (and C's old value added when asked). */
static void store_fragment(wm_gen *w, unsigned f, LLVMValueRef i0, LLVMValueRef j0) {
  ptx_gen *g = w->g;
  LLVMTypeRef ety = w->s->tf32 ? g->f32 : g->i32;
  LLVMValueRef square = shared_at(w, w->smem, ptx_mul_c(g, w->warp, 16 * 16 * 4));
  LLVMValueRef args[10];
  LLVMValueRef c = LLVMBuildLoad2(g->b, w->acc, w->accs[f], "");
  args[0] = square;
  for (unsigned r = 0; r < 8; r++) args[1 + r] = LLVMBuildExtractValue(g->b, c, r, "");
  args[9] = LLVMConstInt(g->i32, 16, false);
  void_call(g, w->s->store, args, 10);
  warp_sync(g);
  LLVMValueRef row0 = ptx_add(g, i0, ptx_mul_c(g, w->warp_m, WARP_FRAGS_M * 16));
  row0 = ptx_add(g, row0, ptx_i64(g, (int64_t)(f / WARP_FRAGS_N) * 16));
  LLVMValueRef col0 = ptx_add(g, j0, ptx_mul_c(g, w->warp_n, WARP_FRAGS_N * 16));
  col0 = ptx_add(g, col0, ptx_i64(g, (int64_t)(f % WARP_FRAGS_N) * 16));
  for (unsigned q = 0; q < 8; q++) {
    LLVMValueRef e = ptx_add(g, w->lane, ptx_i64(g, 32 * q));
    LLVMValueRef i = ptx_add(g, row0, LLVMBuildUDiv(g->b, e, ptx_i64(g, 16), ""));
    LLVMValueRef j = ptx_add(g, col0, LLVMBuildURem(g->b, e, ptx_i64(g, 16), ""));
    /* the staging square always holds all 256 values: read before the
     * bounds check, which store_element makes */
    store_element(w, i, j, ptx_load(g, ety, LLVMBuildGEP2(g->b, ety, square, &e, 1, ""), 4));
  }
  warp_sync(g);
}

static void commit(ptx_gen *g) { void_call(g, "llvm.nvvm.cp.async.commit.group", NULL, 0); }

static void wait_groups(ptx_gen *g, unsigned pending) {
  LLVMValueRef n = LLVMConstInt(g->i32, pending, false);
  void_call(g, "llvm.nvvm.cp.async.wait.group", &n, 1);
}

/* One 128x128 block tile of C over the whole k range.  k-tile t lives in
 * buffer t % STAGES; every thread commits one cp.async group per k-tile
 * (empty past the end), so waiting until STAGES-2 groups are pending means
 * this thread's copies of the current tile landed, and the barrier after
 * it that all threads' did and that all warps left the tile before, whose
 * buffer the copies started next overwrite.  Loop bounds depend only on
 * block indices and sizes, so every thread reaches every barrier. */
static void block_tile(wm_gen *w, LLVMValueRef i0, LLVMValueRef j0) {
  ptx_gen *g = w->g;
  const wm_shape *s = w->s;
  LLVMValueRef K = ptx_size(g, g->d->matmul.k);
  for (unsigned f = 0; f < WARP_FRAGS_M * WARP_FRAGS_N; f++)
    LLVMBuildStore(g->b, LLVMConstNull(w->acc), w->accs[f]);
  LLVMValueRef tiles = LLVMBuildSDiv(g->b, ptx_add(g, K, ptx_i64(g, s->bk - 1)), ptx_i64(g, s->bk), "");
  for (unsigned t = 0; t + 1 < s->stages; t++) {
    LLVMBasicBlockRef join = ptx_if_begin(g, ptx_below(g, ptx_i64(g, t), tiles));
    copy_tile(w, i0, j0, ptx_i64(g, (int64_t)t * s->bk), ptx_i64(g, t));
    ptx_if_end(g, join);
    commit(g);
  }
  ptx_loop kt;
  ptx_loop_begin(g, &kt, ptx_i64(g, 0), tiles, ptx_i64(g, 1));
  wait_groups(g, s->stages - 2);
  ptx_barrier(g);
  LLVMValueRef next = ptx_add(g, kt.iv, ptx_i64(g, s->stages - 1));
  LLVMBasicBlockRef join = ptx_if_begin(g, ptx_below(g, next, tiles));
  copy_tile(w, i0, j0, ptx_mul_c(g, next, s->bk), LLVMBuildURem(g->b, next, ptx_i64(g, s->stages), ""));
  ptx_if_end(g, join);
  commit(g);
  compute_tile(w, LLVMBuildURem(g->b, kt.iv, ptx_i64(g, s->stages), ""));
  ptx_loop_end(g, &kt);
  wait_groups(g, 0);
  ptx_barrier(g);
  if (s->direct) {
    store_direct(w, i0, j0);
  } else {
    for (unsigned f = 0; f < WARP_FRAGS_M * WARP_FRAGS_N; f++) store_fragment(w, f, i0, j0);
    ptx_barrier(g);  /* the staging squares are the next tile's buffers */
  }
}

static void wm_init(wm_gen *w, ptx_gen *g, const wm_shape *s) {
  *w = (wm_gen){.g = g, .s = s};
  w->v4i32 = LLVMVectorType(g->i32, 4);
  w->afrag = struct_of(g, g->i32, s->a_regs);
  w->bfrag = struct_of(g, g->i32, s->b_regs);
  w->acc = struct_of(g, s->tf32 ? g->f32 : g->i32, 8);
  unsigned bytes = s->stages * stage_bytes(s);
  if (g->shared_pool) {
    w->smem = g->shared_pool;  /* sized for this body too (ptx_wgmma.c) */
  } else {
    w->smem = ptx_shared_array(g, g->i8, bytes > STAGING ? bytes : STAGING, "wmma_tiles");
    LLVMSetAlignment(w->smem, 128);
  }
  w->tid = ptx_add(g, ptx_mul_c(g, ptx_sreg(g, "tid.y"), 16), ptx_sreg(g, "tid.x"));
  w->warp = LLVMBuildUDiv(g->b, w->tid, ptx_i64(g, 32), "");
  w->lane = LLVMBuildURem(g->b, w->tid, ptx_i64(g, 32), "");
  w->warp_m = LLVMBuildUDiv(g->b, w->warp, ptx_i64(g, 4), "");
  w->warp_n = LLVMBuildURem(g->b, w->warp, ptx_i64(g, 4), "");
  for (unsigned f = 0; f < WARP_FRAGS_M * WARP_FRAGS_N; f++) w->accs[f] = ptx_var(g, w->acc, NULL);
  if (s->direct) direct_lanes(w);
}

/* Block tiles are assigned by block index only, so every thread of a
 * block reaches the same barriers. */
static void all_tiles(wm_gen *w) {
  ptx_gen *g = w->g;
  const kn_matmul *m = &g->d->matmul;
  LLVMValueRef tiles_m = LLVMBuildSDiv(g->b, ptx_add(g, ptx_size(g, m->m), ptx_i64(g, BLOCK_TILE - 1)),
                                       ptx_i64(g, BLOCK_TILE), "");
  LLVMValueRef tiles_n = LLVMBuildSDiv(g->b, ptx_add(g, ptx_size(g, m->n), ptx_i64(g, BLOCK_TILE - 1)),
                                       ptx_i64(g, BLOCK_TILE), "");
  ptx_loop ti, tj;
  ptx_loop_begin(g, &ti, ptx_sreg(g, "ctaid.y"), tiles_m, ptx_sreg(g, "nctaid.y"));
  ptx_loop_begin(g, &tj, ptx_sreg(g, "ctaid.x"), tiles_n, ptx_sreg(g, "nctaid.x"));
  block_tile(w, ptx_mul_c(g, ti.iv, BLOCK_TILE), ptx_mul_c(g, tj.iv, BLOCK_TILE));
  ptx_loop_end(g, &tj);
  ptx_loop_end(g, &ti);
}

/* The body comes twice: with cp.async, taken when both A and B allow
 * 16-byte copies at run time (the same for every thread), and with element
 * loads otherwise. */
static bool wmma_build(ptx_gen *g) {
  ptx_wmma_annotate(g);
  return ptx_wmma_body(g);
}

void ptx_wmma_annotate(ptx_gen *g) {
  ptx_annotate(g, "maxntidx", 16);
  ptx_annotate(g, "maxntidy", 16);
  ptx_annotate(g, "maxntidz", 1);
  ptx_annotate(g, "minctasm", WM_BLOCKS_PER_SM);
}

bool ptx_wmma_body(ptx_gen *g) {
  const kn_matmul *m = &g->d->matmul;
  const wm_shape *s = m->type == KN_MM_F32 ? &shape_tf32
                      : m->a_signed ? (m->b_signed ? &shape_i8 : &shape_s8u8)
                                    : (m->b_signed ? &shape_u8s8 : &shape_u8);
  wm_gen w;
  wm_init(&w, g, s);
  /* rows may be copied 16 bytes at a time when elements are contiguous
   * and every 16-byte run of a k-tile starts 16-byte aligned */
  LLVMValueRef ok = LLVMBuildAnd(g->b, ptx_rows_aligned(g, &m->a, s->esize, 16),
                                 ptx_rows_aligned(g, &m->b, s->esize, 16), "");
  LLVMBasicBlockRef fast = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "async");
  LLVMBasicBlockRef slow = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "elementwise");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "finished");
  LLVMBuildCondBr(g->b, ok, fast, slow);
  LLVMPositionBuilderAtEnd(g->b, fast);
  w.async = true;
  all_tiles(&w);
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, slow);
  w.async = false;
  all_tiles(&w);
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, done);
  LLVMBuildRetVoid(g->b);
  return true;
}

static bool wmma_check(const kn_desc *d, tw_diag *diag) {
  if (kn_matmul_scaled(&d->matmul))
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "wmma kernel: scaled operands take the exact kernel");
  return ptx_kind_matmul.check(d, diag);
}

/* The exact kernel's block shape (16x16 threads), one block per 128x128
 * tile of C. */
static void wmma_launch(const kn_desc *d, ptx_launch *l) {
  *l = (ptx_launch){.block = {16, 16, 1},
                    .count = {d->matmul.n, d->matmul.m, {false, 1}},
                    .per_block = {BLOCK_TILE, BLOCK_TILE, 1},
                    .max_grid = {65535, 65535, 1}};
}

const ptx_kind ptx_kind_wmma = {wmma_check, wmma_build, wmma_launch, false};
