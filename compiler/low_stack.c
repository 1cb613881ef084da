/* low_stack.c: which calls need no stack check.  Only an unbounded chain
 * of calls (recursion, direct or through a table) can exhaust the stack.
 * A function whose whole call tree is known, free of cycles and indirect
 * calls, shallow and made of small frames, uses a bounded amount of stack:
 * a call to it may go that far below the limit, well inside the runtime's
 * margin (RT_STACK_MARGIN, 128 KiB; a fault there is still reported as
 * stack exhaustion).  So calls to such functions are not checked, and a
 * function that makes no other call checks nothing, which leaves a small
 * wrapper (a comparator around strcmp, a getter) as cheap as a leaf.
 * Every cycle of the call graph still passes through a check. */
#include "low_internal.h"

/* Frames at most this many locals deep count as small (low_func.c checks
 * larger ones at entry), and call trees at most this high as bounded:
 * together well under the runtime's margin. */
#define SMALL_FRAME_LOCALS 512u
#define MAX_HEIGHT 8
/* The walk itself stops this deep (no unbounded recursion in twasmc). */
#define MAX_WALK 64

enum { UNSEEN = 0, ON_PATH, DONE };

typedef struct {
  const wasm_module *m;
  uint8_t *state;
  int8_t *height;   /* DONE: call tree height, or -1 when unbounded */
} stack_walk;

static int height_of(stack_walk *w, uint32_t f, int depth);

static int calls_height(stack_walk *w, const wasm_func *fn, int depth) {
  int h = 0;
  for (uint32_t i = 0; i < fn->ncode; i++) {
    const wasm_insn *in = &fn->code[i];
    if (in->op == OP_CALL_INDIRECT) return -1;
    if (in->op != OP_CALL) continue;
    int c = height_of(w, in->u.index, depth + 1);
    if (c < 0) return -1;
    if (c > h) h = c;
  }
  return h;
}

/* Height of f's call tree (a leaf: 1), or -1 when it is unbounded or too
 * high to matter.  An import may be another module's function that calls
 * back into this one: unbounded. */
static int height_of(stack_walk *w, uint32_t f, int depth) {
  const wasm_func *fn = &w->m->funcs[f];
  if (fn->imported) return -1;
  if (w->state[f] == DONE) return w->height[f];
  if (w->state[f] == ON_PATH || depth > MAX_WALK || fn->nlocals > SMALL_FRAME_LOCALS) return -1;
  w->state[f] = ON_PATH;
  int h = calls_height(w, fn, depth);
  if (h >= 0) h = h + 1 > MAX_HEIGHT ? -1 : h + 1;
  w->state[f] = DONE;
  w->height[f] = (int8_t)h;
  return h;
}

void low_stack_init(low_module_ctx *mc) {
  const wasm_module *m = mc->m;
  stack_walk w = {m, tw_arena_alloc(&mc->arena, m->nfuncs + 1), tw_arena_alloc(&mc->arena, m->nfuncs + 1)};
  mc->stack_bounded = tw_arena_alloc(&mc->arena, (m->nfuncs + 1) * sizeof *mc->stack_bounded);
  for (uint32_t f = 0; f < m->nfuncs; f++) w.state[f] = UNSEEN;
  for (uint32_t f = 0; f < m->nfuncs; f++) mc->stack_bounded[f] = height_of(&w, f, 0) >= 0;
}

bool low_stack_checked_calls(const low_module_ctx *mc, const wasm_func *fn, uint32_t from, uint32_t to) {
  for (uint32_t i = from; i < to && i < fn->ncode; i++) {
    const wasm_insn *in = &fn->code[i];
    if (in->op == OP_CALL_INDIRECT || (in->op == OP_CALL && !mc->stack_bounded[in->u.index])) return true;
  }
  return false;
}
