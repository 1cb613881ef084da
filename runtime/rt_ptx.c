/* rt_ptx.c: a module's PTX is stored zstd-compressed (ABI 8: one frame of
 * every kernel's and arch's text, twasm_ptx_store_abi) and inflated once,
 * into the zeroed buffer its kernels' text pointers point into, when the
 * first kernel is loaded: a run that never uses a GPU never reads it. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
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

/* Whether a and b are the same text but where a names its kernel na and b
 * its kernel nb (the entry, its parameters, its packed entries). */
static bool same_but_name(const char *a, const char *na, const char *b, const char *nb) {
  size_t la = strlen(na), lb = strlen(nb);
  while (*a && *b) {
    if (*a == *na && *b == *nb && strncmp(a, na, la) == 0 && strncmp(b, nb, lb) == 0) {
      a += la, b += lb;
      continue;
    }
    if (*a++ != *b++) return false;
  }
  return *a == *b;
}

bool rt_ptx_twins(const twasm_kernel_abi *a, const twasm_kernel_abi *b) {
  if (a->nptx != b->nptx || a->tc_elem_bytes != b->tc_elem_bytes) return false;
  for (uint32_t i = 0; i < a->nptx; i++) {
    const twasm_kernel_ptx_abi *p = &a->ptx[i], *q = &b->ptx[i];
    if (p->sm != q->sm || p->ptx_isa != q->ptx_isa || p->path != q->path || p->entries != q->entries ||
        !p->text || !q->text || !same_but_name(p->text, a->name, q->text, b->name))
      return false;
  }
  return true;
}
