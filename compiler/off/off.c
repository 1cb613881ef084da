/* off.c: the offload stage: recognise tensor loops in the optimised host
 * module, generate PTX for each, embed it, and say what happened to every
 * loop nest. */
#include "off.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "ir_pass.h"
#include "kn_recog.h"
#include "off_internal.h"
#include "ptx.h"

_Static_assert(OFF_MAX_ARCHS == PTX_MAX_CODES, "one kernel-table slot per code of the plan");

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

/* The archs LLVM 19's NVPTX backend can build a kernel for (llc-19
 * -march=nvptx64 -mcpu=help), from sm_50 on; any other aborts inside
 * LLVM, so they are refused before it runs. */
static const unsigned supported_archs[] = {50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90};
#define NSUPPORTED (sizeof supported_archs / sizeof supported_archs[0])

const char *off_supported_archs(void) {
  static char list[NSUPPORTED * 8];
  if (!list[0])
    for (size_t i = 0, n = 0; i < NSUPPORTED; i++)
      n += (size_t)snprintf(list + n, sizeof list - n, "%ssm_%u", i ? "," : "", supported_archs[i]);
  return list;
}

static bool supported(unsigned long sm) {
  for (size_t i = 0; i < NSUPPORTED; i++)
    if (supported_archs[i] == sm) return true;
  return false;
}

bool off_parse_archs(off_options *o, const char *list) {
  o->narchs = 0;
  for (const char *p = list; *p;) {
    if (!strncmp(p, "sm_", 3)) p += 3;
    char *end;
    unsigned long sm = strtoul(p, &end, 10);
    /* one slot stays free for the sm_90a kernel ptx_generate_opts adds */
    if (end == p || !supported(sm) || o->narchs == OFF_MAX_ARCHS - 1) return false;
    o->archs[o->narchs++] = (unsigned)sm;
    if (*end == ',') end++;
    else if (*end) return false;
    p = end;
  }
  return o->narchs > 0;
}

static const char *kind_name(const kn_desc *d) {
  switch (d->kind) {
  case KN_MAP: return "map";
  case KN_REDUCE: return "reduce";
  default: return "matmul";
  }
}

/* Choices that change results, said in the report. */
static const char *inexact_note(const kn_desc *d, const ptx_plan *p) {
  if (d->kind == KN_REDUCE && d->reduce.reassociate)
    return "; float reduction made eligible by --fp-reassociate (results may differ from the CPU)";
  if (d->kind == KN_REDUCE && d->reduce.sequential)
    return "; exact in-order float sum: one GPU thread, chosen only when its data is on the GPU";
  if (d->kind == KN_MATMUL && d->matmul.type == KN_MM_F32 && p->tensor_family)
    return "; tf32 tensor cores on sm_80+ (--tensor-cores=tf32: inputs rounded to tf32)";
  return "";
}

/* Keeps the PTX section through code generation and linking even where
 * nothing else refers to it (`--extract-ptx` reads it). */
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

/* Lowering's functions by address, to find the Wasm index of each
 * function still in the module (LLVM may have dropped or added some). */
typedef struct {
  LLVMValueRef fn;
  uint32_t index;
} off_index;

static int by_address(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const off_index *)a)->fn, y = (uintptr_t)((const off_index *)b)->fn;
  return x < y ? -1 : x > y;
}

typedef struct off_ctx {
  LLVMModuleRef mod;
  const off_options *o;
  ptx_arch archs[OFF_MAX_ARCHS];
  off_text report;
  off_store store;
  LLVMValueRef *kernels;
  uint8_t *host_out; /* per kernel: TWASM_ENTRY_HOST_OUT on some arch */
  unsigned nkernels;
} off_ctx;

static bool all_ascii(const ptx_out *px) {
  for (unsigned i = 0; i < px->ncodes; i++)
    if (!ptx_is_ascii(px->codes[i].text, strlen(px->codes[i].text))) return false;
  return true;
}

static void say_size(off_text *t, kn_size s) {
  if (s.is_param) say(t, "n");
  else say(t, "%lld", (long long)s.value);
}

/* A batch: how many products of which shape, in one launch. */
static void batch_shape(off_ctx *c, const kn_matmul *m, const ptx_plan *p) {
  if (m->batch.is_param) say(&c->report, "; a batch (live count) of ");
  else say(&c->report, "; a batch of %lld ", (long long)m->batch.value);
  say_size(&c->report, m->m);
  say(&c->report, "x");
  say_size(&c->report, m->n);
  say(&c->report, "x");
  say_size(&c->report, m->k);
  say(&c->report, " products in one launch%s",
      p->family == TWASM_PATH_BATCH    ? " (8 products per block)"
      : p->family == TWASM_PATH_MATVEC ? " (grid y)"
                                       : " (grid z)");
}

/* Which kernel a matmul takes on which archs, and why: the plan. */
static void matmul_path(off_ctx *c, const kn_desc *d, const ptx_plan *p) {
  if (d->matmul.batched) batch_shape(c, &d->matmul, p);
  const char *how = d->matmul.batched ? "; tensor cores (mma.sync, a warp per product) on "
                                      : "; tensor cores (wmma) on ";
  bool tc = false, exact = false, wgmma = false, packed = false;
  for (unsigned i = 0; i < p->ncodes; i++) {
    const ptx_plan_code *pc = &p->codes[i];
    if (pc->arch.specific) {
      wgmma = true;
      packed |= (pc->entries & TWASM_ENTRY_PACKED) != 0;
    } else if (!ptx_path_tensor_cores(pc->path)) {
      exact = true;
    } else {
      say(&c->report, "%ssm_%u", tc ? "," : how, pc->arch.sm);
      tc = true;
    }
  }
  if (wgmma && packed)
    say(&c->report, ", wgmma on sm_90a (compute capability 9.0: A and B packed into device scratch, "
                    "then multiplied in 128x256 tiles fed by bulk copies, for products that fill "
                    "those tiles; smaller ones run the wmma body)");
  else if (wgmma)
    say(&c->report, ", wgmma on sm_90a (compute capability 9.0; shapes it does not take run the "
                    "wmma body)");
  if (tc && exact) say(&c->report, ", exact kernel on the others");
  if (p->reason && p->family == TWASM_PATH_MATVEC) say(&c->report, "; exact matrix-vector kernel (%s)", p->reason);
  else if (p->reason) say(&c->report, tc ? " (%s)" : "; exact kernel (%s)", p->reason);
}

static void add_times(off_times *t, const ptx_out *px) {
  for (unsigned i = 0; t && i < px->ncodes; i++) {
    const ptx_code *code = &px->codes[i];
    unsigned k = 0;
    while (k < t->narchs && (t->sm[k] != code->sm || t->specific[k] != code->specific)) k++;
    if (k == t->narchs && k == OFF_MAX_ARCHS + 1) continue;
    if (k == t->narchs) {
      t->sm[k] = code->sm, t->specific[k] = code->specific, t->seconds[k] = 0;
      t->narchs++;
    }
    t->seconds[k] += code->seconds;
  }
}

/* One recognised nest: PTX per arch, embedded, and a kernel table entry;
 * false when it stays on the CPU (said in the report). */
static bool offload_nest(off_ctx *c, const kn_recog_nest *n, const char *where, uint32_t index,
                         int k, int part, tw_arena *arena) {
  char kname[64];
  if (part < 0) snprintf(kname, sizeof kname, "f%u_nest%d", index, k);
  else snprintf(kname, sizeof kname, "f%u_nest%d_part%d", index, k, part);
  ptx_out px;
  tw_diag pd = {.offset = TW_DIAG_NO_OFFSET};
  ptx_options po = {.tf32 = c->o->tf32};
  kn_desc desc = n->desc;
  if (n->ncallees && !off_calls_bitcode(n->callees, n->ncallees, arena, &desc.calls_bc, &desc.calls_bc_len)) {
    say(&c->report, "%s: not offloaded: the code of the functions it calls could not be copied\n", where);
    return false;
  }
  if (!ptx_generate_opts(&desc, kname, c->o->narchs ? c->archs : NULL, c->o->narchs, &po,
                         arena, &px, &pd)) {
    say(&c->report, "%s: not offloaded: kernel generation failed: %s\n", where, pd.msg);
    return false;
  }
  if (!all_ascii(&px)) { /* the driver's JIT would reject the whole module */
    say(&c->report, "%s: not offloaded: generated PTX is not ASCII\n", where);
    return false;
  }
  add_times(c->o->times, &px);
  LLVMValueRef text_at[OFF_MAX_ARCHS];
  c->kernels = realloc(c->kernels, (c->nkernels + 1) * sizeof *c->kernels);
  uint8_t *out = realloc(c->host_out, c->nkernels + 1);
  if (!c->kernels || !out) {
    free(out);
    c->host_out = NULL;
    say(&c->report, "%s: not offloaded: out of memory\n", where);
    return false;
  }
  c->host_out = out;
  /* its outputs written into the host's pages: a launch that may go
   * unwaited (runtime/rt_defer.c, off_wait.c) */
  c->host_out[c->nkernels] = 0;
  for (unsigned i = 0; i < px.plan.ncodes; i++)
    c->host_out[c->nkernels] |= (px.plan.codes[i].entries & TWASM_ENTRY_HOST_OUT) != 0;
  off_store_add(&c->store, &px, text_at);
  c->kernels[c->nkernels++] = off_kernel_const(c->mod, n, &px, text_at, c->store.store);
  say(&c->report, "%s: offloaded as %s (", where, kind_name(&n->desc));
  for (unsigned i = 0; i < px.ncodes; i++)
    say(&c->report, "%ssm_%u%s", i ? "," : "", px.codes[i].sm, px.codes[i].specific ? "a" : "");
  say(&c->report, ")");
  if (n->desc.kind == KN_MATMUL) matmul_path(c, &n->desc, &px.plan);
  say(&c->report, "%s; runs on the GPU when one is usable and the run-time checks pass\n",
      inexact_note(&n->desc, &px.plan));
  return true;
}

/* Where the report places a nest: its outermost Wasm loop instruction,
 * else (LLVM dropped the loop's metadata) the function's body. */
static uint32_t loop_offset(const ir_loop *l, const ir_cfg *cfg, const off_func *wf) {
  for (int i = 0; i < l->nlatches; i++) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(cfg->blocks[l->latches[i]].bb);
    uint32_t offset;
    if (t && ir_loop_offset(t, &offset)) return offset;
  }
  return wf->body_offset;
}

static uint32_t nest_offset(const kn_recog_nest *n, const off_func *wf) {
  return loop_offset(n->nest, n->cfg, wf);
}

/* A checked copy (the bounds pass's, or the re-roll's clone of a nest
 * behind its hoisted test, ir_reroll_hoist.c): its header's terminator
 * marked, or its latch's, where the bounds checks split the header and
 * moved the marked terminator away. */
static bool nest_checked(const kn_recog_nest *n) {
  return ir_loop_checked(n->cfg, n->nest);
}

/* The bounds pass's checked copy of a nest (compiler/bnd_loop.c), which
 * runs only when the test before the nest fails and traps at the exact
 * access: never offloaded.  Where the nest also has its fast copy (the
 * same Wasm loop), that copy's line speaks for both; where LLVM kept no
 * fast copy, the checked copy gets a line of its own saying why the nest
 * stays on the CPU, so every Wasm loop nest is in the report. */
static void say_checked_copy(off_ctx *c, const kn_recog_result *res, int k, const off_func *wf,
                             const char *where) {
  /* merged into the fast copy's line */
  const kn_recog_nest *n = &res->nests[k];
  /* the fast copy of this Wasm loop, or of one around it (which holds it,
   * as a whole or in the nests reported inside it) */
  for (const ir_loop *l = n->nest; l; l = l->parent) {
    uint32_t at = loop_offset(l, n->cfg, wf);
    if (at == wf->body_offset) continue;
    for (int f = 0; f < res->nnests; f++) {
      const kn_recog_nest *fast = &res->nests[f];
      if (f != k && !nest_checked(fast) && nest_offset(fast, wf) == at)
        return;
    }
  }
  if (!n->ok)
    say(&c->report, "%s: not offloaded: %s (the nest exists only as its bounds-checked copy)\n", where,
        n->reason);
  else
    say(&c->report, "%s: not offloaded: the nest exists only as its bounds-checked copy (each access "
                    "checked, trapping at the exact one), which is never offloaded\n", where);
}

static void offload_func(off_ctx *c, LLVMValueRef fn, const off_func *wf, uint32_t index,
                         const char *base) {
  tw_arena arena = {0};
  kn_recog_result res;
  kn_recog_opts ro = {.fp_reassociate = c->o->fp_reassociate};
  char fname[32];
  snprintf(fname, sizeof fname, "func[%u]", index);
  const char *shown = wf->name ? wf->name : fname;
  if (kn_recognise_opts(fn, &ro, &res, &arena)) {
    int *ids = tw_arena_alloc(&arena, (size_t)(res.nnests + 1) * sizeof *ids);
    for (int k = 0; k < res.nnests; k++) ids[k] = -1;
    for (int k = 0; k < res.nnests; k++) {
      const kn_recog_nest *n = &res.nests[k];
      char where[512];
      snprintf(where, sizeof where, "%s:0x%x: %s", base, nest_offset(n, wf), shown);
      if (nest_checked(n)) {
        say_checked_copy(c, &res, k, wf, where);
        continue;
      }
      if (!n->ok) {
        say(&c->report, "%s: not offloaded: %s\n", where, n->reason);
        continue;
      }
      const char *why = NULL;
      for (int p = 0; p <= n->nparts && !why; p++)
        if (off_version_check(p ? &n->parts[p - 1] : n, &why)) why = NULL;
      if (why) {
        say(&c->report, "%s: not offloaded: %s\n", where, why);
        continue;
      }
      if (!n->nparts) {
        if (offload_nest(c, n, where, index, k, -1, &arena)) ids[k] = (int)c->nkernels - 1;
        continue;
      }
      /* a nest of several parts: one kernel each, consecutive ids, all
       * launched by one call (off_version_apply) */
      int first = (int)c->nkernels;
      bool all = true;
      for (int p = 0; p <= n->nparts && all; p++) {
        char part[600];
        snprintf(part, sizeof part, "%s: part %d of %d", where, p + 1, n->nparts + 1);
        all = offload_nest(c, p ? &n->parts[p - 1] : n, part, index, k, p, &arena);
      }
      if (all) ids[k] = first;
      else say(&c->report, "%s: not offloaded: a part's kernel failed (above); the nest runs on the CPU\n", where);
    }
    /* Last nest first: a nest whose exit is the next nest's header then
     * finds that nest's offload call on its exit edge (off_version.c). */
    for (int k = res.nnests - 1; k >= 0; k--)
      if (ids[k] >= 0)
        off_version_apply(fn, &res.nests[k], (unsigned)ids[k], !res.nests[k].nparts && c->host_out[ids[k]]);
  }
  tw_arena_free(&arena);
}

bool off_module(LLVMModuleRef mod, const off_func *funcs, uint32_t nfuncs, const char *file,
                const char *desc_symbol, const off_options *o, char **report,
                unsigned *nkernels, tw_diag *d) {
  off_ctx c = {.mod = mod, .o = o, .store = {.mod = mod}};
  for (unsigned i = 0; i < o->narchs; i++) c.archs[i].sm = o->archs[i];
  const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
  off_index *sorted = malloc(((size_t)nfuncs + 1) * sizeof *sorted);
  uint32_t n = 0;
  for (uint32_t i = 0; sorted && i < nfuncs; i++)
    if (funcs[i].fn) sorted[n++] = (off_index){funcs[i].fn, i};
  if (n) qsort(sorted, n, sizeof *sorted, by_address);
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); n && fn; fn = LLVMGetNextFunction(fn)) {
    off_index key = {fn, 0}, *at = bsearch(&key, sorted, n, sizeof *sorted, by_address);
    if (at && LLVMCountBasicBlocks(fn) > 0) offload_func(&c, fn, &funcs[at->index], at->index, base);
  }
  free(sorted);
  bool ok = true;
  if (c.nkernels) {
    LLVMValueRef section = off_store_finish(&c.store, d);
    if (section) mark_used(mod, &section, 1);
    ok = section && (off_attach_table(mod, desc_symbol, c.kernels, c.nkernels) ||
                     tw_fail(d, TW_DIAG_NO_OFFSET, "internal error: offload: no kernel table of module descriptor %s to fill, "
                             "or an entry disagreeing with twasm_abi.h", desc_symbol));
  }
  free(c.store.buf);
  free(c.kernels);
  free(c.host_out);
  *nkernels = c.nkernels;
  if (report) *report = c.report.buf ? c.report.buf : calloc(1, 1);
  else free(c.report.buf);
  return ok;
}
