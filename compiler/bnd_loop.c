/* bnd_loop.c: bounds-check versioning of loop nests, after LLVM's main
 * pipeline and before the offload stage (guard mode, -O2 and up).
 *
 * Every access carries an exact check (low_memory.c), which keeps loops
 * from being vectorised and costs a compare per access.  For a nest whose
 * checks are affine in its counters, a new block before the nest computes
 * each loop's trip count and, for every such check, the range of its end
 * address over all counter values (bnd_lin.c); when all ranges lie inside
 * the memory as it is then (memory never shrinks), a copy of the nest
 * without those checks runs; otherwise the original, checked nest runs and
 * traps exactly where the spec says.  Checks that are not affine stay in
 * both copies.
 *
 *   before:  br header                 (nest with checks)
 *   after:   bnd.check: ok = trips and ranges inside memory
 *            br ok, fast.header, header   (fast: a copy without them)
 *
 * A nest is tried whole first (the offload stage then sees its plain
 * copy); if some check or trip count there is out of reach, each inner
 * nest is tried, and an innermost loop is versioned for the checks it
 * can prove even if others remain. */
#include "bnd.h"

#include <string.h>

#include "lower.h"

typedef struct {
  tw_arena arena;              /* per analysis of the function */
  LLVMModuleRef mod;
  LLVMContextRef ctx;
  LLVMValueRef fn;
  ir_cfg cfg;
  ir_dom dom;
  ir_loops lp;
  bnd_map *done;               /* blocks of versioned nests (both copies) */
  bnd_map *failed;             /* headers of loops that could not be versioned */
} bnd_fn;

typedef struct {
  bnd_check *checks;
  bool *proved;
  unsigned *widened;           /* proved, and its end's zexts widen: BND_WIDENED | sext bits (bnd_widen.c) */
  int nchecks, nproved;
  LLVMBasicBlockRef block;     /* bnd.check */
  bool never;                  /* the condition is false at compile time */
  LLVMValueRef ok;
} bnd_plan;

static LLVMBasicBlockRef block_of(const bnd_fn *f, int b) { return f->cfg.blocks[b].bb; }

static bool touches_done(const bnd_fn *f, const ir_loop *l) {
  for (int i = 0; i < l->nbody; i++)
    if (bnd_map_get(f->done, block_of(f, l->body[i]))) return true;
  return false;
}

static void collect_checks(bnd_fn *f, const ir_loop *l, bnd_plan *p) {
  p->checks = tw_arena_alloc(&f->arena, (size_t)(l->nbody + 1) * sizeof *p->checks);
  p->proved = tw_arena_alloc(&f->arena, (size_t)(l->nbody + 1) * sizeof *p->proved);
  p->widened = tw_arena_alloc(&f->arena, (size_t)(l->nbody + 1) * sizeof *p->widened);
  for (int i = 0; i < l->nbody; i++)
    if (bnd_check_match(LLVMGetBasicBlockTerminator(block_of(f, l->body[i])), &p->checks[p->nchecks])) {
      p->widened[p->nchecks] = 0;
      p->proved[p->nchecks++] = false;
    }
}

/* The nest's loops, outer first; false when there are too many. */
static bool gather_loops(bnd_nest *n, const ir_loop *l) {
  if (n->nloops == BND_MAX_LOOPS) return false;
  n->loops[n->nloops++] = l;
  for (int i = 0; i < l->nchildren; i++)
    if (!gather_loops(n, l->children[i])) return false;
  return true;
}

/* The memory's size now, loaded as the checks load it. */
static LLVMValueRef size_now(bnd_fn *f, bnd_nest *n, LLVMValueRef like) {
  LLVMTypeRef ptr = LLVMPointerTypeInContext(f->ctx, 0), i64 = LLVMInt64TypeInContext(f->ctx);
  LLVMValueRef eight = LLVMConstInt(i64, 8, false);
  LLVMValueRef at = LLVMBuildInBoundsGEP2(n->b, LLVMInt8TypeInContext(f->ctx), LLVMGetParam(f->fn, 0), &eight, 1, "");
  LLVMValueRef mem = LLVMBuildLoad2(n->b, ptr, at, "bnd.mem");
  unsigned inv = LLVMGetMDKindIDInContext(f->ctx, "invariant.load", 14);
  LLVMSetMetadata(mem, inv, LLVMMetadataAsValue(f->ctx, LLVMMDNodeInContext2(f->ctx, NULL, 0)));
  at = LLVMBuildInBoundsGEP2(n->b, LLVMInt8TypeInContext(f->ctx), mem, &eight, 1, "");
  LLVMValueRef size = LLVMBuildLoad2(n->b, i64, at, "bnd.size");
  static const char *const kinds[] = {"tbaa", "range"};
  for (int k = 0; k < 2; k++) {
    unsigned kind = LLVMGetMDKindIDInContext(f->ctx, kinds[k], (unsigned)strlen(kinds[k]));
    LLVMValueRef md = LLVMGetMetadata(like, kind);
    if (md) LLVMSetMetadata(size, kind, md);
  }
  LLVMSetAlignment(size, LLVMGetAlignment(like));
  return LLVMBuildZExt(n->b, size, n->i128, "");
}

/* Counter bounds of every loop of the nest into n->last (outer loops
 * first: an inner loop's start and bound may move with them); the
 * condition under which they hold, or NULL when one has none. */
static LLVMValueRef emit_trips(bnd_fn *f, bnd_nest *n) {
  LLVMValueRef ok = LLVMConstInt(LLVMInt1TypeInContext(f->ctx), 1, false);
  for (int k = 0; k < n->nloops; k++) {
    LLVMValueRef cond;
    if (!bnd_trip_last(n, n->loops[k], &n->last[k], &cond)) return NULL;
    if (cond) ok = LLVMBuildAnd(n->b, ok, cond, "");
  }
  return ok;
}

/* A check's end address (plus its constant) as base + k: the form's
 * constant additions taken apart, so that the checks of one unrolled body
 * (a[i], a[i + 1], ... through one counter) share their base. */
typedef struct {
  bnd_lin lin;
  LLVMValueRef base;           /* NULL: 0 */
  int64_t kmin, kmax;          /* over the checks of its group */
  int leader;                  /* the group's first check */
} bnd_form;

static void split_constant(bnd_form *f) {
  LLVMValueRef a = f->lin.alpha;
  int64_t k = 0;
  for (int depth = 0; depth < 8 && a && LLVMIsAInstruction(a) && LLVMGetInstructionOpcode(a) == LLVMAdd &&
                      LLVMIsAConstantInt(LLVMGetOperand(a, 1));
       depth++) {
    int64_t c = LLVMConstIntGetSExtValue(LLVMGetOperand(a, 1));
    if (c < -(INT64_C(1) << 40) || c > (INT64_C(1) << 40)) break;
    k += c;
    a = LLVMGetOperand(a, 0);
  }
  if (a && LLVMIsAConstantInt(a)) {
    int64_t c = LLVMConstIntGetSExtValue(a);
    if (c >= -(INT64_C(1) << 40) && c <= (INT64_C(1) << 40)) k += c, a = NULL;
  }
  f->base = a;
  f->kmin = f->kmax = k;
}

/* The form of check c's end plus its constant; false when the end is not
 * affine in the counters. */
static bool form_of(bnd_nest *n, const bnd_check *c, bnd_form *f) {
  /* a narrow end reads unsigned: its form must stay within [0, 2^32) */
  if (!(c->narrow ? bnd_lin_zext(n, c->end, &f->lin) : bnd_lin_of(n, c->end, &f->lin))) return false;
  split_constant(f);
  f->kmin += c->plus, f->kmax += c->plus;
  return true;
}

/* Same base, counter terms and condition (the forms are memoised, so
 * equal terms are the same values). */
static bool same_terms(const bnd_nest *n, const bnd_form *a, const bnd_form *b) {
  if (a->base != b->base || a->lin.cond != b->lin.cond) return false;
  for (int k = 0; k < n->nloops; k++)
    if (a->lin.beta[k] != b->lin.beta[k]) return false;
  return true;
}

static LLVMValueRef plus_k(bnd_nest *n, LLVMValueRef base, int64_t k) {
  LLVMValueRef c = LLVMConstInt(n->i128, (unsigned long long)k, true);
  return base ? LLVMBuildAdd(n->b, base, c, "") : c;
}

/* The condition under which no check of the group led by f can fail
 * anywhere in the nest: each end is base + k + terms with k in
 * [kmin, kmax], so its range lies within that of the smallest and the
 * largest k, one compare each. */
static LLVMValueRef proves(bnd_nest *n, const bnd_form *f, LLVMValueRef size) {
  bnd_lin l = f->lin;
  LLVMValueRef lo, hi, unused;
  l.alpha = plus_k(n, f->base, f->kmin);
  bnd_trip_range(n, &l, &lo, &unused);
  l.alpha = f->kmax == f->kmin ? l.alpha : plus_k(n, f->base, f->kmax);
  bnd_trip_range(n, &l, &unused, &hi);
  LLVMValueRef in = LLVMBuildAnd(n->b, LLVMBuildICmp(n->b, LLVMIntSGE, lo, LLVMConstInt(n->i128, 0, false), ""),
                                 LLVMBuildICmp(n->b, LLVMIntSLE, hi, size, ""), "");
  return l.cond ? LLVMBuildAnd(n->b, in, l.cond, "") : in;
}

/* A zero extension's upper test that a proved check's end test implies
 * goes.  The check's end is zext(x) + d (d >= 1: its constant and plus;
 * a narrow end is x itself, d its plus), so its group's test hi_end <=
 * size, size at most 2^32 (memory 0 holds at most 65536 pages), gives
 * form(x) <= 2^32 - d over the nest: the upper half of x's condition
 * (form(x) <= 2^32 - 1) holds wherever the block's condition, which ands
 * both, does.  Only tests built after the trip counts are recorded (the
 * bounds hi_end is computed from may rest on those), and every condition
 * of the block ends in that one conjunction (compress's match copy: the
 * store's and the load's upper tests, two of the remainder loop's four). */
static void drop_implied_hi(bnd_nest *n, const bnd_check *c) {
  LLVMValueRef x;
  int64_t d = bnd_end_past(c, &x);
  if (!c->narrow) {
    if (!LLVMIsAZExtInst(x)) return;
    x = LLVMGetOperand(x, 0);
  }
  LLVMValueRef hi_ok = d >= 1 ? bnd_map_get(&n->memo, (const char *)x + BND_HI_KEY) : NULL;
  if (!hi_ok || !LLVMGetFirstUse(hi_ok)) return;
  LLVMReplaceAllUsesWith(hi_ok, LLVMConstInt(LLVMInt1TypeInContext(LLVMGetTypeContext(LLVMTypeOf(x))), 1, false));
  LLVMInstructionEraseFromParent(hi_ok);
  bnd_map_put(&n->memo, (const char *)x + BND_HI_KEY, NULL);
}

/* Builds the check block for nest l; false when nothing can be proved at
 * this depth (the block is then gone again). */
static bool plan_nest(bnd_fn *f, const ir_loop *l, bnd_plan *p) {
  bnd_nest n = {.i128 = LLVMIntTypeInContext(f->ctx, 128), .cfg = &f->cfg, .root = l,
                .memo = {.arena = &f->arena}};
  if (!gather_loops(&n, l)) return false;
  p->block = LLVMInsertBasicBlockInContext(f->ctx, block_of(f, l->header), "bnd.check");
  n.b = LLVMCreateBuilderInContext(f->ctx);
  LLVMPositionBuilderAtEnd(n.b, p->block);
  p->ok = emit_trips(f, &n);
  n.hi_tests = true;
  LLVMValueRef size = p->ok ? size_now(f, &n, p->checks[0].size_load) : NULL;
  /* the checks' forms first, grouped by their terms; then one range test
   * per group */
  bnd_form *forms = tw_arena_alloc(&f->arena, (size_t)(p->nchecks + 1) * sizeof *forms);
  for (int i = 0; p->ok && !bnd_is_false(p->ok) && i < p->nchecks; i++) {
    forms[i].leader = -1;
    if (!form_of(&n, &p->checks[i], &forms[i])) continue;
    forms[i].leader = i;
    for (int j = 0; j < i; j++)
      if (forms[j].leader == j && same_terms(&n, &forms[j], &forms[i])) {
        forms[i].leader = j;
        if (forms[i].kmin < forms[j].kmin) forms[j].kmin = forms[i].kmin;
        if (forms[i].kmax > forms[j].kmax) forms[j].kmax = forms[i].kmax;
        break;
      }
  }
  for (int i = 0; p->ok && !bnd_is_false(p->ok) && i < p->nchecks; i++) {
    if (forms[i].leader < 0) continue;
    if (forms[i].leader == i) p->ok = LLVMBuildAnd(n.b, p->ok, proves(&n, &forms[i], size), "");
    p->proved[i] = true;
    p->nproved++;
    unsigned sext;
    LLVMValueRef wide = bnd_widen_cond(&n, &p->checks[i], &sext);
    if (wide) {
      p->ok = LLVMBuildAnd(n.b, p->ok, wide, "");
      p->widened[i] = BND_WIDENED | sext;
    }
  }
  for (int i = 0; p->ok && i < p->nchecks; i++)
    if (p->proved[i]) drop_implied_hi(&n, &p->checks[i]);
  LLVMDisposeBuilder(n.b);
  /* a condition false at compile time (a triangular nest: the inner
   * loop's counter bound over every outer counter, the last of which skips
   * the inner loop) would leave a dead copy; the inner loops are tried on
   * their own instead (try_nest) */
  p->never = p->ok && bnd_is_false(p->ok);
  bool worth = p->ok && !p->never && p->nproved > 0 && (p->nproved == p->nchecks || l->nchildren == 0);
  if (!worth) {
    LLVMDeleteBasicBlock(p->block);
    p->nproved = 0;
  }
  return worth;
}

/* The one block outside l that branches to its header, by one edge. */
static LLVMBasicBlockRef entering(const bnd_fn *f, const ir_loop *l) {
  const ir_block *h = &f->cfg.blocks[l->header];
  LLVMBasicBlockRef from = NULL;
  for (int i = 0; i < h->npreds; i++) {
    if (l->in_body[h->preds[i]]) continue;
    if (from) return NULL;
    from = block_of(f, h->preds[i]);
  }
  LLVMValueRef term = from ? LLVMGetBasicBlockTerminator(from) : NULL;
  unsigned edges = 0;
  for (unsigned s = 0; term && s < LLVMGetNumSuccessors(term); s++)
    edges += LLVMGetSuccessor(term, s) == block_of(f, l->header);
  return edges == 1 ? from : NULL;
}

/* Every value of the nest used after it goes through a phi of an exit
 * block (LCSSA, which the driver establishes), so a copy of the nest
 * only adds incoming edges to those phis. */
static bool closed(const bnd_fn *f, const ir_loop *l) {
  for (int i = 0; i < l->nbody; i++)
    for (LLVMValueRef in = LLVMGetFirstInstruction(block_of(f, l->body[i])); in; in = LLVMGetNextInstruction(in))
      for (LLVMUseRef u = LLVMGetFirstUse(in); u; u = LLVMGetNextUse(u)) {
        LLVMValueRef user = LLVMGetUser(u);
        if (!LLVMIsAInstruction(user)) return false;
        if (ir_loop_contains_block(l, LLVMGetInstructionParent(user), &f->cfg)) continue;
        if (!LLVMIsAPHINode(user)) return false;
        for (unsigned k = 0; k < LLVMCountIncoming(user); k++)
          if (LLVMGetIncomingValue(user, k) == in &&
              !ir_loop_contains_block(l, LLVMGetIncomingBlock(user, k), &f->cfg))
            return false;
      }
  return true;
}

/* Erases v and then its operands while nothing uses them: a check's
 * compare and end address, which the vectoriser's cost model would count
 * (it runs before any cleanup). */
static void erase_dead(LLVMValueRef v, int depth) {
  if (depth > 8 || !v || !LLVMIsAInstruction(v) || LLVMGetFirstUse(v)) return;
  if (!LLVMIsABinaryOperator(v) && !LLVMIsACmpInst(v) && !LLVMIsACastInst(v)) return;
  LLVMValueRef ops[2] = {LLVMGetOperand(v, 0), LLVMGetNumOperands(v) > 1 ? LLVMGetOperand(v, 1) : NULL};
  LLVMInstructionEraseFromParent(v);
  for (int k = 0; k < 2; k++) erase_dead(ops[k], depth + 1);
}

/* A proved check in the copy: straight on to where it continues. */
static void drop_check(LLVMBuilderRef b, LLVMValueRef br, unsigned trap_succ) {
  LLVMBasicBlockRef cont = LLVMGetSuccessor(br, 1 - trap_succ);
  LLVMValueRef cond = LLVMGetCondition(br);
  LLVMPositionBuilderBefore(b, br);
  LLVMBuildBr(b, cont);
  LLVMInstructionEraseFromParent(br);
  erase_dead(cond, 0);
}

static void mark(bnd_fn *f, LLVMBasicBlockRef bb) { bnd_map_put(f->done, bb, bb); }

/* The fast path is the expected one (branch weights as for traps). */
static void mark_likely(bnd_fn *f, LLVMValueRef condbr) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(f->ctx);
  LLVMMetadataRef ops[] = {LLVMMDStringInContext2(f->ctx, "branch_weights", 14),
                           LLVMValueAsMetadata(LLVMConstInt(i32, 1048575, false)),
                           LLVMValueAsMetadata(LLVMConstInt(i32, 1, false))};
  LLVMSetMetadata(condbr, LLVMGetMDKindIDInContext(f->ctx, "prof", 4),
                  LLVMMetadataAsValue(f->ctx, LLVMMDNodeInContext2(f->ctx, ops, 3)));
}

static void version(bnd_fn *f, const ir_loop *l, LLVMBasicBlockRef from, bnd_plan *p) {
  LLVMBasicBlockRef header = block_of(f, l->header);
  LLVMValueRef term = LLVMGetBasicBlockTerminator(from);
  for (unsigned s = 0; s < LLVMGetNumSuccessors(term); s++)
    if (LLVMGetSuccessor(term, s) == header) LLVMSetSuccessor(term, s, p->block);
  /* the sums are read before the header's phis are rebuilt: a check's end
   * may be one of those phis, which ir_retarget_phis erases (the sums
   * themselves are adds, which survive with their operands replaced) */
  LLVMValueRef *sums = tw_arena_alloc(&f->arena, (size_t)(p->nchecks ? p->nchecks : 1) * sizeof *sums);
  for (int i = 0; i < p->nchecks; i++) sums[i] = p->widened[i] ? bnd_widen_sum(&p->checks[i]) : NULL;
  ir_retarget_phis(header, from, p->block);
  LLVMBasicBlockRef *blocks = tw_arena_alloc(&f->arena, (size_t)l->nbody * sizeof *blocks);
  for (int i = 0; i < l->nbody; i++) blocks[i] = block_of(f, l->body[i]);
  bnd_clone c;
  bnd_clone_region(&c, &f->arena, blocks, l->nbody);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(f->ctx);
  /* widened first: dropping a check may erase an end nothing else uses */
  for (int i = 0; i < p->nchecks; i++) {
    LLVMValueRef sum = sums[i];
    LLVMValueRef copy = sum ? bnd_clone_value(&c, sum) : NULL;
    if (copy && copy != sum) bnd_widen_uses(b, copy, p->widened[i] & ~BND_WIDENED);
  }
  for (int i = 0; i < p->nchecks; i++)
    if (p->proved[i]) drop_check(b, bnd_clone_value(&c, p->checks[i].br), p->checks[i].trap_succ);
  bnd_clone_exits(&c);
  LLVMPositionBuilderAtEnd(b, p->block);
  LLVMBasicBlockRef fast = LLVMValueAsBasicBlock(bnd_clone_value(&c, LLVMBasicBlockAsValue(header)));
  LLVMValueRef test = LLVMBuildCondBr(b, p->ok, fast, header);
  mark_likely(f, test);
  LLVMSetMetadata(test, LLVMGetMDKindIDInContext(f->ctx, BND_MD_TEST, strlen(BND_MD_TEST)),
                  LLVMMetadataAsValue(f->ctx, LLVMMDNodeInContext2(f->ctx, NULL, 0)));
  LLVMDisposeBuilder(b);
  bnd_narrow_block(p->block);
  unsigned checked = LLVMGetMDKindIDInContext(f->ctx, BND_MD_CHECKED, strlen(BND_MD_CHECKED));
  LLVMValueRef empty = LLVMMetadataAsValue(f->ctx, LLVMMDNodeInContext2(f->ctx, NULL, 0));
  for (int i = 0; i < l->nbody; i++) {
    LLVMSetMetadata(LLVMGetBasicBlockTerminator(blocks[i]), checked, empty);
    mark(f, blocks[i]);
    mark(f, c.copies[i]);
  }
}

/* Versions l or, failing that, a nest inside it; true when it changed the
 * function (whose analyses are then stale). */
static bool try_nest(bnd_fn *f, const ir_loop *l) {
  /* a nest holding a versioned one is not copied again (four copies);
   * one that failed fails again (the function is analysed anew after each
   * change) */
  LLVMBasicBlockRef header = block_of(f, l->header);
  if (!touches_done(f, l) && !bnd_map_get(f->failed, header)) {
    bnd_plan p = {0};
    collect_checks(f, l, &p);
    if (p.nchecks == 0) return false;
    LLVMBasicBlockRef from = entering(f, l);
    if (from && closed(f, l) && plan_nest(f, l, &p)) {
      version(f, l, from, &p);
      return true;
    }
    bnd_map_put(f->failed, header, header);
    /* ... except under an outer loop of a few iterations (nbody: 5 bodies,
     * 1 to 4 pairs per entry of the inner loop), where the check block, in
     * i128 at every entry, costs more than the checks it saves (nbody's
     * plain build: 5.98 G instructions -> 10.9 G) */
    if (p.never && l->trip.kind == IR_TRIP_CONST && l->trip.count <= 16) return false;
  }
  for (int i = 0; i < l->nchildren; i++)
    if (try_nest(f, l->children[i])) return true;
  return false;
}

static bool analyse(bnd_fn *f) {
  tw_arena_free(&f->arena);
  f->arena = (tw_arena){0};
  if (!ir_cfg_build(&f->cfg, &f->arena, f->fn)) return false;
  ir_dom_build(&f->dom, &f->cfg);
  ir_loops_build(&f->lp, &f->cfg, &f->dom);
  ir_indvar_build(&f->lp, &f->dom);
  return true;
}

unsigned bnd_version_loops(LLVMModuleRef mod) {
  unsigned versioned = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    if (LLVMCountParams(fn) == 0 || !LLVMGetFirstBasicBlock(fn)) continue;
    tw_arena keep = {0};
    bnd_map done = {.arena = &keep}, failed = {.arena = &keep};
    bnd_fn f = {.mod = mod, .ctx = LLVMGetModuleContext(mod), .fn = fn, .done = &done, .failed = &failed};
    /* each change invalidates the analyses: start over until none is left */
    for (bool changed = true; changed && analyse(&f);) {
      changed = false;
      for (int r = 0; !changed && r < f.lp.nroots; r++) changed = try_nest(&f, f.lp.roots[r]);
      versioned += changed;
    }
    tw_arena_free(&f.arena);
    tw_arena_free(&keep);
  }
  return versioned;
}
