/* driver.c: the whole compilation in one call: decode, validate, then the
 * pass pipeline over the host module (one table, `pipeline` below), then
 * the object. */
#include "driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "arena.h"
#include "bnd.h"
#include "decode.h"
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

/* Decode then validate: the front half every entry point shares. */
static drv_status parse(tw_arena *arena, const uint8_t *bytes, size_t size, const char *filename,
                        wasm_module *m, tw_diag *d) {
  if (!dec_module(arena, bytes, size, filename, m, d)) return DRV_MALFORMED;
  if (!val_module(m, d)) return DRV_INVALID;
  return DRV_OK;
}

drv_status drv_check(const uint8_t *bytes, size_t size, const char *filename, tw_diag *d) {
  tw_arena arena = {0};
  wasm_module m;
  drv_status st = parse(&arena, bytes, size, filename, &m, d);
  tw_arena_free(&arena);
  return st;
}

static void init_llvm(void) {
  static int done;
  if (done) return;
  done = 1;
  LLVMInitializeX86TargetInfo();
  LLVMInitializeX86Target();
  LLVMInitializeX86TargetMC();
  LLVMInitializeX86AsmPrinter();
}

static LLVMTargetMachineRef host_machine(int opt_level, const char *cpu, tw_diag *d) {
  init_llvm();
  char *triple = LLVMGetDefaultTargetTriple();
  LLVMTargetRef target;
  char *err = NULL;
  LLVMTargetMachineRef tm = NULL;
  if (LLVMGetTargetFromTriple(triple, &target, &err)) {
    tw_fail(d, TW_DIAG_NO_OFFSET, "no LLVM target for %s: %s", triple, err ? err : "");
  } else {
    LLVMCodeGenOptLevel level = opt_level <= 0 ? LLVMCodeGenLevelNone
                                : opt_level == 1 ? LLVMCodeGenLevelLess
                                : opt_level == 2 ? LLVMCodeGenLevelDefault
                                                 : LLVMCodeGenLevelAggressive;
    /* Portable x86-64 by default: the output runs on any x86-64 machine;
     * --cpu picks a CPU (and with native its features) instead. */
    bool native = cpu && !strcmp(cpu, "native");
    char *host_cpu = native ? LLVMGetHostCPUName() : NULL;
    char *features = native ? LLVMGetHostCPUFeatures() : NULL;
    tm = LLVMCreateTargetMachine(target, triple, native ? host_cpu : cpu ? cpu : "x86-64",
                                 features ? features : "", level, LLVMRelocPIC,
                                 LLVMCodeModelDefault);
    LLVMDisposeMessage(host_cpu);
    LLVMDisposeMessage(features);
    if (!tm) tw_fail(d, TW_DIAG_NO_OFFSET, "cannot create an LLVM target machine for %s", triple);
  }
  LLVMDisposeMessage(err);
  LLVMDisposeMessage(triple);
  return tm;
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
  low_options lo;
  unsigned nkernels;         /* embedded by the offload pass */
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
  ir_reroll_loops(r->mod);
  return true;
}

static bool fold_addresses(drv_run *r) {
  ir_fold_address_adds(r->mod, max_memory_bytes(r->m));
  return true;
}

/* Guard mode: the bounds check of every access, and check-free copies of
 * the loops one test can prove (compiler/bnd*.c). */
static bool bounds(drv_run *r) {
  return bnd_module(r->mod, r->tm, r->m, r->o->opt_level, r->d);
}

static bool hold(drv_run *r) {
  ir_hold_loops(r->mod);
  return true;
}

/* (PipelineTuningOptions do not reach default<O2> through LLVM 19's
 * LLVMRunPasses: the vectorisers ran regardless, hence the hold.) */
static bool optimise(drv_run *r) {
  char passes[32];
  snprintf(passes, sizeof passes, "default<O%d>", clamp_level(r->o->opt_level));
  return run_passes(r->mod, r->tm, passes, r->d);
}

static bool offload(drv_run *r) {
  return off_module(r->mod, r->m, r->filename, r->lo.desc_symbol, &r->o->offload,
                    r->o->offload_report, &r->nkernels, r->d);
}

/* Loop versioning edited optimised IR: a slip there must be an error, not
 * a miscompilation. */
static bool verify(drv_run *r) {
  char *msg = NULL;
  bool broken = LLVMVerifyModule(r->mod, LLVMReturnStatusAction, &msg);
  if (broken)
    tw_fail(r->d, TW_DIAG_NO_OFFSET, "internal error: offloaded module is invalid: %.300s", msg ? msg : "");
  LLVMDisposeMessage(msg);
  return !broken;
}

static bool release(drv_run *r) {
  ir_release_loops(r->mod);
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

static bool always(const drv_run *r) { return r->o != NULL; }
static bool at_o2(const drv_run *r) { return r->o->opt_level >= 2; }
static bool rerolling(const drv_run *r) { return at_o2(r) && !r->o->no_reroll; }
static bool with_memory(const drv_run *r) { return at_o2(r) && r->m->nmems > 0; }
/* With offload at -O2 and above the pipeline is staged: recognition sees
 * loops in their plain scalar form, and the CPU versions it keeps are
 * still vectorised and unrolled afterwards. */
static bool staged(const drv_run *r) { return r->o->offload.enabled && at_o2(r); }
static bool offloading(const drv_run *r) { return r->o->offload.enabled; }
static bool has_kernels(const drv_run *r) { return r->nkernels > 0; }
static bool guard_mode(const drv_run *r) { return r->o->bounds_mode == TWASM_BOUNDS_GUARD; }

typedef struct {
  const char *name;                  /* for --dump-after */
  bool (*when)(const drv_run *r);
  bool (*run)(drv_run *r);
  const char *what;
} drv_pass;

/* The passes over the host module, in order. */
static const drv_pass pipeline[] = {
  {"lower",     always,      lower,          "validated Wasm -> LLVM IR (compiler/low_*.c)"},
  {"mem2reg",   at_o2,       mem2reg,        "locals -> SSA values"},
  {"reroll",    rerolling,   reroll,         "loops clang unrolled by two, re-rolled (ir_reroll.c)"},
  {"addresses", with_memory, fold_addresses, "zext(x + c) -> zext(x) + c where proven (ir_address.c)"},
  {"bounds",    guard_mode,  bounds,         "exact bounds checks, loops' hoisted before them (compiler/bnd*.c)"},
  {"hold",      staged,      hold,           "loops kept from vectorising and unrolling (ir_hold.c)"},
  {"optimise",  always,      optimise,       "LLVM's default<On>"},
  {"offload",   offloading,  offload,        "tensor loops -> PTX kernels, nests versioned (compiler/off)"},
  {"verify",    has_kernels, verify,         "the versioned module checked"},
  {"release",   staged,      release,        "the hold lifted (ir_hold.c)"},
  {"late",      staged,      late,           "loop vectoriser, SLP, unroller: LLVM's pipeline tail"},
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

/* Runs the pipeline's passes in order; stop_before_offload ends it before
 * the offload pass. */
static bool run_pipeline(drv_run *r) {
  for (unsigned i = 0; i < NPASSES; i++) {
    const drv_pass *p = &pipeline[i];
    if (r->o->stop_before_offload && p->run == offload) break;
    bool ran = p->when(r);
    if (ran && !p->run(r)) return false;
    dump_after(r, p, ran);
  }
  return true;
}

/* Parses and runs the pipeline up to an optimised LLVM module. */
static drv_status build_ir(const uint8_t *bytes, size_t size, const char *filename,
                           const drv_options *o, LLVMContextRef ctx, LLVMTargetMachineRef *tm_out,
                           LLVMModuleRef *mod_out, tw_diag *d) {
  tw_arena arena = {0};
  wasm_module m;
  char stem[256];
  drv_status st = parse(&arena, bytes, size, filename, &m, d);
  if (st == DRV_OK) {
    drv_run r = {.o = o, .m = &m, .filename = filename, .ctx = ctx, .d = d};
    r.lo = (low_options){.bounds_mode = o->bounds_mode,
                         .portable_cpu = !o->cpu || !strcmp(o->cpu, "x86-64"),
                         .desc_symbol = o->desc_symbol ? o->desc_symbol : "twasm_module",
                         .module_name = o->module_name ? o->module_name : stem_of(filename, stem, sizeof stem),
                         .emit_main = o->emit_main,
                         .baked_dirs = o->baked_dirs,
                         .baked_env = o->baked_env,
                         .baked_env_len = o->baked_env_len,
                         .inherit_env = o->inherit_env};
    r.tm = host_machine(o->opt_level, o->cpu, d);
    if (!r.tm || !run_pipeline(&r)) {
      st = DRV_INTERNAL;
      if (r.mod) LLVMDisposeModule(r.mod);
      if (r.tm) LLVMDisposeTargetMachine(r.tm);
    } else {
      *tm_out = r.tm;
      *mod_out = r.mod;
    }
  }
  tw_arena_free(&arena);
  return st;
}

drv_status drv_compile(const uint8_t *bytes, size_t size, const char *filename,
                       const drv_options *o, uint8_t **obj, size_t *obj_size, tw_diag *d) {
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMTargetMachineRef tm;
  LLVMModuleRef mod;
  drv_status st = build_ir(bytes, size, filename, o, ctx, &tm, &mod, d);
  if (st == DRV_OK) {
    char *err = NULL;
    LLVMMemoryBufferRef buf;
    LLVMCodeGenFileType kind = o->emit_asm ? LLVMAssemblyFile : LLVMObjectFile;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, kind, &err, &buf)) {
      tw_fail(d, TW_DIAG_NO_OFFSET, "LLVM code generation failed: %s", err ? err : "");
      st = DRV_INTERNAL;
    } else {
      *obj_size = LLVMGetBufferSize(buf);
      *obj = malloc(*obj_size ? *obj_size : 1);
      memcpy(*obj, LLVMGetBufferStart(buf), *obj_size);
      LLVMDisposeMemoryBuffer(buf);
    }
    LLVMDisposeMessage(err);
    LLVMDisposeModule(mod);
    LLVMDisposeTargetMachine(tm);
  }
  LLVMContextDispose(ctx);
  return st;
}

drv_status drv_emit_llvm(const uint8_t *bytes, size_t size, const char *filename,
                         const drv_options *o, char **ir, tw_diag *d) {
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMTargetMachineRef tm;
  LLVMModuleRef mod;
  drv_status st = build_ir(bytes, size, filename, o, ctx, &tm, &mod, d);
  if (st == DRV_OK) {
    char *text = LLVMPrintModuleToString(mod);
    *ir = strdup(text);
    LLVMDisposeMessage(text);
    LLVMDisposeModule(mod);
    LLVMDisposeTargetMachine(tm);
  }
  LLVMContextDispose(ctx);
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
