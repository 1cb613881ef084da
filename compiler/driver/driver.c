/* driver.c: the whole compilation in one call: decode, validate, then the
 * pass pipeline over the host module (one table, `pipeline` below), then
 * the object (drv_codegen.c: in parts on several threads for a large
 * module).  Each phase and pass is reported through drv_options.progress. */
#include "driver.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Support.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "arena.h"
#include "bnd.h"
#include "decode.h"
#include "drv_internal.h"
#include "header.h"
#include "ir_pass.h"
#include "lower.h"
#include "twasm_abi.h"
#include "validate.h"

void drv_options_default(drv_options *o) {
  memset(o, 0, sizeof *o);
  o->opt_level = 2;
  o->bounds_mode = TWASM_BOUNDS_GUARD;
  o->desc_symbol = "twasm_module";
  o->offload.enabled = true;
}

/* Decode then validate: the front half every entry point shares; each a
 * phase reported with its time when o is given. */
static drv_status parse_reported(tw_arena *arena, const uint8_t *bytes, size_t size,
                                 const char *filename, wasm_module *m, const drv_options *o,
                                 tw_diag *d) {
  drv_report(o, (drv_event){.kind = DRV_EV_BEGIN, .name = "decode"});
  double t0 = drv_now();
  bool ok = dec_module(arena, bytes, size, filename, m, d);
  double t1 = drv_now();
  drv_report(o, (drv_event){.kind = DRV_EV_END, .name = "decode", .seconds = t1 - t0});
  if (!ok) return DRV_MALFORMED;
  drv_report(o, (drv_event){.kind = DRV_EV_BEGIN, .name = "validate"});
  ok = val_module(m, d);
  drv_report(o, (drv_event){.kind = DRV_EV_END, .name = "validate", .seconds = drv_now() - t1});
  return ok ? DRV_OK : DRV_INVALID;
}

static drv_status parse(tw_arena *arena, const uint8_t *bytes, size_t size, const char *filename,
                        wasm_module *m, tw_diag *d) {
  return parse_reported(arena, bytes, size, filename, m, NULL, d);
}

drv_status drv_check(const uint8_t *bytes, size_t size, const char *filename, tw_diag *d) {
  tw_arena arena = {0};
  wasm_module m;
  drv_status st = parse(&arena, bytes, size, filename, &m, d);
  tw_arena_free(&arena);
  return st;
}

static bool run_passes(LLVMModuleRef mod, LLVMTargetMachineRef tm, const char *passes,
                       tw_diag *d) {
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(mod, passes, tm, po);
  LLVMDisposePassBuilderOptions(po);
  if (err) {
    char *msg = LLVMGetErrorMessage(err);
    tw_fail(d, TW_DIAG_NO_OFFSET, "LLVM optimisation failed: %s", msg);
    LLVMDisposeErrorMessage(msg);
    return false;
  }
  return true;
}

static int clamp_level(int opt_level) { return opt_level < 0 ? 0 : opt_level > 3 ? 3 : opt_level; }

static const char *stem_of(const char *filename, char *buf, size_t cap) {
  const char *base = strrchr(filename, '/');
  base = base ? base + 1 : filename;
  snprintf(buf, cap, "%s", base);
  char *dot = strrchr(buf, '.');
  if (dot && dot != buf) *dot = 0;
  return buf;
}

/* Memory 0's declared maximum (an imported memory's actual maximum is
 * within its import's), else the runtime's limit. */
static uint64_t max_memory_bytes(const wasm_module *m) {
  const wasm_limits *l = &m->mems[0].limits;
  uint64_t pages = l->has_max && l->max < TWASM_MAX_PAGES ? l->max : TWASM_MAX_PAGES;
  return pages * TWASM_PAGE_SIZE;
}

/* ---- the pipeline ----------------------------------------------------------
 * One compilation as it goes through the passes below. */
typedef struct {
  const drv_options *o;
  const wasm_module *m;
  const char *filename;
  LLVMContextRef ctx;
  LLVMTargetMachineRef tm;
  LLVMModuleRef mod;         /* made by the lower pass */
  LLVMValueRef *funcs;       /* [m->nfuncs] lowering's function of each (NULL: import) */
  low_options lo;
  unsigned nkernels;         /* embedded by the offload pass */
  char detail[64];           /* what the pass did, for the report */
  tw_diag *d;
} drv_run;

static bool lower(drv_run *r) {
  if (!low_module(r->ctx, r->m, &r->lo, &r->mod, r->d)) return false;
  char *triple = LLVMGetTargetMachineTriple(r->tm);
  LLVMSetTarget(r->mod, triple);
  LLVMDisposeMessage(triple);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(r->tm);
  LLVMSetModuleDataLayout(r->mod, dl);
  LLVMDisposeTargetData(dl);
  return true;
}

static bool mem2reg(drv_run *r) { return run_passes(r->mod, r->tm, "function(mem2reg)", r->d); }

static bool reroll(drv_run *r) {
  unsigned n = ir_reroll_loops(r->mod, true);
  snprintf(r->detail, sizeof r->detail, "%u loop%s", n, n == 1 ? "" : "s");
  return true;
}

static bool skipped(const drv_run *r, const char *name) { return r->o->skip_pass && !strcmp(r->o->skip_pass, name); }

/* Guard mode: the bounds pass's inliner decides on a trial clone of the
 * module re-rolled without checked copies and with its addresses folded,
 * as the module was before the re-roll kept them; the calls it inlined
 * are marked for the real one (ir_inline.c). */
static bool decide_inlining(drv_run *r) {
  unsigned nfuncs, ncalls = ir_calls_number(r->mod, &nfuncs), n = 0;
  if (ncalls > 0) {
    unsigned char *buf = calloc(2 * ((size_t)ncalls * 2 + nfuncs), 1);
    if (!buf) return tw_fail(r->d, TW_DIAG_NO_OFFSET, "out of memory");
    ir_call_seen before = {ncalls, nfuncs, buf, buf + ncalls, buf + 2 * ncalls};
    unsigned char *a = buf + 2 * ncalls + nfuncs;
    ir_call_seen after = {ncalls, nfuncs, a, a + ncalls, a + 2 * ncalls};
    LLVMModuleRef trial = LLVMCloneModule(r->mod);
    ir_reroll_loops(trial, false);
    if (!skipped(r, "addresses")) ir_fold_address_adds(trial, max_memory_bytes(r->m));
    ir_calls_seen(trial, &before);
    bool ok = run_passes(trial, r->tm, "cgscc(inline)", r->d);
    if (ok) {
      ir_calls_seen(trial, &after);
      n = ir_calls_mark_inlined(r->mod, &before, &after);
    }
    LLVMDisposeModule(trial);
    free(buf);
    if (!ok) return false;
  }
  snprintf(r->detail, sizeof r->detail, "%u of %u call%s", n, ncalls, ncalls == 1 ? "" : "s");
  return true;
}

static bool fold_addresses(drv_run *r) {
  unsigned n = ir_fold_address_adds(r->mod, max_memory_bytes(r->m));
  snprintf(r->detail, sizeof r->detail, "%u address%s", n, n == 1 ? "" : "es");
  return true;
}

/* After the bounds pass, so that its loop versioning does not see the
 * flags (more loops versioned, whose tests at entry cost more than
 * short loops gain: json, recurse). */
static bool mark_pointers(drv_run *r) {
  unsigned n = ir_mark_pointer_increments(r->mod, max_memory_bytes(r->m));
  snprintf(r->detail, sizeof r->detail, "%u increment%s", n, n == 1 ? "" : "s");
  return true;
}

/* Guard mode: the bounds check of every access, and check-free copies of
 * the loops one test can prove (compiler/bnd*.c). */
static bool bounds(drv_run *r) {
  return bnd_module(r->mod, r->tm, r->m, r->o->opt_level, r->d);
}

/* LLVM's threshold for non-trivial unswitching, raised once for the
 * process (ir_unswitch.c says why). */
static void raise_unswitch_threshold(void) {
  char arg[48];
  snprintf(arg, sizeof arg, "-unswitch-threshold=%d", IR_UNSWITCH_THRESHOLD);
  const char *argv[] = {"twasmc", arg};
  LLVMParseCommandLineOptions(2, argv, NULL);
}

/* Loops switching on a loop-invariant devirtualised table index, one copy
 * per case; other functions masked from the unswitching (ir_unswitch.c). */
static bool unswitch(drv_run *r) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  /* at every -O2 and above, so that every compilation in a process sees
   * the same LLVM options (default<O3>'s own non-trivial unswitching
   * reads the threshold too) */
  pthread_once(&once, raise_unswitch_threshold);
  unsigned n = ir_unswitch_mask(r->mod);
  bool ok = true;
  if (n > 0) {
    ok = run_passes(r->mod, r->tm, "function(loop-mssa(simple-loop-unswitch<nontrivial>))", r->d);
  }
  ir_unswitch_unmask(r->mod);
  snprintf(r->detail, sizeof r->detail, "%u function%s", n, n == 1 ? "" : "s");
  return ok;
}

static bool hold(drv_run *r) {
  ir_hold_loops(r->mod);
  return true;
}

/* (PipelineTuningOptions do not reach default<O2> through LLVM 19's
 * LLVMRunPasses: the vectorisers ran regardless, hence the hold.) */
static bool optimise(drv_run *r) {
  char passes[64];
  /* with offload: every loop again with a preheader and dedicated exits
   * (simplifycfg folds them), so that a reduction's result reaches its
   * uses through an exit the versioning can merge the kernel's into */
  snprintf(passes, sizeof passes, "default<O%d>%s", clamp_level(r->o->opt_level),
           r->o->offload.enabled && r->o->opt_level >= 2 ? ",function(loop-simplify)" : "");
  snprintf(r->detail, sizeof r->detail, "%s", passes);
  return run_passes(r->mod, r->tm, passes, r->d);
}

/* Lowering hands each Wasm function's LLVM function over (funcs_out); the
 * PTX time per arch is reported as parts of this pass. */
static bool offload(drv_run *r) {
  const wasm_module *m = r->m;
  off_func *funcs = calloc(m->nfuncs + 1, sizeof *funcs);
  if (!funcs) return tw_fail(r->d, TW_DIAG_NO_OFFSET, "out of memory");
  for (uint32_t i = 0; i < m->nfuncs; i++)
    funcs[i] = (off_func){r->funcs[i], m->funcs[i].name, m->funcs[i].body_offset};
  off_options oo = r->o->offload;
  off_times times = {0};
  oo.times = &times;
  bool ok = off_module(r->mod, funcs, m->nfuncs, r->filename, r->lo.desc_symbol, &oo,
                       r->o->offload_report, &r->nkernels, r->d);
  free(funcs);
  for (unsigned i = 0; i < times.narchs; i++) {
    char name[32];
    snprintf(name, sizeof name, "ptx sm_%u%s", times.sm[i], times.specific[i] ? "a" : "");
    drv_report(r->o, (drv_event){.kind = DRV_EV_END, .name = name, .depth = 1,
                                 .seconds = times.seconds[i]});
  }
  snprintf(r->detail, sizeof r->detail, "%u kernel%s", r->nkernels, r->nkernels == 1 ? "" : "s");
  return ok;
}

/* Loop versioning edited optimised IR: a slip there must be an error, not
 * a miscompilation. */
static bool verify(drv_run *r) {
  char *msg = NULL;
  bool broken = LLVMVerifyModule(r->mod, LLVMReturnStatusAction, &msg);
  if (broken) {
    /* name the first broken function, so that the fault can be reduced */
    const char *fname = "?";
    for (LLVMValueRef f = LLVMGetFirstFunction(r->mod); f; f = LLVMGetNextFunction(f))
      if (!LLVMIsDeclaration(f) && LLVMVerifyFunction(f, LLVMReturnStatusAction)) {
        fname = LLVMGetValueName(f);
        break;
      }
    tw_fail(r->d, TW_DIAG_NO_OFFSET, "internal error: offloaded module is invalid (in %s): %.300s", fname,
            msg ? msg : "");
  }
  LLVMDisposeMessage(msg);
  return !broken;
}

/* Who may call each function besides its callers in the module
 * (OFF_REACH_*): the host (exports, the start function), or a table or
 * the host through a funcref (every function a segment or a global's
 * initialiser names; ref.func in code needs one of those too). */
static void reaching(const wasm_module *m, uint8_t *reach) {
  for (uint32_t i = 0; i < m->nexports; i++)
    if (m->exports[i].kind == EXT_FUNC && m->exports[i].index < m->nfuncs) reach[m->exports[i].index] |= OFF_REACH_HOST;
  if (m->has_start && m->start < m->nfuncs) reach[m->start] |= OFF_REACH_HOST;
  for (uint32_t e = 0; e < m->nelems; e++)
    for (uint32_t k = 0; k < m->elems[e].nitems; k++) {
      const wasm_constexpr *ce = &m->elems[e].items[k];
      for (uint32_t j = 0; j < ce->ncode; j++)
        if (ce->code[j].op == OP_REF_FUNC && ce->code[j].u.index < m->nfuncs)
          reach[ce->code[j].u.index] |= OFF_REACH_TABLE;
    }
  for (uint32_t g = 0; g < m->nglobals; g++)
    for (uint32_t j = 0; !m->globals[g].imported && j < m->globals[g].init.ncode; j++)
      if (m->globals[g].init.code[j].op == OP_REF_FUNC && m->globals[g].init.code[j].u.index < m->nfuncs)
        reach[m->globals[g].init.code[j].u.index] |= OFF_REACH_TABLE;
}

/* Launches that may go unwaited, the code waiting where the CPU may touch
 * their bytes (off_wait.c). */
static bool place_waits(drv_run *r) {
  uint8_t *reach = calloc(r->m->nfuncs + 1, 1);
  if (!reach) return tw_fail(r->d, TW_DIAG_NO_OFFSET, "out of memory");
  reaching(r->m, reach);
  unsigned n = off_place_waits(r->mod, reach, r->m->nfuncs);
  free(reach);
  snprintf(r->detail, sizeof r->detail, "%u launch%s", n, n == 1 ? "" : "es");
  return true;
}

/* The held calls that LLVM's inliner would have taken inlined now, and
 * only those (ir_release_calls). */
static bool release(drv_run *r) {
  ir_release_loops(r->mod);
  return ir_release_calls(r->mod) == 0 || run_passes(r->mod, r->tm, "always-inline", r->d);
}

static bool hold_calls(drv_run *r) {
  unsigned n = ir_hold_calls(r->mod);
  snprintf(r->detail, sizeof r->detail, "%u call%s", n, n == 1 ? "" : "s");
  return true;
}

/* The tail of LLVM's O2/O3 module optimisation pipeline, from the loop
 * vectoriser on (PassBuilder::buildModuleOptimizationPipeline).  A bare
 * "instcombine" in a pipeline text verifies that one iteration reached a
 * fixpoint and aborts the process otherwise; the standard pipeline does not. */
static bool late(drv_run *r) {
  char passes[512];
  snprintf(passes, sizeof passes,
           "function(loop-vectorize,loop-load-elim,instcombine<no-verify-fixpoint>,simplifycfg,"
           "slp-vectorizer,vector-combine,instcombine<no-verify-fixpoint>,loop-unroll<O%d>,sroa,"
           "instcombine<no-verify-fixpoint>,"
           "loop-mssa(licm),alignment-from-assumptions,loop-sink,instsimplify,div-rem-pairs,"
           "simplifycfg)",
           clamp_level(r->o->opt_level));
  return run_passes(r->mod, r->tm, passes, r->d);
}

/* Staged only: without the offload stage LLVM's pipeline has run its
 * unroller, which has already doubled such loops (and marked them). */
static bool vector_unroll(drv_run *r) {
  unsigned n = ir_unroll_vector_loops(r->mod);
  snprintf(r->detail, sizeof r->detail, "%u loop%s", n, n == 1 ? "" : "s");
  return true;
}

static bool narrow_lanes(drv_run *r) {
  unsigned n = ir_share_byte_sums(r->mod);
  n += ir_narrow_lanes(r->mod);
  snprintf(r->detail, sizeof r->detail, "%u rewrite%s", n, n == 1 ? "" : "s");
  return true;
}

static bool widen_masks(drv_run *r) {
  unsigned n = ir_widen_address_masks(r->mod);
  snprintf(r->detail, sizeof r->detail, "%u mask%s", n, n == 1 ? "" : "s");
  return true;
}

/* Guard mode: the checks the guard pages can stand in for, removed
 * (bnd_late.c); after every IR pass, since it hands code generation
 * accesses that may fault. */
static bool late_bounds(drv_run *r) {
  unsigned n = bnd_late(r->mod);
  snprintf(r->detail, sizeof r->detail, "%u check%s", n, n == 1 ? "" : "s");
  return true;
}

/* Selects waiting on pointer-chasing loads, branches again
 * (ir_select_branch.c). */
static bool branch_selects(drv_run *r) {
  unsigned n = ir_branch_chasing_selects(r->mod);
  snprintf(r->detail, sizeof r->detail, "%u select%s", n, n == 1 ? "" : "s");
  return true;
}

/* Addresses computed again beside their accesses in other blocks, for
 * the addressing modes (ir_sink_addr.c). */
static bool sink_addresses(drv_run *r) {
  unsigned n = ir_sink_addresses(r->mod);
  snprintf(r->detail, sizeof r->detail, "%u address%s", n, n == 1 ? "" : "es");
  return true;
}

/* A vector loop's guard given a block of its own, for the offload stage's
 * regions (ir_split_head.c). */
static bool split_heads(drv_run *r) {
  unsigned n = ir_split_guard_heads(r->mod);
  snprintf(r->detail, sizeof r->detail, "%u block%s", n, n == 1 ? "" : "s");
  return true;
}

/* Guest offsets LICM hoisted out of loops, computed again beside their
 * users inside (ir_remat.c). */
static bool remat_offsets(drv_run *r) {
  unsigned n = ir_remat_offsets(r->mod);
  snprintf(r->detail, sizeof r->detail, "%u offset%s", n, n == 1 ? "" : "s");
  return true;
}

/* Last: the trap's blocks joined to the return, for shrink wrapping
 * (ir_trap_exit.c). */
static bool join_traps(drv_run *r) {
  unsigned n = ir_join_trap_exits(r->mod);
  snprintf(r->detail, sizeof r->detail, "%u block%s", n, n == 1 ? "" : "s");
  return true;
}

/* Last before code generation: jump tables from zero (drv_tables.c). */
static bool zero_based_tables(drv_run *r) {
  unsigned n = drv_zero_based_tables(r->mod);
  snprintf(r->detail, sizeof r->detail, "%u switch%s", n, n == 1 ? "" : "es");
  return true;
}

static bool always(const drv_run *r) { return r->o != NULL; }
static bool at_o1(const drv_run *r) { return r->o->opt_level >= 1; }
static bool at_o2(const drv_run *r) { return r->o->opt_level >= 2; }
static bool rerolling(const drv_run *r) { return at_o2(r) && !r->o->no_reroll; }
static bool with_memory_o1(const drv_run *r) { return at_o1(r) && r->m->nmems > 0; }
static bool with_memory(const drv_run *r) { return at_o2(r) && r->m->nmems > 0; }
/* With offload at -O2 and above the pipeline is staged: recognition sees
 * loops in their plain scalar form, and the CPU versions it keeps are
 * still vectorised and unrolled afterwards. */
static bool staged(const drv_run *r) { return r->o->offload.enabled && at_o2(r); }
static bool offloading(const drv_run *r) { return r->o->offload.enabled; }
static bool has_kernels(const drv_run *r) { return r->nkernels > 0; }
static bool guard_mode(const drv_run *r) { return r->o->bounds_mode == TWASM_BOUNDS_GUARD; }
/* after the bounds pass only: --skip-pass=bounds leaves no checks */
static bool guard_memory(const drv_run *r) {
  return guard_mode(r) && r->m->nmems > 0 && !(r->o->skip_pass && !strcmp(r->o->skip_pass, "bounds"));
}
/* the re-roll keeps checked copies and the bounds pass inlines after it */
static bool inline_trial(const drv_run *r) { return rerolling(r) && guard_memory(r); }

/* per_part: function-local work only, so it may run on each part of a
 * large module cut for code generation (drv_split.c), on the part's
 * thread; every pass after one is per_part too. */
typedef struct {
  const char *name;                  /* for --dump-after and -v */
  bool (*when)(const drv_run *r);
  bool (*run)(drv_run *r);
  const char *what;
  bool per_part;
} drv_pass;

/* The passes over the host module, in order. */
static const drv_pass pipeline[] = {
  {"lower",     always,      lower,          "validated Wasm -> LLVM IR (compiler/low_*.c)", false},
  {"mem2reg",   at_o2,       mem2reg,        "locals -> SSA values", false},
  {"calls",     staged,      hold_calls,     "calls in loops to float functions that store nothing (expf) kept out of line for the offload stage (ir_hold.c)", false},
  {"inline",    inline_trial, decide_inlining, "calls the bounds pass inlines, decided on a clone re-rolled without checked copies (ir_inline.c)", false},
  {"reroll",    rerolling,   reroll,         "loops clang unrolled (by 2 to 32, or sums unrolled completely), re-rolled (ir_reroll*.c)", false},
  {"addresses", with_memory, fold_addresses, "zext(x + c) -> zext(x) + c where proven (ir_address.c)", false},
  {"bounds",    guard_mode,  bounds,         "exact bounds checks, loops' hoisted before them (compiler/bnd*.c)", false},
  {"pointers",  with_memory, mark_pointers,  "nuw on loops' i32 pointer increments an access bounds (ir_address_loop.c)", false},
  {"unswitch",  at_o2,       unswitch,       "loops switching on an invariant devirtualised call_indirect index, one copy per case (ir_unswitch.c)", false},
  {"hold",      staged,      hold,           "loops kept from vectorising and unrolling (ir_hold.c)", false},
  {"optimise",  always,      optimise,       "LLVM's default<On>", false},
  {"heads",     offloading,  split_heads,    "vector loops' guards cut from the call or store before them in their block (ir_split_head.c)", false},
  {"offload",   offloading,  offload,        "tensor loops -> PTX kernels, nests versioned (compiler/off)", false},
  {"waits",     has_kernels, place_waits,    "launches of products that may go unwaited, the code waiting before it may touch their bytes (off_wait.c)", false},
  {"verify",    has_kernels, verify,         "the versioned module and its waits checked", false},
  {"release",   staged,      release,        "the hold lifted (ir_hold.c)", true},
  {"vunroll",   staged,      vector_unroll,  "one-block loops of v128 arithmetic asked to be unrolled by 4 (ir_vunroll.c)", true},
  {"late",      staged,      late,           "loop vectoriser, SLP, unroller: LLVM's pipeline tail", true},
  {"lanes",     at_o1,       narrow_lanes,   "vector lanes wider than their values, narrowed for SSE2 (ir_lanes.c)", true},
  {"masks",     with_memory_o1, widen_masks, "address zero-extension masks narrowed by InstCombine restored (ir_mask.c)", true},
  {"guard",     guard_memory, late_bounds,   "checks the guard pages stand in for, removed; their accesses labelled (bnd_late.c)", true},
  {"selects",   at_o2,       branch_selects, "selects a loop's pointer-chasing load waits on, branches again (ir_select_branch.c)", true},
  {"sinkaddr",  at_o2,       sink_addresses, "addresses LICM hoisted, computed again beside their loads and stores for the addressing modes (ir_sink_addr.c)", true},
  {"remat",     at_o2,       remat_offsets,  "guest offsets `X + C` LICM hoisted out of a loop, computed again beside their users in it (ir_remat.c)", true},
  {"traps",     at_o2,       join_traps,     "merged trap blocks split per check (ir_trap_split.c); trap calls branch to the return block, so prologues shrink-wrap past early returns (ir_trap_exit.c)", true},
  {"tables",    at_o2,       zero_based_tables, "switches with a dense jump table from a small k > 0, from 0 behind a range test of their own, so the dispatch subtracts nothing (drv_tables.c)", true},
};
enum { NPASSES = sizeof pipeline / sizeof pipeline[0] };

const char *drv_pass_name(unsigned i, const char **what) {
  if (i >= NPASSES) return NULL;
  if (what) *what = pipeline[i].what;
  return pipeline[i].name;
}

bool drv_pass_known(const char *name) {
  if (!strcmp(name, "all")) return true;
  for (unsigned i = 0; i < NPASSES; i++)
    if (!strcmp(name, pipeline[i].name)) return true;
  return false;
}

/* Without inline, the bounds pass inlines by the sizes the re-roll's checked copies give; without reroll, addresses, vunroll, lanes, masks, guard, sinkaddr or remat code is slower; without bounds, guard
 * mode's out-of-bounds traps are the guard pages' alone, which LLVM may
 * delete or move (what issue 18 fixed): kept to measure what it costs. */
static const char *const skippable[] = {"calls", "waits", "inline", "reroll", "addresses", "bounds", "vunroll", "lanes", "masks", "guard", "sinkaddr", "remat"};

bool drv_pass_skippable(const char *name) {
  for (unsigned i = 0; i < sizeof skippable / sizeof *skippable; i++)
    if (!strcmp(name, skippable[i])) return true;
  return false;
}

/* Whether pass p runs on r: its condition holds and --skip-pass does not
 * name it (on the whole module and in each part of a cut one alike). */
static bool pass_runs(const drv_run *r, const drv_pass *p) {
  return p->when(r) && !(r->o->skip_pass && !strcmp(r->o->skip_pass, p->name));
}

/* --dump-after: the module's IR after pass p (or a line saying it did not
 * run), appended to *o->dump. */
static void dump_after(const drv_run *r, const drv_pass *p, bool ran) {
  const char *want = r->o->dump_after;
  if (!want || !r->o->dump || (strcmp(want, "all") && strcmp(want, p->name))) return;
  if (!ran && !strcmp(want, "all")) return;
  char *ir = ran ? LLVMPrintModuleToString(r->mod) : NULL;
  const char *text = ir ? ir : "";
  size_t old = *r->o->dump ? strlen(*r->o->dump) : 0, add = strlen(text) + strlen(p->name) + 64;
  char *buf = realloc(*r->o->dump, old + add);
  if (buf) {
    snprintf(buf + old, add, "; twasmc: IR after %s%s\n%s", p->name, ran ? "" : ": not run", text);
    *r->o->dump = buf;
  }
  LLVMDisposeMessage(ir);
}

/* Runs the pipeline's passes from `from` on, each reported with its
 * time; up to (not into) the first per_part pass when to_split;
 * stop_before_offload ends it before the offload pass.  *at: the first
 * pass not run. */
static bool run_pipeline(drv_run *r, unsigned from, bool to_split, unsigned *at) {
  unsigned i = from;
  bool ok = true;
  for (; ok && i < NPASSES; i++) {
    const drv_pass *p = &pipeline[i];
    if ((r->o->stop_before_offload && p->run == offload) || (to_split && p->per_part)) break;
    bool ran = pass_runs(r, p);
    if (ran) {
      drv_report(r->o, (drv_event){.kind = DRV_EV_BEGIN, .name = p->name});
      double t0 = drv_now();
      r->detail[0] = 0;
      ok = p->run(r);
      drv_report(r->o, (drv_event){.kind = DRV_EV_END, .name = p->name, .seconds = drv_now() - t0,
                                   .detail = r->detail[0] ? r->detail : NULL});
    }
    if (ok) dump_after(r, p, ran);
  }
  *at = i;
  return ok;
}

/* The per_part passes on one part of a cut module (a drv_part_passes, on
 * the part's thread: nothing is reported or dumped from there). */
static bool part_passes(void *arg, LLVMModuleRef mod, LLVMTargetMachineRef tm, tw_diag *d) {
  drv_run r = *(const drv_run *)arg;
  r.mod = mod, r.tm = tm, r.d = d;
  for (unsigned i = 0; i < NPASSES; i++)
    if (pipeline[i].per_part && pass_runs(&r, &pipeline[i]) && !pipeline[i].run(&r)) return false;
  return true;
}

/* A compilation under way: what it was lowered from, the module, and how
 * far the pipeline has come. */
typedef struct {
  tw_arena arena;
  wasm_module m;
  char stem[256];
  drv_run r;
  unsigned next; /* the first pass of `pipeline` not run yet */
} drv_build;

/* Parses, then runs the pipeline up to the split point when to_split. */
static drv_status build_begin(drv_build *b, const uint8_t *bytes, size_t size, const char *filename,
                              const drv_options *o, bool to_split, tw_diag *d) {
  memset(b, 0, sizeof *b);
  b->r = (drv_run){.o = o, .m = &b->m, .filename = filename, .ctx = LLVMContextCreate(), .d = d};
  drv_status st = parse_reported(&b->arena, bytes, size, filename, &b->m, o, d);
  if (st != DRV_OK) return st;
  b->r.lo = (low_options){.bounds_mode = o->bounds_mode,
                          .portable_cpu = !o->cpu || !strcmp(o->cpu, "x86-64"),
                          .devirt = o->opt_level >= 1,
                          .desc_symbol = o->desc_symbol ? o->desc_symbol : "twasm_module",
                          .module_name = o->module_name ? o->module_name
                                                        : stem_of(filename, b->stem, sizeof b->stem),
                          .emit_main = o->emit_main,
                          .baked_dirs = o->baked_dirs,
                          .baked_env = o->baked_env,
                          .baked_env_len = o->baked_env_len,
                          .inherit_env = o->inherit_env};
  b->r.funcs = tw_arena_alloc(&b->arena, (b->m.nfuncs + 1) * sizeof *b->r.funcs);
  b->r.lo.funcs_out = b->r.funcs;
  b->r.tm = drv_host_machine(o->opt_level, o->cpu, o->emit_main, d);
  if (!b->r.tm || !run_pipeline(&b->r, 0, to_split, &b->next)) return DRV_INTERNAL;
  return DRV_OK;
}

/* The rest of the pipeline, on the whole module. */
static drv_status build_rest(drv_build *b) {
  return run_pipeline(&b->r, b->next, false, &b->next) ? DRV_OK : DRV_INTERNAL;
}

static void build_end(drv_build *b) {
  if (b->r.mod) LLVMDisposeModule(b->r.mod);
  if (b->r.tm) LLVMDisposeTargetMachine(b->r.tm);
  LLVMContextDispose(b->r.ctx);
  tw_arena_free(&b->arena);
}

drv_status drv_compile_parts(const uint8_t *bytes, size_t size, const char *filename,
                             const drv_options *o, drv_objects *objs, tw_diag *d) {
  drv_build b;
  memset(objs, 0, sizeof *objs);
  drv_status st = build_begin(&b, bytes, size, filename, o, true, d);
  drv_split_plan plan = {.nparts = 1};
  /* Assembly text of parts would not concatenate (local labels repeat);
   * --dump-after shows whole modules. */
  if (st == DRV_OK && !o->emit_asm && !o->dump_after) drv_split_plan_for(b.r.mod, &plan);
  if (st == DRV_OK && plan.nparts == 1) st = build_rest(&b);
  if (st == DRV_OK) {
    drv_codegen_job job = {.o = o, .passes = plan.nparts > 1 ? part_passes : NULL, .passes_arg = &b.r};
    st = drv_codegen(&b.r.mod, b.r.tm, &job, &plan, objs, d);
  }
  build_end(&b);
  return st;
}

drv_status drv_compile(const uint8_t *bytes, size_t size, const char *filename,
                       const drv_options *o, uint8_t **obj, size_t *obj_size, tw_diag *d) {
  drv_objects objs;
  drv_status st = drv_compile_parts(bytes, size, filename, o, &objs, d);
  if (st != DRV_OK) return st;
  if (objs.n == 1) {
    *obj = objs.parts[0].data, *obj_size = objs.parts[0].size;
    objs.parts[0].data = NULL;
  } else if (!drv_combine_objects(&objs, obj, obj_size, o, d)) {
    st = DRV_INTERNAL;
  }
  drv_objects_free(&objs);
  return st;
}

drv_status drv_emit_llvm(const uint8_t *bytes, size_t size, const char *filename,
                         const drv_options *o, char **ir, tw_diag *d) {
  drv_build b;
  drv_status st = build_begin(&b, bytes, size, filename, o, false, d);
  if (st == DRV_OK) {
    char *text = LLVMPrintModuleToString(b.r.mod);
    *ir = strdup(text);
    LLVMDisposeMessage(text);
  }
  build_end(&b);
  return st;
}

drv_status drv_emit_header(const uint8_t *bytes, size_t size, const char *filename,
                           const char *prefix, const char *desc_symbol, char **text,
                           tw_diag *d) {
  tw_arena arena = {0};
  wasm_module m;
  drv_status st = parse(&arena, bytes, size, filename, &m, d);
  if (st == DRV_OK) *text = hdr_emit(&m, prefix, desc_symbol);
  tw_arena_free(&arena);
  return st;
}
