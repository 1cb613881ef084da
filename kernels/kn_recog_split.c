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
#include <string.h>

#include "ir_pass.h"
#include "kn_internal.h"

#define KR_MAX_PARTS 4
#define KR_MAX_SPLIT_STORES 32

/* The same affine terms, the constant aside: one array. */
static bool same_array(const kr_affine *x, const kr_affine *y) {
  kr_affine z = *y;
  z.c = x->c;
  return kr_same_affine(x, &z);
}

typedef struct {
  LLVMValueRef stores[KR_MAX_SPLIT_STORES];
  int nstores;
  kr_affine key;
} kr_part;

/* The nest's stores in block order, grouped by array; the number of
 * groups, 0 when a store's address is not affine or there are too many.
 * A store inside one of loops[0..nl) (loops side by side in c's outer
 * loop) is read with that loop as dim 1. */
static int group_stores(const kr_ctx *c, const ir_loop *const *loops, int nl, kr_part *parts) {
  const ir_loop *l = c->chain[0];
  int n = 0;
  for (int b = 0; b < l->nbody; b++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(c->cfg->blocks[l->body[b]].bb); i;
         i = LLVMGetNextInstruction(i)) {
      if (!LLVMIsAStoreInst(i)) continue;
      kr_ctx at = *c;
      for (int k = 0; k < nl; k++)
        if (loops[k]->in_body[l->body[b]]) at.chain[1] = loops[k], at.depth = 2;
      kr_affine a = kr_address(&at, LLVMGetOperand(i, 1));
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

/* Part p of n as a kernel of its own in pc (scanned's copy, its chain
 * set), into *out, of kind want (KN_MATMUL for the parts, KN_MAP for an
 * epilogue after the loop); false with c->reason saying which part failed. */
static bool recognise_part(kr_ctx *c, kr_ctx *pc, const kr_part *part, int p, int n, kn_kind want,
                           const kn_recog_nest *out_scanned, kn_recog_nest *out) {
  pc->reason = NULL;
  pc->nodes = NULL;
  pc->nnodes = pc->cap = 0;
  pc->nmemo = 0;
  pc->slice = part->stores;
  pc->nslice = part->nstores;
  *out = *out_scanned;
  pc->out = out;
  bool ok = kr_kind(pc);
  /* parts are products only: a loop writing two arrays elementwise stays
   * one loop on the CPU (two launches for it would rarely pay) */
  if (ok && pc->out->desc.kind != want)
    ok = kr_fail(pc, want == KN_MATMUL ? "not a product (only products are split out)" : "not a map");
  if (ok && want == KN_MATMUL && pc->out->result) ok = kr_fail(pc, "a reduction's result");
  if (!ok) {
    c->reason = tw_arena_alloc(c->arena, 200);
    snprintf((char *)c->reason, 200, "stores to more than one array (%d; as one kernel each, part %d%s: %s)", n,
             p + 1, want == KN_MAP ? ", after the loop" : "", pc->reason ? pc->reason : "not recognised");
    return false;
  }
  out->desc.nodes = pc->nodes;
  out->desc.nnodes = pc->nnodes;
  return true;
}

/* The nest is its first part (first: that part's context), the others
 * hang from it. */
static void hang_parts(kr_ctx *c, const kr_ctx *first, const kr_ctx *scanned, kn_recog_nest *outs, int n) {
  *c = *first;
  c->slice = NULL; /* the parts' stores are the caller's */
  c->nslice = 0;
  c->forward = NULL;
  c->nforward = 0;
  c->out = scanned->out;
  *c->out = outs[0];
  c->out->parts = outs + 1;
  c->out->nparts = n - 1;
}

static kr_affine forwardable(kr_ctx *pc, const kr_part *part);
static bool read_after(kr_ctx *pc, const kr_affine *a, const ir_loop *l);
static bool epilogue(kr_ctx *c, kr_part *parts, int n, kr_part *epi, const kn_recog_nest *out_scanned,
                     kn_recog_nest *outs, const kr_ctx *scanned);

/* Moves the stores after the inner loop of a 2-deep nest (a block of the
 * outer loop that the inner loop's header dominates) out of their groups
 * into *epi; the groups left, emptied ones dropped. */
static int take_epilogue(const kr_ctx *c, kr_part *parts, int n, kr_part *epi) {
  const ir_loop *in = c->chain[1];
  int m = 0;
  *epi = (kr_part){0};
  for (int p = 0; p < n; p++) {
    kr_part kept = parts[p];
    kept.nstores = 0;
    for (int s = 0; s < parts[p].nstores; s++) {
      LLVMValueRef st = parts[p].stores[s];
      int bi = ir_cfg_index(c->cfg, LLVMGetInstructionParent(st));
      if (c->depth != 2 || in->in_body[bi] || !ir_dominates(c->dom, in->header, bi)) {
        kept.stores[kept.nstores++] = st;
      } else {
        if (epi->nstores == 0) epi->key = parts[p].key;
        epi->stores[epi->nstores++] = st;
      }
    }
    if (kept.nstores) parts[m++] = kept;
  }
  return m;
}

/* The nest as parts, the stores after the inner loop an epilogue of
 * their own when with_epilogue (else in their arrays' parts: a product's
 * `y[i] = sum` after its k loop). */
static bool split_parts(kr_ctx *c, const kr_ctx *scanned, const kn_recog_nest *out_scanned, bool with_epilogue) {
  kr_part parts[KR_MAX_PARTS], epi = {0};
  int n = group_stores(scanned, NULL, 0, parts);
  if (n < 2) return false;
  if (with_epilogue) {
    n = take_epilogue(scanned, parts, n, &epi);
    if (epi.nstores == 0 || n == 0) return false;
  }
  kn_recog_nest *outs = tw_arena_alloc(c->arena, (size_t)(n + 1) * sizeof *outs);
  kr_ctx first;
  for (int p = 0; p < n; p++) {
    kr_ctx pc = *scanned;
    if (!recognise_part(c, &pc, &parts[p], p, n + (epi.nstores > 0), KN_MATMUL, out_scanned, &outs[p]))
      return false;
    if (p == 0) first = pc;
  }
  if (epi.nstores && !epilogue(c, parts, n, &epi, out_scanned, outs, scanned)) return false;
  hang_parts(c, &first, scanned, outs, n + (epi.nstores > 0));
  return true;
}

bool kr_split(kr_ctx *c, const kr_ctx *scanned, const kn_recog_nest *out_scanned) {
  if (scanned->prologue || scanned->depth < 2) return false;
  if (split_parts(c, scanned, out_scanned, false)) return true;
  /* the second attempt's reason, when it had an epilogue to try */
  const char *why = c->reason;
  c->reason = NULL;
  if (split_parts(c, scanned, out_scanned, true)) return true;
  if (!c->reason) c->reason = why;
  return false;
}

/* ---- Parts in loops side by side, in order (atax) ----
 *
 * for i { tmp[i] = 0; for j tmp[i] += A[i][j] * x[j];
 *         for j y[j] += A[i][j] * tmp[i]; }
 * An outer loop holding two or more innermost loops; the stores are
 * grouped by array as above, each group inside one inner loop (stores of
 * the group in the outer loop must come before that loop: tmp[i] = 0),
 * and the parts are ordered as their loops run (each loop's header
 * dominating the next's).  Each part is recognised over the outer loop
 * and its own inner loop, and must be a product.
 *
 * Why all of part 1, then all of part 2, ... computes what the nest does:
 * the nest runs P1(0) P2(0) P1(1) P2(1) ..., the sequence P1(0) P1(1) ...
 * P2(0) P2(1) ...; the two orders agree unless some P2(i) depends on, or
 * is depended on by, a P1(i') with i' > i.  The runtime refuses the
 * launch (before any) when a later part writes a byte an earlier part
 * reads or writes, and when an earlier part writes a byte a later part
 * reads, except through a forwarded range: a read of exactly the element
 * the earlier part stores on the same outer iteration (tmp[i]).  For
 * those, proved here: every store of that part's array is at one address
 * that moves with the outer loop only, by at least its size (one element
 * per i, written on iteration i only, so P1(i') with i' != i never
 * touches it), the part's stores all run before the later loop on each
 * iteration (in or before its own loop, whose header dominates the later
 * loop's), and every load of that address outside the part's own loop
 * runs after that loop (in a block its header dominates), while loads of
 * it inside the part's loop serve only that loop.  So each forwarded
 * read in P2(i) sees what P1(i) left there, the same value in both
 * orders.  As for kr_split, the nest calls nothing and no value of it is
 * used after it. */

/* The address every store of part holds (in pc's terms), when it is one
 * element per outer iteration; else not ok. */
static kr_affine forwardable(kr_ctx *pc, const kr_part *part) {
  kr_affine none = {.ok = false}, a = none;
  for (int s = 0; s < part->nstores; s++) {
    kr_affine x = kr_address(pc, LLVMGetOperand(part->stores[s], 1));
    if (!x.ok || (s > 0 && !kr_same_affine(&x, &a))) return none;
    a = x;
  }
  int64_t step = 0;
  for (int t = 0; t < a.n; t++) {
    if (a.t[t].dim > 0 || (a.t[t].dim == 0 && a.t[t].param)) return none;
    if (a.t[t].dim == 0) step += a.t[t].coeff;
  }
  LLVMTypeRef ty = LLVMTypeOf(LLVMGetOperand(part->stores[0], 0));
  int64_t size = (int64_t)LLVMABISizeOfType(pc->td, ty);
  return step >= size || -step >= size ? a : none;
}

static bool used_only_in(const kr_ctx *c, LLVMValueRef v, const ir_loop *l) {
  for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    if (!LLVMIsAInstruction(user) || !ir_loop_contains_block(l, LLVMGetInstructionParent(user), c->cfg))
      return false;
  }
  return true;
}

/* Whether every load of address a in the nest reads it after loop l (the
 * part's) on its iteration, or serves l alone; with r, l is r's loop
 * before it, in r->nbefore copies, and after is after r's skip S. */
static bool read_after_in(kr_ctx *pc, const kr_affine *a, const ir_loop *l, const kr_region *r) {
  const ir_loop *root = pc->chain[0];
  for (int b = 0; b < root->nbody; b++) {
    int bi = root->body[b];
    for (LLVMValueRef i = LLVMGetFirstInstruction(pc->cfg->blocks[bi].bb); i; i = LLVMGetNextInstruction(i)) {
      if (!LLVMIsALoadInst(i)) continue;
      kr_affine x = kr_address(pc, LLVMGetOperand(i, 0));
      pc->reason = NULL;
      /* an address the part cannot express moves with another loop: not
       * the same element on every iteration of that loop */
      if (!x.ok || !kr_same_affine(&x, a)) continue;
      const ir_loop *own = l->in_body[bi] ? l : NULL;
      for (int k = 0; r && k < r->nbefore; k++)
        if (r->before[k]->in_body[bi]) own = r->before[k];
      if (own ? !used_only_in(pc, i, own) : !ir_dominates(pc->dom, r ? r->skip : l->header, bi)) return false;
    }
  }
  return true;
}

static bool read_after(kr_ctx *pc, const kr_affine *a, const ir_loop *l) {
  return read_after_in(pc, a, l, NULL);
}

static bool split_region(kr_ctx *c, const kr_ctx *scanned, const kn_recog_nest *out_scanned, const kr_region *found);

bool kr_split_loops(kr_ctx *c, const kr_ctx *scanned, const kn_recog_nest *out_scanned) {
  const ir_loop *root = scanned->chain[0], *loops[KR_MAX_PARTS];
  int nl = root->nchildren;
  kr_ctx probe = *scanned;
  kr_region r;
  if (root->nlatches == 1 && nl > 2 && kr_region_find(&probe, root, &r) && r.nbefore)
    return split_region(c, scanned, out_scanned, &r);
  if (root->nlatches != 1 || nl < 2 || nl > KR_MAX_PARTS) return false;
  for (int i = 0; i < nl; i++) {
    const ir_loop *l = root->children[i];
    if (l->nchildren || l->nlatches != 1) return false;
    int at = i;
    for (; at > 0 && ir_dominates(c->dom, l->header, loops[at - 1]->header); at--) loops[at] = loops[at - 1];
    loops[at] = l;
  }
  for (int i = 0; i + 1 < nl; i++)
    if (!ir_dominates(c->dom, loops[i]->header, loops[i + 1]->header)) return false;
  kr_part groups[KR_MAX_PARTS], parts[KR_MAX_PARTS];
  int n = group_stores(scanned, loops, nl, groups);
  if (n < 2) return false;
  /* each group's loop; the parts in the loops' order */
  int loop_of[KR_MAX_PARTS], np = 0;
  for (int p = 0; p < n; p++) {
    loop_of[p] = -1;
    for (int s = 0; s < groups[p].nstores; s++) {
      int bi = ir_cfg_index(c->cfg, LLVMGetInstructionParent(groups[p].stores[s]));
      int l = 0;
      while (l < nl && !loops[l]->in_body[bi]) l++;
      if (l == nl) continue;
      if (loop_of[p] >= 0 && loop_of[p] != l) return false;
      loop_of[p] = l;
    }
    if (loop_of[p] < 0) return false;
    for (int s = 0; s < groups[p].nstores; s++) {
      int bi = ir_cfg_index(c->cfg, LLVMGetInstructionParent(groups[p].stores[s]));
      if (!loops[loop_of[p]]->in_body[bi] && !ir_dominates(c->dom, bi, loops[loop_of[p]]->header)) return false;
    }
  }
  int part_loop[KR_MAX_PARTS];
  for (int l = 0; l < nl; l++)
    for (int p = 0; p < n; p++)
      if (loop_of[p] == l) part_loop[np] = l, parts[np++] = groups[p];
  kn_recog_nest *outs = tw_arena_alloc(c->arena, (size_t)n * sizeof *outs);
  kr_affine *forward = tw_arena_alloc(c->arena, (size_t)n * sizeof *forward);
  int nforward = 0;
  kr_ctx first;
  for (int p = 0; p < n; p++) {
    kr_ctx pc = *scanned;
    pc.chain[1] = loops[part_loop[p]];
    pc.depth = 2;
    pc.prologue = NULL;
    pc.forward = forward;
    pc.nforward = nforward;
    if (!recognise_part(c, &pc, &parts[p], p, n, KN_MATMUL, out_scanned, &outs[p])) return false;
    if (p == 0) first = pc;
    kr_affine a = forwardable(&pc, &parts[p]);
    if (a.ok && read_after(&pc, &a, pc.chain[1])) forward[nforward++] = a;
  }
  hang_parts(c, &first, scanned, outs, n);
  return true;
}

/* ---- An epilogue after the parts (gesummv) ----
 *
 * for i { tmp[i] = 0; y[i] = 0;
 *         for j { tmp[i] = A[i][j] * x[j] + tmp[i]; y[i] = B[i][j] * x[j] + y[i]; }
 *         y[i] = alpha * tmp[i] + beta * y[i]; }
 * The stores after the inner loop (take_epilogue) are one more part, the
 * last: a map over the outer loop (kr_map at depth 1), reading what the
 * product parts leave.  A value the inner loop computes and stores (y's
 * running sum, used after the loop instead of a load) is read as a load
 * of the element it was stored to (c->stored, kr_expr), when the part it
 * belongs to stores it in the same block, after computing it, as its one
 * store inside the loop, at an element of its own per outer iteration
 * (forwardable, read_after): every computation of the value is followed
 * by its store, no other store of that part in the loop, the other
 * parts' stores writing other bytes (the runtime's check, below), so
 * after the loop memory holds the value last computed.
 *
 * Why the parts in order, the epilogue last, compute what the nest does:
 * the products commute with each other as in kr_split.  The epilogue
 * E(i) reads elements the parts store on iteration i (forwarded reads)
 * and other memory that no part writes (the runtime refuses the launch
 * otherwise: a part's written bytes against the epilogue's other reads),
 * and writes one element per outer iteration (its own output's check,
 * writes_distinct), which no part reads (checked: the epilogue's writes
 * against every earlier part's reads) except through the element it
 * stores itself on that iteration, and which a part may write only as
 * the same element on the same iteration (a forwarded write: the
 * epilogue's stores are at an element some part writes per outer
 * iteration, forwardable; the runtime then lets the two written ranges
 * be the same bytes, and refuses any other overlap).  E(i) runs after the
 * inner loop of iteration i, so after every store of the parts on that
 * iteration; the parts on later iterations never touch what E(i) reads or
 * writes.  So E(i) commutes with every part's later iterations, and
 * running all of E after all parts leaves memory as the nest does. */

/* The part's one store inside the inner loop l, when it stores a value
 * computed before it in its own block; NULL otherwise. */
static LLVMValueRef stored_value(const kr_ctx *c, const kr_part *part, const ir_loop *l) {
  LLVMValueRef st = NULL;
  for (int s = 0; s < part->nstores; s++) {
    if (!ir_loop_contains_block(l, LLVMGetInstructionParent(part->stores[s]), c->cfg)) continue;
    if (st) return NULL;
    st = part->stores[s];
  }
  LLVMValueRef v = st ? LLVMGetOperand(st, 0) : NULL;
  if (!v || !LLVMIsAInstruction(v) || LLVMGetInstructionParent(v) != LLVMGetInstructionParent(st)) return NULL;
  return v;
}

/* What a later part reads of the earlier parts: forwarded elements, and
 * values stored there last (c->stored). */
static void reads_from_parts(kr_ctx *c, const kr_affine *forward, int nforward, const LLVMValueRef *stored,
                             const kr_affine *stored_at, int nstored) {
  c->forward = forward;
  c->nforward = nforward;
  c->stored = stored;
  c->stored_at = stored_at;
  c->nstored = nstored;
}

static bool epilogue(kr_ctx *c, kr_part *parts, int n, kr_part *epi, const kn_recog_nest *out_scanned,
                     kn_recog_nest *outs, const kr_ctx *scanned) {
  kr_affine *forward = tw_arena_alloc(c->arena, (size_t)n * sizeof *forward);
  LLVMValueRef *stored = tw_arena_alloc(c->arena, (size_t)n * sizeof *stored);
  kr_affine *stored_at = tw_arena_alloc(c->arena, (size_t)n * sizeof *stored_at);
  int nforward = 0, nstored = 0;
  const ir_loop *in = scanned->chain[1];
  for (int p = 0; p < n; p++) {
    kr_ctx pc = *scanned;
    kr_affine a = forwardable(&pc, &parts[p]);
    if (!a.ok || !read_after(&pc, &a, in)) continue;
    forward[nforward++] = a;
    LLVMValueRef v = stored_value(&pc, &parts[p], in);
    if (v) stored[nstored] = v, stored_at[nstored++] = a;
  }
  kr_ctx ec = *scanned;
  ec.depth = 1;
  reads_from_parts(&ec, forward, nforward, stored, stored_at, nstored);
  kr_affine at = forwardable(&ec, epi);
  for (int f = 0; at.ok && f < nforward; f++) ec.forward_writes |= kr_same_affine(&at, &forward[f]);
  return recognise_part(c, &ec, epi, n, n + 1, KN_MAP, out_scanned, &outs[n]);
}

/* ---- A part that is a vector region (atax at -O2 -msimd128) ----
 *
 * clang vectorises atax's second j loop (`y[j] += A[i][j] * tmp[i]`)
 * into a region of the i loop (kn_lanes_region.c) and leaves the first,
 * the sum in memory `tmp[i] += A[i][j] * x[j]`, scalar; the bounds pass
 * copies each j loop (fast and checked).  kr_region_find takes that first
 * loop's copies as the region's loop before it (r->before: every copy
 * leaving to the region's skip S, entered after its guard G).  The parts
 * are then the sum (its fast copy as the part's inner loop, with the
 * stores before it: tmp[i] = 0) and the region (R's fast copy, its
 * stores proved as in build_chain: kr_region_prove); why running them in
 * order is the nest is kr_split_loops's argument above, reads of tmp[i]
 * after S forwarded.  The checked copy of the sum is the bounds pass's
 * clone of the same Wasm loop (one `!twasm.loop`), which traps where the
 * Wasm code does and otherwise stores what the fast copy stores; a launch
 * runs only when every access of the parts is in range (the runtime's
 * checks), and its stores are checked here to be at the fast copy's
 * addresses.  V multiplies by tmp[i] as the sum's loop left it in a
 * register (a phi of the copies' last sums) where P and R load tmp[i]:
 * each copy stores that value, computed in the store's block, as its one
 * store, so it is what memory holds after the loop (c->stored, as for an
 * epilogue), and no part writes tmp[i] but the sum (the runtime's
 * checks between parts). */

/* The stores of loop l, at one array's element (in pc's terms, l as dim
 * 1); false when another array or too many. */
static bool loop_part(const kr_ctx *pc, const ir_loop *l, kr_part *part) {
  kr_ctx at = *pc;
  at.chain[1] = l;
  at.depth = 2;
  *part = (kr_part){0};
  for (int b = 0; b < l->nbody; b++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(pc->cfg->blocks[l->body[b]].bb); i; i = LLVMGetNextInstruction(i)) {
      if (!LLVMIsAStoreInst(i)) continue;
      kr_affine a = kr_address(&at, LLVMGetOperand(i, 1));
      if (!a.ok || part->nstores == KR_MAX_SPLIT_STORES || (part->nstores && !kr_same_affine(&a, &part->key)))
        return false;
      part->key = a;
      part->stores[part->nstores++] = i;
    }
  return part->nstores > 0;
}

static bool split_region(kr_ctx *c, const kr_ctx *scanned, const kn_recog_nest *out_scanned, const kr_region *found) {
  kr_region *r = tw_arena_alloc(c->arena, sizeof *r);
  *r = *found;
  const ir_loop *root = scanned->chain[0], *sum = NULL;
  for (int k = 0; k < r->nbefore; k++)
    if (!ir_loop_checked(c->cfg, r->before[k])) {
      if (sum) return false;
      sum = r->before[k];
    }
  kr_part parts[2], copy;
  memset(parts, 0, sizeof parts);
  if (!sum || !loop_part(scanned, sum, &parts[0])) return false;
  for (int k = 0; k < r->nbefore; k++)
    if (!loop_part(scanned, r->before[k], &copy) || copy.nstores != parts[0].nstores ||
        !kr_same_affine(&copy.key, &parts[0].key))
      return false;
  /* part 1 also holds the stores before its loop (the region's check
   * left no others outside the loops but the peel) */
  kr_part pre = {0};
  for (int b = 0; b < root->nbody; b++) {
    int bi = root->body[b];
    bool in_loop = false;
    for (int k = 0; k < root->nchildren; k++) in_loop |= root->children[k]->in_body[bi];
    for (LLVMValueRef i = LLVMGetFirstInstruction(c->cfg->blocks[bi].bb); i && !in_loop; i = LLVMGetNextInstruction(i)) {
      if (!LLVMIsAStoreInst(i) || i == r->peel) continue;
      if (!ir_dominates(c->dom, bi, sum->header) || pre.nstores == KR_MAX_SPLIT_STORES) return false;
      pre.stores[pre.nstores++] = i;
    }
  }
  if (pre.nstores + parts[0].nstores > KR_MAX_SPLIT_STORES) return false;
  memmove(parts[0].stores + pre.nstores, parts[0].stores, (size_t)parts[0].nstores * sizeof *parts[0].stores);
  memcpy(parts[0].stores, pre.stores, (size_t)pre.nstores * sizeof *pre.stores);
  parts[0].nstores += pre.nstores;
  memcpy(parts[1].stores, r->stores, (size_t)r->nstores * sizeof *r->stores);
  parts[1].nstores = r->nstores;
  kn_recog_nest *outs = tw_arena_alloc(c->arena, 2 * sizeof *outs);
  kr_affine *forward = tw_arena_alloc(c->arena, sizeof *forward);
  LLVMValueRef *stored = tw_arena_alloc(c->arena, (size_t)r->nbefore * sizeof *stored);
  kr_affine *stored_at = tw_arena_alloc(c->arena, (size_t)r->nbefore * sizeof *stored_at);
  int nforward = 0, nstored = 0;
  kr_ctx first = *scanned;
  first.chain[1] = sum;
  first.depth = 2;
  first.prologue = NULL;
  first.forward = forward;
  first.nforward = 0;
  if (!recognise_part(c, &first, &parts[0], 0, 2, KN_MATMUL, out_scanned, &outs[0])) return false;
  kr_affine a = forwardable(&first, &parts[0]);
  if (a.ok && read_after_in(&first, &a, sum, r)) {
    forward[nforward++] = a;
    for (int k = 0; k < r->nbefore; k++) {
      if (!loop_part(scanned, r->before[k], &copy)) return false;
      LLVMValueRef v = stored_value(c, &copy, r->before[k]);
      if (v) stored[nstored] = v, stored_at[nstored++] = a;
    }
  }
  kr_ctx pc = *scanned;
  pc.chain[1] = r->rep;
  pc.depth = 2;
  pc.prologue = NULL;
  pc.region = r;
  reads_from_parts(&pc, forward, nforward, stored, stored_at, nstored);
  kn_recog_nest proof = *out_scanned;
  pc.out = &proof;
  if (!kr_region_prove(&pc, r)) {
    c->reason = pc.reason;
    return false;
  }
  if (!recognise_part(c, &pc, &parts[1], 1, 2, KN_MATMUL, out_scanned, &outs[1])) return false;
  hang_parts(c, &first, scanned, outs, 2);
  return true;
}
