/* kn_desc.h: kernel descriptors, what the tensor detector lifts out of a
 * loop nest and what kernel generation (ptx/) compiles, never host IR. */
#ifndef TW_KN_DESC_H
#define TW_KN_DESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A kernel receives (ptr linear memory base, i64 param 0, ..., i64 param
 * n-1): the live values the descriptor names.  i32 params are read from the
 * low 32 bits, f32/f64 params are bit patterns (as twasm_slot holds them). */
#define KN_MAX_PARAMS 16
#define KN_MAX_DIMS 2          /* map index space: iv 0 outer, iv 1 inner */
#define KN_MAX_ADDR_PARAMS 4

/* Memory element types and expression value types (I1: comparisons). */
typedef enum { KN_I1, KN_I8, KN_I16, KN_I32, KN_I64, KN_F32, KN_F64 } kn_type;

/* A count or size: a constant, or the live value of a param (as int64). */
typedef struct {
  bool is_param;
  int64_t value;           /* the constant, or the param index */
} kn_size;

/* Byte offset from the linear memory base:
 *   c0 + sum_d (iv_coeff[d] + iv_pcoeff[d] * param(iv_pindex[d])) * iv_d
 *      + sum_t param_coeff[t] * param(param_index[t])
 * in 64-bit arithmetic.  align: the alignment in bytes the generator may
 * assume for every access (1 when unproven); the detector or the runtime's
 * pre-launch check must guarantee it, a misaligned GPU access is fatal. */
typedef struct {
  int64_t c0;
  int64_t iv_coeff[KN_MAX_DIMS];
  int64_t iv_pcoeff[KN_MAX_DIMS];   /* 0: no live-value factor (run-time strides) */
  unsigned iv_pindex[KN_MAX_DIMS];
  unsigned nparam_terms;
  unsigned param_index[KN_MAX_ADDR_PARAMS];
  int64_t param_coeff[KN_MAX_ADDR_PARAMS];
  unsigned align;
} kn_addr;

/* Expression nodes.  Integer ops wrap; shifts take the count modulo the
 * width (Wasm); MIN/MAX are Wasm's NaN-propagating fmin/fmax; ADD/SUB/MUL
 * on floats are single IEEE operations, never contracted; FPTOSI_SAT and
 * FPTOUI_SAT are Wasm's trunc_sat (NaN -> 0, saturating). */
typedef enum {
  KN_E_CONST, KN_E_PARAM, KN_E_IV, KN_E_LOAD,
  KN_E_ADD, KN_E_SUB, KN_E_MUL,                    /* int or float */
  KN_E_AND, KN_E_OR, KN_E_XOR, KN_E_SHL, KN_E_LSHR, KN_E_ASHR,
  KN_E_DIV, KN_E_MIN, KN_E_MAX,                    /* float only */
  KN_E_SQRT, KN_E_ABS, KN_E_NEG,                   /* float only */
  KN_E_CMP,                                        /* -> I1 */
  KN_E_SELECT,                                     /* a ? b : c */
  KN_E_SITOFP, KN_E_UITOFP, KN_E_FPTRUNC, KN_E_FPEXT,
  KN_E_TRUNC, KN_E_SEXT, KN_E_ZEXT, KN_E_FPTOSI_SAT, KN_E_FPTOUI_SAT,
  /* integer only, b a CONST node that is not 0 (and not -1 for the signed
   * ones), so that no iteration can trap */
  KN_E_UDIV, KN_E_SDIV, KN_E_UREM, KN_E_SREM,
  /* a call of pure Wasm function `func` of the module (its LLVM function
   * in kn_desc's calls_bc), operands a, b, c its arguments in order (-1
   * past the last): the same code the CPU loop calls (kn_recog_call.c) */
  KN_E_CALL,
  KN_E_COUNT
} kn_op;

/* Integer predicates, then float ones (ordered except UNE, Wasm's ne). */
typedef enum {
  KN_CMP_EQ, KN_CMP_NE, KN_CMP_SLT, KN_CMP_SLE, KN_CMP_SGT, KN_CMP_SGE,
  KN_CMP_ULT, KN_CMP_ULE, KN_CMP_UGT, KN_CMP_UGE,
  KN_CMP_OEQ, KN_CMP_UNE, KN_CMP_OLT, KN_CMP_OLE, KN_CMP_OGT, KN_CMP_OGE,
  /* the rest of LLVM's float predicates (NaN tests from Wasm's NaN
   * canonicalisation, negated compares) */
  KN_CMP_ONE, KN_CMP_UEQ, KN_CMP_ULT_F, KN_CMP_ULE_F, KN_CMP_UGT_F, KN_CMP_UGE_F,
  KN_CMP_ORD, KN_CMP_UNO,
  KN_CMP_COUNT
} kn_cmp;

typedef struct {
  kn_op op;
  kn_type type;            /* result: I1, I32, I64, F32 or F64 */
  int32_t a, b, c;         /* operands: indices of EARLIER nodes, -1 unused */
  kn_cmp cmp;              /* KN_E_CMP */
  union {
    uint64_t bits;         /* KN_E_CONST: integer value or IEEE bits */
    unsigned param;        /* KN_E_PARAM */
    unsigned iv;           /* KN_E_IV: 0 outer, 1 inner */
    uint32_t func;         /* KN_E_CALL: the Wasm function index */
    struct {
      kn_type mem;         /* I8..F64; narrower ints extend to `type` */
      bool sign;           /* sign- (true) or zero-extend */
      kn_addr addr;
    } load;
  };
} kn_expr;

/* The name of Wasm function `func` in kn_desc's calls_bc (printf format,
 * one unsigned), the only functions that module defines. */
#define KN_CALLEE_PREFIX "wasm_f"
#define KN_CALLEE_NAME KN_CALLEE_PREFIX "%u"

/* A KN_E_CALL node's arguments: a, b, c up to the first -1. */
static inline unsigned kn_call_nargs(const kn_expr *e) {
  return e->a < 0 ? 0 : e->b < 0 ? 1 : e->c < 0 ? 2 : 3;
}

typedef enum { KN_MAP, KN_REDUCE, KN_MATMUL } kn_kind;

/* out(iv) = node[value] for iv_0 < trip[0] (, iv_1 < trip[1]); a stencil is
 * a map whose loads have constant offsets around the output element.  The
 * value is truncated to out_type when that is a narrower integer. */
typedef struct {
  unsigned ndims;          /* 1 or 2 */
  kn_size trip[KN_MAX_DIMS];
  kn_type out_type;
  kn_addr out_addr;
  int32_t value;
} kn_map;

/* result = init OP node[value](0) OP ... OP node[value](trip-1).  Integer
 * ops only, unless reassociate is set (float ADD, order then unspecified)
 * or sequential (float ADD in exactly that order, left to right, one
 * rounding per add: one GPU thread sums, bit-identical to the loop).
 * The kernel takes one more argument after the params: a device pointer to
 * the result cell, which the runtime fills with init (the live value of
 * init_param, in `type`) before the launch and reads afterwards. */
typedef enum {
  KN_RED_ADD, KN_RED_MUL, KN_RED_AND, KN_RED_OR, KN_RED_XOR,
  KN_RED_SMIN, KN_RED_SMAX, KN_RED_UMIN, KN_RED_UMAX, KN_RED_COUNT
} kn_red_op;

typedef struct {
  kn_size trip;
  kn_red_op op;
  kn_type type;            /* I32 or I64; F32/F64 only with reassociate or sequential */
  int32_t value;           /* in terms of iv 0 */
  unsigned init_param;
  bool reassociate;
  bool sequential;         /* an exact float sum in source order (ptx_seqsum.c) */
} kn_reduce;

/* Element (r, c) of product b of a batch lies at byte offset
 *   offset + (b * batch_stride + r * row_stride + c * col_stride) * element size
 * (b = 0 without a batch). */
typedef struct {
  kn_size offset;          /* bytes */
  kn_size row_stride, col_stride;  /* elements */
  kn_size batch_stride;    /* elements; unused without a batch */
  /* Rows through a table of row pointers (`float **A`, each row its own
   * allocation): row r starts at the i32 at byte offset `table + 4r`, so
   * element (r, c) lies at that row start + offset + c * col_stride *
   * element size; row_stride unused (0), never with a batch.  Only the
   * exact kernel takes it (ptx_plan.c); the runtime checks every row
   * before a launch (twasm_kernel_range_abi's table_dim). */
  bool row_table;
  kn_size table;           /* bytes, with row_table */
} kn_layout;

/* C[i][j] = (accumulate ? S[i][j] : 0) + A[i][0]*B[0][j] + A[i][1]*B[1][j]
 * + ... added left to right, each product rounded on its own; S (`start`)
 * is C itself (C += A*B) or another matrix, a bias row say (row stride 0:
 * `acc = bias[j]; for k ...`).  I8_I32:
 * A and B hold i8 (each signed or not: a_signed, b_signed), C holds i32
 * (wrapping). */
typedef enum { KN_MM_F32, KN_MM_F64, KN_MM_I32, KN_MM_I8_I32 } kn_mm_type;

/* A factor a value of the product is multiplied by where the source does
 * it: `alpha * A[i][k] * B[k][j]` (each A element scaled, one rounding,
 * then multiplied by B's) or `C[i][j] *= beta` before the k loop (the
 * sum's start scaled).  The multiplication keeps the source's operand
 * order (first: the factor is the left operand); the factor is the live
 * value of `param` (f32/f64 bits).  Only the exact kernel takes scaled
 * products (ptx_plan.c). */
typedef struct {
  bool on;
  bool first;
  unsigned param;
} kn_mm_scale;

/* A product over a triangle (syrk's `for (j = 0; j <= i; j++)`): only
 * the outputs (r, c) with c < r + add are computed and stored (add 1: the
 * lower triangle with its diagonal, add 0: without it); n is the rectangle
 * around them (n = m), whose other elements keep their values.  The
 * runtime's checks cover that rectangle: its extremes are the triangle's
 * (C[0][0] and C[m-1][m-1]), and an overlap of the rest refuses the launch
 * (conservative, never wrong).  Only the exact kernel takes it, never with
 * a batch (ptx_plan.c). */
typedef struct {
  bool on;
  int64_t add;
  /* upper: the outputs with c >= r + add instead (covariance's `for (j =
   * i; j < m; j++)`, add 0: n = m; correlation's j from i + 1 over rows
   * i < m - 1, add 1: n = m + 1); mirror: each value also stored at C's
   * element (c, r) after (r, c), where the source does `cov[j][i] =
   * cov[i][j]` (only with upper: the stores then write each element
   * once, with add 0 the diagonal twice with one value, and no output's
   * start reads an element another output stores); diag (only with upper
   * and add 1, no accumulate): C's element (r, r) of each row r < m set
   * to the constant diag_bits (f32/f64 bits), correlation's `corr[i][i] =
   * 1.0`, an element no output writes. */
  bool upper, mirror, diag;
  uint64_t diag_bits;
} kn_mm_tri;

/* A second product summed per term (syr2k's `C[i][j] += A[j][k] * alpha
 * * B[i][k] + B[j][k] * alpha * A[i][k]`): each step adds
 *   (A[i][k]*B[k][j] + A2[i][k]*B2[k][j])
 * to the sum, the two products rounded each, their sum rounded once, then
 * added to the sum (the source's order: no product kernel's `sum + a*b`
 * twice, which rounds after each product).  Floats only, no batch; only
 * the exact kernel takes it (ptx_plan.c), its A2 and B2 scaled like A and
 * B where a2_scale and b2_scale say. */
typedef struct {
  bool on;
  kn_layout a, b;
  kn_mm_scale a_scale, b_scale;
} kn_mm_second;

/* A factor applied to each finished sum before it is stored, where the
 * source does it after the k loop: `C[i][j] = sum / d` (div: the sum the
 * dividend), `sum * f` or `f * sum` (first: the factor the left
 * operand), `sum + f`, `f + sum` (add), `sum - f`, `f - sum` (sub); one
 * rounding, the factor the live value of `param` (f32/f64 bits), or with
 * elem the element of matrix `e` at the output's own (row, col, batch):
 * `r[i] = b[i] - sum` (a residual), `y[i] = sum + bias[i]`.  e has C's
 * element type; the nest does not write it (its range is read, checked
 * against C's before the launch).  Floats only; only the exact kernel
 * takes it (ptx_plan.c). */
typedef struct {
  bool on;
  bool div;
  bool add, sub;           /* else a multiply (or div) */
  bool first;
  unsigned param;          /* without elem */
  bool elem;
  kn_layout e;             /* with elem */
} kn_mm_post;

/* A second operation after kn_mm_post's, with an element at the
 * output's own index (reference BLAS's `C = alpha*temp + beta*C`, `y[j]
 * += alpha*temp`): t = e's element (row, col, batch), times the live value
 * of `param` where scaled (one rounding, the factor the left operand with
 * scale_first), then y + t (t + y with first), one rounding, y kn_mm_post's
 * result: the operations the Wasm code does, in its order, never fused.
 * e may be C itself (read by the thread that stores the element, before
 * it stores it) or a matrix the nest does not write.  With guarded, only
 * where the live i1 value of guard_param is guard_on (the source's
 * `if (beta == 0) C = alpha*temp; else C = alpha*temp + beta*C`, its
 * test computed before the nest); elsewhere y is stored alone.  Floats
 * only; only the exact kernel takes it (ptx_plan.c). */
typedef struct {
  bool on;
  bool first;
  bool scaled, scale_first;
  unsigned param;          /* with scaled */
  kn_layout e;
  bool guarded, guard_on;
  unsigned guard_param;    /* with guarded */
} kn_mm_blend;

/* A compare with a constant and a select, applied to each finished sum
 * (after kn_mm_post's and kn_mm_blend's operations, where there are)
 * as the source does before its store: `y[i] = s > 0 ? s : 0` (a
 * ReLU), `s < 0 ? 0 : s`.
 * out = (left ? fcmp(pred, y, cmp) : fcmp(pred, cmp, y)) ? (when_true ? y
 * : sel) : (when_true ? sel : y), pred an LLVMRealPredicate (an ordered
 * or unordered compare, not the constant ones), cmp and sel constants of
 * C's type (their values exact in it).  The same compare and select as
 * the Wasm code (`f32.gt`, `select`): exact for NaN and -0 alike.  With
 * mul the select's other value is y * sel (sel * y with mul_first), one
 * rounding, not sel: a leaky ReLU, `s > 0 ? s : 0.01f * s`.  With nan_add
 * a NaN y stores y + cmp (cmp + y with add_first) instead: Wasm's
 * `f32.max(s, k)` / `f32.min`, whose other values are the compare and
 * select `s > k ? s : k` (`s >= k` for k = -0; `s < k`, `s <= k` for k =
 * +0 with min); libc's fmaxf(s, k), whose NaN s gives k, is that compare
 * and select alone.  kn_matmul's act2 is a second one applied to act's
 * result (`fminf(fmaxf(s, 0), 6)`, a ReLU6; `s < lo ? lo : s > hi ? hi :
 * s`, a clamp, where the recogniser proved the outer compare gives the
 * same on s as on the inner one's result).  Floats only; only the exact
 * kernel takes it (ptx_plan.c). */
typedef struct {
  bool on;
  unsigned pred;
  bool left, when_true;
  double cmp, sel;
  bool mul, mul_first;
  bool nan_add, add_first;
} kn_mm_act;

/* batched: `batch` independent products (b = 0 .. batch-1, a loop around
 * the product whose matrices move with b by their batch strides); the
 * products write disjoint elements of C (proved at compile time or checked
 * by the runtime before the launch), so they may run in any order. */
typedef struct {
  kn_size m, n, k;
  bool batched;
  kn_size batch;           /* when batched */
  kn_mm_type type;
  bool a_signed, b_signed;
  bool accumulate;
  kn_layout a, b, c;
  bool has_start;          /* with accumulate: sums start from `start`, */
  kn_layout start;         /* not from C itself */
  unsigned align;          /* assumed for every element access, as kn_addr */
  kn_mm_scale a_scale, b_scale;  /* each A (B) element scaled before the product */
  kn_mm_scale start_scale; /* with accumulate: each sum's start scaled */
  kn_mm_tri tri;           /* outputs below (or above) the diagonal only */
  kn_mm_second second;     /* a second product added to each term */
  kn_mm_post post;         /* each sum scaled or divided before its store */
  kn_mm_blend blend;       /* then an element added, maybe scaled (beta * C) */
  kn_mm_act act;           /* then compared and selected (a ReLU) */
  kn_mm_act act2;          /* then a second time, with act on (a clamp: ReLU6) */
} kn_matmul;

static inline bool kn_matmul_scaled(const kn_matmul *m) {
  return m->a_scale.on || m->b_scale.on || m->start_scale.on || m->second.on || m->post.on ||
         m->blend.on || m->act.on || m->act2.on;
}

/* Whether a matrix of the product has its rows through a table. */
static inline bool kn_matmul_row_tables(const kn_matmul *m) {
  return m->a.row_table || m->b.row_table || m->c.row_table || m->start.row_table;
}

/* Where each sum of an accumulating product starts. */
static inline const kn_layout *kn_matmul_start(const kn_matmul *m) {
  return m->has_start ? &m->start : &m->c;
}

/* The number of products of a matmul: its batch, or 1. */
static inline kn_size kn_mm_batch(const kn_matmul *m) {
  return m->batched ? m->batch : (kn_size){false, 1};
}

typedef struct {
  kn_kind kind;
  unsigned nparams;        /* <= KN_MAX_PARAMS */
  const kn_expr *nodes;    /* map and reduce */
  unsigned nnodes;
  /* With KN_E_CALL nodes: LLVM bitcode of a module defining each callee
   * as KN_CALLEE_NAME (taking a vmctx pointer whose first field is the
   * linear memory base, then its Wasm arguments), and every function
   * those call; compiled into the kernel (ptx_target.c).  NULL else. */
  const void *calls_bc;
  size_t calls_bc_len;
  union {
    kn_map map;
    kn_reduce reduce;
    kn_matmul matmul;
  };
} kn_desc;

#endif
