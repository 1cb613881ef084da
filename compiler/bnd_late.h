/* bnd_late.h: what the late stage's files share (bnd_late.c, the checks
 * left to the guard pages; bnd_group.c, a group's check; bnd_pair.c, a
 * guarded byte paired with the byte before it; bnd_fold.c, a guarded
 * load left plain for its compare; bnd_unversion.c, a versioning test
 * that buys nothing).  Internal to them. */
#ifndef TW_BND_LATE_H
#define TW_BND_LATE_H

#include <stdint.h>

#include "bnd.h"

typedef struct {
  LLVMContextRef ctx;
  LLVMBuilderRef b;
  LLVMTargetDataRef td;
  LLVMTypeRef asm_type;
  LLVMValueRef barrier;      /* the asm without a label */
  unsigned memory_kind, willreturn_kind;
  LLVMValueRef fn;
  LLVMValueRef *marked;      /* accesses given to the guard pages */
  unsigned nmarked, cap;
  LLVMValueRef *pinned;      /* checks that prove loads left before accesses */
  unsigned npinned;
  LLVMValueRef self;         /* the check being looked at: no proof for its own loads */
  tw_arena arena;            /* the function's CFG and dominators, built at first need */
  ir_cfg cfg;
  ir_dom dom;
  int dom_state;             /* 0 not built, 1 built, -1 failed */
} late_ctx;

/* ---- bnd_late.c ---- */

/* Computes a value and nothing else. */
bool late_pure(const late_ctx *c, LLVMValueRef i);
/* A load that cannot fault on a guard page (the instance's own
 * structures, a constant global, the frame). */
bool late_safe_load(const late_ctx *c, LLVMValueRef i);
/* A store nobody can see after a trap: to the frame. */
bool late_frame_store(LLVMValueRef i);
/* v as x + k (adds of constants peeled; i32 adds only with nuw). */
LLVMValueRef late_peel(LLVMValueRef v, int64_t *k);
/* A linear-memory access's address as mem_base + index + k, index an i64
 * value (NULL: none); false for other forms. */
bool late_split_address(const late_ctx *c, LLVMValueRef p, LLVMValueRef *index, int64_t *k);
/* Where access i ends: mem_base + *index + *end (index NULL: none). */
bool late_access_end(const late_ctx *c, LLVMValueRef i, LLVMValueRef *index, int64_t *end);
/* Whether load i cannot fault: an access before it, or a check kept in
 * place (pinned by this) on a way on that dominates it, covers its end. */
bool late_anchored(late_ctx *c, LLVMValueRef load);
/* Whether check br is pinned (proves a load left before an access). */
bool late_is_pinned(const late_ctx *c, LLVMValueRef br);
/* Whether term is the only branch into `to`. */
bool late_only_from(LLVMBasicBlockRef to, LLVMValueRef term);
/* The value v has on the edge from `from` into its block's join. */
LLVMValueRef late_on_edge(LLVMValueRef v, LLVMBasicBlockRef join, LLVMBasicBlockRef from);
/* A vector store of a loaded value (X86 may split the copy). */
bool late_copies_vector(LLVMValueRef i);
/* Deletes v and then the operands it alone used, while each computes a
 * value only. */
void late_erase_dead(const late_ctx *c, LLVMValueRef v);

/* ---- bnd_group.c: a group's check ---- */

#define LATE_MAX_GROUP 8

typedef struct {
  int n;
  int64_t end[LATE_MAX_GROUP];     /* each access's end past the index */
  uint32_t offset[LATE_MAX_GROUP]; /* and its trap offset */
} late_group;

/* The accesses of the group check br guards, in order (acc[]), when they
 * are the first effects of its continuation; 0 when not. */
int late_group_guarded(late_ctx *c, LLVMValueRef br, late_group *g, LLVMValueRef *acc);
/* A check br (a group's, or one access's) becomes a branch to its
 * continuation; its trap path's blocks that nothing else enters go. */
void late_drop_group_check(late_ctx *c, LLVMValueRef br);

/* ---- bnd_pair.c ---- */

/* Guarded byte load g and the plain load of the byte below it, or'ed
 * together, become one volatile 16-bit load at g's place; returns it, or
 * NULL. */
LLVMValueRef late_pair_bytes(late_ctx *c, LLVMValueRef g);

/* ---- bnd_dom.c ---- */

/* Checks of c->fn that a check of the same end, with a plus at least
 * theirs, passed on every path to them become branches to their
 * continuations (memory never shrinks); returns how many. */
unsigned late_drop_dominated(late_ctx *c);

/* ---- bnd_fold.c ---- */

/* Guarded load g compared with another value, the compare feeding its
 * block's branch: a plain load again (foldable into the compare);
 * returns whether it changed. */
bool late_plain_compared(late_ctx *c, LLVMValueRef g);
/* A branch on `and` of two compares, the second also carried out in phis:
 * that one first (tested where it is computed); whether it swapped. */
bool late_exit_first(LLVMValueRef br);

/* ---- bnd_unversion.c ---- */

/* Each versioning test of c->fn (bnd_loop.c) whose checked copy LLVM
 * unrolled whole and the late stage left no explicit check in, and whose
 * unchecked copy is no more (vector code, a larger body, an offload
 * gate), branches to the checked copy always; returns how many. */
unsigned late_unversion(late_ctx *c);

#endif
