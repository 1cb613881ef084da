/* cu_launch.c: kernel launches (pointer checks, launch, synchronise, sticky
 * errors) and the measured cost of an empty launch for the cost model. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cu.h"

static double cu_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* A host pointer in a kernel raises an illegal-address error that poisons
 * the context for the whole process: refuse before launching. */
static bool cu_check_ranges(const cu_kernel *k, const cu_args *args, cu_error *err) {
  for (size_t i = 0; i < args->nranges; i++) {
    const cu_range *r = &args->ranges[i];
    if (!cu_reachable(r->ptr, r->len))
      return cu_fail_msg(err, "kernel %s: range %zu (%p, %llu bytes) is not inside memory the "
                         "device reaches; not launched", k->name, i, r->ptr,
                         (unsigned long long)r->len);
  }
  return true;
}

static bool cu_start(const cu_kernel *k, cu_dim3 grid, cu_dim3 block, uint32_t shared_bytes,
                     void **params, cu_error *err) {
  char what[200];
  cu_result r = cu_drv.launch_kernel(k->function, grid.x, grid.y, grid.z, block.x, block.y,
                                     block.z, shared_bytes, NULL, params, NULL);
  if (r == 0) return true;
  snprintf(what, sizeof what, "cuLaunchKernel(%.120s)", k->name);
  return cu_check_failure(err, what, r);
}

/* How a launch is waited for (TWASM_GPU_SYNC): stream
 * cuStreamSynchronize on the null stream that every launch and copy goes
 * to (the default where the driver has it), ctx cuCtxSynchronize, query
 * cuStreamQuery in a loop until the stream is done (never yields the
 * core).  On the H200 the LLM-style program's medians were higher with
 * stream than with ctx in all six comparisons of two calls, within the
 * spread of single runs (docs/PERFORMANCE.md, "Launches as graphs"). */
enum { CU_SYNC_CTX, CU_SYNC_STREAM, CU_SYNC_QUERY };
#define CU_ERROR_NOT_READY 600
static pthread_once_t cu_sync_once = PTHREAD_ONCE_INIT;
static int cu_sync_mode = CU_SYNC_CTX;

static void cu_sync_init(void) {
  const char *v = getenv("TWASM_GPU_SYNC");
  if (!v || !*v) {
    if (cu_drv.stream_synchronize) cu_sync_mode = CU_SYNC_STREAM;
    return;
  }
  if (strcmp(v, "ctx") == 0) return;
  if (strcmp(v, "stream") == 0 && cu_drv.stream_synchronize)
    cu_sync_mode = CU_SYNC_STREAM;
  else if (strcmp(v, "query") == 0 && cu_drv.stream_query)
    cu_sync_mode = CU_SYNC_QUERY;
  else
    cu_trace("gpu: TWASM_GPU_SYNC=%s is not ctx, stream or query (or the driver lacks it): ctx used", v);
}

/* Faults inside a kernel surface here, not at its launch. */
bool cu_sync(const char *name, cu_error *err) {
  pthread_once(&cu_sync_once, cu_sync_init);
  cu_result r;
  if (cu_sync_mode == CU_SYNC_QUERY)
    while ((r = cu_drv.stream_query(NULL)) == CU_ERROR_NOT_READY) {
    }
  else if (cu_sync_mode == CU_SYNC_STREAM)
    r = cu_drv.stream_synchronize(NULL);
  else
    r = cu_drv.ctx_synchronize();
  if (r == 0) return true;
  char what[200];
  snprintf(what, sizeof what, "kernel %.120s", name);
  return cu_check_failure(err, what, r);
}

static bool cu_finish(const cu_kernel *k, cu_error *err) { return cu_sync(k->name, err); }

/* Launch and synchronise, nothing else: the context is current. */
static bool cu_run(const cu_kernel *k, cu_dim3 grid, cu_dim3 block, uint32_t shared_bytes,
                   void **params, cu_error *err) {
  return cu_start(k, grid, block, shared_bytes, params, err) && cu_finish(k, err);
}

bool cu_launch(const cu_kernel *k, cu_dim3 grid, cu_dim3 block,
               uint32_t shared_bytes, const cu_args *args, cu_error *err) {
  cu_step step = {k, grid, block, shared_bytes, args->params};
  return cu_launch_steps(&step, 1, args, err);
}

/* Copies by kernel: a copy between pinned host memory (mapped, at its
 * own addresses) and device memory done by a small kernel on the
 * launches' stream instead of the copy engine.  A launch's copy in,
 * kernel and copy back then run on the compute engine alone, with no
 * hand-over between engines in between (measured in docs/PERFORMANCE.md,
 * "Copies by kernel").  twasm_copy16 moves n 16-byte units (both ends and
 * the length 16-byte aligned: the device copy's page-sized copies in),
 * twasm_copy1 n bytes; each thread strides over the grid. */
#define CU_COPY_PTX_BODY(NAME, SHIFT, LOAD, STORE)                                      \
  ".visible .entry " NAME "(.param .u64 dst, .param .u64 src, .param .u64 n)\n{\n"      \
  "\t.reg .pred %p<2>;\n\t.reg .b32 %r<9>;\n\t.reg .b64 %rd<12>;\n"                      \
  "\tld.param.u64 %rd1, [dst];\n\tld.param.u64 %rd2, [src];\n\tld.param.u64 %rd3, [n];\n" \
  "\tmov.u32 %r1, %ctaid.x;\n\tmov.u32 %r2, %ntid.x;\n\tmov.u32 %r3, %tid.x;\n"           \
  "\tmul.wide.u32 %rd4, %r1, %r2;\n\tcvt.u64.u32 %rd5, %r3;\n\tadd.u64 %rd4, %rd4, %rd5;\n" \
  "\tmov.u32 %r4, %nctaid.x;\n\tmul.wide.u32 %rd6, %r4, %r2;\n"                          \
  NAME "_loop:\n\tsetp.ge.u64 %p1, %rd4, %rd3;\n\t@%p1 bra " NAME "_done;\n"             \
  "\tshl.b64 %rd7, %rd4, " SHIFT ";\n\tadd.u64 %rd8, %rd2, %rd7;\n\tadd.u64 %rd9, %rd1, %rd7;\n" \
  LOAD STORE "\tadd.u64 %rd4, %rd4, %rd6;\n\tbra " NAME "_loop;\n" NAME "_done:\n\tret;\n}\n"
#define CU_COPY_PTX(VERSION, TARGET)                                                    \
  ".version " VERSION "\n.target " TARGET "\n.address_size 64\n\n"                     \
  CU_COPY_PTX_BODY("twasm_copy16", "4",                                               \
                   "\tld.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd8];\n",               \
                   "\tst.global.v4.u32 [%rd9], {%r5, %r6, %r7, %r8};\n")               \
  CU_COPY_PTX_BODY("twasm_copy1", "0", "\tld.global.u8 %r5, [%rd8];\n",                \
                   "\tst.global.u8 [%rd9], %r5;\n")
static const char cu_copy_ptx_50[] = CU_COPY_PTX("6.0", "sm_50");
static const char cu_copy_ptx_75[] = CU_COPY_PTX("6.3", "sm_75");

/* Copies up to this many bytes go by kernel (TWASM_GPU_KCOPY=BYTES; 0:
 * every copy on the copy engine). */
#define CU_KCOPY_MAX (64u << 10)
#define CU_KCOPY_BLOCK 256u
#define CU_KCOPY_GRID 64u

static pthread_once_t cu_kcopy_once = PTHREAD_ONCE_INIT;
static uint64_t cu_kcopy_max;
static cu_kernel cu_kcopy16, cu_kcopy1;

static void cu_kcopy_init(void) {
  uint64_t max = CU_KCOPY_MAX;
  const char *v = getenv("TWASM_GPU_KCOPY");
  if (v && *v && !cu_parse_size(v, &max)) max = CU_KCOPY_MAX;
  if (!max) return;
  const cu_ptx set[] = {{50, 60, cu_copy_ptx_50}, {75, 63, cu_copy_ptx_75}};
  cu_module *m = NULL;
  cu_error err;
  /* The module stays loaded for the process. */
  if (!cu_module_load(set, 2, &m, &err) || !cu_module_kernel(m, "twasm_copy16", &cu_kcopy16, &err) ||
      !cu_module_kernel(m, "twasm_copy1", &cu_kcopy1, &err)) {
    cu_trace("gpu: copies by kernel off: %s", err.message);
    cu_module_unload(m);
    return;
  }
  cu_kcopy_max = max;
  cu_trace("gpu: copies of up to %llu bytes by kernel", (unsigned long long)max);
}

bool cu_kcopy_plan(const cu_copy *c, bool to_device, cu_step *step, uint64_t words[3]) {
  pthread_once(&cu_kcopy_once, cu_kcopy_init);
  if (c->len > cu_kcopy_max || !cu_reachable(c->host, c->len)) return false;
  uint64_t dst = (uint64_t)(uintptr_t)(to_device ? c->dev : c->host);
  uint64_t src = (uint64_t)(uintptr_t)(to_device ? c->host : c->dev);
  bool wide = ((dst | src | c->len) & 15) == 0;
  uint64_t n = wide ? c->len / 16 : c->len;
  uint64_t blocks = (n + CU_KCOPY_BLOCK - 1) / CU_KCOPY_BLOCK;
  words[0] = dst, words[1] = src, words[2] = n;
  *step = (cu_step){wide ? &cu_kcopy16 : &cu_kcopy1,
                    {(uint32_t)(blocks < CU_KCOPY_GRID ? blocks : CU_KCOPY_GRID), 1, 1},
                    {CU_KCOPY_BLOCK, 1, 1}, 0, NULL};
  return true;
}

/* Queues c by kernel when cu_kcopy_plan takes it; false in *done
 * otherwise. */
static bool cu_kcopy(const cu_copy *c, bool to_device, bool *done, cu_error *err) {
  cu_step step;
  uint64_t words[3];
  *done = cu_kcopy_plan(c, to_device, &step, words);
  if (!*done) return true;
  void *params[] = {&words[0], &words[1], &words[2]};
  return cu_start(step.kernel, step.grid, step.block, 0, params, err);
}

/* Queues the copies of a launch on the null stream, in order with it. */
static bool cu_queue_copies(const cu_copy *c, size_t n, bool to_device, cu_error *err) {
  if (n && (to_device ? !cu_drv.memcpy_htod_async : !cu_drv.memcpy_dtoh_async))
    return cu_fail_msg(err, "the driver lacks cuMemcpyHtoDAsync_v2 or cuMemcpyDtoHAsync_v2");
  for (size_t i = 0; i < n; i++) {
    if (!c[i].len) continue;
    if (!cu_reachable(c[i].dev, c[i].len))
      return cu_fail_msg(err, "copy of %llu bytes to %p: not inside device memory; not launched",
                         (unsigned long long)c[i].len, c[i].dev);
    bool by_kernel;
    if (!cu_kcopy(&c[i], to_device, &by_kernel, err)) return false;
    if (by_kernel) continue;
    /* in pieces where the host span crosses pinned pieces' ends (memory
     * pinned, then grown) */
    uint8_t *host = c[i].host;
    uint64_t dev = (uint64_t)(uintptr_t)c[i].dev, len = c[i].len;
    while (len) {
      uint64_t n = cu_host_piece_left(host);
      if (n > len) n = len;
      cu_result r = to_device ? cu_drv.memcpy_htod_async(dev, host, (size_t)n, NULL)
                              : cu_drv.memcpy_dtoh_async(host, dev, (size_t)n, NULL);
      if (r != 0) return cu_check_failure(err, to_device ? "cuMemcpyHtoDAsync" : "cuMemcpyDtoHAsync", r);
      host += n, dev += n, len -= n;
    }
  }
  return true;
}

bool cu_launch_steps(const cu_step *steps, size_t n, const cu_args *args, cu_error *err) {
  if (!n || !cu_make_current(err) || !cu_check_ranges(steps[0].kernel, args, err)) return false;
  /* A launch seen before runs as its graph (cu_graph.c) */
  if (n == 1 && args->param_words) {
    int g = cu_graph_launch(&steps[0], args, err);
    if (g) return g > 0;
  }
  double start = cu_now_us();
  bool prof = cu_prof_on();
  double t = prof ? start : 0;
  /* A failed copy before the launches leaves nothing queued that could
   * touch host memory after this returns; a failure after them waits for
   * what was queued. */
  if (!cu_queue_copies(args->in, args->nin, true, err)) {
    cu_error ignored;
    (void)cu_finish(steps[0].kernel, &ignored);
    return false;
  }
  if (prof) {
    uint64_t bytes = 0;
    for (size_t i = 0; i < args->nin; i++) bytes += args->in[i].len;
    cu_prof_copies(args->nin, bytes);
    cu_prof_add(CU_PROF_COPY_IN, t);
    t = cu_prof_now();
  }
  for (size_t i = 0; i < n; i++)
    if (!cu_start(steps[i].kernel, steps[i].grid, steps[i].block, steps[i].shared_bytes,
                  steps[i].params, err)) {
      cu_error ignored;
      (void)cu_finish(steps[i].kernel, &ignored);
      return false;
    }
  if (prof) cu_prof_add(CU_PROF_KERNEL, t), t = cu_prof_now();
  bool copied = cu_queue_copies(args->out, args->nout, false, err);
  double queued = cu_now_us() - start;
  if (!copied) {
    cu_error ignored;
    (void)cu_finish(steps[n - 1].kernel, &ignored);
    return false;
  }
  if (prof) cu_prof_add(CU_PROF_COPY_OUT, t), t = cu_prof_now();
  if (!args->no_wait) {
    if (!cu_finish(steps[n - 1].kernel, err)) return false;
    if (prof) cu_prof_add(CU_PROF_SYNC, t);
  }
  if (cu_tracing()) {
    double us = cu_now_us() - start;
    for (size_t i = 0; i < n; i++) {
      const cu_step *s = &steps[i];
      char total[48] = "";
      if (i + 1 == n) snprintf(total, sizeof total, ": %.1f us (queued in %.1f)", us, queued);
      cu_trace("gpu: launch %s grid=(%u,%u,%u) block=(%u,%u,%u) shared=%u%s", s->kernel->name,
               s->grid.x, s->grid.y, s->grid.z, s->block.x, s->block.y, s->block.z,
               s->shared_bytes, total);
    }
  }
  return true;
}

bool cu_kernel_allow_shared(const cu_kernel *k, uint32_t bytes, cu_error *err) {
  enum { CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8 };
  if (!cu_make_current(err)) return false;
  if (!cu_drv.func_set_attribute) return cu_fail_msg(err, "the driver lacks cuFuncSetAttribute");
  cu_result r = cu_drv.func_set_attribute(k->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          (int)bytes);
  return r == 0 || cu_check_failure(err, "cuFuncSetAttribute", r);
}

/* The empty kernel, for the oldest target the JIT still takes and for
 * sm_75, the oldest CUDA 13 supports. */
static const char cu_empty_ptx_50[] =
    ".version 6.0\n.target sm_50\n.address_size 64\n\n"
    ".visible .entry twasm_empty()\n{\n\tret;\n}\n";
static const char cu_empty_ptx_75[] =
    ".version 6.3\n.target sm_75\n.address_size 64\n\n"
    ".visible .entry twasm_empty()\n{\n\tret;\n}\n";

#define CU_COST_RUNS 21

static pthread_once_t cu_cost_once = PTHREAD_ONCE_INIT;
static double cu_cost_us = INFINITY;

static int cu_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of several launches after a warm-up one, which pays for
 * lazy loading in the driver. */
static double cu_measure(const cu_kernel *k, cu_error *err) {
  double runs[CU_COST_RUNS];
  cu_dim3 one = {1, 1, 1};
  if (!cu_make_current(err) || !cu_run(k, one, one, 0, NULL, err)) return INFINITY;
  for (int i = 0; i < CU_COST_RUNS; i++) {
    double start = cu_now_us();
    if (!cu_run(k, one, one, 0, NULL, err)) return INFINITY;
    runs[i] = cu_now_us() - start;
  }
  qsort(runs, CU_COST_RUNS, sizeof runs[0], cu_cmp_double);
  return runs[CU_COST_RUNS / 2];
}

static void cu_cost_init(void) {
  const cu_ptx set[] = {{50, 60, cu_empty_ptx_50}, {75, 63, cu_empty_ptx_75}};
  cu_module *m = NULL;
  cu_kernel k;
  cu_error err;
  if (!cu_module_load(set, 2, &m, &err) || !cu_module_kernel(m, "twasm_empty", &k, &err)) {
    cu_trace("gpu: launch cost not measured: %s", err.message);
    cu_module_unload(m);
    return;
  }
  cu_cost_us = cu_measure(&k, &err);
  cu_module_unload(m);
  if (isinf(cu_cost_us))
    cu_trace("gpu: launch cost not measured: %s", err.message);
  else
    cu_trace("gpu: empty launch + synchronise: %.1f us", cu_cost_us);
}

double cu_launch_cost_us(void) {
  if (!cu_available()) return INFINITY;
  pthread_once(&cu_cost_once, cu_cost_init);
  return cu_available() ? cu_cost_us : INFINITY;
}

/* Stores through address 0: the device faults, the error is sticky. */
static const char cu_fault_ptx[] =
    ".version 6.3\n.target sm_75\n.address_size 64\n\n"
    ".visible .entry twasm_fault()\n{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<2>;\n"
    "\tmov.u64 %rd1, 0;\n\tmov.u32 %r1, 42;\n\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n";

bool cu_test_fault(cu_error *err) {
  const cu_ptx set[] = {{75, 63, cu_fault_ptx}};
  cu_module *m = NULL;
  cu_kernel k;
  if (!cu_module_load(set, 1, &m, err) || !cu_module_kernel(m, "twasm_fault", &k, err)) return false;
  cu_dim3 one = {1, 1, 1};
  /* No ranges: this is the one launch that must fault. */
  bool ok = cu_make_current(err) && cu_run(&k, one, one, 0, NULL, err);
  if (ok) cu_module_unload(m);
  return ok;
}
