/* cu_mem.c: memory kernels reach: managed allocations under the
 * TWASM_GPU_MEM_CAP and the device's free memory, host memory exposed to
 * the device, the registry both form that launches check pointers
 * against, and prefetching. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"

enum {
  CU_MEM_ATTACH_GLOBAL = 0x1,        /* CUmemAttach_flags */
  CU_MEM_LOCATION_TYPE_DEVICE = 0x1, /* CUmemLocationType */
  CU_MEMHOSTREGISTER_DEVICEMAP = 0x2,
};

/* Asking for all the free memory can hang the GPU; keep this much back. */
#define CU_MEM_MARGIN_MIN (256ull << 20)

typedef struct cu_block {
  uintptr_t base;
  uint64_t size;
  uint64_t admitted;     /* what counts against the cap */
  bool device;           /* device memory (cu_alloc_mirror), not managed */
} cu_block;

/* Exposed host memory (cu_host_expose): pinned memory is registered in
 * pieces, one per growth, each unregistered by its own start. */
#define CU_HOST_SLOTS 16
#define CU_HOST_PIECES 64
typedef struct cu_host {
  uintptr_t base;        /* 0: a free slot */
  uint64_t reserve, admitted;
  uint64_t open;         /* reachable from base (pinned), or reserve */
  cu_host_kind kind;
  uint32_t npieces;
  uintptr_t pieces[CU_HOST_PIECES];
} cu_host;

static pthread_mutex_t cu_mem_lock = PTHREAD_MUTEX_INITIALIZER;
static cu_block *cu_blocks;
static size_t cu_nblocks, cu_blocks_cap;
static uint64_t cu_live_bytes;
static cu_host cu_hosts[CU_HOST_SLOTS];

bool cu_mem_admit(uint64_t size, uint64_t live, uint64_t cap,
                  uint64_t free_bytes, uint64_t total_bytes, cu_error *err) {
  if (size == 0) return cu_fail_msg(err, "managed allocation of 0 bytes");
  if (cap && (size > cap || live > cap - size))
    return cu_fail_msg(err, "managed allocation of %llu bytes would pass TWASM_GPU_MEM_CAP "
                       "(%llu bytes, %llu in use)", (unsigned long long)size,
                       (unsigned long long)cap, (unsigned long long)live);
  uint64_t margin = total_bytes / 64 > CU_MEM_MARGIN_MIN ? total_bytes / 64 : CU_MEM_MARGIN_MIN;
  if (free_bytes < margin || size > free_bytes - margin)
    return cu_fail_msg(err, "managed allocation of %llu bytes refused: the device has %llu "
                       "bytes free and %llu are kept back", (unsigned long long)size,
                       (unsigned long long)free_bytes, (unsigned long long)margin);
  return true;
}

static bool cu_blocks_add(uintptr_t base, uint64_t size, uint64_t admitted, bool device) {
  if (cu_nblocks == cu_blocks_cap) {
    size_t cap = cu_blocks_cap ? 2 * cu_blocks_cap : 8;
    cu_block *grown = realloc(cu_blocks, cap * sizeof *grown);
    if (!grown) return false;
    cu_blocks = grown;
    cu_blocks_cap = cap;
  }
  cu_blocks[cu_nblocks++] = (cu_block){base, size, admitted, device};
  cu_live_bytes += admitted;
  return true;
}

/* Whether `admitted` more bytes fit now (under cu_mem_lock, held until
 * the allocation is counted, so two threads cannot both pass the check
 * with the same free memory). */
static bool cu_admit_locked(uint64_t admitted, cu_error *err) {
  size_t free_bytes = 0, total_bytes = 0;
  cu_result r = cu_drv.mem_get_info(&free_bytes, &total_bytes);
  if (r != 0) return cu_check_failure(err, "cuMemGetInfo", r);
  return cu_mem_admit(admitted, cu_live_bytes, cu_device()->mem_cap, free_bytes, total_bytes, err);
}

static bool cu_alloc_locked(uint64_t size, uint64_t admitted, void **out, cu_error *err) {
  if (!cu_admit_locked(admitted, err)) return false;
  uint64_t ptr = 0;
  cu_result r = cu_drv.mem_alloc_managed(&ptr, (size_t)size, CU_MEM_ATTACH_GLOBAL);
  if (r != 0) return cu_check_failure(err, "cuMemAllocManaged", r);
  if (!cu_blocks_add((uintptr_t)ptr, size, admitted, false)) {
    cu_drv.mem_free(ptr);
    return cu_fail_msg(err, "out of host memory for the managed allocation registry");
  }
  *out = (void *)(uintptr_t)ptr;
  return true;
}

bool cu_reserve_managed(uint64_t size, uint64_t admitted, void **out, cu_error *err) {
  if (admitted > size) admitted = size;
  if (!cu_make_current(err)) return false;
  pthread_mutex_lock(&cu_mem_lock);
  bool ok = cu_alloc_locked(size, admitted, out, err);
  pthread_mutex_unlock(&cu_mem_lock);
  if (ok)
    cu_trace("gpu: managed %llu bytes at %p (%llu usable)", (unsigned long long)size, *out,
             (unsigned long long)admitted);
  return ok;
}

bool cu_alloc_managed(uint64_t size, void **out, cu_error *err) {
  return cu_reserve_managed(size, size, out, err);
}

/* cuMemAlloc of size bytes within the admitted total (cu_mem_lock held). */
static bool cu_device_alloc_locked(uint64_t size, uint64_t *ptr, cu_error *err) {
  if (!cu_admit_locked(size, err)) return false;
  cu_result r = cu_drv.mem_alloc(ptr, (size_t)size);
  return r == 0 || cu_check_failure(err, "cuMemAlloc", r);
}

bool cu_alloc_device(uint64_t size, void **out, cu_error *err) {
  if (!cu_make_current(err)) return false;
  if (!cu_drv.mem_alloc) return cu_fail_msg(err, "the driver lacks cuMemAlloc_v2");
  pthread_mutex_lock(&cu_mem_lock);
  uint64_t ptr = 0;
  bool ok = cu_device_alloc_locked(size, &ptr, err);
  if (ok) cu_live_bytes += size;
  pthread_mutex_unlock(&cu_mem_lock);
  if (ok) {
    *out = (void *)(uintptr_t)ptr;
    cu_trace("gpu: device scratch of %llu bytes at %p", (unsigned long long)size, *out);
  }
  return ok;
}

void cu_free_device(void *ptr, uint64_t size) {
  if (!ptr) return;
  pthread_mutex_lock(&cu_mem_lock);
  cu_live_bytes -= size;
  pthread_mutex_unlock(&cu_mem_lock);
  cu_error err;
  if (!cu_make_current(&err)) return;
  cu_result r = cu_drv.mem_free((uint64_t)(uintptr_t)ptr);
  if (r != 0) cu_check_failure(NULL, "cuMemFree", r);
}

bool cu_alloc_mirror(uint64_t size, void **out, cu_error *err) {
  if (!cu_make_current(err)) return false;
  if (!cu_drv.mem_alloc) return cu_fail_msg(err, "the driver lacks cuMemAlloc_v2");
  pthread_mutex_lock(&cu_mem_lock);
  uint64_t ptr = 0;
  bool ok = cu_device_alloc_locked(size, &ptr, err);
  if (ok && !cu_blocks_add((uintptr_t)ptr, size, size, true)) {
    cu_drv.mem_free(ptr);
    ok = cu_fail_msg(err, "out of host memory for the allocation registry");
  }
  pthread_mutex_unlock(&cu_mem_lock);
  if (ok) {
    *out = (void *)(uintptr_t)ptr;
    cu_trace("gpu: device copy of host memory, %llu bytes at %p", (unsigned long long)size, *out);
  }
  return ok;
}

void cu_free_mirror(void *ptr) { cu_free_managed(ptr); }

bool cu_mirror_move(void *to, const void *from, uint64_t len, cu_error *err) {
  if (!cu_make_current(err)) return false;
  if (!cu_drv.memcpy_dtod) return cu_fail_msg(err, "the driver lacks cuMemcpyDtoD_v2");
  if (!cu_reachable(to, len) || !cu_reachable(from, len))
    return cu_fail_msg(err, "device copy of %llu bytes outside device memory", (unsigned long long)len);
  cu_result r = cu_drv.memcpy_dtod((uint64_t)(uintptr_t)to, (uint64_t)(uintptr_t)from, (size_t)len);
  if (r == 0) r = cu_drv.ctx_synchronize();
  return r == 0 || cu_check_failure(err, "cuMemcpyDtoD", r);
}

void cu_free_managed(void *ptr) {
  bool found = false;
  pthread_mutex_lock(&cu_mem_lock);
  for (size_t i = 0; i < cu_nblocks; i++) {
    if (cu_blocks[i].base == (uintptr_t)ptr) {
      cu_live_bytes -= cu_blocks[i].admitted;
      cu_blocks[i] = cu_blocks[--cu_nblocks];
      found = true;
      break;
    }
  }
  pthread_mutex_unlock(&cu_mem_lock);
  /* After a sticky error the context is gone and so is the memory. */
  cu_error err;
  if (found && cu_make_current(&err)) {
    cu_result r = cu_drv.mem_free((uint64_t)(uintptr_t)ptr);
    if (r != 0) cu_check_failure(NULL, "cuMemFree", r);
  }
}

static bool cu_inside(uintptr_t lo, uint64_t len, uintptr_t base, uint64_t size) {
  return lo >= base && lo - base <= size && len <= size - (lo - base);
}

/* Under cu_mem_lock. */
static cu_host *cu_host_of(uintptr_t base) {
  for (size_t i = 0; i < CU_HOST_SLOTS; i++)
    if (cu_hosts[i].base == base) return &cu_hosts[i];
  return NULL;
}

/* Pins [from, to) of h as one more piece (under cu_mem_lock). */
static bool cu_host_pin(cu_host *h, uint64_t to, cu_error *err) {
  if (to <= h->open) return true;
  if (h->npieces == CU_HOST_PIECES)
    return cu_fail_msg(err, "host memory at %p grew %u times since it was pinned", (void *)h->base,
                       CU_HOST_PIECES);
  void *from = (void *)(h->base + h->open);
  cu_result r = cu_drv.mem_host_register(from, (size_t)(to - h->open), CU_MEMHOSTREGISTER_DEVICEMAP);
  if (r != 0) return cu_check_failure(err, "cuMemHostRegister", r);
  h->pieces[h->npieces++] = (uintptr_t)from;
  h->open = to;
  return true;
}

bool cu_host_expose(void *base, uint64_t reserve, uint64_t admitted, uint64_t open,
                    cu_host_kind *kind, cu_error *err) {
  if (!cu_make_current(err)) return false;
  const cu_device_info *d = cu_device();
  /* TWASM_TEST_PIN_HOST=1 takes the pinned way on any device, for tests. */
  const char *test_pin = getenv("TWASM_TEST_PIN_HOST");
  bool pinned = !d->pageable_access || (test_pin && strcmp(test_pin, "1") == 0);
  if (pinned && (!d->host_register || !cu_drv.mem_host_register || !cu_drv.mem_host_unregister))
    return cu_fail_msg(err, "%s reaches neither pageable host memory nor registered host memory at "
                       "its own addresses", d->name);
  if (admitted > reserve) admitted = reserve;
  pthread_mutex_lock(&cu_mem_lock);
  cu_host *h = cu_host_of((uintptr_t)base) ? NULL : cu_host_of(0);
  bool ok = h != NULL || cu_fail_msg(err, "more than %d host memories exposed", CU_HOST_SLOTS);
  /* Pageable memory migrates into device memory like managed memory:
   * same cap, same margin.  Pinned memory stays in the host's. */
  if (ok && !pinned) ok = cu_admit_locked(admitted, err);
  if (ok) {
    *h = (cu_host){(uintptr_t)base, reserve, pinned ? 0 : admitted, pinned ? 0 : reserve,
                   pinned ? CU_HOST_PINNED : CU_HOST_PAGEABLE, 0, {0}};
    ok = !pinned || cu_host_pin(h, open, err);
    if (ok) cu_live_bytes += h->admitted;
    else h->base = 0;
  }
  pthread_mutex_unlock(&cu_mem_lock);
  if (ok) {
    *kind = pinned ? CU_HOST_PINNED : CU_HOST_PAGEABLE;
    cu_trace("gpu: host memory at %p reachable by kernels (%s, %llu bytes)", base,
             pinned ? "pinned, over the bus" : "pageable memory access",
             (unsigned long long)(pinned ? open : reserve));
  }
  return ok;
}

uint64_t cu_host_piece_left(const void *ptr) {
  uintptr_t p = (uintptr_t)ptr;
  uint64_t left = UINT64_MAX;
  pthread_mutex_lock(&cu_mem_lock);
  for (size_t i = 0; i < CU_HOST_SLOTS; i++) {
    const cu_host *h = &cu_hosts[i];
    if (!h->base || h->kind != CU_HOST_PINNED || p < h->base || p >= h->base + h->open) continue;
    /* the piece holding p ends where the next one starts, or at open */
    uintptr_t end = h->base + h->open;
    for (uint32_t k = 0; k < h->npieces; k++)
      if (h->pieces[k] > p && h->pieces[k] < end) end = h->pieces[k];
    left = end - p;
  }
  pthread_mutex_unlock(&cu_mem_lock);
  return left;
}

bool cu_host_extend(void *base, uint64_t open, cu_error *err) {
  pthread_mutex_lock(&cu_mem_lock);
  cu_host *h = cu_host_of((uintptr_t)base);
  bool ok = h && (h->kind == CU_HOST_PAGEABLE || open <= h->open ||
                  (cu_make_current(err) && cu_host_pin(h, open, err)));
  if (!h) cu_fail_msg(err, "host memory at %p is not exposed", base);
  pthread_mutex_unlock(&cu_mem_lock);
  return ok;
}

void cu_host_forget(void *base) {
  pthread_mutex_lock(&cu_mem_lock);
  cu_host *h = base ? cu_host_of((uintptr_t)base) : NULL;
  cu_host gone = {0};
  if (h) {
    gone = *h;
    cu_live_bytes -= h->admitted;
    h->base = 0;
  }
  pthread_mutex_unlock(&cu_mem_lock);
  /* After a sticky error the context is gone, and the pins with it. */
  cu_error err;
  if (gone.npieces && cu_make_current(&err))
    for (uint32_t i = 0; i < gone.npieces; i++) {
      cu_result r = cu_drv.mem_host_unregister((void *)gone.pieces[i]);
      if (r != 0) cu_check_failure(NULL, "cuMemHostUnregister", r);
    }
}

/* What holds [ptr, ptr+len) (under cu_mem_lock): 1 managed memory, 2
 * pageable host memory, 3 pinned host memory, 4 device memory, 0 none. */
static int cu_holder(const void *ptr, uint64_t len) {
  uintptr_t lo = (uintptr_t)ptr;
  for (size_t i = 0; i < cu_nblocks; i++)
    if (cu_inside(lo, len, cu_blocks[i].base, cu_blocks[i].size)) return cu_blocks[i].device ? 4 : 1;
  for (size_t i = 0; i < CU_HOST_SLOTS; i++)
    if (cu_hosts[i].base && cu_inside(lo, len, cu_hosts[i].base, cu_hosts[i].open))
      return cu_hosts[i].kind == CU_HOST_PAGEABLE ? 2 : 3;
  return 0;
}

static int cu_holder_locked(const void *ptr, uint64_t len) {
  pthread_mutex_lock(&cu_mem_lock);
  int holder = cu_holder(ptr, len);
  pthread_mutex_unlock(&cu_mem_lock);
  return holder;
}

bool cu_reachable(const void *ptr, uint64_t len) { return cu_holder_locked(ptr, len) != 0; }

bool cu_prefetch(const void *ptr, uint64_t len, cu_error *err) {
  if (!cu_make_current(err)) return false;
  int holder = cu_holder_locked(ptr, len);
  if (!holder)
    return cu_fail_msg(err, "prefetch of %p+%llu: not inside memory kernels reach", ptr,
                       (unsigned long long)len);
  /* Without concurrent access the driver migrates at launch anyway, and
   * prefetch is not supported there; pinned memory never moves. */
  if (!cu_device()->concurrent_managed || len == 0 || holder >= 3) return true;
  uint64_t dptr = (uint64_t)(uintptr_t)ptr;
  cu_result r = 0;
  if (cu_drv.mem_prefetch_v2) {
    struct cu_mem_location to_device = {CU_MEM_LOCATION_TYPE_DEVICE, cu_dev};
    r = cu_drv.mem_prefetch_v2(dptr, (size_t)len, to_device, 0, NULL);
  } else if (cu_drv.mem_prefetch_v1) {
    r = cu_drv.mem_prefetch_v1(dptr, (size_t)len, cu_dev, NULL);
  }
  if (r != 0 && holder == 2 && !cu_is_sticky(r)) {
    /* Pageable memory a driver will not prefetch still comes by faults. */
    cu_trace("gpu: prefetch of pageable memory refused (CUresult %d); the kernel's faults move it", r);
    return true;
  }
  return r == 0 || cu_check_failure(err, "cuMemPrefetchAsync", r);
}
