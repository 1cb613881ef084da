/* ptx_internal.h: the kernel builder's state and IR helpers shared by the
 * ptx_*.c files (one kernel kind per file). */
#ifndef TW_PTX_INTERNAL_H
#define TW_PTX_INTERNAL_H

#include <llvm-c/Core.h>

#include "ptx.h"

#define PTX_ADDRSPACE_GLOBAL 1
#define PTX_ADDRSPACE_SHARED 3
#define PTX_KERNEL_CALLCONV 71   /* LLVMPTXKernelCallConv */

typedef struct {
  const kn_desc *d;
  tw_diag *diag;
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  LLVMValueRef fn;
  LLVMBasicBlockRef entry;       /* allocas go here */
  LLVMValueRef mem;              /* ptr addrspace(1): linear memory base */
  LLVMValueRef out_base;         /* the outputs' base (TWASM_ENTRY_HOST_OUT), else mem */
  LLVMValueRef params[KN_MAX_PARAMS];  /* i64 */
  LLVMValueRef result;           /* reduce: ptr addrspace(1) result cell */
  LLVMTypeRef i1, i8, i16, i32, i64, f32, f64, gptr, sptr;
  uint32_t path;                 /* the plan's TWASM_PATH_* for this module */
  unsigned sm;                   /* the arch this module is for (sm_XX: XX) */
  LLVMValueRef shared_pool;      /* set: the wmma body takes its tiles from it */
  /* Set by ptx_map.c around one copy of a map's body: every access is
   * aligned to its element size (checked at run time), and preset[node],
   * when not NULL, is the node's value already built (a lane of a vector
   * load). */
  bool natural_align;
  const LLVMValueRef *preset;
} ptx_gen;

/* A counted loop `for (iv = start; iv < end; iv += step)` (signed i64). */
typedef struct {
  LLVMValueRef var, iv, end, step;
  LLVMBasicBlockRef cond, exit;
} ptx_loop;

/* One kernel kind: validates the descriptor, builds the kernel body into
 * g->fn (entry block positioned), and says how to launch it. */
typedef struct {
  bool (*check)(const kn_desc *d, tw_diag *diag);
  bool (*build)(ptx_gen *g);
  void (*launch)(const kn_desc *d, ptx_launch *l);
  bool result_arg;
} ptx_kind;

extern const ptx_kind ptx_kind_map, ptx_kind_reduce, ptx_kind_matmul, ptx_kind_wmma, ptx_kind_batch;
/* ptx_matvec.c: exact products with one output column or row. */
extern const ptx_kind ptx_kind_matvec;
/* ptx_seqsum.c: an exact float sum in source order, one warp adding the
 * terms in order (kn_reduce.sequential, TWASM_PATH_SEQ). */
extern const ptx_kind ptx_kind_seqsum;
/* ptx_wgmma.c: the sm_90a kernel of a tensor-core matmul (wgmma, with the
 * wmma body inside for the shapes it does not take); launched as wmma. */
extern const ptx_kind ptx_kind_wgmma;

/* ptx_epilogue.c: the operands of a finished sum's epilogue, loaded by
 * the caller: kn_mm_post's factor or element (post), kn_mm_blend's
 * element, factor (with scaled) and i1 guard (with guarded). */
typedef struct {
  LLVMValueRef post, elem, factor, guard;
} ptx_mm_operands;
/* sum through kn_mm_post's operation, then kn_mm_blend's (sum itself
 * without them), each one rounding in the source's operand order. */
LLVMValueRef ptx_mm_combine(LLVMBuilderRef b, const kn_matmul *m, LLVMValueRef sum, const ptx_mm_operands *o);

/* ptx_plan.c: the kind that builds a path (TWASM_PATH_*). */
const ptx_kind *ptx_path_kind(uint32_t path);
/* ptx_batch.c: what the batch kernel takes (the plan asks): a batched
 * matmul whose m, n and k are constants of at most PTX_BATCH_MAX_SIDE. */
#define PTX_BATCH_MAX_SIDE 32
bool ptx_batch_small(const kn_matmul *m);
/* ptx_matvec.c: what the matrix-vector kernel takes: a product (not
 * batched) with n or m the constant 1, of f32, f64 or i32. */
bool ptx_matvec_takes(const kn_matmul *m);

/* ptx_hopper.c, for ptx_wgmma.c and ptx_tc.c: inline PTX (with side
 * effects: kept in order), an sm_90a matrix descriptor of a no-swizzle K-major tile at
 * shared `base` + byte_off (core matrices `lead` bytes apart along k,
 * `stride` bytes apart along m/n), one wgmma.mma_async m64n128 of the
 * matmul's types adding into the PTX_WGMMA_REGS accumulators acc (a
 * struct value of acc_ty), and wgmma.wait_group with acc passed through,
 * so nothing reads it before. */
#define PTX_WGMMA_REGS 64
LLVMValueRef ptx_asm(ptx_gen *g, LLVMTypeRef ret, const char *text, const char *cons, LLVMValueRef *args,
                     unsigned n, bool side_effects);
void ptx_asm_void(ptx_gen *g, const char *text);
LLVMValueRef ptx_wgmma_desc(ptx_gen *g, LLVMValueRef base, LLVMValueRef byte_off, unsigned lead,
                            unsigned stride);
LLVMValueRef ptx_wgmma_op(ptx_gen *g, LLVMTypeRef acc_ty, LLVMValueRef acc, LLVMValueRef da,
                          LLVMValueRef db);
/* prmt.b32 a, b, sel; an f32 rounded to tf32 (cvt.rna), as i32 bits, and
 * the same for each lane of a <4 x float>. */
LLVMValueRef ptx_prmt(ptx_gen *g, LLVMValueRef a, LLVMValueRef b, LLVMValueRef sel);
LLVMValueRef ptx_round_tf32(ptx_gen *g, LLVMValueRef f);
LLVMValueRef ptx_round_tf32x4(ptx_gen *g, LLVMValueRef v4f);
LLVMValueRef ptx_wgmma_wait(ptx_gen *g, LLVMTypeRef acc_ty, LLVMValueRef acc, unsigned pending);
/* ptx_tc.c: the packed tensor-core product (twasm_abi.h, ABI 5): its two
 * entries NAME_pack and NAME_tc (NAME: g->fn's) added to the sm_90a
 * module being built, where the plan's entries say TWASM_ENTRY_PACKED. */
bool ptx_tc_build(ptx_gen *g);

/* ptx_wmma.c, for ptx_wgmma.c: the wmma kernel's launch bounds, and its
 * body from the builder's position to the return. */
void ptx_wmma_annotate(ptx_gen *g);
bool ptx_wmma_body(ptx_gen *g);

/* ptx_ir.c */
/* With out_base, the main entry takes one more pointer after its params
 * (and result cell): g->out_base, the base its outputs are addressed from
 * (TWASM_ENTRY_HOST_OUT); without, g->out_base is g->mem. */
void ptx_gen_init(ptx_gen *g, LLVMContextRef ctx, const kn_desc *d, const char *name,
                  bool result_arg, bool out_base, tw_diag *diag);
/* Starts another entry of g's module (g->fn, mem, params and entry then
 * refer to it) taking (mem, params..., result cell) or, with scratch,
 * (mem, params..., scratch pointer) and positions the builder in it. */
void ptx_gen_entry(ptx_gen *g, const char *name, bool result_arg, LLVMValueRef *scratch);
void ptx_gen_dispose(ptx_gen *g);
/* One nvvm.annotations entry of g->fn: maxntidx, minctasm, ... */
void ptx_annotate(ptx_gen *g, const char *key, unsigned value);
LLVMTypeRef ptx_type(const ptx_gen *g, kn_type t);
unsigned ptx_type_bytes(kn_type t);
#define PTX_CALL_MAX_ARGS 17 /* the wmma mma intrinsics take 17 */
LLVMValueRef ptx_call(ptx_gen *g, const char *name, LLVMTypeRef ret,
                      LLVMValueRef *args, unsigned nargs);
LLVMValueRef ptx_sreg(ptx_gen *g, const char *reg);    /* "tid.x" ... as i64 */
void ptx_barrier(ptx_gen *g);
LLVMValueRef ptx_i64(ptx_gen *g, int64_t v);
LLVMValueRef ptx_size(ptx_gen *g, kn_size s);
LLVMValueRef ptx_global_at(ptx_gen *g, LLVMValueRef byte_offset);
LLVMValueRef ptx_addr(ptx_gen *g, const kn_addr *a, const LLVMValueRef *ivs);
LLVMValueRef ptx_load(ptx_gen *g, LLVMTypeRef t, LLVMValueRef p, unsigned align);
/* The alignment an access of a `mem` element at a may assume: a's, or the
 * element size where g->natural_align says the run-time check passed. */
unsigned ptx_access_align(const ptx_gen *g, const kn_addr *a, kn_type mem);
void ptx_store(ptx_gen *g, LLVMValueRef v, LLVMValueRef p, unsigned align);
LLVMValueRef ptx_var(ptx_gen *g, LLVMTypeRef t, LLVMValueRef init);
/* i64 arithmetic shorthands for the matmul generators: v * c, a + b,
 * a < end (signed), the low 32 bits. */
LLVMValueRef ptx_mul_c(ptx_gen *g, LLVMValueRef v, int64_t c);
LLVMValueRef ptx_add(ptx_gen *g, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef ptx_below(ptx_gen *g, LLVMValueRef a, LLVMValueRef end);
LLVMValueRef ptx_low32(ptx_gen *g, LLVMValueRef v);
/* Element (row, col) of product `batch` (NULL: no batch) of a matrix whose
 * elements take `bytes`.  A Wasm32 memory holds at most 4 GiB, so the byte
 * offset of an element the loop touches is below 2^32 and 32-bit wrapping
 * arithmetic gives it exactly; half the registers of 64-bit index math
 * (kernels read only such elements). */
LLVMValueRef ptx_element_at(ptx_gen *g, const kn_layout *l, unsigned bytes, LLVMValueRef batch,
                            LLVMValueRef row, LLVMValueRef col);
/* Element v of the matmul's A or B (l), as the accumulator type acc:
 * i8 sign- or zero-extended as that operand reads. */
LLVMValueRef ptx_widen_operand(ptx_gen *g, const kn_layout *l, LLVMValueRef v, LLVMTypeRef acc);
/* (v & (bytes - 1)) == 0 for an i64 v; bytes a power of 2. */
LLVMValueRef ptx_multiple_of(ptx_gen *g, LLVMValueRef v, unsigned bytes);
/* Whether every element of a matrix of `bytes` elements is aligned to its
 * size: strides count elements, so that holds when element (0, 0) of
 * product 0 is. */
LLVMValueRef ptx_layout_aligned(ptx_gen *g, const kn_layout *l, unsigned bytes);
/* Whether a matrix of `bytes` elements has contiguous rows (col_stride
 * 1), each starting at a multiple of `align` bytes (a power of 2):
 * element (0, 0) and the row pitch both aligned. */
LLVMValueRef ptx_rows_aligned(ptx_gen *g, const kn_layout *l, unsigned bytes, unsigned align);
LLVMValueRef ptx_shared_array(ptx_gen *g, LLVMTypeRef elem, unsigned count, const char *name);
LLVMValueRef ptx_smin(ptx_gen *g, LLVMValueRef a, LLVMValueRef b);
void ptx_loop_begin(ptx_gen *g, ptx_loop *l, LLVMValueRef start, LLVMValueRef end,
                    LLVMValueRef step);
void ptx_loop_end(ptx_gen *g, ptx_loop *l);
/* Emits `if (cond) {` and returns the block to continue at after `}`. */
LLVMBasicBlockRef ptx_if_begin(ptx_gen *g, LLVMValueRef cond);
void ptx_if_end(ptx_gen *g, LLVMBasicBlockRef join);
/* Index of this thread along an axis and the stride of the whole grid. */
void ptx_grid_axis(ptx_gen *g, char axis, LLVMValueRef *first, LLVMValueRef *stride);

/* ptx_expr.c: descriptor checks and expression lowering */
bool ptx_size_check(const kn_desc *d, kn_size s, const char *what, tw_diag *diag);
bool ptx_addr_check(const kn_desc *d, const kn_addr *a, const char *what, tw_diag *diag);
bool ptx_expr_check(const kn_desc *d, int32_t root, tw_diag *diag);
LLVMValueRef ptx_expr_build(ptx_gen *g, int32_t root, const LLVMValueRef *ivs);
/* used[i] for each node i <= root that root's value depends on. */
void ptx_expr_used(const kn_desc *d, int32_t root, bool *used);
/* A loaded value v of load node e, extended to the node's type. */
LLVMValueRef ptx_expr_extend(ptx_gen *g, const kn_expr *e, LLVMValueRef v);
/* Wasm function func as linked from kn_desc's calls_bc, or NULL. */
LLVMValueRef ptx_callee(const ptx_gen *g, uint32_t func);

#endif
