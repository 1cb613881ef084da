/* kn_recog_split.c: a nest whose stores write two or more arrays, as one
 * kernel per array (PolyBench's bicg: s[j] += r[i] * A[i][j] and q[i] +=
 * A[i][j] * p[j] in one j loop).
 *
 * The stores are grouped by the array they write (the same affine terms,
 * constants aside); each group with the instructions feeding it is one
 * part, recognised as a kernel of its own (kr_kind with c->slice set: a
 * part sees only its stores); every part must be a product (matrix or
 * matrix-vector) of a nest two or more loops deep.  Why running the parts one after the other
 * computes what the nest computes: the runtime launches them only when
 * no part writes a byte that another part reads or writes (checked for
 * every pair before the first launch, twasm_rt_offload_group), and each
 * part's own kernel is checked as always (its ranges in memory, its
 * output against its inputs).  Then no part reads a value another part
 * stored and no two parts store to the same byte, so the parts'
 * statements commute across iterations: any order of them, in particular
 * all of part 0's iterations, then all of part 1's, leaves memory as the
 * nest's order does.  Instructions that feed no store are dropped, which
 * changes nothing: the nest calls nothing (scan_nest) and its only
 * effects are its stores, and no value of the nest is used after it
 * (off_version_check). */
#include <stdio.h>

#include "kn_internal.h"

#define KR_MAX_PARTS 4
#define KR_MAX_SPLIT_STORES 32

/* The same affine terms, the constant aside: one array. */
static bool same_array(const kr_affine *x, const kr_affine *y) {
  if (x->n != y->n) return false;
  for (int i = 0; i < x->n; i++) {
    bool found = false;
    for (int k = 0; k < y->n; k++)
      found |= x->t[i].coeff == y->t[k].coeff && x->t[i].dim == y->t[k].dim && x->t[i].param == y->t[k].param;
    if (!found) return false;
  }
  return true;
}

typedef struct {
  LLVMValueRef stores[KR_MAX_SPLIT_STORES];
  int nstores;
  kr_affine key;
} kr_part;

/* The nest's stores in block order, grouped by array; the number of
 * groups, 0 when a store's address is not affine or there are too many. */
static int group_stores(kr_ctx *c, kr_part *parts) {
  const ir_loop *l = c->chain[0];
  int n = 0;
  for (int b = 0; b < l->nbody; b++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(c->cfg->blocks[l->body[b]].bb); i;
         i = LLVMGetNextInstruction(i)) {
      if (!LLVMIsAStoreInst(i)) continue;
      kr_affine a = kr_address(c, LLVMGetOperand(i, 1));
      if (!a.ok) return 0;
      int g = 0;
      while (g < n && !same_array(&parts[g].key, &a)) g++;
      if (g == n) {
        if (n == KR_MAX_PARTS) return 0;
        parts[n++] = (kr_part){.key = a};
      }
      if (parts[g].nstores == KR_MAX_SPLIT_STORES) return 0;
      parts[g].stores[parts[g].nstores++] = i;
    }
  return n;
}

bool kr_split(kr_ctx *c, const kr_ctx *scanned, const kn_recog_nest *out_scanned) {
  kr_part parts[KR_MAX_PARTS];
  kr_ctx g = *scanned;
  g.reason = NULL;
  if (scanned->prologue || scanned->depth < 2) return false;
  int n = group_stores(&g, parts);
  if (n < 2) return false;
  kn_recog_nest *outs = tw_arena_alloc(c->arena, (size_t)n * sizeof *outs);
  kr_ctx first;
  for (int p = 0; p < n; p++) {
    kr_ctx pc = *scanned;
    pc.reason = NULL;
    pc.nodes = NULL;
    pc.nnodes = pc.cap = 0;
    pc.nmemo = 0;
    pc.slice = parts[p].stores;
    pc.nslice = parts[p].nstores;
    outs[p] = *out_scanned;
    pc.out = &outs[p];
    bool ok = kr_kind(&pc);
    /* products only: a loop writing two arrays elementwise stays one
     * loop on the CPU (two launches for it would rarely pay) */
    if (ok && pc.out->desc.kind != KN_MATMUL) ok = kr_fail(&pc, "not a product (only products are split out)");
    if (ok && pc.out->result) ok = kr_fail(&pc, "a reduction's result");
    if (!ok) {
      c->reason = tw_arena_alloc(c->arena, 200);
      snprintf((char *)c->reason, 200, "stores to more than one array (%d; as one kernel each, part %d: %s)", n,
               p + 1, pc.reason ? pc.reason : "not recognised");
      return false;
    }
    outs[p].desc.nodes = pc.nodes;
    outs[p].desc.nnodes = pc.nnodes;
    if (p == 0) first = pc;
  }
  /* the nest is its first part, the others hang from it */
  *c = first;
  c->slice = NULL; /* parts[] is this function's */
  c->nslice = 0;
  c->out = scanned->out;
  *c->out = outs[0];
  c->out->parts = outs + 1;
  c->out->nparts = n - 1;
  return true;
}
