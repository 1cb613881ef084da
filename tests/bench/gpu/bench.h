/* bench.h: what the GPU benchmark programs share: a monotonic clock, a
 * deterministic generator and a size read from argv. */
#ifndef BENCH_H
#define BENCH_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double bench_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline uint32_t bench_next(uint32_t *s) {
  uint32_t x = *s;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *s = x;
}

static inline float bench_unit(uint32_t *s) {
  return (float)((int32_t)(bench_next(s) >> 8) - (1 << 23)) * (1.0f / (1 << 23));
}

static inline int bench_arg(int argc, char **argv, int i, int dflt) {
  int v = argc > i ? atoi(argv[i]) : 0;
  return v > 0 ? v : dflt;
}

static inline void *bench_alloc(size_t bytes) {
  void *p = malloc(bytes);
  if (!p) {
    fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
    exit(2);
  }
  return p;
}

static inline uint64_t bench_fnv(const void *p, size_t n) {
  const unsigned char *b = p;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}
#endif
