/* ptx_plan.c: the offload plan: for one kernel descriptor and the archs
 * asked for, which kernel each arch's PTX module holds (its path), with
 * which entries, under which launch, why, and what the cost model counts.
 * Every choice between kernels is made here, from the arch table and the
 * shape rules below; generation (ptx_target.c) builds what the plan says,
 * --offload-report prints it, and the kernel table carries each module's
 * path and entries to the runtime. */
#include <string.h>

#include "ptx_internal.h"

/* What an arch offers the kernels. */
enum {
  CAP_MMA = 1,   /* wmma / mma.sync with cp.async pipelines */
  CAP_WGMMA = 2, /* wgmma, bulk copies and mbarriers */
};

/* The arch table: the highest row at or below an arch applies to it; an
 * arch-specific row (sm_XXa) only to that very arch.  int8 wmma exists
 * from sm_72 and tf32 from sm_80, but the wrapping of the s32 accumulator
 * was measured on sm_90 and its sm_80 ISA, and cp.async needs sm_80:
 * sm_75 keeps the exact kernel. */
static const struct {
  unsigned sm;
  bool specific;
  unsigned caps;
} arch_table[] = {
  {75, false, 0},
  {80, false, CAP_MMA},
  {90, true, CAP_MMA | CAP_WGMMA},
};

/* The arch-specific target a tensor-core matmul gets when the plain arch
 * of the same number is asked for: sm_90a, after the requested codes. */
static const ptx_arch hopper = {90, true};

static unsigned caps_of(ptx_arch a) {
  unsigned caps = 0, best = 0;
  for (unsigned i = 0; i < sizeof arch_table / sizeof arch_table[0]; i++) {
    bool applies = arch_table[i].specific ? a.specific && a.sm == arch_table[i].sm
                                          : arch_table[i].sm <= a.sm;
    if (applies && arch_table[i].sm >= best) best = arch_table[i].sm, caps = arch_table[i].caps;
  }
  return caps;
}

/* ---- shape rules ---------------------------------------------------------- */

/* Matmuls whose sizes are constants this small fit in a fraction of one
 * wmma block tile: the exact kernel spreads them over more blocks. */
static bool tiny(const kn_matmul *m) {
  return !m->m.is_param && !m->n.is_param && !m->k.is_param &&
         m->m.value * m->n.value * m->k.value <= 64 * 64 * 64;
}

/* int8 on tensor cores is exact (s32 sums wrap like Wasm i32); f32 only
 * with --tensor-cores=tf32; f64 never (mma m8n8k4 adds four products in
 * one step, not in source order), nor i32. */
static bool tensor_type(const kn_matmul *m, bool tf32) {
  return m->type == KN_MM_I8_I32 || (m->type == KN_MM_F32 && tf32);
}

/* The packed product (ptx_tc.c): f32 comes here only with tf32 (the wmma
 * family); sums from a bias start only for int8, where adding the start
 * last is exact. */
static bool packed(const kn_matmul *m) {
  if (m->batched) return false;
  if (m->type == KN_MM_F32) return !(m->accumulate && m->has_start);
  return m->type == KN_MM_I8_I32;
}

/* Batches of small products take the batch kernel (products along grid x,
 * 8 per block); other batches the exact kernel (products along grid z).
 * Exact products with one output column or row take the matrix-vector
 * kernel: the exact kernel's 128x128 tiles would leave 127 of 128 columns
 * idle, and its loads of W uncoalesced.  Scaled products (alpha * A,
 * beta * C) take the exact kernel alone, which scales each element once
 * as the source does. */
static uint32_t family_of(const kn_desc *d, bool tf32) {
  if (d->kind == KN_MAP) return TWASM_PATH_MAP;
  if (d->kind == KN_REDUCE) return d->reduce.sequential ? TWASM_PATH_SEQ : TWASM_PATH_REDUCE;
  const kn_matmul *m = &d->matmul;
  if (kn_matmul_scaled(m) || m->tri.on || kn_matmul_row_tables(m)) return TWASM_PATH_EXACT;
  if (ptx_batch_small(m)) return TWASM_PATH_BATCH;
  if (tensor_type(m, tf32) && !tiny(m) && !m->batched) return TWASM_PATH_WMMA;
  if (ptx_matvec_takes(m)) return TWASM_PATH_MATVEC;
  return TWASM_PATH_EXACT;
}

static uint32_t path_on(uint32_t family, bool tensor, unsigned caps) {
  if (family == TWASM_PATH_BATCH) return tensor && (caps & CAP_MMA) ? TWASM_PATH_BATCH_MMA : family;
  if (family != TWASM_PATH_WMMA) return family;
  return caps & CAP_WGMMA ? TWASM_PATH_WGMMA : caps & CAP_MMA ? TWASM_PATH_WMMA : TWASM_PATH_EXACT;
}

bool ptx_path_tensor_cores(uint32_t path) {
  return path == TWASM_PATH_BATCH_MMA || path == TWASM_PATH_WMMA || path == TWASM_PATH_WGMMA;
}

const ptx_kind *ptx_path_kind(uint32_t path) {
  static const ptx_kind *const kinds[] = {
    [TWASM_PATH_MAP] = &ptx_kind_map,     [TWASM_PATH_REDUCE] = &ptx_kind_reduce,
    [TWASM_PATH_EXACT] = &ptx_kind_matmul, [TWASM_PATH_BATCH] = &ptx_kind_batch,
    [TWASM_PATH_BATCH_MMA] = &ptx_kind_batch, [TWASM_PATH_WMMA] = &ptx_kind_wmma,
    [TWASM_PATH_WGMMA] = &ptx_kind_wgmma, [TWASM_PATH_MATVEC] = &ptx_kind_matvec,
    [TWASM_PATH_SEQ] = &ptx_kind_seqsum,
  };
  return kinds[path];
}

/* ---- the plan --------------------------------------------------------------- */

static ptx_plan_code code_of(const kn_desc *d, uint32_t family, bool tensor, ptx_arch arch) {
  ptx_plan_code c = {arch, path_on(family, tensor, caps_of(arch)), TWASM_ENTRY_MAIN, ""};
  const kn_matmul *m = &d->matmul;
  if (c.path == TWASM_PATH_WGMMA && packed(m)) c.entries |= TWASM_ENTRY_PACKED;
  if (c.path == TWASM_PATH_MATVEC) c.entries |= TWASM_ENTRY_HOST_OUT;
  /* wgmma with s8 x u8 operands needs PTX ISA 8.4 */
  if (c.path == TWASM_PATH_WGMMA && m->type == KN_MM_I8_I32 && m->a_signed != m->b_signed)
    c.features = "+ptx84";
  return c;
}

/* The Hopper code: wgmma needs the arch-specific target; its main entry
 * takes mixed signs and bias starts through the wmma body, the packed
 * product takes them on wgmma (mixed s8/u8 with PTX ISA 8.4), except a
 * tf32 bias sum, which gets no sm_90a module at all. */
static bool wants_hopper(const kn_desc *d, uint32_t family, const ptx_arch *archs, unsigned narchs) {
  bool asked = false;
  for (unsigned i = 0; i < narchs; i++) asked |= archs[i].sm == hopper.sm && !archs[i].specific;
  const kn_matmul *m = &d->matmul;
  return family == TWASM_PATH_WMMA && asked && (!(m->accumulate && m->has_start) || packed(m));
}

/* Why a matmul's codes are what they are, for the report. */
static const char *reason_of(const kn_desc *d, const ptx_plan *p, bool tf32) {
  if (d->kind != KN_MATMUL) return NULL;
  const kn_matmul *m = &d->matmul;
  if (kn_matmul_row_tables(m))
    return "rows through a table of row pointers (`float **`): the exact kernel, each row's start read "
           "from the table, the sums in k order";
  if (m->second.on)
    return m->tri.on ? "two products summed per term (A B^T + B A^T) over a triangle (j <= i): the exact kernel "
                       "adds each term's two products, then the sum, in the source's order"
                     : "two products summed per term (A B^T + B A^T): the exact kernel adds each term's two "
                       "products, then the sum, in the source's order";
  if (m->tri.on && m->tri.upper && m->tri.diag)
    return "a product over a strict upper triangle (j > i), each output also stored at its transposed element "
           "(`C[j][i] = C[i][j]`) and the diagonal set to a constant (`C[i][i] = 1.0`), as the source does; the "
           "exact kernel";
  if (m->tri.on && m->tri.upper)
    return m->tri.mirror ? "a product over an upper triangle (j >= i), each output also stored at its transposed "
                           "element (`C[j][i] = C[i][j]`), as the source does; the exact kernel"
                         : "a product over an upper triangle (j >= i), its outputs stored alone; the exact kernel";
  if (m->tri.on)
    return kn_matmul_scaled(m) ? "a product over a triangle (j <= i), its outputs stored alone; scaled operands "
                                 "or start (alpha * A, beta * C) per element as the source does"
                               : "a product over a triangle (j <= i), its outputs stored alone";
  if (m->act.on && m->act2.on)
    return "each sum compared with a constant and selected twice before its store (`fminf(fmaxf(s, 0), 6)`, a "
           "ReLU6; `s < lo ? lo : s > hi ? hi : s`, a clamp), after its operation (`s + bias[i]`) where there is "
           "one, as the source does after the k loop: the exact kernel, the same compares and selects in order";
  if (m->act.on && m->act.mul)
    return "each sum compared with a constant and selected before its store, or multiplied by a constant (`y[i] "
           "= s > 0 ? s : 0.01f * s`, a leaky ReLU), after its operation (`s + bias[i]`) where there is one, as "
           "the source does after the k loop: the exact kernel, the same compare, select and multiply";
  if (m->act.on && m->act.nan_add)
    return "each sum compared with a constant and selected before its store (Wasm's `f32.max(s, k)`, `f32.min`: a NaN "
           "sum stores s + k), after its operation (`s + bias[i]`) where there is one, as the source does after the "
           "k loop: the exact kernel, the same compare, select and add";
  if (m->act.on)
    return "each sum compared with a constant and selected before its store (`y[i] = s > 0 ? s : 0`, a ReLU, "
           "fmaxf(s, 0)), after its operation (`s + bias[i]`) where there is one, as the source does after the k "
           "loop: the exact kernel, the same compare and select";
  if (m->blend.on)
    return m->blend.guarded
               ? "an element at each sum's own index added after the sum's operation (`alpha*sum`), maybe scaled, "
                 "unless a test before the loop says otherwise (`C = beta == 0 ? alpha*sum : alpha*sum + beta*C`), as "
                 "the source does after the k loop: the exact kernel, one rounding per operation"
               : "an element at each sum's own index added after the sum's operation where there is one, maybe "
                 "scaled (`C = alpha*sum + beta*C`, `y += alpha*sum`, `y = sum + b*c`), as the source does after the "
                 "k loop: the exact kernel, one rounding per operation";
  if (m->post.on && m->post.elem)
    return "each sum combined with an element at its own index before its store (`r[i] = b[i] - sum`, `y[i] = "
           "sum + bias[i]`), as the source does after the k loop: the exact kernel, one rounding per operation";
  if (m->post.on && (m->post.add || m->post.sub))
    return "each sum offset by a value before its store (`y[i] = sum + bias`, `f - sum`), as the source does after "
           "the k loop: the exact kernel, one rounding per operation";
  if (m->post.on)
    return m->post.div ? "each sum divided before its store (`C[i][j] = sum / d`), as the source does after the "
                         "k loop: the exact kernel, one rounding per operation"
                       : "each sum scaled before its store (`C[i][j] = sum * f`), as the source does after the "
                         "k loop: the exact kernel, one rounding per operation";
  if (kn_matmul_scaled(m))
    return "scaled operands or start (alpha * A, beta * C) take the exact kernel, scaled per element as "
           "the source does";
  if (p->family == TWASM_PATH_MATVEC)
    return "one output column or row: a thread per output sums in k order, the matrix staged through "
           "shared memory";
  if (m->batched && p->family != TWASM_PATH_BATCH && tensor_type(m, tf32))
    return "batches of products larger than 32 take no tensor cores";
  switch (m->type) {
  case KN_MM_I8_I32:
    return p->tensor_cores ? "int8 with s32 sums that wrap like Wasm i32: exact"
                           : "too small for tensor cores, or no sm_80+ arch";
  case KN_MM_F32:
    if (p->tensor_cores) return NULL;
    return tf32 ? "too small for tensor cores, or no sm_80+ arch"
                : "f32 takes tensor cores only with --tensor-cores=tf32";
  case KN_MM_F64: return "f64 mma adds four products at once: not source order";
  default: return "no i32 tensor cores";
  }
}

/* A map's or reduction's operations per iteration: its nodes, a call
 * counted as its callee's work (twasm_abi.h). */
static unsigned expr_ops(const kn_desc *d) {
  unsigned ops = 0;
  for (unsigned i = 0; i < d->nnodes; i++) ops += d->nodes[i].op == KN_E_CALL ? TWASM_COST_CALL_OPS : 1;
  return ops;
}

/* The cost model's counts (twasm_abi.h). */
static void count_work(const kn_desc *d, ptx_plan *p) {
  for (unsigned i = 0; i < TWASM_KERNEL_WORK_DIMS; i++) p->work[i] = (kn_size){false, 1};
  p->batch = (kn_size){false, 1};
  p->nwork = 1;
  if (d->kind == KN_MAP) {
    p->nwork = d->map.ndims;
    for (unsigned i = 0; i < p->nwork; i++) p->work[i] = d->map.trip[i];
    p->ops_per_iter = expr_ops(d);
  } else if (d->kind == KN_REDUCE) {
    p->work[0] = d->reduce.trip;
    p->ops_per_iter = expr_ops(d) + TWASM_COST_COMBINE_OPS;
  } else {
    p->batch = kn_mm_batch(&d->matmul);
    p->nwork = 4;
    p->work[0] = p->batch, p->work[1] = d->matmul.m, p->work[2] = d->matmul.n, p->work[3] = d->matmul.k;
    p->ops_per_iter = TWASM_COST_MATMUL_OPS;
  }
}

bool ptx_plan_make(const kn_desc *d, const ptx_arch *archs, unsigned narchs, const ptx_options *opts,
                   ptx_plan *p, tw_diag *diag) {
  if (!archs || !narchs) {
    archs = ptx_default_archs;
    narchs = ptx_ndefault_archs;
  }
  if ((unsigned)d->kind > KN_MATMUL || d->nparams > KN_MAX_PARAMS)
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "kernel descriptor: bad kind or too many params");
  if (narchs >= PTX_MAX_CODES) return tw_fail(diag, TW_DIAG_NO_OFFSET, "too many GPU archs");
  bool tf32 = opts && opts->tf32;
  memset(p, 0, sizeof *p);
  p->family = family_of(d, tf32);
  const ptx_kind *kind = ptx_path_kind(p->family);
  if (!kind->check(d, diag)) return false;
  kind->launch(d, &p->launch);
  bool tensor = d->kind == KN_MATMUL && tensor_type(&d->matmul, tf32);
  p->tensor_family = p->family == TWASM_PATH_WMMA || (p->family == TWASM_PATH_BATCH && tensor);
  for (unsigned i = 0; i < narchs; i++) {
    ptx_plan_code c = code_of(d, p->family, tensor, archs[i]);
    p->tensor_cores |= !c.arch.specific && ptx_path_tensor_cores(c.path);
    p->codes[p->ncodes++] = c;
  }
  if (wants_hopper(d, p->family, archs, narchs)) {
    ptx_plan_code c = code_of(d, p->family, tensor, hopper);
    if (c.entries & TWASM_ENTRY_PACKED) p->tc_elem_bytes = d->matmul.type == KN_MM_F32 ? 4 : 1;
    p->codes[p->ncodes++] = c;
  }
  p->reason = reason_of(d, p, tf32);
  count_work(d, p);
  return true;
}
