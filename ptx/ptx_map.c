/* ptx_map.c: elementwise map kernels (1-D and 2-D index spaces, stencils
 * included), grid-stride over the index space.  1-D: each thread takes
 * MAP_UNROLL elements a grid apart per step and loads all of them before
 * it stores any (more memory traffic in flight), then the rest one by one. */
#include "ptx_internal.h"

enum { MAP_BLOCK_1D = 256, MAP_UNROLL = 4, MAP_BLOCK_X = 32, MAP_BLOCK_Y = 8 };

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

static LLVMValueRef element_value(ptx_gen *g, const LLVMValueRef *ivs) {
  const kn_map *m = &g->d->map;
  LLVMValueRef v = ptx_expr_build(g, m->value, ivs);
  if (g->d->nodes[m->value].type != m->out_type)
    v = LLVMBuildTrunc(g->b, v, ptx_type(g, m->out_type), "");
  return v;
}

static void store_value(ptx_gen *g, LLVMValueRef v, const LLVMValueRef *ivs) {
  const kn_map *m = &g->d->map;
  ptx_store(g, v, ptx_addr(g, &m->out_addr, ivs), m->out_addr.align);
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

/* 1-D: x covers iv 0.  2-D: x covers the inner iv 1 (coalesced accesses
 * along rows), y the outer iv 0. */
static bool map_build(ptx_gen *g) {
  const kn_map *m = &g->d->map;
  LLVMValueRef ivs[KN_MAX_DIMS] = {NULL, NULL};
  LLVMValueRef first, stride;
  ptx_loop outer, inner;
  if (m->ndims == 1) {
    ptx_grid_axis(g, 'x', &first, &stride);
    map_1d(g, first, stride);
  } else {
    ptx_grid_axis(g, 'y', &first, &stride);
    ptx_loop_begin(g, &outer, first, ptx_size(g, m->trip[0]), stride);
    ivs[0] = outer.iv;
    ptx_grid_axis(g, 'x', &first, &stride);
    ptx_loop_begin(g, &inner, first, ptx_size(g, m->trip[1]), stride);
    ivs[1] = inner.iv;
    store_element(g, ivs);
    ptx_loop_end(g, &inner);
    ptx_loop_end(g, &outer);
  }
  LLVMBuildRetVoid(g->b);
  return true;
}

static void map_launch(const kn_desc *d, ptx_launch *l) {
  const kn_map *m = &d->map;
  if (m->ndims == 1) {
    *l = (ptx_launch){.block = {MAP_BLOCK_1D, 1, 1},
                      .count = {m->trip[0], {false, 1}, {false, 1}},
                      .per_block = {MAP_BLOCK_1D * MAP_UNROLL, 1, 1},
                      .max_grid = {INT32_MAX, 1, 1}};
  } else {
    *l = (ptx_launch){.block = {MAP_BLOCK_X, MAP_BLOCK_Y, 1},
                      .count = {m->trip[1], m->trip[0], {false, 1}},
                      .per_block = {MAP_BLOCK_X, MAP_BLOCK_Y, 1},
                      .max_grid = {INT32_MAX, 65535, 1}};
  }
}

const ptx_kind ptx_kind_map = {map_check, map_build, map_launch, false};
