/* blas_ref.c: tests/gpu/survey/textbook_blas.c (reference BLAS routines
 * as ported from Netlib's Fortran: column-major, leading dimensions,
 * alpha and beta with their early outs) built with plain `clang -O2`,
 * each routine a function of its own as in a BLAS library (noinline).
 * The j-l-i products (sgemm_nn, its long and long long copies, sgemm_nt,
 * ssyrk_un) are, inside their j loop, a matrix-vector product of column
 * j (C(:,j) += (alpha*B(l,j)) * A(:,l), in l order), launched once per
 * column; sgemv_n is one; ssyr2k_un one product over the triangle.
 * docs/PERFORMANCE.md, "Issue 19 round 9: reference BLAS".  At the
 * default size (n 256) the products make 1537 offload decisions under
 * TWASM_DEVICE=cpu TWASM_TRACE=1: 512 for sgemm_nn's two calls, 256 each
 * for sgemm_nt, ssyrk_un, ssyr2k_un and sgemm_nn_long, 1 for sgemv_n (C
 * and A, B apart: every one launches); maps come on top.  .expected: the
 * CPU run's, equal to a native gcc -O2 build's. */
/* clang-flags: -O2 */
/* expect-gpu-launches: 1537 */
#define BLAS_API __attribute__((noinline))
#include "../survey/textbook_blas.c"
