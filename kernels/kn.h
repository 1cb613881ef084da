/* kn.h: loop analyses over optimised LLVM IR (CFG, dominators, loops,
 * induction variables, affine memory accesses) for the tensor detector. */
#ifndef TW_KN_H
#define TW_KN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>

#include "arena.h"

/* ---- CFG (kn_cfg.c) ------------------------------------------------------ */

/* Blocks reachable from the entry, numbered in reverse post-order: the entry
 * is 0 and every forward edge goes from a lower to a higher number. */
typedef struct {
  LLVMBasicBlockRef bb;
  int *preds, npreds; /* reachable predecessors only */
  int *succs, nsuccs;
} kn_block;

typedef struct {
  tw_arena *arena;
  LLVMValueRef fn;
  int nblocks;
  kn_block *blocks;
  LLVMBasicBlockRef *map_keys; /* open-addressing map bb -> number */
  int *map_vals;
  unsigned map_cap;
} kn_cfg;

/* False for a declaration (no body). */
bool kn_cfg_build(kn_cfg *cfg, tw_arena *a, LLVMValueRef fn);
/* -1 for a block that is unreachable or not in the function. */
int kn_cfg_index(const kn_cfg *cfg, LLVMBasicBlockRef bb);

/* ---- Dominators (kn_dom.c) ------------------------------------------------ */

typedef struct {
  const kn_cfg *cfg;
  int *idom;          /* idom[0] == 0 */
  int *pre, *post;    /* dominator-tree DFS interval, for O(1) queries */
} kn_dom;

void kn_dom_build(kn_dom *dom, const kn_cfg *cfg);
/* a dominates b (reflexive); both are block numbers. */
bool kn_dominates(const kn_dom *dom, int a, int b);

/* ---- Natural loops (kn_loops.c) ---------------------------------------- */

typedef struct kn_loop kn_loop;
typedef struct kn_iv kn_iv;

typedef struct {
  int from, to; /* from is in the loop, to is not */
} kn_edge;

typedef enum { KN_TRIP_NONE, KN_TRIP_CONST, KN_TRIP_SYMBOLIC } kn_trip_kind;

/* How many times the header runs (LLVM's "trip count": back edges taken + 1),
 * from one exit test `x pred bound` that keeps the loop going while true,
 * where x is the IV (or the IV's next value when cmp_next) in `bits` wide
 * arithmetic.  SYMBOLIC keeps the values so the runtime can evaluate it with
 * kn_trip_eval from live start and bound. */
typedef struct {
  kn_trip_kind kind;
  uint64_t count;          /* KN_TRIP_CONST */
  const kn_iv *iv;
  LLVMValueRef start, bound;
  int64_t step;
  LLVMIntPredicate pred;   /* stay in the loop while `x pred bound` */
  bool cmp_next;
  int64_t start_add;       /* x is the IV (or next) plus this constant: the
                            * compared values count from start + start_add */
  unsigned bits;
  kn_edge exit;            /* the edge this test takes out of the loop */
  bool other_exits;        /* count is then an upper bound */
} kn_trip;

struct kn_iv {
  const kn_loop *loop;
  LLVMValueRef phi, start, next;
  int64_t step;
  LLVMValueRef step_inv;   /* non-NULL: the step is this value, invariant in
                            * the loop (step is then 0); never a trip IV */
  bool nsw, nuw;           /* the increment's no-wrap flags (of every add,
                            * when next is a phi joining several) */
  unsigned bits;
};

struct kn_loop {
  int header;
  int *latches, nlatches;
  int *body, nbody;        /* block numbers, ascending (header first) */
  uint8_t *in_body;        /* indexed by block number */
  kn_edge *exits;
  int nexits;
  int preheader;           /* -1 unless one outside pred branching only here */
  kn_loop *parent;
  kn_loop **children;
  int nchildren, depth;    /* outermost loops have depth 1 */
  kn_iv *ivs;              /* filled by kn_indvar_build */
  int nivs;
  kn_trip trip;
};

typedef struct {
  const kn_cfg *cfg;
  kn_loop **loops;         /* outer before inner (header RPO order) */
  int nloops;
  kn_loop **roots;
  int nroots;
  kn_loop **innermost;     /* per block number, NULL outside every loop */
} kn_loops;

void kn_loops_build(kn_loops *lp, const kn_cfg *cfg, const kn_dom *dom);
bool kn_loop_contains_block(const kn_loop *l, LLVMBasicBlockRef bb, const kn_cfg *cfg);
/* Defined inside l: an instruction whose block is in l's body. */
bool kn_loop_defines(const kn_loop *l, LLVMValueRef v, const kn_cfg *cfg);

/* ---- Induction variables and trip counts (kn_indvar.c, kn_trip.c) ----- */

void kn_indvar_build(kn_loops *lp, const kn_dom *dom);
/* The predicate that holds for (b, a) when p holds for (a, b). */
LLVMIntPredicate kn_swapped_pred(LLVMIntPredicate p);
/* The IV of l (or of a loop enclosing l) whose phi is v, else NULL. */
const kn_iv *kn_iv_of(const kn_loop *l, LLVMValueRef v);
/* Trip count for live start/bound values (sign-extended or zero-extended,
 * only the low `bits` matter); false when the loop never leaves by this
 * test or the count passes INT64_MAX. */
bool kn_trip_eval(const kn_trip *t, int64_t start, int64_t bound, uint64_t *count);
/* The test of t as twasm_rt_trip_count's `how` argument. */
uint32_t kn_trip_how(const kn_trip *t);

/* ---- Affine expressions and accesses (kn_affine.c, kn_access.c) ------- */

#define KN_AFFINE_MAX_TERMS 8

/* coeff * iv * inv, where iv and inv may each be absent (NULL). */
typedef struct {
  int64_t coeff;
  const kn_iv *iv;
  LLVMValueRef inv;        /* loop-invariant atom: argument or outside value */
} kn_term;

typedef struct {
  bool ok;                 /* false: not affine in the nest's IVs */
  bool may_wrap;           /* a zext/sext was taken through without proof */
  int64_t constant;
  int nterms;
  kn_term terms[KN_AFFINE_MAX_TERMS];
} kn_affine;

/* Decomposes an integer value inside nest (any loop of it) over the IVs of
 * nest and its enclosing loops; td sizes GEP elements. */
kn_affine kn_affine_of(LLVMValueRef v, const kn_loop *nest, const kn_cfg *cfg,
                       LLVMTargetDataRef td);
/* Splits a pointer into the value its GEP chain starts from (*base) and a
 * byte offset; not ok when the base itself changes inside the nest. */
kn_affine kn_address_of(LLVMValueRef ptr, const kn_loop *nest, const kn_cfg *cfg,
                        LLVMTargetDataRef td, LLVMValueRef *base);
/* coeff of the term (iv, inv); 0 when absent. */
int64_t kn_affine_coeff(const kn_affine *a, const kn_iv *iv, LLVMValueRef inv);

typedef struct {
  LLVMValueRef insn;
  bool is_store;
  LLVMValueRef base;       /* pointer the GEP chain starts from */
  kn_affine offset;        /* bytes from base */
  unsigned size;           /* bytes accessed */
  LLVMTypeRef elem_type;
  const kn_loop *loop;     /* innermost loop holding the access */
} kn_access;

/* Every load and store in nest's body, in block order. */
kn_access *kn_accesses(const kn_loop *nest, const kn_cfg *cfg, LLVMTargetDataRef td,
                       int *count);

/* ---- Debug printing (kn_dump.c), for tests ----------------------------- */

void kn_dump_loops(FILE *out, const kn_loops *lp);
void kn_dump_affine(FILE *out, const kn_affine *a);

#endif
