/* ptx_wmma.c: tensor-core (wmma) matrix multiplication: i8 x i8 -> i32
 * with m16n16k16 (exact: without .satfinite the s32 accumulation wraps
 * modulo 2^32 like Wasm i32, measured on the H100), and f32 through tf32
 * m16n16k8 (inexact, only when asked for).  A block of 8 warps owns a
 * 128x128 tile of C; each warp owns 64x32 of it (4x2 fragments).  A and B
 * tiles pass through shared memory, double-buffered with a register stage
 * so global loads of the next k-tile overlap the mma of this one.  Shared
 * tiles are stored fragment by fragment (each 16-row fragment contiguous)
 * so every wmma.load address is 256-bit aligned.  Edges are zero-padded in
 * shared memory, exact for integer sums; the block shape is the exact
 * kernel's, so archs without wmma get that kernel under the same launch. */
#include "ptx_internal.h"

enum {
  BLOCK_TILE = 128,        /* rows and columns of C per block */
  FRAGS = BLOCK_TILE / 16, /* 16-wide fragments along a block tile */
  THREADS = 256,           /* 8 warps: 2 along M times 4 along N */
  WARP_FRAGS_M = 4,        /* a warp owns 64 rows ... */
  WARP_FRAGS_N = 2,        /* ... and 32 columns of the block tile */
  CHUNK = 16,              /* bytes one thread moves per copy step */
  CHUNKS = 2,              /* copy steps per thread per matrix per k-tile */
  STAGE = 2 * 8192,        /* bytes of one A tile plus one B tile */
};

/* What differs between the int8 and tf32 kernels. */
typedef struct {
  unsigned fk;             /* k of one fragment */
  unsigned bk;             /* k of a block tile: 8 KiB of A, 8 KiB of B */
  unsigned esize;          /* bytes of an A/B element in memory */
  unsigned a_regs, b_regs; /* i32 registers of an A / B fragment */
  const char *load_a, *load_b, *mma, *store;
  bool tf32;
} wm_shape;

static const wm_shape shape_i8 = {
  16, 64, 1, 2, 2,
  "llvm.nvvm.wmma.m16n16k16.load.a.row.stride.s8.p3",
  "llvm.nvvm.wmma.m16n16k16.load.b.row.stride.s8.p3",
  "llvm.nvvm.wmma.m16n16k16.mma.row.row.s8",
  "llvm.nvvm.wmma.m16n16k16.store.d.row.stride.s32.p3", false};
static const wm_shape shape_u8 = {
  16, 64, 1, 2, 2,
  "llvm.nvvm.wmma.m16n16k16.load.a.row.stride.u8.p3",
  "llvm.nvvm.wmma.m16n16k16.load.b.row.stride.u8.p3",
  "llvm.nvvm.wmma.m16n16k16.mma.row.row.u8",
  "llvm.nvvm.wmma.m16n16k16.store.d.row.stride.s32.p3", false};
static const wm_shape shape_tf32 = {
  8, 16, 4, 4, 4,
  "llvm.nvvm.wmma.m16n16k8.load.a.row.stride.tf32.p3",
  "llvm.nvvm.wmma.m16n16k8.load.b.row.stride.tf32.p3",
  "llvm.nvvm.wmma.m16n16k8.mma.row.row.tf32",
  "llvm.nvvm.wmma.m16n16k8.store.d.row.stride.f32.p3", true};

/* Matmuls whose sizes are constants this small fit in a fraction of one
 * block tile: the exact kernel spreads them over more blocks. */
static bool tiny(const kn_matmul *m) {
  return !m->m.is_param && !m->n.is_param && !m->k.is_param &&
         m->m.value * m->n.value * m->k.value <= 64 * 64 * 64;
}

bool ptx_wmma_applies(const kn_matmul *m, bool tf32) {
  return (m->type == KN_MM_I8_I32 || (m->type == KN_MM_F32 && tf32)) && !tiny(m);
}

/* int8 wmma exists from sm_72 and tf32 from sm_80, but the wrapping of the
 * s32 accumulator was measured on sm_90 and its sm_80 ISA: sm_75 keeps the
 * exact kernel. */
static bool arch_has_wmma(unsigned sm) { return sm >= 80; }

typedef struct {
  ptx_gen *g;
  const wm_shape *s;
  LLVMTypeRef v4i32, afrag, bfrag, acc;   /* acc: the 8-value C fragment */
  LLVMValueRef smem, stage;               /* shared tiles; epilogue staging */
  LLVMValueRef tid, warp_m, warp_n, lane, warp;
  LLVMValueRef a_vec_ok, b_vec_ok;        /* 16-byte global loads allowed */
  LLVMValueRef chunk[2][CHUNKS];          /* register stage: A, B */
  LLVMValueRef accs[WARP_FRAGS_M * WARP_FRAGS_N];
} wm_gen;


static LLVMTypeRef struct_of(ptx_gen *g, LLVMTypeRef t, unsigned n) {
  LLVMTypeRef fields[8];
  for (unsigned i = 0; i < n; i++) fields[i] = t;
  return LLVMStructTypeInContext(g->ctx, fields, n, false);
}

static LLVMValueRef shared_at(wm_gen *w, LLVMValueRef base, LLVMValueRef byte_offset) {
  return LLVMBuildGEP2(w->g->b, w->g->i8, base, &byte_offset, 1, "");
}

static LLVMValueRef mul_c(ptx_gen *g, LLVMValueRef v, int64_t c) {
  return LLVMBuildMul(g->b, v, ptx_i64(g, c), "");
}

/* Byte address of element (row, col) of a matrix in global memory. */
static LLVMValueRef element_at(wm_gen *w, const kn_layout *l, LLVMValueRef row, LLVMValueRef col) {
  ptx_gen *g = w->g;
  LLVMValueRef r = LLVMBuildMul(g->b, row, ptx_size(g, l->row_stride), "");
  LLVMValueRef c = LLVMBuildMul(g->b, col, ptx_size(g, l->col_stride), "");
  LLVMValueRef off = mul_c(g, LLVMBuildAdd(g->b, r, c, ""), w->s->esize);
  return ptx_global_at(g, LLVMBuildAdd(g->b, ptx_size(g, l->offset), off, ""));
}

static LLVMValueRef is_zero_mod16(ptx_gen *g, LLVMValueRef v) {
  LLVMValueRef low = LLVMBuildAnd(g->b, v, ptx_i64(g, 15), "");
  return LLVMBuildICmp(g->b, LLVMIntEQ, low, ptx_i64(g, 0), "");
}

/* A row of the matrix may be read 16 bytes at a time when elements are
 * contiguous and every 16-element-aligned run starts 16-byte aligned. */
static LLVMValueRef vector_ok(wm_gen *w, const kn_layout *l) {
  ptx_gen *g = w->g;
  LLVMValueRef zero = ptx_i64(g, 0);
  LLVMValueRef base = LLVMBuildPtrToInt(g->b, element_at(w, l, zero, zero), g->i64, "");
  LLVMValueRef ok = is_zero_mod16(g, base);
  ok = LLVMBuildAnd(g->b, ok, is_zero_mod16(g, mul_c(g, ptx_size(g, l->row_stride), w->s->esize)), "");
  LLVMValueRef unit = LLVMBuildICmp(g->b, LLVMIntEQ, ptx_size(g, l->col_stride), ptx_i64(g, 1), "");
  return LLVMBuildAnd(g->b, ok, unit, "");
}

/* One A/B element as the i32 word (tf32) or byte the tile holds. */
static LLVMValueRef tile_element(wm_gen *w, LLVMValueRef v) {
  if (!w->s->tf32) return v;
  return ptx_call(w->g, "llvm.nvvm.f2tf32.rna", w->g->i32, &v, 1);
}

/* The chunk of `lanes` elements at (row, col..): 16 bytes at once when
 * allowed and wholly inside, else element by element with zero padding
 * (nothing outside the matrix is read). */
static void load_chunk(wm_gen *w, const kn_layout *l, LLVMValueRef vec_ok, LLVMValueRef row,
                       LLVMValueRef row_end, LLVMValueRef col, LLVMValueRef col_end,
                       LLVMValueRef var) {
  ptx_gen *g = w->g;
  unsigned lanes = CHUNK / w->s->esize;
  LLVMTypeRef lane_ty = w->s->tf32 ? g->f32 : g->i8;
  LLVMTypeRef out_lane = w->s->tf32 ? g->i32 : g->i8;
  LLVMTypeRef vec_ty = LLVMVectorType(out_lane, lanes);
  LLVMValueRef row_in = LLVMBuildICmp(g->b, LLVMIntSLT, row, row_end, "");
  LLVMValueRef last = LLVMBuildAdd(g->b, col, ptx_i64(g, lanes), "");
  LLVMValueRef whole = LLVMBuildAnd(g->b, row_in, LLVMBuildICmp(g->b, LLVMIntSLE, last, col_end, ""), "");
  LLVMValueRef fast = LLVMBuildAnd(g->b, whole, vec_ok, "");
  LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "vec");
  LLVMBasicBlockRef other = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "scalar");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "loaded");
  LLVMBuildCondBr(g->b, fast, then, other);

  LLVMPositionBuilderAtEnd(g->b, then);
  LLVMValueRef p = element_at(w, l, row, col);
  LLVMValueRef v = ptx_load(g, LLVMVectorType(lane_ty, lanes), p, CHUNK);
  LLVMValueRef packed = LLVMGetUndef(vec_ty);
  for (unsigned e = 0; e < lanes; e++) {
    LLVMValueRef idx = LLVMConstInt(g->i32, e, false);
    LLVMValueRef x = tile_element(w, LLVMBuildExtractElement(g->b, v, idx, ""));
    packed = LLVMBuildInsertElement(g->b, packed, x, idx, "");
  }
  LLVMBuildStore(g->b, LLVMBuildBitCast(g->b, packed, w->v4i32, ""), var);
  LLVMBuildBr(g->b, join);

  LLVMPositionBuilderAtEnd(g->b, other);
  LLVMValueRef lanes_var = ptx_var(g, vec_ty, LLVMConstNull(vec_ty));
  for (unsigned e = 0; e < lanes; e++) {
    LLVMValueRef c = LLVMBuildAdd(g->b, col, ptx_i64(g, e), "");
    LLVMValueRef in = LLVMBuildAnd(g->b, row_in, LLVMBuildICmp(g->b, LLVMIntSLT, c, col_end, ""), "");
    LLVMBasicBlockRef after = ptx_if_begin(g, in);
    LLVMValueRef x = tile_element(w, ptx_load(g, lane_ty, element_at(w, l, row, c), g->d->matmul.align));
    LLVMValueRef cur = LLVMBuildLoad2(g->b, vec_ty, lanes_var, "");
    cur = LLVMBuildInsertElement(g->b, cur, x, LLVMConstInt(g->i32, e, false), "");
    LLVMBuildStore(g->b, cur, lanes_var);
    ptx_if_end(g, after);
  }
  LLVMValueRef all = LLVMBuildLoad2(g->b, vec_ty, lanes_var, "");
  LLVMBuildStore(g->b, LLVMBuildBitCast(g->b, all, w->v4i32, ""), var);
  LLVMBuildBr(g->b, join);
  LLVMPositionBuilderAtEnd(g->b, join);
}

/* Where chunk q of this thread lies in the A tile (row, k) and the B tile
 * (k, col), and its byte offset in the fragment-major shared tile. */
typedef struct {
  LLVMValueRef a_row, a_k, a_off, b_k, b_col, b_off;
} wm_chunk;

static wm_chunk chunk_place(wm_gen *w, unsigned q) {
  ptx_gen *g = w->g;
  const wm_shape *s = w->s;
  int64_t lanes = CHUNK / s->esize, fbytes = 16 * s->fk * s->esize;
  LLVMValueRef c = LLVMBuildAdd(g->b, w->tid, ptx_i64(g, (int64_t)q * THREADS), "");
  wm_chunk p;
  int64_t a_per_row = s->bk / lanes;
  p.a_row = LLVMBuildSDiv(g->b, c, ptx_i64(g, a_per_row), "");
  p.a_k = mul_c(g, LLVMBuildSRem(g->b, c, ptx_i64(g, a_per_row), ""), lanes);
  /* ((k / fk) * FRAGS + row / 16) * fbytes + (row % 16) * fk * esize + (k % fk) * esize */
  LLVMValueRef frag = LLVMBuildAdd(g->b, mul_c(g, LLVMBuildSDiv(g->b, p.a_k, ptx_i64(g, s->fk), ""), FRAGS),
                                   LLVMBuildSDiv(g->b, p.a_row, ptx_i64(g, 16), ""), "");
  LLVMValueRef in = LLVMBuildAdd(g->b, mul_c(g, LLVMBuildSRem(g->b, p.a_row, ptx_i64(g, 16), ""), s->fk),
                                 LLVMBuildSRem(g->b, p.a_k, ptx_i64(g, s->fk), ""), "");
  p.a_off = LLVMBuildAdd(g->b, mul_c(g, frag, fbytes), mul_c(g, in, s->esize), "");
  int64_t b_per_row = BLOCK_TILE / lanes;
  p.b_k = LLVMBuildSDiv(g->b, c, ptx_i64(g, b_per_row), "");
  p.b_col = mul_c(g, LLVMBuildSRem(g->b, c, ptx_i64(g, b_per_row), ""), lanes);
  /* ((k / fk) * FRAGS + col / 16) * fbytes + (k % fk) * 16 * esize + (col % 16) * esize */
  frag = LLVMBuildAdd(g->b, mul_c(g, LLVMBuildSDiv(g->b, p.b_k, ptx_i64(g, s->fk), ""), FRAGS),
                      LLVMBuildSDiv(g->b, p.b_col, ptx_i64(g, 16), ""), "");
  in = LLVMBuildAdd(g->b, mul_c(g, LLVMBuildSRem(g->b, p.b_k, ptx_i64(g, s->fk), ""), 16),
                    LLVMBuildSRem(g->b, p.b_col, ptx_i64(g, 16), ""), "");
  p.b_off = LLVMBuildAdd(g->b, mul_c(g, frag, fbytes), mul_c(g, in, s->esize), "");
  return p;
}

/* Global -> registers for the k-tile at k0 of block tile (i0, j0). */
static void load_stage(wm_gen *w, LLVMValueRef i0, LLVMValueRef j0, LLVMValueRef k0) {
  ptx_gen *g = w->g;
  const kn_matmul *m = &g->d->matmul;
  LLVMValueRef M = ptx_size(g, m->m), N = ptx_size(g, m->n), K = ptx_size(g, m->k);
  for (unsigned q = 0; q < CHUNKS; q++) {
    wm_chunk p = chunk_place(w, q);
    load_chunk(w, &m->a, w->a_vec_ok, LLVMBuildAdd(g->b, i0, p.a_row, ""), M,
               LLVMBuildAdd(g->b, k0, p.a_k, ""), K, w->chunk[0][q]);
    load_chunk(w, &m->b, w->b_vec_ok, LLVMBuildAdd(g->b, k0, p.b_k, ""), K,
               LLVMBuildAdd(g->b, j0, p.b_col, ""), N, w->chunk[1][q]);
  }
}

/* Registers -> shared buffer `buf` (0 or 1). */
static void store_stage(wm_gen *w, LLVMValueRef buf) {
  ptx_gen *g = w->g;
  LLVMValueRef base = shared_at(w, w->smem, mul_c(g, buf, STAGE));
  for (unsigned q = 0; q < CHUNKS; q++) {
    wm_chunk p = chunk_place(w, q);
    LLVMValueRef a = LLVMBuildLoad2(g->b, w->v4i32, w->chunk[0][q], "");
    LLVMValueRef b = LLVMBuildLoad2(g->b, w->v4i32, w->chunk[1][q], "");
    ptx_store(g, a, shared_at(w, base, p.a_off), CHUNK);
    ptx_store(g, b, shared_at(w, base, LLVMBuildAdd(g->b, p.b_off, ptx_i64(g, STAGE / 2), "")), CHUNK);
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

/* The warp's 4x2 fragments of C += A tile x B tile, from buffer `buf`.
 * Fragment rows of this warp: warp_m * 4 + fi; columns warp_n * 2 + fj. */
static void compute_stage(wm_gen *w, LLVMValueRef buf) {
  ptx_gen *g = w->g;
  const wm_shape *s = w->s;
  LLVMValueRef base = shared_at(w, w->smem, mul_c(g, buf, STAGE));
  int64_t fbytes = 16 * s->fk * s->esize;
  LLVMValueRef a_base = shared_at(w, base, mul_c(g, w->warp_m, WARP_FRAGS_M * fbytes));
  LLVMValueRef b_base = shared_at(w, base, LLVMBuildAdd(g->b, ptx_i64(g, STAGE / 2),
                                                        mul_c(g, w->warp_n, WARP_FRAGS_N * fbytes), ""));
  for (unsigned ks = 0; ks < s->bk / s->fk; ks++) {
    LLVMValueRef a[WARP_FRAGS_M], b[WARP_FRAGS_N];
    for (unsigned fi = 0; fi < WARP_FRAGS_M; fi++)
      a[fi] = load_frag(w, s->load_a, w->afrag, a_base, (int64_t)ks * FRAGS + fi, s->fk);
    for (unsigned fj = 0; fj < WARP_FRAGS_N; fj++)
      b[fj] = load_frag(w, s->load_b, w->bfrag, b_base, (int64_t)ks * FRAGS + fj, 16);
    for (unsigned f = 0; f < WARP_FRAGS_M * WARP_FRAGS_N; f++) {
      LLVMValueRef args[16];
      unsigned n = 0;
      for (unsigned r = 0; r < s->a_regs; r++)
        args[n++] = LLVMBuildExtractValue(g->b, a[f / WARP_FRAGS_N], r, "");
      for (unsigned r = 0; r < s->b_regs; r++)
        args[n++] = LLVMBuildExtractValue(g->b, b[f % WARP_FRAGS_N], r, "");
      LLVMValueRef c = LLVMBuildLoad2(g->b, w->acc, w->accs[f], "");
      for (unsigned r = 0; r < 8; r++) args[n++] = LLVMBuildExtractValue(g->b, c, r, "");
      LLVMBuildStore(g->b, ptx_call(g, s->mma, w->acc, args, n), w->accs[f]);
    }
  }
}

static void warp_sync(ptx_gen *g) {
  LLVMValueRef all = LLVMConstInt(g->i32, 0xffffffffu, false);
  ptx_call(g, "llvm.nvvm.bar.warp.sync", LLVMVoidTypeInContext(g->ctx), &all, 1);
}

/* C fragment f -> the warp's staging square -> C in global memory, element
 * by element with bounds checks (and C's old value added when asked). */
static void store_fragment(wm_gen *w, unsigned f, LLVMValueRef i0, LLVMValueRef j0) {
  ptx_gen *g = w->g;
  const kn_matmul *m = &g->d->matmul;
  LLVMTypeRef ety = w->s->tf32 ? g->f32 : g->i32;
  LLVMValueRef square = shared_at(w, w->stage, mul_c(g, w->warp, 16 * 16 * 4));
  LLVMValueRef args[10];
  LLVMValueRef c = LLVMBuildLoad2(g->b, w->acc, w->accs[f], "");
  args[0] = square;
  for (unsigned r = 0; r < 8; r++) args[1 + r] = LLVMBuildExtractValue(g->b, c, r, "");
  args[9] = LLVMConstInt(g->i32, 16, false);
  ptx_call(g, w->s->store, LLVMVoidTypeInContext(g->ctx), args, 10);
  warp_sync(g);
  LLVMValueRef row0 = LLVMBuildAdd(g->b, i0, mul_c(g, w->warp_m, WARP_FRAGS_M * 16), "");
  row0 = LLVMBuildAdd(g->b, row0, ptx_i64(g, (int64_t)(f / WARP_FRAGS_N) * 16), "");
  LLVMValueRef col0 = LLVMBuildAdd(g->b, j0, mul_c(g, w->warp_n, WARP_FRAGS_N * 16), "");
  col0 = LLVMBuildAdd(g->b, col0, ptx_i64(g, (int64_t)(f % WARP_FRAGS_N) * 16), "");
  for (unsigned q = 0; q < 8; q++) {
    LLVMValueRef e = LLVMBuildAdd(g->b, w->lane, ptx_i64(g, 32 * q), "");
    LLVMValueRef i = LLVMBuildAdd(g->b, row0, LLVMBuildSDiv(g->b, e, ptx_i64(g, 16), ""), "");
    LLVMValueRef j = LLVMBuildAdd(g->b, col0, LLVMBuildSRem(g->b, e, ptx_i64(g, 16), ""), "");
    LLVMValueRef in = LLVMBuildAnd(g->b, LLVMBuildICmp(g->b, LLVMIntSLT, i, ptx_size(g, m->m), ""),
                                   LLVMBuildICmp(g->b, LLVMIntSLT, j, ptx_size(g, m->n), ""), "");
    LLVMBasicBlockRef join = ptx_if_begin(g, in);
    LLVMValueRef v = ptx_load(g, ety, LLVMBuildGEP2(g->b, ety, square, &e, 1, ""), 4);
    LLVMValueRef r = LLVMBuildMul(g->b, i, ptx_size(g, m->c.row_stride), "");
    LLVMValueRef cc = LLVMBuildMul(g->b, j, ptx_size(g, m->c.col_stride), "");
    LLVMValueRef off = mul_c(g, LLVMBuildAdd(g->b, r, cc, ""), 4);
    LLVMValueRef p = ptx_global_at(g, LLVMBuildAdd(g->b, ptx_size(g, m->c.offset), off, ""));
    if (m->accumulate) {
      LLVMValueRef old = ptx_load(g, ety, p, m->align);
      v = w->s->tf32 ? LLVMBuildFAdd(g->b, old, v, "") : LLVMBuildAdd(g->b, old, v, "");
    }
    ptx_store(g, v, p, m->align);
    ptx_if_end(g, join);
  }
  warp_sync(g);
}

/* One 128x128 block tile of C over the whole k range. */
static void block_tile(wm_gen *w, LLVMValueRef i0, LLVMValueRef j0) {
  ptx_gen *g = w->g;
  LLVMValueRef K = ptx_size(g, g->d->matmul.k);
  for (unsigned f = 0; f < WARP_FRAGS_M * WARP_FRAGS_N; f++)
    LLVMBuildStore(g->b, LLVMConstNull(w->acc), w->accs[f]);
  load_stage(w, i0, j0, ptx_i64(g, 0));
  store_stage(w, ptx_i64(g, 0));
  ptx_barrier(g);
  ptx_loop kt;
  ptx_loop_begin(g, &kt, ptx_i64(g, 0), K, ptx_i64(g, w->s->bk));
  LLVMValueRef buf = LLVMBuildAnd(g->b, LLVMBuildSDiv(g->b, kt.iv, ptx_i64(g, w->s->bk), ""),
                                  ptx_i64(g, 1), "");
  LLVMValueRef next = LLVMBuildAdd(g->b, kt.iv, ptx_i64(g, w->s->bk), "");
  LLVMValueRef more = LLVMBuildICmp(g->b, LLVMIntSLT, next, K, "");
  LLVMBasicBlockRef join = ptx_if_begin(g, more);
  load_stage(w, i0, j0, next);
  ptx_if_end(g, join);
  compute_stage(w, buf);
  join = ptx_if_begin(g, more);
  store_stage(w, LLVMBuildXor(g->b, buf, ptx_i64(g, 1), ""));
  ptx_if_end(g, join);
  ptx_barrier(g);
  ptx_loop_end(g, &kt);
  for (unsigned f = 0; f < WARP_FRAGS_M * WARP_FRAGS_N; f++) store_fragment(w, f, i0, j0);
}

static void wm_init(wm_gen *w, ptx_gen *g, const wm_shape *s) {
  *w = (wm_gen){.g = g, .s = s};
  w->v4i32 = LLVMVectorType(g->i32, 4);
  w->afrag = struct_of(g, g->i32, s->a_regs);
  w->bfrag = struct_of(g, g->i32, s->b_regs);
  w->acc = struct_of(g, s->tf32 ? g->f32 : g->i32, 8);
  w->smem = ptx_shared_array(g, g->i8, 2 * STAGE, "wmma_tiles");
  w->stage = ptx_shared_array(g, g->i8, THREADS / 32 * 16 * 16 * 4, "wmma_c");
  LLVMSetAlignment(w->smem, 128);
  LLVMSetAlignment(w->stage, 128);
  w->tid = LLVMBuildAdd(g->b, mul_c(g, ptx_sreg(g, "tid.y"), 16), ptx_sreg(g, "tid.x"), "");
  w->warp = LLVMBuildSDiv(g->b, w->tid, ptx_i64(g, 32), "");
  w->lane = LLVMBuildSRem(g->b, w->tid, ptx_i64(g, 32), "");
  w->warp_m = LLVMBuildSDiv(g->b, w->warp, ptx_i64(g, 4), "");
  w->warp_n = LLVMBuildSRem(g->b, w->warp, ptx_i64(g, 4), "");
  w->a_vec_ok = vector_ok(w, &g->d->matmul.a);
  w->b_vec_ok = vector_ok(w, &g->d->matmul.b);
  for (unsigned m = 0; m < 2; m++)
    for (unsigned q = 0; q < CHUNKS; q++) w->chunk[m][q] = ptx_var(g, w->v4i32, NULL);
  for (unsigned f = 0; f < WARP_FRAGS_M * WARP_FRAGS_N; f++) w->accs[f] = ptx_var(g, w->acc, NULL);
}

/* Block tiles are assigned by block index only, so every thread of a
 * block reaches the same barriers. */
static bool wmma_build(ptx_gen *g) {
  const kn_matmul *m = &g->d->matmul;
  if (!arch_has_wmma(g->sm)) return ptx_kind_matmul.build(g);
  const wm_shape *s = m->type == KN_MM_F32 ? &shape_tf32 : m->ab_signed ? &shape_i8 : &shape_u8;
  wm_gen w;
  wm_init(&w, g, s);
  LLVMValueRef tiles_m = LLVMBuildSDiv(g->b, LLVMBuildAdd(g->b, ptx_size(g, m->m), ptx_i64(g, BLOCK_TILE - 1), ""),
                                       ptx_i64(g, BLOCK_TILE), "");
  LLVMValueRef tiles_n = LLVMBuildSDiv(g->b, LLVMBuildAdd(g->b, ptx_size(g, m->n), ptx_i64(g, BLOCK_TILE - 1), ""),
                                       ptx_i64(g, BLOCK_TILE), "");
  ptx_loop ti, tj;
  ptx_loop_begin(g, &ti, ptx_sreg(g, "ctaid.y"), tiles_m, ptx_sreg(g, "nctaid.y"));
  ptx_loop_begin(g, &tj, ptx_sreg(g, "ctaid.x"), tiles_n, ptx_sreg(g, "nctaid.x"));
  block_tile(&w, mul_c(g, ti.iv, BLOCK_TILE), mul_c(g, tj.iv, BLOCK_TILE));
  ptx_loop_end(g, &tj);
  ptx_loop_end(g, &ti);
  LLVMBuildRetVoid(g->b);
  return true;
}

static bool wmma_check(const kn_desc *d, tw_diag *diag) { return ptx_kind_matmul.check(d, diag); }

/* The exact kernel's block shape (16x16 threads), one block per 128x128
 * tile of C. */
static void wmma_launch(const kn_desc *d, ptx_launch *l) {
  *l = (ptx_launch){.block = {16, 16, 1},
                    .count = {d->matmul.n, d->matmul.m, {false, 1}},
                    .per_block = {BLOCK_TILE, BLOCK_TILE, 1},
                    .max_grid = {65535, 65535, 1}};
}

const ptx_kind ptx_kind_wmma = {wmma_check, wmma_build, wmma_launch, false};
