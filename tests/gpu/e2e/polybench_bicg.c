/* polybench_bicg.c: PolyBench's bicg (s = A^T r and q = A p, both in one j
 * loop) as its users write it: plain C, no `restrict`, arrays from an
 * allocation function, run-time sizes, plain `clang -O2`.  The nest is
 * offloaded as two matrix-vector kernels launched one after the other,
 * all checked before the first (kernels/kn_recog_split.c,
 * twasm_rt_offload_group).  Three calls: s and q apart (two launches);
 * q inside s, where part 2 writes what part 1 writes (no launch: the
 * nest runs on the CPU, intact); s inside r, an input of its own part
 * (no launch).  Every result printed bit for bit.  Sizes from argv
 * (default n 300, m 280). */
/* clang-flags: -O2 */
/* expect-gpu-launches: 2 */
#include "polybench.h"

#define N 320
#define M 320

__attribute__((noinline)) void kernel_bicg(int m, int n, double A[N][M], double s[M], double q[N],
                                           double p[M], double r[N]) {
  int i, j;
  for (i = 0; i < m; i++) s[i] = 0;
  for (i = 0; i < n; i++) {
    q[i] = 0.0;
    for (j = 0; j < m; j++) {
      s[j] = s[j] + r[i] * A[i][j];
      q[i] = q[i] + A[i][j] * p[j];
    }
  }
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 300), m = e2e_arg(argc, argv, 2, 280);
  if (n > N || m > M || n < 8 || m < 8) return 2;
  double(*A)[M] = new_array(sizeof(double) * N * M);
  double *s = new_array(sizeof(double) * (M + N)), *q = new_array(sizeof(double) * N);
  double *p = new_array(sizeof(double) * M), *r = new_array(sizeof(double) * (N + M));
  fill_f64(&A[0][0], (size_t)N * M, 41);
  fill_f64(p, M, 42);
  fill_f64(r, N + M, 43);
  kernel_bicg(m, n, A, s, q, p, r);
  e2e_print_f64("bicg_s", s, M);
  e2e_print_f64("bicg_q", q, N);
  /* q is s shifted by 3 elements: both parts write those bytes */
  kernel_bicg(m, n, A, s, s + 3, p, r);
  e2e_print_f64("bicg_overlap_s", s, M + N);
  /* s lies inside r, which its own part reads */
  fill_f64(r, N + M, 44);
  kernel_bicg(m, n, A, r + 5, q, p, r);
  e2e_print_f64("bicg_in_r", r, N + M);
  e2e_print_f64("bicg_in_r_q", q, N);
  return 0;
}
