/* ptx_batch.c: batched small products (a loop around a product whose m, n
 * and k are constants of at most 32).  A block of 8 warps takes 8 products
 * of the batch per step and blocks stride over the batch, so one launch
 * fills the GPU however small each product is.  The exact body (every arch
 * and type): the block stages A and B of its 8 products, widened, in
 * shared memory (where they fit in 48 KiB; else it reads them from global
 * memory), then its threads stride over strips of 4 C elements of a row,
 * each element summed in source k order with one rounding per multiply
 * and per add (never fused), bit-identical to the CPU loop.  On
 * sm_80+, int8 products (exact: s32 sums wrap like Wasm i32) and f32 ones
 * with --tensor-cores=tf32 (inputs rounded to tf32) take tensor cores: one
 * warp per product, C as 16x8 tiles of mma.sync (m16n8k32 s8/u8, m16n8k8
 * tf32), fragments loaded straight from global memory with zeros past the
 * edges of k, rows and columns (zero terms: exact for integer sums).
 * Indices past an edge are clamped to the last row, column or k before the
 * load, so nothing outside the ranges the runtime checked is read. */
#include "ptx_internal.h"

enum {
  WARPS = 8,
  THREADS = WARPS * 32,
  PER_BLOCK = WARPS,         /* products a block takes per step */
  MAX_SIDE = PTX_BATCH_MAX_SIDE,
  MAX_GRID = 1 << 20,
};

typedef struct {
  ptx_gen *g;
  const kn_matmul *m;
  int64_t M, N, K;
  LLVMTypeRef elem, acc;       /* A/B element in memory, C element */
  unsigned elem_bytes, acc_bytes;
  unsigned align_ab, align_c;  /* of the global accesses of this body */
  bool fl;
  LLVMValueRef tid;
  LLVMValueRef sa, sb;         /* shared A and B tiles of the staged body, or NULL */
} bt_gen;

static bool small(kn_size s) { return !s.is_param && s.value >= 1 && s.value <= MAX_SIDE; }

bool ptx_batch_small(const kn_matmul *m) {
  return m->batched && small(m->m) && small(m->n) && small(m->k) && !kn_matmul_scaled(m);
}

static LLVMValueRef i64c(bt_gen *w, int64_t v) { return ptx_i64(w->g, v); }

/* min(v, last) for an i64 index. */
static LLVMValueRef clamp(bt_gen *w, LLVMValueRef v, int64_t last) { return ptx_smin(w->g, v, i64c(w, last)); }

/* A[row][col] or B[row][col] of product b as it lies in memory (no
 * widening), the indices clamped into the matrix. */
static LLVMValueRef load_ab(bt_gen *w, const kn_layout *l, int64_t rows, int64_t cols, LLVMValueRef b,
                            LLVMValueRef row, LLVMValueRef col) {
  ptx_gen *g = w->g;
  LLVMValueRef p = ptx_element_at(g, l, w->elem_bytes, b, clamp(w, row, rows - 1), clamp(w, col, cols - 1));
  return ptx_load(g, w->elem, p, w->align_ab);
}

/* v, an element of A or B (l), as the accumulator type. */
static LLVMValueRef widen(bt_gen *w, const kn_layout *l, LLVMValueRef v) {
  return ptx_widen_operand(w->g, l, v, w->acc);
}

/* ---- exact body: one thread per C element ------------------------------- */

/* C[i][j] of product b: (C or 0) + A[i][0]*B[0][j] + ... in k order. */
static void exact_element(bt_gen *w, LLVMValueRef b, LLVMValueRef i, LLVMValueRef j) {
  ptx_gen *g = w->g;
  const kn_matmul *m = w->m;
  LLVMValueRef pc = ptx_element_at(g, &m->c, w->acc_bytes, b, i, j);
  LLVMValueRef sum = m->accumulate ? ptx_load(g, w->acc, ptx_element_at(g, kn_matmul_start(m), w->acc_bytes, b, i, j), w->align_c)
                                   : LLVMConstNull(w->acc);
  for (int64_t k = 0; k < w->K; k++) {
    LLVMValueRef a = widen(w, &m->a, ptx_load(g, w->elem, ptx_element_at(g, &m->a, w->elem_bytes, b, i, i64c(w, k)), w->align_ab));
    LLVMValueRef x = widen(w, &m->b, ptx_load(g, w->elem, ptx_element_at(g, &m->b, w->elem_bytes, b, i64c(w, k), j), w->align_ab));
    sum = w->fl ? LLVMBuildFAdd(g->b, sum, LLVMBuildFMul(g->b, a, x, ""), "")
                : LLVMBuildAdd(g->b, sum, LLVMBuildMul(g->b, a, x, ""), "");
  }
  ptx_store(g, sum, pc, w->align_c);
}

/* The block's threads over the M*N elements of each of its products. */
static void exact_group(bt_gen *w, LLVMValueRef first) {
  ptx_gen *g = w->g;
  int64_t mn = w->M * w->N;
  ptx_loop e;
  ptx_loop_begin(g, &e, w->tid, i64c(w, PER_BLOCK * mn), i64c(w, THREADS));
  LLVMValueRef b = ptx_add(g, first, LLVMBuildUDiv(g->b, e.iv, i64c(w, mn), ""));
  LLVMValueRef at = LLVMBuildURem(g->b, e.iv, i64c(w, mn), "");
  LLVMBasicBlockRef join = ptx_if_begin(g, ptx_below(g, b, ptx_size(g, w->m->batch)));
  exact_element(w, b, LLVMBuildUDiv(g->b, at, i64c(w, w->N), ""), LLVMBuildURem(g->b, at, i64c(w, w->N), ""));
  ptx_if_end(g, join);
  ptx_loop_end(g, &e);
}

/* ---- staged exact body: the block's products through shared memory ----- */

enum { STRIP = 4, SMEM_LIMIT = 48 * 1024 };

/* Whether A and B of PER_BLOCK products fit in static shared memory. */
static bool stageable(const bt_gen *w) {
  return (uint64_t)PER_BLOCK * (uint64_t)(w->M * w->K + w->K * w->N) * w->acc_bytes <= SMEM_LIMIT;
}

static LLVMValueRef smem_at(bt_gen *w, LLVMValueRef base, LLVMValueRef index) {
  return LLVMBuildGEP2(w->g->b, w->acc, base, &index, 1, "");
}

/* Matrix `l` (rows x cols) of the block's products, widened, into shared
 * memory at base: product p at p * rows * cols, row-major; products past
 * the batch get zeros.  Consecutive threads take consecutive columns, so
 * row-major matrices load coalesced. */
static void stage(bt_gen *w, const kn_layout *l, int64_t rows, int64_t cols, LLVMValueRef first,
                  LLVMValueRef base) {
  ptx_gen *g = w->g;
  int64_t size = rows * cols;
  ptx_loop e;
  ptx_loop_begin(g, &e, w->tid, i64c(w, PER_BLOCK * size), i64c(w, THREADS));
  LLVMValueRef b = ptx_add(g, first, LLVMBuildUDiv(g->b, e.iv, i64c(w, size), ""));
  LLVMValueRef at = LLVMBuildURem(g->b, e.iv, i64c(w, size), "");
  LLVMValueRef slot = smem_at(w, base, e.iv);
  LLVMValueRef in = ptx_below(g, b, ptx_size(g, w->m->batch));
  LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "stage");
  LLVMBasicBlockRef other = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "past");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "staged");
  LLVMBuildCondBr(g->b, in, then, other);
  LLVMPositionBuilderAtEnd(g->b, then);
  LLVMValueRef p = ptx_element_at(g, l, w->elem_bytes, b, LLVMBuildUDiv(g->b, at, i64c(w, cols), ""),
                                  LLVMBuildURem(g->b, at, i64c(w, cols), ""));
  ptx_store(g, widen(w, l, ptx_load(g, w->elem, p, w->align_ab)), slot, w->acc_bytes);
  LLVMBuildBr(g->b, join);
  LLVMPositionBuilderAtEnd(g->b, other);
  ptx_store(g, LLVMConstNull(w->acc), slot, w->acc_bytes);
  LLVMBuildBr(g->b, join);
  LLVMPositionBuilderAtEnd(g->b, join);
  ptx_loop_end(g, &e);
}

/* After staging, each thread takes strips of STRIP columns of a row of C:
 * per k one shared read of A and STRIP of B, then c = c + a * b for each
 * column, in k order (separate multiply and add), as the direct body. */
static void staged_group(bt_gen *w, LLVMValueRef first, LLVMValueRef sa, LLVMValueRef sb) {
  ptx_gen *g = w->g;
  const kn_matmul *m = w->m;
  stage(w, &m->a, w->M, w->K, first, sa);
  stage(w, &m->b, w->K, w->N, first, sb);
  ptx_barrier(g);
  int64_t strips = (w->N + STRIP - 1) / STRIP, per = w->M * strips;
  ptx_loop e;
  ptx_loop_begin(g, &e, w->tid, i64c(w, PER_BLOCK * per), i64c(w, THREADS));
  LLVMValueRef pl = LLVMBuildUDiv(g->b, e.iv, i64c(w, per), "");
  LLVMValueRef at = LLVMBuildURem(g->b, e.iv, i64c(w, per), "");
  LLVMValueRef i = LLVMBuildUDiv(g->b, at, i64c(w, strips), "");
  LLVMValueRef j0 = ptx_mul_c(g, LLVMBuildURem(g->b, at, i64c(w, strips), ""), STRIP);
  LLVMValueRef b = ptx_add(g, first, pl);
  LLVMBasicBlockRef join = ptx_if_begin(g, ptx_below(g, b, ptx_size(g, m->batch)));
  LLVMValueRef in[STRIP], pc[STRIP], sum[STRIP];
  for (unsigned c = 0; c < STRIP; c++) {
    LLVMValueRef j = ptx_add(g, j0, i64c(w, c));
    in[c] = ptx_below(g, j, i64c(w, w->N));
    /* columns past N name column N-1 (read, never stored), so every
     * address is one of C's */
    pc[c] = ptx_element_at(g, &m->c, w->acc_bytes, b, i, clamp(w, j, w->N - 1));
    sum[c] = m->accumulate ? ptx_load(g, w->acc, ptx_element_at(g, kn_matmul_start(m), w->acc_bytes, b, i, clamp(w, j, w->N - 1)),
                                      w->align_c)
                           : LLVMConstNull(w->acc);
  }
  LLVMValueRef a_row = ptx_add(g, ptx_mul_c(g, pl, w->M * w->K), ptx_mul_c(g, i, w->K));
  LLVMValueRef b_col = ptx_add(g, ptx_mul_c(g, pl, w->K * w->N), j0);
  for (int64_t k = 0; k < w->K; k++) {
    LLVMValueRef a = LLVMBuildLoad2(g->b, w->acc, smem_at(w, sa, ptx_add(g, a_row, i64c(w, k))), "");
    for (unsigned c = 0; c < STRIP; c++) {
      /* past N: the last column, within this product's tile */
      LLVMValueRef col = ptx_smin(g, ptx_add(g, j0, i64c(w, c)), i64c(w, w->N - 1));
      LLVMValueRef at_b = ptx_add(g, ptx_add(g, b_col, i64c(w, k * w->N)), LLVMBuildSub(g->b, col, j0, ""));
      LLVMValueRef x = LLVMBuildLoad2(g->b, w->acc, smem_at(w, sb, at_b), "");
      sum[c] = w->fl ? LLVMBuildFAdd(g->b, sum[c], LLVMBuildFMul(g->b, a, x, ""), "")
                     : LLVMBuildAdd(g->b, sum[c], LLVMBuildMul(g->b, a, x, ""), "");
    }
  }
  for (unsigned c = 0; c < STRIP; c++) {
    LLVMBasicBlockRef inside = ptx_if_begin(g, in[c]);
    ptx_store(g, sum[c], pc[c], w->align_c);
    ptx_if_end(g, inside);
  }
  ptx_if_end(g, join);
  ptx_loop_end(g, &e);
  ptx_barrier(g);
}

/* ---- tensor-core body: one warp per product ----------------------------- */

typedef struct {
  const char *mma;
  int64_t fk;                  /* k of one mma */
  unsigned a_regs, b_regs, per_reg; /* registers of A / B, elements per register */
  bool tf32;
} bt_shape;

static const bt_shape shape_s8 = {"llvm.nvvm.mma.m16n8k32.row.col.s8", 32, 4, 2, 4, false};
static const bt_shape shape_u8 = {"llvm.nvvm.mma.m16n8k32.row.col.u8", 32, 4, 2, 4, false};
/* mixed signedness: A's type first */
static const bt_shape shape_u8s8 = {"llvm.nvvm.mma.m16n8k32.row.col.u8.s8", 32, 4, 2, 4, false};
static const bt_shape shape_s8u8 = {"llvm.nvvm.mma.m16n8k32.row.col.s8.u8", 32, 4, 2, 4, false};
static const bt_shape shape_tf32 = {"llvm.nvvm.mma.m16n8k8.row.col.tf32", 8, 4, 2, 1, true};

/* Element x of the matrix, or 0 where (row, col) lies outside it. */
static LLVMValueRef edge_load(bt_gen *w, const kn_layout *l, int64_t rows, int64_t cols, LLVMValueRef b,
                              LLVMValueRef row, LLVMValueRef col) {
  ptx_gen *g = w->g;
  LLVMValueRef v = load_ab(w, l, rows, cols, b, row, col);
  LLVMValueRef in = LLVMBuildAnd(g->b, ptx_below(g, row, i64c(w, rows)), ptx_below(g, col, i64c(w, cols)), "");
  return LLVMBuildSelect(g->b, in, v, LLVMConstNull(w->elem), "");
}

/* One i32 register of a fragment from per_reg elements at (row, col0 + e)
 * (A) or (row0 + e, col) (B): int8 packed low byte first, tf32 rounded. */
static LLVMValueRef frag_reg(bt_gen *w, const bt_shape *s, bool is_a, LLVMValueRef b, LLVMValueRef row,
                             LLVMValueRef col) {
  ptx_gen *g = w->g;
  const kn_matmul *m = w->m;
  const kn_layout *l = is_a ? &m->a : &m->b;
  int64_t rows = is_a ? w->M : w->K, cols = is_a ? w->K : w->N;
  if (s->tf32) {
    LLVMValueRef v = edge_load(w, l, rows, cols, b, row, col);
    return ptx_call(g, "llvm.nvvm.f2tf32.rna", g->i32, &v, 1);
  }
  LLVMValueRef reg = LLVMConstInt(g->i32, 0, false);
  for (unsigned e = 0; e < s->per_reg; e++) {
    LLVMValueRef r = is_a ? row : ptx_add(g, row, i64c(w, e));
    LLVMValueRef c = is_a ? ptx_add(g, col, i64c(w, e)) : col;
    LLVMValueRef byte = LLVMBuildZExt(g->b, edge_load(w, l, rows, cols, b, r, c), g->i32, "");
    reg = LLVMBuildOr(g->b, reg, LLVMBuildShl(g->b, byte, LLVMConstInt(g->i32, 8 * e, false), ""), "");
  }
  return reg;
}

/* A register q of the m16n8 tile at row r0 for the k-step at k0:
 * int8 (m16n8k32) rows grp + 8 (q & 1), k 16 (q >> 1) + 4 tig + 0..3;
 * tf32 (m16n8k8) rows grp + 8 (q & 1), k tig + 4 (q >> 1). */
static LLVMValueRef a_reg(bt_gen *w, const bt_shape *s, LLVMValueRef b, LLVMValueRef grp, LLVMValueRef tig,
                          int64_t r0, int64_t k0, unsigned q) {
  ptx_gen *g = w->g;
  LLVMValueRef row = ptx_add(g, grp, i64c(w, r0 + 8 * (q & 1)));
  LLVMValueRef k = s->tf32 ? ptx_add(g, tig, i64c(w, k0 + 4 * (q >> 1)))
                           : ptx_add(g, ptx_mul_c(g, tig, 4), i64c(w, k0 + 16 * (q >> 1)));
  return frag_reg(w, s, true, b, row, k);
}

/* B register h at column c0 + grp: int8 k 16 h + 4 tig + 0..3; tf32 k tig + 4 h. */
static LLVMValueRef b_reg(bt_gen *w, const bt_shape *s, LLVMValueRef b, LLVMValueRef grp, LLVMValueRef tig,
                          int64_t c0, int64_t k0, unsigned h) {
  ptx_gen *g = w->g;
  LLVMValueRef col = ptx_add(g, grp, i64c(w, c0));
  LLVMValueRef k = s->tf32 ? ptx_add(g, tig, i64c(w, k0 + 4 * h))
                           : ptx_add(g, ptx_mul_c(g, tig, 4), i64c(w, k0 + 16 * h));
  return frag_reg(w, s, false, b, k, col);
}

/* C register r of the tile at (r0, c0): row grp + 8 (r >> 1), column
 * 2 tig + (r & 1); whether it lies inside C. */
static LLVMValueRef c_place(bt_gen *w, LLVMValueRef grp, LLVMValueRef tig, int64_t r0, int64_t c0, unsigned r,
                            LLVMValueRef *row, LLVMValueRef *col) {
  ptx_gen *g = w->g;
  *row = ptx_add(g, grp, i64c(w, r0 + 8 * (r >> 1)));
  *col = ptx_add(g, ptx_mul_c(g, tig, 2), i64c(w, c0 + (r & 1)));
  return LLVMBuildAnd(g->b, ptx_below(g, *row, i64c(w, w->M)), ptx_below(g, *col, i64c(w, w->N)), "");
}

/* The 16x8 C tile at (r0, c0) of product b: loaded (accumulate) or 0,
 * multiplied over all of k, stored where inside. */
static void mma_tile(bt_gen *w, const bt_shape *s, LLVMValueRef b, LLVMValueRef grp, LLVMValueRef tig,
                     int64_t r0, int64_t c0, LLVMValueRef a_regs[][4]) {
  ptx_gen *g = w->g;
  const kn_matmul *m = w->m;
  LLVMValueRef c[4], row[4], col[4], in[4];
  for (unsigned r = 0; r < 4; r++) {
    in[r] = c_place(w, grp, tig, r0, c0, r, &row[r], &col[r]);
    c[r] = LLVMConstNull(w->acc);
    if (!m->accumulate) continue;
    LLVMValueRef p = ptx_element_at(g, kn_matmul_start(m), w->acc_bytes, b, clamp(w, row[r], w->M - 1), clamp(w, col[r], w->N - 1));
    c[r] = LLVMBuildSelect(g->b, in[r], ptx_load(g, w->acc, p, w->align_c), c[r], "");
  }
  LLVMTypeRef quad = LLVMStructTypeInContext(g->ctx, (LLVMTypeRef[]){w->acc, w->acc, w->acc, w->acc}, 4, false);
  for (int64_t ks = 0; ks * s->fk < w->K; ks++) {
    LLVMValueRef args[10];
    unsigned n = 0;
    for (unsigned q = 0; q < s->a_regs; q++) args[n++] = a_regs[ks][q];
    for (unsigned h = 0; h < s->b_regs; h++) args[n++] = b_reg(w, s, b, grp, tig, c0, ks * s->fk, h);
    for (unsigned r = 0; r < 4; r++) args[n++] = c[r];
    LLVMValueRef d = ptx_call(g, s->mma, quad, args, n);
    for (unsigned r = 0; r < 4; r++) c[r] = LLVMBuildExtractValue(g->b, d, r, "");
  }
  for (unsigned r = 0; r < 4; r++) {
    LLVMBasicBlockRef join = ptx_if_begin(g, in[r]);
    ptx_store(g, c[r], ptx_element_at(g, &m->c, w->acc_bytes, b, row[r], col[r]), w->align_c);
    ptx_if_end(g, join);
  }
}

/* Warp `warp` of the block takes product first + warp (a warp-uniform
 * test: mma.sync wants all 32 lanes). */
static void mma_group(bt_gen *w, const bt_shape *s, LLVMValueRef first) {
  ptx_gen *g = w->g;
  LLVMValueRef lane = LLVMBuildURem(g->b, w->tid, i64c(w, 32), "");
  LLVMValueRef b = ptx_add(g, first, LLVMBuildUDiv(g->b, w->tid, i64c(w, 32), ""));
  LLVMValueRef grp = LLVMBuildUDiv(g->b, lane, i64c(w, 4), "");
  LLVMValueRef tig = LLVMBuildURem(g->b, lane, i64c(w, 4), "");
  LLVMBasicBlockRef join = ptx_if_begin(g, ptx_below(g, b, ptx_size(g, w->m->batch)));
  for (int64_t r0 = 0; r0 < w->M; r0 += 16) {
    LLVMValueRef a_regs[MAX_SIDE / 8][4];
    for (int64_t ks = 0; ks * s->fk < w->K; ks++)
      for (unsigned q = 0; q < s->a_regs; q++) a_regs[ks][q] = a_reg(w, s, b, grp, tig, r0, ks * s->fk, q);
    for (int64_t c0 = 0; c0 < w->N; c0 += 8) mma_tile(w, s, b, grp, tig, r0, c0, a_regs);
  }
  ptx_if_end(g, join);
}

/* ---- the kernel ---------------------------------------------------------- */

/* The plan's BATCH_MMA path: int8, or f32 with tf32. */
static const bt_shape *tensor_shape(const ptx_gen *g) {
  const kn_matmul *m = &g->d->matmul;
  if (g->path != TWASM_PATH_BATCH_MMA) return NULL;
  if (m->type == KN_MM_I8_I32)
    return m->a_signed ? (m->b_signed ? &shape_s8 : &shape_s8u8) : (m->b_signed ? &shape_u8s8 : &shape_u8);
  return &shape_tf32;
}

/* Blocks stride over groups of PER_BLOCK products. */
static void all_groups(bt_gen *w, const bt_shape *s) {
  ptx_gen *g = w->g;
  ptx_loop grp;
  ptx_loop_begin(g, &grp, ptx_mul_c(g, ptx_sreg(g, "ctaid.x"), PER_BLOCK), ptx_size(g, w->m->batch),
                 ptx_mul_c(g, ptx_sreg(g, "nctaid.x"), PER_BLOCK));
  if (s) mma_group(w, s, grp.iv);
  else if (w->sa) staged_group(w, grp.iv, w->sa, w->sb);
  else exact_group(w, grp.iv);
  ptx_loop_end(g, &grp);
}

static unsigned min_u(unsigned a, unsigned b) { return a < b ? a : b; }

/* Natural alignment unless the descriptor promises it: the body comes
 * twice, with natural alignment when the matrices have it at run time and
 * with the descriptor's otherwise (as ptx_matmul.c). */
static bool batch_build(ptx_gen *g) {
  const kn_matmul *m = &g->d->matmul;
  static const kn_type elems[] = {KN_F32, KN_F64, KN_I32, KN_I8};
  static const kn_type accs[] = {KN_F32, KN_F64, KN_I32, KN_I32};
  bt_gen w = {.g = g, .m = m, .M = m->m.value, .N = m->n.value, .K = m->k.value,
              .elem = ptx_type(g, elems[m->type]), .acc = ptx_type(g, accs[m->type]),
              .elem_bytes = ptx_type_bytes(elems[m->type]), .acc_bytes = ptx_type_bytes(accs[m->type]),
              .fl = m->type == KN_MM_F32 || m->type == KN_MM_F64, .tid = ptx_sreg(g, "tid.x")};
  const bt_shape *s = tensor_shape(g);
  if (!s && stageable(&w)) {
    w.sa = ptx_shared_array(g, w.acc, (unsigned)(PER_BLOCK * w.M * w.K), "bt_a");
    w.sb = ptx_shared_array(g, w.acc, (unsigned)(PER_BLOCK * w.K * w.N), "bt_b");
  }
  unsigned align = m->align ? m->align : 1;
  w.align_ab = w.elem_bytes;
  w.align_c = w.acc_bytes;
  if (align >= w.elem_bytes && align >= w.acc_bytes) {
    all_groups(&w, s);
  } else {
    LLVMValueRef ok = LLVMBuildAnd(g->b, ptx_layout_aligned(g, &m->a, w.elem_bytes), ptx_layout_aligned(g, &m->b, w.elem_bytes), "");
    ok = LLVMBuildAnd(g->b, ok, ptx_layout_aligned(g, &m->c, w.acc_bytes), "");
    LLVMBasicBlockRef fast = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "aligned");
    LLVMBasicBlockRef slow = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "unaligned");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "finished");
    LLVMBuildCondBr(g->b, ok, fast, slow);
    LLVMPositionBuilderAtEnd(g->b, fast);
    all_groups(&w, s);
    LLVMBuildBr(g->b, done);
    LLVMPositionBuilderAtEnd(g->b, slow);
    w.align_ab = min_u(align, w.elem_bytes);
    w.align_c = min_u(align, w.acc_bytes);
    all_groups(&w, s);
    LLVMBuildBr(g->b, done);
    LLVMPositionBuilderAtEnd(g->b, done);
  }
  LLVMBuildRetVoid(g->b);
  return true;
}

static bool batch_check(const kn_desc *d, tw_diag *diag) {
  if (!ptx_batch_small(&d->matmul))
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "batched matmul kernel: not a batch of small products");
  return ptx_kind_matmul.check(d, diag);
}

static void batch_launch(const kn_desc *d, ptx_launch *l) {
  *l = (ptx_launch){.block = {THREADS, 1, 1},
                    .count = {d->matmul.batch, {false, 1}, {false, 1}},
                    .per_block = {PER_BLOCK, 1, 1},
                    .max_grid = {MAX_GRID, 1, 1}};
}

const ptx_kind ptx_kind_batch = {batch_check, batch_build, batch_launch, false};
