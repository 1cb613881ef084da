/* kn_recog.h: tensor-loop recognisers, optimised host IR loop nests -> kernel
 * descriptors (maps, reductions, matmuls) or a rejection reason. */
#ifndef TW_KN_RECOG_H
#define TW_KN_RECOG_H

#include "ir.h"
#include "kn_desc.h"

/* Live values a KN_BIND_VALUE param may sum besides its own (kn_bind's
 * more). */
#define KN_BIND_MORE 3

/* What the host passes for descriptor param i at launch time. */
typedef enum {
  KN_BIND_VALUE, /* the live value (an argument or an instruction dominating
                  * the preheader, or a struct field the nest loads at an
                  * address computed before it, or integer arithmetic on
                  * such fields, which the host computes again before the
                  * launch: kn_recog_affine.c kr_field_load, kr_host_value,
                  * off_version.c host_value); i32 values are zero-extended;
                  * with coeff and more, a sum of such values */
  KN_BIND_TRIP   /* ir_trip_eval(&loop->trip, live start, live bound) * scale */
} kn_bind_kind;

typedef struct {
  kn_bind_kind kind;
  LLVMValueRef value;       /* KN_BIND_VALUE */
  int64_t addend;           /* KN_BIND_VALUE: passed as value + addend (i64) */
  const ir_trip *trip;      /* KN_BIND_TRIP: start and bound are live values
                             * (as KN_BIND_VALUE's, fields included) */
  unsigned scale;           /* KN_BIND_TRIP: copies per unrolled iteration */
  bool top_tested;          /* KN_BIND_TRIP: the rotated loop sits behind a guard
                             * testing its start: count the iterations of the
                             * top-tested loop (start itself tested, 0 when it fails) */
  LLVMValueRef guard;       /* KN_BIND_TRIP: an i1 live value; the count is 0
                             * unless it equals guard_enters (the loop sits
                             * behind it) */
  bool guard_enters;
  /* KN_BIND_VALUE: value times coeff (0: once), plus more[i] times
   * more_coeff[i] while more[i] is set: a matrix's offset made of two or
   * more live values (`C + 4*j*ldc`, a column of C inside the loop over
   * j around the nest), each zero-extended as value is, summed in i64 as
   * the address ranges' param terms are */
  int64_t coeff;
  LLVMValueRef more[KN_BIND_MORE];
  int64_t more_coeff[KN_BIND_MORE];
} kn_bind;

/* One accessed byte range: every address
 *   addr (c0 + param terms, its iv_coeff ignored) + sum_d coeff[d] * x_d,
 *   0 <= x_d < extent[d], accessing `size` bytes.
 * Affine forms are exact modulo 2^32 (Wasm address arithmetic wraps): the
 * runtime must check that the extremes (at the corners) lie in
 * [0, memory size - size], which also proves that nothing wrapped. */
#define KN_RANGE_DIMS 4
typedef struct {
  kn_addr addr;
  int64_t coeff[KN_RANGE_DIMS];      /* per x_d: coeff[d] + pcoeff[d] * param(pindex[d]) */
  int64_t pcoeff[KN_RANGE_DIMS];     /* 0: none */
  unsigned pindex[KN_RANGE_DIMS];
  kn_size extent[KN_RANGE_DIMS];
  unsigned ndims;
  unsigned size;
  bool is_write;
  /* A read of a later part of a nest of several parts of exactly what an
   * earlier part stores on the same outer iteration (kn_recog_split.c):
   * the parts then run in order, and the runtime lets this range be that
   * part's written range (twasm_kernel_range_abi.forwarded). */
  bool forwarded;
  /* Rows through a table of row pointers (twasm_kernel_range_abi's
   * table_dim): 0 none, d + 1 where x_d picks the row whose start is the
   * i32 at byte offset `table + 4 x_d` (coeff[d], pcoeff[d] then 0). */
  unsigned table_dim;
  kn_size table;
} kn_range;

/* A guard exit (kn_recog_guard.c): a branch of the nest to a block that
 * never returns (a call to a Wasm function, then `unreachable`: C's
 * __assert_fail, AssemblyScript's abort, Rust's panic_bounds_check),
 * taken where
 *   f FIRE bound,  f = c + sum_i coeff[i] * [t_dim[i]] * [param[i]]
 * holds, the compare in `bits`-wide integers (f and bound read as signed
 * for a signed FIRE, unsigned otherwise), t_d the counter of the nest's
 * d-th chain loop (0 <= t_d < trip[d]), param[i] and bound live values
 * the host computes before the launch (kr_host_value; NULL param: none;
 * dim -1: none).  The host checks before a launch that f's extremes over
 * the box, computed exactly in i128 with each param zero-extended, lie in
 * one window where the compare reads them unchanged and that no point
 * fires (off_guard.c); if not, the nest runs on the CPU and aborts where
 * the Wasm code does. */
#define KN_GUARD_TERMS 8
#define KN_GUARD_DIMS 4
typedef struct {
  int64_t c;
  int nterms;
  int64_t coeff[KN_GUARD_TERMS];
  int dim[KN_GUARD_TERMS];
  LLVMValueRef param[KN_GUARD_TERMS];
  kn_size trip[KN_GUARD_DIMS];   /* of each chain loop, constants or param indices */
  int ndims;
  LLVMValueRef bound;
  kn_cmp fire;                   /* KN_CMP_EQ .. KN_CMP_UGE */
  unsigned bits;                 /* 32 */
} kn_guard;

typedef struct kn_recog_nest {
  const ir_loop *nest;      /* the outermost loop */
  const ir_cfg *cfg;        /* numbers nest's blocks */
  LLVMBasicBlockRef preheader; /* NULL when the loop has none */
  LLVMBasicBlockRef *exits; /* blocks outside the nest entered from it, */
  int nexits;               /* trap blocks left out */
  bool ok;
  const char *reason;       /* when !ok: why, in words */
  kn_desc desc;             /* when ok */
  kn_bind binds[KN_MAX_PARAMS];
  kn_range *ranges;
  int nranges;
  /* Writes and reads of different bases: the runtime must check that the
   * written range overlaps no read range (else run the CPU loop). */
  bool check_overlap;
  /* KN_REDUCE: the accumulator's value leaving the loop (its latch value),
   * which the host replaces with the kernel's result. */
  LLVMValueRef result;
  /* A nest that computes two or more outputs (bicg's s = A^T r and q = A p
   * in one j loop, kn_recog_split.c): desc is its first part's kernel,
   * parts[0..nparts) the others, each with its own params, ranges and
   * overlap check.  The host launches them one after the other, all
   * checked first, and only when no part writes bytes another part reads
   * or writes (twasm_rt_offload_group); else the nest runs on the CPU as
   * compiled.  Never a reduction (result NULL). */
  struct kn_recog_nest *parts;
  int nparts;
  /* Guard exits, checked by the host before a launch (kn_guard); they
   * are not in exits. */
  kn_guard *guards;
  int nguards;
  /* The pure Wasm functions desc's KN_E_CALL nodes call (their LLVM
   * functions here; kn_recog_call.c), each once. */
  LLVMValueRef *callees;
  int ncallees;
} kn_recog_nest;

typedef struct {
  bool fp_reassociate;      /* allow float add reductions */
  /* each loop of a vector region at the top of a function its own nest,
   * as before kn_recog_top.c (tests of kn_lanes.c's reading of the
   * vector loop alone) */
  bool loops_alone;
} kn_recog_opts;

typedef struct {
  kn_recog_nest *nests;
  int nnests;
} kn_recog_result;

/* One entry per outermost loop nest of fn, in block order.  False only when
 * fn has no body.  Everything lives in arena. */
bool kn_recognise(LLVMValueRef fn, kn_recog_result *out, tw_arena *arena);
bool kn_recognise_opts(LLVMValueRef fn, const kn_recog_opts *opts, kn_recog_result *out,
                       tw_arena *arena);

#endif
