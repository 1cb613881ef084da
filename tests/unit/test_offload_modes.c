/* test_offload_modes.c: Check suite "offload_modes": the bounds pass
 * (compiler/bnd*.c) must not change what the offload stage takes.  Every
 * program of the GPU corpora (tests/gpu/e2e, tests/bench/gpu,
 * tests/unit/reroll, tests/gpu/detect) is compiled to Wasm (clang-19, as
 * the Makefile and ptx_same.sh build them), then to the IR the offload
 * stage sees, in guard mode with and without the bounds pass
 * (--skip-pass=bounds: the mode as it was before its exact checks).  Each
 * offloadable nest is named by its Wasm loop offset and what it becomes
 * (kind, dimensions, types); the checked copies of versioned nests are
 * left out as the offload stage leaves them.  Both must offload exactly
 * the same nests.  (Explicit mode is no reference here: its checks, made
 * while lowering, change inlining and keep some 2-D maps and batched
 * products from being recognised, as they did before the bounds pass.)
 * A second test builds each program with plain -O2 and with -O2
 * -fno-unroll-loops: both must offload as many nests of each kind; a
 * third (tcase "simd") builds each scalar program (not one written with
 * <wasm_simd128.h>) with plain -O2 and with -O2 -msimd128: the same again.
 * Compile-only (no PTX is generated): runs without a GPU. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/IRReader.h>

#include "driver.h"
#include "ir_pass.h"
#include "kn_recog.h"
#include "off_internal.h"

enum { MAX_PROGRAMS = 256, MAX_NESTS = 512 };

/* How a corpus is built to Wasm (%1$s source, %2$s output, %3$s
 * -fno-unroll-loops or nothing), and which of the two its Makefile uses. */
typedef struct {
  const char *dir;
  const char *build;
  const char *unroll; /* as built for the GPU tests */
} corpus;

#define WASI_CC "clang-19 --target=wasm32-wasi --sysroot=/usr"
#define APP_BUILD                                                                             \
  WASI_CC " -O2 %3$s -c %1$s -o %2$s.o && " WASI_CC " %2$s.o -o %2$s "                        \
          "-Wl,--max-memory=4294967296 -Wl,-z,stack-size=1048576 -lm"
#define NO_UNROLL "-fno-unroll-loops"
static const corpus corpora[] = {
    {"tests/gpu/e2e", APP_BUILD, NO_UNROLL},
    {"tests/bench/gpu", APP_BUILD, NO_UNROLL},
    {"tests/unit/reroll", WASI_CC " -O2 %3$s %1$s -o %2$s", ""},
    {"tests/gpu/detect", WASI_CC " -O2 %3$s -nostdlib -Wl,--no-entry -Wl,--export-all "
                         "-Wl,--allow-undefined %1$s -o %2$s", ""},
};

typedef struct {
  char path[256];
  const corpus *from;
  bool simd; /* written with <wasm_simd128.h>: built with -msimd128 */
} program;

static program programs[MAX_PROGRAMS];
static int nprograms;

/* Made by main before the tests fork: the -O2 nest sets that
 * unrolling_keeps_offload leaves for simd_keeps_offload ("" when none). */
static char cache_dir[64];

static int by_path(const void *a, const void *b) {
  return strcmp(((const program *)a)->path, ((const program *)b)->path);
}

/* OFFLOAD_MODES_ONLY=TEXT: only the programs whose path holds TEXT. */
static void find_programs(void) {
  const char *only = getenv("OFFLOAD_MODES_ONLY");
  for (size_t c = 0; c < sizeof corpora / sizeof *corpora; c++) {
    DIR *dir = opendir(corpora[c].dir);
    for (struct dirent *e; dir && (e = readdir(dir));) {
      size_t len = strlen(e->d_name);
      if (len < 3 || strcmp(e->d_name + len - 2, ".c") || nprograms == MAX_PROGRAMS) continue;
      program *p = &programs[nprograms];
      snprintf(p->path, sizeof p->path, "%s/%s", corpora[c].dir, e->d_name);
      p->from = &corpora[c];
      char cmd[512];
      snprintf(cmd, sizeof cmd, "grep -q 'wasm_simd128.h' %s", p->path);
      p->simd = system(cmd) == 0;
      if (!only || strstr(p->path, only)) nprograms++;
    }
    if (dir) closedir(dir);
  }
  qsort(programs, (size_t)nprograms, sizeof *programs, by_path);
}

/* The build's extra flags: unroll, after -msimd128 for a source written
 * with the intrinsics (they need the target feature). */
static const char *build_flags(const program *p, const char *unroll, char *out, size_t cap) {
  snprintf(out, cap, "%s%s", p->simd ? "-msimd128 " : "", unroll);
  return out;
}

static bool have_clang(void) { return system("clang-19 --version >/dev/null 2>&1") == 0; }

/* One offloadable nest: "OFFSET WHAT". */
#define MAX_INNER 8

typedef struct {
  uint32_t offset;           /* its outermost Wasm loop, 0: unknown */
  char what[96];
  uint32_t inner[MAX_INNER]; /* the offsets of the loops inside it */
  int ninner;
} nest_sig;

typedef struct {
  nest_sig nests[MAX_NESTS];
  int n;
} nest_set;

static const char *type_name(kn_type t) {
  static const char *const names[] = {"i1", "i8", "i16", "i32", "i64", "f32", "f64"};
  return t <= KN_F64 ? names[t] : "?";
}

static void describe(const kn_desc *d, char *out, size_t cap) {
  static const char *const mm_types[] = {"f32", "f64", "i32", "i8xi8->i32"};
  switch (d->kind) {
  case KN_MAP:
    snprintf(out, cap, "map %u-D -> %s", d->map.ndims, type_name(d->map.out_type));
    break;
  case KN_REDUCE:
    snprintf(out, cap, "reduce op %d %s%s", (int)d->reduce.op, type_name(d->reduce.type),
             d->reduce.reassociate ? " reassociated" : "");
    break;
  default:
    snprintf(out, cap, "matmul %s%s%s%s%s%s", mm_types[d->matmul.type], d->matmul.batched ? " batched" : "",
             d->matmul.accumulate ? " accumulating" : "", d->matmul.a_scale.on ? " A scaled" : "",
             d->matmul.b_scale.on ? " B scaled" : "", d->matmul.start_scale.on ? " start scaled" : "");
  }
}

static nest_sig *add(nest_set *s, uint32_t offset, const char *what) {
  for (int i = 0; i < s->n; i++)
    if (s->nests[i].offset == offset && !strcmp(s->nests[i].what, what)) return NULL; /* an inlined copy */
  ck_assert_int_lt(s->n, MAX_NESTS);
  nest_sig *x = &s->nests[s->n++];
  *x = (nest_sig){.offset = offset};
  snprintf(x->what, sizeof x->what, "%s", what);
  return x;
}

/* The Wasm offsets of the loops inside nest n (its latches' markers). */
static void inner_offsets(const kn_recog_nest *n, nest_sig *x) {
  for (int i = 0; i < n->nest->nbody && x->ninner < MAX_INNER; i++) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(n->cfg->blocks[n->nest->body[i]].bb);
    uint32_t offset;
    if (!t || !ir_loop_offset(t, &offset) || offset == x->offset) continue;
    bool seen = false;
    for (int k = 0; k < x->ninner; k++) seen |= x->inner[k] == offset;
    if (!seen) x->inner[x->ninner++] = offset;
  }
}

/* As the offload report places a nest: its Wasm loop's offset. */
static uint32_t nest_offset(const kn_recog_nest *n) {
  for (int i = 0; i < n->nest->nlatches; i++) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(n->cfg->blocks[n->nest->latches[i]].bb);
    uint32_t offset;
    if (t && ir_loop_offset(t, &offset)) return offset;
  }
  return 0;
}

/* What the offload stage would take from the IR of wasm compiled with o. */
static void offloadable(const char *wasm, const drv_options *o, bool reassociate, nest_set *out) {
  uint8_t *bytes;
  size_t size;
  tw_diag d = {.offset = TW_DIAG_NO_OFFSET};
  ck_assert_int_eq(drv_read_input(wasm, &bytes, &size, &d), DRV_OK);
  char *ir = NULL;
  ck_assert_msg(drv_emit_llvm(bytes, size, wasm, o, &ir, &d) == DRV_OK, "%s: %s", wasm, d.msg);
  free(bytes);
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRange(ir, strlen(ir), wasm, false);
  LLVMModuleRef mod;
  char *msg = NULL;
  if (LLVMParseIRInContext(ctx, buf, &mod, &msg)) ck_abort_msg("%s: bad IR: %s", wasm, msg);
  free(ir);
  kn_recog_opts ro = {.fp_reassociate = reassociate};
  out->n = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    size_t len;
    if (LLVMCountBasicBlocks(fn) == 0 || strncmp(LLVMGetValueName2(fn, &len), "wasm_f", 6)) continue;
    tw_arena arena = {0};
    kn_recog_result res;
    if (kn_recognise_opts(fn, &ro, &res, &arena))
      for (int k = 0; k < res.nnests; k++) {
        const kn_recog_nest *n = &res.nests[k];
        const char *why;
        if (!n->ok || ir_loop_checked(n->cfg, n->nest) || !off_version_check(n, &why))
          continue;
        char what[96];
        describe(&n->desc, what, sizeof what);
        nest_sig *x = add(out, nest_offset(n), what);
        if (x) inner_offsets(n, x);
      }
    tw_arena_free(&arena);
  }
  LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
}

static bool has(const nest_set *s, const nest_sig *x) {
  for (int i = 0; i < s->n; i++)
    if (s->nests[i].offset == x->offset && !strcmp(s->nests[i].what, x->what)) return true;
  return false;
}

/* Whether g is a map of x's output type with more dimensions around x:
 * the bounds pass's widened addresses (bnd_widen.c) can prove an outer
 * loop independent where the i32 forms could not. */
static bool encloses(const nest_sig *g, const nest_sig *x) {
  unsigned xd, gd;
  char xt[16], gt[16];
  if (sscanf(x->what, "map %u-D -> %15s", &xd, xt) != 2 ||
      sscanf(g->what, "map %u-D -> %15s", &gd, gt) != 2 || gd <= xd || strcmp(gt, xt))
    return false;
  for (int k = 0; k < g->ninner; k++)
    if (g->inner[k] == x->offset) return true;
  return false;
}

/* Whether s offloads x itself or a map enclosing it. */
static bool covers(const nest_set *s, const nest_sig *x) {
  for (int i = 0; i < s->n; i++)
    if (encloses(&s->nests[i], x)) return true;
  return has(s, x);
}

/* Whether g is in s, or encloses a nest of s. */
static bool explained(const nest_set *s, const nest_sig *g) {
  for (int i = 0; i < s->n; i++)
    if (encloses(g, &s->nests[i])) return true;
  return has(s, g);
}

static void print_set(const char *name, const nest_set *s) {
  fprintf(stderr, "  %s:\n", name);
  for (int i = 0; i < s->n; i++) fprintf(stderr, "    0x%x %s\n", s->nests[i].offset, s->nests[i].what);
}

/* Programs whose guard-mode build offloads other nests than without the
 * bounds pass, each with why.  Such a program must still differ: once it
 * agrees, the test fails until it leaves the list. */
/* A program known to differ between two builds, and why. */
typedef struct {
  const char *path, *why;
} known_gap;

/* The why of PATH in LIST (N entries), or NULL. */
static const char *gap_why(const known_gap *list, size_t n, const char *path) {
  for (size_t i = 0; i < n; i++)
    if (list[i].path && !strcmp(list[i].path, path)) return list[i].why;
  return NULL;
}
#define GAP_WHY(list, path) gap_why(list, sizeof list / sizeof *list, path)

#define POST_CLAMP_GAP                                                                            \
  "without the bounds pass (a measuring switch, no user mode) dense_relu6's nest (0x226) is refused "   \
  "\"stores something other than the sum\" (not looked into further) and its row "                     \
  "sum (0x248) is offloaded alone as an exact in-order f32 sum; guard mode takes the product (kn_mm_act; " \
  "main's inlined copy, 0x226, a product in both)"
static const known_gap bounds_gaps[] = {
    {"tests/gpu/detect/simd_nested.c",
     "gemm_ikj's, qmm_ikj_i8's, qmm_ikj_x's and syrk_tri's vector loops and scalar remainders (and "
     "center_f32's and center_f64's with their prologue loops) are read as one "
     "scalar loop, rows_dot_i32's and rows_dot_i8's sums in lanes and remainders as one sum "
     "(kn_lanes_region.c), in the shape the bounds pass leaves (each loop in a fast and a checked "
     "copy): guard mode offloads the six products and the two 2-D maps (and atax_rows's two parts, kn_recog_split.c "
     "split_region); without the pass (a measuring switch, no user mode) only maps or reduces of the "
     "remainders"},
    {"tests/gpu/detect/simd_lanes.c",
     "saxpy4's, axpy_f64's and (since session 53's top regions with a prologue loop) scale_i32's vector loops and remainders at the top of the function are one map in guard "
     "and explicit mode (kn_recog_top.c: the region under the skip, entered from the bounds pass's block); "
     "without the pass (a measuring switch, no user mode) the skip is the entry block, which gives the "
     "launch no way in, so each loop is a map of its own"},
    {"tests/unit/reroll/matmul.c",
     "main's inlined copy of jacobi (0x577 in its -c build) is a map in guard mode; without the bounds "
     "pass (a measuring switch, no user mode) the pointers pass's nuw lets LLVM widen its counters "
     "and the copy reads as a loop-carried dependence"},
    {"tests/gpu/e2e/polybench_tri.c",
     "kernel_trmm's row nest (0x57a) is a matrix-vector product with alpha after its sum (kn_mm_post) "
     "without the bounds pass (a measuring switch, no user mode); in guard mode that nest exists only as "
     "its bounds-checked copy, never offloaded"},
    {"tests/gpu/detect/blas_cols.c",
     "guard mode: sgemm_nn's and ssyrk_un's l-i nests (0x297, 0x4a4) are products, one column each; "
     "without the bounds pass (a measuring switch, no user mode) sgemm_nn's is refused \"inner loop runs "
     "only under a condition\" and its i loop (0x2c5) is a map"},
    {"tests/gpu/e2e/blas_ref.c",
     "without the bounds pass (a measuring switch, no user mode) more nests are products: two whole j "
     "nests with C scaled first (0x2a9, 0xb50, start scaled), one without a scale (0x31e), and two more "
     "maps (0xe74, 0x1102); guard mode takes the products of one column; not looked into further"},
    /* exposed by the exact in-order float sums (kn_recog_reduce.c, sequential): both gaps were
     * there before them, hidden behind "float reduction needs --fp-reassociate" (with that flag
     * main 1bc7e60 differs the same way) */
    {"tests/gpu/e2e/post_clamp.c", POST_CLAMP_GAP},
    {"tests/gpu/e2e/post_clamp_o3.c", "post_clamp.c itself (#include), built here as post_clamp.c: " POST_CLAMP_GAP},
    {"tests/gpu/e2e/post_clamp_wasmopt.c", "post_clamp.c itself (#include), built here as post_clamp.c: " POST_CLAMP_GAP},
    {"tests/unit/reroll/walks.c",
     "main (func[28]) has an inlined product whose nest (0x5c40) is refused (not a single chain of loops) "
     "and whose k loop (0x5c5f) guard mode takes as an exact in-order f32 sum; without the bounds pass "
     "(a measuring switch, no user mode) that loop's trip count is unknown"},
};

START_TEST(bounds_pass_keeps_offload) {
  const program *p = &programs[_i];
  if (!have_clang()) {
    printf("offload_modes: %s skipped: clang-19 missing\n", p->path);
    return;
  }
  char dir[] = "/tmp/offload-modes-XXXXXX", wasm[512], cmd[2048];
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(wasm, sizeof wasm, "%s/m.wasm", dir);
  char flags[64];
  snprintf(cmd, sizeof cmd, p->from->build, p->path, wasm,
           build_flags(p, p->from->unroll, flags, sizeof flags));
  ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
  /* the source's twasmc-flags line may ask for float reductions */
  snprintf(cmd, sizeof cmd, "grep -q 'twasmc-flags:.*--fp-reassociate' %s", p->path);
  bool reassociate = system(cmd) == 0;

  drv_options o;
  drv_options_default(&o);
  o.stop_before_offload = true;
  o.offload.fp_reassociate = reassociate;
  static nest_set guard, before;
  offloadable(wasm, &o, reassociate, &guard);
  o.skip_pass = "bounds";
  offloadable(wasm, &o, reassociate, &before);
  bool same = true;
  for (int i = 0; same && i < before.n; i++) same = covers(&guard, &before.nests[i]);
  for (int i = 0; same && i < guard.n; i++) same = explained(&before, &guard.nests[i]);
  const char *gap = GAP_WHY(bounds_gaps, p->path);
  if (!same) {
    fprintf(stderr, "offload_modes: %s%s\n", p->path, gap ? " (known gap)" : "");
    print_set("guard", &guard);
    print_set("guard without the bounds pass", &before);
  }
  if (gap) {
    ck_assert_msg(!same, "%s: now offloads as without the bounds pass: take it off bounds_gaps", p->path);
    printf("offload_modes: %s: known gap: %s\n", p->path, gap);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
    return;
  }
  ck_assert_msg(same, "%s: guard mode offloads other nests than without the bounds pass", p->path);
  printf("offload_modes: %s: %d nest%s, as without the bounds pass\n", p->path, guard.n,
         guard.n == 1 ? "" : "s");
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The -O2 nest set of program i, as unrolling_keeps_offload left it in
 * cache_dir: one "OFFSET WHAT" a line, in by_what order. */
static void cache_path(int i, char *out, size_t cap) { snprintf(out, cap, "%s/%d.O2", cache_dir, i); }

static void save_o2(int i, const nest_set *s) {
  if (!cache_dir[0]) return;
  char path[128], tmp[136];
  cache_path(i, path, sizeof path);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) return;
  for (int k = 0; k < s->n; k++) fprintf(f, "%u %s\n", s->nests[k].offset, s->nests[k].what);
  if (fclose(f) == 0) rename(tmp, path);
}

static bool load_o2(int i, nest_set *s) {
  if (!cache_dir[0]) return false;
  char path[128], line[160];
  cache_path(i, path, sizeof path);
  FILE *f = fopen(path, "r");
  if (!f) return false;
  s->n = 0;
  while (fgets(line, sizeof line, f) && s->n < MAX_NESTS) {
    nest_sig *x = &s->nests[s->n++];
    *x = (nest_sig){0};
    int used = 0;
    if (sscanf(line, "%u %n", &x->offset, &used) != 1) s->n--;
    else snprintf(x->what, sizeof x->what, "%.*s", (int)strcspn(line + used, "\n"), line + used);
  }
  fclose(f);
  return true;
}

static int by_what(const void *a, const void *b) {
  return strcmp(((const nest_sig *)a)->what, ((const nest_sig *)b)->what);
}

/* Programs whose -O2 build still offloads other nests than with
 * -fno-unroll-loops, each with why (issue 19).  Such a program must still
 * differ: once it agrees, the test fails until it leaves the list. */
static const known_gap unroll_gaps[] = {
    {"tests/gpu/e2e/pure_calls.c",
     "rope_freq (a map calling powf, `i % 64`): clang unrolls it by two at -O2, its first copy reading `i & 62` "
     "(i even) and its second `(i + 1) & 63`, which the re-roller does not prove the same (\"unrolled copies "
     "differ\"); one map with -fno-unroll-loops"},
    {"tests/bench/gpu/llm.c",
     "heads_mix, as tests/gpu/detect/heads.c: one batched matrix-vector product fewer at -O2 (its fills, "
     "unrolled into 8-byte stores, agree since kn_recog_map.c's split_halves)"},
    {"tests/gpu/detect/asserts.c",
     "mm_get_set (a product through get/set accessors with assert()): at -O2 the re-rolled k loop's bypass "
     "keeps it off (inner loop runs only under a condition); a product with -fno-unroll-loops"},
    {"tests/gpu/e2e/batch_odd.c",
     "k_f64 and k_u8 (batched products with -fno-unroll-loops): k_f64's j loop (8) is unrolled completely "
     "with C's eight elements kept in phis across the k loop (stores and sums of eight chains in one "
     "block, not a loop of copies); k_u8's p loop (23, odd) is unrolled by two with the odd term after it "
     "(refused: sum starts from an unsupported value)"},
    {"tests/unit/reroll/copies.c",
     "tri_i8 (kept by the re-roll: its copies sum 30 to 37 terms) is unrolled at -O2; with "
     "-fno-unroll-loops its p loop is a 1-D i32 reduce (0x36c8); rows_i8 and batch_i8 agree (re-rolled "
     "loops of copies)"},
    {"tests/gpu/e2e/counter.c",
     "k_grid's x loop (a 2-D map with -fno-unroll-loops, by 4 at -O2 with its copies stored in the order "
     "3, 0, 2, 1) is not re-rolled: the copies' proof fails (ir_reroll_rem.c prove_copies, not looked into; "
     "since round 13 a nest's range test would stand before the nest, as k_iota's in map2d.c); k_prefix "
     "agrees since round 11"},
    {"tests/unit/reroll/kept.c",
     "one 1-D i32 map fewer at -O2: until round 9 the -O2 build matched through a remainder loop (a down "
     "counter from n & C, C < 64), now refused as too little work (kn_recog.c "
     "trip_at_most); its unrolled loop is not re-rolled (not analysed further)"},
    {"tests/gpu/e2e/shapes.c",
     "one nest more at -O2: blur (0x402, a 2-D u8 map once clang unrolls its constant 3x3 window); with "
     "-fno-unroll-loops the window loops stay and the nest is refused (stores outside the inner loops); the "
     "other 17 agree"},
    {"tests/gpu/e2e/stencil_wh.c",
     "main's loop over seven constant sizes of k_jacobi is fully unrolled at -O2: each inlined copy has a "
     "constant size and is refused as too little work (a map with -fno-unroll-loops, its sizes read "
     "from the table); k_scale_if's inner loop is re-rolled (a 2-D map at both levels)"},
    {"tests/gpu/detect/polybench_suite.c",
     "atax, atax_ahead, atax_before: two j loops in one i loop; at -O2 the re-roller leaves a straight "
     "copy of both for n = 1 inside the nest, which no part takes (with -fno-unroll-loops: two products "
     "in order each, the near misses refused at run time); bicg_restrict: at -O2 clang splits its nest "
     "(not a single chain of loops)"},
    {"tests/gpu/detect/simd_lanes.c",
     "built with -msimd128: with unrolling on, the vectorised loops leave more scalar remainder and "
     "epilogue loops, each offloaded as a map of its own (14 nests against 11)"},
    {"tests/unit/reroll/matmul.c",
     "main (every kernel inlined): three 1-D f32 maps with -fno-unroll-loops (0x37a3, 0x3938, 0x3aff), one at "
     "-O2 (0x3c29); not classified loop by loop"},
    {"tests/unit/reroll/walks.c",
     "main (func[28], wasm-opt inlines every routine into it in this one-step build): 4 f32 maps, 2 "
     "products and 1 exact in-order f32 sum at -O2 against 7 maps, 3 products and 8 such sums (2 f32, 6 "
     "f64) with -fno-unroll-loops; not classified loop by loop "
     "(round 12: each routine alone, built in two steps, is re-rolled, test_reroll, and offloads at -O2 "
     "as with -fno-unroll-loops in tests/gpu/survey/styles_matmul.c)"},
    {"tests/unit/reroll/guards.c",
     "main (func[20]) offloads one 1-D f32 map fewer at -O2: its inlined copy of rows_if's x loop "
     "(`fout[r + x] = fin[r + x] + 0.5f`, global arrays) is re-rolled, but then one counter addresses "
     "both arrays from one base, 9216 bytes apart, which kn_recog_map.c's check_dependences refuses "
     "as a loop-carried dependence; with -fno-unroll-loops each has a counter of its own (two bases, "
     "left to the runtime's overlap check); and one i64 reduce fewer: dots_i64 (round 10), which this "
     "one-step build's wasm-opt inlines into main, is a reduce with -fno-unroll-loops (0x37af) and refused "
     "at -O2 (not a single chain of loops, non-affine address; not analysed; its two-step build is "
     "re-rolled, test_reroll)"},
    {"tests/gpu/detect/heads.c",
     "heads_mix (a batch of matrix-vector products whose matrix is read along the outputs): at -O2 clang "
     "unrolls its t loop and splits the nest in three, which the batch reading does not re-roll (refused: "
     "reads host state, not a single chain of loops, float reduction); one batched product with "
     "-fno-unroll-loops"},
    {"tests/gpu/e2e/matvec_heads.c", "as tests/gpu/detect/heads.c (heads_mix)"},
    {"tests/gpu/e2e/rows.c",
     "its four row-table products (mv_rows, mm_rows, mtv_rows, mm_rows_ikj's k-j nest) agree; main's "
     "helper loops give one 1-D i32 map fewer at -O2 (2 maps against 3 with -fno-unroll-loops; no "
     "product; not analysed, round 14: before it, main's maps agreed here and one differed without "
     "the bounds pass)"},
    {"tests/gpu/e2e/rows_o3.c", "rows.c itself (#include), built here at -O2 as rows.c: the same gap"},
    {"tests/gpu/e2e/simd_dsp.c",
     "main's inlined y = A^T x (constant 129 x 203): at -O2 clang unrolls the j loop of the odd constant "
     "count by 2 with the exit tested between the copies (no remainder loop), not re-rolled (refused: "
     "stores to more than one array); one matrix-vector product with -fno-unroll-loops"},
    {"tests/gpu/e2e/simd_dsp_o3.c", "as simd_dsp.c (built here at -O2, without -msimd128)"},
    {"tests/gpu/e2e/blas_ref.c",
     "kernel_sgemm_nn_ll (64-bit indices): at -O2 the l-i nest in its j loop is refused \"reads host state\" "
     "(a load whose address is not seen as memory's base plus an offset; not looked into further), "
     "one matrix-vector product per column with -fno-unroll-loops"},
};

/* The options of the stage before offload, as the program's
 * twasmc-flags ask; true when they ask --fp-reassociate. */
static bool stage_options(const program *p, drv_options *o) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "grep -q 'twasmc-flags:.*--fp-reassociate' %s", p->path);
  bool reassociate = system(cmd) == 0;
  drv_options_default(o);
  o->stop_before_offload = true;
  o->offload.fp_reassociate = reassociate;
  return reassociate;
}

/* Both builds (sorted sets) must offload the same kinds of nests, as many
 * of each, unless the program is a known gap of LIST (GAP: why), which
 * must still differ.  Removes DIR. */
static void expect_same(const program *p, const char *dir, const nest_set *a, const char *a_name,
                        const nest_set *b, const char *b_name, const char *gap, const char *list) {
  bool same = a->n == b->n;
  for (int i = 0; same && i < b->n; i++) same = !strcmp(a->nests[i].what, b->nests[i].what);
  if (!same) {
    fprintf(stderr, "offload_modes: %s%s\n", p->path, gap ? " (known gap)" : "");
    print_set(a_name, a);
    print_set(b_name, b);
  }
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
  if (gap) {
    ck_assert_msg(!same, "%s: %s now offloads as %s: take it off %s", p->path, a_name, b_name, list);
    printf("offload_modes: %s: known gap at %s: %s\n", p->path, a_name, gap);
    return;
  }
  ck_assert_msg(same, "%s: %s offloads other nests than %s", p->path, a_name, b_name);
  printf("offload_modes: %s: %d nest%s at %s, as at %s\n", p->path, b->n, b->n == 1 ? "" : "s", a_name,
         b_name);
}

/* clang's unroller (plain -O2: by 2, 4 or 8 with a remainder loop) must
 * not change what is offloaded: the same kinds of nests as with
 * -fno-unroll-loops, as many of each (their offsets differ). */
START_TEST(unrolling_keeps_offload) {
  const program *p = &programs[_i];
  if (!have_clang()) {
    printf("offload_modes: %s skipped: clang-19 missing\n", p->path);
    return;
  }
  char dir[] = "/tmp/offload-unroll-XXXXXX", wasm[512], cmd[2048];
  ck_assert_ptr_nonnull(mkdtemp(dir));
  drv_options o;
  bool reassociate = stage_options(p, &o);
  static nest_set unrolled, plain;
  nest_set *sets[2] = {&unrolled, &plain};
  for (int v = 0; v < 2; v++) {
    snprintf(wasm, sizeof wasm, "%s/m%d.wasm", dir, v);
    char flags[64];
    snprintf(cmd, sizeof cmd, p->from->build, p->path, wasm,
             build_flags(p, v ? NO_UNROLL : "", flags, sizeof flags));
    ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
    offloadable(wasm, &o, reassociate, sets[v]);
    qsort(sets[v]->nests, (size_t)sets[v]->n, sizeof *sets[v]->nests, by_what);
  }
  if (!p->simd) save_o2(_i, &unrolled); /* for simd_keeps_offload */
  expect_same(p, dir, &unrolled, "-O2", &plain, "-O2 -fno-unroll-loops", GAP_WHY(unroll_gaps, p->path), "unroll_gaps");
}
END_TEST

/* Scalar programs whose -O2 -msimd128 build offloads other nests than
 * plain -O2, each with why (issue 19, round 15, measured by this test:
 * "+" nests only with -msimd128, "-" nests only at -O2; the causes from
 * --offload-report, docs/PERFORMANCE.md "Issue 19 round 15").  Such a
 * program must still differ: once it agrees, the test fails until it
 * leaves the list. */
#define SIMD_SPLIT                                                                                 \
  "a loop at the top of its function is vectorised: its v128 loop and its scalar remainder are " \
  "offloaded as two 1-D maps (one loop at -O2)"
#define SIMD_SHAPE                                                                                  \
  "an inner loop is vectorised inside the nest and the region is refused \"not the shape of a "   \
  "vector loop and its scalar remainder\" (kn_lanes_region.c: j not from 0, a constant count "    \
  "with its alias-check fallback loop, ...)"
#define SIMD_NOT_TAKEN                                                                             \
  "an inner loop is vectorised inside the nest and no region is read: \"vector (SIMD) loop "      \
  "inside another loop: ... not recognised yet\" or \"vector (SIMD) operations in a loop nest\""
#define SIMD_LANES_SUM                                                                             \
  "an integer dot product's k loop is vectorised as sums in lanes (i32, or i8 widened): "         \
  "\"vectorised integer reduction (each lane sums its own iterations): not recognised yet\""
#define SIMD_NARROW "v128 operations on i8/i16 lanes: \"narrow lanes: not recognised yet\""
#define SIMD_REST                                                                                \
  "its v128 loop stays on the CPU and its scalar remainder is not offloaded alone "              \
  "(kernels/kn_recog_rest.c, session 54); until then the remainder's launch of at most 15 "     \
  "iterations counted here as the loop"
#define SIMD_PARTS "a region whose parts store different values (refused)"
#define SIMD_PARTS_AS_MAPS                                                                       \
  "the nest's inner parts offloaded alone as 1-D maps (fills; a remainder alone only when its "   \
  "vector loop is offloaded, since session 56: " SIMD_ROW_REST ")"
#define SIMD_ROW_REST                                                                            \
  "a vector loop inside another loop stays on the CPU and its scalar remainder (a row's last "    \
  "iterations) is not offloaded alone (kernels/kn_recog_rest.c, session 56); until then that "    \
  "remainder's launch, once a row, counted here as the loop"
static const known_gap simd_gaps[] = {
    {"tests/gpu/e2e/pure_calls.c", "+2 map 1-D -> f32 -none: rope_freq is a map at -O2 -msimd128 (vectorised, "
     "not unrolled; at -O2 see unroll_gaps); softmax's division: " SIMD_SPLIT " (exp_map, exp_f64, whose lanes "
     "call expf and exp one by one, swiglu and rope_freq are one region each)"},
    {"tests/bench/gpu/llm.c", "+2 map 1-D -> f32, 3 map 1-D -> i32 -none: " SIMD_SPLIT},
    {"tests/gpu/detect/batch_i8_ptr.c", "+1 matmul i8xi8->i32 -1 matmul i8xi8->i32 batched: the copies' vectorised "
     "k loops re-rolled (ir_reroll_full.c, ir_reroll_copies.c), its 16x8x32 product is taken, one launch per t: "
     "not the batch, whose pointers step by the run-time strides sa and sc (kn_recog_affine.c expand_iv takes "
     "no run-time step of an outer counter where lanes are read as copies); the -O2 product since round 16c"},
    {"tests/gpu/detect/blas_cols.c", "+none -2 map 1-D -> f32: ssyrk_un's beta row `C(0:j,j) *= beta`, a triangle "
                                     "region in the j nest that calls memset, is a region of no nest (its remainder "
                                     "alone: \"trip count unknown\"); the plain build's i loop is a map; " SIMD_ROW_REST},
    {"tests/gpu/detect/jacobi.c", "+1 map 1-D -> f32 -1 map 2-D -> f32: " SIMD_SHAPE " (the constant count N = 256 of a "
                                  "row from 1: V counts bytes up to 2^32, no test E, R entered at byte 4 or 1012; round "
                                  "19 reads rows from j0 of a count n only); " SIMD_PARTS_AS_MAPS},
    {"tests/gpu/detect/matmul_ikj_i32.c", "+none -1 matmul i32 accumulating: " SIMD_NOT_TAKEN " (its j loop "
     "unrolled completely, but clang loads aik again for the last two vectors: no copies, ir_reroll_vec.c)"},
    {"tests/gpu/detect/narrow.c", "+none -1 map 2-D -> i8: " SIMD_SHAPE "; " SIMD_PARTS_AS_MAPS},
    {"tests/gpu/detect/polybench_suite.c", "+none -2 map 1-D -> f64: " SIMD_SHAPE},
    {"tests/gpu/detect/scaled_products.c", "+none -6 map 1-D -> f32: the products agree (round 16); one 1-D map "
                                           "fewer, not analysed; " SIMD_ROW_REST},
    {"tests/gpu/detect/syrk_sub.c", "+none -1 matmul f64 accumulating A scaled start scaled: " SIMD_SHAPE "; " SIMD_PARTS},
    {"tests/gpu/e2e/batch_odd.c", "+1 map 1-D -> i64 -none: " SIMD_NOT_TAKEN "; " SIMD_PARTS_AS_MAPS},
    {"tests/gpu/e2e/blas_ref.c", "+none -3 map 1-D -> f32: its products agree (ssyrk_un's and "
                                 "ssyr2k_un's l-i regions, their test D in i64: kn_lanes_region.c last_wide); "
                                 "ssyrk_un's and ssyr2k_un's beta rows `C(0:j,j) *= beta` are a region of no nest, "
                                 "as in blas_cols.c (the plain build's i loop is a map); sgemv_n's, sgemv_t's and "
                                 "main's loops: " SIMD_SPLIT "; " SIMD_ROW_REST},
    {"tests/gpu/e2e/box3x3.c", "+none -1 map 1-D -> i8, 1 map 2-D -> f32, 1 map 2-D -> i32: " SIMD_SHAPE "; " SIMD_NARROW "; " SIMD_PARTS_AS_MAPS},
    {"tests/gpu/e2e/counter.c", "+1 map 1-D -> f32 -none: " SIMD_SPLIT},
    {"tests/gpu/e2e/dot_f32.c", "+none -1 map 1-D -> f64: " SIMD_REST},
    {"tests/gpu/e2e/map1d.c", "+1 map 1-D -> i64 -2 map 1-D -> f32, 1 map 1-D -> f64, 1 map 1-D -> i32: k_f64_widen, k_i64_select and k_u8_to_f32 (narrow lanes), k_i32_select and k_int_to_f32 (lanes moved between shapes): " SIMD_REST},
    {"tests/gpu/e2e/map2d.c", "+none -1 map 2-D -> f32: " SIMD_NOT_TAKEN " (k_iota's j loop, "
     "vectorised inside the i loop: its lanes `phi + splat(i * cols)` are a 2-D vector counter that "
     "kn_lanes.c reads only in a 1-D nest; normalising them to the remainder's affine `i * cols + j` was "
     "tried and reverted, docs/PERFORMANCE.md \"Issue 19 item 4: vector counters\"); " SIMD_PARTS_AS_MAPS
     " (its remainder).  New with round 13: plain -O2 now offloads k_iota as one 2-D map, as "
     "-fno-unroll-loops does (its j loop re-rolled behind the nest's range test; map2d.c left "
     "unroll_gaps); until then both builds offloaded one 1-D map"},
    {"tests/gpu/e2e/map_align.c", "+none -2 map 1-D -> f32, 1 map 2-D -> f32: " SIMD_PARTS "; " SIMD_NOT_TAKEN "; " SIMD_NARROW "; " SIMD_PARTS_AS_MAPS},
    {"tests/gpu/e2e/matvec.c", "+1 map 1-D -> i32 -none: " SIMD_SPLIT},
    {"tests/gpu/e2e/matvec_heads.c", "+1 map 1-D -> i32 -none: " SIMD_SPLIT},
    {"tests/gpu/e2e/narrow.c", "+none -1 map 1-D -> i16, 1 map 2-D -> i8: " SIMD_SHAPE "; " SIMD_NARROW "; " SIMD_PARTS_AS_MAPS},
    {"tests/gpu/e2e/post_leaky.c", "+none -1 map 1-D -> f32: " SIMD_REST},
    {"tests/gpu/e2e/post_leaky_o3.c", "+none -1 map 1-D -> f32: " SIMD_REST},
    {"tests/gpu/e2e/post_leaky_wasmopt.c", "+none -1 map 1-D -> f32: " SIMD_REST},
    {"tests/gpu/e2e/post_relu.c", "+none -1 map 1-D -> f32: " SIMD_REST},
    {"tests/gpu/e2e/post_relu_o3.c", "+none -1 map 1-D -> f32: " SIMD_REST},
    {"tests/gpu/e2e/post_relu_wasmopt.c", "+none -1 map 1-D -> f32: " SIMD_REST},
    {"tests/gpu/e2e/qlayer_i8.c", "+none -1 map 2-D -> i8, 1 reduce op 0 i64: " SIMD_LANES_SUM "; " SIMD_NOT_TAKEN "; " SIMD_PARTS_AS_MAPS},
    {"tests/gpu/e2e/quant.c", "+1 map 1-D -> i32 -2 reduce op 0 i32: " SIMD_SPLIT "; " SIMD_NARROW " (k_s16's i16 lanes); " SIMD_PARTS_AS_MAPS},
    {"tests/gpu/e2e/quant_tc.c", "+1 map 1-D -> i32 -2 reduce op 0 i32: " SIMD_SPLIT "; " SIMD_NARROW " (k_s16's i16 lanes); " SIMD_PARTS_AS_MAPS},
    {"tests/gpu/e2e/reduce_int.c", "+none -1 reduce op 4 i32, 1 reduce op 8 i64: its i32/i64 sums (i32 terms "
     "widened into i64 lanes too), dot product and i32 max and min in lanes agree since session 55 "
     "(kn_recog_top.c (g)); k_xor_u32's i32 xor kept in i64 lanes and combined through byte shuffles, "
     "k_max_u64's unsigned max as compares and bit selects (no llvm.umax on i64x2): not read as reductions "
     "in lanes; " SIMD_REST},
    {"tests/gpu/e2e/rows.c", "+2 map 1-D -> i32 -none: its four row-table products agree (the skips before V "
                           "a chain: kn_lanes_region.c skip_chain); main's row-table fill `r[i] = block + i * cols`, "
                           "vectorised, is two 1-D maps (its counter read in lanes) where plain -O2 refuses the "
                           "scalar loop (\"uses a loop counter as a value\", \"too little work for a kernel\")"},
    {"tests/gpu/e2e/rows_o3.c", "+2 map 1-D -> i32 -none: its four row-table products agree (the skips before V "
                           "a chain: kn_lanes_region.c skip_chain); main's row-table fill `r[i] = block + i * cols`, "
                           "vectorised, is two 1-D maps (its counter read in lanes) where plain -O2 refuses the "
                           "scalar loop (\"uses a loop counter as a value\", \"too little work for a kernel\")"},
    {"tests/gpu/e2e/seqsum.c", "+none -1 map 1-D -> f64: main's k_scale copy: " SIMD_REST},
    {"tests/gpu/e2e/shapes.c", "+1 map 1-D -> f32, 1 map 1-D -> i32, 1 map 1-D -> i8 -1 map 2-D -> f32, 1 map 2-D -> i8: "
                             "jac agrees since round 19 (a row from j0: kn_lanes_region.c \"j from j0\"); transpose's "
                             "j loop, vectorised inside the i loop, is taken in no nest (not analysed); blur's u8 window: "
                             SIMD_NARROW "; conv1d and clampi at the top: " SIMD_SPLIT "; " SIMD_PARTS_AS_MAPS},
    {"tests/gpu/e2e/simd_counter.c", "+1 map 1-D -> f32, 1 map 1-D -> i32 -none: " SIMD_SPLIT},
    {"tests/gpu/e2e/simd_dsp.c", "+none -1 map 1-D -> i8: " SIMD_NARROW "; " SIMD_REST},
    {"tests/gpu/e2e/simd_dsp_o3.c", "+none -1 map 1-D -> i8: " SIMD_NARROW "; " SIMD_REST},
    {"tests/gpu/e2e/simd_inlined.c", "+1 map 1-D -> f32, 1 map 1-D -> i32 -none: the maps of h = n / 2 + 1 (its count computed beside G, its remainder counting `(n/2 - s) + 1`, h not bounded below 2^31 in the region): " SIMD_SPLIT},
    {"tests/gpu/e2e/simd_transpose.c", "+none -1 map 1-D -> i32: " "the --offload-report reasons agree; not analysed"},
    {"tests/gpu/e2e/simd_transpose_o3.c", "+none -1 map 1-D -> i32: " "as simd_transpose.c (built here at -O2)"},
    {"tests/gpu/e2e/stencil_wh.c", "+none -1 map 1-D -> f32, 1 map 2-D -> f32: k_jacobi agrees since round 19 (a row from "
                                   "j0); k_scale_if's row under the live flag `if (on)`: " SIMD_SHAPE " (its guard G or's "
                                   "`w < 1` with `on == 0`, which no region reads; read so, its proof still failed: not "
                                   "analysed); " SIMD_PARTS_AS_MAPS},
    {"tests/unit/reroll/bypass.c", "+none -1 map 1-D -> f64: " SIMD_NOT_TAKEN " (tri_scale's `j <= i` row, vectorised inside the i loop, is not read as a region)"},
    {"tests/unit/reroll/guards.c", "+none -2 map 1-D -> f32, 1 map 2-D -> i32, 1 reduce op 0 i32: " SIMD_SHAPE "; " SIMD_PARTS_AS_MAPS},
    {"tests/unit/reroll/maps.c", "+none -1 map 1-D -> i32: main's inlined iscale inside its loop over sizes: " SIMD_ROW_REST},
    {"tests/unit/reroll/mixed.c", "+none -1 map 1-D -> i32, 1 map 2-D -> i32: " SIMD_NOT_TAKEN "; " SIMD_PARTS_AS_MAPS},
    {"tests/unit/reroll/strength.c", "+none -1 map 2-D -> f64: main's 2-D fill, its j loop vectorised with an i32x4 vector counter (<0, 1, ..> stepped by 2, f64x2 stores) inside the i loop, which kn_lanes.c reads only in a 1-D nest (no sum)"},
    {"tests/gpu/detect/guarded.c", "+none -1 map 1-D -> f32: " SIMD_ROW_REST},
    {"tests/gpu/e2e/polybench_mm.c", "+none -1 map 1-D -> f64: " SIMD_ROW_REST},
    {"tests/gpu/e2e/polybench_mm_o3.c", "+none -1 map 1-D -> f64: " SIMD_ROW_REST},
    {"tests/unit/reroll/matmul.c", "+none -1 map 1-D -> f32: " SIMD_ROW_REST},
    {"tests/unit/reroll/ordered.c", "+none -1 map 1-D -> f32, 2 map 1-D -> i32: " SIMD_ROW_REST},
    {"tests/unit/reroll/products.c", "+none -1 reduce op 0 i32: " SIMD_ROW_REST},
    {"tests/unit/reroll/sums.c", "+none -2 reduce op 0 i32: " SIMD_ROW_REST},
};

/* clang's loop vectoriser (-O2 -msimd128: a v128 loop, a scalar remainder,
 * maybe a scalar prologue) must not change what is offloaded from a
 * program written as scalar C: the same kinds of nests as plain -O2, as
 * many of each.  Programs written with the intrinsics are left out (they
 * have no scalar build). */
START_TEST(simd_keeps_offload) {
  const program *p = &programs[_i];
  if (p->simd) {
    printf("offload_modes: %s: written with <wasm_simd128.h>, no scalar build\n", p->path);
    return;
  }
  if (!have_clang()) {
    printf("offload_modes: %s skipped: clang-19 missing\n", p->path);
    return;
  }
  char dir[] = "/tmp/offload-simd-XXXXXX", wasm[512], cmd[2048];
  ck_assert_ptr_nonnull(mkdtemp(dir));
  drv_options o;
  bool reassociate = stage_options(p, &o);
  static nest_set vector, scalar;
  nest_set *sets[2] = {&vector, &scalar};
  for (int v = 0; v < 2; v++) {
    if (v == 1 && load_o2(_i, &scalar)) break; /* unrolling_keeps_offload's -O2 build */
    snprintf(wasm, sizeof wasm, "%s/m%d.wasm", dir, v);
    snprintf(cmd, sizeof cmd, p->from->build, p->path, wasm, v ? "" : "-msimd128");
    ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
    offloadable(wasm, &o, reassociate, sets[v]);
    qsort(sets[v]->nests, (size_t)sets[v]->n, sizeof *sets[v]->nests, by_what);
  }
  expect_same(p, dir, &vector, "-O2 -msimd128", &scalar, "-O2", GAP_WHY(simd_gaps, p->path), "simd_gaps");
}
END_TEST

static Suite *offload_modes_suite(void) {
  Suite *s = suite_create("offload_modes");
  TCase *tc = tcase_create("corpora");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, bounds_pass_keeps_offload, 0, nprograms);
  tcase_add_loop_test(tc, unrolling_keeps_offload, 0, nprograms);
  suite_add_tcase(s, tc);
  /* after "corpora", whose -O2 builds it reuses (CK_RUN_CASE=simd: alone) */
  TCase *simd = tcase_create("simd");
  tcase_set_timeout(simd, 600);
  tcase_add_loop_test(simd, simd_keeps_offload, 0, nprograms);
  suite_add_tcase(s, simd);
  return s;
}

int main(void) {
  find_programs();
  if (nprograms == 0) {
    printf("offload_modes: skipped: no corpus found (run from the repository root)\n");
    return EXIT_SUCCESS;
  }
  snprintf(cache_dir, sizeof cache_dir, "/tmp/offload-modes-o2-XXXXXX");
  if (!mkdtemp(cache_dir)) cache_dir[0] = '\0';
  SRunner *sr = srunner_create(offload_modes_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  if (cache_dir[0]) {
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf %s", cache_dir);
    if (system(cmd) != 0) failed++;
  }
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
