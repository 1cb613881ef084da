/* rt_defer.c: launches not waited for (TWASM_GPU_DEFER=1; off by default:
 * on the H200 the page protection cost more than the waits it moved,
 * docs/PERFORMANCE.md "Launches not waited for").
 *
 * A launch on the device copy (rt_resident.c) whose kernel writes its
 * outputs straight into the host pages (TWASM_ENTRY_HOST_OUT: the
 * matrix-vector product) can return to the program once its copies and
 * kernel are queued: the next launch queues behind it on the same stream
 * and one wait covers both.  The wait moves to where the CPU needs it,
 * found by page protection, so the results stay exactly those of a
 * waited launch:
 *
 * - the launch's output pages become unreadable (PROT_NONE), the pages its
 *   short read spans are copied in from read-only (PROT_READ: their copy
 *   has not run yet; long spans are kept pages, read-only already);
 * - a CPU access to them faults: rt_defer_fault, first in the device
 *   copy's fault path, waits for the stream, reopens every page it
 *   protected (not the kept ones) and the access goes on; a fault on a
 *   kept page waits too (its copy in may not have run) before it opens;
 * - a later launch that waits (one not deferred) waits for all of them
 *   and reopens the pages (rt_defer_synced); a launch whose spans touch a
 *   pending output page, any launch not on the device copy, a group's
 *   launches (their writes saved by the CPU first), a system call's
 *   buffers (rt_resident_touch) and the memory's end wait first.
 *
 * Which launches to defer is learned per kernel and weight span (the
 * plan's longest read span: a layer's W): one whose pages faulted before
 * any other launch came (the CPU read its output next: the deferral only
 * cost the protection and the fault) is waited for on its next 2, 4, ...
 * 1024 launches, then tried again; one followed by a launch keeps being
 * deferred.  A wait that fails (a kernel's sticky error) after its nests
 * were reported done cannot put the CPU's results back: the process
 * stops with the driver's error (a waited launch would have run the nest
 * on the CPU).
 *
 * Waits placed by the compiler (on by default; TWASM_GPU_DEFER=0 turns
 * them off): code compiled with the waits pass (compiler/off/off_wait.c)
 * calls twasm_rt_offload_unwaited, and before each access of linear memory
 * that may follow such a launch it reads twasm_rt_offload_pending and, when
 * set, calls twasm_rt_offload_wait_for with the access's bytes (or
 * twasm_rt_offload_wait before a loop, a call or a return to the host).
 * Those launches protect nothing and learn nothing: their ranges are only
 * recorded, for the accesses' checks and the next launch's conflicts. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cu.h"
#include "rt_internal.h"
#include "rt_offload.h"

#define DEFER_PAGE 4096ull
#define DEFER_RANGES 64
#define DEFER_LAUNCHES 16
#define DEFER_SLOTS 256
#define DEFER_SKIP_MAX 1024u

typedef struct {
  uint8_t *lo, *hi; /* page-aligned unless open */
  bool out;         /* output pages (PROT_NONE), else read-only input pages */
  bool open;        /* recorded only (waits placed by the code): not protected */
} defer_range;

typedef struct {
  const void *kernel;
  uint64_t key;
  uint16_t skip;
  uint8_t losses;
} defer_slot;

static pthread_once_t defer_once = PTHREAD_ONCE_INIT;
static bool defer_on, defer_code_off;
static defer_range defer_ranges[DEFER_RANGES];
static atomic_int defer_nranges;
static int defer_slots_of[DEFER_LAUNCHES]; /* the pending launches' slots */
static atomic_int defer_nlaunches;
static rt_resident *defer_res;
static defer_slot defer_table[DEFER_SLOTS];

static void defer_read_env(void) {
  const char *v = getenv("TWASM_GPU_DEFER");
  defer_on = v && strcmp(v, "1") == 0;
  defer_code_off = v && strcmp(v, "0") == 0;
}

bool rt_defer_wanted(void) {
  pthread_once(&defer_once, defer_read_env);
  return defer_on;
}

bool rt_defer_by_code_wanted(void) {
  pthread_once(&defer_once, defer_read_env);
  return !defer_code_off;
}

/* Read by the generated code before its accesses (twasm_abi.h). */
uint32_t twasm_rt_offload_pending;

bool rt_defer_pending(void) { return atomic_load(&defer_nlaunches) > 0; }

static unsigned defer_slot_at(const void *kernel, uint64_t key) {
  uint64_t h = ((uint64_t)(uintptr_t)kernel * 0x9e3779b97f4a7c15ull) ^ (key * 0xc2b2ae3d27d4eb4full);
  return (unsigned)(h >> 56) % DEFER_SLOTS;
}

/* The plan's longest read span's start: the launch's weights. */
static uint64_t defer_key(const rt_offload_plan *p) {
  uint64_t best = 0, key = 0;
  for (int s = 0; s < p->nspans; s++)
    if (!p->spans[s].is_write && p->spans[s].hi - p->spans[s].lo > best)
      best = p->spans[s].hi - p->spans[s].lo, key = p->spans[s].lo;
  return key;
}

int rt_defer_choose(const void *kernel, const rt_offload_plan *p, bool by_code) {
  if (!(by_code ? rt_defer_by_code_wanted() : rt_defer_wanted()) ||
      atomic_load(&defer_nlaunches) >= DEFER_LAUNCHES ||
      atomic_load(&defer_nranges) + p->nspans > DEFER_RANGES)
    return -1;
  uint64_t key = defer_key(p);
  unsigned i = defer_slot_at(kernel, key);
  defer_slot *s = &defer_table[i];
  if (s->kernel != kernel || s->key != key) *s = (defer_slot){kernel, key, 0, 0};
  if (by_code) return (int)i; /* nothing to learn: no fault comes */
  if (s->skip > 0) {
    s->skip--;
    return -1;
  }
  return (int)i;
}

static uint8_t *page_down(uint8_t *p) { return (uint8_t *)((uintptr_t)p & ~(uintptr_t)(DEFER_PAGE - 1)); }
static uint8_t *page_up(uint8_t *p) {
  return (uint8_t *)(((uintptr_t)p + DEFER_PAGE - 1) & ~(uintptr_t)(DEFER_PAGE - 1));
}

bool rt_defer_conflicts(const rt_offload_plan *p, const uint8_t *host) {
  int n = atomic_load(&defer_nranges);
  for (int s = 0; s < p->nspans; s++) {
    const uint8_t *lo = host + p->spans[s].lo, *hi = host + p->spans[s].hi;
    if (hi <= lo) continue;
    for (int r = 0; r < n; r++)
      if (defer_ranges[r].out && lo < defer_ranges[r].hi && hi > defer_ranges[r].lo) return true;
  }
  return false;
}

bool rt_defer_meets(const void *ptr, uint64_t len, bool store) {
  const uint8_t *lo = ptr, *hi = lo + len;
  int n = atomic_load(&defer_nranges);
  for (int r = 0; r < n; r++)
    if ((store || defer_ranges[r].out) && lo < defer_ranges[r].hi && hi > defer_ranges[r].lo) return true;
  return false;
}

static atomic_int defer_calls; /* mprotect calls, for tests */

int rt_defer_mprotect_calls(void) { return atomic_load(&defer_calls); }

/* Records and protects one range; false when mprotect refused it (the
 * range is recorded anyway, so the wait reopens it).  A range inside one
 * recorded already at the same or a stronger protection is left as it is
 * (wq, wk and wv read one x: its pages are made read-only once). */
static bool defer_protect(uint8_t *lo, uint8_t *hi, bool out, bool open) {
  /* recorded only: the bytes themselves (outputs of launches back to
   * back often share a page: q, k and v of 3 KiB each) */
  if (!open) lo = page_down(lo), hi = page_up(hi);
  if (hi <= lo) return true;
  int n = atomic_load(&defer_nranges);
  for (int i = 0; i < n; i++)
    if (defer_ranges[i].lo <= lo && hi <= defer_ranges[i].hi && (defer_ranges[i].out || !out) &&
        defer_ranges[i].open == open)
      return true;
  defer_ranges[n] = (defer_range){lo, hi, out, open};
  atomic_store(&defer_nranges, n + 1);
  if (open) return true;
  atomic_fetch_add(&defer_calls, 1);
  return mprotect(lo, (size_t)(hi - lo), out ? PROT_NONE : PROT_READ) == 0;
}

bool rt_defer_add(rt_resident *r, uint8_t *host, const rt_offload_plan *p, int slot, bool by_code) {
  double t = cu_prof_on() ? cu_prof_now() : 0;
  defer_res = r;
  /* the launches before it were followed by a launch: worth it */
  int pending = atomic_load(&defer_nlaunches);
  for (int i = 0; i < pending; i++) defer_table[defer_slots_of[i]].losses = 0;
  defer_slots_of[pending] = slot;
  atomic_store(&defer_nlaunches, pending + 1);
  bool ok = true;
  /* inputs first: an output page shared with an input ends unreadable;
   * recorded only, every span, when the code waits (its stores check
   * them all) */
  for (int out = 0; out < 2 && ok; out++)
    for (int s = 0; s < p->nspans && ok; s++) {
      const rt_offload_span *sp = &p->spans[s];
      if (sp->hi <= sp->lo || sp->is_write != (out == 1)) continue;
      if (!by_code && !out && sp->hi - sp->lo >= RT_RESIDENT_KEEP_MIN) continue; /* kept: read-only already */
      ok = defer_protect(host + sp->lo, host + sp->hi, out == 1, by_code);
    }
  if (by_code) __atomic_store_n(&twasm_rt_offload_pending, 1, __ATOMIC_RELAXED);
  if (t) cu_prof_add(CU_PROF_DEFER, t);
  return ok;
}

/* Reopens what the pending launches protected; they are done.  Ranges
 * that meet or touch are reopened as one (a handful of ranges: sorted by
 * insertion in place; async-signal-safe). */
static void defer_reopen(void) {
  int n = atomic_exchange(&defer_nranges, 0);
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && defer_ranges[j].lo < defer_ranges[j - 1].lo; j--) {
      defer_range t = defer_ranges[j];
      defer_ranges[j] = defer_ranges[j - 1], defer_ranges[j - 1] = t;
    }
  /* the recorded-only ranges out first: nothing to reopen there */
  int m = 0;
  for (int i = 0; i < n; i++)
    if (!defer_ranges[i].open) defer_ranges[m++] = defer_ranges[i];
  n = m;
  for (int i = 0; i < n;) {
    uint8_t *lo = defer_ranges[i].lo, *hi = defer_ranges[i].hi;
    for (i++; i < n && defer_ranges[i].lo <= hi; i++)
      if (defer_ranges[i].hi > hi) hi = defer_ranges[i].hi;
    atomic_fetch_add(&defer_calls, 1);
    rt_resident_reopen(defer_res, lo, hi);
  }
  atomic_store(&defer_nlaunches, 0);
  __atomic_store_n(&twasm_rt_offload_pending, 0, __ATOMIC_RELAXED);
}

void rt_defer_synced(void) {
  if (!rt_defer_pending()) return;
  double t = cu_prof_on() ? cu_prof_now() : 0;
  int pending = atomic_load(&defer_nlaunches);
  for (int i = 0; i < pending; i++) defer_table[defer_slots_of[i]].losses = 0;
  defer_reopen();
  if (t) cu_prof_add(CU_PROF_DEFER_WAIT, t);
}

static void defer_sync_or_die(void) {
  cu_error err = {0};
  if (cu_make_current(&err) && cu_sync("a launch not waited for", &err)) return;
  /* async-signal-safe from here: the fault handler may be the caller */
  static const char head[] = "twasm: a GPU launch not waited for failed; its nest cannot run on the CPU any more: ";
  (void)!write(2, head, sizeof head - 1);
  (void)!write(2, err.message, strlen(err.message));
  (void)!write(2, "\n", 1);
  _exit(70);
}

void rt_defer_wait(void) {
  if (!rt_defer_pending()) return;
  double t = cu_prof_on() ? cu_prof_now() : 0;
  defer_sync_or_die();
  defer_reopen();
  if (t) cu_prof_add(CU_PROF_DEFER_WAIT, t);
}

bool rt_defer_fault(uintptr_t addr) {
  if (!rt_defer_pending()) return false;
  double t = cu_prof_on() ? cu_prof_now() : 0;
  int n = atomic_load(&defer_nranges);
  bool ours = false;
  for (int i = 0; i < n && !ours; i++)
    ours = !defer_ranges[i].open && addr >= (uintptr_t)defer_ranges[i].lo && addr < (uintptr_t)defer_ranges[i].hi;
  /* the latest launch's output was wanted before any other launch came */
  int pending = atomic_load(&defer_nlaunches);
  if (ours && pending > 0) {
    defer_slot *s = &defer_table[defer_slots_of[pending - 1]];
    if (s->losses < 10) s->losses++;
    s->skip = (uint16_t)(1u << s->losses);
    if (s->skip > DEFER_SKIP_MAX) s->skip = DEFER_SKIP_MAX;
  }
  defer_sync_or_die();
  defer_reopen();
  if (t) cu_prof_add(CU_PROF_DEFER_FAULT, t);
  return ours;
}

void twasm_rt_offload_wait(void) {
  if (rt_defer_pending()) rt_defer_wait();
}

void twasm_rt_offload_wait_for(const void *ptr, uint64_t len, uint32_t store) {
  if (rt_defer_pending() && rt_defer_meets(ptr, len, store != 0)) rt_defer_wait();
}
