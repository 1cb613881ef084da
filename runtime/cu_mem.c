/* cu_mem.c: managed memory: allocations under the TWASM_GPU_MEM_CAP and the
 * device's free memory, the registry of live allocations that launch
 * checks pointers against, and prefetching. */
#include <pthread.h>
#include <stdlib.h>

#include "cu.h"

enum {
  CU_MEM_ATTACH_GLOBAL = 0x1,        /* CUmemAttach_flags */
  CU_MEM_LOCATION_TYPE_DEVICE = 0x1, /* CUmemLocationType */
};

/* Asking for all the free memory can hang the GPU; keep this much back. */
#define CU_MEM_MARGIN_MIN (256ull << 20)

typedef struct cu_block {
  uintptr_t base;
  uint64_t size;
  uint64_t admitted;     /* what counts against the cap */
} cu_block;

static pthread_mutex_t cu_mem_lock = PTHREAD_MUTEX_INITIALIZER;
static cu_block *cu_blocks;
static size_t cu_nblocks, cu_blocks_cap;
static uint64_t cu_live_bytes;

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

static bool cu_blocks_add(uintptr_t base, uint64_t size, uint64_t admitted) {
  if (cu_nblocks == cu_blocks_cap) {
    size_t cap = cu_blocks_cap ? 2 * cu_blocks_cap : 8;
    cu_block *grown = realloc(cu_blocks, cap * sizeof *grown);
    if (!grown) return false;
    cu_blocks = grown;
    cu_blocks_cap = cap;
  }
  cu_blocks[cu_nblocks++] = (cu_block){base, size, admitted};
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
  if (!cu_blocks_add((uintptr_t)ptr, size, admitted)) {
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

bool cu_alloc_device(uint64_t size, void **out, cu_error *err) {
  if (!cu_make_current(err)) return false;
  if (!cu_drv.mem_alloc) return cu_fail_msg(err, "the driver lacks cuMemAlloc_v2");
  pthread_mutex_lock(&cu_mem_lock);
  bool ok = cu_admit_locked(size, err);
  uint64_t ptr = 0;
  if (ok) {
    cu_result r = cu_drv.mem_alloc(&ptr, (size_t)size);
    ok = r == 0 || cu_check_failure(err, "cuMemAlloc", r);
  }
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

bool cu_in_managed(const void *ptr, uint64_t len) {
  uintptr_t lo = (uintptr_t)ptr;
  bool inside = false;
  pthread_mutex_lock(&cu_mem_lock);
  for (size_t i = 0; i < cu_nblocks && !inside; i++) {
    const cu_block *b = &cu_blocks[i];
    inside = lo >= b->base && lo - b->base <= b->size && len <= b->size - (lo - b->base);
  }
  pthread_mutex_unlock(&cu_mem_lock);
  return inside;
}

bool cu_prefetch(const void *ptr, uint64_t len, cu_error *err) {
  if (!cu_make_current(err)) return false;
  if (!cu_in_managed(ptr, len))
    return cu_fail_msg(err, "prefetch of %p+%llu: not inside managed memory", ptr,
                       (unsigned long long)len);
  /* Without concurrent access the driver migrates at launch anyway, and
   * prefetch is not supported there. */
  if (!cu_device()->concurrent_managed || len == 0) return true;
  uint64_t dptr = (uint64_t)(uintptr_t)ptr;
  cu_result r = 0;
  if (cu_drv.mem_prefetch_v2) {
    struct cu_mem_location to_device = {CU_MEM_LOCATION_TYPE_DEVICE, cu_dev};
    r = cu_drv.mem_prefetch_v2(dptr, (size_t)len, to_device, 0, NULL);
  } else if (cu_drv.mem_prefetch_v1) {
    r = cu_drv.mem_prefetch_v1(dptr, (size_t)len, cu_dev, NULL);
  }
  return r == 0 || cu_check_failure(err, "cuMemPrefetchAsync", r);
}
