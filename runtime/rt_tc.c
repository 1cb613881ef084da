/* rt_tc.c: the packed tensor-core product's launches (see rt_tc.h): grids
 * and scratch size from the ABI's tile constants, one scratch buffer grown
 * to the largest product seen and kept for the process. */
#include "rt_tc.h"

#include <stdio.h>
#include <string.h>

#include "twasm_abi.h"

static void *rt_tc_scratch;
static uint64_t rt_tc_scratch_size;

static int64_t ceil_div(int64_t v, int64_t d) { return (v + d - 1) / d; }

/* Tiles of an M x N x K product: rows of A, columns of B, k-tiles. */
typedef struct {
  int64_t m, n, k;
} rt_tc_tiles;

static rt_tc_tiles tiles_of(int64_t m, int64_t n, int64_t k, unsigned elem_bytes) {
  return (rt_tc_tiles){ceil_div(m, TWASM_TC_TILE_M), ceil_div(n, TWASM_TC_TILE_N),
                       ceil_div(k * (int64_t)elem_bytes, TWASM_TC_K_BYTES)};
}

bool rt_tc_load(cu_module *m, const char *name, rt_tc *out, cu_error *err) {
  memset(out, 0, sizeof *out);
  snprintf(out->pack_name, sizeof out->pack_name, "%s_pack", name);
  snprintf(out->product_name, sizeof out->product_name, "%s_tc", name);
  return cu_module_kernel(m, out->pack_name, &out->pack, err) &&
         cu_module_kernel(m, out->product_name, &out->product, err) &&
         cu_kernel_allow_shared(&out->product, TWASM_TC_SHARED_BYTES, err);
}

bool rt_tc_fits(int64_t m, int64_t n, int64_t k) {
  if (m < TWASM_TC_TILE_M || n < TWASM_TC_TILE_N || k < 32 || m > (1ll << 31) || n > (1ll << 31) ||
      k > (1ll << 31))
    return false;
  rt_tc_tiles t = tiles_of(m, n, k, 1);
  if (t.m + t.n > 65535) return false;  /* the pack grid's y */
  return (double)(t.m * TWASM_TC_TILE_M) * (double)(t.n * TWASM_TC_TILE_N) <= 1.25 * (double)m * (double)n;
}

uint64_t rt_tc_scratch_bytes(int64_t m, int64_t n, int64_t k, unsigned elem_bytes) {
  rt_tc_tiles t = tiles_of(m, n, k, elem_bytes);
  return (uint64_t)(t.m * TWASM_TC_TILE_M + t.n * TWASM_TC_TILE_N) * (uint64_t)t.k * TWASM_TC_K_BYTES;
}

static bool scratch_for(uint64_t bytes, cu_error *err) {
  if (bytes <= rt_tc_scratch_size) return true;
  cu_free_device(rt_tc_scratch, rt_tc_scratch_size);
  rt_tc_scratch = NULL;
  rt_tc_scratch_size = 0;
  if (!cu_alloc_device(bytes, &rt_tc_scratch, err)) return false;
  rt_tc_scratch_size = bytes;
  return true;
}

bool rt_tc_launch(const rt_tc *tc, int64_t m, int64_t n, int64_t k, unsigned elem_bytes,
                  void **params, unsigned nparams, const cu_args *ranges, cu_error *err) {
  enum { MAX_ARGS = 20 };
  if (nparams + 2 > MAX_ARGS) return cu_fail_msg(err, "too many kernel params for the packed product");
  if (!scratch_for(rt_tc_scratch_bytes(m, n, k, elem_bytes), err)) return false;
  uint64_t scratch = (uint64_t)(uintptr_t)rt_tc_scratch;
  void *args[MAX_ARGS];
  memcpy(args, params, (nparams + 1) * sizeof *args);
  args[nparams + 1] = &scratch;
  cu_step steps[2];
  rt_tc_steps(tc, m, n, k, elem_bytes, args, steps);
  cu_args a = *ranges;
  a.params = args;
  return cu_launch_steps(steps, 2, &a, err);
}

void rt_tc_steps(const rt_tc *tc, int64_t m, int64_t n, int64_t k, unsigned elem_bytes, void **args,
                 cu_step steps[2]) {
  rt_tc_tiles t = tiles_of(m, n, k, elem_bytes);
  uint32_t mt = (uint32_t)t.m, nt = (uint32_t)t.n, kt = (uint32_t)t.k;
  steps[0] = (cu_step){&tc->pack, {kt, mt + nt, 1}, {TWASM_TC_PACK_THREADS, 1, 1}, 0, args};
  steps[1] = (cu_step){&tc->product, {nt, mt, 1}, {TWASM_TC_THREADS, 1, 1}, TWASM_TC_SHARED_BYTES, args};
}
