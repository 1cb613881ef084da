/* map.c: an elementwise f32 map y[i] = a * x[i] + b over x and y of MiB
 * each (argv[1], default 512: 1 GiB of arrays), repeated (argv[2], default
 * 10) after a first run that migrates the pages; prints the best time and
 * GB/s counting bytes read plus written (2 * 4 * n per run). */
#include "bench.h"

__attribute__((noinline)) void k_axpb(int n, float a, float b, const float *x, float *y) {
  for (int i = 0; i < n; i++) y[i] = a * x[i] + b;
}

int main(int argc, char **argv) {
  int mib = bench_arg(argc, argv, 1, 512), reps = bench_arg(argc, argv, 2, 10);
  int n = mib * (1 << 18);
  float *x = bench_alloc((size_t)n * 4), *y = bench_alloc((size_t)n * 4);
  uint32_t s = 1;
  for (int i = 0; i < n; i++) x[i] = bench_unit(&s);
  double t0 = bench_now();
  k_axpb(n, 1.0001f, 0.5f, x, y);
  double first = bench_now() - t0, best = 1e30;
  for (int r = 0; r < reps; r++) {
    t0 = bench_now();
    k_axpb(n, 1.0001f, 0.5f + (float)r, y, x); /* ping-pong: x and y both stay live */
    double t = bench_now() - t0;
    if (t < best) best = t;
    float *tmp = x;
    x = y;
    y = tmp;
  }
  double bytes = 2.0 * 4.0 * n;
  printf("map %d MiB x 2: first %.3f ms, best %.3f ms, %.1f GB/s\n", mib, first * 1e3, best * 1e3,
         bytes / best / 1e9);
  printf("check %a\n", (double)x[n / 3]);
  return 0;
}
