// copy_bw.cu: device-to-device copy bandwidth for the map benchmark's
// ceiling: cudaMemcpy of MiB (argv[1], default 1024) between two device
// buffers, best of 10 after a warm-up, GB/s counting bytes read plus
// written (2 x size), as map.c counts them.  Built on the GPU machine:
//   nvcc -O2 -o copy_bw tests/bench/gpu/copy_bw.cu
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      printf("%s: %s\n", #x, cudaGetErrorName(e_));                           \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

int main(int argc, char **argv) {
  size_t mib = argc > 1 ? (size_t)atoi(argv[1]) : 1024;
  size_t bytes = mib << 20;
  void *a, *b;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  CK(cudaMemset(a, 1, bytes));
  CK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
  CK(cudaDeviceSynchronize());
  double best = 1e30;
  for (int r = 0; r < 10; r++) {
    double t0 = now_s();
    CK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
    CK(cudaDeviceSynchronize());
    double t = now_s() - t0;
    if (t < best) best = t;
  }
  printf("copy_bw %zu MiB: best %.3f ms, %.1f GB/s\n", mib, best * 1e3, 2.0 * bytes / best / 1e9);
  return 0;
}
