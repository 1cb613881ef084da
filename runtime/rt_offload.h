/* rt_offload.h: dispatch of offloaded loop nests (prefix rt_offload_):
 * the pure pre-launch plan (rt_offload_plan.c), the decision and launch
 * (rt_offload.c, twasm_rt_offload of twasm_abi.h), when the GPU starts
 * (rt_start.c), and the compressed PTX (rt_ptx.c). */
#ifndef RT_OFFLOAD_H
#define RT_OFFLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cu.h"
#include "twasm_abi.h"

#define RT_OFFLOAD_MAX_SPANS 64

/* A byte range [lo, hi) of linear memory a kernel touches. */
typedef struct {
  uint64_t lo, hi;
  bool is_write;
  bool forwarded;          /* a read of what an earlier part wrote, or a write of
                            * exactly that (twasm_kernel_range_abi) */
  bool rows;               /* the hull of a table's rows (ABI 14): not every
                            * byte of it accessed, its overlaps checked per
                            * row (rt_offload_plan_make_in), prefetched and
                            * copied whole */
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
/* The same over the memory at base, whose row tables (ranges with
 * table_dim, ABI 14) it reads: each row of such a range inside the
 * memory and aligned to its access size, no row overlapping a written
 * span or row (a read row where k asks for the overlap check), the rows of
 * a written range pairwise disjoint; each range's rows one span, their
 * hull (rt_offload_span.rows).  rt_offload_plan_make is this with no
 * memory, which refuses every table. */
const char *rt_offload_plan_make_in(const twasm_kernel_abi *k, const int64_t *params,
                                    const uint8_t *base, uint64_t mem_size, rt_offload_plan *p);

/* A nest of several parts (twasm_rt_offload_group), their plans made, in
 * launch order: NULL when no part writes a byte that another part reads
 * or writes (the parts may then run one after the other,
 * kernels/kn_recog_split.c), except that a forwarded read or write of a
 * part may be exactly the bytes an earlier part writes; else why not. */
const char *rt_offload_plans_apart(const rt_offload_plan *plans, unsigned n);
/* The most parts a nest may have (kernels/kn_recog_split.c's). */
#define RT_OFFLOAD_MAX_PARTS 4

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
/* A CPU run of nest (any pointer that names it; NULL: none) worth a
 * launch ended before the start (rt_offload.c times it): the smaller of
 * the model's estimate and the measured time counts towards the price,
 * and the run towards the nest's count (a nest run RT_START_REPEATS
 * times lowers the price). */
void rt_start_cpu_ran(const void *nest, double model_us, double measured_us);
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
/* Runs run(arg) on one of the compilers, beside the others' jobs and the
 * helper's, not holding the driver (a job takes it with
 * rt_start_driver_take where it must), once the start is ready.  False
 * (nothing posted) when the start is not under way or ready, after
 * rt_start_leave, or with no thread to be had. */
bool rt_start_post_parallel(void (*run)(void *), void *arg);
void rt_start_driver_take(void);
/* The driver for a launch on the calling thread, unless the helper is
 * inside it (its start, a job): false then, at once, and the nest runs on
 * the CPU.  rt_start_driver_done gives it back. */
bool rt_start_driver_try(void);
void rt_start_driver_done(void);

/* Auto mode's measured choice for one kernel (rt_choice.c). */
typedef struct rt_choice {
  double cpu_ns_per_op;    /* lowest measured CPU run, per operation; 0: none */
  double gpu_ns_per_op;    /* lowest measured launch past the launch cost, per operation */
  uint32_t gpu_runs, cpu_runs;
  uint32_t losses;         /* measured launches in a row slower than the CPU estimate */
  uint32_t skip;           /* calls left on the CPU before the GPU is tried again */
  double ran_ops;          /* the operations of the last measured launch */
  /* What a CPU run of this call would pay besides its loop: moving its
   * data back from the device and again for the next kernel (an exact
   * in-order sum over data on the device, rt_seq.c; set by the dispatch
   * for each call, 0 for every other kernel).  Added to both the model's
   * and the measured estimate: a measured run need not have paid it. */
  double move_us;
} rt_choice;
/* The CPU's time for ops operations: the model's (model_us), lowered to
 * the measured rate, plus move_us. */
double rt_choice_cpu_us(const rt_choice *c, double ops, double model_us);
/* The GPU's: the model's until a launch was measured, then the launch
 * cost plus the measured rate (callers add the call's copy time to
 * launch_us). */
double rt_choice_gpu_us(const rt_choice *c, double ops, double launch_us, double model_us);
/* Whether this call launches (the model already said it is worth one). */
bool rt_choice_take_gpu(rt_choice *c, double ops, double launch_us, double cpu_model_us, double gpu_model_us);
/* A launch's measured wall time (copies, launch, synchronise); copy_us:
 * its copies' time at the bus's rate (not part of the rate), again_us:
 * theirs were the same call made now (what it did not leave kept). */
void rt_choice_gpu_ran(rt_choice *c, double ops, double wall_us, double launch_us, double copy_us,
                       double again_us, double cpu_model_us);
/* A CPU run's measured time (an upper bound). */
void rt_choice_cpu_ran(rt_choice *c, double ops, double wall_us);

/* Auto mode's model for an exact float sum in source order (rt_seq.c,
 * TWASM_PATH_SEQ: one GPU thread).  Where its data lies: */
typedef enum {
  RT_SEQ_HOST,     /* managed or pageable memory, not moved to the device by a launch */
  RT_SEQ_PINNED,   /* pinned host memory without a device copy */
  RT_SEQ_KEPT,     /* every page kept in the device copy (rt_resident.c); the host holds them too */
  RT_SEQ_MANAGED,  /* managed or pageable memory an earlier launch moved to the device */
} rt_seq_place;
/* Whether k is such a sum (its plan's path). */
bool rt_seq_kernel(const twasm_kernel_abi *k);
/* One GPU thread's time for p's terms, the launch included. */
double rt_seq_gpu_us(const rt_offload_plan *p, double launch_us);
/* NULL when the sum may be weighed for a launch, its data on the device:
 * *move_us then holds what the CPU's loop would also pay to move the data
 * back (and again for the next kernel: rt_choice.move_us), *gpu_us the
 * one thread's time; else why the CPU's loop runs. */
const char *rt_seq_weigh(const rt_offload_plan *p, rt_seq_place place, double launch_us, double *move_us,
                         double *gpu_us);

/* Device copies of linear memory for kernels on pinned host memory
 * (rt_resident.c): the pages a launch's spans touch are copied into a
 * device allocation as large as the memory (those of spans of at least
 * RT_RESIDENT_KEEP_MIN bytes once, then kept there, write-protected on
 * the host, until the CPU writes them), the kernel takes the copy's base,
 * written spans come back after it. */
typedef struct rt_resident rt_resident;
#define RT_RESIDENT_KEEP_MIN (64u << 10)
#define RT_RESIDENT_MAX_COPIES (2 * RT_OFFLOAD_MAX_SPANS)
typedef struct {
  cu_copy in[RT_RESIDENT_MAX_COPIES], out[RT_RESIDENT_MAX_COPIES];
  size_t nin, nout;
  uint64_t copy_bytes;     /* both ways */
  uint64_t again_bytes;    /* of those, what the same launch would copy again at once: not left kept */
  uint8_t *dev_base;       /* the base the kernel takes */
  uint32_t unkept;         /* runs of a long span's pages that could not be kept */
} rt_resident_launch;
/* Whether executables may use it (rt_resident_enable) and
 * TWASM_GPU_RESIDENT is not 0. */
bool rt_resident_wanted(void);
/* A mirror for host memory at host that may grow to usable bytes (its
 * device allocation is made at the first launch); NULL when none can be
 * tracked. */
rt_resident *rt_resident_new(uint8_t *host, uint64_t usable);
/* Frees the device copy (the driver is needed); the host pages may stay
 * protected: the memory is unmapped next. */
void rt_resident_free(rt_resident *r);
/* Bytes a launch of p would copy now (pages not kept, written spans;
 * with host_out, as rt_resident_prepare's, no written span: the kernel
 * writes them into the host pages). */
uint64_t rt_resident_cost_bytes(rt_resident *r, const rt_offload_plan *p, bool host_out);
/* Grows the device copy to mem_size and fills L for a launch of p.  With
 * host_out the kernel writes its written spans straight into the host
 * pages (TWASM_ENTRY_HOST_OUT): those are neither copied in nor back, and
 * none of their pages stays kept. */
bool rt_resident_prepare(rt_resident *r, uint64_t mem_size, const rt_offload_plan *p, bool host_out,
                         rt_resident_launch *L, cu_error *err);
/* Whether kernels that can write their outputs into host memory do so
 * (TWASM_GPU_HOST_OUT is not 0). */
bool rt_resident_host_out(void);
/* After a launch that failed: no page L made kept stays so. */
void rt_resident_abandon(rt_resident *r, const rt_resident_launch *L);
uint64_t rt_resident_kept_bytes(const rt_resident *r);
/* Pages the launches' page scans have looked at so far (a span found
 * wholly kept before, none of its pages opened since, is not scanned). */
uint64_t rt_resident_scanned_pages(const rt_resident *r);
/* Makes the pages of [lo, hi) (page-aligned) that are not kept readable
 * and writable again (async-signal-safe); r NULL: all of them. */
void rt_resident_reopen(rt_resident *r, uint8_t *lo, uint8_t *hi);

/* How a launch may go unwaited: not at all, with its pages protected
 * (TWASM_GPU_DEFER=1), or with the waits the code places. */
typedef enum { RT_DEFER_NONE, RT_DEFER_PAGES, RT_DEFER_CODE } rt_defer_how;

/* Launches not waited for (rt_defer.c), under rt_offload_lock except
 * rt_defer_fault and rt_defer_wait.  TWASM_GPU_DEFER=1: */
bool rt_defer_wanted(void);
/* Waits placed by the compiler (twasm_rt_offload_unwaited) honoured:
 * unless TWASM_GPU_DEFER=0. */
bool rt_defer_by_code_wanted(void);
/* Launches queued and not yet waited for. */
bool rt_defer_pending(void);
/* The launch of kernel with plan p may go unwaited: its slot in the
 * learned table, else -1.  by_code: the code waits (no pages protected,
 * nothing learned). */
int rt_defer_choose(const void *kernel, const rt_offload_plan *p, bool by_code);
/* Whether len bytes at ptr meet a pending launch's output (a load) or any
 * of its spans (store): the access waits first. */
bool rt_defer_meets(const void *ptr, uint64_t len, bool store);
/* Whether p's spans touch a pending launch's output pages (host: the
 * memory's base): wait first. */
bool rt_defer_conflicts(const rt_offload_plan *p, const uint8_t *host);
/* After the launch of p (on r's device copy, host memory at host) was
 * queued without a wait: protects its pages (by_code: records them).
 * False when they could not be: wait at once. */
bool rt_defer_add(rt_resident *r, uint8_t *host, const rt_offload_plan *p, int slot, bool by_code);
/* Waits for every pending launch and reopens their pages; the process
 * stops when the wait fails. */
void rt_defer_wait(void);
/* After a launch that waited (so for the pending ones too): reopens. */
void rt_defer_synced(void);
/* A fault at addr while launches are pending: waits for them; true when
 * addr was in a page they protected (now open again). */
bool rt_defer_fault(uintptr_t addr);
/* mprotect calls of rt_defer.c so far (protects, and reopened ranges:
 * rt_resident_reopen may split one around kept pages), for tests. */
int rt_defer_mprotect_calls(void);

/* The TWASM_TEST_OFFLOAD_CALLS count (a destructor writes it; _exit
 * skips destructors). */
void rt_offload_write_calls(void);

/* Inflates the module's PTX store once (rt_ptx.c); later calls return at
 * once.  False, with why (cap bytes) set, when it cannot be inflated. */
bool rt_ptx_inflate(twasm_ptx_store_abi *s, char *why, size_t cap);
/* Whether two kernels' PTX (inflated) is the same in every arch but for
 * the kernels' names: one compiled module serves both (the nests of a
 * function inlined into several callers, an LLM's matrix-vector products
 * of one shape). */
bool rt_ptx_twins(const twasm_kernel_abi *a, const twasm_kernel_abi *b);

#endif
