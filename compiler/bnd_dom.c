/* bnd_dom.c: guard mode, in the late stage (bnd_late.c), after the checks
 * left to the guard pages: a check that another check of the same end
 * has already passed on every path to it goes.
 *
 * A check traps iff `end + plus > size`, the size loaded where it stands.
 * Where check A's way on (the edge to its continuation) dominates check
 * B's block, both read the same end value (one SSA value: the A that ran
 * last before B read the value B reads) and A's plus is at least B's,
 * B never traps: A passed with end + plus_A <= size then, and memory
 * never shrinks, so end + plus_B <= size now.  B becomes a branch to its
 * continuation.  LLVM cannot see this, since each check loads the size
 * again after anything that may grow the memory (a call), and loop
 * rotation copies a loop header's check into the preheader and the latch:
 * SQLite's binary search over a page's cells checked the page's header
 * field again after each comparator call (5 instructions per iteration,
 * the size reloaded through a spilled memory object).
 *
 * Only checks the late stage has not pinned (a pinned check proves a load
 * left before an access, bnd_late.c) go. */
#include "bnd_late.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  LLVMValueRef br, end;
  int64_t plus;
  bool narrow;
  int block, cont;  /* the check's block; its continuation when only the check enters it, else -1 */
} dom_check;

/* Orders checks by their end value, so that checks of one end sit
 * together (quadratic only within one end's run). */
static int by_end(const void *x, const void *y) {
  uintptr_t a = (uintptr_t)((const dom_check *)x)->end, b = (uintptr_t)((const dom_check *)y)->end;
  return a < b ? -1 : a > b;
}

unsigned late_drop_dominated(late_ctx *c) {
  tw_arena arena = {0};
  ir_cfg cfg;
  ir_dom dom;
  unsigned dropped = 0;
  if (!ir_cfg_build(&cfg, &arena, c->fn)) return 0;
  ir_dom_build(&dom, &cfg);
  dom_check *checks = tw_arena_alloc(&arena, (size_t)(cfg.nblocks + 1) * sizeof *checks);
  int n = 0;
  for (int b = 0; b < cfg.nblocks; b++) {
    bnd_check ch;
    LLVMValueRef br = LLVMGetBasicBlockTerminator(cfg.blocks[b].bb);
    if (!br || !bnd_check_match(br, &ch)) continue;
    LLVMBasicBlockRef cont = LLVMGetSuccessor(br, !ch.trap_succ);
    int k = ir_cfg_index(&cfg, cont);
    if (cont == LLVMGetSuccessor(br, ch.trap_succ) || (k >= 0 && cfg.blocks[k].npreds != 1)) k = -1;
    checks[n++] = (dom_check){.br = br, .end = ch.end, .plus = ch.plus, .narrow = ch.narrow, .block = b, .cont = k};
  }
  /* decided first, dropped after: a dropped check's own dominating check
   * (plus at least its plus, its way on dominating it) dominates what it
   * dominated */
  bool *drop = tw_arena_alloc(&arena, (size_t)(cfg.nblocks + 1) * sizeof *drop);
  memset(drop, 0, (size_t)(cfg.nblocks + 1) * sizeof *drop);
  qsort(checks, (size_t)n, sizeof *checks, by_end);
  for (int j = 0, run = 0; j < n; j++) {
    if (checks[j].end != checks[run].end) run = j;
    if (late_is_pinned(c, checks[j].br)) continue;
    for (int i = run; i < n && checks[i].end == checks[j].end; i++) {
      const dom_check *a = &checks[i], *b = &checks[j];
      if (i == j || a->cont < 0 || a->narrow != b->narrow || a->plus < b->plus) continue;
      if (!ir_dominates(&dom, a->cont, b->block)) continue;
      drop[b->block] = true;
      break;
    }
  }
  /* in block order, the same whatever the order of the values in memory */
  for (int b = 0; b < cfg.nblocks; b++)
    if (drop[b]) late_drop_group_check(c, LLVMGetBasicBlockTerminator(cfg.blocks[b].bb)), dropped++;
  tw_arena_free(&arena);
  return dropped;
}
