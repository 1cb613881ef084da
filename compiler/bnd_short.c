/* bnd_short.c: guard mode, after the guard pass (bnd_late.c), so after
 * LLVM's pipeline and the offload stage: a lone versioned loop (bnd_loop.c)
 * whose checked copy kept no explicit check enters that copy directly,
 * before the versioning test's range arithmetic, when its trip count is at
 * most BND_SHORT_TRIPS (SQLite's OP_Column record-header loop: about two
 * iterations per entry, its test's trip count and three ranges run 0.8 M
 * times in speedtest1).
 *
 * Rounds 11 to 13 (docs/PERFORMANCE.md) added the branch in bnd_loop.c,
 * before LLVM's pipeline, its condition hidden until the late stage: its
 * blocks then stood in the nests the offload stage reads (products lost)
 * and in what LLVM's passes made of large functions (kvstore, dispatch,
 * mujs).  Here nothing before code generation sees it.  The test is found
 * by its mark (BND_MD_TEST; its weights tell the copies apart), the loop's
 * trip count again from the checked copy's exit test (ir_trip), and the
 * short way costs one add and one compare of values the loop's entry
 * already has. */
#include "bnd.h"

#include <string.h>

/* The successor of versioning test br that is the checked copy (the
 * unlikely one by bnd_loop.c's weights, which InstCombine swaps with the
 * arms when it inverts the condition); -1 without them. */
static int checked_successor(LLVMContextRef ctx, LLVMValueRef br) {
  LLVMValueRef prof = LLVMGetMetadata(br, LLVMGetMDKindIDInContext(ctx, "prof", 4));
  if (!prof || LLVMGetMDNodeNumOperands(prof) != 3) return -1;
  LLVMValueRef ops[3];
  LLVMGetMDNodeOperands(prof, ops);
  if (!ops[1] || !ops[2] || !LLVMIsAConstantInt(ops[1]) || !LLVMIsAConstantInt(ops[2])) return -1;
  unsigned long long w0 = LLVMConstIntGetZExtValue(ops[1]), w1 = LLVMConstIntGetZExtValue(ops[2]);
  if (w0 == w1) return -1;
  return w0 > w1 ? 1 : 0;
}

/* What the blocks entry dominates hold: a branch to the out-of-bounds
 * trap (an explicit check) and a back edge (a loop). */
static void region(const ir_cfg *cfg, const ir_dom *dom, int entry, bool *checks, bool *cycle) {
  *checks = *cycle = false;
  for (int k = 0; k < cfg->nblocks; k++) {
    if (!ir_dominates(dom, entry, k)) continue;
    for (int e = 0; e < cfg->blocks[k].nsuccs; e++) {
      int to = cfg->blocks[k].succs[e];
      if (cfg->blocks[k].nsuccs > 1 && bnd_is_oob_trap(cfg->blocks[to].bb)) *checks = true;
      if (ir_dominates(dom, entry, to) && ir_dominates(dom, to, k)) *cycle = true;
    }
  }
}

/* v can be read at the end of block t. */
static bool available(const ir_cfg *cfg, const ir_dom *dom, LLVMValueRef v, int t) {
  if (!v || LLVMIsAConstant(v) || LLVMIsAArgument(v)) return true;
  if (!LLVMIsAInstruction(v)) return false;
  int b = ir_cfg_index(cfg, LLVMGetInstructionParent(v));
  return b >= 0 && ir_dominates(dom, b, t);
}

/* The loop the checked copy's entry s is: its header, or its preheader
 * leading there alone. */
static const ir_loop *loop_at(const ir_loops *lp, const ir_cfg *cfg, int s) {
  const ir_loop *l = lp->innermost[s];
  if (l && l->header == s) return l;
  if (cfg->blocks[s].nsuccs != 1) return NULL;
  int h = cfg->blocks[s].succs[0];
  l = lp->innermost[h];
  return l && l->header == h && l->preheader == s ? l : NULL;
}

static bool is_signed(LLVMIntPredicate p) {
  return p == LLVMIntSLT || p == LLVMIntSLE || p == LLVMIntSGT || p == LLVMIntSGE;
}

/* The i1 "the loop's header runs at most BND_SHORT_TRIPS times", built at
 * b from t's start and bound, or NULL where t is not read.  With x0 the
 * first compared value and s the step, the header runs k + 1 times, k the
 * compares that stay (twasm_rt_trip_count): counting up while x < bound,
 * k = ceil((bound - x0) / s), so k < BND_SHORT_TRIPS exactly when
 * x0 + (BND_SHORT_TRIPS - 1) s >= bound; the other forms alike.  The
 * choice is safe either way (the checked copy is exact whatever the
 * count), so a sum that wraps only sends an entry to the test. */
static bool readable(const ir_trip *t) {
  if (t->kind != IR_TRIP_SYMBOLIC || !t->start || !t->bound || t->bits == 0 || t->bits > 64) return false;
  LLVMTypeRef ty = LLVMTypeOf(t->start);
  if (LLVMGetTypeKind(ty) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(ty) != t->bits || LLVMTypeOf(t->bound) != ty)
    return false;
  int64_t s = t->step;
  switch (t->pred) {
  case LLVMIntULT: case LLVMIntSLT: case LLVMIntULE: case LLVMIntSLE: return s > 0 && s <= INT32_MAX;
  case LLVMIntUGT: case LLVMIntSGT: case LLVMIntUGE: case LLVMIntSGE: return s < 0 && s >= -INT32_MAX;
  case LLVMIntNE: return s != 0 && s <= INT32_MAX && s >= -INT32_MAX;
  default: return false;
  }
}

static LLVMValueRef few_trips(LLVMBuilderRef b, const ir_trip *t) {
  LLVMTypeRef ty = LLVMTypeOf(t->start);
  int64_t s = t->step, m = BND_SHORT_TRIPS - 1;
  uint64_t add = (uint64_t)t->start_add + (t->cmp_next ? (uint64_t)s : 0);
  LLVMValueRef x0 = t->start;
  bool sgn = is_signed(t->pred);
  switch (t->pred) {
  case LLVMIntULT: case LLVMIntSLT: case LLVMIntULE: case LLVMIntSLE: {
    LLVMValueRef far = LLVMBuildAdd(b, x0, LLVMConstInt(ty, add + (uint64_t)(m * s), false), "");
    bool incl = t->pred == LLVMIntULE || t->pred == LLVMIntSLE;
    LLVMIntPredicate p = incl ? (sgn ? LLVMIntSGT : LLVMIntUGT) : (sgn ? LLVMIntSGE : LLVMIntUGE);
    return LLVMBuildICmp(b, p, far, t->bound, "bnd.few");
  }
  case LLVMIntUGT: case LLVMIntSGT: case LLVMIntUGE: case LLVMIntSGE: {
    LLVMValueRef far = LLVMBuildAdd(b, x0, LLVMConstInt(ty, add + (uint64_t)(m * s), false), "");
    bool incl = t->pred == LLVMIntUGE || t->pred == LLVMIntSGE;
    LLVMIntPredicate p = incl ? (sgn ? LLVMIntSLT : LLVMIntULT) : (sgn ? LLVMIntSLE : LLVMIntULE);
    return LLVMBuildICmp(b, p, far, t->bound, "bnd.few");
  }
  default: {
    /* x != bound, an exact hit: (bound - x0) / s compares stay */
    if (add) x0 = LLVMBuildAdd(b, x0, LLVMConstInt(ty, add, false), "");
    LLVMValueRef d = s > 0 ? LLVMBuildSub(b, t->bound, x0, "") : LLVMBuildSub(b, x0, t->bound, "");
    return LLVMBuildICmp(b, LLVMIntULE, d, LLVMConstInt(ty, (uint64_t)(m * (s > 0 ? s : -s)), false), "bnd.few");
  }
  }
}

/* The terms of c that must all hold (want true: `and`, or LLVM's `select
 * a, b, false`) or that each alone leave (want false: `or`, `select a,
 * true, b`), two levels deep; returns how many, in terms[4]. */
static int terms_of(LLVMValueRef c, bool want, LLVMValueRef *terms, int n, int depth) {
  LLVMValueRef a = NULL, b = NULL;
  if (LLVMIsABinaryOperator(c) && LLVMGetInstructionOpcode(c) == (want ? LLVMAnd : LLVMOr))
    a = LLVMGetOperand(c, 0), b = LLVMGetOperand(c, 1);
  else if (LLVMIsASelectInst(c) && LLVMIsAConstantInt(LLVMGetOperand(c, want ? 2 : 1)) &&
           LLVMConstIntGetZExtValue(LLVMGetOperand(c, want ? 2 : 1)) == (want ? 0 : 1))
    a = LLVMGetOperand(c, 0), b = LLVMGetOperand(c, want ? 1 : 2);
  if (!a || depth >= 2) {
    if (n < 4) terms[n++] = c;
    return n;
  }
  n = terms_of(a, want, terms, n, depth + 1);
  return terms_of(b, want, terms, n, depth + 1);
}

/* Where ir_trip read no exit test (LLVM merged the loop's two exits into
 * one branch on an `or`, as in a loop inside another: `++i <= p2 && s <
 * end`), a term of an exit every iteration passes that compares an IV of
 * l (or its next value) with a value read at the end of block t. */
static bool merged_trip(const ir_loop *l, const ir_cfg *cfg, const ir_dom *dom, int t, ir_trip *out) {
  for (int e = 0; e < l->nexits; e++) {
    int from = l->exits[e].from;
    bool every = true;
    for (int k = 0; k < l->nlatches; k++) every = every && ir_dominates(dom, from, l->latches[k]);
    LLVMValueRef br = LLVMGetBasicBlockTerminator(cfg->blocks[from].bb);
    if (!every || !LLVMIsABranchInst(br) || !LLVMIsConditional(br)) continue;
    bool stay_on_true = ir_cfg_index(cfg, LLVMGetSuccessor(br, 1)) == l->exits[e].to;
    LLVMValueRef terms[4];
    int n = terms_of(LLVMGetCondition(br), stay_on_true, terms, 0, 0);
    for (int k = 0; k < n; k++) {
      if (!LLVMIsAICmpInst(terms[k])) continue;
      LLVMIntPredicate p = LLVMGetICmpPredicate(terms[k]);
      if (!stay_on_true) p = ir_inverse_pred(p);
      for (int side = 0; side < 2; side++) {
        LLVMValueRef x = LLVMGetOperand(terms[k], (unsigned)side), bound = LLVMGetOperand(terms[k], 1u - side);
        for (int v = 0; v < l->nivs; v++) {
          const ir_iv *iv = &l->ivs[v];
          if (iv->step_inv || !iv->step || (x != iv->phi && x != iv->next)) continue;
          if (!available(cfg, dom, bound, t)) continue;
          *out = (ir_trip){.kind = IR_TRIP_SYMBOLIC, .iv = iv, .start = iv->start, .bound = bound,
                           .step = iv->step, .pred = side ? ir_swapped_pred(p) : p, .cmp_next = x == iv->next,
                           .bits = iv->bits, .other_exits = true};
          return true;
        }
      }
    }
  }
  return false;
}

/* Intrinsics of pure integer arithmetic, which the test's range
 * arithmetic may hold (llvm.umax and the like). */
static bool pure_intrinsic(LLVMValueRef call) {
  LLVMValueRef callee = LLVMGetCalledValue(call);
  if (!callee || !LLVMIsAFunction(callee) || !LLVMGetIntrinsicID(callee)) return false;
  size_t len;
  const char *name = LLVMGetValueName2(callee, &len);
  static const char *const ok[] = {"llvm.umax.", "llvm.umin.", "llvm.smax.", "llvm.smin.", "llvm.abs.",
                                   "llvm.usub.sat.", "llvm.uadd.sat.", "llvm.uadd.with.overflow.",
                                   "llvm.umul.with.overflow.", "llvm.sadd.with.overflow.",
                                   "llvm.smul.with.overflow.", "llvm.ctlz.", "llvm.cttz."};
  for (unsigned k = 0; k < sizeof ok / sizeof *ok; k++)
    if (len > strlen(ok[k]) && !strncmp(name, ok[k], strlen(ok[k]))) return true;
  return false;
}

/* Marks in moved[] (indexed as insts[]) the instructions of the test's
 * block that only its condition reads, which the short way skips: walked
 * from the end, so each one's users are decided first; a load only where
 * nothing after it that stays may write.  Returns how many. */
static int movable(LLVMValueRef br, LLVMValueRef *insts, int n, bool *moved, tw_arena *a) {
  int count = 0;
  bool writer_after = false;
  bnd_map set = {.arena = a};
  LLVMBasicBlockRef t = LLVMGetInstructionParent(br);
  for (int k = n; k-- > 0;) {
    LLVMValueRef i = insts[k];
    bool ok = !LLVMIsAPHINode(i) && LLVMGetTypeKind(LLVMTypeOf(i)) != LLVMVoidTypeKind;
    if (ok && LLVMIsACallInst(i)) ok = pure_intrinsic(i);
    else if (ok && LLVMIsALoadInst(i)) ok = !writer_after && !LLVMGetVolatile(i) && !LLVMGetOrdering(i);
    else if (ok) ok = LLVMIsABinaryOperator(i) || LLVMIsACmpInst(i) || LLVMIsACastInst(i) ||
                      LLVMIsASelectInst(i) || LLVMIsAGetElementPtrInst(i) || LLVMIsAExtractValueInst(i);
    for (LLVMUseRef u = ok ? LLVMGetFirstUse(i) : NULL; u && ok; u = LLVMGetNextUse(u)) {
      LLVMValueRef user = LLVMGetUser(u);
      ok = user == br || (LLVMIsAInstruction(user) && LLVMGetInstructionParent(user) == t && bnd_map_get(&set, user));
    }
    moved[k] = ok;
    count += ok;
    if (ok) bnd_map_put(&set, i, i);
    if (!ok && (LLVMIsAStoreInst(i) || LLVMIsACallInst(i) || LLVMIsAFenceInst(i) || LLVMIsAAtomicRMWInst(i) ||
                LLVMIsAAtomicCmpXchgInst(i)))
      writer_after = true;
  }
  return count;
}

typedef struct {
  LLVMValueRef br;
  int checked;        /* successor of br entering the checked copy */
  ir_trip trip;       /* the checked copy's */
} short_plan;

/* Rewrites test p: its block T keeps what the short way reads and ends in
 * `br few, checked, go`; go (new) holds the instructions only the test
 * reads, and the test. */
static void add_branch(LLVMContextRef ctx, LLVMBuilderRef b, const short_plan *p, LLVMValueRef few,
                       LLVMValueRef *insts, int n, const bool *moved) {
  LLVMValueRef br = p->br;
  LLVMBasicBlockRef t = LLVMGetInstructionParent(br);
  LLVMBasicBlockRef checked = LLVMGetSuccessor(br, (unsigned)p->checked);
  LLVMBasicBlockRef fast = LLVMGetSuccessor(br, 1u - (unsigned)p->checked);
  LLVMBasicBlockRef next = LLVMGetNextBasicBlock(t);
  LLVMBasicBlockRef go = next ? LLVMInsertBasicBlockInContext(ctx, next, "bnd.go")
                              : LLVMAppendBasicBlockInContext(ctx, LLVMGetBasicBlockParent(t), "bnd.go");
  LLVMPositionBuilderAtEnd(b, go);
  for (int k = 0; k < n; k++)
    if (moved[k]) bnd_move_here(b, insts[k]);
  LLVMValueRef test = LLVMBuildCondBr(b, LLVMGetCondition(br), LLVMGetSuccessor(br, 0), LLVMGetSuccessor(br, 1));
  ir_copy_metadata(br, test);
  LLVMPositionBuilderBefore(b, br);
  LLVMValueRef sbr = LLVMBuildCondBr(b, few, checked, go);
  LLVMInstructionEraseFromParent(br);
  /* the short way the less likely (1 to 8), as rounds 11 and 12 had it:
   * equal weights made code generation lay the rarely run checked copies
   * of Lua's short loops out hot */
  LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
  LLVMMetadataRef w[] = {LLVMMDStringInContext2(ctx, "branch_weights", 14),
                         LLVMValueAsMetadata(LLVMConstInt(i32, 1, false)),
                         LLVMValueAsMetadata(LLVMConstInt(i32, 8, false))};
  LLVMSetMetadata(sbr, LLVMGetMDKindIDInContext(ctx, "prof", 4),
                  LLVMMetadataAsValue(ctx, LLVMMDNodeInContext2(ctx, w, 3)));
  ir_retarget_phis(fast, t, go);
  for (LLVMValueRef phi = LLVMGetFirstInstruction(checked); phi && LLVMIsAPHINode(phi);
       phi = LLVMGetNextInstruction(phi))
    for (unsigned k = 0, m = LLVMCountIncoming(phi); k < m; k++)
      if (LLVMGetIncomingBlock(phi, k) == t) {
        LLVMValueRef v = LLVMGetIncomingValue(phi, k);
        LLVMAddIncoming(phi, &v, &go, 1);
        break;
      }
}

/* The tests of fn worth a short branch, decided on the CFG as it stands
 * (each rewrite only adds a block between a test and its successors). */
static int plan_function(LLVMContextRef ctx, LLVMValueRef fn, tw_arena *a, short_plan **out) {
  unsigned kind = LLVMGetMDKindIDInContext(ctx, BND_MD_TEST, (unsigned)strlen(BND_MD_TEST));
  int ntests = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef br = LLVMGetBasicBlockTerminator(bb);
    ntests += br && LLVMIsABranchInst(br) && LLVMIsConditional(br) && LLVMGetMetadata(br, kind) &&
              !LLVMIsAConstant(LLVMGetCondition(br));
  }
  if (!ntests) return 0;
  ir_cfg cfg;
  ir_dom dom;
  ir_loops lp = {0};
  if (!ir_cfg_build(&cfg, a, fn)) return 0;
  ir_dom_build(&dom, &cfg);
  ir_loops_build(&lp, &cfg, &dom);
  ir_indvar_build(&lp, &dom);
  short_plan *plans = tw_arena_alloc(a, (size_t)ntests * sizeof *plans);
  int n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef br = LLVMGetBasicBlockTerminator(bb);
    if (!br || !LLVMIsABranchInst(br) || !LLVMIsConditional(br) || !LLVMGetMetadata(br, kind) ||
        LLVMIsAConstant(LLVMGetCondition(br)))
      continue;
    int checked = checked_successor(ctx, br);
    if (checked < 0) continue;
    int t = ir_cfg_index(&cfg, bb);
    int s = ir_cfg_index(&cfg, LLVMGetSuccessor(br, (unsigned)checked));
    int f = ir_cfg_index(&cfg, LLVMGetSuccessor(br, 1u - (unsigned)checked));
    /* each copy entered from the test alone */
    if (t < 0 || s <= 0 || f <= 0 || s == f || dom.idom[s] != t || dom.idom[f] != t) continue;
    bool s_checks, s_cycle, f_checks, f_cycle;
    region(&cfg, &dom, s, &s_checks, &s_cycle);
    region(&cfg, &dom, f, &f_checks, &f_cycle);
    /* a checked copy that keeps a check costs more per iteration than the
     * test saves; an unchecked copy LLVM unrolled whole (no loop left)
     * runs few iterations at every entry already (bnd_unversion.c) */
    if (s_checks || !s_cycle || !f_cycle) continue;
    const ir_loop *l = loop_at(&lp, &cfg, s);
    if (!l || l->nchildren) continue;
    ir_trip trip = l->trip;
    if (!readable(&trip) || !available(&cfg, &dom, trip.bound, t))
      if (!merged_trip(l, &cfg, &dom, t, &trip) || !readable(&trip)) continue;
    if (!available(&cfg, &dom, trip.start, t)) continue;
    plans[n++] = (short_plan){.br = br, .checked = checked, .trip = trip};
  }
  *out = plans;
  return n;
}

static unsigned short_function(LLVMContextRef ctx, LLVMBuilderRef b, LLVMValueRef fn) {
  tw_arena a = {0};
  short_plan *plans = NULL;
  int nplans = plan_function(ctx, fn, &a, &plans);
  unsigned added = 0;
  for (int k = 0; k < nplans; k++) {
    LLVMValueRef br = plans[k].br;
    LLVMBasicBlockRef t = LLVMGetInstructionParent(br);
    int n = 0;
    for (LLVMValueRef i = LLVMGetFirstInstruction(t); i != br; i = LLVMGetNextInstruction(i)) n++;
    LLVMValueRef *insts = tw_arena_alloc(&a, (size_t)(n + 1) * sizeof *insts);
    bool *moved = tw_arena_alloc(&a, (size_t)(n + 1) * sizeof *moved);
    n = 0;
    for (LLVMValueRef i = LLVMGetFirstInstruction(t); i != br; i = LLVMGetNextInstruction(i)) insts[n++] = i;
    if (movable(br, insts, n, moved, &a) < BND_SHORT_MIN_SAVED) continue;
    LLVMPositionBuilderBefore(b, br);
    LLVMValueRef few = few_trips(b, &plans[k].trip);
    add_branch(ctx, b, &plans[k], few, insts, n, moved);
    added++;
  }
  tw_arena_free(&a);
  return added;
}

unsigned bnd_short_trips(LLVMModuleRef mod) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  unsigned n = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
    if (LLVMGetFirstBasicBlock(fn)) n += short_function(ctx, b, fn);
  LLVMDisposeBuilder(b);
  return n;
}
