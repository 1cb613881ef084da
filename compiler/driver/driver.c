/* driver.c: decode -> validate -> lower -> optimise -> object, in one call. */
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

/* The standard pipeline; with `staged`, every loop carries metadata that
 * forbids vectorising and unrolling it (ir_hold_loops), and late_passes
 * run those after the offload stage: it recognises tensor loops in their
 * plain scalar form, and the CPU versions it keeps are still vectorised
 * and unrolled.  (PipelineTuningOptions do not reach default<O2> through
 * LLVM 19's LLVMRunPasses: the vectorisers ran regardless.) */
static bool optimise(LLVMModuleRef mod, LLVMTargetMachineRef tm, int opt_level, bool staged,
                     tw_diag *d) {
  char passes[32];
  snprintf(passes, sizeof passes, "default<O%d>", clamp_level(opt_level));
  if (staged) ir_hold_loops(mod);
  return run_passes(mod, tm, passes, d);
}

/* The tail of LLVM's O2/O3 module optimisation pipeline, from the loop
 * vectoriser on (PassBuilder::buildModuleOptimizationPipeline).  A bare
 * "instcombine" in a pipeline text verifies that one iteration reached a
 * fixpoint and aborts the process otherwise; the standard pipeline does not. */
static bool late_passes(LLVMModuleRef mod, LLVMTargetMachineRef tm, int opt_level, tw_diag *d) {
  char passes[512];
  snprintf(passes, sizeof passes,
           "function(loop-vectorize,loop-load-elim,instcombine<no-verify-fixpoint>,simplifycfg,"
           "slp-vectorizer,vector-combine,instcombine<no-verify-fixpoint>,loop-unroll<O%d>,sroa,"
           "instcombine<no-verify-fixpoint>,"
           "loop-mssa(licm),alignment-from-assumptions,loop-sink,instsimplify,div-rem-pairs,"
           "simplifycfg)",
           clamp_level(opt_level));
  ir_release_loops(mod);
  return run_passes(mod, tm, passes, d);
}

/* Memory 0's declared maximum (an imported memory's actual maximum is
 * within its import's), else the runtime's limit. */
static uint64_t max_memory_bytes(const wasm_module *m) {
  const wasm_limits *l = &m->mems[0].limits;
  uint64_t pages = l->has_max && l->max < TWASM_MAX_PAGES ? l->max : TWASM_MAX_PAGES;
  return pages * TWASM_PAGE_SIZE;
}

/* Before the pipeline, at -O2 and above: mem2reg, re-rolling of clang's
 * loops unrolled by two (in the plain form the recogniser and the loop
 * vectoriser take), then the address rewrite that lets the loop vectoriser
 * see adjacent accesses. */
static bool fold_addresses(LLVMModuleRef mod, LLVMTargetMachineRef tm, const wasm_module *m,
                           bool reroll, tw_diag *d) {
  if (!run_passes(mod, tm, "function(mem2reg)", d)) return false;
  if (reroll) ir_reroll_loops(mod);
  if (m->nmems) ir_fold_address_adds(mod, max_memory_bytes(m));
  return true;
}

static const char *stem_of(const char *filename, char *buf, size_t cap) {
  const char *base = strrchr(filename, '/');
  base = base ? base + 1 : filename;
  snprintf(buf, cap, "%s", base);
  char *dot = strrchr(buf, '.');
  if (dot && dot != buf) *dot = 0;
  return buf;
}

/* Loop versioning edited optimised IR: a slip there must be an error, not
 * a miscompilation. */
static bool verify_offloaded(LLVMModuleRef mod, tw_diag *d) {
  char *msg = NULL;
  bool broken = LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg);
  if (broken) tw_fail(d, TW_DIAG_NO_OFFSET, "internal error: offloaded module is invalid: %.300s", msg ? msg : "");
  LLVMDisposeMessage(msg);
  return !broken;
}

/* Runs the pipeline up to an optimised LLVM module. */
static drv_status build_ir(const uint8_t *bytes, size_t size, const char *filename,
                           const drv_options *o, LLVMContextRef ctx, LLVMTargetMachineRef *tm_out,
                           LLVMModuleRef *mod_out, tw_diag *d) {
  tw_arena arena = {0};
  wasm_module m;
  char stem[256];
  drv_status st = parse(&arena, bytes, size, filename, &m, d);
  if (st == DRV_OK) {
    low_options lo = {.bounds_mode = o->bounds_mode,
                      .portable_cpu = !o->cpu,
                      .desc_symbol = o->desc_symbol ? o->desc_symbol : "twasm_module",
                      .module_name = o->module_name ? o->module_name : stem_of(filename, stem, sizeof stem),
                      .emit_main = o->emit_main,
                      .baked_dirs = o->baked_dirs,
                      .baked_env = o->baked_env,
                      .baked_env_len = o->baked_env_len,
                      .inherit_env = o->inherit_env};
    LLVMTargetMachineRef tm = host_machine(o->opt_level, o->cpu, d);
    LLVMModuleRef mod = NULL;
    if (!tm || !low_module(ctx, &m, &lo, &mod, d)) {
      st = DRV_INTERNAL;
    } else {
      char *triple = LLVMGetTargetMachineTriple(tm);
      LLVMSetTarget(mod, triple);
      LLVMDisposeMessage(triple);
      LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
      LLVMSetModuleDataLayout(mod, dl);
      LLVMDisposeTargetData(dl);
      unsigned nkernels = 0;
      bool staged = o->offload.enabled && o->opt_level >= 2;
      if (o->opt_level >= 2 && !fold_addresses(mod, tm, &m, !o->no_reroll, d)) st = DRV_INTERNAL;
      else if (!optimise(mod, tm, o->opt_level, staged, d)) st = DRV_INTERNAL;
      else if (o->stop_before_offload) {
        /* the IR the offload stage recognises in, for tests */
      } else if (o->offload.enabled &&
               !off_module(mod, &m, filename, lo.desc_symbol, &o->offload, o->offload_report,
                           &nkernels, d))
        st = DRV_INTERNAL;
      else if (nkernels && !verify_offloaded(mod, d))
        st = DRV_INTERNAL;
      else if (staged && !late_passes(mod, tm, o->opt_level, d))
        st = DRV_INTERNAL;
    }
    if (st != DRV_OK) {
      if (mod) LLVMDisposeModule(mod);
      if (tm) LLVMDisposeTargetMachine(tm);
    } else {
      *tm_out = tm;
      *mod_out = mod;
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
