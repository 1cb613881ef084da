/* off.c: the offload stage: recognise tensor loops in the optimised host
 * module, generate PTX for each, embed it, and say what happened to every
 * loop nest. */
#include "off.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "kn_recog.h"
#include "ptx.h"

typedef struct {
  char *buf;
  size_t len, cap;
} off_text;

__attribute__((format(printf, 2, 3))) static void say(off_text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (t->len + (size_t)n + 1 > t->cap) {
    t->cap = (t->len + (size_t)n + 1) * 2;
    t->buf = realloc(t->buf, t->cap);
  }
  va_start(ap, fmt);
  vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
  va_end(ap);
  t->len += (size_t)n;
}

bool off_parse_archs(off_options *o, const char *list) {
  o->narchs = 0;
  for (const char *p = list; *p;) {
    if (!strncmp(p, "sm_", 3)) p += 3;
    char *end;
    unsigned long sm = strtoul(p, &end, 10);
    if (end == p || sm < 50 || sm > 200 || o->narchs == OFF_MAX_ARCHS) return false;
    o->archs[o->narchs++] = (unsigned)sm;
    if (*end == ',') end++;
    else if (*end) return false;
    p = end;
  }
  return o->narchs > 0;
}

static const char *kind_name(const kn_desc *d) {
  switch (d->kind) {
  case KN_MAP: return d->map.ndims == 2 ? "2-D map" : "map";
  case KN_REDUCE: return "reduction";
  default: return "matmul";
  }
}

/* What a kernel runs on, read from the generator's choice per arch. */
static void path_note(off_text *t, const kn_desc *d, const ptx_out *px) {
  if (d->kind == KN_REDUCE && d->reduce.reassociate)
    say(t, "; float reduction reassociated (--fp-reassociate: results may differ from the CPU)");
  if (d->kind != KN_MATMUL) return;
  bool any = false;
  for (unsigned i = 0; i < px->ncodes; i++) {
    if (!strstr(px->codes[i].text, "wmma.")) continue;
    say(t, "%s sm_%u", any ? "," : "; tensor cores (wmma) on", px->codes[i].sm);
    any = true;
  }
  if (any && d->matmul.type == KN_MM_F32) say(t, " as tf32 (--tensor-cores=tf32: inputs rounded)");
  else if (any) say(t, " (int8, exact: wraps like Wasm i32)");
  say(t, "%s", any ? ", exact scalar kernel elsewhere" : "; exact kernel, k summed in source order");
}

/* One record per arch, read back by off_extract:
 *   "twasm-ptx NAME sm_N ISA LENGTH\n" then LENGTH bytes of PTX. */
static LLVMValueRef embed(LLVMModuleRef mod, const char *name, const ptx_out *px) {
  off_text t = {0};
  for (unsigned i = 0; i < px->ncodes; i++) {
    const ptx_code *c = &px->codes[i];
    say(&t, "twasm-ptx %s sm_%u %u %zu\n", name, c->sm, c->ptx_isa, strlen(c->text));
    say(&t, "%s", c->text);
  }
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  LLVMValueRef init = LLVMConstStringInContext2(ctx, t.buf, t.len, true);
  LLVMValueRef g = LLVMAddGlobal(mod, LLVMTypeOf(init), "twasm_ptx");
  LLVMSetInitializer(g, init);
  LLVMSetGlobalConstant(g, true);
  LLVMSetLinkage(g, LLVMInternalLinkage);
  LLVMSetSection(g, ".twasm_ptx");
  LLVMSetAlignment(g, 1);
  free(t.buf);
  return g;
}

/* Keeps the embedded records through code generation and linking. */
static void mark_used(LLVMModuleRef mod, LLVMValueRef *globals, unsigned n) {
  if (!n) return;
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0);
  LLVMValueRef arr = LLVMConstArray2(ptr, globals, n);
  LLVMValueRef used = LLVMAddGlobal(mod, LLVMTypeOf(arr), "llvm.used");
  LLVMSetInitializer(used, arr);
  LLVMSetLinkage(used, LLVMAppendingLinkage);
  LLVMSetSection(used, "llvm.metadata");
}

static const wasm_func *wasm_func_of(LLVMValueRef fn, const wasm_module *m, uint32_t *index) {
  size_t len;
  const char *name = LLVMGetValueName2(fn, &len);
  unsigned idx;
  if (sscanf(name, "wasm_f%u", &idx) != 1 || idx >= m->nfuncs) return NULL;
  *index = idx;
  return &m->funcs[idx];
}

bool off_module(LLVMModuleRef mod, const wasm_module *m, const char *file,
                const off_options *o, char **report, unsigned *nkernels, tw_diag *d) {
  ptx_arch archs[OFF_MAX_ARCHS];
  unsigned narchs = o->narchs;
  for (unsigned i = 0; i < narchs; i++) archs[i].sm = o->archs[i];
  off_text t = {0};
  LLVMValueRef *kept = NULL;
  unsigned nkept = 0;
  kn_recog_opts ro = {.fp_reassociate = o->fp_reassociate};
  ptx_options po = {.tf32 = o->tf32};
  bool ok = true;
  const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); ok && fn; fn = LLVMGetNextFunction(fn)) {
    uint32_t index;
    const wasm_func *wf = wasm_func_of(fn, m, &index);
    if (!wf || LLVMCountBasicBlocks(fn) == 0) continue;
    tw_arena arena = {0};
    kn_recog_result res;
    char fname[32];
    snprintf(fname, sizeof fname, "func[%u]", index);
    const char *shown = wf->name ? wf->name : fname;
    if (kn_recognise_opts(fn, &ro, &res, &arena)) {
      for (int k = 0; k < res.nnests; k++) {
        const kn_recog_nest *n = &res.nests[k];
        say(&t, "%s: %s (0x%x): loop nest %d: ", base, shown, wf->body_offset, k);
        if (!n->ok) {
          say(&t, "stays on the CPU: %s\n", n->reason);
          continue;
        }
        char kname[64];
        snprintf(kname, sizeof kname, "f%u_nest%d", index, k);
        ptx_out px;
        tw_diag pd = {0};
        if (!ptx_generate_opts(&n->desc, kname, narchs ? archs : NULL, narchs, &po, &arena, &px, &pd)) {
          say(&t, "stays on the CPU: kernel generation failed: %s\n", pd.msg);
          continue;
        }
        kept = realloc(kept, (nkept + 1) * sizeof *kept);
        kept[nkept++] = embed(mod, px.name, &px);
        say(&t, "%s -> kernel %s, PTX for", kind_name(&n->desc), px.name);
        for (unsigned i = 0; i < px.ncodes; i++) say(&t, "%s sm_%u", i ? "," : "", px.codes[i].sm);
        path_note(&t, &n->desc, &px);
        say(&t, "; launching it is not implemented yet: runs on the CPU\n");
      }
    }
    tw_arena_free(&arena);
  }
  mark_used(mod, kept, nkept);
  free(kept);
  *nkernels = nkept;
  if (report) *report = t.buf ? t.buf : calloc(1, 1);
  else free(t.buf);
  (void)d;
  return ok;
}
