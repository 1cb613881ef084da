/* rt_ptx.c: a module's PTX is stored zstd-compressed (ABI 8: one frame of
 * every kernel's and arch's text, twasm_ptx_store_abi) and inflated once,
 * into the zeroed buffer its kernels' text pointers point into, when the
 * first kernel is loaded: a run that never uses a GPU never reads it. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <zstd.h>

#include "cu.h"
#include "rt_offload.h"

static pthread_mutex_t rt_ptx_lock = PTHREAD_MUTEX_INITIALIZER;

enum { PTX_PACKED = 0, PTX_READY = 1, PTX_BROKEN = 2 };

bool rt_ptx_inflate(twasm_ptx_store_abi *s, char *why, size_t cap) {
  if (!s) {
    snprintf(why, cap, "the kernel has no PTX store");
    return false;
  }
  pthread_mutex_lock(&rt_ptx_lock);
  if (s->state == PTX_PACKED) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t n = ZSTD_decompress(s->text, s->size, s->zstd, s->zstd_size);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    s->state = !ZSTD_isError(n) && n == s->size ? PTX_READY : PTX_BROKEN;
    if (s->state == PTX_READY)
      cu_trace("gpu: the module's PTX inflated, %llu -> %llu bytes in %.2f ms",
               (unsigned long long)s->zstd_size, (unsigned long long)s->size,
               (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
    if (s->state == PTX_BROKEN) {
      snprintf(why, cap, "the embedded PTX does not inflate: %s",
               ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong size");
      /* a damaged executable, not a GPU's limit: said once, trace or not */
      fprintf(stderr, "twasm: the executable's embedded PTX is corrupt (%s): its loops run on the CPU\n",
              ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong size");
    }
  } else if (s->state != PTX_READY) {
    snprintf(why, cap, "the embedded PTX does not inflate");
  }
  bool ok = s->state == PTX_READY;
  pthread_mutex_unlock(&rt_ptx_lock);
  return ok;
}
