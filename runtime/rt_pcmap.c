/* rt_pcmap.c: which access faulted on a guard page.  Where guard mode
 * leaves a bounds check to the guard pages (compiler/bnd_late.c), a label
 * just before the access goes into a table (twasm_pcmap_abi, section
 * TWASM_PCMAP_SECTION) with the access's file offset; the fault handler
 * takes the nearest label at or before the faulting instruction.  The
 * table is put in order once per instance, outside the handler: in place
 * when the linker left it in code order (the usual case), else a sorted
 * copy in the instance's arena. */
#include <stdlib.h>

#include "rt_internal.h"

static uintptr_t entry_pc(const twasm_pcmap_abi *e) { return (uintptr_t)&e->code + (intptr_t)e->code; }

static int by_pc(const void *a, const void *b) {
  uintptr_t x = ((const rt_pc *)a)->pc, y = ((const rt_pc *)b)->pc;
  return x < y ? -1 : x > y;
}

bool rt_pcmap_init(rt_instance *inst) {
  const twasm_pcmap_abi *t = inst->module->pcmap, *end = inst->module->pcmap_end;
  inst->pcmap = t, inst->npcmap = 0, inst->pcmap_sorted = NULL;
  if (!t || !end || end <= t) return true;
  size_t n = (size_t)(end - t);
  bool ordered = true;
  for (size_t i = 1; ordered && i < n; i++) ordered = entry_pc(&t[i - 1]) <= entry_pc(&t[i]);
  if (!ordered) {
    rt_pc *copy = rt_arena_alloc(&inst->arena, n * sizeof *copy);
    if (!copy) return false;
    for (size_t i = 0; i < n; i++) copy[i] = (rt_pc){entry_pc(&t[i]), t[i].offset};
    qsort(copy, n, sizeof *copy, by_pc);
    inst->pcmap_sorted = copy;
  }
  inst->npcmap = n;
  return true;
}

/* Entry i of the ordered table. */
static rt_pc entry(const rt_instance *inst, size_t i) {
  if (inst->pcmap_sorted) return inst->pcmap_sorted[i];
  return (rt_pc){entry_pc(&inst->pcmap[i]), inst->pcmap[i].offset};
}

/* The defined function whose body holds file offset `offset`. */
static uint32_t func_of_offset(const rt_instance *inst, uint32_t offset) {
  const twasm_module_abi *m = inst->module;
  uint32_t best = UINT32_MAX;
  for (uint32_t i = 0; m->func_offsets && i < m->nfuncs; i++)
    if (m->func_offsets[i] <= offset && (best == UINT32_MAX || m->func_offsets[i] >= m->func_offsets[best]))
      best = i;
  return best == UINT32_MAX ? UINT32_MAX : inst->nfunc_imports + best;
}

bool rt_pcmap_find(const rt_instance *inst, uintptr_t pc, uint32_t *func_index, uint32_t *offset) {
  if (!inst || !inst->npcmap) return false;
  size_t lo = 0, hi = inst->npcmap; /* the first entry past pc is in [lo, hi] */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (entry(inst, mid).pc <= pc) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return false;
  rt_pc e = entry(inst, lo - 1);
  /* a label of the same native function: another function's would name
   * an access that did not run */
  uint32_t native = rt_func_at(inst, pc);
  if (native == UINT32_MAX || rt_func_at(inst, e.pc) != native) return false;
  *offset = e.offset;
  uint32_t f = func_of_offset(inst, e.offset);
  *func_index = f == UINT32_MAX ? native : f;
  return true;
}
