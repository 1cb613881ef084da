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
 *   before, so they come back unchanged).
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

struct rt_resident {
  uint8_t *host;
  uint8_t *dev;           /* the mirror of [0, dev_size) */
  uint64_t dev_size;
  uint64_t npages;        /* pages of the usable maximum */
  _Atomic uint8_t *kept;  /* per host page: 1 while kept */
  uint64_t kept_bytes;    /* pages made kept, for the trace */
};

/* Live mirrors, read by the fault handler (no locks there). */
static _Atomic(rt_resident *) res_live[RES_SLOTS];
static atomic_int res_nlive;
static bool res_enabled;

void rt_resident_enable(void) { res_enabled = true; }

static pthread_once_t res_env_once = PTHREAD_ONCE_INIT;
static bool res_env_off;

static void res_read_env(void) {
  const char *v = getenv("TWASM_GPU_RESIDENT");
  res_env_off = v && strcmp(v, "0") == 0;
}

bool rt_resident_wanted(void) {
  if (!res_enabled) return false;
  pthread_once(&res_env_once, res_read_env);
  return !res_env_off;
}

static int res_protect(uint8_t *p, uint64_t len, int prot) {
  return mprotect(p, (size_t)len, prot);
}

/* Opens page i of r again (async-signal-safe). */
static void res_open(rt_resident *r, uint64_t i) {
  atomic_store(&r->kept[i], 0);
  (void)res_protect(r->host + i * RES_PAGE, RES_PAGE, PROT_READ | PROT_WRITE);
}

bool rt_resident_fault(uintptr_t addr) {
  if (atomic_load(&res_nlive) == 0) return false;
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
  uintptr_t a = (uintptr_t)ptr;
  for (int s = 0; s < RES_SLOTS; s++) {
    rt_resident *r = atomic_load(&res_live[s]);
    if (!r || a + len <= (uintptr_t)r->host || a >= (uintptr_t)r->host + r->npages * RES_PAGE) continue;
    uint64_t lo = a > (uintptr_t)r->host ? (a - (uintptr_t)r->host) / RES_PAGE : 0;
    uint64_t hi = (a + len - (uintptr_t)r->host + RES_PAGE - 1) / RES_PAGE;
    if (hi > r->npages) hi = r->npages;
    for (uint64_t i = lo; i < hi; i++)
      if (atomic_load(&r->kept[i])) res_open(r, i);
  }
}

rt_resident *rt_resident_new(uint8_t *host, uint64_t usable) {
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

/* Pages [lo, hi) of r not kept, as copies into in (merging runs); those
 * of a long span become kept. */
static bool res_pages(rt_resident *r, uint64_t lo, uint64_t hi, bool keep, rt_resident_launch *L) {
  uint64_t i = lo;
  while (i < hi) {
    if (atomic_load(&r->kept[i])) {
      i++;
      continue;
    }
    uint64_t j = i;
    while (j < hi && !atomic_load(&r->kept[j])) j++;
    uint8_t *h = r->host + i * RES_PAGE;
    uint64_t len = (j - i) * RES_PAGE;
    if (keep) {
      for (uint64_t p = i; p < j; p++) atomic_store(&r->kept[p], 1);
      if (res_protect(h, len, PROT_READ) != 0)
        for (uint64_t p = i; p < j; p++) atomic_store(&r->kept[p], 0);
      else
        r->kept_bytes += len;
    }
    if (L->nin == RT_RESIDENT_MAX_COPIES) return false;
    L->in[L->nin++] = (cu_copy){h, r->dev + i * RES_PAGE, len};
    L->copy_bytes += len;
    i = j;
  }
  return true;
}

uint64_t rt_resident_cost_bytes(const rt_resident *r, const rt_offload_plan *p) {
  uint64_t bytes = 0;
  for (int s = 0; s < p->nspans; s++) {
    const rt_offload_span *sp = &p->spans[s];
    if (sp->hi <= sp->lo) continue;
    if (sp->is_write) bytes += sp->hi - sp->lo;
    uint64_t lo = sp->lo / RES_PAGE, hi = (sp->hi + RES_PAGE - 1) / RES_PAGE;
    for (uint64_t i = lo; i < hi && i < r->npages; i++)
      if (!atomic_load(&r->kept[i])) bytes += RES_PAGE;
  }
  return bytes;
}

bool rt_resident_prepare(rt_resident *r, uint64_t mem_size, const rt_offload_plan *p, rt_resident_launch *L,
                         cu_error *err) {
  L->nin = L->nout = 0;
  L->copy_bytes = 0;
  if (mem_size > r->npages * RES_PAGE)
    return cu_fail_msg(err, "linear memory larger than its device copy's page table");
  if (!res_size(r, mem_size, err)) return false;
  for (int s = 0; s < p->nspans; s++) {
    const rt_offload_span *sp = &p->spans[s];
    if (sp->hi <= sp->lo) continue;
    uint64_t lo = sp->lo / RES_PAGE, hi = (sp->hi + RES_PAGE - 1) / RES_PAGE;
    if (!res_pages(r, lo, hi, sp->hi - sp->lo >= RT_RESIDENT_KEEP_MIN, L))
      return cu_fail_msg(err, "more than %d copies for one launch", RT_RESIDENT_MAX_COPIES);
    if (sp->is_write) {
      if (L->nout == RT_RESIDENT_MAX_COPIES)
        return cu_fail_msg(err, "more than %d copies for one launch", RT_RESIDENT_MAX_COPIES);
      L->out[L->nout++] = (cu_copy){r->host + sp->lo, r->dev + sp->lo, sp->hi - sp->lo};
      L->copy_bytes += sp->hi - sp->lo;
    }
  }
  L->dev_base = r->dev;
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
