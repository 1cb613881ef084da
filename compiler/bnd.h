/* bnd.h: exact bounds checks made cheap (guard mode, -O2 and up): loop
 * nests whose checks are affine in the loop counters run a copy without
 * those checks when one test before the nest proves that none can fail. */
#ifndef TW_BND_H
#define TW_BND_H

#include <stdbool.h>

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "arena.h"
#include "diag.h"
#include "ir.h"
#include "ir_pass.h"
#include "wasm.h"

/* The stage (bnd.c): checks added, then (opt_level >= 2) loops versioned. */
bool bnd_module(LLVMModuleRef mod, LLVMTargetMachineRef tm, const wasm_module *m, int opt_level,
                tw_diag *d);

/* Metadata kind on the address of each linear-memory access in guard
 * mode: !{i32 function index, i32 file offset, i32 bytes} (low_memory.c),
 * read by bnd_insert_checks. */
#define BND_MD_ACCESS "twasm.access"

/* Adds before every marked access the exact check explicit mode emits
 * while lowering (to the out-of-bounds trap with the access's offset),
 * except where the address is a constant inside memory's declared
 * minimum size (bnd_insert.c). */
bool bnd_insert_checks(LLVMModuleRef mod, const wasm_module *m);

/* After the last IR pass (bnd_late.c): each check whose own access is
 * the first effect after it is left to the guard pages, the access made
 * volatile behind a labelled barrier whose label maps the code address to
 * the access's file offset (section TWASM_PCMAP_SECTION).  Returns how
 * many checks it removed. */
unsigned bnd_late(LLVMModuleRef mod);

/* Then (bnd_fresh.c): each check left whose size is GVN's phi of sizes
 * loaded on the paths in compares with a load of its own, so that the
 * phis (and the loads in loop latches feeding them) go; returns how many. */
unsigned bnd_fresh_sizes(LLVMValueRef fn);

/* Last (bnd_phifn.c): a phi that is on every edge the same function of
 * another phi of its block (the address and `pc + 1` the checks copied
 * into a loop's entries carried in) becomes that function computed after
 * the phis; phis and values left unused go.  Returns how many. */
unsigned bnd_phi_functions(LLVMValueRef fn);

/* Moves inst to where b is positioned, keeping its name (bnd_insert.c). */
void bnd_move_here(LLVMBuilderRef b, LLVMValueRef inst);

/* Metadata kind on the terminators of a versioned nest's checked copy: the
 * offload stage looks at the unchecked copy only (off.c). */
#define BND_MD_CHECKED IR_MD_CHECKED /* ir_checked_copy reads it */

/* The deepest nest whose checks are proved as one (deeper nests are
 * versioned from an inner loop down). */
#define BND_MAX_LOOPS 8

/* Pointer -> pointer map (open addressing, grows; bnd_clone.c). */
typedef struct {
  tw_arena *arena;
  const void **keys;
  void **vals;
  unsigned cap, count;
} bnd_map;

void bnd_map_put(bnd_map *m, const void *key, void *val);
void *bnd_map_get(const bnd_map *m, const void *key);

/* A value inside a nest as alpha + sum of beta[l] * t[l], where t[l] counts
 * the header runs of the nest's loop l from 0 (a new count at each entry
 * of an inner loop); all i128 values computed in the block before the
 * nest.  The value equals that form modulo 2^width when cond (i1, NULL
 * for true) holds at run time. */
typedef struct {
  LLVMValueRef alpha;
  LLVMValueRef beta[BND_MAX_LOOPS]; /* NULL: 0 */
  LLVMValueRef cond;
} bnd_lin;

/* What bnd_lin_of needs: the nest, its loops in order, where to build. */
typedef struct {
  LLVMBuilderRef b;          /* positioned in the block before the nest */
  LLVMTypeRef i128;
  const ir_cfg *cfg;
  const ir_loop *root;
  const ir_loop *loops[BND_MAX_LOOPS];
  LLVMValueRef last[BND_MAX_LOOPS]; /* i128 trip count - 1 of each loop */
  /* Where reach_step[k] != 0 (bnd_trip.c): at each entry of loop k,
   * t[k] <= max(0, ceil(reach[k] / reach_step[k])), reach[k] affine in the
   * counters of the loops enclosing k (a triangle's inner loop: j from i
   * to n, reach n - i - 1); its conditions are in the trip's */
  bnd_lin reach[BND_MAX_LOOPS];
  int64_t reach_step[BND_MAX_LOOPS];
  bool reach_loose[BND_MAX_LOOPS]; /* the reach may pass the box's bound */
  int nloops;
  bnd_map memo;              /* value -> bnd_lin * already built */
  bool hi_tests;             /* extensions built from now on keep their upper test */
} bnd_nest;

/* With n->hi_tests, each zero extension of an i32 x that bnd_lin_of
 * decomposes keeps the upper half of its condition (form <= 2^32 - 1, an
 * icmp) in n->memo at key (const char *)x + BND_HI_KEY. */
#define BND_HI_KEY 3

/* Decomposes v (an i32 or i64 value used in the nest); false when v is not
 * affine in the nest's counters.  Emits i128 arithmetic at n->b. */
bool bnd_lin_of(bnd_nest *n, LLVMValueRef v, bnd_lin *out);
/* The same for zext(v) of an i32 v, without the zext instruction. */
bool bnd_lin_zext(bnd_nest *n, LLVMValueRef v, bnd_lin *out);
/* The smallest and largest value of l over every t[k] in [0, last[k]]. */
void bnd_lin_range(bnd_nest *n, const bnd_lin *l, LLVMValueRef *lo, LLVMValueRef *hi);
/* lo >= 0 and hi < 2^32, or (is_signed) both within [-2^31, 2^31). */
LLVMValueRef bnd_lin_in32(bnd_nest *n, LLVMValueRef lo, LLVMValueRef hi, bool is_signed);

/* The smallest and largest value of l over the counter values the nest
 * runs: as bnd_lin_range, but a term of a loop with a reach (a triangle's
 * inner loop) is bounded by the reach at each outer counter value rather
 * than by the loop's largest trip over the box (bnd_trip.c). */
void bnd_trip_range(bnd_nest *n, const bnd_lin *l, LLVMValueRef *lo, LLVMValueRef *hi);

/* An upper bound on the counter of nest loop l (header runs less one, at
 * any entry of l) into *last, valid when *cond (NULL: always) holds at
 * run time; false when the exit test gives none (bnd_trip.c).  Needs the
 * bounds of the loops enclosing l in n->last. */
bool bnd_trip_last(bnd_nest *n, const ir_loop *l, LLVMValueRef *last, LLVMValueRef *cond);

/* A conditional branch to an out-of-bounds trap: trap iff
 * `end + plus > size`, with size a load of the memory's size (compared in
 * i64, or truncated to i32 against an i32 end: narrow). */
typedef struct {
  LLVMValueRef br;
  unsigned trap_succ;        /* successor index taken when it traps */
  LLVMValueRef end;
  int64_t plus;
  bool narrow;
  LLVMValueRef size_load;
} bnd_check;

/* Whether bb calls the out-of-bounds trap, maybe past blocks that only
 * compute and branch on (a group's `bounds_which`). */
bool bnd_is_oob_trap(LLVMBasicBlockRef bb);

/* Whether the terminator br is such a check (fills c). */
bool bnd_check_match(LLVMValueRef br, bnd_check *c);

/* A web of phis (loops' cycles too): v itself when no phi, else every
 * value entering v or a phi it reaches through phis, up to max_phis phis
 * (at most BND_MAX_WEB), passes leaf(ctx, value), which sees them in
 * breadth-first order (bnd_check.c).  For GVN's phis of one value loaded
 * on several paths (the memory's size, its base). */
#define BND_MAX_WEB 256
typedef bool (*bnd_leaf_fn)(void *ctx, LLVMValueRef v);
bool bnd_phi_web(LLVMValueRef v, unsigned max_phis, bnd_leaf_fn leaf, void *ctx);

/* Whether v is GVN's phi of sizes on the paths into its block: through
 * phis, size loads less one constant (*less; *like: one of the loads). */
bool bnd_size_web(LLVMValueRef v, int64_t *less, LLVMValueRef *like);
/* Whether v is one load of the memory's size (not a phi). */
bool bnd_is_size_load(LLVMValueRef v);

/* Metadata kind on the branch of a versioned nest's check block, whose
 * test may read the size anywhere before the nest (bnd_fresh.c). */
#define BND_MD_TEST "twasm.bnd.test"

/* The i32 add a check's end is, or is zext of (plus a constant), or NULL. */
LLVMValueRef bnd_widen_sum(const bnd_check *c);
/* The check's constant past its end's base (offset and width: `plus`, and
 * the end's constant where the end is `base + k`); *base the end less that
 * constant (a narrow end is the i32 base itself).  The check's test
 * hi_end <= size (size <= 2^32) bounds the base's form by 2^32 - d. */
int64_t bnd_end_past(const bnd_check *c, LLVMValueRef *base);
/* For a check proved over nest n whose end is such an add in the nest: the
 * run-time condition under which zext(end) equals the i64 sum of its
 * operands, each zero- or sign-extended (bit k of *sext: operand k is
 * sign-extended), throughout the nest; NULL where there is none or it is
 * false (bnd_widen.c). */
LLVMValueRef bnd_widen_cond(bnd_nest *n, const bnd_check *c, unsigned *sext);
#define BND_WIDENED 4u
/* In the unchecked copy, where that condition holds: each zext to i64 of
 * the copy of such an add becomes the i64 sum; returns how many. */
unsigned bnd_widen_uses(LLVMBuilderRef b, LLVMValueRef add, unsigned sext);

/* Rewrites a check block's i128 arithmetic in i64 where every value of
 * it provably lies within [-2^62, 2^62] (bnd_narrow.c); whether it did. */
bool bnd_narrow_block(LLVMBasicBlockRef bb);

/* Whether v is the constant false (a condition that never holds). */
static inline bool bnd_is_false(LLVMValueRef v) {
  return LLVMIsAConstantInt(v) && LLVMConstIntGetZExtValue(v) == 0;
}

/* Extracted lanes of vector induction variables become scalar
 * induction variables (bnd_lane.c), so that the checks of the accesses
 * at them are affine; returns how many. */
unsigned bnd_scalar_lanes(LLVMModuleRef mod);

/* The pass over a module (bnd_loop.c): returns how many nests it versioned. */
unsigned bnd_version_loops(LLVMModuleRef mod);

/* Clones the blocks of a region (bnd_clone.c); see there. */
typedef struct {
  LLVMBasicBlockRef *blocks; /* the region, and each block's copy */
  LLVMBasicBlockRef *copies;
  int nblocks;
  bnd_map map;               /* original value or block (as value) -> copy */
} bnd_clone;

/* Copies the blocks (to the end of the function), their instructions and
 * phis, uses inside the region mapped to the copies; edges leaving the
 * region stay unregistered in the phis outside until bnd_clone_exits. */
void bnd_clone_region(bnd_clone *c, tw_arena *a, LLVMBasicBlockRef *blocks, int nblocks);
/* The copy of v, or v itself when defined outside the region. */
LLVMValueRef bnd_clone_value(const bnd_clone *c, LLVMValueRef v);
/* Adds the copies' edges out of the region to the phis they enter, with
 * the incoming value of the corresponding original edge. */
void bnd_clone_exits(bnd_clone *c);

#endif
