/* rt_memory.c: linear memories: fixed reservations that grow in place, and
 * the registry the fault handler consults. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cu.h"
#include "rt_internal.h"
#include "rt_offload.h"

/* Bases of live reservations.  A fixed array of atomics because the fault
 * handler reads it and may not take locks; 16384 reservations already
 * cover the whole 47-bit address space. */
#define RT_MAX_RESERVATIONS 16384u
static _Atomic uintptr_t rt_reservations[RT_MAX_RESERVATIONS];
static _Atomic uint32_t rt_reservations_used; /* high-water mark */

static bool registry_add(uintptr_t base) {
  for (uint32_t i = 0; i < RT_MAX_RESERVATIONS; i++) {
    uintptr_t expected = 0;
    if (atomic_compare_exchange_strong(&rt_reservations[i], &expected, base)) {
      uint32_t used = atomic_load(&rt_reservations_used);
      while (used < i + 1 && !atomic_compare_exchange_weak(&rt_reservations_used, &used, i + 1)) {}
      return true;
    }
  }
  return false;
}

static void registry_remove(uintptr_t base) {
  uint32_t used = atomic_load(&rt_reservations_used);
  for (uint32_t i = 0; i < used; i++) {
    uintptr_t expected = base;
    if (atomic_compare_exchange_strong(&rt_reservations[i], &expected, 0)) return;
  }
}

bool rt_memory_owns(uintptr_t addr) {
  uint32_t used = atomic_load(&rt_reservations_used);
  for (uint32_t i = 0; i < used; i++) {
    uintptr_t base = atomic_load(&rt_reservations[i]);
    if (base && addr - base < RT_MEMORY_RESERVE) return true;
  }
  return false;
}

/* The reservation in CUDA managed memory, all PROT_NONE like a host one:
 * kernels reach it, the CPU keeps its guard pages (the driver honours
 * mprotect on managed ranges for CPU accesses).  NULL: use host memory. */
static void *reserve_managed_now(uint64_t usable) {
  void *base;
  cu_error err;
  if (!cu_reserve_managed(RT_MEMORY_RESERVE, usable, &base, &err)) {
    cu_trace("gpu: linear memory stays in host memory: %s", err.message);
    return NULL;
  }
  if (mprotect(base, RT_MEMORY_RESERVE, PROT_NONE) != 0) {
    cu_trace("gpu: linear memory stays in host memory: mprotect on managed memory failed");
    cu_free_managed(base);
    return NULL;
  }
  return base;
}

static void *reserve_managed(uint64_t usable) {
  cu_mode mode = cu_mode_get();
  /* TWASM_GPU_MEMORY=host: host memory, pinned at the first launch, as
   * auto mode's late start has it (for tests of the device copy and of
   * launches not waited for, under TWASM_DEVICE=gpu) */
  const char *where = getenv("TWASM_GPU_MEMORY");
  if (where && !strcmp(where, "host") && mode != CU_MODE_CPU) {
    cu_trace("gpu: linear memory stays in host memory: TWASM_GPU_MEMORY=host");
    return NULL;
  }
  /* In auto mode the driver's start waits for work that pays for it
   * (rt_start.c): a program that never launches never starts it. */
  if (mode == CU_MODE_CPU || (mode == CU_MODE_AUTO && !cu_ready()) || !cu_available()) return NULL;
  if (mode != CU_MODE_AUTO) return reserve_managed_now(usable);
  /* The start's helper thread may hold the driver for seconds (a PTX
   * load): then host memory, exposed at a launch, rather than a wait. */
  if (!rt_start_driver_try()) {
    cu_trace("gpu: linear memory stays in host memory: the driver is busy loading a kernel");
    return NULL;
  }
  void *base = reserve_managed_now(usable);
  rt_start_driver_done();
  return base;
}

static void release(rt_memory *m) {
  rt_resident_free(m->resident);
  m->resident = NULL;
  if (m->managed) {
    cu_free_managed(m->abi.base);
    return;
  }
  if (m->exposed > 0) cu_host_forget(m->abi.base);
  munmap(m->abi.base, RT_MEMORY_RESERVE);
}

/* A job of the start's helper thread (rt_start_post). */
static void release_job(void *arg) {
  release(arg);
  free(arg);
}

/* The background start's memory: named, not yet taken by the helper
 * thread (which then sets its `exposing`). */
static pthread_mutex_t rt_expose_lock = PTHREAD_MUTEX_INITIALIZER;
static rt_memory *rt_expose_next;

void rt_memory_expose_later(rt_memory *m) {
  pthread_mutex_lock(&rt_expose_lock);
  rt_expose_next = m && !m->managed && m->gpu && m->exposed == 0 ? m : NULL;
  pthread_mutex_unlock(&rt_expose_lock);
}

const char *rt_memory_expose_pending(void) {
  pthread_mutex_lock(&rt_expose_lock);
  rt_memory *m = rt_expose_next;
  rt_expose_next = NULL;
  if (m) m->exposing = true;
  pthread_mutex_unlock(&rt_expose_lock);
  if (!m) return "not exposed here";
  /* The Wasm thread may grow it meanwhile: the growth is pinned later. */
  uint64_t open = __atomic_load_n(&m->abi.size_bytes, __ATOMIC_RELAXED);
  cu_host_kind kind = 0;
  cu_error err;
  bool ok = cu_host_expose(m->abi.base, RT_MEMORY_RESERVE, m->usable, open, &kind, &err);
  if (!ok) cu_trace("gpu: linear memory stays out of the device's reach: %s", err.message);
  pthread_mutex_lock(&rt_expose_lock);
  m->exposed = ok ? (int)kind : -1;
  m->exposing = false;
  bool gone = m->abandoned;
  pthread_mutex_unlock(&rt_expose_lock);
  if (gone) {
    release(m);
    free(m);
    return "exposed, then freed: its instance had ended";
  }
  return !ok ? "out of the device's reach" : kind == CU_HOST_PINNED ? "pinned" : "reachable as pageable memory";
}

const char *rt_memory_reachable(rt_memory *m, bool *over_bus) {
  *over_bus = false;
  if (m->managed) return NULL;
  if (!m->gpu) return "linear memory is host memory (not made for a module with kernels)";
  pthread_mutex_lock(&rt_expose_lock);
  bool busy = m->exposing || rt_expose_next == m;
  pthread_mutex_unlock(&rt_expose_lock);
  if (busy) return "linear memory is being made reachable";
  const char *why = "linear memory is host memory the device cannot reach";
  cu_error err;
  if (m->exposed == 0) {
    cu_host_kind kind;
    bool ok = cu_host_expose(m->abi.base, RT_MEMORY_RESERVE, m->usable, m->abi.size_bytes, &kind, &err);
    m->exposed = ok ? (int)kind : -1;
    if (!ok) cu_trace("gpu: linear memory stays out of the device's reach: %s", err.message);
  }
  if (m->exposed < 0) return why;
  *over_bus = m->exposed == CU_HOST_PINNED;
  if (!cu_host_extend(m->abi.base, m->abi.size_bytes, &err)) {
    cu_trace("gpu: linear memory's growth not exposed: %s", err.message);
    return "the memory's new pages are out of the device's reach";
  }
  return NULL;
}

rt_memory *rt_memory_create(uint64_t min_pages, uint64_t max_pages, bool has_max, bool gpu) {
  if (min_pages > RT_MAX_PAGES || (has_max && max_pages < min_pages)) return NULL;
  rt_memory *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  uint64_t usable = (has_max && max_pages < RT_MAX_PAGES ? max_pages : RT_MAX_PAGES) * TWASM_PAGE_SIZE;
  void *base = gpu && usable ? reserve_managed(usable) : NULL;
  m->managed = base != NULL;
  m->gpu = gpu && usable;
  m->usable = usable;
  if (!base) {
    base = rt_huge_reserve(RT_MEMORY_RESERVE);
    if (!base) goto fail;
  }
  m->abi.base = base;
  uint64_t bytes = min_pages * TWASM_PAGE_SIZE;
  if ((bytes && mprotect(base, bytes, PROT_READ | PROT_WRITE) != 0) ||
      !registry_add((uintptr_t)base)) {
    release(m);
    goto fail;
  }
  m->abi.size_bytes = bytes;
  m->max_pages = max_pages;
  m->has_max = has_max;
  return m;
fail:
  free(m);
  return NULL;
}

void rt_memory_destroy(rt_memory *m) {
  if (!m) return;
  registry_remove((uintptr_t)m->abi.base);
  pthread_mutex_lock(&rt_expose_lock);
  if (rt_expose_next == m) rt_expose_next = NULL;
  bool handed = m->exposing;
  m->abandoned = handed;
  pthread_mutex_unlock(&rt_expose_lock);
  /* Unpinning or freeing waits for the driver, which the start's helper
   * thread may hold for seconds (a PTX load): that thread does it then. */
  if (handed || ((m->exposed > 0 || m->managed) && rt_start_post(release_job, m))) return;
  release(m);
  free(m);
}

int32_t twasm_memory_grow(twasm_memory *mem, uint32_t delta_pages) {
  rt_memory *m = (rt_memory *)mem;
  uint64_t old_pages = m->abi.size_bytes / TWASM_PAGE_SIZE;
  uint64_t limit = m->has_max && m->max_pages < RT_MAX_PAGES ? m->max_pages : RT_MAX_PAGES;
  if (delta_pages > limit - old_pages) return -1;
  if (delta_pages == 0) return (int32_t)old_pages;
  uint64_t add = (uint64_t)delta_pages * TWASM_PAGE_SIZE;
  if (mprotect(m->abi.base + m->abi.size_bytes, add, PROT_READ | PROT_WRITE) != 0) return -1;
  /* Not on memory the device reaches: the driver owns or pins its pages. */
  if (!m->managed && m->exposed <= 0) rt_huge_grown(m->abi.base, m->abi.size_bytes, m->abi.size_bytes + add);
  m->abi.size_bytes += add;
  return (int32_t)old_pages;
}

twasm_memory *twasm_memory_new(uint32_t min_pages, uint32_t max_pages, bool has_max) {
  return (twasm_memory *)rt_memory_create(min_pages, max_pages, has_max, false);
}

/* Memories of instances live and die with them. */
void twasm_memory_delete(twasm_memory *mem) {
  rt_memory *m = (rt_memory *)mem;
  if (m && !m->owner) rt_memory_destroy(m);
}

uint8_t *twasm_memory_data(twasm_memory *m) { return ((rt_memory *)m)->abi.base; }

uint64_t twasm_memory_size(const twasm_memory *m) { return ((const rt_memory *)m)->abi.size_bytes; }
