/* rt_resident.c: device copies of linear memory for kernels on a device
 * that reaches host memory only over the bus (pinned host memory; the
 * lent H100 and H200 report pageableMemoryAccess=0).  There a kernel
 * reads every operand over PCIe at about 50 GB/s on every launch: an LLM's
 * 530 MB of weights per token.  Instead, the memory gets one device
 * allocation as large as it (the mirror); a kernel takes the mirror's
 * base, so every address it computes falls in the mirror, and before the
 * launch every page its spans touch must hold the host's bytes there:
 *
 * - a page is KEPT when its mirror copy equals the host page and the host
 *   page is write-protected (mprotect PROT_READ); a kept page is never
 *   copied again;
 * - a CPU write to a kept page faults: rt_resident_fault (called first by
 *   the runtime's SIGSEGV handler) clears the page's flag and opens it
 *   again, and the write goes on; WASI calls, whose system calls would
 *   fail with EFAULT instead of faulting, open their buffers first
 *   (rt_resident_touch);
 * - other pages of a launch's spans are copied to the mirror before the
 *   kernel (queued on its stream); pages of spans at least RES_KEEP_MIN
 *   long become kept (flag set, then protected, then copied: a write
 *   after the protection faults and clears the flag, one before it is in
 *   the copy), shorter ones are copied every time (activations the CPU
 *   rewrites between launches: protecting them would cost a fault each);
 * - after the kernel, each written span is copied back to the host, its
 *   exact bytes (the bytes of it the kernel did not write were copied in
 *   before, so they come back unchanged);
 * - except for a kernel that addresses its outputs from a base of their
 *   own (TWASM_ENTRY_HOST_OUT: the matrix-vector product): it gets the
 *   host memory's base there and writes its outputs straight into the
 *   pinned host pages over the bus, so its written spans are neither
 *   copied in nor back, and none of their pages stays kept (a kept page's
 *   mirror must equal the host page; opened after the read spans are
 *   scanned, so a page shared with a long read span is opened again).
 *
 * So a kernel sees the host's bytes, and the host sees the kernel's: the
 * results are those of the pinned path.  Only executables turn it on
 * (rt_resident_enable: an embedder's own system calls into linear memory
 * would meet EFAULT), TWASM_GPU_RESIDENT=0 turns it off. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cu.h"
#include "rt_internal.h"
#include "rt_offload.h"

#define RES_PAGE 4096ull
#define RES_SLOTS 16
/* Spans found wholly kept, remembered so that the next launch over them
 * skips their page scan (twice per launch: cost, then prepare) while no
 * page of theirs has been opened since: an LLM token's 85 launches
 * scanned about 107,000 pages of weights twice.  A page opened forgets
 * only the spans it lies in (res_forget), so the CPU's write to one
 * layer's keys does not send every weight matrix back to a scan; sets of
 * RES_WHOLE_WAYS hold the 85 weight spans of a token without evicting
 * each other. */
#define RES_WHOLE_SETS 128
#define RES_WHOLE_WAYS 4
/* Copies to the device less than this far apart are queued as one (the
 * bytes between them copied too: harmless, a page's mirror bytes matter
 * only while it is kept, when they equal the host's, or once copied):
 * a copy costs some microseconds of driver and bus latency, 16 KiB at
 * the bus's ~25-50 GB/s less than one. */
#define RES_MERGE_GAP (16u << 10)

/* Written under rt_offload_lock; valid cleared by res_forget from any
 * thread (the fault handler). */
typedef struct {
  _Atomic uint64_t lo, hi; /* pages */
  atomic_bool valid;
} res_whole;

struct rt_resident {
  uint8_t *host;
  uint8_t *dev;           /* the mirror of [0, dev_size) */
  uint64_t dev_size;
  uint64_t npages;        /* pages of the usable maximum */
  _Atomic uint8_t *kept;  /* per host page: 1 while kept */
  uint64_t kept_bytes;    /* pages made kept, for the trace */
  _Atomic uint64_t opens; /* pages opened so far (faults, touches, abandons) */
  uint64_t scanned;       /* pages scanned so far (cost and prepare), for tests */
  res_whole whole[RES_WHOLE_SETS][RES_WHOLE_WAYS];
  uint8_t whole_next[RES_WHOLE_SETS]; /* the way a new span replaces */
};

/* Live mirrors, read by the fault handler (no locks there). */
static _Atomic(rt_resident *) res_live[RES_SLOTS];
static atomic_int res_nlive;
static bool res_enabled;

void rt_resident_enable(void) { res_enabled = true; }

static pthread_once_t res_env_once = PTHREAD_ONCE_INIT;
static bool res_env_off;
/* For measurements: TWASM_GPU_MERGE_GAP=BYTES (0: no merging),
 * TWASM_GPU_SCAN_CACHE=0 (every span scanned). */
static uint64_t res_merge_gap = RES_MERGE_GAP;
static bool res_scan_cache = true;
/* TWASM_GPU_HOST_OUT=0: outputs copied back even where the kernel can
 * write them into host memory (for measurements). */
static bool res_host_out = true;

static void res_read_env(void) {
  const char *v = getenv("TWASM_GPU_RESIDENT");
  res_env_off = v && strcmp(v, "0") == 0;
  v = getenv("TWASM_GPU_MERGE_GAP");
  uint64_t gap;
  if (v && *v && cu_parse_size(v, &gap)) res_merge_gap = gap;
  v = getenv("TWASM_GPU_SCAN_CACHE");
  res_scan_cache = !(v && strcmp(v, "0") == 0);
  v = getenv("TWASM_GPU_HOST_OUT");
  res_host_out = !(v && strcmp(v, "0") == 0);
}

bool rt_resident_host_out(void) {
  pthread_once(&res_env_once, res_read_env);
  return res_host_out;
}

bool rt_resident_wanted(void) {
  if (!res_enabled) return false;
  pthread_once(&res_env_once, res_read_env);
  return !res_env_off;
}

static int res_protect(uint8_t *p, uint64_t len, int prot) {
  return mprotect(p, (size_t)len, prot);
}

/* Forgets the spans found wholly kept that meet pages [lo, hi), after
 * r->opens counted their opening (async-signal-safe: a note written
 * meanwhile sees the count and drops itself, res_note). */
static void res_forget(rt_resident *r, uint64_t lo, uint64_t hi) {
  for (int s = 0; s < RES_WHOLE_SETS; s++)
    for (int w = 0; w < RES_WHOLE_WAYS; w++) {
      res_whole *e = &r->whole[s][w];
      if (atomic_load(&e->valid) && atomic_load(&e->lo) < hi && lo < atomic_load(&e->hi))
        atomic_store(&e->valid, false);
    }
}

/* Opens page i of r again, its spans not yet forgotten (res_forget). */
static void res_open_page(rt_resident *r, uint64_t i) {
  atomic_store(&r->kept[i], 0);
  atomic_fetch_add(&r->opens, 1);
  (void)res_protect(r->host + i * RES_PAGE, RES_PAGE, PROT_READ | PROT_WRITE);
}

/* Opens page i of r again (async-signal-safe). */
static void res_open(rt_resident *r, uint64_t i) {
  res_open_page(r, i);
  res_forget(r, i, i + 1);
}

bool rt_resident_fault(uintptr_t addr) {
  if (atomic_load(&res_nlive) == 0) return false;
  /* Pages of launches not waited for (rt_defer.c); any kept page's copy
   * in may be one of theirs: they are waited for first. */
  if (rt_defer_fault(addr)) return true;
  for (int s = 0; s < RES_SLOTS; s++) {
    rt_resident *r = atomic_load(&res_live[s]);
    if (!r || addr < (uintptr_t)r->host) continue;
    uint64_t i = (addr - (uintptr_t)r->host) / RES_PAGE;
    if (i >= r->npages) continue;
    if (!atomic_load(&r->kept[i])) return false;
    res_open(r, i);
    return true;
  }
  return false;
}

void rt_resident_touch(const void *ptr, uint64_t len) {
  if (atomic_load(&res_nlive) == 0 || len == 0) return;
  if (rt_defer_pending()) {
    double t = cu_prof_on() ? cu_prof_now() : 0;
    rt_defer_wait();
    if (t) cu_prof_add(CU_PROF_DEFER_FAULT, t);
  }
  uintptr_t a = (uintptr_t)ptr;
  for (int s = 0; s < RES_SLOTS; s++) {
    rt_resident *r = atomic_load(&res_live[s]);
    if (!r || a + len <= (uintptr_t)r->host || a >= (uintptr_t)r->host + r->npages * RES_PAGE) continue;
    uint64_t lo = a > (uintptr_t)r->host ? (a - (uintptr_t)r->host) / RES_PAGE : 0;
    uint64_t hi = (a + len - (uintptr_t)r->host + RES_PAGE - 1) / RES_PAGE;
    if (hi > r->npages) hi = r->npages;
    bool opened = false;
    for (uint64_t i = lo; i < hi; i++)
      if (atomic_load(&r->kept[i])) res_open_page(r, i), opened = true;
    if (opened) res_forget(r, lo, hi);
  }
}

rt_resident *rt_resident_new(uint8_t *host, uint64_t usable) {
  pthread_once(&res_env_once, res_read_env);
  rt_resident *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->host = host;
  r->npages = (usable + RES_PAGE - 1) / RES_PAGE;
  r->kept = calloc(r->npages ? r->npages : 1, 1);
  int slot = -1;
  for (int s = 0; s < RES_SLOTS && slot < 0 && r->kept; s++) {
    rt_resident *none = NULL;
    if (atomic_compare_exchange_strong(&res_live[s], &none, r)) slot = s;
  }
  if (slot < 0) {
    free((void *)r->kept);
    free(r);
    return NULL;
  }
  atomic_fetch_add(&res_nlive, 1);
  return r;
}

void rt_resident_free(rt_resident *r) {
  if (!r) return;
  rt_defer_wait();
  for (int s = 0; s < RES_SLOTS; s++) {
    rt_resident *me = r;
    if (atomic_compare_exchange_strong(&res_live[s], &me, NULL)) atomic_fetch_sub(&res_nlive, 1);
  }
  /* The host pages stay protected: the reservation is unmapped next. */
  if (r->dev) cu_free_mirror(r->dev);
  free((void *)r->kept);
  free(r);
}

/* The mirror as large as [0, size), keeping what it held. */
static bool res_size(rt_resident *r, uint64_t size, cu_error *err) {
  if (size <= r->dev_size) return true;
  uint64_t want = size + size / 8;
  if (want > r->npages * RES_PAGE) want = r->npages * RES_PAGE;
  if (want < size) want = size;
  void *dev;
  if (!cu_alloc_mirror(want, &dev, err)) return false;
  if (r->dev && !cu_mirror_move(dev, r->dev, r->dev_size, err)) {
    cu_free_mirror(dev);
    return false;
  }
  if (r->dev) cu_free_mirror(r->dev);
  r->dev = dev;
  r->dev_size = want;
  return true;
}

static unsigned res_whole_at(uint64_t lo, uint64_t hi) {
  return (unsigned)(((lo * 0x9e3779b97f4a7c15ull) ^ (hi * 0xc2b2ae3d27d4eb4full)) >> 57) % RES_WHOLE_SETS;
}

static res_whole *res_whole_find(rt_resident *r, uint64_t lo, uint64_t hi) {
  res_whole *set = r->whole[res_whole_at(lo, hi)];
  for (int w = 0; w < RES_WHOLE_WAYS; w++)
    if (atomic_load(&set[w].valid) && atomic_load(&set[w].lo) == lo && atomic_load(&set[w].hi) == hi)
      return &set[w];
  return NULL;
}

/* Whether pages [lo, hi) were found wholly kept with none opened since. */
static bool res_all_kept(rt_resident *r, uint64_t lo, uint64_t hi) {
  return res_scan_cache && res_whole_find(r, lo, hi) != NULL;
}

/* Notes pages [lo, hi) as wholly kept, found so by a scan that began when
 * r->opens was gen: dropped again when a page was opened since (the scan
 * may have missed it, or res_forget ran before the note was written). */
static void res_note(rt_resident *r, uint64_t lo, uint64_t hi, uint64_t gen) {
  if (!res_scan_cache || res_whole_find(r, lo, hi)) return;
  unsigned s = res_whole_at(lo, hi);
  res_whole *e = NULL;
  for (int w = 0; w < RES_WHOLE_WAYS && !e; w++)
    if (!atomic_load(&r->whole[s][w].valid)) e = &r->whole[s][w];
  if (!e) e = &r->whole[s][r->whole_next[s]++ % RES_WHOLE_WAYS];
  atomic_store(&e->valid, false);
  atomic_store(&e->lo, lo);
  atomic_store(&e->hi, hi);
  atomic_store(&e->valid, true);
  if (atomic_load(&r->opens) != gen) atomic_store(&e->valid, false);
}

/* Pages [lo, hi) of r not kept, as copies into in (merging runs); those
 * of a long span become kept. */
static bool res_pages(rt_resident *r, uint64_t lo, uint64_t hi, bool keep, rt_resident_launch *L) {
  if (keep && res_all_kept(r, lo, hi)) return true;
  /* read before the scan: a page opened during it makes the note stale */
  uint64_t gen = atomic_load(&r->opens);
  bool all = keep;
  uint64_t i = lo;
  r->scanned += hi - lo;
  while (i < hi) {
    if (atomic_load(&r->kept[i])) {
      i++;
      continue;
    }
    uint64_t j = i;
    while (j < hi && !atomic_load(&r->kept[j])) j++;
    uint8_t *h = r->host + i * RES_PAGE;
    uint64_t len = (j - i) * RES_PAGE;
    bool kept = false;
    if (keep) {
      for (uint64_t p = i; p < j; p++) atomic_store(&r->kept[p], 1);
      if (res_protect(h, len, PROT_READ) != 0) {
        for (uint64_t p = i; p < j; p++) atomic_store(&r->kept[p], 0);
        all = false;
        L->unkept++;
      } else {
        r->kept_bytes += len;
        kept = true;
      }
    }
    if (!kept) L->again_bytes += len;
    if (L->nin == RT_RESIDENT_MAX_COPIES) return false;
    L->in[L->nin++] = (cu_copy){h, r->dev + i * RES_PAGE, len};
    L->copy_bytes += len;
    i = j;
  }
  if (all) res_note(r, lo, hi, gen);
  return true;
}

/* L's copies to the device in address order, those less than
 * res_merge_gap apart (or overlapping: two spans in one page) as one. */
static void res_merge(rt_resident *r, rt_resident_launch *L) {
  if (L->nin < 2 || !res_merge_gap) return;
  for (size_t a = 1; a < L->nin; a++) {
    cu_copy c = L->in[a];
    size_t b = a;
    for (; b > 0 && (uint8_t *)L->in[b - 1].host > (uint8_t *)c.host; b--) L->in[b] = L->in[b - 1];
    L->in[b] = c;
  }
  size_t n = 0;
  for (size_t a = 0; a < L->nin; a++) {
    cu_copy *last = n ? &L->in[n - 1] : NULL;
    uint8_t *h = L->in[a].host, *end = h + L->in[a].len;
    if (last && h <= (uint8_t *)last->host + last->len + res_merge_gap) {
      uint8_t *last_end = (uint8_t *)last->host + last->len;
      if (end > last_end) last->len = (uint64_t)(end - (uint8_t *)last->host);
      continue;
    }
    L->in[n] = L->in[a];
    L->in[n].dev = r->dev + (h - r->host);
    n++;
  }
  L->nin = n;
}

uint64_t rt_resident_cost_bytes(rt_resident *r, const rt_offload_plan *p, bool host_out) {
  double t = cu_prof_on() ? cu_prof_now() : 0;
  uint64_t bytes = 0;
  for (int s = 0; s < p->nspans; s++) {
    const rt_offload_span *sp = &p->spans[s];
    /* written into the host pages: neither copied in nor back */
    if (sp->hi <= sp->lo || (host_out && sp->is_write)) continue;
    if (sp->is_write) bytes += sp->hi - sp->lo;
    uint64_t lo = sp->lo / RES_PAGE, hi = (sp->hi + RES_PAGE - 1) / RES_PAGE;
    if (hi > r->npages) hi = r->npages;
    if (res_all_kept(r, lo, hi)) continue;
    uint64_t gen = atomic_load(&r->opens), missing = 0;
    r->scanned += hi > lo ? hi - lo : 0;
    for (uint64_t i = lo; i < hi; i++)
      if (!atomic_load(&r->kept[i])) missing++;
    bytes += missing * RES_PAGE;
    /* found wholly kept: prepare's scan of it is saved too */
    if (!missing && hi > lo && sp->hi - sp->lo >= RT_RESIDENT_KEEP_MIN) res_note(r, lo, hi, gen);
  }
  if (t) cu_prof_add(CU_PROF_RES_COST, t);
  return bytes;
}

bool rt_resident_prepare(rt_resident *r, uint64_t mem_size, const rt_offload_plan *p, bool host_out,
                         rt_resident_launch *L, cu_error *err) {
  double t = cu_prof_on() ? cu_prof_now() : 0;
  L->nin = L->nout = 0;
  L->copy_bytes = L->again_bytes = 0;
  L->unkept = 0;
  if (mem_size > r->npages * RES_PAGE)
    return cu_fail_msg(err, "linear memory larger than its device copy's page table");
  if (!res_size(r, mem_size, err)) return false;
  for (int s = 0; s < p->nspans; s++) {
    const rt_offload_span *sp = &p->spans[s];
    if (sp->hi <= sp->lo || (host_out && sp->is_write)) continue;
    uint64_t lo = sp->lo / RES_PAGE, hi = (sp->hi + RES_PAGE - 1) / RES_PAGE;
    if (!res_pages(r, lo, hi, sp->hi - sp->lo >= RT_RESIDENT_KEEP_MIN, L))
      return cu_fail_msg(err, "more than %d copies for one launch", RT_RESIDENT_MAX_COPIES);
    if (sp->is_write) {
      if (L->nout == RT_RESIDENT_MAX_COPIES)
        return cu_fail_msg(err, "more than %d copies for one launch", RT_RESIDENT_MAX_COPIES);
      L->out[L->nout++] = (cu_copy){r->host + sp->lo, r->dev + sp->lo, sp->hi - sp->lo};
      L->copy_bytes += sp->hi - sp->lo;
      L->again_bytes += sp->hi - sp->lo;
    }
  }
  /* Written straight into the host pages: after the other spans, so
   * that a page a read span has just made kept is opened again (its
   * mirror bytes would go stale while kept).  Their pages are not copied
   * in (a copy merged over them is harmless: not kept). */
  for (int s = 0; host_out && s < p->nspans; s++) {
    const rt_offload_span *sp = &p->spans[s];
    if (sp->hi <= sp->lo || !sp->is_write) continue;
    uint64_t lo = sp->lo / RES_PAGE, hi = (sp->hi + RES_PAGE - 1) / RES_PAGE;
    for (uint64_t i = lo; i < hi && i < r->npages; i++)
      if (atomic_load(&r->kept[i])) res_open(r, i);
  }
  res_merge(r, L);
  L->dev_base = r->dev;
  if (t) cu_prof_add(CU_PROF_RES_PREPARE, t);
  return true;
}

/* A launch that failed after rt_resident_prepare: the copies may not have
 * run, so no page it made kept may stay so. */
void rt_resident_abandon(rt_resident *r, const rt_resident_launch *L) {
  for (size_t c = 0; c < L->nin; c++) {
    uint64_t lo = (uint64_t)((uint8_t *)L->in[c].host - r->host) / RES_PAGE;
    uint64_t hi = lo + L->in[c].len / RES_PAGE;
    for (uint64_t i = lo; i < hi; i++)
      if (atomic_load(&r->kept[i])) res_open(r, i);
  }
}

uint64_t rt_resident_kept_bytes(const rt_resident *r) { return r->kept_bytes; }

uint64_t rt_resident_scanned_pages(const rt_resident *r) { return r->scanned; }

void rt_resident_reopen(rt_resident *r, uint8_t *lo, uint8_t *hi) {
  uint8_t *p = lo;
  while (p < hi) {
    uint64_t i = r && p >= r->host ? (uint64_t)(p - r->host) / RES_PAGE : 0;
    bool kept = r && p >= r->host && i < r->npages && atomic_load(&r->kept[i]);
    if (kept) {
      p += RES_PAGE;
      continue;
    }
    uint8_t *q = p + RES_PAGE;
    while (q < hi && !(r && q >= r->host && (uint64_t)(q - r->host) / RES_PAGE < r->npages &&
                       atomic_load(&r->kept[(uint64_t)(q - r->host) / RES_PAGE])))
      q += RES_PAGE;
    (void)res_protect(p, (uint64_t)(q - p), PROT_READ | PROT_WRITE);
    p = q;
  }
}
