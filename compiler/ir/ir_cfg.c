/* ir_cfg.c: a function's reachable blocks in reverse post-order, with edges. */
#include "ir.h"

static unsigned map_slot(LLVMBasicBlockRef bb, unsigned cap) {
  uintptr_t h = (uintptr_t)bb >> 4;
  return (unsigned)((h * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static void map_put(ir_cfg *cfg, LLVMBasicBlockRef bb, int val) {
  unsigned i = map_slot(bb, cfg->map_cap);
  while (cfg->map_keys[i] && cfg->map_keys[i] != bb) i = (i + 1) & (cfg->map_cap - 1);
  cfg->map_keys[i] = bb;
  cfg->map_vals[i] = val;
}

int ir_cfg_index(const ir_cfg *cfg, LLVMBasicBlockRef bb) {
  unsigned i = map_slot(bb, cfg->map_cap);
  while (cfg->map_keys[i]) {
    if (cfg->map_keys[i] == bb) return cfg->map_vals[i];
    i = (i + 1) & (cfg->map_cap - 1);
  }
  return -1;
}

static unsigned succ_count(LLVMBasicBlockRef bb) {
  LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
  return term ? LLVMGetNumSuccessors(term) : 0;
}

static LLVMBasicBlockRef succ_at(LLVMBasicBlockRef bb, unsigned i) {
  return LLVMGetSuccessor(LLVMGetBasicBlockTerminator(bb), i);
}

/* Iterative DFS from the entry; fills order[] with blocks in post-order and
 * returns how many were reached.  The map temporarily marks visited blocks. */
static int post_order(ir_cfg *cfg, LLVMBasicBlockRef entry, unsigned total,
                      LLVMBasicBlockRef *order) {
  LLVMBasicBlockRef *stack = tw_arena_alloc(cfg->arena, total * sizeof *stack);
  unsigned *next = tw_arena_alloc(cfg->arena, total * sizeof *next);
  int depth = 0, n = 0;
  stack[depth++] = entry;
  map_put(cfg, entry, 0);
  while (depth > 0) {
    LLVMBasicBlockRef bb = stack[depth - 1];
    unsigned *i = &next[depth - 1];
    if (*i < succ_count(bb)) {
      LLVMBasicBlockRef s = succ_at(bb, (*i)++);
      if (ir_cfg_index(cfg, s) < 0) {
        map_put(cfg, s, 0);
        next[depth] = 0;
        stack[depth++] = s;
      }
      continue;
    }
    order[n++] = bb;
    depth--;
  }
  return n;
}

static void add_edges(ir_cfg *cfg) {
  int n = cfg->nblocks;
  int *npreds = tw_arena_alloc(cfg->arena, (size_t)n * sizeof *npreds);
  for (int b = 0; b < n; b++) {
    ir_block *blk = &cfg->blocks[b];
    unsigned ns = succ_count(blk->bb);
    blk->succs = tw_arena_alloc(cfg->arena, (ns + 1) * sizeof *blk->succs);
    for (unsigned i = 0; i < ns; i++) {
      int s = ir_cfg_index(cfg, succ_at(blk->bb, i));
      bool seen = false; /* a switch may name one target twice */
      for (int j = 0; j < blk->nsuccs; j++) seen |= blk->succs[j] == s;
      if (!seen) {
        blk->succs[blk->nsuccs++] = s;
        npreds[s]++;
      }
    }
  }
  for (int b = 0; b < n; b++)
    cfg->blocks[b].preds = tw_arena_alloc(cfg->arena, (size_t)(npreds[b] + 1) * sizeof(int));
  for (int b = 0; b < n; b++)
    for (int j = 0; j < cfg->blocks[b].nsuccs; j++) {
      ir_block *s = &cfg->blocks[cfg->blocks[b].succs[j]];
      s->preds[s->npreds++] = b;
    }
}

bool ir_cfg_build(ir_cfg *cfg, tw_arena *a, LLVMValueRef fn) {
  *cfg = (ir_cfg){.arena = a, .fn = fn};
  unsigned total = LLVMCountBasicBlocks(fn);
  if (total == 0) return false;
  cfg->map_cap = 16;
  while (cfg->map_cap < 2 * total) cfg->map_cap *= 2;
  cfg->map_keys = tw_arena_alloc(a, cfg->map_cap * sizeof *cfg->map_keys);
  cfg->map_vals = tw_arena_alloc(a, cfg->map_cap * sizeof *cfg->map_vals);
  LLVMBasicBlockRef *order = tw_arena_alloc(a, total * sizeof *order);
  int n = post_order(cfg, LLVMGetEntryBasicBlock(fn), total, order);
  cfg->nblocks = n;
  cfg->blocks = tw_arena_alloc(a, (size_t)n * sizeof *cfg->blocks);
  for (int i = 0; i < n; i++) {
    cfg->blocks[i].bb = order[n - 1 - i];
    map_put(cfg, order[n - 1 - i], i);
  }
  add_edges(cfg);
  return true;
}
