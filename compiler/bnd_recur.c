/* bnd_recur.c: which functions of a module recurse (lie on a cycle of
 * direct calls), for bnd_insert.c: such a function without calls in
 * loops reads the memory object at each check instead of holding it in a
 * callee-saved register across its calls (the rule low_func.c applies
 * to the memory base). */
#include "bnd.h"

#include <stdint.h>
#include <stdlib.h>

/* The function a call instruction calls directly (defined here), or NULL. */
static LLVMValueRef direct_callee(LLVMValueRef i) {
  if (!LLVMIsACallInst(i)) return NULL;
  LLVMValueRef f = LLVMGetCalledValue(i);
  return f && LLVMIsAFunction(f) && LLVMCountBasicBlocks(f) ? f : NULL;
}

bool bnd_recursive_functions(LLVMModuleRef mod, tw_arena *a, bnd_map *out) {
  *out = (bnd_map){.arena = a};
  unsigned n = 0, nedges = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
    if (!LLVMCountBasicBlocks(f)) continue;
    n++;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
        nedges += direct_callee(i) != NULL;
  }
  if (!n) return true;
  LLVMValueRef *fns = malloc(n * sizeof *fns);
  unsigned *first = malloc((n + 1) * sizeof *first), *to = malloc((nedges + 1) * sizeof *to);
  unsigned *idx = malloc(n * sizeof *idx), *low = malloc(n * sizeof *low), *stack = malloc(n * sizeof *stack);
  unsigned *walk = malloc(n * sizeof *walk), *edge = malloc(n * sizeof *edge);
  bool *on = calloc(n, sizeof *on), ok = fns && first && to && idx && low && stack && walk && edge && on;
  bnd_map number = {.arena = a};
  if (ok) {
    unsigned k = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f))
      if (LLVMCountBasicBlocks(f)) fns[k] = f, bnd_map_put(&number, f, (void *)(uintptr_t)(k + 1)), k++;
    unsigned e = 0;
    for (k = 0; k < n; k++) {
      first[k] = e;
      for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fns[k]); bb; bb = LLVMGetNextBasicBlock(bb))
        for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
          LLVMValueRef callee = direct_callee(i);
          if (callee) to[e++] = (unsigned)(uintptr_t)bnd_map_get(&number, callee) - 1;
        }
    }
    first[n] = e;
    /* Tarjan's strongly connected components, without recursion */
    unsigned next_idx = 1, sp = 0;
    for (k = 0; k < n; k++) idx[k] = 0;
    for (unsigned root = 0; root < n; root++) {
      if (idx[root]) continue;
      unsigned depth = 0;
      walk[depth] = root, edge[depth] = first[root];
      idx[root] = low[root] = next_idx++, stack[sp++] = root, on[root] = true;
      while (true) {
        unsigned v = walk[depth];
        if (edge[depth] < first[v + 1]) {
          unsigned w = to[edge[depth]++];
          if (!idx[w]) {
            idx[w] = low[w] = next_idx++, stack[sp++] = w, on[w] = true;
            walk[++depth] = w, edge[depth] = first[w];
          } else if (on[w] && idx[w] < low[v]) {
            low[v] = idx[w];
          }
          continue;
        }
        if (low[v] == idx[v]) { /* v roots a component: on a cycle when it has two or a self call */
          bool cycle = stack[sp - 1] != v;
          for (unsigned j = first[v]; j < first[v + 1] && !cycle; j++) cycle = to[j] == v;
          unsigned w;
          do {
            w = stack[--sp], on[w] = false;
            if (cycle) bnd_map_put(out, fns[w], fns[w]);
          } while (w != v);
        }
        if (!depth) break;
        depth--;
        if (low[v] < low[walk[depth]]) low[walk[depth]] = low[v];
      }
    }
  }
  free(fns), free(first), free(to), free(idx), free(low), free(stack), free(walk), free(edge), free(on);
  return ok;
}
