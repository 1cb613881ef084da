/* kn_internal.h: shared by the recognisers (kn_recog*.c) only: the state
 * of one nest being recognised and the helpers the kinds share. */
#ifndef TW_KN_INTERNAL_H
#define TW_KN_INTERNAL_H

#include "kn_recog.h"

#define KR_MAX_DIMS 4
#define KR_MAX_TERMS 8

/* coeff * [t_dim] * [param]; dim -1 or param NULL when absent.  t_d counts
 * the iterations of the nest's d-th loop from 0. */
typedef struct {
  int64_t coeff;
  int dim;
  LLVMValueRef param;
} kr_term;

typedef struct {
  bool ok;
  int64_t c;
  int n;
  kr_term t[KR_MAX_TERMS];
} kr_affine;

/* A vector loop inside another loop with the scalar code beside it, read
 * as one scalar loop over j in [0, count) (kn_lanes_region.c). */
#define KR_REGION_LOOPS 8
#define KR_REGION_STORES 8
typedef struct {
  const ir_loop *outer;           /* the loop whose body holds the region */
  const ir_loop *loops[KR_REGION_LOOPS]; /* V's and R's copies */
  bool vector[KR_REGION_LOOPS];   /* loops[k] is one of V's */
  int nloops;
  const ir_loop *vec, *rep;       /* V's and R's fast copies; rep stands for the j loop */
  LLVMValueRef stores[KR_REGION_STORES]; /* rep's, one per unrolled copy */
  int nstores;
  unsigned lanes;
  LLVMValueRef count;             /* n, computed before the nest, or a row's count */
  /* A triangle's row (syrk's `j <= i`): n = trunc(wide), wide the i64 IV
   * 1, 2, ... of the chain loop row (LLVM's widened i + 1), last that
   * loop's i32 counter 0, 1, ... (n - 1); NULL, NULL, NULL otherwise. */
  LLVMValueRef wide, last;
  const ir_loop *row;
  bool row_outside;               /* row a loop around the nest: n a live value
                                   * (kn_lanes_region.c row_outside_ok) */
  LLVMValueRef start;             /* s': where R starts (its counters read at s' = j0) */
  /* The scalar loop's first j, a constant (`for (j = j0; j < e; j++)`,
   * a stencil's j from 1): V's lanes and R then run j - j0 over [0,
   * count), and R's counters are read at s' = j0 (kn_lanes_region.c
   * "j from j0"); 0 for the loop from 0. */
  int64_t j0;
  /* G's condition where it leaves for rows whose count reads positive
   * (n = x + k wrapped: kn_lanes_region.c none_when_true): the trip is
   * then read as 0 there; NULL when G tests n exactly. */
  LLVMValueRef guard;
  bool guard_enters;              /* the trip counts when guard is true, else when false */
  /* A live value that is 1 whenever V runs (clang's versioning on a
   * stride of 1: the skip S also tests `x != 1`); NULL when none.  V's
   * lanes are compared with R's at x = 1 (kr_region_prove). */
  LLVMValueRef unit;
  LLVMValueRef peel_at;           /* s: the peeled iteration's j */
  LLVMValueRef peel;              /* its store */
  ir_trip trip;                   /* j from 0 while j < count: the region's count */
  const ir_loop *inner;           /* a loop nest of outer beside the region, after
                                   * it (the region is then a prologue), or NULL */
  /* An innermost loop of outer before the region (atax's sum in memory
   * beside `y[j] += A[i][j] * tmp[i]`), in its bounds copies (one
   * `!twasm.loop`), every exit to the region's skip S: only a split part
   * (kn_recog_split.c) takes such a region; nbefore 0 otherwise. */
  const ir_loop *before[KR_REGION_LOOPS];
  int nbefore;
  int skip;                       /* S: the block whose branch skips V */
  int done;                       /* the block every path of the region reaches */
  /* A sum region (an integer row sum in lanes, kn_lanes_region.c): V and
   * R store nothing and add into accumulators; result, a phi of done, is
   * init + the sum of R's term over j in [0, count), modulo 2^width. */
  bool sum;
  /* the sum's operator: KN_RED_ADD, or (at the top of a function only,
   * kn_recog_top.c) another integer reduction, "adds" then combining */
  kn_red_op sum_op;
  LLVMValueRef result, init, hsum; /* hsum: V's lanes summed after V */
  int copies;                     /* R's copies a trip: stores, or terms of a sum */
  LLVMValueRef peel_sum;          /* a sum's value after the peel (D's phi), or NULL */
  /* A prologue loop P before R (clang's remainder unrolled by U >= 4 with
   * the leftover n & (U-1) iterations in a loop of their own, a Wasm loop
   * of its own, in its bounds copies): j from s (prol_at) by 1, one store
   * a trip, its counters read at s = 0 (kn_recog_affine.c, prol_j);
   * nprol 0 otherwise. */
  const ir_loop *prol[KR_REGION_LOOPS];
  int nprol;
  LLVMValueRef prol_at;
} kr_region;

typedef struct {
  tw_arena *arena;
  const ir_cfg *cfg;
  const ir_dom *dom;
  LLVMTargetDataRef td;
  const kn_recog_opts *opts;
  const ir_loop *chain[KR_MAX_DIMS]; /* the nest's loops, outer to inner */
  int depth;
  /* A loop in chain[prologue_parent] before the rest of the chain, or
   * NULL; its counter stands for the innermost dim (build_chain). */
  const ir_loop *prologue;
  int prologue_parent;
  kn_size trips[KR_MAX_DIMS];        /* of each chain loop, copies included */
  LLVMValueRef mem_base;
  kn_recog_nest *out;
  /* Unrolled innermost loop: copy `copy` of `copies` runs virtual inner
   * iteration copies * t + copy. */
  int copies, copy;
  kn_expr *nodes;
  unsigned nnodes, cap;
  LLVMValueRef memo_key[64];
  int32_t memo_val[64];
  int nmemo;
  const char *reason;
  /* Recognising one part of a nest with several outputs
   * (kn_recog_split.c): only these stores are the kernel's, the others
   * another part's.  NULL: every store of the nest. */
  const LLVMValueRef *slice;
  int nslice;
  /* Addresses (over dim 0, the nest's outer loop) of the elements an
   * earlier part stores, each on its own outer iteration, that this part
   * may read after it (kr_split_loops): such read ranges are marked
   * forwarded (kr_add_range). */
  const kr_affine *forward;
  int nforward;
  /* A vector loop read lane by lane (kn_lanes.c): while in_lanes, a
   * vector value stands for its lane `lane`. */
  bool in_lanes;
  int lane;
  /* An epilogue after the inner loop (kn_recog_split.c): value stored[i],
   * computed in that loop and stored there at stored_at[i] (over dim 0),
   * is read as a load of that element (kr_expr); with forward_writes set,
   * every write range is marked forwarded (kr_add_range). */
  const LLVMValueRef *stored;
  const kr_affine *stored_at;
  int nstored;
  bool forward_writes;
  /* The innermost chain loop stands for a region (kn_lanes_region.c):
   * R's counters start at s' = 0 (region_marker: s' read as a term of its
   * own while expanding one), and with peel_j, s is the inner counter. */
  const kr_region *region, *pregion; /* the inner loop's; the prologue's */
  LLVMValueRef region_marker;     /* s' of the region whose IV start is expanded */
  const kr_region *peel_j;        /* the region whose peel is read (s is t_d) */
  const kr_region *prol_j;        /* the region whose prologue loop P is read (s as s') */
  /* kr_region_prove: counters of loops outside the two dims of an address
   * kept as pseudo live values (the nodes are compared, never launched) */
  bool region_proof;
  /* kr_region_prove of a region with a unit (above): kr_int and
   * kr_address read that live value as the constant 1 */
  LLVMValueRef unit_param;
  /* counters of the inner region's R read so far (kn_recog_affine.c
   * sprime_drop: an address reading one must move with s' as with j) */
  int r_ivs;
  /* Products over a triangle (kr_matmul, kn_mm_tri): with allow_tri set,
   * kr_loop_trip takes a loop counting 0, 1, ... to t_o + add (t_o the
   * counter of chain dim o, an outer loop) as o's count, the rectangle
   * around the triangle, and sets last_tri; kr_set_trips records it in
   * tri (tri_dim the loop's dim, tri_outer o). */
  bool allow_tri, last_tri, tri;
  /* the triangle is an upper one (upper_trip): the tri_dim loop counts
   * from t_o + add to the outer loop's bound, its counter read as the
   * column itself (kr_int's IVs of that loop, kn_recog_affine.c) */
  bool tri_upper;
  bool bypassed;           /* entered_always took a bypass never taken */
  /* twin[d]: the bounds pass's checked copy of chain[d] where chain[d] is
   * its fast copy, chosen by a test on a struct field loaded in the nest
   * (build_chain), else NULL: its values leaving it are the fast copy's */
  const ir_loop *twin[KR_MAX_DIMS];
  int tri_dim, tri_outer;
  int64_t tri_add;
  /* Row pointers read so far (kr_row_load): loads in the nest that an
   * address adds as a term of its own; never a kernel param (kr_param
   * refuses them), only a layout's row table (kn_layout's row_table) or
   * a range's (kn_range's table_dim).  row_reading: inside a row
   * pointer's own address (a table of tables is none). */
  LLVMValueRef rows[KR_MAX_DIMS];
  int nrows;
  bool row_reading;
  int in_address;          /* kr_address's depth: only an address takes a row pointer */
  int nguard_exits;        /* exits of the nest to guards (kn_recog_guard.c) */
  /* A region at the top of a function (kn_recog_top.c): the blocks from
   * its skip on, read as the loop around it that it has not (chain[0]
   * the region's R, depth 1); NULL elsewhere. */
  const ir_loop *top;
} kr_ctx;

/* The nest's blocks: chain[0]'s, or a region at the top of a function's
 * (c->top, kn_recog_top.c), whose values outside R are the nest's too. */
static inline const ir_loop *kr_nest(const kr_ctx *c) { return c->top ? c->top : c->chain[0]; }

/* Whether store is one of the kernel's (c->slice). */
bool kr_in_slice(const kr_ctx *c, LLVMValueRef store);
/* Runs the recogniser the nest's shape asks for (map, reduction or
 * product) on c, whose chain is built; false with c->reason. */
bool kr_kind(kr_ctx *c);
/* kn_recog.c: the safety scan of chain[0] (calls, accesses, exits). */
bool kr_scan(kr_ctx *c);
/* kn_recog_top.c: a vector loop vec at the top of fn with its scalar
 * remainder, as one nest (c->out, its nest a region that is no loop):
 * true when that nest is a kernel; claimed[r] set for each root loop of
 * lp it holds. */
bool kr_top_region(kr_ctx *c, const ir_loops *lp, const ir_loop *vec, bool *claimed);
/* kn_recog_split.c: a nest whose stores write two or more arrays, as one
 * kernel per array; scanned: c as scan and chain left it.  True with
 * c->out filled (its parts) when every part is a kernel. */
bool kr_split(kr_ctx *c, const kr_ctx *scanned, const kn_recog_nest *out_scanned);
/* kn_recog_split.c: an outer loop holding two or more inner loops, one
 * part per array stored, run in the loops' order (atax); scanned: c as
 * scan left it (chain[0] the nest).  True with c->out filled; false with
 * c->reason NULL when the nest has no such shape. */
bool kr_split_loops(kr_ctx *c, const kr_ctx *scanned, const kn_recog_nest *out_scanned);
/* The same affine form: constant, and terms in any order. */
bool kr_same_affine(const kr_affine *x, const kr_affine *y);
/* Whether v is a row pointer (`A[i]` of a `float **A`): a load in the
 * nest of an i32 at the address table + 4 t_d, t_d the counter of one
 * chain loop, table made of live values (no counter); *table (without
 * the counter's term) and *dim where asked. */
bool kr_row_load(kr_ctx *c, LLVMValueRef v, kr_affine *table, int *dim);
/* The row pointer a's terms add (coefficient 1), or NULL when none;
 * false (with a reason) when a has two, or one with another coefficient. */
bool kr_row_term(kr_ctx *c, const kr_affine *a, LLVMValueRef *row);
/* a, made of live values and a constant (no counter), as a size: the
 * constant, or a param the host computes as their sum. */
bool kr_live_size(kr_ctx *c, const kr_affine *a, kn_size *out);

bool kr_fail(kr_ctx *c, const char *reason);
/* A param index for a live value (or a trip count); -1 when full. */
int kr_param(kr_ctx *c, kn_bind b);
/* An integer value of the nest as an affine form over t_d and live values. */
kr_affine kr_int(kr_ctx *c, LLVMValueRef v);
/* a += k * b (not ok on overflow or when b is not). */
void kr_affine_add(kr_affine *a, const kr_affine *b, int64_t k);
/* A memory access's byte offset from the linear memory base. */
kr_affine kr_address(kr_ctx *c, LLVMValueRef ptr);
/* kr_affine -> kn_addr over dims (outer, inner) = chain[d0], chain[d1]. */
bool kr_to_addr(kr_ctx *c, const kr_affine *a, int d0, int d1, unsigned align, kn_addr *out);
int64_t kr_coeff(const kr_affine *a, int dim);
/* The expression computing v, built into c->nodes; -1 on failure. */
int32_t kr_expr(kr_ctx *c, LLVMValueRef v);
/* Calls of pure Wasm functions (kn_recog_call.c): whether call's callee
 * is one (else fails with why); the call as a KN_E_CALL node of type t,
 * its callee's read range and the callee recorded in c->out. */
bool kr_pure_call(kr_ctx *c, LLVMValueRef call);
int32_t kr_call(kr_ctx *c, LLVMValueRef call, kn_type t);
int32_t kr_push(kr_ctx *c, kn_expr e);
kn_expr kr_node(kn_op op, kn_type type, int32_t a, int32_t b, int32_t x);
/* A load of the value ld, extended to type (sign- or zero-). */
int32_t kr_load(kr_ctx *c, LLVMValueRef ld, kn_type type, bool sign);
/* A load of `mem` at address a, extended to type. */
int32_t kr_load_at(kr_ctx *c, const kr_affine *a, kn_type mem, kn_type type, bool sign);
/* The scalar operation of instruction v (of element type t for a vector:
 * on the lanes c->lane of its operands) as nodes (kn_recog_expr.c). */
int32_t kr_instruction(kr_ctx *c, LLVMValueRef v, kn_type t);
/* kn_lanes.c: v128 loops as the scalar loops they implement.  Lanes of a
 * vector type of 32- or 64-bit lanes (0 otherwise); byte offset of a
 * store's lane; the stores as items (store, lane; -1 for a scalar store),
 * -1 on failure; whether vector instruction i may be read lane by lane
 * (false with the reason); lane c->lane of vector value v. */
unsigned kr_lane_count(LLVMTypeRef t);
int64_t kr_lane_offset(LLVMValueRef store, int lane);
int kr_lane_items(kr_ctx *c, LLVMValueRef *stores, int *lanes, int n, int max);
bool kr_lanes_allowed(kr_ctx *c, LLVMValueRef i);
int32_t kr_lane_expr(kr_ctx *c, LLVMValueRef v);
/* A scalar taken out of the lane being read (`extractelement v, lane`:
 * clang's vectoriser calling a scalar function per lane, the results put
 * back with insertelement): v's lane; another lane is another iteration. */
int32_t kr_lane_extract(kr_ctx *c, LLVMValueRef x);
/* An affine form of the nest's counters as an i32 (or i64) value node
 * (kn_recog_expr.c; a loop counter used as a value). */
int32_t kr_counter_value(kr_ctx *c, const kr_affine *form, kn_type t);
/* Whether vector instruction i is a link of i8 lanes widened to i16 lanes
 * and multiplied there (a sext, shuffle, insertelement, mul or bitcast of
 * i8/i16 lanes), which kr_lane_expr reads where i32 lanes are made of it. */
bool kr_narrow_lane_link(LLVMValueRef i);
/* Whether the product of two i8 values, widened by sign (sa, sb) or by
 * zero, fits an i16 lane read back by sign (sign) or by zero. */
bool kr_i16_product_fits(bool sa, bool sb, bool sign);
/* kn_lanes_sum.c: an integer sum kept in v128 lanes over its whole loop
 * (no remainder): loop l's accumulator phi of `lanes` lanes from zero,
 * latch = phi + term, and hsum (a scalar) adding every lane of its last
 * value (last: the latch value or its LCSSA phi) once; init, the sum's
 * start as a scalar (zero).  kr_lane_sum_find proves that shape;
 * kr_lane_sum_ok: whether vector instruction v is part of one (its phi,
 * add, term or hsum tree) in c's nest; kr_lane_product: lane `lane` of
 * term p as the product of two memory elements (false with a reason). */
typedef struct {
  const ir_loop *loop;
  LLVMValueRef phi, latch, term, hsum, last, init;
  unsigned lanes;
} kr_lane_sum;
typedef struct {
  kr_affine addr;
  kn_type mem;   /* the element's type in memory (KN_I8 or KN_I32) */
  bool sign;     /* widened by sign (else by zero) when from != 0 */
  unsigned from; /* the width it is widened from, 0 when not widened */
} kr_lane_factor;
bool kr_lane_sum_find(kr_ctx *c, const ir_loop *l, kr_lane_sum *s);
bool kr_lane_sum_ok(kr_ctx *c, LLVMValueRef v);
bool kr_lane_product(kr_ctx *c, LLVMValueRef p, int lane, kr_lane_factor *fa, kr_lane_factor *fb);
/* kn_lanes_region.c: whether the loops of outer are a vector loop and its
 * scalar remainder implementing one scalar loop, proved as far as the
 * shape goes ((a), (b)); whether vector instruction v of the nest lies in
 * (or feeds only) such a region's vector loop; (c): every store of the
 * region (c->region, chain built) the same expression at its own j. */
bool kr_region_find(kr_ctx *c, const ir_loop *outer, kr_region *r);
const ir_loop *kr_innermost_at(const kr_ctx *c, int b);
/* kn_recog_reduce.c: the integer reduction operator v applies to two
 * operands (an `add`, `mul`, `and`, `or`, `xor`, or a call of
 * llvm.smin/smax/umin/umax, on scalars or lanes), or KN_RED_COUNT.  Each
 * is associative and commutative on wrapping integers, so lanes that each
 * combine their own iterations, combined after the loop, give the scalar
 * loop's value. */
kn_red_op kr_red_op(LLVMValueRef v);
bool kr_lane_counts(LLVMValueRef v, kn_red_op op, unsigned lane, LLVMValueRef x, int *counts, unsigned lanes,
                    int depth);
bool kr_region_vector_ok(kr_ctx *c, LLVMValueRef v);
/* Whether vector value v is part of a sum region's lanes (V's
 * accumulator, its start, its lanes summed after V) of the nest. */
bool kr_region_sum_ok(kr_ctx *c, LLVMValueRef v);
bool kr_region_prove(kr_ctx *c, const kr_region *r);
/* A region whose count is a triangle's row (r->wide): its count is the
 * row loop's, as a triangle's j <= i (kr_loop_trip's triangle_trip); only
 * with allow_tri. */
bool kr_region_tri(kr_ctx *c, const kr_region *r, kn_size *out);
/* The region r (prologue) runs before loop l on each iteration. */
bool kr_region_before(const kr_ctx *c, const kr_region *r, const ir_loop *l);
/* The start of a region loop's counter as its Wasm i32 value: x for an
 * i64 counter starting at zext(x), x i32 (widened by LLVM after the
 * pointers pass), else the start itself. */
LLVMValueRef kr_region_widened_start(const ir_iv *iv);
/* Whether block b's branch enters one of two bounds copies of one
 * innermost loop of outer (the fast and the checked, one `!twasm.loop`):
 * one of them runs, the same Wasm loop either way. */
bool kr_region_copies_fork(const kr_ctx *c, const ir_loop *outer, int b);
/* Whether block b's branch is a bounds check: one side traps. */
bool kr_region_trap_check(const kr_ctx *c, int b);
/* The region whose loops include l as one of R's copies, or NULL. */
const kr_region *kr_region_of(const kr_ctx *c, const ir_loop *l);
/* A load of host state (the memory's size) that only steers the bounds
 * checks and copies of a region's outer loop. */
bool kr_region_host_read(kr_ctx *c, LLVMValueRef ld);
/* Refuses the ok nests that are a vector loop's scalar remainder alone,
 * its vector loop not offloaded (kn_recog_rest.c). */
void kr_refuse_rests(const ir_cfg *cfg, const ir_loops *lp, kn_recog_result *res);
/* Whether an exit to block b is one to a trap, through LCSSA blocks
 * (kr_past_phis): an out-of-bounds check's, or any other. */
bool kr_trap_way(const kr_ctx *c, int b);
/* kn_recog.c: the block past a trap exit's LCSSA blocks (phis, a branch). */
LLVMBasicBlockRef kr_past_phis(const kr_ctx *c, int b);
/* kn_recog_narrow.c: i8/i16 arithmetic (which LLVM narrows sums of bytes
 * to) as i32 nodes holding the zero extension of each value, and integer
 * division by constants that cannot trap. */
bool kr_is_narrow(LLVMValueRef v);
/* The descriptor predicate of an integer compare. */
kn_cmp kr_icmp(LLVMIntPredicate p);
/* Whether call is llvm.smin/smax/umin/umax, and the compare it selects by. */
bool kr_min_max(LLVMValueRef call, kn_cmp *cmp);
int32_t kr_narrow(kr_ctx *c, LLVMValueRef v, kn_type t);
int32_t kr_widen(kr_ctx *c, LLVMValueRef cast, kn_type t);
int32_t kr_narrow_compare(kr_ctx *c, LLVMValueRef cmp);
int32_t kr_divide(kr_ctx *c, LLVMValueRef v, kn_type t);
/* A division or remainder by a constant that is not 0 (nor -1 when
 * signed, in the operation's width): no iteration can trap. */
bool kr_safe_divisor(LLVMValueRef div);
bool kr_same_nodes(const kr_ctx *c, unsigned a0, unsigned b0, unsigned n);
/* The same with a commutative operation's operands in either order. */
bool kr_same_tree(const kr_ctx *c, int32_t x, int32_t y, int depth);
/* Same per-counter strides (constant and live-value parts). */
bool kr_same_strides(const kn_addr *x, const kn_addr *y);
bool kr_type_of(LLVMTypeRef t, kn_type *out);
unsigned kr_type_size(kn_type t);
/* Finds each item's copy number from its inner-dim byte step and constant
 * offset (key); false when they are not copies 0..n-1 of one iteration. */
bool kr_assign_copies(const int64_t *keys, int n, int64_t step, int *copy_of);
/* False (with a reason) when a's dims cannot be described: a dim scaled by
 * more than one live value. */
bool kr_add_range(kr_ctx *c, const kr_affine *a, unsigned size, bool is_write);
/* A new range at the end of c->out's (grown in c's arena), to fill. */
kn_range *kr_range_slot(kr_ctx *c);
bool kr_is_mem_load(const kr_ctx *c, LLVMValueRef v);
/* A struct field loaded in the nest at an address computed before it,
 * which the host loads before a launch (kn_recog_affine.c); and the read
 * range of every such field the kernel's params read, added to c->out
 * with the overlap check on. */
bool kr_field_load(const kr_ctx *c, LLVMValueRef v);
bool kr_field_ranges(kr_ctx *c);
/* Whether the host can compute v before the launch as the nest would
 * (kn_recog_affine.c): computed before it, a field load, or arithmetic
 * and compares of such values. */
bool kr_host_value(const kr_ctx *c, LLVMValueRef v, int depth);

/* kn_recog_guard.c: whether block b (outside the nest) never returns,
 * a call then Wasm's `unreachable` (a guard exit); whether block b's
 * branch leaves the nest to one on one side; each guard exit of the nest
 * as a kn_guard in c->out (chain and trips set), false with a reason
 * when one is no affine index against a bound the host computes. */
bool kr_guard_exit(const kr_ctx *c, int b);
bool kr_guard_branch(const kr_ctx *c, int b);
bool kr_guards(kr_ctx *c);
bool kr_guard_host_value(const kr_ctx *c, LLVMValueRef v);
/* A min/max call (kr_min_max) made in the nest, whose operands a guard's
 * host value may be (kr_guard_host_value, kr_field_ranges). */
bool kr_guard_min_max(const kr_ctx *c, LLVMValueRef v);

/* The count of l on each iteration of outer (NULL: the nest's outermost
 * loop), times copies: a constant or a trip param. */
bool kr_loop_trip(kr_ctx *c, const ir_loop *l, const ir_loop *outer, unsigned copies, kn_size *out);
/* Sets c->trips, the innermost loop's times `copies`. */
bool kr_set_trips(kr_ctx *c, unsigned copies);

bool kr_map(kr_ctx *c);
bool kr_reduce(kr_ctx *c);
bool kr_matmul(kr_ctx *c);
/* The innermost loop's accumulator as an in-order sum of unrolled terms. */
bool kr_sum_terms(kr_ctx *c, LLVMValueRef *phi, LLVMValueRef *latch_value, LLVMValueRef *terms,
                  int *nterms, int *copy_of);

#endif
