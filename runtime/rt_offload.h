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

/* An empty launch plus synchronise on the H100 (DESIGN.md), for the cost
 * model before a launch could be timed. */
#define RT_START_LAUNCH_US 8.8

/* When the GPU starts in auto mode (rt_start.c): asked before a launch
 * until the device is ready, with the launch's operations and the linear
 * memory it would use (made reachable by the start, if this call begins
 * it).  Never waits.  READY: the driver, context, launch timing and that
 * memory are ready, go on; LATER: the nest runs on the CPU (*why says why,
 * maybe in buf: too small, the price not reached); STARTING: on the CPU
 * too, the start having begun (now or before), so the nest's kernel may
 * be asked for; NEVER: no GPU will come (no driver library here, or the
 * start failed). */
typedef struct rt_memory rt_memory;
typedef enum { RT_START_LATER, RT_START_STARTING, RT_START_READY, RT_START_NEVER } rt_start;
rt_start rt_start_decide(double ops, rt_memory *mem, const char **why, char *buf, size_t cap);
/* The background start has finished and the GPU is up (one atomic load). */
bool rt_start_ready(void);
/* Called by an executable as it is about to exit with status: where the
 * helper thread is still inside the driver (its start, a PTX load), the
 * process leaves now (_exit after flushing stdio), else it returns. */
void rt_start_leave(int status);

/* Runs run(arg) on the start's helper thread, after the start and the
 * jobs posted before, holding the driver (below); false (nothing posted)
 * when there is no helper: auto mode's start not begun, or failed. */
bool rt_start_post(void (*run)(void *), void *arg);
/* The driver for a launch on the calling thread, unless the helper is
 * inside it (its start, a job): false then, at once, and the nest runs on
 * the CPU.  rt_start_driver_done gives it back. */
bool rt_start_driver_try(void);
void rt_start_driver_done(void);

/* The TWASM_TEST_OFFLOAD_CALLS count (a destructor writes it; _exit
 * skips destructors). */
void rt_offload_write_calls(void);

/* Inflates the module's PTX store once (rt_ptx.c); later calls return at
 * once.  False, with why (cap bytes) set, when it cannot be inflated. */
bool rt_ptx_inflate(twasm_ptx_store_abi *s, char *why, size_t cap);

#endif
