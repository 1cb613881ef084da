/* cu_prof.c: where a launch's host time goes (TWASM_GPU_PROFILE=1): sums
 * of microseconds per phase of the dispatch and launch path, printed to
 * stderr at exit, one line per phase.  Off, each phase costs one load and
 * branch; on, two clock reads. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cu.h"

static const char *const cu_prof_names[CU_PROF_PHASES] = {
    [CU_PROF_DECIDE] = "dispatch up to the launch (params, plan, cost model, choice)",
    [CU_PROF_RES_COST] = "device copy: bytes a launch would copy (page scan)",
    [CU_PROF_RES_PREPARE] = "device copy: copies for the launch (page scan, protect)",
    [CU_PROF_COPY_IN] = "queue copies to the device",
    [CU_PROF_KERNEL] = "queue the kernel (cuLaunchKernel)",
    [CU_PROF_COPY_OUT] = "queue copies back",
    [CU_PROF_SYNC] = "synchronise (kernel, copies)",
    [CU_PROF_LAUNCH] = "launch as a whole (rt_offload's launch())",
    [CU_PROF_GRAPH] = "queue a launch's graph (cuGraphLaunch)",
    [CU_PROF_GRAPH_BUILD] = "make a launch's graph (create, add, instantiate)",
    [CU_PROF_DEFER] = "launches not waited for: protect their pages",
    [CU_PROF_DEFER_WAIT] = "wait for them at a later launch (reopen pages)",
    [CU_PROF_DEFER_FAULT] = "wait for them at a fault or system call",
};

static double cu_prof_us[CU_PROF_PHASES];
static uint64_t cu_prof_n[CU_PROF_PHASES];
static uint64_t cu_prof_copies_in, cu_prof_bytes_in;
int cu_prof_state = -1; /* -1 not read, 0 off, 1 on */

static void cu_prof_print(void) {
  if (!cu_prof_n[CU_PROF_LAUNCH] && !cu_prof_n[CU_PROF_KERNEL] && !cu_prof_n[CU_PROF_GRAPH]) return;
  fprintf(stderr, "twasm: profile: %llu launches (%llu as graphs), %llu copies to the device (%llu bytes)\n",
          (unsigned long long)(cu_prof_n[CU_PROF_KERNEL] + cu_prof_n[CU_PROF_GRAPH]),
          (unsigned long long)cu_prof_n[CU_PROF_GRAPH], (unsigned long long)cu_prof_copies_in,
          (unsigned long long)cu_prof_bytes_in);
  for (int i = 0; i < CU_PROF_PHASES; i++)
    if (cu_prof_n[i])
      fprintf(stderr, "twasm: profile: %-62s %10.1f us in %7llu, %7.2f us each\n", cu_prof_names[i],
              cu_prof_us[i], (unsigned long long)cu_prof_n[i], cu_prof_us[i] / (double)cu_prof_n[i]);
}

bool cu_prof_read(void) {
  const char *v = getenv("TWASM_GPU_PROFILE");
  cu_prof_state = v && strcmp(v, "1") == 0;
  if (cu_prof_state) atexit(cu_prof_print);
  return cu_prof_state;
}

double cu_prof_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* Launches are serialised (rt_offload's lock): plain sums. */
void cu_prof_add(cu_prof_phase phase, double since_us) {
  cu_prof_us[phase] += cu_prof_now() - since_us;
  cu_prof_n[phase]++;
}

void cu_prof_copies(uint64_t n, uint64_t bytes) {
  cu_prof_copies_in += n;
  cu_prof_bytes_in += bytes;
}
