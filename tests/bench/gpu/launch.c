/* launch.c: a tiny map (argv[1] elements, default 256) called argv[2]
 * times (default 10000); prints microseconds per call.  Under
 * TWASM_DEVICE=gpu each call is a launch + synchronise (the launch
 * overhead), under cpu it is the CPU loop. */
#include "bench.h"

__attribute__((noinline)) void k_tiny(int n, float a, float b, const float *x, float *y) {
  for (int i = 0; i < n; i++) y[i] = a * x[i] + b;
}

int main(int argc, char **argv) {
  int n = bench_arg(argc, argv, 1, 256), calls = bench_arg(argc, argv, 2, 10000);
  float *x = bench_alloc((size_t)n * 4), *y = bench_alloc((size_t)n * 4);
  uint32_t s = 3;
  for (int i = 0; i < n; i++) x[i] = bench_unit(&s);
  k_tiny(n, 0.5f, 1.0f, x, y);
  double t0 = bench_now();
  for (int c = 0; c < calls; c++) k_tiny(n, 0.5f + (float)(c & 7), 1.0f, x, y);
  double t = bench_now() - t0;
  printf("launch %d elements x %d calls: %.3f us per call\n", n, calls, t / calls * 1e6);
  printf("check %a\n", (double)y[n - 1]);
  return 0;
}
