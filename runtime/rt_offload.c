/* rt_offload.c: twasm_rt_offload, called before every offloaded loop nest:
 * decides GPU or CPU (TWASM_DEVICE, the driver's start (rt_start.c), the
 * pre-launch plan, the cost model, memory the device reaches), loads the kernel's PTX once, prefetches, launches and
 * hands back a reduction's result.  Any refusal or failure returns 0 and
 * the nest runs on the CPU as compiled. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cu.h"
#include "rt_internal.h"
#include "rt_offload.h"
#include "rt_tc.h"

/* A kernel's PTX: loaded on first use, on the calling thread
 * (TWASM_DEVICE=gpu) or as a job of the start's helper thread (auto mode:
 * QUEUED there, BUSY while it loads). */
enum { LOAD_WANTED, LOAD_QUEUED, LOAD_BUSY, LOAD_DONE };
typedef struct rt_loaded {
  const twasm_kernel_abi *k;
  int state;                 /* LOAD_*, under rt_offload_lock */
  const twasm_kernel_ptx_abi *code; /* the PTX module loaded: its plan */
  cu_module *module;         /* shared with twins (rt_ptx_twins) */
  const char *entry;         /* the kernel's name in module: its own, or its twin's */
  cu_kernel fn;
  bool failed;
  int tc_state;              /* packed product: 0 not looked up, 1 ready, -1 none */
  rt_tc tc;
  rt_choice choice;          /* auto mode's measurements, under rt_offload_lock */
  struct rt_loaded *next;
} rt_loaded;

/* A kernel on pinned host memory reads and writes it over the bus (PCIe
 * on the lent H100 and H200).  Dense accesses: a map moved 77 GB/s (read
 * plus write) on the H200, DESIGN.md's pinned copies ~51 GB/s each way;
 * 50 GB/s of the spans' bytes is the estimate, in bytes per microsecond.
 * Sparse ones (more than RT_BUS_DENSE_BYTES of span per iteration: a
 * strided walk down a column) are bound by the bus's requests, one per
 * iteration: an i8 reduction with a 72-byte stride (qlayer_i8's check,
 * 160000 iterations over 11.5 MB) took 0.2-2.4 ms a launch on the H200,
 * median 0.88 (5.5 ns an iteration), where its bytes say 0.23:
 * RT_BUS_SPARSE_NS each. */
#define RT_BUS_BYTES_PER_US 50e3
#define RT_BUS_DENSE_BYTES 32.0
#define RT_BUS_SPARSE_NS 6.0
/* A kernel on the device copy (rt_resident.c) reads HBM: about 3 TB/s on
 * the H100 and H200, 2 TB/s of the spans' bytes for the estimate. */
#define RT_HBM_BYTES_PER_US 2e6

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* The cost model's time for a launch of p on pinned memory, in us. */
static double bus_us(const rt_offload_plan *p) {
  double us = (double)p->bytes / RT_BUS_BYTES_PER_US;
  if (p->iterations > 0 && (double)p->bytes / p->iterations > RT_BUS_DENSE_BYTES &&
      p->iterations * RT_BUS_SPARSE_NS / 1000 > us)
    us = p->iterations * RT_BUS_SPARSE_NS / 1000;
  return us;
}

/* Launches are serialised: they share the result cell and the cache. */
static pthread_mutex_t rt_offload_lock = PTHREAD_MUTEX_INITIALIZER;
static rt_loaded *rt_loaded_list;
static void *rt_result_cell; /* managed, 8 bytes used */

static const char *kind_name(const twasm_kernel_abi *k) {
  return k->kind == TWASM_KERNEL_MAP ? "map" : k->kind == TWASM_KERNEL_REDUCE ? "reduce" : "matmul";
}

/* Closed for good once no launch can happen: the mode is cpu, no driver
 * is there or no GPU came up (none changes later: a GPU that failed stays
 * off), and no trace wants the refusals. */
uint32_t twasm_rt_offload_gate = 1;

static uint32_t close_gate(void) {
  __atomic_store_n(&twasm_rt_offload_gate, 0, __ATOMIC_RELAXED);
  return 0;
}

/* Auto mode without a trace: the launch cost each nest's work is weighed
 * against first (RT_START_LAUNCH_US until the driver has started and a
 * launch was timed), so that a nest too small for any launch costs a few
 * nanoseconds: no lock, no plan, no pthread_once.  0: no such shortcut
 * (not yet known, a trace, TWASM_DEVICE=gpu). */
static double rt_quick_launch_us;
static uint32_t rt_quick_calls;
/* After this many of them the driver library is looked for, so that a
 * machine without one closes the gate. */
#define RT_QUICK_PROBE_CALLS 4096u

static void set_quick(double launch_us) {
  __atomic_store(&rt_quick_launch_us, &launch_us, __ATOMIC_RELAXED);
}

static uint32_t quick_cpu(void) {
  /* A count, not a lock: a lost increment only delays the look. */
  uint32_t n = __atomic_load_n(&rt_quick_calls, __ATOMIC_RELAXED) + 1;
  __atomic_store_n(&rt_quick_calls, n, __ATOMIC_RELAXED);
  if (n == RT_QUICK_PROBE_CALLS && !cu_started() && !cu_driver_present()) return close_gate();
  return TWASM_OFFLOAD_TOO_SMALL;
}

/* The compiler's plan for a PTX module (TWASM_PATH_*), for the trace. */
static const char *path_name(uint32_t path) {
  static const char *const names[] = {
    [TWASM_PATH_MAP] = "map",           [TWASM_PATH_REDUCE] = "reduction",
    [TWASM_PATH_EXACT] = "exact matmul", [TWASM_PATH_BATCH] = "batch, exact",
    [TWASM_PATH_BATCH_MMA] = "batch, mma.sync", [TWASM_PATH_WMMA] = "wmma",
    [TWASM_PATH_WGMMA] = "wgmma",       [TWASM_PATH_MATVEC] = "exact matrix-vector",
    [TWASM_PATH_SEQ] = "exact in-order float sum, one thread",
  };
  return path < sizeof names / sizeof names[0] ? names[path] : "unknown path";
}

/* trace_params: the trace line of a call's parameters ("offload NAME
 * [PART] params: ..."), cut short where it would pass the line. */
static void trace_params(const twasm_kernel_abi *k, const int64_t *params, const char *part) {
  char line[600];
  int at = 0;
  for (uint32_t i = 0; i < k->nparams && at < (int)sizeof line - 40; i++)
    at += snprintf(line + at, sizeof line - (size_t)at, " %lld", (long long)params[i]);
  cu_trace("offload %s%s params:%s", k->name, part, line);
}

static uint32_t on_cpu(const twasm_kernel_abi *k, const char *why) {
  cu_trace("offload %s (%s): cpu: %s", k->name, kind_name(k), why);
  return 0;
}

/* Under rt_offload_lock: a loaded entry whose PTX is l's but for the
 * kernel's name (rt_ptx_twins), or NULL: then *busy says whether one is
 * being compiled (l waits for it by asking again later: a compiler that
 * waited would keep one that could compile another from it). */
static rt_loaded *twin_of(rt_loaded *l, bool *busy) {
  char why[160];
  *busy = false;
  if (!rt_ptx_inflate(l->k->ptx_store, why, sizeof why)) return NULL;
  for (rt_loaded *t = rt_loaded_list; t; t = t->next) {
    if (t == l || (t->state != LOAD_DONE && t->state != LOAD_BUSY) || t->failed || !rt_ptx_twins(l->k, t->k))
      continue;
    if (t->state == LOAD_DONE) return t;
    *busy = true;
  }
  return NULL;
}

/* Loads l's PTX (inflating the module's store at the first), or shares
 * twin's module, without rt_offload_lock: only the thread that set
 * LOAD_BUSY touches l's other fields until it publishes LOAD_DONE under
 * the lock.  parallel: on a compiler (rt_start_post_parallel), which
 * compiles beside the launches and takes the driver only to load what it
 * made. */
static void load(rt_loaded *l, bool parallel, const rt_loaded *twin) {
  const twasm_kernel_abi *k = l->k;
  cu_ptx set[8];
  size_t n = k->nptx < 8 ? k->nptx : 8;
  for (size_t i = 0; i < n; i++)
    set[i] = (cu_ptx){(int)(k->ptx[i].sm & ~TWASM_PTX_SM_SPECIFIC) |
                          ((k->ptx[i].sm & TWASM_PTX_SM_SPECIFIC) ? CU_ARCH_SPECIFIC : 0),
                      (int)k->ptx[i].ptx_isa, k->ptx[i].text};
  cu_error err = {0};
  cu_image img;
  bool ok = true;
  if (twin) {
    cu_trace("offload %s: the PTX of %s but for its name: its module serves both", k->name, twin->k->name);
    l->module = twin->module;
    l->entry = twin->entry;
  } else {
    cu_trace("offload %s: compiling its PTX%s", k->name, parallel ? " (beside other compiles)" : "");
    l->entry = k->name;
    ok = rt_ptx_inflate(k->ptx_store, err.message, sizeof err.message) && cu_module_compile(set, n, &img, &err);
  }
  if (parallel) rt_start_driver_take();
  ok = ok && (twin || cu_module_install(&img, &l->module, &err)) &&
       cu_module_kernel(l->module, l->entry, &l->fn, &err);
  if (parallel) rt_start_driver_done();
  if (!ok) {
    cu_trace("offload %s: kernel not loaded, the nest stays on the CPU: %s", k->name, err.message);
    l->failed = true;
    return;
  }
  for (size_t i = 0; i < n; i++)
    if (set[i].arch == cu_module_arch(l->module)) l->code = &k->ptx[i];
  char arch[16];
  cu_trace("offload %s (%s): loaded for %s (%s%s)", k->name, kind_name(k),
           cu_arch_name(cu_module_arch(l->module), arch), path_name(l->code->path),
           l->code->entries & TWASM_ENTRY_PACKED ? ", packed product" : "");
}

/* k's entry, made (WANTED) when new; under rt_offload_lock.  NULL when
 * out of memory. */
static rt_loaded *entry(const twasm_kernel_abi *k) {
  for (rt_loaded *l = rt_loaded_list; l; l = l->next)
    if (l->k == k) return l;
  rt_loaded *l = calloc(1, sizeof *l);
  if (!l) return NULL;
  l->k = k;
  l->state = LOAD_WANTED;
  l->next = rt_loaded_list;
  rt_loaded_list = l;
  return l;
}

/* The kernel's function, its PTX loaded on first use on this thread (the
 * lock held, as launches are serialised anyway); NULL or failed once that
 * failed (said once). */
static rt_loaded *loaded(const twasm_kernel_abi *k) {
  rt_loaded *l = entry(k);
  if (l && l->state == LOAD_WANTED) {
    bool busy; /* never here: a load on this path holds the lock throughout */
    rt_loaded *twin = twin_of(l, &busy);
    load(l, false, twin);
    l->state = LOAD_DONE;
  }
  return l;
}

/* Loads l as a job of the start's compilers (rt_start_post_parallel), or
 * of its helper (rt_start_post), which holds the driver around it. */
static void load_job(rt_loaded *l, bool parallel) {
  bool busy;
  pthread_mutex_lock(&rt_offload_lock);
  rt_loaded *twin = twin_of(l, &busy);
  l->state = busy ? LOAD_WANTED : LOAD_BUSY; /* a twin being compiled: asked for again */
  pthread_mutex_unlock(&rt_offload_lock);
  if (busy) return;
  load(l, parallel, twin);
  pthread_mutex_lock(&rt_offload_lock);
  l->state = LOAD_DONE;
  pthread_mutex_unlock(&rt_offload_lock);
}

static void load_job_parallel(void *l) { load_job(l, true); }

static void load_job_serial(void *l) { load_job(l, false); }

/* Auto mode: the kernel once the helper thread has loaded it, else NULL
 * with the nest on the CPU meanwhile (asked for here, the first time);
 * under rt_offload_lock. */
static rt_loaded *loaded_in_background(const twasm_kernel_abi *k) {
  rt_loaded *l = entry(k);
  if (l && l->state == LOAD_DONE) return l;
  if (l && l->state == LOAD_WANTED &&
      (rt_start_post_parallel(load_job_parallel, l) || rt_start_post(load_job_serial, l)))
    l->state = LOAD_QUEUED;
  return NULL;
}

/* Spans moved to the device by an earlier launch are not prefetched again:
 * that costs about 1.5 ms per GiB even when they are resident (H100,
 * driver 580), more than a map over them takes, and some microseconds for
 * small ones, more than a small kernel.  Pages the CPU touched since then
 * come back by GPU page faults: slower, never wrong. */
#define RT_RESIDENT_SLOTS 64
typedef struct {
  const uint8_t *ptr;
  uint64_t len;
} rt_span_ref;
static rt_span_ref rt_prefetched[RT_RESIDENT_SLOTS];
static unsigned rt_resident_next;

static bool resident(const uint8_t *ptr, uint64_t len) {
  for (unsigned i = 0; i < RT_RESIDENT_SLOTS; i++)
    if (rt_prefetched[i].ptr == ptr && rt_prefetched[i].len == len) return true;
  return false;
}

/* Where an exact in-order sum's data lies (rt_seq.c): inside spans the
 * launches moved to the device (managed or pageable memory; the CPU's
 * touches since are not tracked there), or kept in the device copy of
 * pinned memory. */
static rt_seq_place seq_place(const uint8_t *base, const rt_offload_plan *p, rt_resident *res, bool over_bus,
                              bool host_out) {
  if (res) return rt_resident_cost_bytes(res, p, host_out) ? RT_SEQ_HOST : RT_SEQ_KEPT;
  if (over_bus) return RT_SEQ_PINNED;
  for (int i = 0; i < p->nspans; i++) {
    const uint8_t *lo = base + p->spans[i].lo, *hi = base + p->spans[i].hi;
    bool inside = false;
    for (unsigned s = 0; s < RT_RESIDENT_SLOTS && !inside; s++)
      inside = rt_prefetched[s].ptr && rt_prefetched[s].ptr <= lo && hi <= rt_prefetched[s].ptr + rt_prefetched[s].len;
    if (!inside) return RT_SEQ_HOST;
  }
  return p->nspans ? RT_SEQ_MANAGED : RT_SEQ_HOST;
}

static bool prefetch(uint8_t *base, const rt_offload_plan *p, cu_range *ranges, cu_error *err) {
  for (int i = 0; i < p->nspans; i++) {
    ranges[i] = (cu_range){base + p->spans[i].lo, p->spans[i].hi - p->spans[i].lo};
    if (resident(ranges[i].ptr, ranges[i].len)) continue;
    if (!cu_prefetch(ranges[i].ptr, ranges[i].len, err)) return false;
    cu_trace("gpu: prefetch %p, %llu bytes", ranges[i].ptr, (unsigned long long)ranges[i].len);
    rt_prefetched[rt_resident_next] = (rt_span_ref){ranges[i].ptr, ranges[i].len};
    rt_resident_next = (rt_resident_next + 1) % RT_RESIDENT_SLOTS;
  }
  return true;
}

/* TWASM_TEST_GPU_FAULT=1: the first launch meets a sticky error, for the
 * tests that a GPU failure leaves the CPU's results. */
static bool inject_fault(cu_error *err) {
  static bool done;
  const char *v = getenv("TWASM_TEST_GPU_FAULT");
  if (done || !v || strcmp(v, "1") != 0) return false;
  done = true;
  return !cu_test_fault(err);
}

/* The packed tensor-core product (rt_tc.h) where the loaded module holds
 * it (the plan's TWASM_ENTRY_PACKED) and the shape fits: 1 when it ran, 0
 * when the main entry should run instead (said in the trace), -1 after a
 * sticky error. */
static int packed(const twasm_kernel_abi *k, rt_loaded *l, const rt_offload_plan *p, void **args,
                  const cu_args *a) {
  if (!(l->code->entries & TWASM_ENTRY_PACKED) || !k->tc_elem_bytes || l->tc_state < 0 ||
      !rt_tc_fits(p->work[1], p->work[2], p->work[3]))
    return 0;
  cu_error err;
  if (l->tc_state == 0) {
    l->tc_state = rt_tc_load(l->module, l->entry, &l->tc, &err) ? 1 : -1;
    if (l->tc_state < 0) {
      cu_trace("offload %s: no packed tensor-core product, the main entry runs: %s", k->name, err.message);
      return cu_available() ? 0 : -1;
    }
  }
  if (!rt_tc_launch(&l->tc, p->work[1], p->work[2], p->work[3], k->tc_elem_bytes, args, k->nparams, a,
                    &err)) {
    cu_trace("offload %s: packed tensor-core product failed, the main entry runs: %s", k->name, err.message);
    return cu_available() ? 0 : -1;
  }
  cu_trace("offload %s (%s): gpu: sm_90a packed tensor-core product (%s), %.0f iterations, %llu bytes "
           "checked", k->name, kind_name(k), k->tc_elem_bytes == 4 ? "tf32" : "int8", p->iterations,
           (unsigned long long)p->bytes);
  return 1;
}

/* Whether l's launch on the device copy writes its outputs into the host
 * pages (launch's host_out): its written spans move no bytes. */
static bool host_out_of(const rt_loaded *l) {
  return l && l->code && (l->code->entries & TWASM_ENTRY_HOST_OUT) && rt_resident_host_out();
}

/* Under rt_offload_lock (which also guards the one copy list).  With res,
 * the kernel runs on the device copy of linear memory (rt_resident.c) of
 * mem_size bytes. */
static rt_resident_launch rt_copies;

static uint32_t launch(const twasm_kernel_abi *k, rt_loaded *l, uint8_t *base, uint64_t mem_size,
                       rt_resident *res, const int64_t *params, const rt_offload_plan *p, int64_t *result,
                       rt_defer_how how, bool *deferred) {
  cu_error err;
  *deferred = false;
  if (inject_fault(&err)) return on_cpu(k, err.message);
  uint32_t rbytes = k->launch.result_bytes;
  if (rbytes && !rt_result_cell && !cu_alloc_managed(4096, &rt_result_cell, &err))
    return on_cpu(k, err.message);
  cu_range ranges[RT_OFFLOAD_MAX_SPANS + 1];
  rt_resident_launch *copies = NULL;
  /* A kernel addressing its outputs from a base of their own (the
   * plan's TWASM_ENTRY_HOST_OUT) gets the memory's base there, or on the
   * device copy the host memory's own (rt_resident.c: no copy back). */
  bool out_arg = (l->code->entries & TWASM_ENTRY_HOST_OUT) != 0;
  bool host_out = out_arg && res && rt_resident_host_out();
  uint8_t *host = base;
  /* Launches not waited for (rt_defer.c): this one waits for them first
   * where its pages meet theirs, or where it is not on the device copy. */
  if (rt_defer_pending() && (!res || rt_defer_conflicts(p, host) ||
                             (l->code->entries & TWASM_ENTRY_PACKED)))
    rt_defer_wait();
  if (res) {
    if (!rt_resident_prepare(res, mem_size, p, host_out, &rt_copies, &err)) return on_cpu(k, err.message);
    copies = &rt_copies;
    base = copies->dev_base;
    for (int i = 0; i < p->nspans; i++)
      ranges[i] = (cu_range){(host_out && p->spans[i].is_write ? host : base) + p->spans[i].lo,
                             p->spans[i].hi - p->spans[i].lo};
  } else if (!prefetch(base, p, ranges, &err)) {
    return on_cpu(k, err.message);
  }
  int nranges = p->nspans;
  uint64_t mem = (uint64_t)(uintptr_t)base;
  int64_t values[16];
  void *args[19];
  int nargs = 0;
  args[nargs++] = &mem;
  for (uint32_t i = 0; i < k->nparams; i++) {
    values[i] = params[i];
    args[nargs++] = &values[i];
  }
  uint64_t cell = (uint64_t)(uintptr_t)rt_result_cell;
  if (rbytes) {
    int64_t init = params[k->init_param < k->nparams ? k->init_param : 0];
    memcpy(rt_result_cell, &init, rbytes > 8 ? 8 : rbytes);
    args[nargs++] = &cell;
    ranges[nranges++] = (cu_range){rt_result_cell, 8};
  }
  uint64_t out_base = (uint64_t)(uintptr_t)(host_out ? host : base);
  if (out_arg) args[nargs++] = &out_base;
  const twasm_kernel_launch_abi *g = &k->launch;
  cu_args a = {.params = args, .ranges = ranges, .nranges = (size_t)nranges, .param_words = (uint32_t)nargs};
  if (copies) {
    a.in = copies->in, a.nin = copies->nin;
    a.out = copies->out, a.nout = copies->nout;
  }
  int tc = packed(k, l, p, args, &a);
  if (tc < 0) return on_cpu(k, cu_unavailable_reason());
  if (tc > 0) return 1;
  /* Its outputs go straight to the host pages, nothing comes back, no
   * result: it may go unwaited. */
  int slot = how != RT_DEFER_NONE && host_out && !rbytes && copies && !copies->unkept
                 ? rt_defer_choose(k, p, how == RT_DEFER_CODE)
                 : -1;
  a.no_wait = slot >= 0;
  cu_dim3 grid = {p->grid[0], p->grid[1], p->grid[2]}, block = {g->block[0], g->block[1], g->block[2]};
  if (!cu_launch(&l->fn, grid, block, 0, &a, &err)) {
    /* waited for what was queued, the pending launches too */
    rt_defer_wait();
    if (copies && cu_available()) rt_resident_abandon(res, copies);
    return on_cpu(k, err.message);
  }
  if (slot >= 0) {
    *deferred = true;
    if (!rt_defer_add(res, host, p, slot, how == RT_DEFER_CODE)) rt_defer_wait();
  } else {
    rt_defer_synced();
  }
  if (rbytes) {
    *result = 0;
    memcpy(result, rt_result_cell, rbytes > 8 ? 8 : rbytes);
  }
  if (cu_tracing()) {
    char batch[48] = "", arch[16];
    if (p->batch > 1) snprintf(batch, sizeof batch, ", a batch of %lld products", (long long)p->batch);
    char moved[96] = "";
    if (copies)
      snprintf(moved, sizeof moved, ", device copy: %llu bytes copied, %llu kept", (unsigned long long)copies->copy_bytes,
               (unsigned long long)rt_resident_kept_bytes(res));
    cu_trace("offload %s (%s): gpu: %s, %.0f iterations, %llu bytes checked%s%s%s", k->name,
             kind_name(k), cu_arch_name(cu_module_arch(l->module), arch), p->iterations,
             (unsigned long long)p->bytes, batch, moved, *deferred ? ", not waited for" : "");
  }
  return 1;
}

/* Calls of twasm_rt_offload, written at exit to the file
 * $TWASM_TEST_OFFLOAD_CALLS when set: tests count what the generated
 * code's back-off saves (a plain count: a lost increment is harmless). */
static uint64_t rt_offload_calls;

void rt_offload_write_calls(void) {
  const char *path = getenv("TWASM_TEST_OFFLOAD_CALLS");
  FILE *f = path && *path ? fopen(path, "w") : NULL;
  if (!f) return;
  fprintf(f, "%llu\n", (unsigned long long)rt_offload_calls);
  fclose(f);
}

__attribute__((destructor)) static void write_offload_calls(void) { rt_offload_write_calls(); }

/* The CPU run of a nest auto mode could have launched, timed from the CPU
 * answer to the thread's next call here (rt_choice.c): per thread, as a
 * nest runs on its caller's thread. */
static _Thread_local rt_loaded *rt_cpu_nest;
static _Thread_local double rt_cpu_ops, rt_cpu_since;

static void cpu_run_ended(void) {
  double us = now_us() - rt_cpu_since;
  rt_loaded *l = rt_cpu_nest;
  rt_cpu_nest = NULL;
  /* Products alone count as repeated nests (rt_start.c): a reduction
   * called a thousand times (qlayer_i8's strided check) gained nothing
   * from a start, the LLM's products everything. */
  rt_start_cpu_ran(l->k->kind == TWASM_KERNEL_MATMUL ? l->k : NULL, rt_cpu_ops * TWASM_COST_CPU_NS_PER_OP / 1000,
                   us);
  pthread_mutex_lock(&rt_offload_lock);
  rt_choice_cpu_ran(&l->choice, rt_cpu_ops, us);
  pthread_mutex_unlock(&rt_offload_lock);
}

/* The nest of l runs on the CPU now, though worth a launch: timed. */
static void cpu_run_begins(rt_loaded *l, double ops) {
  if (!l) return;
  rt_cpu_nest = l;
  rt_cpu_ops = ops;
  rt_cpu_since = now_us();
}

/* twasm_rt_offload and twasm_rt_offload_unwaited (by_code: the code
 * waits before its accesses, rt_defer.c). */
static uint32_t offload(void *vmctx, uint32_t kernel, const int64_t *params, int64_t *result, bool by_code) {
  __atomic_store_n(&rt_offload_calls, __atomic_load_n(&rt_offload_calls, __ATOMIC_RELAXED) + 1,
                   __ATOMIC_RELAXED);
  const twasm_vmctx *vm = vmctx;
  const twasm_module_abi *mod = vm->module;
  if (!mod || kernel >= mod->nkernels) return 0;
  const twasm_kernel_abi *k = &mod->kernels[kernel];
  if (rt_cpu_nest) cpu_run_ended();
  double quick;
  __atomic_load(&rt_quick_launch_us, &quick, __ATOMIC_RELAXED);
  if (quick > 0 && !twasm_cost_worth_it(rt_offload_ops(k, params), quick)) return quick_cpu();
  double prof_t = cu_prof_on() ? cu_prof_now() : 0; /* TWASM_GPU_PROFILE */
  if (cu_tracing()) trace_params(k, params, "");
  cu_mode mode = cu_mode_get();
  if (mode == CU_MODE_CPU) return cu_tracing() ? on_cpu(k, "TWASM_DEVICE=cpu") : close_gate();
  rt_memory *mem = (rt_memory *)vm->mem;
  if (!mem) return on_cpu(k, "no linear memory");
  /* An exact in-order sum pays only over data a launch left on the
   * device: it neither starts the GPU nor counts towards its price. */
  bool seq = rt_seq_kernel(k);
  if (seq && mode == CU_MODE_AUTO && !rt_start_ready())
    return on_cpu(k, "exact in-order sum: the GPU has not started, its data is not there");
  if (mode == CU_MODE_AUTO && !rt_start_ready()) {
    if (!cu_tracing()) set_quick(RT_START_LAUNCH_US);
    char buf[200];
    const char *why;
    rt_start s = rt_start_decide(rt_offload_ops(k, params), mem, &why, buf, sizeof buf);
    if (s == RT_START_NEVER && !cu_tracing()) return close_gate();
    if (s == RT_START_STARTING || s == RT_START_LATER) {
      /* loaded as soon as the driver is up; the CPU run timed */
      pthread_mutex_lock(&rt_offload_lock);
      if (s == RT_START_STARTING) loaded_in_background(k);
      rt_loaded *l = entry(k);
      pthread_mutex_unlock(&rt_offload_lock);
      double ops = rt_offload_ops(k, params);
      if (twasm_cost_worth_it(ops, RT_START_LAUNCH_US)) cpu_run_begins(l, ops);
    }
    if (s != RT_START_READY) return on_cpu(k, why);
  }
  /* Without a GPU, return at once; a trace computes the plan first, as its
   * refusals say most about the nest, GPU or not. */
  if (!cu_tracing() && !cu_available()) return close_gate();
  if (!cu_tracing() && mode == CU_MODE_AUTO && isfinite(cu_launch_cost_us())) {
    set_quick(cu_launch_cost_us());
    if (!twasm_cost_worth_it(rt_offload_ops(k, params), cu_launch_cost_us())) return TWASM_OFFLOAD_TOO_SMALL;
  }
  rt_offload_plan plan;
  const char *why = rt_offload_plan_make_in(k, params, mem->abi.base, mem->abi.size_bytes, &plan);
  if (why) return on_cpu(k, why);
  if (!cu_available()) return on_cpu(k, cu_unavailable_reason());
  if (mode == CU_MODE_AUTO) {
    double launch_us = cu_launch_cost_us();
    if (isinf(launch_us)) return on_cpu(k, "cost model: no launch could be timed on this GPU");
    if (!twasm_cost_worth_it(plan.ops, launch_us))
      return on_cpu(k, "cost model: too little work for a launch");
  }
  pthread_mutex_lock(&rt_offload_lock);
  bool over_bus = false, driver = false;
  char bus[200];
  rt_loaded *l = mode == CU_MODE_AUTO ? loaded_in_background(k) : loaded(k);
  if (!l) why = mode == CU_MODE_AUTO ? "its kernel is being loaded in the background" : "out of memory";
  else if (l->failed) why = "kernel not loaded";
  /* Never behind the start's helper thread: its PTX loads hold the
   * driver for up to seconds. */
  else if (!(driver = rt_start_driver_try())) why = "the driver is busy loading a kernel (helper thread)";
  else why = rt_memory_reachable(mem, &over_bus);
  /* Pinned host memory: the kernel reads and writes every byte over the
   * bus, which the CPU loop need not, unless it runs on the memory's
   * device copy (rt_resident.c), which moves only what is not there. */
  rt_resident *res = NULL;
  if (!why && over_bus && rt_resident_wanted()) {
    if (!mem->resident) mem->resident = rt_resident_new(mem->abi.base, mem->usable);
    res = mem->resident;
  }
  double launch_us = cu_launch_cost_us();
  double cpu_us = plan.ops * TWASM_COST_CPU_NS_PER_OP / 1000;
  double gpu_us = launch_us, copy_us = 0;
  if (res) {
    /* this call's copies: a measured rate leaves them out (rt_choice.c) */
    copy_us = (double)rt_resident_cost_bytes(res, &plan, host_out_of(l)) / RT_BUS_BYTES_PER_US;
    gpu_us += copy_us + (double)plan.bytes / RT_HBM_BYTES_PER_US;
  } else if (over_bus) {
    gpu_us += bus_us(&plan);
  }
  if (!why && seq && mode == CU_MODE_AUTO)
    why = rt_seq_weigh(&plan, seq_place(mem->abi.base, &plan, res, over_bus, host_out_of(l)), launch_us + copy_us,
                       &l->choice.move_us, &gpu_us);
  if (!why && mode == CU_MODE_AUTO && !rt_choice_take_gpu(&l->choice, plan.ops, launch_us + copy_us, cpu_us, gpu_us)) {
    /* the figures only for a trace: formatting them cost about 4,600
     * instructions a CPU answer (callgrind, docs/PERFORMANCE.md) */
    why = "cost model: the GPU is slower than the CPU";
    if (cu_tracing()) {
      snprintf(bus, sizeof bus, "cost model%s: the GPU (%.0f us%s) is slower than the CPU (%.0f us)",
               l->choice.gpu_runs ? ", measured" : "",
               rt_choice_gpu_us(&l->choice, plan.ops, launch_us + copy_us, gpu_us),
               res ? ", device copy" : over_bus ? ", over the bus" : "",
               rt_choice_cpu_us(&l->choice, plan.ops, cpu_us));
      why = bus;
    }
  }
  uint32_t done;
  if (why) {
    done = on_cpu(k, why);
    if (mode == CU_MODE_AUTO) cpu_run_begins(l ? l : entry(k), plan.ops);
  } else {
    if (prof_t) cu_prof_add(CU_PROF_DECIDE, prof_t);
    double t0 = now_us();
    bool deferred;
    /* by the code: once a launch of it was measured (auto mode) */
    rt_defer_how how = !by_code ? RT_DEFER_PAGES
                       : mode != CU_MODE_AUTO || l->choice.gpu_runs ? RT_DEFER_CODE
                                                                    : RT_DEFER_NONE;
    done = launch(k, l, mem->abi.base, mem->abi.size_bytes, res, params, &plan, result, how, &deferred);
    /* an unwaited launch's time is not its cost: the waited ones measure */
    if (done && !deferred && mode == CU_MODE_AUTO) {
      double wall = now_us() - t0, moved = 0, again = 0;
      if (res) {
        moved = (double)rt_copies.copy_bytes / RT_BUS_BYTES_PER_US;
        again = (double)rt_copies.again_bytes / RT_BUS_BYTES_PER_US; /* no second page scan */
      }
      rt_choice_gpu_ran(&l->choice, plan.ops, wall, launch_us, moved, again, cpu_us);
    }
    if (prof_t) cu_prof_add(CU_PROF_LAUNCH, t0);
  }
  if (driver) rt_start_driver_done();
  pthread_mutex_unlock(&rt_offload_lock);
  return done;
}

uint32_t twasm_rt_offload(void *vmctx, uint32_t kernel, const int64_t *params, int64_t *result) {
  return offload(vmctx, kernel, params, result, false);
}

/* The CPU runs the nest: what is pending finishes first. */
uint32_t twasm_rt_offload_unwaited(void *vmctx, uint32_t kernel, const int64_t *params, int64_t *result) {
  uint32_t done = offload(vmctx, kernel, params, result, true);
  if (done != 1 && __atomic_load_n(&twasm_rt_offload_pending, __ATOMIC_RELAXED)) twasm_rt_offload_wait();
  return done;
}

/* The bytes the parts of a nest will write, kept before the first launch
 * so that a failed later launch can put them back. */
typedef struct {
  uint8_t *copy;
  size_t bytes;
} rt_saved;

static bool save_writes(const rt_offload_plan *plans, uint32_t count, const uint8_t *base, rt_saved *s) {
  s->bytes = 0;
  for (uint32_t j = 0; j < count; j++)
    for (int i = 0; i < plans[j].nspans; i++)
      if (plans[j].spans[i].is_write) s->bytes += plans[j].spans[i].hi - plans[j].spans[i].lo;
  s->copy = malloc(s->bytes ? s->bytes : 1);
  if (!s->copy) return false;
  size_t at = 0;
  for (uint32_t j = 0; j < count; j++)
    for (int i = 0; i < plans[j].nspans; i++) {
      const rt_offload_span *x = &plans[j].spans[i];
      if (!x->is_write) continue;
      memcpy(s->copy + at, base + x->lo, x->hi - x->lo);
      at += x->hi - x->lo;
    }
  return true;
}

static void restore_writes(const rt_offload_plan *plans, uint32_t count, uint8_t *base, const rt_saved *s) {
  size_t at = 0;
  for (uint32_t j = 0; j < count; j++)
    for (int i = 0; i < plans[j].nspans; i++) {
      const rt_offload_span *x = &plans[j].spans[i];
      if (!x->is_write) continue;
      memcpy(base + x->lo, s->copy + at, x->hi - x->lo);
      at += x->hi - x->lo;
    }
}

/* The parts' launches, in order, the decision made; 1 when all ran, else
 * 0 with memory as before the first.  On the device copy, moved and again
 * get the parts' copy bytes and what of them the same call would copy
 * again (rt_resident_launch's copy_bytes and again_bytes, summed). */
static uint32_t launch_parts(const twasm_kernel_abi **ks, rt_loaded **ls, const int64_t **ps,
                             const rt_offload_plan *plans, uint32_t count, rt_memory *mem, rt_resident *res,
                             uint64_t *moved, uint64_t *again) {
  rt_saved saved;
  *moved = *again = 0;
  /* the CPU reads the parts' outputs: launches not waited for finish first */
  rt_defer_wait();
  if (!save_writes(plans, count, mem->abi.base, &saved)) return on_cpu(ks[0], "out of memory");
  uint32_t done = 1;
  for (uint32_t j = 0; j < count && done; j++) {
    int64_t unused = 0;
    bool deferred;
    done = launch(ks[j], ls[j], mem->abi.base, mem->abi.size_bytes, res, ps[j], &plans[j], &unused,
                  RT_DEFER_NONE, &deferred);
    if (done && res) *moved += rt_copies.copy_bytes, *again += rt_copies.again_bytes;
    if (!done && j > 0) {
      restore_writes(plans, count, mem->abi.base, &saved);
      cu_trace("offload %s: part %u of %u failed: the parts' writes put back, the nest runs on the CPU",
               ks[0]->name, j + 1, count);
    }
  }
  free(saved.copy);
  return done;
}

/* As twasm_rt_offload, for the parts of one nest (twasm_abi.h): the
 * decision is the nest's (its parts' operations summed, the first part's
 * measurements in auto mode), every check before the first launch. */
uint32_t twasm_rt_offload_group(void *vmctx, uint32_t first, uint32_t count, const int64_t *params) {
  __atomic_store_n(&rt_offload_calls, __atomic_load_n(&rt_offload_calls, __ATOMIC_RELAXED) + 1,
                   __ATOMIC_RELAXED);
  const twasm_vmctx *vm = vmctx;
  const twasm_module_abi *mod = vm->module;
  if (!mod || count == 0 || count > RT_OFFLOAD_MAX_PARTS || first >= mod->nkernels ||
      count > mod->nkernels - first)
    return 0;
  const twasm_kernel_abi *ks[RT_OFFLOAD_MAX_PARTS];
  const int64_t *ps[RT_OFFLOAD_MAX_PARTS];
  rt_loaded *ls[RT_OFFLOAD_MAX_PARTS] = {0};
  double ops = 0;
  size_t at = 0;
  for (uint32_t j = 0; j < count; j++) {
    ks[j] = &mod->kernels[first + j];
    if (ks[j]->launch.result_bytes) return 0;
    ps[j] = params + at;
    at += ks[j]->nparams;
    ops += rt_offload_ops(ks[j], ps[j]);
  }
  const twasm_kernel_abi *k = ks[0];
  if (rt_cpu_nest) cpu_run_ended();
  double quick;
  __atomic_load(&rt_quick_launch_us, &quick, __ATOMIC_RELAXED);
  if (quick > 0 && !twasm_cost_worth_it(ops, quick * count)) return quick_cpu();
  for (uint32_t j = 0; j < count && cu_tracing(); j++) {
    char part[40];
    snprintf(part, sizeof part, " (part %u of %u)", j + 1, count);
    trace_params(ks[j], ps[j], part);
  }
  cu_mode mode = cu_mode_get();
  if (mode == CU_MODE_CPU) return cu_tracing() ? on_cpu(k, "TWASM_DEVICE=cpu") : close_gate();
  rt_memory *mem = (rt_memory *)vm->mem;
  if (!mem) return on_cpu(k, "no linear memory");
  if (mode == CU_MODE_AUTO && !rt_start_ready()) {
    if (!cu_tracing()) set_quick(RT_START_LAUNCH_US);
    char buf[200];
    const char *why;
    rt_start s = rt_start_decide(ops, mem, &why, buf, sizeof buf);
    if (s == RT_START_NEVER && !cu_tracing()) return close_gate();
    if (s == RT_START_STARTING || s == RT_START_LATER) {
      pthread_mutex_lock(&rt_offload_lock);
      for (uint32_t j = 0; j < count && s == RT_START_STARTING; j++) loaded_in_background(ks[j]);
      rt_loaded *l = entry(k);
      pthread_mutex_unlock(&rt_offload_lock);
      if (twasm_cost_worth_it(ops, RT_START_LAUNCH_US * count)) cpu_run_begins(l, ops);
    }
    if (s != RT_START_READY) return on_cpu(k, why);
  }
  if (!cu_tracing() && !cu_available()) return close_gate();
  if (!cu_tracing() && mode == CU_MODE_AUTO && isfinite(cu_launch_cost_us())) {
    set_quick(cu_launch_cost_us());
    if (!twasm_cost_worth_it(ops, cu_launch_cost_us() * count)) return TWASM_OFFLOAD_TOO_SMALL;
  }
  /* every part's checks, and the parts apart, before any launch */
  rt_offload_plan plans[RT_OFFLOAD_MAX_PARTS];
  const char *why = NULL;
  for (uint32_t j = 0; j < count && !why; j++) {
    why = rt_offload_plan_make_in(ks[j], ps[j], mem->abi.base, mem->abi.size_bytes, &plans[j]);
    if (why) return on_cpu(ks[j], why);
  }
  why = rt_offload_plans_apart(plans, count);
  if (why) return on_cpu(k, why);
  if (!cu_available()) return on_cpu(k, cu_unavailable_reason());
  double launch_us = cu_launch_cost_us() * count;
  if (mode == CU_MODE_AUTO) {
    if (isinf(launch_us)) return on_cpu(k, "cost model: no launch could be timed on this GPU");
    if (!twasm_cost_worth_it(ops, launch_us)) return on_cpu(k, "cost model: too little work for a launch");
  }
  pthread_mutex_lock(&rt_offload_lock);
  bool over_bus = false, driver = false;
  for (uint32_t j = 0; j < count && !why; j++) {
    ls[j] = mode == CU_MODE_AUTO ? loaded_in_background(ks[j]) : loaded(ks[j]);
    if (!ls[j]) why = mode == CU_MODE_AUTO ? "its kernel is being loaded in the background" : "out of memory";
    else if (ls[j]->failed) why = "kernel not loaded";
  }
  if (!why && !(driver = rt_start_driver_try())) why = "the driver is busy loading a kernel (helper thread)";
  if (!why) why = rt_memory_reachable(mem, &over_bus);
  rt_resident *res = NULL;
  if (!why && over_bus && rt_resident_wanted()) {
    if (!mem->resident) mem->resident = rt_resident_new(mem->abi.base, mem->usable);
    res = mem->resident;
  }
  double cpu_us = ops * TWASM_COST_CPU_NS_PER_OP / 1000, gpu_us = launch_us, copy_us = 0;
  for (uint32_t j = 0; j < count && !why; j++) {
    if (res) {
      double c = (double)rt_resident_cost_bytes(res, &plans[j], host_out_of(ls[j])) / RT_BUS_BYTES_PER_US;
      copy_us += c;
      gpu_us += c + (double)plans[j].bytes / RT_HBM_BYTES_PER_US;
    } else if (over_bus) {
      gpu_us += bus_us(&plans[j]);
    }
  }
  char bus[200];
  if (!why && mode == CU_MODE_AUTO &&
      !rt_choice_take_gpu(&ls[0]->choice, ops, launch_us + copy_us, cpu_us, gpu_us)) {
    why = "cost model: the GPU is slower than the CPU";
    if (cu_tracing()) {
      snprintf(bus, sizeof bus, "cost model%s: the GPU (%.0f us, %u launches) is slower than the CPU (%.0f us)",
               ls[0]->choice.gpu_runs ? ", measured" : "",
               rt_choice_gpu_us(&ls[0]->choice, ops, launch_us + copy_us, gpu_us), count,
               rt_choice_cpu_us(&ls[0]->choice, ops, cpu_us));
      why = bus;
    }
  }
  uint32_t done;
  if (why) {
    done = on_cpu(k, why);
    if (mode == CU_MODE_AUTO) cpu_run_begins(ls[0] ? ls[0] : entry(k), ops);
  } else {
    double t0 = now_us();
    uint64_t moved, again;
    done = launch_parts(ks, ls, ps, plans, count, mem, res, &moved, &again);
    /* as a single launch's: what the parts copied, and would again (no
     * second page scan) */
    if (done && mode == CU_MODE_AUTO)
      rt_choice_gpu_ran(&ls[0]->choice, ops, now_us() - t0, launch_us, (double)moved / RT_BUS_BYTES_PER_US,
                        (double)again / RT_BUS_BYTES_PER_US, cpu_us);
  }
  if (driver) rt_start_driver_done();
  pthread_mutex_unlock(&rt_offload_lock);
  return done;
}
