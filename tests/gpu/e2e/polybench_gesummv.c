/* polybench_gesummv.c: PolyBench's gesummv (y = alpha A x + beta B x) as
 * its users write it: plain C, no `restrict`, f32 arrays from an
 * allocation function, run-time sizes, plain `clang -O2`.  One j loop
 * sums tmp[i] and y[i] (each kept in memory), then y[i] = alpha * tmp[i]
 * + beta * y[i] after it: the nest is three kernels launched in order,
 * two matrix-vector products and a map over i last that reads both
 * products' outputs and writes y over the second's (kernels/
 * kn_recog_split.c's epilogue; twasm_rt_offload_group).  Four calls:
 * apart (three launches); tmp overlapping y (inlined into main, where
 * LLVM sees the overlap and keeps another nest, which stays on the CPU);
 * y in x, which both products read (y's part refused before any launch:
 * its output overlaps its input); tmp in the row of B after the n rows
 * read (apart: three launches).  Every result printed bit for bit.  Size from
 * argv (default n 300). */
/* clang-flags: -O2 */
/* expect-gpu-launches: 6 */
#include "polybench.h"

#define N 320

/* y = alpha A x + beta B x, A and B n x n. */
__attribute__((noinline)) void kernel_gesummv(int n, float alpha, float beta, float A[N][N], float B[N][N],
                                              float tmp[N], float x[N], float y[N]) {
  int i, j;
  for (i = 0; i < n; i++) {
    tmp[i] = 0.0f;
    y[i] = 0.0f;
    for (j = 0; j < n; j++) {
      tmp[i] = A[i][j] * x[j] + tmp[i];
      y[i] = B[i][j] * x[j] + y[i];
    }
    y[i] = alpha * tmp[i] + beta * y[i];
  }
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 300);
  if (n > N || n < 8) return 2;
  float(*A)[N] = new_array(sizeof(float) * N * N), (*B)[N] = new_array(sizeof(float) * (N + 1) * N);
  float *x = new_array(sizeof(float) * 2 * N), *y = new_array(sizeof(float) * 2 * N);
  float *tmp = new_array(sizeof(float) * N);
  fill_f32(&A[0][0], (size_t)N * N, 61);
  fill_f32(&B[0][0], (size_t)N * N, 62);
  fill_f32(x, N, 63);
  kernel_gesummv(n, 1.5f, 1.2f, A, B, tmp, x, y);
  e2e_print_f32("gesummv_y", y, N);
  e2e_print_f32("gesummv_tmp", tmp, N);
  /* tmp is y shifted by 3 elements: both products write those bytes */
  kernel_gesummv(n, 1.5f, 1.2f, A, B, y + 3, x, y);
  e2e_print_f32("gesummv_overlap_y", y, 2 * N);
  /* y lies in x (from its element 2), which both products read */
  kernel_gesummv(n, 1.5f, 1.2f, A, B, tmp, x, x + 2);
  e2e_print_f32("gesummv_in_x_tmp", tmp, N);
  e2e_print_f32("gesummv_in_x", x, 2 * N);
  /* tmp is the row of B after the n rows read */
  fill_f32(x, N, 64);
  kernel_gesummv(n, 1.5f, 1.2f, A, B, &B[n][0], x, y);
  e2e_print_f32("gesummv_in_b_y", y, N);
  e2e_print_f32("gesummv_in_b", &B[0][0], (size_t)(N + 1) * N);
  return 0;
}
