/* ir_loops.c: natural loops from back edges, and their nesting tree. */
#include "ir.h"

/* Blocks that reach a latch without passing the header, plus the header. */
static void fill_body(ir_loop *l, const ir_cfg *cfg) {
  tw_arena *a = cfg->arena;
  int n = cfg->nblocks;
  int *work = tw_arena_alloc(a, (size_t)n * sizeof *work);
  int nwork = 0;
  l->in_body = tw_arena_alloc(a, (size_t)n);
  l->in_body[l->header] = 1;
  for (int i = 0; i < l->nlatches; i++)
    if (!l->in_body[l->latches[i]]) {
      l->in_body[l->latches[i]] = 1;
      work[nwork++] = l->latches[i];
    }
  while (nwork > 0) {
    const ir_block *blk = &cfg->blocks[work[--nwork]];
    for (int i = 0; i < blk->npreds; i++)
      if (!l->in_body[blk->preds[i]]) {
        l->in_body[blk->preds[i]] = 1;
        work[nwork++] = blk->preds[i];
      }
  }
  l->body = tw_arena_alloc(a, (size_t)n * sizeof *l->body);
  for (int b = 0; b < n; b++)
    if (l->in_body[b]) l->body[l->nbody++] = b;
}

static void fill_exits_and_preheader(ir_loop *l, const ir_cfg *cfg) {
  int nexits = 0;
  for (int i = 0; i < l->nbody; i++) {
    const ir_block *blk = &cfg->blocks[l->body[i]];
    for (int j = 0; j < blk->nsuccs; j++) nexits += !l->in_body[blk->succs[j]];
  }
  l->exits = tw_arena_alloc(cfg->arena, (size_t)(nexits + 1) * sizeof *l->exits);
  for (int i = 0; i < l->nbody; i++) {
    const ir_block *blk = &cfg->blocks[l->body[i]];
    for (int j = 0; j < blk->nsuccs; j++)
      if (!l->in_body[blk->succs[j]])
        l->exits[l->nexits++] = (ir_edge){l->body[i], blk->succs[j]};
  }
  const ir_block *h = &cfg->blocks[l->header];
  int outside = -1, noutside = 0;
  for (int i = 0; i < h->npreds; i++)
    if (!l->in_body[h->preds[i]]) {
      outside = h->preds[i];
      noutside++;
    }
  /* As LLVM defines it: the only entering block, and it goes nowhere else. */
  l->preheader = noutside == 1 && cfg->blocks[outside].nsuccs == 1 ? outside : -1;
}

static ir_loop *new_loop(int header, const ir_cfg *cfg, const ir_dom *dom) {
  const ir_block *h = &cfg->blocks[header];
  int nlatches = 0;
  for (int i = 0; i < h->npreds; i++) nlatches += ir_dominates(dom, header, h->preds[i]);
  if (nlatches == 0) return NULL;
  ir_loop *l = tw_arena_alloc(cfg->arena, sizeof *l);
  l->header = header;
  l->latches = tw_arena_alloc(cfg->arena, (size_t)nlatches * sizeof *l->latches);
  for (int i = 0; i < h->npreds; i++)
    if (ir_dominates(dom, header, h->preds[i])) l->latches[l->nlatches++] = h->preds[i];
  fill_body(l, cfg);
  fill_exits_and_preheader(l, cfg);
  return l;
}

/* Headers in RPO order put every loop after the loops enclosing it, so the
 * loop last recorded for a header's block is its parent. */
static void link_tree(ir_loops *lp, tw_arena *a) {
  for (int i = 0; i < lp->nloops; i++) {
    ir_loop *l = lp->loops[i];
    l->parent = lp->innermost[l->header];
    l->depth = l->parent ? l->parent->depth + 1 : 1;
    if (l->parent) l->parent->nchildren++;
    else lp->nroots++;
    for (int j = 0; j < l->nbody; j++) lp->innermost[l->body[j]] = l;
  }
  lp->roots = tw_arena_alloc(a, (size_t)(lp->nroots + 1) * sizeof *lp->roots);
  lp->nroots = 0;
  for (int i = 0; i < lp->nloops; i++) {
    ir_loop *l = lp->loops[i];
    l->children = tw_arena_alloc(a, (size_t)(l->nchildren + 1) * sizeof *l->children);
    l->nchildren = 0;
    if (l->parent) l->parent->children[l->parent->nchildren++] = l;
    else lp->roots[lp->nroots++] = l;
  }
}

void ir_loops_build(ir_loops *lp, const ir_cfg *cfg, const ir_dom *dom) {
  int n = cfg->nblocks;
  *lp = (ir_loops){.cfg = cfg};
  lp->loops = tw_arena_alloc(cfg->arena, (size_t)n * sizeof *lp->loops);
  lp->innermost = tw_arena_alloc(cfg->arena, (size_t)n * sizeof *lp->innermost);
  for (int b = 0; b < n; b++) {
    ir_loop *l = new_loop(b, cfg, dom);
    if (l) lp->loops[lp->nloops++] = l;
  }
  link_tree(lp, cfg->arena);
}

bool ir_loop_contains_block(const ir_loop *l, LLVMBasicBlockRef bb, const ir_cfg *cfg) {
  int b = ir_cfg_index(cfg, bb);
  return b >= 0 && l->in_body[b];
}

bool ir_loop_defines(const ir_loop *l, LLVMValueRef v, const ir_cfg *cfg) {
  return LLVMIsAInstruction(v) && ir_loop_contains_block(l, LLVMGetInstructionParent(v), cfg);
}

bool ir_loop_has_vectors(const ir_cfg *cfg, const ir_loop *l) {
  for (int b = 0; b < l->nbody; b++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(cfg->blocks[l->body[b]].bb); i; i = LLVMGetNextInstruction(i))
      if (LLVMGetTypeKind(LLVMTypeOf(i)) == LLVMVectorTypeKind ||
          (LLVMIsAStoreInst(i) && LLVMGetTypeKind(LLVMTypeOf(LLVMGetOperand(i, 0))) == LLVMVectorTypeKind))
        return true;
  return false;
}
