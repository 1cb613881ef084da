/* rt_huge.c: transparent huge pages for linear memories that grow in small
 * steps.  A 2 MiB range gets a huge page at its first fault only when the
 * whole range is already read-write; wasi-libc's allocator grows the memory
 * a few 64 KiB pages at a time and writes at once, so without help every
 * range at the growing end is faulted in 4 KiB pages and stays so. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rt_internal.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 /* Linux 6.1 */
#endif

#define RT_HUGE ((uintptr_t)2 << 20)

void *rt_huge_reserve(size_t bytes) {
  size_t len = bytes + RT_HUGE;
  uint8_t *raw = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return NULL;
  uint8_t *base = (uint8_t *)(((uintptr_t)raw + RT_HUGE - 1) & ~(RT_HUGE - 1));
  if (base > raw) munmap(raw, (size_t)(base - raw));
  size_t tail = (size_t)(raw + len - (base + bytes));
  if (tail) munmap(base + bytes, tail);
  /* A hint: fewer TLB misses on large heaps; failure changes nothing. */
  (void)madvise(base, bytes, MADV_HUGEPAGE);
  return base;
}

void rt_huge_grown(uint8_t *base, uint64_t old_bytes, uint64_t new_bytes) {
  uintptr_t old_end = (uintptr_t)base + old_bytes, new_end = (uintptr_t)base + new_bytes;
  uintptr_t lo = old_end & ~(RT_HUGE - 1);
  /* Only the range the old end cut: ranges wholly inside the growth get
   * their huge page at their first fault. */
  if (lo == old_end || lo < (uintptr_t)base || lo + RT_HUGE > new_end) return;
  /* Off unless asked: the collapse runs on the program's thread and may
   * wait for compaction (a program growing to 256 MiB in 64 KiB steps:
   * +30 ms on the H200's idle host, 0.2 -> 0.7-1.2 s on a loaded VM). */
  const char *on = getenv("TWASM_HUGE_COLLAPSE");
  if (!on || strcmp(on, "1") != 0) return;
  (void)madvise((void *)lo, RT_HUGE, MADV_COLLAPSE);
}
