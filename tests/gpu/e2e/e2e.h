/* e2e.h: what every end-to-end GPU test program shares: a deterministic
 * generator, an FNV-1a hash of bytes, bit-exact printing, and a size read
 * from argv (so loop bounds are run-time values).  The generator and hash
 * loops are recurrences, never kernels, and run on the CPU on both sides. */
#ifndef E2E_H
#define E2E_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* xorshift32: seed must not be 0. */
static inline uint32_t e2e_next(uint32_t *s) {
  uint32_t x = *s;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *s = x;
}

/* Uniform in [-1, 1) with 24 bits. */
static inline float e2e_unit(uint32_t *s) {
  return (float)((int32_t)(e2e_next(s) >> 8) - (1 << 23)) * (1.0f / (1 << 23));
}

static inline uint64_t e2e_fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}
#define E2E_FNV_INIT 0xcbf29ce484222325ull

/* name: hash over n bytes, then a few elements as bits. */
static inline void e2e_print_bytes(const char *name, const void *p, size_t n) {
  printf("%s: fnv %016llx bytes %zu\n", name, (unsigned long long)e2e_fnv(E2E_FNV_INIT, p, n), n);
}
static inline void e2e_print_f32(const char *name, const float *p, size_t n) {
  e2e_print_bytes(name, p, n * sizeof *p);
  size_t at[3] = {0, n / 2, n - 1};
  for (int i = 0; i < 3; i++) printf("  %s[%zu] = %a\n", name, at[i], (double)p[at[i]]);
}
static inline void e2e_print_f64(const char *name, const double *p, size_t n) {
  e2e_print_bytes(name, p, n * sizeof *p);
  size_t at[3] = {0, n / 2, n - 1};
  for (int i = 0; i < 3; i++) printf("  %s[%zu] = %a\n", name, at[i], p[at[i]]);
}
static inline void e2e_print_i32(const char *name, const int32_t *p, size_t n) {
  e2e_print_bytes(name, p, n * sizeof *p);
  size_t at[3] = {0, n / 2, n - 1};
  for (int i = 0; i < 3; i++) printf("  %s[%zu] = 0x%08x\n", name, at[i], (unsigned)p[at[i]]);
}
static inline void e2e_print_i64(const char *name, const int64_t *p, size_t n) {
  e2e_print_bytes(name, p, n * sizeof *p);
  size_t at[3] = {0, n / 2, n - 1};
  for (int i = 0; i < 3; i++)
    printf("  %s[%zu] = 0x%016llx\n", name, at[i], (unsigned long long)p[at[i]]);
}

/* argv[i] as a positive size, else the default. */
static inline int e2e_arg(int argc, char **argv, int i, int dflt) {
  int v = argc > i ? atoi(argv[i]) : 0;
  return v > 0 ? v : dflt;
}

static inline void *e2e_alloc(size_t bytes) {
  void *p = malloc(bytes);
  if (!p) {
    fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
    exit(2);
  }
  memset(p, 0, bytes);
  return p;
}
#endif
