/* midstart.c: a map worth a launch run argv[2] times (default 1) over
 * argv[1] floats (default 4096), then a checksum.  Under TWASM_DEVICE=auto
 * TWASM_GPU_START_MS=0 the GPU's start begins at the first map, and the
 * arguments choose how far into it the program exits
 * (tests/gpu/start_exit.sh). */
#include <stdio.h>
#include <stdlib.h>

static void step(float *out, const float *in, float by, int n) {
  for (int i = 0; i < n; i++) out[i] = in[i] * by + 1.0f;
}

int main(int argc, char **argv) {
  int n = argc > 1 && atoi(argv[1]) > 0 ? atoi(argv[1]) : 4096;
  int reps = argc > 2 && atoi(argv[2]) > 0 ? atoi(argv[2]) : 1;
  float *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
  for (int i = 0; i < n; i++) a[i] = (float)(i % 97) * 0.125f;
  double sum = 0;
  for (int r = 0; r < reps; r++) {
    step(b, a, 0.5f + (float)(r & 3), n);
    sum += b[n - 1] + b[r % n];
  }
  printf("midstart %d x %d: %.3f\n", n, reps, sum);
  return 0;
}
