/* low_tail.c: which calls may be sibling calls, so that backtraces stay
 * whole.  A call LLVM makes a sibling call (`jmp` in tail position)
 * leaves no frame of its caller F: a trap below it would show F's caller
 * next, not F.  The runtime puts F back (rt_backtrace.c): the return
 * address in F's caller P follows a direct call whose target is F's
 * entry, and the frame below P is not F.  That works when F was entered
 * only by direct calls (it is not exported, not the start function, in no
 * element segment, so never called through a table or by the host) and
 * when the function F jumped to made no sibling call in turn (one missing
 * frame per return address).  So only such functions, the "jumpers", may
 * make sibling calls, and only to functions that are not jumpers:
 * - a direct call from a jumper to a defined non-jumper, unchecked (its
 *   callee is in another strongly connected component, low_stack.c, so
 *   every cycle of calls keeps a non-tail call and a runaway recursion
 *   still exhausts the stack);
 * - a call_indirect from a jumper whose sealed targets leave it unchecked
 *   (low_stack_indirect_checked: they are in a table, so never jumpers).
 * Every other defined function is "disable-tail-calls" through LLVM's
 * pipeline: where it inlines a jumper, the jumper's `tail` call loses its
 * kind, and TailCallElim would mark it again (the traps pass drops the
 * mark and marks the calls that lose no frame, compiler/ir/ir_tail.c).
 * A function is a jumper when it is
 * eligible and has such a call in tail position in its Wasm code (callees
 * are decided first, in the order of their components: a callee that
 * jumps is no target). */
#include <string.h>

#include "low_internal.h"

/* Whether the instruction after pc ends fn: only block ends, `else`
 * (a jump to its `if`'s end) and `return` lie between. */
static bool in_tail_position(const wasm_func *fn, uint32_t pc) {
  uint32_t i = pc + 1;
  while (i < fn->ncode) {
    uint16_t op = fn->code[i].op;
    if (op == OP_RETURN) return true;
    if (op == OP_END) {
      i++;
    } else if (op == OP_ELSE) {
      int depth = 0;
      for (i++; i < fn->ncode; i++) {
        uint16_t o = fn->code[i].op;
        if (o == OP_BLOCK || o == OP_LOOP || o == OP_IF) depth++;
        else if (o == OP_END && depth-- == 0) break;
      }
    } else {
      return false;
    }
  }
  return true;
}

static void mark_items(bool *entered, const wasm_module *m, const wasm_constexpr *e) {
  for (uint32_t k = 0; k < e->ncode; k++)
    if (e->code[k].op == OP_REF_FUNC && e->code[k].u.index < m->nfuncs) entered[e->code[k].u.index] = true;
}

/* Functions something other than a direct call may enter. */
static bool *entered_otherwise(low_module_ctx *mc) {
  const wasm_module *m = mc->m;
  bool *entered = tw_arena_alloc(&mc->arena, m->nfuncs + 1);
  memset(entered, 0, m->nfuncs + 1);
  for (uint32_t i = 0; i < m->nexports; i++)
    if (m->exports[i].kind == EXT_FUNC && m->exports[i].index < m->nfuncs) entered[m->exports[i].index] = true;
  if (m->has_start && m->start < m->nfuncs) entered[m->start] = true;
  for (uint32_t s = 0; s < m->nelems; s++)
    for (uint32_t k = 0; k < m->elems[s].nitems; k++) mark_items(entered, m, &m->elems[s].items[k]);
  for (uint32_t g = 0; g < m->nglobals; g++)
    if (!m->globals[g].imported) mark_items(entered, m, &m->globals[g].init);
  return entered;
}

/* Whether a jumper caller may make its direct call to callee a sibling call. */
static bool direct_may(const low_module_ctx *mc, uint32_t caller, uint32_t callee) {
  return !mc->m->funcs[callee].imported && !mc->tail_jumper[callee] && !low_stack_call_checked(mc, caller, callee);
}

/* Whether eligible f has a call in tail position it may make a sibling
 * call (its callees in other components are decided). */
static bool jumps(const low_module_ctx *mc, uint32_t f) {
  const wasm_func *fn = &mc->m->funcs[f];
  for (uint32_t pc = 0; pc < fn->ncode; pc++) {
    const wasm_insn *in = &fn->code[pc];
    bool may = false;
    if (in->op == OP_CALL) may = direct_may(mc, f, in->u.index);
    else if (in->op == OP_CALL_INDIRECT) may = !low_stack_indirect_checked(mc, in->u.pair.a, in->u.pair.b);
    if (may && in_tail_position(fn, pc)) return true;
  }
  return false;
}

void low_tail_init(low_module_ctx *mc) {
  const wasm_module *m = mc->m;
  uint32_t n = m->nfuncs;
  bool *entered = entered_otherwise(mc);
  mc->tail_jumper = tw_arena_alloc(&mc->arena, n + 1);
  memset(mc->tail_jumper, 0, n + 1);
  /* callees first: components were numbered as Tarjan closed them */
  uint32_t ncomp = 0;
  for (uint32_t f = 0; f < n; f++)
    if (mc->stack_scc[f] + 1 > ncomp) ncomp = mc->stack_scc[f] + 1;
  uint32_t *start = tw_arena_alloc(&mc->arena, (ncomp + 1) * sizeof *start);
  uint32_t *order = tw_arena_alloc(&mc->arena, (n + 1) * sizeof *order);
  memset(start, 0, (ncomp + 1) * sizeof *start);
  for (uint32_t f = 0; f < n; f++) start[mc->stack_scc[f] + 1]++;
  for (uint32_t c = 0; c < ncomp; c++) start[c + 1] += start[c];
  for (uint32_t f = 0; f < n; f++) order[start[mc->stack_scc[f]]++] = f;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t f = order[k];
    if (!m->funcs[f].imported && !entered[f]) mc->tail_jumper[f] = jumps(mc, f);
  }
  for (uint32_t f = 0; f < n; f++) {
    if (m->funcs[f].imported || mc->tail_jumper[f]) continue;
    LLVMAddAttributeAtIndex(mc->funcs[f], LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(mc->ctx, "disable-tail-calls", 18, "true", 4));
  }
}

bool low_tail_call(const low_module_ctx *mc, uint32_t caller, uint32_t callee) {
  return mc->tail_jumper[caller] && direct_may(mc, caller, callee);
}

bool low_tail_indirect(const low_module_ctx *mc, uint32_t caller, uint32_t type_index, uint32_t table_index) {
  return mc->tail_jumper[caller] && !low_stack_indirect_checked(mc, type_index, table_index);
}
