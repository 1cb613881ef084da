/* ptx.h: kernel generation, kernel descriptor -> NVPTX IR -> ASCII PTX per
 * sm_XX, with the launch geometry the runtime needs. */
#ifndef TW_PTX_H
#define TW_PTX_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "diag.h"
#include "kn_desc.h"

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
} ptx_code;

/* How to launch: block = block[0..2] threads; along each axis a
 *   grid[a] = min(ceil(count[a] / per_block[a]), max_grid[a])   (at least 1)
 * where count[a] is a constant or a param's live value (clamped at 0).
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

typedef struct {
  const char *name;        /* sanitised kernel (entry) name */
  ptx_launch launch;
  unsigned ncodes;
  ptx_code *codes;         /* one per requested arch, in request order */
  /* Bytes per A/B element (1, 4) when the sm_90a code also holds the
   * packed tensor-core product (twasm_abi.h, ABI 5); else 0. */
  unsigned tc_elem_bytes;
} ptx_out;

/* Generates one PTX module per arch (NULL/0: the defaults).  name is
 * sanitised to [A-Za-z0-9_].  Output lives in arena. */
bool ptx_generate(const kn_desc *d, const char *name, const ptx_arch *archs,
                  unsigned narchs, tw_arena *arena, ptx_out *out, tw_diag *diag);

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

/* ptx_generate with options (NULL: all off).  A matmul that takes the
 * tensor cores gets, when sm_90 is among the archs, one more code after
 * the requested ones: sm_90a (specific), wgmma on the H100 generation for
 * the shapes it takes and the sm_90 kernel's body for the rest, under the
 * same launch. */
bool ptx_generate_opts(const kn_desc *d, const char *name, const ptx_arch *archs,
                       unsigned narchs, const ptx_options *opts, tw_arena *arena,
                       ptx_out *out, tw_diag *diag);

/* Whether a batched matmul is a batch of small products (m, n, k constants
 * of at most 32), which take a kernel of their own (ptx_batch.c): 8
 * products per block; otherwise a batch runs the exact kernel with the
 * products along grid z. */
bool ptx_batch_applies(const kn_matmul *m);

/* Whether the kernel for d on sm_XX runs on tensor cores (wmma). */
bool ptx_tensor_cores(const kn_desc *d, unsigned sm, const ptx_options *opts);

/* The grid for live param values (the rule of ptx_launch). */
void ptx_launch_grid(const ptx_launch *l, const int64_t *params, uint32_t grid[3]);

bool ptx_is_ascii(const char *text, size_t len);

#endif
