/* low_stack.c: which calls need a stack check.  Only an unbounded chain
 * of calls (recursion, direct or through a table or an import) can
 * exhaust the stack, and every such chain runs around a cycle of the call
 * graph.  So a check sits on every edge that may close a cycle: a call
 * inside a strongly connected component of the direct call graph (a
 * recursion, or a mutual one), an indirect call, a call to an import
 * (another module may call back).  A direct call that leaves its caller's
 * component goes unchecked as long as the chain of unchecked calls below
 * it stays short (at most MAX_DEPTH small frames between two checks, well
 * inside the runtime's margin, RT_STACK_MARGIN, 128 KiB; a fault there is
 * still reported as stack exhaustion).  A function whose calls are all
 * unchecked checks nothing, which leaves a small wrapper (a comparator
 * around strcmp, a getter) as cheap as a leaf, and a function that calls
 * a recursive one (main calling a recursive parser) pays no check of its
 * own: the recursion checks its own cycle.
 * A call_indirect through a sealed table (low_sealed.c) reaches only the
 * table's functions of its type, all known.  When each of them is small,
 * shallow (at most INDIRECT_MAX_DEPTH frames before its next check) and
 * reaches no call_indirect through its unchecked calls, the call closes no
 * unchecked cycle: a way back to the caller, which holds a call_indirect,
 * must go through a checked call.  Such a call is not checked, and, as
 * each cycle through it holds a checked (non-tail) call that makes the
 * stack grow, it may be a sibling call (low_call.c).  A chain of unchecked
 * frames then holds at most MAX_DEPTH - 1 + INDIRECT_MAX_DEPTH of them
 * (one such call per chain: its callees reach no other). */
#include "low_internal.h"

/* Frames at most this many locals deep count as small (low_func.c checks
 * larger ones at entry, and calls to them are checked), and chains of
 * unchecked calls at most this many frames deep are allowed: together
 * well under the runtime's margin. */
#define SMALL_FRAME_LOCALS 512u
#define MAX_DEPTH 8
#define INDIRECT_MAX_DEPTH 4

/* Tarjan's algorithm without recursion (no unbounded recursion in
 * twasmc): an explicit stack of (function, next instruction) frames. */
typedef struct {
  uint32_t func, pc;
} scc_frame;

typedef struct {
  const wasm_module *m;
  uint32_t *index, *low;     /* 0: unvisited; DFS numbers from 1 */
  uint32_t *stack;           /* Tarjan's stack of open functions */
  bool *on_stack;
  uint32_t nstack, next_index;
  scc_frame *dfs;
  uint32_t ndfs;
  uint32_t *scc;             /* component id of each function */
  int8_t *depth;             /* frames below a call to it before the next check; -1: check the call */
  bool *reach_indirect;      /* it or its unchecked callees, transitively, hold a call_indirect */
} scc_walk;

static bool is_small(const wasm_func *fn) {
  return !fn->imported && fn->nlocals <= SMALL_FRAME_LOCALS;
}

/* Whether a call from component caller_scc to g is checked. */
static bool call_checked(const scc_walk *w, uint32_t caller_scc, uint32_t g) {
  return w->depth[g] < 1 || w->depth[g] >= MAX_DEPTH || w->scc[g] == caller_scc;
}

/* The depth of each member of the component just closed (its callees in
 * other components are all done: Tarjan closes components callees first). */
static void close_component(scc_walk *w, uint32_t root, uint32_t id) {
  uint32_t first = w->nstack;
  do {
    first--;
    w->on_stack[w->stack[first]] = false;
    w->scc[w->stack[first]] = id;
  } while (w->stack[first] != root);
  for (uint32_t s = first; s < w->nstack; s++) {
    uint32_t f = w->stack[s];
    const wasm_func *fn = &w->m->funcs[f];
    int d = 0;
    bool reach = false;
    for (uint32_t i = 0; i < fn->ncode; i++) {
      const wasm_insn *in = &fn->code[i];
      reach |= in->op == OP_CALL_INDIRECT;
      if (in->op != OP_CALL || call_checked(w, id, in->u.index)) continue;
      if (w->depth[in->u.index] > d) d = w->depth[in->u.index];
      reach |= w->reach_indirect[in->u.index];
    }
    w->depth[f] = is_small(fn) ? (int8_t)(d + 1) : -1;
    w->reach_indirect[f] = reach;
  }
  w->nstack = first;
}

static void visit(scc_walk *w, uint32_t f) {
  w->index[f] = w->low[f] = ++w->next_index;
  w->stack[w->nstack++] = f;
  w->on_stack[f] = true;
  w->dfs[w->ndfs++] = (scc_frame){f, 0};
}

/* Runs Tarjan from root; component ids count up from *next_id. */
static void walk_from(scc_walk *w, uint32_t root, uint32_t *next_id) {
  visit(w, root);
  while (w->ndfs > 0) {
    scc_frame *top = &w->dfs[w->ndfs - 1];
    const wasm_func *fn = &w->m->funcs[top->func];
    bool descended = false;
    while (top->pc < fn->ncode && !descended) {
      const wasm_insn *in = &fn->code[top->pc++];
      if (in->op != OP_CALL) continue;
      uint32_t g = in->u.index;
      if (w->m->funcs[g].imported) continue;
      if (!w->index[g]) {
        visit(w, g);
        descended = true;
      } else if (w->on_stack[g] && w->index[g] < w->low[top->func]) {
        w->low[top->func] = w->index[g];
      }
    }
    if (descended) continue;
    uint32_t f = top->func;
    if (w->low[f] == w->index[f]) close_component(w, f, (*next_id)++);
    w->ndfs--;
    if (w->ndfs > 0) {
      uint32_t parent = w->dfs[w->ndfs - 1].func;
      if (w->low[f] < w->low[parent]) w->low[parent] = w->low[f];
    }
  }
}

void low_stack_init(low_module_ctx *mc) {
  const wasm_module *m = mc->m;
  uint32_t n = m->nfuncs + 1;
  tw_arena *a = &mc->arena;
  scc_walk w = {
      .m = m,
      .index = tw_arena_alloc(a, n * sizeof(uint32_t)),
      .low = tw_arena_alloc(a, n * sizeof(uint32_t)),
      .stack = tw_arena_alloc(a, n * sizeof(uint32_t)),
      .on_stack = tw_arena_alloc(a, n),
      .dfs = tw_arena_alloc(a, n * sizeof(scc_frame)),
      .scc = tw_arena_alloc(a, n * sizeof(uint32_t)),
      .depth = tw_arena_alloc(a, n),
      .reach_indirect = tw_arena_alloc(a, n),
  };
  uint32_t next_id = 1;
  for (uint32_t f = 0; f < m->nfuncs; f++) {
    w.index[f] = 0;
    w.on_stack[f] = false;
    w.scc[f] = 0; /* imports: a component of their own, id 0 */
    w.depth[f] = -1;
    w.reach_indirect[f] = true;
  }
  for (uint32_t f = 0; f < m->nfuncs; f++)
    if (!m->funcs[f].imported && !w.index[f]) walk_from(&w, f, &next_id);
  mc->stack_scc = w.scc;
  mc->stack_depth = w.depth;
  mc->stack_reach_indirect = w.reach_indirect;
  size_t keys = (size_t)m->ntables * m->ntypes;
  mc->stack_indirect = tw_arena_alloc(a, keys + 1); /* zeroed: all unknown */
}

bool low_stack_call_checked(const low_module_ctx *mc, uint32_t caller, uint32_t callee) {
  const int8_t d = mc->stack_depth[callee];
  return d < 1 || d >= MAX_DEPTH || mc->stack_scc[callee] == mc->stack_scc[caller];
}

bool low_stack_checked_calls(const low_module_ctx *mc, const wasm_func *fn, uint32_t from, uint32_t to) {
  uint32_t caller = (uint32_t)(fn - mc->m->funcs);
  for (uint32_t i = from; i < to && i < fn->ncode; i++) {
    const wasm_insn *in = &fn->code[i];
    if (in->op == OP_CALL_INDIRECT && low_stack_indirect_checked(mc, in->u.pair.a, in->u.pair.b)) return true;
    if (in->op == OP_CALL && low_stack_call_checked(mc, caller, in->u.index)) return true;
  }
  return false;
}

/* Whether every function of sealed table t with type key is small,
 * shallow and reaches no call_indirect (the file's opening comment). */
static bool indirect_bounded(const low_module_ctx *mc, uint32_t t, uint32_t key) {
  const wasm_module *m = mc->m;
  const uint32_t *image = mc->sealed_funcs[t];
  if (!image) return false;
  uint32_t size = (uint32_t)m->tables[t].limits.min;
  for (uint32_t i = 0; i < size; i++) {
    if (!image[i]) continue;
    uint32_t g = image[i] - 1;
    if (low_sealed_key(m, m->funcs[g].type_index) != key) continue;
    /* a depth of 1 or more: small (close_component) */
    int d = mc->stack_depth[g];
    if (d < 1 || d > INDIRECT_MAX_DEPTH || mc->stack_reach_indirect[g]) return false;
  }
  return true;
}

bool low_stack_indirect_checked(const low_module_ctx *mc, uint32_t type_index, uint32_t table_index) {
  uint32_t key = low_sealed_key(mc->m, type_index);
  uint8_t *known = &mc->stack_indirect[(size_t)table_index * mc->m->ntypes + key];
  if (!*known) *known = indirect_bounded(mc, table_index, key) ? 2 : 1;
  return *known == 1;
}
