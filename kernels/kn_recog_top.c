/* kn_recog_top.c: a vector loop at the top of a function, with the scalar
 * code clang puts beside it, read as the one scalar loop it implements
 * (issue 19, the gap SIMD_SPLIT of tests/unit/test_offload_modes.c).
 *
 * Inside an outer loop, kn_lanes_region.c reads the guard G, the skip S
 * (clang's minimum-count and alias checks), the vector loop V, the test
 * E, the peel P or prologue loop, the remainder R and the done block as
 * one scalar loop over j in [0, n) of that outer loop's body.  At the top
 * of a function there is no loop around them, so the nest offloaded is a
 * region that is no loop: the blocks the block D dominates, D a dominator
 * of V's header (S, found by trying D up V's dominator tree).  They are
 * handed to kr_region_find as the body of a loop around the region that
 * runs once (c->top), and everything kn_lanes_region.c proves there holds
 * as it does inside a loop, which the region's proof does not use:
 *
 *   (a)-(d) of kn_lanes_region.c: every loop under D is one of V's or
 *       R's copies (or P's), on every path from S each j in [0, n) is
 *       stored exactly once (G leaves before S when n < 1; the skip's
 *       fallback, V skipped, is R from s = 0: the scalar loop itself),
 *       and every store is the scalar loop's expression at its own j
 *       (kr_region_prove), nothing else under D stores.
 *   (e) the nest is then R's fast copy read from j = 0 while j < n
 *       (kr_kind at depth 1, chain[0] = R, c->region set), launched once
 *       in place of the whole region: the offload stage's versioning
 *       (compiler/off/off_version.c) enters at D's one way in and leaves
 *       to done, the region kept as the CPU path.
 *   (f) nothing computed under D is used outside it, and done's phis take
 *       one value from every block under D (made before D): the launch's
 *       path gives them that value (off_version.c patch_exit).  D's only
 *       way out is done (traps aside, which the launch's range checks
 *       cover as for any nest).
 *   (g) a sum region (an integer sum in lanes, kn_lanes_region.c
 *       sum_shape: done's phi `result` is init + R's term over j in
 *       [0, n) on every path) is R's reduction from j = 0 with that init
 *       (kn_recog_reduce.c), its result done's phi: the launch's path
 *       gives that phi the kernel's sum (off_version.c patch_exit), and
 *       the values from under D that only the phi uses stay inside.
 *
 * A region beside another nest is left to the loops' own nests. */
#include <string.h>

#include "ir_pass.h"
#include "kn_internal.h"

/* A block that ends in `unreachable` (a trap's): an exit of the region,
 * as of a loop (kn_recog.c scan_exits). */
static bool dead_end(const ir_cfg *cfg, int b) {
  LLVMValueRef t = LLVMGetBasicBlockTerminator(cfg->blocks[b].bb);
  return t && LLVMIsAUnreachableInst(t);
}

/* The blocks marked in `in` (d among them), as a loop that runs once
 * around its loops (the roots of lp there); header d, its one latch d
 * itself (only kn_lanes_region.c's checks of where a test dominates read
 * it). */
static ir_loop *as_loop(const kr_ctx *c, const ir_loops *lp, int d, const uint8_t *in) {
  const ir_cfg *cfg = c->cfg;
  ir_loop *l = tw_arena_alloc(c->arena, sizeof *l);
  memset(l, 0, sizeof *l);
  l->header = d;
  l->preheader = -1;
  l->in_body = tw_arena_alloc(c->arena, (size_t)cfg->nblocks);
  memset(l->in_body, 0, (size_t)cfg->nblocks);
  l->body = tw_arena_alloc(c->arena, (size_t)cfg->nblocks * sizeof *l->body);
  l->body[l->nbody++] = d;
  l->in_body[d] = 1;
  for (int b = 0; b < cfg->nblocks; b++)
    if (b != d && in[b]) {
      l->body[l->nbody++] = b;
      l->in_body[b] = 1;
    }
  int nexits = 0;
  for (int i = 0; i < l->nbody; i++)
    for (int s = 0; s < cfg->blocks[l->body[i]].nsuccs; s++) nexits += !l->in_body[cfg->blocks[l->body[i]].succs[s]];
  l->exits = tw_arena_alloc(c->arena, (size_t)(nexits + 1) * sizeof *l->exits);
  for (int i = 0; i < l->nbody; i++)
    for (int s = 0; s < cfg->blocks[l->body[i]].nsuccs; s++) {
      int to = cfg->blocks[l->body[i]].succs[s];
      if (!l->in_body[to]) l->exits[l->nexits++] = (ir_edge){l->body[i], to};
    }
  l->children = tw_arena_alloc(c->arena, (size_t)(lp->nroots + 1) * sizeof *l->children);
  for (int r = 0; r < lp->nroots; r++)
    if (l->in_body[lp->roots[r]->header]) l->children[l->nchildren++] = lp->roots[r];
  l->latches = tw_arena_alloc(c->arena, sizeof *l->latches);
  l->latches[0] = d;
  l->nlatches = 1;
  l->trip.kind = IR_TRIP_NONE;
  return l;
}

/* The blocks d dominates (but dead ends and trap ways): the region of a function that
 * ends after its loops. */
static ir_loop *blocks_under(const kr_ctx *c, const ir_loops *lp, int d) {
  uint8_t *in = tw_arena_alloc(c->arena, (size_t)c->cfg->nblocks);
  for (int b = 0; b < c->cfg->nblocks; b++)
    in[b] = ir_dominates(c->dom, d, b) && !dead_end(c->cfg, b) && !kr_trap_way(c, b);
  return as_loop(c, lp, d, in);
}

/* Marks in `in` the blocks reached from d without entering x, dead ends
 * aside.  False when one of them is not dominated by d (a second way in),
 * returns (x does not post-dominate d), or there are more than `cap`. */
static bool reach_before(const kr_ctx *c, int d, int x, uint8_t *in, int *stack, int cap) {
  const ir_cfg *cfg = c->cfg;
  memset(in, 0, (size_t)cfg->nblocks);
  int depth = 0, count = 1;
  in[d] = 1;
  stack[depth++] = d;
  while (depth > 0) {
    const ir_block *blk = &cfg->blocks[stack[--depth]];
    if (blk->nsuccs == 0 && !dead_end(cfg, stack[depth])) return false;
    for (int s = 0; s < blk->nsuccs; s++) {
      int to = blk->succs[s];
      if (to == x || in[to] || dead_end(cfg, to) || kr_trap_way(c, to)) continue;
      if (!ir_dominates(c->dom, d, to) || ++count > cap) return false;
      in[to] = 1;
      stack[depth++] = to;
    }
  }
  return true;
}

/* The region from d to the nearest block x after vec that every path from
 * d reaches (a post-dominator of d): the blocks between them, each
 * dominated by d, holding vec and a loop of scalars (its remainder), for
 * a function that goes on after its loops (a kernel that clang or
 * wasm-opt inlined into its caller).  NULL when there is none within the
 * first 256 candidates. */
static ir_loop *blocks_between(const kr_ctx *c, const ir_loops *lp, int d, const ir_loop *vec) {
  const ir_cfg *cfg = c->cfg;
  uint8_t *in = tw_arena_alloc(c->arena, (size_t)cfg->nblocks);
  int *stack = tw_arena_alloc(c->arena, (size_t)cfg->nblocks * sizeof *stack);
  int tries = 0;
  for (int x = vec->header + 1; x < cfg->nblocks && tries < 256; x++) {
    if (vec->in_body[x] || dead_end(cfg, x)) continue;
    tries++;
    if (!reach_before(c, d, x, in, stack, 4096) || !in[vec->header]) continue;
    /* V's remainder, a loop of scalars, there too (not V's copies alone) */
    for (int r = 0; r < lp->nroots; r++)
      if (in[lp->roots[r]->header] && !ir_loop_has_vectors(cfg, lp->roots[r])) return as_loop(c, lp, d, in);
  }
  return NULL;
}

/* (f): nothing computed under top is used outside it (but in a trap's
 * block entered from it alone, which the launch's path never reaches,
 * and in a sum region's result, the phi of done the kernel's result
 * replaces), and the other phis of done take one value from all of top's
 * blocks. */
static bool only_from(const kr_ctx *c, const ir_loop *top, int b) {
  for (int p = 0; p < c->cfg->blocks[b].npreds; p++)
    if (!top->in_body[c->cfg->blocks[b].preds[p]]) return false;
  return true;
}

static bool kept_inside(const kr_ctx *c, const ir_loop *top, LLVMBasicBlockRef done, LLVMValueRef result) {
  for (int b = 0; b < top->nbody; b++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(c->cfg->blocks[top->body[b]].bb); i;
         i = LLVMGetNextInstruction(i))
      for (LLVMUseRef u = LLVMGetFirstUse(i); u; u = LLVMGetNextUse(u)) {
        if (result && LLVMGetUser(u) == result) continue;
        int at = ir_cfg_index(c->cfg, LLVMGetInstructionParent(LLVMGetUser(u)));
        if (at < 0) return false;
        /* G's compare that the next loop's guard shares: moved before the
         * region (off_version.c) */
        if (top->in_body[at] || ir_head_hoistable(i, c->cfg->blocks[top->header].bb)) continue;
        if (!((dead_end(c->cfg, at) || kr_trap_way(c, at)) && only_from(c, top, at))) return false;
      }
  for (LLVMValueRef phi = LLVMGetFirstInstruction(done); phi && LLVMIsAPHINode(phi);
       phi = LLVMGetNextInstruction(phi)) {
    if (phi == result) continue;
    LLVMValueRef one = NULL;
    for (unsigned k = 0; k < LLVMCountIncoming(phi); k++) {
      int from = ir_cfg_index(c->cfg, LLVMGetIncomingBlock(phi, k));
      if (from < 0 || !top->in_body[from]) continue;
      if (one && LLVMGetIncomingValue(phi, k) != one) return false;
      one = LLVMGetIncomingValue(phi, k);
    }
  }
  return true;
}

/* Whether the region is entered at its header alone, from blocks before
 * it that branch there: one of them, or several when the header has no
 * phis (the offload stage then gives it a block of its own to enter by,
 * off_version.c preheader_of). */
static bool one_way_in(const kr_ctx *c, const ir_loop *top) {
  const ir_block *h = &c->cfg->blocks[top->header];
  for (int p = 0; p < h->npreds; p++) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(c->cfg->blocks[h->preds[p]].bb);
    if (top->in_body[h->preds[p]] || !LLVMIsABranchInst(t)) return false;
  }
  LLVMValueRef first = LLVMGetFirstInstruction(h->bb);
  return h->npreds == 1 || (h->npreds > 1 && !LLVMIsAPHINode(first));
}

/* The region under top, recognised as R's loop from j = 0 (e); c as the
 * caller had it, c->out filled.  False with c->reason. */
static bool region_nest(kr_ctx *c, const ir_loop *top) {
  kn_recog_nest *o = c->out;
  c->top = top;
  c->chain[0] = top;
  c->depth = 1;
  o->nest = top;
  o->cfg = c->cfg;
  o->preheader = NULL;
  /* one way in, where the offload stage puts the launch (off_version.c
   * preheader_of): else the loops stay nests of their own */
  if (!one_way_in(c, top)) return kr_fail(c, "a vector loop at the top of a function: its region has no single entry");
  if (!c->mem_base || !kr_scan(c)) return false;
  kr_region r;
  if (!kr_region_find(c, top, &r)) return false;
  /* a sum region: a reduction whose result, done's phi, the kernel's
   * replaces (kn_recog_reduce.c, off_version.c patch_exit) */
  if (r.inner || r.nbefore || r.wide)
    return kr_fail(c, "a vector loop at the top of a function: not a region of stores or one sum alone");
  if (o->nexits != 1 || o->exits[0] != c->cfg->blocks[r.done].bb ||
      !kept_inside(c, top, o->exits[0], r.sum ? r.result : NULL))
    return kr_fail(c, "a vector loop at the top of a function: its region's values are used after it");
  kr_region *keep = tw_arena_alloc(c->arena, sizeof *keep);
  *keep = r;
  c->region = keep;
  c->slice = keep->stores;
  c->nslice = keep->nstores;
  c->chain[0] = keep->rep;
  c->depth = 1;
  if (!kr_region_prove(c, keep) || !kr_kind(c)) return false;
  if (c->nguard_exits && !o->nguards)
    return kr_fail(c, "a guard exit (a call that never returns) no kernel checks");
  o->desc.nodes = c->nodes;
  o->desc.nnodes = c->nnodes;
  /* placed in the report as R's Wasm loop (its latch's marker) */
  ir_loop *nest = tw_arena_alloc(c->arena, sizeof *nest);
  *nest = *top;
  nest->latches = keep->rep->latches;
  nest->nlatches = keep->rep->nlatches;
  o->nest = nest;
  return true;
}

bool kr_top_region(kr_ctx *c, const ir_loops *lp, const ir_loop *vec, bool *claimed) {
  if (vec->parent || vec->nchildren || ir_checked_copy(c->cfg->blocks[vec->header].bb)) return false;
  const kr_ctx proto = *c;
  kn_recog_nest *o = c->out;
  const char *why = NULL;
  for (int d = c->dom->idom[vec->header], steps = 0; d > 0 && steps < 8; d = c->dom->idom[d], steps++) {
    /* the blocks d dominates, else those up to where d's paths meet */
    for (int way = 0; way < 2; way++) {
      const ir_loop *top = way ? blocks_between(&proto, lp, d, vec) : blocks_under(&proto, lp, d);
      if (!top || top->nchildren < 2) continue;
      *c = proto;
      memset(o, 0, sizeof *o);
      if (region_nest(c, top)) {
        o->ok = true;
        for (int r = 0; r < lp->nroots; r++) claimed[r] |= top->in_body[lp->roots[r]->header] != 0;
        return true;
      }
      why = c->reason;
      /* a region found but no kernel: the loops keep their own nests */
      if (c->region) goto refused;
    }
  }
refused:
  *c = proto;
  memset(o, 0, sizeof *o);
  c->reason = why; /* the last candidate's (for tests) */
  return false;
}
