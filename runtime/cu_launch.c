/* cu_launch.c: kernel launches (pointer checks, launch, synchronise, sticky
 * errors) and the measured cost of an empty launch for the cost model. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
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

/* Faults inside a kernel surface here, not at its launch. */
static bool cu_finish(const cu_kernel *k, cu_error *err) {
  char what[200];
  cu_result r = cu_drv.ctx_synchronize();
  if (r == 0) return true;
  snprintf(what, sizeof what, "kernel %.120s", k->name);
  return cu_check_failure(err, what, r);
}

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

/* Queues the copies of a launch on the null stream, in order with it. */
static bool cu_queue_copies(const cu_copy *c, size_t n, bool to_device, cu_error *err) {
  if (n && (to_device ? !cu_drv.memcpy_htod_async : !cu_drv.memcpy_dtoh_async))
    return cu_fail_msg(err, "the driver lacks cuMemcpyHtoDAsync_v2 or cuMemcpyDtoHAsync_v2");
  for (size_t i = 0; i < n; i++) {
    if (!c[i].len) continue;
    if (!cu_reachable(c[i].dev, c[i].len))
      return cu_fail_msg(err, "copy of %llu bytes to %p: not inside device memory; not launched",
                         (unsigned long long)c[i].len, c[i].dev);
    uint64_t dev = (uint64_t)(uintptr_t)c[i].dev;
    cu_result r = to_device ? cu_drv.memcpy_htod_async(dev, c[i].host, (size_t)c[i].len, NULL)
                            : cu_drv.memcpy_dtoh_async(c[i].host, dev, (size_t)c[i].len, NULL);
    if (r != 0) return cu_check_failure(err, to_device ? "cuMemcpyHtoDAsync" : "cuMemcpyDtoHAsync", r);
  }
  return true;
}

bool cu_launch_steps(const cu_step *steps, size_t n, const cu_args *args, cu_error *err) {
  if (!n || !cu_make_current(err) || !cu_check_ranges(steps[0].kernel, args, err)) return false;
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
  if (!cu_finish(steps[n - 1].kernel, err)) return false;
  if (prof) cu_prof_add(CU_PROF_SYNC, t);
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
