/* rt_offload.h: dispatch of offloaded loop nests (prefix rt_offload_):
 * the pure pre-launch plan (rt_offload_plan.c), the decision and launch
 * (rt_offload.c, twasm_rt_offload of twasm_abi.h), when the GPU starts
 * (rt_start.c), and the compressed PTX (rt_ptx.c). */
#ifndef RT_OFFLOAD_H
#define RT_OFFLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twasm_abi.h"

#define RT_OFFLOAD_MAX_SPANS 64

/* A byte range [lo, hi) of linear memory a kernel touches. */
typedef struct {
  uint64_t lo, hi;
  bool is_write;
} rt_offload_span;

typedef struct {
  uint32_t grid[3];
  double iterations;       /* times the nest's body runs */
  double ops;              /* iterations times operations per iteration */
  int64_t batch;           /* products of a batched matmul, else 1 */
  int64_t work[TWASM_KERNEL_WORK_DIMS];  /* the kernel's work sizes (matmul: batch, m, n, k) */
  uint64_t bytes;          /* sum of the spans' lengths */
  rt_offload_span spans[RT_OFFLOAD_MAX_SPANS];
  int nspans;
} rt_offload_plan;

/* Checks a launch of k with the live params against a memory of mem_size
 * bytes: every accessed range inside it (which also proves no address
 * wrapped), no written range overlapping a read one where k asks for the
 * check, trip counts known; fills the grid (twasm_grid_axis) and the cost
 * figures (twasm_cost_worth_it weighs them).  Returns
 * NULL when the kernel may run, else why it may not. */
const char *rt_offload_plan_make(const twasm_kernel_abi *k, const int64_t *params,
                                 uint64_t mem_size, rt_offload_plan *p);

/* The cost model's operations for a launch of k with the live params
 * (iterations times operations per iteration), without the checks: what
 * dispatch asks first, cheaply.  0 for a malformed table. */
double rt_offload_ops(const twasm_kernel_abi *k, const int64_t *params);

/* When the GPU starts in auto mode (rt_start.c): asked before a launch
 * while the driver has not started, with the launch's operations.  LATER:
 * the nest runs on the CPU (*why says why, maybe in buf); NOW: start the
 * driver and launch if the rest agrees; NEVER: no driver can start here
 * (the library was looked for: at the first nest worth a launch). */
/* An empty launch plus synchronise on the H100 (DESIGN.md), for the cost
 * model before a launch could be timed. */
#define RT_START_LAUNCH_US 8.8
typedef enum { RT_START_LATER, RT_START_NOW, RT_START_NEVER } rt_start;
rt_start rt_start_decide(double ops, const char **why, char *buf, size_t cap);

/* Inflates the module's PTX store once (rt_ptx.c); later calls return at
 * once.  False, with why (cap bytes) set, when it cannot be inflated. */
bool rt_ptx_inflate(twasm_ptx_store_abi *s, char *why, size_t cap);

#endif
