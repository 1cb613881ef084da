/* ptx_map.c: elementwise map kernels (1-D and 2-D index spaces, stencils
 * included), grid-stride over the index space.  Wasm proves no alignment,
 * so one uniform branch at entry on the live addresses picks a copy of the
 * body: 16-byte vectors (1-D maps whose accesses are contiguous or
 * invariant, vector-aligned), accesses aligned to their element size, or
 * the descriptor's alignment (bytes).  1-D scalar copies take MAP_UNROLL
 * elements a grid apart per step and load all of them before storing any
 * (more memory traffic in flight), then the rest one by one. */
#include "ptx_internal.h"

/* 2-D: blocks of 32 x 2 threads, each taking 4 consecutive rows (the
 * fastest of the shapes and chunks timed on the H100 for a Jacobi step). */
enum { MAP_BLOCK_1D = 256, MAP_UNROLL = 4, MAP_BLOCK_X = 32, MAP_BLOCK_Y = 2, MAP_ROWS = 4 };
enum { MAP_VEC_BYTES = 16 };   /* ld.global.v4.b32: the widest access */

/* One memory access of the kernel: the output or a load the value uses. */
typedef struct {
  const kn_addr *addr;
  kn_type mem;
  int32_t node;            /* the load's node; -1: the output */
} map_access;

static bool map_check(const kn_desc *d, tw_diag *diag) {
  const kn_map *m = &d->map;
  if (m->ndims < 1 || m->ndims > KN_MAX_DIMS)
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "map kernel with %u dimensions", m->ndims);
  for (unsigned i = 0; i < m->ndims; i++)
    if (!ptx_size_check(d, m->trip[i], "trip count", diag)) return false;
  if (!ptx_expr_check(d, m->value, diag)) return false;
  kn_type vt = d->nodes[m->value].type;
  bool same = vt == m->out_type;
  bool narrower = (vt == KN_I32 || vt == KN_I64) && m->out_type != KN_I1 &&
                  m->out_type < vt; /* kn_type orders integers by width */
  if (!same && !narrower)
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "map kernel: value type does not fit the output");
  return ptx_addr_check(d, &m->out_addr, "map output", diag);
}

/* The output first, then the loads the value depends on; acc holds
 * d->nnodes + 1 entries. */
static unsigned accesses_of(const kn_desc *d, map_access *acc) {
  const kn_map *m = &d->map;
  bool used[m->value + 1];
  ptx_expr_used(d, m->value, used);
  unsigned n = 0;
  acc[n++] = (map_access){&m->out_addr, m->out_type, -1};
  for (int32_t i = 0; i <= m->value; i++)
    if (used[i] && d->nodes[i].op == KN_E_LOAD)
      acc[n++] = (map_access){&d->nodes[i].load.addr, d->nodes[i].load.mem, i};
  return n;
}

/* 1-D: element i + 1 lies right after element i, or every i reads one. */
static bool contiguous(const map_access *a) {
  return a->addr->iv_pcoeff[0] == 0 && a->addr->iv_coeff[0] == (int64_t)ptx_type_bytes(a->mem);
}

static bool invariant(const map_access *a) {
  return a->addr->iv_pcoeff[0] == 0 && a->addr->iv_coeff[0] == 0;
}

/* Elements per vector of the 1-D vector copy (the widest contiguous access
 * moves 16 bytes), 0 where there is none: the output and every load must
 * be contiguous, or invariant loads. */
static unsigned vector_lanes(const kn_desc *d) {
  if (d->map.ndims != 1) return 0;
  map_access acc[d->nnodes + 1];
  unsigned n = accesses_of(d, acc), widest = 0;
  for (unsigned i = 0; i < n; i++) {
    if (acc[i].mem == KN_I1) return 0;
    if (contiguous(&acc[i])) {
      unsigned bytes = ptx_type_bytes(acc[i].mem);
      widest = bytes > widest ? bytes : widest;
    } else if (i == 0 || !invariant(&acc[i])) {
      return 0;
    }
  }
  return MAP_VEC_BYTES / widest;
}

/* Whether some access may be below its element's alignment. */
static bool needs_check(const map_access *acc, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    if (acc[i].addr->align < ptx_type_bytes(acc[i].mem)) return true;
  return false;
}

/* The run-time condition of an aligned copy: every access's address
 * (linear memory base included) and counter strides aligned to its element
 * size; with lanes, each contiguous access's first address aligned to a
 * whole vector of lanes elements. */
static LLVMValueRef all_aligned(ptx_gen *g, const map_access *acc, unsigned n, unsigned lanes) {
  LLVMValueRef zero[KN_MAX_DIMS] = {ptx_i64(g, 0), ptx_i64(g, 0)};
  LLVMValueRef ok = LLVMConstInt(g->i1, 1, false);
  for (unsigned i = 0; i < n; i++) {
    const kn_addr *a = acc[i].addr;
    unsigned need = ptx_type_bytes(acc[i].mem);
    LLVMValueRef bits = LLVMBuildPtrToInt(g->b, ptx_addr(g, a, zero), g->i64, "");
    if (lanes && contiguous(&acc[i])) {
      need *= lanes;
    } else {
      for (unsigned d = 0; d < g->d->map.ndims; d++) {
        LLVMValueRef s = ptx_i64(g, a->iv_coeff[d]);
        if (a->iv_pcoeff[d])
          s = ptx_add(g, s, ptx_mul_c(g, g->params[a->iv_pindex[d]], a->iv_pcoeff[d]));
        bits = LLVMBuildOr(g->b, bits, s, "");
      }
    }
    ok = LLVMBuildAnd(g->b, ok, ptx_multiple_of(g, bits, need), "");
  }
  return ok;
}

/* `if (cond) {` a copy of the body with natural alignment, which returns;
 * returns the block after it. */
static LLVMBasicBlockRef aligned_copy_begin(ptx_gen *g, LLVMValueRef cond) {
  LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "aligned");
  LLVMBasicBlockRef other = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "other");
  LLVMBuildCondBr(g->b, cond, then, other);
  LLVMPositionBuilderAtEnd(g->b, then);
  g->natural_align = true;
  return other;
}

static void aligned_copy_end(ptx_gen *g, LLVMBasicBlockRef other) {
  LLVMBuildRetVoid(g->b);
  g->natural_align = false;
  LLVMPositionBuilderAtEnd(g->b, other);
}

static LLVMValueRef element_value(ptx_gen *g, const LLVMValueRef *ivs) {
  const kn_map *m = &g->d->map;
  LLVMValueRef v = ptx_expr_build(g, m->value, ivs);
  if (g->d->nodes[m->value].type != m->out_type)
    v = LLVMBuildTrunc(g->b, v, ptx_type(g, m->out_type), "");
  return v;
}

static void store_value(ptx_gen *g, LLVMValueRef v, const LLVMValueRef *ivs) {
  const kn_map *m = &g->d->map;
  ptx_store(g, v, ptx_addr(g, &m->out_addr, ivs), ptx_access_align(g, &m->out_addr, m->out_type));
}

static void store_element(ptx_gen *g, const LLVMValueRef *ivs) {
  store_value(g, element_value(g, ivs), ivs);
}

/* i, i + s, ..., i + (MAP_UNROLL-1) s while the last is below n, then the
 * remaining elements one per step.  Elements are independent (the
 * recogniser and the runtime's overlap check see to that), so the order of
 * their stores does not matter. */
static void map_1d(ptx_gen *g, LLVMValueRef first, LLVMValueRef stride) {
  LLVMValueRef n = ptx_size(g, g->d->map.trip[0]);
  LLVMValueRef last = LLVMBuildMul(g->b, stride, ptx_i64(g, MAP_UNROLL - 1), "");
  ptx_loop fast, tail;
  ptx_loop_begin(g, &fast, first, LLVMBuildSub(g->b, n, last, ""),
                 LLVMBuildMul(g->b, stride, ptx_i64(g, MAP_UNROLL), ""));
  LLVMValueRef ivs[MAP_UNROLL][KN_MAX_DIMS] = {{NULL}}, v[MAP_UNROLL];
  for (int u = 0; u < MAP_UNROLL; u++) {
    LLVMValueRef off = LLVMBuildMul(g->b, stride, ptx_i64(g, u), "");
    ivs[u][0] = LLVMBuildAdd(g->b, fast.iv, off, "");
    v[u] = element_value(g, ivs[u]);
  }
  for (int u = 0; u < MAP_UNROLL; u++) store_value(g, v[u], ivs[u]);
  ptx_loop_end(g, &fast);
  LLVMValueRef rest = LLVMBuildLoad2(g->b, g->i64, fast.var, "");
  ptx_loop_begin(g, &tail, rest, n, stride);
  LLVMValueRef one[KN_MAX_DIMS] = {tail.iv};
  store_element(g, one);
  ptx_loop_end(g, &tail);
}

/* lanes elements of t as one access: narrow integers move as 32-bit words
 * (NVPTX would split a byte vector's store into words or bytes). */
static LLVMTypeRef vector_mem_type(ptx_gen *g, kn_type t, unsigned lanes) {
  unsigned bytes = lanes * ptx_type_bytes(t);
  if (ptx_type_bytes(t) < 4 && bytes % 4 == 0)
    return bytes == 4 ? g->i32 : LLVMVectorType(g->i32, bytes / 4);
  return LLVMVectorType(ptx_type(g, t), lanes);
}

static LLVMValueRef vector_load(ptx_gen *g, const map_access *a, unsigned lanes, LLVMValueRef iv) {
  LLVMValueRef ivs[KN_MAX_DIMS] = {iv};
  unsigned bytes = lanes * ptx_type_bytes(a->mem);
  LLVMValueRef v = ptx_load(g, vector_mem_type(g, a->mem, lanes), ptx_addr(g, a->addr, ivs), bytes);
  return LLVMBuildBitCast(g->b, v, LLVMVectorType(ptx_type(g, a->mem), lanes), "");
}

/* Vector `vec` (elements vec * lanes + 0..lanes-1): its contiguous loads,
 * every lane's value (an invariant load is a scalar load per lane), the
 * store. */
static void vector_step(ptx_gen *g, const map_access *acc, unsigned n, unsigned lanes,
                        LLVMValueRef vec) {
  const kn_map *m = &g->d->map;
  LLVMValueRef at = ptx_mul_c(g, vec, lanes), loaded[n], preset[g->d->nnodes];
  for (unsigned i = 1; i < n; i++)
    loaded[i] = contiguous(&acc[i]) ? vector_load(g, &acc[i], lanes, at) : NULL;
  for (unsigned i = 0; i < g->d->nnodes; i++) preset[i] = NULL;
  LLVMValueRef out = LLVMGetUndef(LLVMVectorType(ptx_type(g, m->out_type), lanes));
  g->preset = preset;
  for (unsigned l = 0; l < lanes; l++) {
    LLVMValueRef lane = LLVMConstInt(g->i32, l, false);
    for (unsigned i = 1; i < n; i++)
      if (loaded[i]) {
        LLVMValueRef x = LLVMBuildExtractElement(g->b, loaded[i], lane, "");
        preset[acc[i].node] = ptx_expr_extend(g, &g->d->nodes[acc[i].node], x);
      }
    LLVMValueRef ivs[KN_MAX_DIMS] = {ptx_add(g, at, ptx_i64(g, l))};
    out = LLVMBuildInsertElement(g->b, out, element_value(g, ivs), lane, "");
  }
  g->preset = NULL;
  LLVMValueRef ivs[KN_MAX_DIMS] = {at};
  LLVMValueRef v = LLVMBuildBitCast(g->b, out, vector_mem_type(g, m->out_type, lanes), "");
  ptx_store(g, v, ptx_addr(g, &m->out_addr, ivs), lanes * ptx_type_bytes(m->out_type));
}

/* One vector per thread and step over the trip / lanes whole vectors
 * (more per step measured no faster on the H100), then the last
 * trip % lanes elements one per thread. */
static void map_1d_vector(ptx_gen *g, LLVMValueRef first, LLVMValueRef stride,
                          const map_access *acc, unsigned n, unsigned lanes) {
  LLVMValueRef trip = ptx_size(g, g->d->map.trip[0]);
  LLVMValueRef nvec = LLVMBuildSDiv(g->b, trip, ptx_i64(g, lanes), "");
  ptx_loop body, tail;
  ptx_loop_begin(g, &body, first, nvec, stride);
  vector_step(g, acc, n, lanes, body.iv);
  ptx_loop_end(g, &body);
  ptx_loop_begin(g, &tail, ptx_add(g, ptx_mul_c(g, nvec, lanes), first), trip, stride);
  LLVMValueRef one[KN_MAX_DIMS] = {tail.iv};
  store_element(g, one);
  ptx_loop_end(g, &tail);
}

/* x covers the inner iv 1 (coalesced accesses along rows), y chunks of
 * MAP_ROWS consecutive rows of the outer iv 0: a thread computes its
 * column of a whole chunk before it stores any of it (more loads in
 * flight; LLVM merges some of the loads a stencil's neighbouring rows
 * share), then the rows after the last whole chunk one by one. */
static void map_2d(ptx_gen *g) {
  const kn_map *m = &g->d->map;
  LLVMValueRef rows = ptx_size(g, m->trip[0]), cols = ptx_size(g, m->trip[1]);
  LLVMValueRef firsty, stridey, firstx, stridex;
  ptx_grid_axis(g, 'y', &firsty, &stridey);
  ptx_grid_axis(g, 'x', &firstx, &stridex);
  LLVMValueRef chunks = LLVMBuildSDiv(g->b, rows, ptx_i64(g, MAP_ROWS), "");
  ptx_loop chunk, col, row, tcol;
  ptx_loop_begin(g, &chunk, firsty, chunks, stridey);
  LLVMValueRef r0 = ptx_mul_c(g, chunk.iv, MAP_ROWS);
  ptx_loop_begin(g, &col, firstx, cols, stridex);
  LLVMValueRef ivs[MAP_ROWS][KN_MAX_DIMS], v[MAP_ROWS];
  for (int u = 0; u < MAP_ROWS; u++) {
    ivs[u][0] = ptx_add(g, r0, ptx_i64(g, u));
    ivs[u][1] = col.iv;
    v[u] = element_value(g, ivs[u]);
  }
  for (int u = 0; u < MAP_ROWS; u++) store_value(g, v[u], ivs[u]);
  ptx_loop_end(g, &col);
  ptx_loop_end(g, &chunk);
  ptx_loop_begin(g, &row, ptx_add(g, ptx_mul_c(g, chunks, MAP_ROWS), firsty), rows, stridey);
  ptx_loop_begin(g, &tcol, firstx, cols, stridex);
  LLVMValueRef one[KN_MAX_DIMS] = {row.iv, tcol.iv};
  store_element(g, one);
  ptx_loop_end(g, &tcol);
  ptx_loop_end(g, &row);
}

/* The copies of the body, each behind its run-time condition, the
 * descriptor's alignment last. */
static bool map_build(ptx_gen *g) {
  const kn_desc *d = g->d;
  map_access acc[d->nnodes + 1];
  unsigned n = accesses_of(d, acc), lanes = vector_lanes(d);
  LLVMValueRef first = NULL, stride = NULL;
  if (d->map.ndims == 1) ptx_grid_axis(g, 'x', &first, &stride);
  if (lanes) {
    LLVMBasicBlockRef other = aligned_copy_begin(g, all_aligned(g, acc, n, lanes));
    map_1d_vector(g, first, stride, acc, n, lanes);
    aligned_copy_end(g, other);
  }
  if (needs_check(acc, n)) {
    LLVMBasicBlockRef other = aligned_copy_begin(g, all_aligned(g, acc, n, 0));
    if (d->map.ndims == 1) map_1d(g, first, stride);
    else map_2d(g);
    aligned_copy_end(g, other);
  }
  if (d->map.ndims == 1) map_1d(g, first, stride);
  else map_2d(g);
  LLVMBuildRetVoid(g->b);
  return true;
}

/* 1-D: a block covers its threads' first step, one vector each where the
 * kernel has the vector copy. */
static void map_launch(const kn_desc *d, ptx_launch *l) {
  const kn_map *m = &d->map;
  unsigned lanes = vector_lanes(d);
  uint32_t per_thread = lanes ? lanes : MAP_UNROLL;
  if (m->ndims == 1) {
    *l = (ptx_launch){.block = {MAP_BLOCK_1D, 1, 1},
                      .count = {m->trip[0], {false, 1}, {false, 1}},
                      .per_block = {MAP_BLOCK_1D * per_thread, 1, 1},
                      .max_grid = {INT32_MAX, 1, 1}};
  } else {
    *l = (ptx_launch){.block = {MAP_BLOCK_X, MAP_BLOCK_Y, 1},
                      .count = {m->trip[1], m->trip[0], {false, 1}},
                      .per_block = {MAP_BLOCK_X, MAP_BLOCK_Y * MAP_ROWS, 1},
                      .max_grid = {INT32_MAX, 65535, 1}};
  }
}

const ptx_kind ptx_kind_map = {map_check, map_build, map_launch, false};
