/* blas_ref.c: tests/gpu/survey/textbook_blas.c (reference BLAS routines
 * as ported from Netlib's Fortran: column-major, leading dimensions,
 * alpha and beta with their early outs) built with plain `clang -O2`,
 * each routine a function of its own as in a BLAS library (noinline).
 * The j-l-i products (sgemm_nn, its long and long long copies, sgemm_nt,
 * ssyrk_un) are, inside their j loop, a matrix-vector product of column
 * j (C(:,j) += (alpha*B(l,j)) * A(:,l), in l order), launched once per
 * column; sgemv_n is one; ssyr2k_un one product over the triangle.
 * The dot-product forms store `alpha*temp + beta*C` (kn_mm_blend, issue
 * 19 round 10): sgemm_tn one batch of products over the columns, its
 * `beta == 0` test a param; sgemv_t (`y += alpha*temp`) and sgemv_t_long
 * one product each; ssyrk_lt a product per column j of its i >= j rows.
 * docs/PERFORMANCE.md, "Issue 19 round 9: reference BLAS" and "Issue 19
 * round 10: reference BLAS epilogues".  At the default size (n 256) the
 * products make 1796 offload decisions under TWASM_DEVICE=cpu
 * TWASM_TRACE=1: 512 for sgemm_nn's two calls, 256 each for sgemm_nt,
 * ssyrk_un, ssyr2k_un, sgemm_nn_long and ssyrk_lt, 1 each for sgemv_n,
 * sgemm_tn, sgemv_t and sgemv_t_long (C and A, B apart: every one
 * launches); maps come on top.  .expected: the CPU run's, equal to a
 * native gcc -O2 build's. */
/* clang-flags: -O2 */
/* expect-gpu-launches: 1796 */
#define BLAS_API __attribute__((noinline))
#include "../survey/textbook_blas.c"
