/* ptx.h: kernel generation, kernel descriptor -> NVPTX IR -> ASCII PTX per
 * sm_XX, with the launch geometry the runtime needs. */
#ifndef TW_PTX_H
#define TW_PTX_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "diag.h"
#include "kn_desc.h"
#include "twasm_abi.h"

typedef struct {
  unsigned sm;             /* 75, 80, 90, ... */
  bool specific;           /* sm_XXa: runs on compute capability XX exactly */
} ptx_arch;

/* sm_75, sm_80, sm_90. */
extern const ptx_arch ptx_default_archs[];
extern const unsigned ptx_ndefault_archs;

typedef struct {
  unsigned sm;
  bool specific;           /* sm_XXa (see ptx_generate_opts) */
  unsigned ptx_isa;        /* from the `.version` line: 63, 70, 78, ... */
  const char *text;        /* NUL-terminated ASCII PTX */
  double seconds;          /* wall time of its generation (twasmc -v) */
} ptx_code;

/* How to launch: block = block[0..2] threads; along each axis a
 *   grid[a] = min(ceil(count[a] / per_block[a]), max_grid[a])   (at least 1)
 * where count[a] is a constant or a param's live value (clamped at 0):
 * twasm_grid_axis of twasm_abi.h, the runtime's rule too.
 * Every kernel strides over its index space, so any grid is correct; this
 * one is the efficient choice.  Kernels use only static shared memory. */
typedef struct {
  uint32_t block[3];
  kn_size count[3];
  uint32_t per_block[3];
  uint32_t max_grid[3];
  bool result_arg;         /* reduce: a result-cell pointer follows params */
  unsigned result_bytes;
} ptx_launch;

/* Choices that trade exactness for speed, all off by default.  tf32
 * (--tensor-cores=tf32): f32 matmuls on sm_80+ run on tensor cores with
 * inputs rounded to tf32 (cvt.rna, 10 mantissa bits) and f32 accumulation
 * in an unspecified order, so per element
 *   |C - C_exact| <= (2^-10 + K * 2^-24) * sum_k |A[i][k] * B[k][j]|
 * (two input roundings of 2^-11 each, then K f32 additions); below sm_80
 * the exact kernel runs.  i8 matmuls use tensor cores without a flag (sm_80
 * and up): they are exact.  f64 has no such option: mma m8n8k4 adds four
 * products inside one instruction, not in source order, so it is not
 * bit-identical to separate mul/add. */
typedef struct {
  bool tf32;
} ptx_options;

/* ---- the offload plan (ptx_plan.c) -------------------------------------
 * Every choice between kernels is made once, here, per descriptor and per
 * arch: generation builds what the plan says, --offload-report prints it,
 * the kernel table carries each module's path and entries to the runtime. */

#define PTX_MAX_CODES 8

/* One PTX module of the plan. */
typedef struct {
  ptx_arch arch;
  uint32_t path;           /* TWASM_PATH_* */
  uint32_t entries;        /* TWASM_ENTRY_*: MAIN, with PACKED NAME_pack and NAME_tc */
  const char *features;    /* LLVM target features: "+ptx84" where the ISA must be raised */
} ptx_plan_code;

typedef struct {
  /* The kernel family: MAP, REDUCE, EXACT, BATCH (small products; its
   * codes BATCH or BATCH_MMA) or WMMA (its codes EXACT, WMMA, WGMMA).
   * Every code runs under the family's launch. */
  uint32_t family;
  bool tensor_family;      /* the family takes tensor cores where an arch has them */
  bool tensor_cores;       /* and some requested (not arch-specific) arch has them */
  /* Why the matmul's codes are what they are (NULL: nothing to say), in
   * words for the report: the exact kernel's reason, or the tensor
   * cores' guarantee. */
  const char *reason;
  ptx_launch launch;
  /* Bytes per A/B element (1, 4) of the packed tensor-core product
   * (twasm_abi.h, ABI 5) that the codes with TWASM_ENTRY_PACKED hold; 0. */
  unsigned tc_elem_bytes;
  /* The cost model's counts (twasm_abi.h): the nest's body runs
   * work[0] * ... * work[nwork-1] times, ops_per_iter operations each;
   * batch: products of a batched matmul, else 1. */
  unsigned nwork, ops_per_iter;
  kn_size work[TWASM_KERNEL_WORK_DIMS];
  kn_size batch;
  unsigned ncodes;
  ptx_plan_code codes[PTX_MAX_CODES];
} ptx_plan;

/* The plan for d on archs (NULL/0: the defaults), one code per arch in
 * request order, and for a tensor-core matmul with sm_90 among them an
 * sm_90a code after them.  False (diag says why) for a descriptor no
 * kernel takes. */
bool ptx_plan_make(const kn_desc *d, const ptx_arch *archs, unsigned narchs,
                   const ptx_options *opts, ptx_plan *p, tw_diag *diag);
/* Whether a path runs on tensor cores (WMMA, BATCH_MMA, WGMMA). */
bool ptx_path_tensor_cores(uint32_t path);

typedef struct {
  const char *name;        /* sanitised kernel (entry) name */
  ptx_plan plan;
  unsigned ncodes;
  ptx_code *codes;         /* codes[i] built as plan.codes[i] says */
} ptx_out;

/* Generates one PTX module per arch (NULL/0: the defaults).  name is
 * sanitised to [A-Za-z0-9_].  Output lives in arena. */
bool ptx_generate(const kn_desc *d, const char *name, const ptx_arch *archs,
                  unsigned narchs, tw_arena *arena, ptx_out *out, tw_diag *diag);

/* ptx_generate with options (NULL: all off): the plan (ptx_plan_make),
 * then each of its codes built. */
bool ptx_generate_opts(const kn_desc *d, const char *name, const ptx_arch *archs,
                       unsigned narchs, const ptx_options *opts, tw_arena *arena,
                       ptx_out *out, tw_diag *diag);

/* The grid for live param values (the rule of ptx_launch). */
void ptx_launch_grid(const ptx_launch *l, const int64_t *params, uint32_t grid[3]);

bool ptx_is_ascii(const char *text, size_t len);

#endif
