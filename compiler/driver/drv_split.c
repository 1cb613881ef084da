/* drv_split.c: a large module cut into parts for code generation on
 * several threads.  The parts are consecutive ranges of the defined
 * functions, so the code keeps the module's order once linked (the
 * runtime finds the function of an address among the module's, and the
 * module's other code after them: rt_trap.c).  Every internal symbol
 * becomes hidden and external under a name unique to the module, so that
 * one part's code reaches what another defines.  Each part is rebuilt from
 * the module's bitcode in an LLVM context of its own, since contexts are
 * not thread-safe: read lazily, the other parts' functions are made
 * declarations before their bodies are ever read, then the module is
 * linked into a fresh one, which reads the bodies that remain. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "drv_internal.h"

/* About the instructions per part that make a split pay: their code
 * generation takes some tenths of a second, more than rebuilding a part
 * from bitcode and one more object to link. */
#define PART_INSTRUCTIONS 20000

static unsigned long instructions_of(LLVMValueRef fn) {
  unsigned long n = 0;
  for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(fn); b; b = LLVMGetNextBasicBlock(b))
    for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) n++;
  return n;
}

void drv_split_plan_for(LLVMModuleRef mod, drv_split_plan *plan) {
  unsigned nfuncs = 0;
  unsigned long total = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f))
    if (!LLVMIsDeclaration(f)) nfuncs++, total += instructions_of(f);
  unsigned long want = total / PART_INSTRUCTIONS;
  unsigned nparts = want < 2 || nfuncs < 2 ? 1 : want > DRV_MAX_PARTS ? DRV_MAX_PARTS : (unsigned)want;
  if (nparts > nfuncs) nparts = nfuncs;
  plan->nparts = nparts;
  plan->instructions = total;
  plan->first[0] = 0;
  plan->first[nparts] = nfuncs;
  if (nparts == 1) return;
  /* Part k starts where the running count first reaches k/nparts of the
   * total, or where just enough functions are left for the parts after. */
  unsigned index = 0, part = 1;
  unsigned long seen = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f && part < nparts; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f)) continue;
    seen += instructions_of(f);
    index++;
    if (seen * nparts >= total * part || nfuncs - index == nparts - part) plan->first[part++] = index;
  }
}

static bool local_linkage(LLVMLinkage l) { return l == LLVMInternalLinkage || l == LLVMPrivateLinkage; }

/* PREFIX.NAME, or PREFIX.anon.N for an unnamed one. */
static void promote(LLVMValueRef g, const char *prefix, unsigned *anon) {
  if (!local_linkage(LLVMGetLinkage(g))) return;
  size_t len;
  const char *name = LLVMGetValueName2(g, &len);
  size_t cap = strlen(prefix) + len + 32;
  char *fresh = malloc(cap);
  if (len) snprintf(fresh, cap, "%s.%.*s", prefix, (int)len, name);
  else snprintf(fresh, cap, "%s.anon.%u", prefix, (*anon)++);
  LLVMSetValueName2(g, fresh, strlen(fresh));
  free(fresh);
  LLVMSetLinkage(g, LLVMExternalLinkage);
  LLVMSetVisibility(g, LLVMHiddenVisibility);
}

LLVMMemoryBufferRef drv_split_prepare(LLVMModuleRef mod, const char *prefix) {
  unsigned anon = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) promote(f, prefix, &anon);
  for (LLVMValueRef g = LLVMGetFirstGlobal(mod); g; g = LLVMGetNextGlobal(g)) promote(g, prefix, &anon);
  return LLVMWriteBitcodeToMemoryBuffer(mod);
}

/* Errors while reading or linking come here rather than to LLVM's default
 * handler, which prints and exits. */
static void on_diagnostic(LLVMDiagnosticInfoRef info, void *arg) {
  tw_diag *d = arg;
  if (LLVMGetDiagInfoSeverity(info) != LLVMDSError || d->msg[0]) return;
  char *text = LLVMGetDiagInfoDescription(info);
  tw_fail(d, TW_DIAG_NO_OFFSET, "code generation in parts: %s", text);
  LLVMDisposeMessage(text);
}

/* The lazily read module, but the part's functions as declarations and
 * no appending globals (llvm.used) outside the last part. */
static LLVMModuleRef lazy_part(const char *bitcode, size_t size, const drv_split_plan *plan,
                               unsigned part, LLVMContextRef ctx, tw_diag *d) {
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRange(bitcode, size, "part", 0);
  LLVMModuleRef lazy = NULL;
  if (LLVMGetBitcodeModuleInContext2(ctx, buf, &lazy)) {
    LLVMDisposeMemoryBuffer(buf);
    tw_fail(d, TW_DIAG_NO_OFFSET, "code generation in parts: cannot read the module back");
    return NULL;
  }
  unsigned index = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(lazy); f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f)) continue; /* a body not read yet is no declaration */
    if (index < plan->first[part] || index >= plan->first[part + 1])
      LLVMSetLinkage(f, LLVMAvailableExternallyLinkage);
    index++;
  }
  if (part + 1 < plan->nparts)
    for (LLVMValueRef g = LLVMGetFirstGlobal(lazy), next; g; g = next) {
      next = LLVMGetNextGlobal(g);
      if (LLVMGetLinkage(g) == LLVMAppendingLinkage) LLVMDeleteGlobal(g);
    }
  /* drops the available_externally bodies unread */
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(lazy, "elim-avail-extern", NULL, po);
  LLVMDisposePassBuilderOptions(po);
  if (err) {
    char *msg = LLVMGetErrorMessage(err);
    tw_fail(d, TW_DIAG_NO_OFFSET, "code generation in parts: %s", msg);
    LLVMDisposeErrorMessage(msg);
    LLVMDisposeModule(lazy);
    return NULL;
  }
  return lazy;
}

/* Outside the last part the global variables are the last part's. */
static void borrow_globals(LLVMModuleRef mod) {
  for (LLVMValueRef g = LLVMGetFirstGlobal(mod); g; g = LLVMGetNextGlobal(g)) {
    if (LLVMIsDeclaration(g)) continue;
    if (LLVMIsGlobalConstant(g)) {
      LLVMSetLinkage(g, LLVMAvailableExternallyLinkage);
    } else {
      LLVMSetInitializer(g, NULL);
      LLVMSetLinkage(g, LLVMExternalLinkage);
    }
  }
}

LLVMModuleRef drv_split_part(const char *bitcode, size_t size, const drv_split_plan *plan,
                             unsigned part, LLVMContextRef ctx, tw_diag *d) {
  LLVMContextSetDiagnosticHandler(ctx, on_diagnostic, d);
  LLVMModuleRef lazy = lazy_part(bitcode, size, plan, part, ctx, d);
  if (!lazy) return NULL;
  char name[32];
  snprintf(name, sizeof name, "part%u", part);
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext(name, ctx);
  LLVMSetTarget(mod, LLVMGetTarget(lazy));
  LLVMSetDataLayout(mod, LLVMGetDataLayoutStr(lazy));
  if (LLVMLinkModules2(mod, lazy)) { /* lazy is gone either way */
    if (!d->msg[0]) tw_fail(d, TW_DIAG_NO_OFFSET, "code generation in parts: linking part %u failed", part);
    LLVMDisposeModule(mod);
    return NULL;
  }
  if (part + 1 < plan->nparts) borrow_globals(mod);
  return mod;
}
