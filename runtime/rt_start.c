/* rt_start.c: when the GPU starts in auto mode.  Starting the driver
 * (cuInit and the primary context) costs about 275 ms on the H100, far
 * more than most programs run, and nearly every C program holds a kernel
 * (its allocator's memset loops).  So nothing touches the driver until
 * the nests that would have launched have done, on the CPU, as much work
 * as the start costs (the cost model's estimate; one nest worth that much
 * starts it at once): a program that never launches never pays for it,
 * and one that does pays at most the work it already did on the CPU
 * (rent or buy).  TWASM_GPU_START_MS sets the price (default 275; 0
 * starts at the first launch that pays). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "cu.h"
#include "rt_offload.h"

#define RT_START_DEFAULT_MS 275.0

static pthread_mutex_t rt_start_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t rt_start_once = PTHREAD_ONCE_INIT;
static double rt_start_price_us;
static double rt_start_pending_us; /* CPU work of nests that would have launched */

static void rt_start_read_env(void) {
  rt_start_price_us = RT_START_DEFAULT_MS * 1000;
  const char *v = getenv("TWASM_GPU_START_MS");
  char *end;
  double ms = v && *v ? strtod(v, &end) : -1;
  if (v && *v && *end == 0 && ms >= 0) rt_start_price_us = ms * 1000;
  else if (v && *v) cu_trace("TWASM_GPU_START_MS=%s is not a number of milliseconds: %.0f used", v,
                             RT_START_DEFAULT_MS);
}

rt_start rt_start_decide(double ops, const char **why, char *buf, size_t cap) {
  pthread_once(&rt_start_once, rt_start_read_env);
  if (!twasm_cost_worth_it(ops, RT_START_LAUNCH_US)) {
    *why = "cost model: too little work for a launch";
    return RT_START_LATER;
  }
  if (!cu_driver_present()) {
    *why = "no CUDA driver here";
    return RT_START_NEVER;
  }
  pthread_mutex_lock(&rt_start_lock);
  rt_start_pending_us += ops * TWASM_COST_CPU_NS_PER_OP / 1000;
  double pending = rt_start_pending_us;
  pthread_mutex_unlock(&rt_start_lock);
  if (pending < rt_start_price_us) {
    snprintf(buf, cap, "the GPU is not started: %.1f ms of work would have run on it so far, "
             "starting it costs %.0f ms", pending / 1000, rt_start_price_us / 1000);
    *why = buf;
    return RT_START_LATER;
  }
  cu_trace("gpu: starting the driver: %.1f ms of work would have run on it so far", pending / 1000);
  return RT_START_NOW;
}
