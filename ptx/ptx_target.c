/* ptx_target.c: drives kernel generation: the plan (ptx_plan.c), then
 * per code one fresh LLVM context and module built by the path's kind,
 * default<O2>, NVPTX assembly, ASCII and exactness checks on the result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "ptx_internal.h"

#define PTX_TRIPLE "nvptx64-nvidia-cuda"

const ptx_arch ptx_default_archs[] = {{75, false}, {80, false}, {90, false}};
const unsigned ptx_ndefault_archs = sizeof ptx_default_archs / sizeof ptx_default_archs[0];

bool ptx_is_ascii(const char *text, size_t len) {
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)text[i] > 0x7f) return false;
  return true;
}

static char *sanitise(tw_arena *arena, const char *name) {
  size_t len = strlen(name);
  char *out = tw_arena_alloc(arena, len + 2);
  char *o = out;
  if (!(name[0] >= 'a' && name[0] <= 'z') && !(name[0] >= 'A' && name[0] <= 'Z') && name[0] != '_')
    *o++ = '_';  /* PTX identifiers do not start with a digit */
  for (size_t i = 0; i < len; i++) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    *o++ = ok ? c : '_';
  }
  *o = '\0';
  return out;
}

static bool init_nvptx(tw_diag *diag, LLVMTargetRef *target) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
  char *err = NULL;
  if (LLVMGetTargetFromTriple(PTX_TRIPLE, target, &err)) {
    tw_fail(diag, TW_DIAG_NO_OFFSET, "NVPTX target unavailable: %s", err ? err : "?");
    LLVMDisposeMessage(err);
    return false;
  }
  return true;
}

static bool fail_llvm(tw_diag *diag, const char *what, unsigned sm, char *msg) {
  tw_fail(diag, TW_DIAG_NO_OFFSET, "sm_%u kernel: %s: %s", sm, what, msg ? msg : "?");
  LLVMDisposeMessage(msg);
  return false;
}

static bool optimise(LLVMModuleRef mod, LLVMTargetMachineRef tm, unsigned sm, tw_diag *diag) {
  LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(mod, "default<O2>", tm, opts);
  LLVMDisposePassBuilderOptions(opts);
  if (err) return fail_llvm(diag, "optimisation failed", sm, LLVMGetErrorMessage(err));
  return true;
}

/* The PTX ISA from its `.version X.Y` line, as X*10+Y. */
static unsigned isa_version(const char *text) {
  const char *v = strstr(text, "\n.version ");
  unsigned major = 0, minor = 0;
  if (!v || sscanf(v, "\n.version %u.%u", &major, &minor) != 2) return 0;
  return major * 10 + minor;
}

/* Exact kernels must not contain fused multiply-adds (fma, or float mad,
 * which PTX defines as fused) or flushed denormals: those would change
 * results against the CPU loop. */
static bool check_exact(const char *text, unsigned sm, tw_diag *diag) {
  if (strstr(text, "fma.") || strstr(text, "mad.rn") || strstr(text, "mad.f") ||
      strstr(text, ".ftz"))
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "sm_%u kernel: inexact code (fma or .ftz)", sm);
  return true;
}

static bool emit(LLVMModuleRef mod, LLVMTargetMachineRef tm, unsigned sm, tw_arena *arena,
                 ptx_code *code, tw_diag *diag) {
  LLVMMemoryBufferRef buf = NULL;
  char *err = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &err, &buf))
    return fail_llvm(diag, "PTX emission failed", sm, err);
  size_t len = LLVMGetBufferSize(buf);
  char *text = tw_arena_alloc(arena, len + 1);
  memcpy(text, LLVMGetBufferStart(buf), len);
  LLVMDisposeMemoryBuffer(buf);
  text[len] = '\0';
  if (strlen(text) != len || !ptx_is_ascii(text, len))
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "sm_%u kernel: PTX is not pure ASCII", sm);
  code->sm = sm;
  code->specific = false;
  code->text = text;
  code->ptx_isa = isa_version(text);
  if (!code->ptx_isa)
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "sm_%u kernel: PTX has no .version line", sm);
  return true;
}

/* The descriptor's callees (KN_E_CALL) linked into the kernel module:
 * internal, always inlined, their host attributes (x86 features, the
 * frame pointer) left behind; each call node's callee there with its
 * node's types. */
static bool link_calls(ptx_gen *g, const kn_desc *d, unsigned sm, tw_diag *diag) {
  if (!d->calls_bc) return true;
  LLVMMemoryBufferRef buf =
      LLVMCreateMemoryBufferWithMemoryRangeCopy(d->calls_bc, d->calls_bc_len, "twasm_calls");
  LLVMModuleRef calls = NULL;
  if (LLVMParseBitcodeInContext2(g->ctx, buf, &calls)) {
    LLVMDisposeMemoryBuffer(buf);
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "sm_%u kernel: its callees' code does not parse", sm);
  }
  LLVMDisposeMemoryBuffer(buf);
  LLVMSetTarget(calls, LLVMGetTarget(g->mod));
  LLVMSetDataLayout(calls, LLVMGetDataLayoutStr(g->mod));
  if (LLVMLinkModules2(g->mod, calls))
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "sm_%u kernel: its callees' code does not link", sm);
  unsigned always = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
  for (LLVMValueRef f = LLVMGetFirstFunction(g->mod); f; f = LLVMGetNextFunction(f)) {
    size_t len;
    const char *name = LLVMGetValueName2(f, &len);
    if (LLVMIsDeclaration(f) || strncmp(name, KN_CALLEE_PREFIX, sizeof KN_CALLEE_PREFIX - 1) != 0) continue;
    LLVMSetLinkage(f, LLVMInternalLinkage);
    LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(g->ctx, always, 0));
  }
  for (unsigned i = 0; i < d->nnodes; i++) {
    const kn_expr *e = &d->nodes[i];
    if (e->op != KN_E_CALL) continue;
    LLVMValueRef f = ptx_callee(g, e->func);
    LLVMTypeRef ft = f ? LLVMGlobalGetValueType(f) : NULL;
    int32_t ops[3] = {e->a, e->b, e->c};
    unsigned n = kn_call_nargs(e);
    bool ok = f && !LLVMIsDeclaration(f) && LLVMCountParamTypes(ft) == n + 1 &&
              LLVMGetReturnType(ft) == ptx_type(g, e->type);
    LLVMTypeRef params[4];
    if (ok) LLVMGetParamTypes(ft, params);
    for (unsigned k = 0; ok && k < n; k++) ok = params[k + 1] == ptx_type(g, d->nodes[ops[k]].type);
    if (!ok)
      return tw_fail(diag, TW_DIAG_NO_OFFSET, "sm_%u kernel: callee " KN_CALLEE_NAME " missing or of another type", sm,
                     e->func);
  }
  return true;
}

/* Builds, checks, optimises and emits one code of the plan; the context
 * is fresh so nothing leaks between archs. */
static bool generate_one(const kn_desc *d, const ptx_plan_code *pc, const char *name,
                         LLVMTargetRef target, tw_arena *arena, ptx_code *code, tw_diag *diag) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  unsigned sm = pc->arch.sm;
  const ptx_kind *kind = ptx_path_kind(pc->path);
  char cpu[16];
  snprintf(cpu, sizeof cpu, "sm_%u%s", sm, pc->arch.specific ? "a" : "");
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, PTX_TRIPLE, cpu, pc->features,
                                                    LLVMCodeGenLevelDefault, LLVMRelocDefault,
                                                    LLVMCodeModelDefault);
  if (!tm) return tw_fail(diag, TW_DIAG_NO_OFFSET, "no NVPTX target machine for %s", cpu);
  LLVMContextRef ctx = LLVMContextCreate();
  ptx_gen g = {0};
  ptx_gen_init(&g, ctx, d, name, kind->result_arg, (pc->entries & TWASM_ENTRY_HOST_OUT) != 0, diag);
  g.path = pc->path;
  g.sm = sm;
  LLVMSetTarget(g.mod, PTX_TRIPLE);
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
  char *layout = LLVMCopyStringRepOfTargetData(td);
  LLVMSetDataLayout(g.mod, layout);
  LLVMDisposeMessage(layout);
  LLVMDisposeTargetData(td);

  char *msg = NULL;
  bool ok = link_calls(&g, d, sm, diag) && kind->build(&g) &&
            (!(pc->entries & TWASM_ENTRY_PACKED) || ptx_tc_build(&g));
  if (ok && LLVMVerifyModule(g.mod, LLVMReturnStatusAction, &msg))
    ok = fail_llvm(diag, "invalid kernel IR", sm, msg);
  else if (msg)
    LLVMDisposeMessage(msg);
  ok = ok && optimise(g.mod, tm, sm, diag) && emit(g.mod, tm, sm, arena, code, diag);
  if (ok) code->specific = pc->arch.specific;
  ok = ok && ((d->kind == KN_REDUCE && d->reduce.reassociate) || check_exact(code->text, sm, diag));
  ptx_gen_dispose(&g);
  LLVMContextDispose(ctx);
  LLVMDisposeTargetMachine(tm);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  code->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
  return ok;
}

bool ptx_generate(const kn_desc *d, const char *name, const ptx_arch *archs, unsigned narchs,
                  tw_arena *arena, ptx_out *out, tw_diag *diag) {
  return ptx_generate_opts(d, name, archs, narchs, NULL, arena, out, diag);
}

bool ptx_generate_opts(const kn_desc *d, const char *name, const ptx_arch *archs,
                       unsigned narchs, const ptx_options *opts, tw_arena *arena,
                       ptx_out *out, tw_diag *diag) {
  ptx_plan plan;
  if (!ptx_plan_make(d, archs, narchs, opts, &plan, diag)) return false;
  LLVMTargetRef target;
  if (!init_nvptx(diag, &target)) return false;
  memset(out, 0, sizeof *out);
  out->plan = plan;
  out->name = sanitise(arena, name && *name ? name : "kernel");
  out->codes = tw_arena_alloc(arena, plan.ncodes * sizeof *out->codes);
  for (unsigned i = 0; i < plan.ncodes; i++) {
    if (!generate_one(d, &plan.codes[i], out->name, target, arena, &out->codes[i], diag)) return false;
    out->ncodes++;
  }
  return true;
}

void ptx_launch_grid(const ptx_launch *l, const int64_t *params, uint32_t grid[3]) {
  for (unsigned a = 0; a < 3; a++) {
    kn_size s = l->count[a];
    grid[a] = twasm_grid_axis(s.is_param ? params[s.value] : s.value, l->per_block[a], l->max_grid[a]);
  }
}
