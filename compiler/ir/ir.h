/* ir.h: loop analyses over optimised LLVM IR (CFG, dominators, loops,
 * induction variables, affine memory accesses) for the tensor detector. */
#ifndef TW_IR_H
#define TW_IR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>

#include "arena.h"

/* ---- CFG (ir_cfg.c) ------------------------------------------------------ */

/* Blocks reachable from the entry, numbered in reverse post-order: the entry
 * is 0 and every forward edge goes from a lower to a higher number. */
typedef struct {
  LLVMBasicBlockRef bb;
  int *preds, npreds; /* reachable predecessors only */
  int *succs, nsuccs;
} ir_block;

typedef struct {
  tw_arena *arena;
  LLVMValueRef fn;
  int nblocks;
  ir_block *blocks;
  LLVMBasicBlockRef *map_keys; /* open-addressing map bb -> number */
  int *map_vals;
  unsigned map_cap;
} ir_cfg;

/* False for a declaration (no body). */
bool ir_cfg_build(ir_cfg *cfg, tw_arena *a, LLVMValueRef fn);
/* -1 for a block that is unreachable or not in the function. */
int ir_cfg_index(const ir_cfg *cfg, LLVMBasicBlockRef bb);
/* Whether every path from block b ends in `unreachable` (no return, no
 * cycle, at most 64 blocks) with a call on the way (the report before the
 * abort: C's __assert_fail, AssemblyScript's abort), not a bare trap
 * (ir_noreturn.c). */
bool ir_noreturn_call(const ir_cfg *cfg, int b);

/* ---- Dominators (ir_dom.c) ------------------------------------------------ */

typedef struct {
  const ir_cfg *cfg;
  int *idom;          /* idom[0] == 0 */
  int *pre, *post;    /* dominator-tree DFS interval, for O(1) queries */
} ir_dom;

void ir_dom_build(ir_dom *dom, const ir_cfg *cfg);
/* a dominates b (reflexive); both are block numbers. */
bool ir_dominates(const ir_dom *dom, int a, int b);

/* ---- Natural loops (ir_loops.c) ---------------------------------------- */

typedef struct ir_loop ir_loop;
typedef struct ir_iv ir_iv;

typedef struct {
  int from, to; /* from is in the loop, to is not */
} ir_edge;

typedef enum { IR_TRIP_NONE, IR_TRIP_CONST, IR_TRIP_SYMBOLIC } ir_trip_kind;

/* How many times the header runs (LLVM's "trip count": back edges taken + 1),
 * from one exit test `x pred bound` that keeps the loop going while true,
 * where x is the IV (or the IV's next value when cmp_next) in `bits` wide
 * arithmetic.  SYMBOLIC keeps the values so the runtime can evaluate it with
 * ir_trip_eval from live start and bound. */
typedef struct {
  ir_trip_kind kind;
  uint64_t count;          /* IR_TRIP_CONST */
  const ir_iv *iv;
  LLVMValueRef start, bound;
  int64_t step;
  LLVMIntPredicate pred;   /* stay in the loop while `x pred bound` */
  bool cmp_next;
  int64_t start_add;       /* x is the IV (or next) plus this constant: the
                            * compared values count from start + start_add */
  unsigned bits;
  ir_edge exit;            /* the edge this test takes out of the loop */
  bool other_exits;        /* count is then an upper bound */
} ir_trip;

struct ir_iv {
  const ir_loop *loop;
  LLVMValueRef phi, start, next;
  int64_t step;
  LLVMValueRef step_inv;   /* non-NULL: the step is this value, invariant in
                            * the loop (step is then 0); never a trip IV */
  bool nsw, nuw;           /* the increment's no-wrap flags (of every add,
                            * when next is a phi joining several) */
  unsigned bits;
};

struct ir_loop {
  int header;
  int *latches, nlatches;
  int *body, nbody;        /* block numbers, ascending (header first) */
  uint8_t *in_body;        /* indexed by block number */
  ir_edge *exits;
  int nexits;
  int preheader;           /* -1 unless one outside pred branching only here */
  ir_loop *parent;
  ir_loop **children;
  int nchildren, depth;    /* outermost loops have depth 1 */
  ir_iv *ivs;              /* filled by ir_indvar_build */
  int nivs;
  ir_trip trip;
};

typedef struct {
  const ir_cfg *cfg;
  ir_loop **loops;         /* outer before inner (header RPO order) */
  int nloops;
  ir_loop **roots;
  int nroots;
  ir_loop **innermost;     /* per block number, NULL outside every loop */
  /* set before ir_indvar_build: an exit to a guard (ir_noreturn_call: a
   * call, then `unreachable`) takes no trip test, as a trap's does not
   * (the offload recogniser's guard exits, kernels/kn_recog_guard.c);
   * left false elsewhere, where it would move the bounds pass's tests */
  bool guard_exits;
} ir_loops;

void ir_loops_build(ir_loops *lp, const ir_cfg *cfg, const ir_dom *dom);
bool ir_loop_contains_block(const ir_loop *l, LLVMBasicBlockRef bb, const ir_cfg *cfg);
/* Defined inside l: an instruction whose block is in l's body. */
bool ir_loop_defines(const ir_loop *l, LLVMValueRef v, const ir_cfg *cfg);
/* Whether an instruction of l's body has a vector type: a v128 loop
 * (clang's loop vectoriser, -msimd128). */
bool ir_loop_has_vectors(const ir_cfg *cfg, const ir_loop *l);
/* Whether l is (in) a checked copy (IR_MD_CHECKED, ir_pass.h): its
 * header's terminator marked or its latch's.  The bounds pass splits a
 * copy's headers and LICM leaves new ones, so a loop's header alone may
 * carry no mark while its latch does (ir_hold.c).  The one test every
 * stage asks. */
bool ir_loop_checked(const ir_cfg *cfg, const ir_loop *l);

/* ---- Induction variables and trip counts (ir_indvar.c, ir_trip.c) ----- */

void ir_indvar_build(ir_loops *lp, const ir_dom *dom);
/* The predicate that holds for (b, a) when p holds for (a, b). */
LLVMIntPredicate ir_swapped_pred(LLVMIntPredicate p);
/* The predicate that holds for (a, b) exactly when p does not. */
LLVMIntPredicate ir_inverse_pred(LLVMIntPredicate p);
/* The IV of l (or of a loop enclosing l) whose phi is v, else NULL. */
const ir_iv *ir_iv_of(const ir_loop *l, LLVMValueRef v);
/* Trip count for live start/bound values (sign-extended or zero-extended,
 * only the low `bits` matter); false when the loop never leaves by this
 * test or the count passes INT64_MAX. */
bool ir_trip_eval(const ir_trip *t, int64_t start, int64_t bound, uint64_t *count);
/* The test of t as twasm_rt_trip_count's `how` argument. */
uint32_t ir_trip_how(const ir_trip *t);

/* ---- Affine expressions and accesses (ir_affine.c, ir_access.c) ------- */

#define IR_AFFINE_MAX_TERMS 8

/* coeff * iv * inv, where iv and inv may each be absent (NULL). */
typedef struct {
  int64_t coeff;
  const ir_iv *iv;
  LLVMValueRef inv;        /* loop-invariant atom: argument or outside value */
} ir_term;

typedef struct {
  bool ok;                 /* false: not affine in the nest's IVs */
  bool may_wrap;           /* a zext/sext was taken through without proof */
  int64_t constant;
  int nterms;
  ir_term terms[IR_AFFINE_MAX_TERMS];
} ir_affine;

/* Decomposes an integer value inside nest (any loop of it) over the IVs of
 * nest and its enclosing loops; td sizes GEP elements. */
ir_affine ir_affine_of(LLVMValueRef v, const ir_loop *nest, const ir_cfg *cfg,
                       LLVMTargetDataRef td);
/* Splits a pointer into the value its GEP chain starts from (*base) and a
 * byte offset; not ok when the base itself changes inside the nest. */
ir_affine ir_address_of(LLVMValueRef ptr, const ir_loop *nest, const ir_cfg *cfg,
                        LLVMTargetDataRef td, LLVMValueRef *base);
/* coeff of the term (iv, inv); 0 when absent. */
int64_t ir_affine_coeff(const ir_affine *a, const ir_iv *iv, LLVMValueRef inv);
/* Whether v is integer arithmetic that cannot trap, which a host may
 * compute again from its operands: a compare, a select, an extension or
 * truncation, a binary operator other than a division or remainder. */
bool ir_int_step_pure(LLVMValueRef v);
/* Whether v, an instruction of block head, is such arithmetic on values
 * from before head or on other such values of head (ir_head_hoist.c). */
bool ir_head_hoistable(LLVMValueRef v, LLVMBasicBlockRef head);
/* Moves v (ir_head_hoistable), after those of its operands in head, to
 * where the builder `before` stands. */
void ir_head_hoist(LLVMValueRef v, LLVMBasicBlockRef head, LLVMBuilderRef before);

typedef struct {
  LLVMValueRef insn;
  bool is_store;
  LLVMValueRef base;       /* pointer the GEP chain starts from */
  ir_affine offset;        /* bytes from base */
  unsigned size;           /* bytes accessed */
  LLVMTypeRef elem_type;
  const ir_loop *loop;     /* innermost loop holding the access */
} ir_access;

/* Every load and store in nest's body, in block order. */
ir_access *ir_accesses(const ir_loop *nest, const ir_cfg *cfg, LLVMTargetDataRef td,
                       int *count);

/* ---- Calls ---------------------------------------------------------------- */

/* The name of the function a call calls directly; "" for an indirect call
 * (a callee that is not a function) or an instruction with no callee. */
static inline const char *ir_callee_name(LLVMValueRef call) {
  LLVMValueRef callee = LLVMIsACallInst(call) ? LLVMGetCalledValue(call) : NULL;
  size_t len;
  return callee && LLVMIsAFunction(callee) ? LLVMGetValueName2(callee, &len) : "";
}

/* The lowering names the LLVM function of Wasm function i `wasm_f<i>`,
 * or `wasm_f<i>_<name>` with a name section (low_module.c). */
#define IR_WASM_FN "wasm_f"

/* The Wasm function index of a function the lowering defined, else -1. */
static inline int64_t ir_wasm_index(LLVMValueRef fn) {
  size_t len, at = sizeof IR_WASM_FN - 1;
  const char *name = LLVMGetValueName2(fn, &len);
  if (len <= at || strncmp(name, IR_WASM_FN, at) != 0) return -1;
  int64_t idx = 0;
  size_t i = at;
  for (; i < len && name[i] >= '0' && name[i] <= '9' && idx <= UINT32_MAX; i++) idx = idx * 10 + (name[i] - '0');
  return i > at && idx <= UINT32_MAX && (i == len || name[i] == '_') ? idx : -1;
}

/* ---- Phis ------------------------------------------------------------------ */

/* The value phi takes on the edge from block `from`, or NULL. */
static inline LLVMValueRef ir_incoming_from(LLVMValueRef phi, LLVMBasicBlockRef from) {
  for (unsigned k = 0, n = LLVMCountIncoming(phi); k < n; k++)
    if (LLVMGetIncomingBlock(phi, k) == from) return LLVMGetIncomingValue(phi, k);
  return NULL;
}

/* ---- Debug printing (ir_dump.c), for tests ----------------------------- */

void ir_dump_loops(FILE *out, const ir_loops *lp);
void ir_dump_affine(FILE *out, const ir_affine *a);

#endif
