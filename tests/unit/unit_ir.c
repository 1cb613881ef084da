/* unit_ir.c: twasmc's optimised IR of small modules, for the unit tests. */
#include "unit_ir.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/IRReader.h>

#include "bnd.h"

void unit_wat_file(const char *tag, const char *text, char *out, size_t size) {
  snprintf(out, size, "/tmp/%s-%d.wat", tag, (int)getpid());
  FILE *w = fopen(out, "w");
  ck_assert_msg(w != NULL, "%s: cannot write", out);
  fputs(text, w);
  fclose(w);
}

void unit_wast_module(const char *tag, const char *wast, char *out, size_t size) {
  FILE *f = fopen(wast, "r");
  ck_assert_msg(f != NULL, "%s: run from the repository root", wast);
  static char text[65536];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  char *start = strstr(text, "\n(module");
  char *end = start ? strstr(start, "\n)\n") : NULL;
  ck_assert_msg(start && end, "%s: no module", wast);
  end[2] = 0;
  unit_wat_file(tag, start + 1, out, size);
}

unit_ir unit_ir_of_file(const char *path, const drv_options *o, bool remove_after) {
  uint8_t *bytes;
  size_t size;
  tw_diag d = {.offset = TW_DIAG_NO_OFFSET};
  ck_assert_msg(drv_read_input(path, &bytes, &size, &d) == DRV_OK, "%s", d.msg);
  if (remove_after) remove(path);
  char *ir = NULL;
  ck_assert_msg(drv_emit_llvm(bytes, size, path, o, &ir, &d) == DRV_OK, "%s", d.msg);
  free(bytes);
  unit_ir m;
  m.ctx = LLVMContextCreate();
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, strlen(ir), "m");
  free(ir);
  char *msg = NULL;
  if (LLVMParseIRInContext(m.ctx, buf, &m.mod, &msg)) ck_abort_msg("bad IR: %s", msg);
  return m;
}

unit_ir unit_ir_of_wat(const char *tag, const char *text, const drv_options *o) {
  char path[96];
  unit_wat_file(tag, text, path, sizeof path);
  return unit_ir_of_file(path, o, true);
}

unit_ir unit_ir_of_wast(const char *tag, const char *wast, const drv_options *o) {
  char path[96];
  unit_wast_module(tag, wast, path, sizeof path);
  return unit_ir_of_file(path, o, true);
}

LLVMValueRef unit_ir_func(const unit_ir *m, unsigned index) {
  char prefix[32];
  int n = snprintf(prefix, sizeof prefix, "wasm_f%u", index);
  for (LLVMValueRef fn = LLVMGetFirstFunction(m->mod); fn; fn = LLVMGetNextFunction(fn)) {
    size_t len;
    const char *name = LLVMGetValueName2(fn, &len);
    if (len >= (size_t)n && memcmp(name, prefix, (size_t)n) == 0 && (len == (size_t)n || name[n] == '_'))
      return fn;
  }
  ck_abort_msg("no function %s", prefix);
  return NULL;
}

void unit_ir_dispose(unit_ir *m) {
  LLVMDisposeModule(m->mod);
  LLVMContextDispose(m->ctx);
}

LLVMValueRef unit_ir_exported(LLVMModuleRef mod, const char *name) {
  LLVMValueRef table = LLVMGetNamedGlobal(mod, "twasm_exports");
  ck_assert_msg(table != NULL, "no export table");
  LLVMValueRef init = LLVMGetInitializer(table);
  for (int i = 0; i < LLVMGetNumOperands(init); i++) {
    LLVMValueRef e = LLVMGetOperand(init, (unsigned)i);
    size_t len;
    const char *s = LLVMGetAsString(LLVMGetInitializer(LLVMGetOperand(e, 0)), &len);
    size_t want = LLVMConstIntGetZExtValue(LLVMGetOperand(e, 1));
    if (want > len || want != strlen(name) || memcmp(s, name, want) != 0 ||
        LLVMConstIntGetZExtValue(LLVMGetOperand(e, 2)) != 0)
      continue;
    char prefix[32];
    int n = snprintf(prefix, sizeof prefix, "wasm_f%llu", LLVMConstIntGetZExtValue(LLVMGetOperand(e, 3)));
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
      size_t flen;
      const char *fname = LLVMGetValueName2(fn, &flen);
      if (flen >= (size_t)n && memcmp(fname, prefix, (size_t)n) == 0 &&
          (flen == (size_t)n || fname[n] == '_'))
        return fn;
    }
    ck_abort_msg("export %s: no function %s", name, prefix);
  }
  ck_abort_msg("no export %s", name);
  return NULL;
}

bool unit_in_cycle(LLVMBasicBlockRef bb) {
  LLVMBasicBlockRef work[512], seen[512];
  int nwork = 0, nseen = 0;
  work[nwork++] = bb;
  while (nwork) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(work[--nwork]);
    for (unsigned i = 0; t && i < LLVMGetNumSuccessors(t); i++) {
      LLVMBasicBlockRef s = LLVMGetSuccessor(t, i);
      if (s == bb) return true;
      bool old = false;
      for (int k = 0; k < nseen; k++) old |= seen[k] == s;
      if (!old && nseen < 512 && nwork < 512) seen[nseen++] = s, work[nwork++] = s;
    }
  }
  return false;
}

LLVMModuleRef unit_ir_parse(LLVMContextRef ctx, const char *text, const char *name) {
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(text, strlen(text), name);
  LLVMModuleRef mod;
  char *msg = NULL;
  if (LLVMParseIRInContext(ctx, buf, &mod, &msg)) ck_abort_msg("bad test IR: %s", msg);
  return mod;
}

int unit_late_checks_left(const char *ir, const char *hole, const char *fill, const char *name) {
  char text[8192];
  const char *at = strstr(ir, hole);
  ck_assert_ptr_nonnull(at);
  snprintf(text, sizeof text, "%.*s%s%s", (int)(at - ir), ir, fill, at + strlen(hole));
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = unit_ir_parse(ctx, text, name);
  bnd_late(mod);
  int checks = 0;
  LLVMValueRef fn = LLVMGetNamedFunction(mod, "f");
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
    if (term && LLVMIsABranchInst(term) && LLVMIsConditional(term))
      for (unsigned s = 0; s < 2; s++)
        checks += strcmp(LLVMGetBasicBlockName(LLVMGetSuccessor(term, s)), "bounds_trap") == 0;
  }
  LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  return checks;
}
