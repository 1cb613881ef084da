/* ir_reroll.h: shared by the re-roll pass's files (ir_reroll*.c) only:
 * its expressions, the loop shape it matches, and each file's entry
 * points (the pass itself and its proof are explained in ir_reroll.c). */
#ifndef TW_IR_REROLL_H
#define TW_IR_REROLL_H

#include <stdbool.h>
#include <stdint.h>

#include <llvm-c/Core.h>

#include "arena.h"
#include "ir.h"

#define RR_MAX_TERMS 8
#define RR_MAX_FACTORS 3
#define RR_MAX_KIDS 3
#define RR_MAX_DEPTH 48
#define RR_MAX_EFFECTS 64
#define RR_MAX_PHIS 16
#define RR_MAX_NODES 8192
#define RR_HASH 16384 /* twice RR_MAX_NODES: short probes, never full */
#define RR_MAX_BODY_E 64

typedef enum { RR_ATOM, RR_ITER, RR_POLY, RR_OP } rr_kind;

/* coeff * f[0] * ... * f[nf - 1] (node ids, ascending); nf == 0: constant. */
typedef struct {
  uint64_t coeff;
  int nf;
  int f[RR_MAX_FACTORS];
} rr_term;

/* Zeroed before filling, so that equal nodes compare equal with memcmp. */
typedef struct {
  rr_kind kind;
  LLVMTypeRef ty;
  LLVMValueRef val;     /* ATOM: the value; OP: the callee of a call */
  LLVMBasicBlockRef bb; /* ITER: the loop header */
  LLVMTypeRef aux;      /* OP: GEP source element type */
  int op;               /* OP: LLVMOpcode */
  int nk;
  uint64_t extra;       /* OP: predicate or flags */
  int k[RR_MAX_KIDS];
  int nt;
  rr_term t[RR_MAX_TERMS];
} rr_node;

typedef struct {
  LLVMValueRef from;
  int to;
} rr_memo;

/* A substitution: atom node -> image node. */
typedef struct {
  int from[2 * RR_MAX_EFFECTS + RR_MAX_PHIS], to[2 * RR_MAX_EFFECTS + RR_MAX_PHIS];
  int n;
} rr_subst;

typedef struct {
  LLVMValueRef inst;
  bool is_store;
  int addr, value; /* expressions; value: stores only */
} rr_effect;

/* One L phi: its next value, step (IVs) and role after the loop. */
typedef struct {
  LLVMValueRef phi, init, next;
  int atom;
  bool is_iv;
  int half;            /* IVs: step / 2 */
  LLVMValueRef f_val;  /* the value giving f(phi) in the new loop */
  int f;               /* f(phi) as an expression */
  LLVMValueRef after;  /* its phi in E, or NULL */
} rr_phi;

typedef struct {
  LLVMContextRef ctx;
  LLVMBuilderRef b;
  tw_arena arena;
  ir_cfg cfg;
  ir_dom dom;
  ir_loops lp;
  const ir_loop *loop; /* L */
  rr_node *nodes;
  int nnodes, cap;
  int node_hash[RR_HASH];
  rr_memo *memo;
  int nmemo, memo_cap;
  int memo_hash[RR_HASH]; /* memo index + 1 by value */
  bool failed;         /* an expression of L or Q could not be built */
  bool ivs_built;      /* ir_indvar_build ran on lp (ir_reroll_hoist.c) */
  bool restart;        /* a nest was hoisted: the function is analysed again */
  bool exact_traps;    /* false: no range test or kept copy for the offset
                        * a trap names alone (ir_inline.c's trial) */
  bool lane_ops;       /* expressions of vector lane operations (insert,
                        * extract, shuffle) too: ir_reroll_copies.c only */
  unsigned rerolled;
} rr_pass;

typedef struct {
  LLVMBasicBlockRef H, P, L, X, E, Q, J; /* P, X: NULL when absent */
  LLVMBasicBlockRef HE, EJ; /* E's pred on the bypass (H or an empty arm), J's from E */
  LLVMBasicBlockRef pre, out; /* L's entry and exit blocks */
  bool const_end;           /* the exit test compares with a constant: no Q */
  LLVMValueRef end;         /* const_end: that constant */
  int e_side;               /* the successor of H's branch towards E */
  LLVMValueRef x, M;                     /* M = x & mask, the old exit value */
  uint64_t mask;
  rr_phi phis[RR_MAX_PHIS];
  int nphis, counter;
  rr_effect eff[2 * RR_MAX_EFFECTS], qeff[RR_MAX_EFFECTS];
  int neff, nqeff;
  rr_effect a[RR_MAX_EFFECTS], b[RR_MAX_EFFECTS], qa[RR_MAX_EFFECTS]; /* paired */
  int pos_a[RR_MAX_EFFECTS], pos_b[RR_MAX_EFFECTS], k;
  bool merge;          /* the bypass joins the loop too: Q goes */
  LLVMValueRef hoist[RR_MAX_BODY_E];
  int nhoist;
} rr_shape;

/* ir_reroll_expr.c */
unsigned rr_width(LLVMTypeRef ty);
uint64_t rr_wmask(unsigned w);
uint64_t rr_coeff_div(uint64_t c, unsigned w, uint64_t d);
uint64_t rr_hash_bytes(const void *data, size_t len);
int rr_intern(rr_pass *p, const rr_node *n);
int rr_atom(rr_pass *p, LLVMValueRef v);
int rr_make_poly(rr_pass *p, LLVMTypeRef ty, rr_term *t, int nt);
int rr_terms_of(const rr_pass *p, int id, rr_term *out);
int rr_poly_const(rr_pass *p, LLVMTypeRef ty, uint64_t c);
int rr_poly_add(rr_pass *p, LLVMTypeRef ty, int a, int b, uint64_t scale);
int rr_poly_mul(rr_pass *p, LLVMTypeRef ty, int a, int b);
bool rr_const_of(const rr_pass *p, int id, uint64_t *c);
int rr_op_node(rr_pass *p, LLVMValueRef inst, const int *kids, int nk, uint64_t extra,
               LLVMValueRef callee);

/* ir_reroll_eval.c */
bool rr_in_loop(const rr_pass *p, LLVMValueRef v);
bool rr_pure_intrinsic(LLVMValueRef callee);
uint64_t rr_flags_of(LLVMValueRef inst, LLVMOpcode op);
int rr_eval_inst(rr_pass *p, LLVMValueRef v, int depth);
int rr_eval(rr_pass *p, LLVMValueRef v, int depth);
int rr_subst_apply(rr_pass *p, int id, const rr_subst *s, int depth);
bool rr_mentions(const rr_pass *p, int id, int what, int depth);
void rr_subst_add(rr_subst *s, int from, int to);
bool rr_varies(const rr_pass *p, int id, int depth);
int rr_bool_at(LLVMValueRef v, LLVMValueRef x, uint64_t xv);
int rr_branch_at(LLVMValueRef br, LLVMValueRef x, uint64_t xv);
bool rr_offset_of(LLVMValueRef v, LLVMValueRef x, uint64_t *k);
LLVMValueRef rr_strip_bool(LLVMValueRef v, bool *negated);
LLVMValueRef rr_and_const(LLVMValueRef v, uint64_t *c);
bool rr_listed(LLVMValueRef *list, int n, LLVMValueRef v);
bool rr_in_block(LLVMValueRef v, LLVMBasicBlockRef bb);
int rr_icmp_holds(LLVMIntPredicate pred, uint64_t a, uint64_t b, unsigned w);

/* ir_reroll_shape.c */
LLVMValueRef rr_cond_br(LLVMBasicBlockRef bb);
/* The instructions a rewrite keeps (ir_reroll.c), shared with ir_reroll_rem.c */
#define RR_MAX_BODY 1024
typedef struct {
  LLVMValueRef v[RR_MAX_BODY];
  int n;
} rr_set;
bool rr_set_has(const rr_set *set, LLVMValueRef v);
/* CFG helpers (ir_reroll_shape.c), shared with ir_reroll_rem.c */
int rr_bb_index(const rr_pass *p, LLVMBasicBlockRef bb);
int rr_npreds(const rr_pass *p, LLVMBasicBlockRef bb);
LLVMBasicBlockRef rr_pred0(const rr_pass *p, LLVMBasicBlockRef bb);
LLVMBasicBlockRef rr_jump_target(LLVMBasicBlockRef bb);
LLVMBasicBlockRef rr_trivial_target(LLVMBasicBlockRef bb);
bool rr_match_loop(rr_pass *p, rr_shape *s);
bool rr_match_blocks(rr_pass *p, rr_shape *s);
bool rr_collect_effects(rr_pass *p, LLVMBasicBlockRef bb, rr_effect *eff, int cap, int *n);
bool rr_same_access(rr_pass *p, const rr_effect *a, const rr_effect *b, const rr_subst *s);
bool rr_same_access_at(rr_pass *p, const rr_effect *a, const rr_effect *b, const rr_subst *s, int a_addr, int b_addr);
bool rr_match_phis(rr_pass *p, rr_shape *s);
bool rr_match_exit(rr_pass *p, rr_shape *s);
bool rr_counts_agree(rr_pass *p, const rr_shape *s);
bool rr_never_enters(const rr_pass *p, LLVMBasicBlockRef H, int e_side, LLVMValueRef x, uint64_t xv);

/* ir_reroll_proof.c */
bool rr_prove_halves(rr_pass *p, rr_shape *s);
bool rr_prove_tail(rr_pass *p, rr_shape *s, LLVMValueRef *jphi_of);
bool rr_uses_confined(rr_pass *p, rr_shape *s);
bool rr_bypass_joins(const rr_shape *s);

/* ir_reroll_rem.c: unrolled by 4..32 with a remainder loop */
bool rr_try_remainder(rr_pass *p);

/* ir_reroll_canon.c: counters put in ir_reroll_rem.c's form (exact) */
bool rr_canon_negated(rr_pass *p, LLVMBasicBlockRef L, LLVMBasicBlockRef pre);
unsigned rr_canon_switches(rr_pass *p, LLVMValueRef fn);
typedef struct {
  LLVMValueRef cmp, v, z, phi, next;
  unsigned side;
} rr_undo;
bool rr_canon_down(rr_pass *p, LLVMBasicBlockRef L, LLVMBasicBlockRef pre, rr_undo *undo);
void rr_canon_undo(const rr_undo *u);
bool rr_canon_scaled_rest(rr_pass *p, LLVMBasicBlockRef R, LLVMBasicBlockRef rpre, LLVMValueRef x, unsigned F);
/* ir_reroll_order.c: the version for stores of one trip out of order */
bool rr_disjoint_copies(rr_pass *p, LLVMValueRef s0, LLVMValueRef s1, unsigned F);
int rr_folded_addr(rr_pass *p, LLVMValueRef inst, uint64_t *c);
bool rr_walk_copies(rr_pass *p, const LLVMValueRef *insts, unsigned F);
LLVMValueRef rr_range_test(rr_pass *p, const rr_effect *eff, int n, const uint64_t *floor, const rr_subst *step,
                           LLVMBasicBlockRef L, LLVMBasicBlockRef pre, LLVMValueRef trips);
/* A range test is built in a block of its own (rr_test_begin: the
 * builder at its end), then, if it was built (ok not NULL), moved before
 * `at` (the builder left there); the block is deleted either way.
 * rr_test_end: whether ok was built. */
LLVMBasicBlockRef rr_test_begin(rr_pass *p, LLVMBasicBlockRef L);
bool rr_test_end(rr_pass *p, LLVMBasicBlockRef T, LLVMValueRef ok, LLVMValueRef at);
LLVMBasicBlockRef rr_clone_loop(rr_pass *p, LLVMBasicBlockRef L, LLVMBasicBlockRef pre, LLVMBasicBlockRef V,
                                LLVMBasicBlockRef E, LLVMBasicBlockRef *exit, LLVMValueRef *from, LLVMValueRef *to,
                                int cap, int *n_map);
uint64_t rr_access_bytes(LLVMValueRef inst);
bool rr_const_diff(rr_pass *p, int a, int b, int64_t *d);
LLVMValueRef rr_at_entry(rr_pass *p, LLVMValueRef v, LLVMBasicBlockRef L, LLVMBasicBlockRef pre);
bool rr_split_address(LLVMValueRef ptr, LLVMValueRef *a, uint64_t *c);
/* ir_reroll_hoist.c: the range test of a loop inside a nest, before the
 * nest, the nest cloned as the checked copy; false: nothing changed */
bool rr_hoist_test(rr_pass *p, const rr_effect *eff, int n, const uint64_t *floor, const rr_subst *step,
                   LLVMBasicBlockRef L, LLVMBasicBlockRef pre, LLVMBasicBlockRef rest, LLVMValueRef x,
                   uint64_t end_mask, LLVMValueRef init);
/* Whether L's nest already stands behind L's hoisted test (its back
 * branch marked by rr_hoist_test): L is then re-rolled without another
 * version, on a CFG analysed again (the hoist changes the function, so
 * the pass starts over after it). */
bool rr_hoisted(LLVMBasicBlockRef L);
/* ir_reroll.c: forgets the expressions (after a rewrite of the IR) */
void rr_reset(rr_pass *p);

/* ir_reroll_full.c: a sum unrolled completely, re-rolled into a loop */
bool rr_try_full(rr_pass *p, LLVMValueRef fn);

/* ir_reroll_copies.c: a loop of loops unrolled completely, re-rolled */
bool rr_try_copies(rr_pass *p, LLVMValueRef fn);

/* ir_reroll_vec.c: a vector loop unrolled completely, re-rolled */
bool rr_try_vec(rr_pass *p, LLVMValueRef fn);

/* ir_reroll_walk.c: two copies of one expression walked in parallel, and
 * a loop body built from copy 0 (ir_reroll_full.c, ir_reroll_vec.c) */
#define RR_CWALK_MAX 128 /* nodes, leaves and shared values of one copy */
typedef enum { RR_C_NODE, RR_C_LEAF, RR_C_SHARED } rr_ckind;
typedef struct {
  rr_ckind kind;
  LLVMValueRef ref, copy;
  uint64_t d; /* LEAF: copy - ref */
} rr_cevent;
typedef struct {
  rr_cevent ev[RR_CWALK_MAX];
  int n;
} rr_cwalk;
/* copy 0's values -> the new loop's (leaf phis, cloned nodes) */
typedef struct {
  LLVMValueRef from[RR_CWALK_MAX], to[RR_CWALK_MAX], next[RR_CWALK_MAX];
  int leaf_of[RR_CWALK_MAX];
  int n, nleaves;
} rr_cbody;
bool rr_cwalk_pair(rr_pass *p, LLVMBasicBlockRef bb, LLVMValueRef r, LLVMValueRef c, rr_cwalk *w, bool vector);
bool rr_cwalk_add_node(rr_cwalk *w, LLVMValueRef v);
bool rr_cwalk_consistent(const rr_cwalk *w);
bool rr_cwalk_scaled(const rr_cwalk *first, const rr_cwalk *w, int g);
bool rr_cwalk_has_node(const rr_cwalk *w);
LLVMValueRef rr_cbody_map(const rr_cbody *body, LLVMValueRef v);
void rr_cbody_build(rr_pass *p, LLVMBasicBlockRef bb, const rr_cwalk *first, rr_cbody *body);
void rr_cbody_step(rr_pass *p, const rr_cwalk *first, rr_cbody *body);
void rr_cbody_close(const rr_cwalk *first, rr_cbody *body, LLVMBasicBlockRef bb, LLVMBasicBlockRef latch);
void rr_cloop_open(rr_pass *p, LLVMBasicBlockRef bb, LLVMValueRef from, const char *name, const char *after,
                   LLVMBasicBlockRef *body, LLVMBasicBlockRef *rest);
void rr_cloop_retarget(LLVMBasicBlockRef bb, LLVMBasicBlockRef rest);

#endif
