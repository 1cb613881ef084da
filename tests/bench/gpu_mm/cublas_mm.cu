// cublas_mm.cu: cuBLAS reference timings for the wmma kernels: int8 GEMM
// (cublasGemmEx, CUDA_R_8I -> CUDA_R_32I), tf32 GEMM and plain f32 GEMM
// (CUBLAS_COMPUTE_32F, default math mode: no tensor cores) at N (default
// 4096), best of 10 after a warm-up, wall clock around cudaDeviceSynchronize
// as the wmma test times its kernels.  Built on the GPU machine:
//   nvcc -O2 -o cublas_mm tests/bench/gpu_mm/cublas_mm.cu -lcublas
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

#define CK(x) do { int e_ = (int)(x); if (e_) { printf("%s: error %d\n", #x, e_); exit(1); } } while (0)

static double best_of(cublasHandle_t h, int n, const void *a, const void *b, void *c,
                      cudaDataType ab, cudaDataType cd, cublasComputeType_t ct,
                      const void *alpha, const void *beta) {
  double best = 1e30;
  for (int r = 0; r < 11; r++) {
    CK(cudaDeviceSynchronize());
    double t0 = now_s();
    CK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, alpha, a, ab, n, b, ab, n, beta, c, cd,
                    n, ct, CUBLAS_GEMM_DEFAULT));
    CK(cudaDeviceSynchronize());
    double t = now_s() - t0;
    if (r && t < best) best = t;
  }
  return best;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4096;
  size_t nn = (size_t)n * n;
  cublasHandle_t h;
  CK(cublasCreate(&h));
  void *a, *b, *c;
  CK(cudaMalloc(&a, nn * 4));
  CK(cudaMalloc(&b, nn * 4));
  CK(cudaMalloc(&c, nn * 4));
  CK(cudaMemset(a, 1, nn * 4));
  CK(cudaMemset(b, 1, nn * 4));
  double ops = 2.0 * n * n * (double)n;
  int ia = 1, ib = 0;
  double t = best_of(h, n, a, b, c, CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, &ia, &ib);
  printf("cublas int8 %d^3: %.3f ms, %.1f TOPS\n", n, t * 1e3, ops / t / 1e12);
  float fa = 1, fb = 0;
  CK(cudaMemset(a, 0, nn * 4));
  CK(cudaMemset(b, 0, nn * 4));
  t = best_of(h, n, a, b, c, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, &fa, &fb);
  printf("cublas tf32 %d^3: %.3f ms, %.1f TFLOP/s\n", n, t * 1e3, ops / t / 1e12);
  t = best_of(h, n, a, b, c, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, &fa, &fb);
  printf("cublas f32 %d^3: %.3f ms, %.1f TFLOP/s\n", n, t * 1e3, ops / t / 1e12);
  return 0;
}
