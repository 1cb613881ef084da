/* ir_dom.c: dominator tree by the Cooper-Harvey-Kennedy iterative algorithm. */
#include "ir.h"

/* Walks both fingers up the tree being built; with RPO numbers a dominator
 * always has the smaller number. */
static int intersect(const int *idom, int a, int b) {
  while (a != b) {
    while (a > b) a = idom[a];
    while (b > a) b = idom[b];
  }
  return a;
}

static void solve(const ir_cfg *cfg, int *idom) {
  for (int b = 1; b < cfg->nblocks; b++) idom[b] = -1;
  idom[0] = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (int b = 1; b < cfg->nblocks; b++) {
      const ir_block *blk = &cfg->blocks[b];
      int new_idom = -1;
      for (int i = 0; i < blk->npreds; i++) {
        int p = blk->preds[i];
        if (idom[p] < 0) continue;
        new_idom = new_idom < 0 ? p : intersect(idom, p, new_idom);
      }
      if (new_idom != idom[b]) {
        idom[b] = new_idom;
        changed = true;
      }
    }
  }
}

/* Numbers the tree in DFS pre- and post-order so that dominance is interval
 * containment. */
static void number_tree(ir_dom *dom, tw_arena *a) {
  int n = dom->cfg->nblocks;
  int *first = tw_arena_alloc(a, (size_t)n * sizeof *first);
  int *sibling = tw_arena_alloc(a, (size_t)n * sizeof *sibling);
  int *stack = tw_arena_alloc(a, (size_t)n * sizeof *stack);
  for (int b = 0; b < n; b++) first[b] = sibling[b] = -1;
  for (int b = n - 1; b > 0; b--) {
    sibling[b] = first[dom->idom[b]];
    first[dom->idom[b]] = b;
  }
  int depth = 0, clock = 0;
  stack[depth++] = 0;
  dom->pre[0] = clock++;
  while (depth > 0) {
    int b = stack[depth - 1];
    int c = first[b];
    if (c >= 0) {
      first[b] = sibling[c]; /* consume the child */
      dom->pre[c] = clock++;
      stack[depth++] = c;
    } else {
      dom->post[b] = clock++;
      depth--;
    }
  }
}

void ir_dom_build(ir_dom *dom, const ir_cfg *cfg) {
  int n = cfg->nblocks;
  dom->cfg = cfg;
  dom->idom = tw_arena_alloc(cfg->arena, (size_t)n * sizeof *dom->idom);
  dom->pre = tw_arena_alloc(cfg->arena, (size_t)n * sizeof *dom->pre);
  dom->post = tw_arena_alloc(cfg->arena, (size_t)n * sizeof *dom->post);
  solve(cfg, dom->idom);
  number_tree(dom, cfg->arena);
}

bool ir_dominates(const ir_dom *dom, int a, int b) {
  return dom->pre[a] <= dom->pre[b] && dom->post[b] <= dom->post[a];
}
