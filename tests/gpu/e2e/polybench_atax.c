/* polybench_atax.c: PolyBench's atax (y = A^T (A x)) as its users write
 * it: plain C, no `restrict`, f32 arrays from an allocation function,
 * run-time sizes, plain `clang -O2`.  One i loop holds two j loops, the
 * second reading tmp[i], which the first just summed: the nest is two
 * matrix-vector kernels launched in the loops' order, tmp's reads in the
 * second being what the first wrote (kernels/kn_recog_split.c,
 * kr_split_loops; twasm_rt_offload_group).  Four calls: apart (two
 * launches); y overlapping tmp (part 2 writes what part 1 writes, and
 * reads as tmp: no launch, the nest runs on the CPU); tmp in A's row just
 * past the m - 1 rows read (apart: two launches); x inside tmp (part 1's
 * output is its own input: no launch).  Every result printed bit for
 * bit.  Sizes from argv (default m 280 rows, n 300 columns). */
/* clang-flags: -O2 */
/* expect-gpu-launches: 4 */
#include "polybench.h"

#define N 320
#define M 320

/* y = A^T (A x), A of m rows and n columns. */
__attribute__((noinline)) void kernel_atax(int m, int n, float A[M][N], float x[N], float y[N], float tmp[M]) {
  int i, j;
  for (i = 0; i < n; i++) y[i] = 0;
  for (i = 0; i < m; i++) {
    tmp[i] = 0.0f;
    for (j = 0; j < n; j++) tmp[i] = tmp[i] + A[i][j] * x[j];
    for (j = 0; j < n; j++) y[j] = y[j] + A[i][j] * tmp[i];
  }
}

int main(int argc, char **argv) {
  int m = e2e_arg(argc, argv, 1, 280), n = e2e_arg(argc, argv, 2, 300);
  if (n > N || m > M || n < 8 || m < 8) return 2;
  float(*A)[N] = new_array(sizeof(float) * (M + 1) * N);
  float *x = new_array(sizeof(float) * (N + M)), *y = new_array(sizeof(float) * (N + M));
  float *tmp = new_array(sizeof(float) * M);
  fill_f32(&A[0][0], (size_t)M * N, 51);
  fill_f32(x, N, 52);
  kernel_atax(m, n, A, x, y, tmp);
  e2e_print_f32("atax_y", y, N);
  e2e_print_f32("atax_tmp", tmp, M);
  /* tmp is y shifted by 5 elements: both parts write those bytes */
  kernel_atax(m, n, A, x, y, y + 5);
  e2e_print_f32("atax_overlap_y", y, N + M);
  /* tmp is the row of A after the m - 1 rows the parts read */
  kernel_atax(m - 1, n, A, x, y, &A[m - 1][0]);
  e2e_print_f32("atax_in_a_y", y, N);
  e2e_print_f32("atax_in_a", &A[0][0], (size_t)M * N);
  /* x lies in tmp, part 1's own input */
  fill_f32(x, N + M, 53);
  kernel_atax(m, n, A, x + 3, y, x);
  e2e_print_f32("atax_in_x_y", y, N);
  e2e_print_f32("atax_in_x", x, N + M);
  return 0;
}
