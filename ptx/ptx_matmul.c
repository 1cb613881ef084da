/* ptx_matmul.c: exact matrix multiplication.  A 16x16 block owns a 16x16
 * tile of C, one thread per element; A and B pass through shared memory in
 * 16x16 tiles, and each thread adds its products in k order, one rounding
 * per multiply and per add, so every element matches the CPU loop bit for
 * bit.  Blocks stride over tiles, so any grid is correct. */
#include "ptx_internal.h"

enum { TILE = 16 };

typedef struct {
  LLVMTypeRef elem, acc;   /* memory element of A/B, accumulator (= C) */
  kn_type elem_kind, acc_kind;
  bool fl;
} mm_types;

static mm_types types_of(ptx_gen *g, kn_mm_type t) {
  static const kn_type elems[] = {KN_F32, KN_F64, KN_I32, KN_I8};
  static const kn_type accs[] = {KN_F32, KN_F64, KN_I32, KN_I32};
  return (mm_types){ptx_type(g, elems[t]), ptx_type(g, accs[t]), elems[t], accs[t],
                    t == KN_MM_F32 || t == KN_MM_F64};
}

static bool matmul_check(const kn_desc *d, tw_diag *diag) {
  const kn_matmul *m = &d->matmul;
  if ((unsigned)m->type > KN_MM_I8_I32)
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "matmul kernel: unknown element type");
  if (m->align & (m->align - 1))
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "matmul kernel: alignment is not a power of 2");
  const kn_size sizes[] = {m->m, m->n, m->k, m->a.offset, m->a.row_stride, m->a.col_stride,
                           m->b.offset, m->b.row_stride, m->b.col_stride, m->c.offset,
                           m->c.row_stride, m->c.col_stride};
  for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    if (!ptx_size_check(d, sizes[i], "matmul size", diag)) return false;
  return true;
}

/* Address of element (row, col) of a matrix with elements of `bytes`. */
static LLVMValueRef element_at(ptx_gen *g, const kn_layout *l, unsigned bytes, LLVMValueRef row,
                               LLVMValueRef col) {
  LLVMValueRef r = LLVMBuildMul(g->b, row, ptx_size(g, l->row_stride), "");
  LLVMValueRef c = LLVMBuildMul(g->b, col, ptx_size(g, l->col_stride), "");
  LLVMValueRef index = LLVMBuildAdd(g->b, r, c, "");
  LLVMValueRef off = LLVMBuildMul(g->b, index, ptx_i64(g, bytes), "");
  return ptx_global_at(g, LLVMBuildAdd(g->b, ptx_size(g, l->offset), off, ""));
}

static LLVMValueRef in_range(ptx_gen *g, LLVMValueRef a, LLVMValueRef a_end, LLVMValueRef b,
                             LLVMValueRef b_end) {
  return LLVMBuildAnd(g->b, LLVMBuildICmp(g->b, LLVMIntSLT, a, a_end, ""),
                      LLVMBuildICmp(g->b, LLVMIntSLT, b, b_end, ""), "");
}

/* tile[ty][tx] = in range ? widen(M[row][col]) : 0; nothing is read out of
 * range (the runtime checked only the ranges the loop touches). */
static void fill_tile(ptx_gen *g, const mm_types *ty, const kn_layout *l, LLVMValueRef ok,
                      LLVMValueRef row, LLVMValueRef col, LLVMValueRef slot) {
  const kn_matmul *m = &g->d->matmul;
  LLVMValueRef value = ptx_var(g, ty->acc, LLVMConstNull(ty->acc));
  LLVMBasicBlockRef join = ptx_if_begin(g, ok);
  LLVMValueRef p = element_at(g, l, ptx_type_bytes(ty->elem_kind), row, col);
  LLVMValueRef v = ptx_load(g, ty->elem, p, m->align);
  if (ty->elem != ty->acc)
    v = m->ab_signed ? LLVMBuildSExt(g->b, v, ty->acc, "") : LLVMBuildZExt(g->b, v, ty->acc, "");
  LLVMBuildStore(g->b, v, value);
  ptx_if_end(g, join);
  ptx_store(g, LLVMBuildLoad2(g->b, ty->acc, value, ""), slot, ptx_type_bytes(ty->acc_kind));
}

static LLVMValueRef tile_slot(ptx_gen *g, LLVMTypeRef t, LLVMValueRef tile, LLVMValueRef row,
                              LLVMValueRef col) {
  LLVMValueRef index = LLVMBuildAdd(g->b, LLVMBuildMul(g->b, row, ptx_i64(g, TILE), ""), col, "");
  return LLVMBuildGEP2(g->b, t, tile, &index, 1, "");
}

/* acc = acc + As[ty][kk] * Bs[kk][tx] for the kk of this tile below K. */
static void multiply_tile(ptx_gen *g, const mm_types *ty, LLVMValueRef acc, LLVMValueRef tiles[2],
                          LLVMValueRef tid[2], LLVMValueRef k0, LLVMValueRef k) {
  unsigned align = ptx_type_bytes(ty->acc_kind);
  LLVMValueRef kmax = ptx_smin(g, ptx_i64(g, TILE), LLVMBuildSub(g->b, k, k0, ""));
  ptx_loop kk;
  ptx_loop_begin(g, &kk, ptx_i64(g, 0), kmax, ptx_i64(g, 1));
  LLVMValueRef a = ptx_load(g, ty->acc, tile_slot(g, ty->acc, tiles[0], tid[1], kk.iv), align);
  LLVMValueRef b = ptx_load(g, ty->acc, tile_slot(g, ty->acc, tiles[1], kk.iv, tid[0]), align);
  LLVMValueRef sum = LLVMBuildLoad2(g->b, ty->acc, acc, "");
  sum = ty->fl ? LLVMBuildFAdd(g->b, sum, LLVMBuildFMul(g->b, a, b, ""), "")
               : LLVMBuildAdd(g->b, sum, LLVMBuildMul(g->b, a, b, ""), "");
  LLVMBuildStore(g->b, sum, acc);
  ptx_loop_end(g, &kk);
}

/* One C tile: i, j are this thread's element, valid when `inside`. */
static void compute_tile(ptx_gen *g, const mm_types *ty, LLVMValueRef tiles[2], LLVMValueRef tid[2],
                         LLVMValueRef i, LLVMValueRef j) {
  const kn_matmul *m = &g->d->matmul;
  LLVMValueRef M = ptx_size(g, m->m), N = ptx_size(g, m->n), K = ptx_size(g, m->k);
  LLVMValueRef inside = in_range(g, i, M, j, N);
  LLVMValueRef acc = ptx_var(g, ty->acc, LLVMConstNull(ty->acc));
  if (m->accumulate) {
    LLVMBasicBlockRef join = ptx_if_begin(g, inside);
    LLVMValueRef c = element_at(g, &m->c, ptx_type_bytes(ty->acc_kind), i, j);
    LLVMBuildStore(g->b, ptx_load(g, ty->acc, c, m->align), acc);
    ptx_if_end(g, join);
  }
  ptx_loop k0;
  ptx_loop_begin(g, &k0, ptx_i64(g, 0), K, ptx_i64(g, TILE));
  LLVMValueRef a_col = LLVMBuildAdd(g->b, k0.iv, tid[0], "");
  LLVMValueRef b_row = LLVMBuildAdd(g->b, k0.iv, tid[1], "");
  fill_tile(g, ty, &m->a, in_range(g, i, M, a_col, K), i, a_col,
            tile_slot(g, ty->acc, tiles[0], tid[1], tid[0]));
  fill_tile(g, ty, &m->b, in_range(g, b_row, K, j, N), b_row, j,
            tile_slot(g, ty->acc, tiles[1], tid[1], tid[0]));
  ptx_barrier(g);
  multiply_tile(g, ty, acc, tiles, tid, k0.iv, K);
  ptx_barrier(g);
  ptx_loop_end(g, &k0);
  LLVMBasicBlockRef join = ptx_if_begin(g, inside);
  LLVMValueRef c = element_at(g, &m->c, ptx_type_bytes(ty->acc_kind), i, j);
  ptx_store(g, LLVMBuildLoad2(g->b, ty->acc, acc, ""), c, m->align);
  ptx_if_end(g, join);
}

static LLVMValueRef tile_count(ptx_gen *g, kn_size s) {
  LLVMValueRef n = LLVMBuildAdd(g->b, ptx_size(g, s), ptx_i64(g, TILE - 1), "");
  return LLVMBuildSDiv(g->b, n, ptx_i64(g, TILE), "");
}

/* Tile loops depend only on block indices, so every thread of a block
 * reaches the same barriers. */
static bool matmul_build(ptx_gen *g) {
  const kn_matmul *m = &g->d->matmul;
  mm_types ty = types_of(g, m->type);
  LLVMValueRef tiles[2] = {ptx_shared_array(g, ty.acc, TILE * TILE, "tile_a"),
                           ptx_shared_array(g, ty.acc, TILE * TILE, "tile_b")};
  LLVMValueRef tid[2] = {ptx_sreg(g, "tid.x"), ptx_sreg(g, "tid.y")};
  ptx_loop ti, tj;
  ptx_loop_begin(g, &ti, ptx_sreg(g, "ctaid.y"), tile_count(g, m->m), ptx_sreg(g, "nctaid.y"));
  ptx_loop_begin(g, &tj, ptx_sreg(g, "ctaid.x"), tile_count(g, m->n), ptx_sreg(g, "nctaid.x"));
  LLVMValueRef i = LLVMBuildAdd(g->b, LLVMBuildMul(g->b, ti.iv, ptx_i64(g, TILE), ""), tid[1], "");
  LLVMValueRef j = LLVMBuildAdd(g->b, LLVMBuildMul(g->b, tj.iv, ptx_i64(g, TILE), ""), tid[0], "");
  compute_tile(g, &ty, tiles, tid, i, j);
  ptx_loop_end(g, &tj);
  ptx_loop_end(g, &ti);
  LLVMBuildRetVoid(g->b);
  return true;
}

static void matmul_launch(const kn_desc *d, ptx_launch *l) {
  *l = (ptx_launch){.block = {TILE, TILE, 1},
                    .count = {d->matmul.n, d->matmul.m, {false, 1}},
                    .per_block = {TILE, TILE, 1},
                    .max_grid = {65535, 65535, 1}};
}

const ptx_kind ptx_kind_matmul = {matmul_check, matmul_build, matmul_launch, false};
