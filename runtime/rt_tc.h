/* rt_tc.h: launches of the packed tensor-core product of sm_90a modules
 * (prefix rt_tc_; twasm_abi.h, ABI 5): the pack entry, then the product,
 * with device scratch the layer owns.  Depends on the cu_ layer only, so
 * the GPU test harnesses launch it exactly as compiled programs do. */
#ifndef RT_TC_H
#define RT_TC_H

#include <stdbool.h>
#include <stdint.h>

#include "cu.h"

typedef struct rt_tc {
  cu_kernel pack, product;
  char pack_name[160], product_name[160];
} rt_tc;

/* Finds NAME_pack and NAME_tc in m and lets the product take its dynamic
 * shared memory; false (err says why) when the module has no such pair. */
bool rt_tc_load(cu_module *m, const char *name, rt_tc *out, cu_error *err);

/* Whether an M x N x K product is worth the packed kernel: both tiles
 * filled at least 80 % (others take the module's main entry). */
bool rt_tc_fits(int64_t m, int64_t n, int64_t k);

/* Bytes of scratch an M x N x K product of elem_bytes elements packs into. */
uint64_t rt_tc_scratch_bytes(int64_t m, int64_t n, int64_t k, unsigned elem_bytes);

/* Packs and multiplies: params are the kernel's own (mem, then its
 * params: nparams pointers as cuLaunchKernel takes them), ranges the
 * managed memory they reach.  Callers serialise: the scratch is shared. */
bool rt_tc_launch(const rt_tc *tc, int64_t m, int64_t n, int64_t k, unsigned elem_bytes,
                  void **params, unsigned nparams, const cu_args *ranges, cu_error *err);

/* The two launches rt_tc_launch makes, pack then product, for args (the
 * kernel's params, then a pointer to the scratch address). */
void rt_tc_steps(const rt_tc *tc, int64_t m, int64_t n, int64_t k, unsigned elem_bytes, void **args,
                 cu_step steps[2]);

#endif
