/* polybench.h: what the PolyBench-style e2e programs (polybench*.c) share:
 * the allocation function PolyBench's users write (calloc behind a function
 * of its own, so the kernels' arrays come from separate calls and nothing is
 * `restrict`) and the fills of f32 and f64 arrays from e2e.h's generator.
 * Each program is one translation unit; these stay plain external functions,
 * as they were in each program, so that clang's inlining choices (and with
 * them the offload report) do not change.  Unused ones are dropped at link. */
#ifndef POLYBENCH_H
#define POLYBENCH_H
#include "e2e.h"

void *new_array(size_t bytes) {
  void *p = calloc(1, bytes);
  if (!p) exit(2);
  return p;
}

void fill_f32(float *v, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; i++) v[i] = e2e_unit(&seed);
}

/* 24 bits of e2e_unit, and 24 more below them. */
void fill_f64(double *v, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; i++) v[i] = (double)e2e_unit(&seed) + (double)e2e_unit(&seed) * 0x1p-24;
}
#endif
