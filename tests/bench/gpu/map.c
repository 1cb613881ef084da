/* map.c: an elementwise f32 map y[i] = a * x[i] + b over x and y of MiB
 * each (argv[1], default 512: 1 GiB of arrays), repeated (argv[2], default
 * 10) after a first run that migrates the pages; prints the best time and
 * GB/s counting bytes read plus written (2 * 4 * n per run).  argv[3]: how
 * many elements past a 16-byte boundary both arrays start (default 0; 1
 * times the kernel's element-aligned body instead of its vector body). */
#include "bench.h"

static float *placed(size_t n, int skew) {
  uintptr_t p = (uintptr_t)bench_alloc((n + 8) * 4);
  return (float *)((p + 15) & ~(uintptr_t)15) + skew;
}

__attribute__((noinline)) void k_axpb(int n, float a, float b, const float *x, float *y) {
  for (int i = 0; i < n; i++) y[i] = a * x[i] + b;
}

int main(int argc, char **argv) {
  int mib = bench_arg(argc, argv, 1, 512), reps = bench_arg(argc, argv, 2, 10);
  int n = mib * (1 << 18), skew = argc > 3 ? atoi(argv[3]) & 3 : 0;
  float *x = placed((size_t)n, skew), *y = placed((size_t)n, skew);
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
  printf("map %d MiB x 2 (+%d): first %.3f ms, best %.3f ms, %.1f GB/s\n", mib, skew,
         first * 1e3, best * 1e3, bytes / best / 1e9);
  printf("check %a\n", (double)x[n / 3]);
  return 0;
}
