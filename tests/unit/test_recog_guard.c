/* test_recog_guard.c: Check suite "recog_guard": guard exits (C's assert
 * on an index: a call to __assert_fail, which never returns) read as
 * checks the host makes before a launch (kernels/kn_recog_guard.c,
 * compiler/off/off_guard.c).  Recognised from tests/gpu/detect/asserts.c
 * at plain -O2 and -fno-unroll-loops; then a program run with the stand-in
 * driver (tests/fake_cuda): launched where no guard can fire, on the CPU
 * with the assert's own abort where one would, bound by bound. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/IRReader.h>

#include "driver.h"
#include "ir_pass.h"
#include "kn_recog.h"
#include "unit_ir.h"
#include "unit_sh.h"

typedef struct {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  tw_arena arena;
  kn_recog_result res;
} fixture;

/* tests/gpu/detect/asserts.c's function `export`, as the offload stage
 * sees it (optimised, before the offload pass), recognised. */
static void recognise(fixture *f, const char *export, const char *cflags) {
  memset(f, 0, sizeof *f);
  char dir[] = "/tmp/recog-guard-XXXXXX", cmd[1024], out[4096];
  ck_assert(mkdtemp(dir) != NULL);
  snprintf(cmd, sizeof cmd,
           "clang-19 --target=wasm32-wasi --sysroot=/usr -O2 %s -nostdlib -Wl,--no-entry -Wl,--export-all "
           "-Wl,--allow-undefined tests/gpu/detect/asserts.c -o %s/m.wasm",
           cflags, dir);
  ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "%s: %s", cmd, out);
  snprintf(cmd, sizeof cmd, "%s/m.wasm", dir);
  uint8_t *bytes;
  size_t size;
  tw_diag d = {.offset = TW_DIAG_NO_OFFSET};
  ck_assert_int_eq(drv_read_input(cmd, &bytes, &size, &d), DRV_OK);
  drv_options o;
  drv_options_default(&o);
  o.stop_before_offload = true;
  char *ir = NULL;
  ck_assert_msg(drv_emit_llvm(bytes, size, cmd, &o, &ir, &d) == DRV_OK, "%s", d.msg);
  free(bytes);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  unit_sh(cmd, out, sizeof out);
  f->ctx = LLVMContextCreate();
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, strlen(ir), export);
  free(ir);
  char *msg = NULL;
  if (LLVMParseIRInContext(f->ctx, buf, &f->mod, &msg)) ck_abort_msg("bad IR: %s", msg);
  ck_assert(kn_recognise(unit_ir_exported(f->mod, export), &f->res, &f->arena));
}

static void release(fixture *f) {
  tw_arena_free(&f->arena);
  LLVMDisposeModule(f->mod);
  LLVMContextDispose(f->ctx);
}

/* The recognised nest of f that is no bounds-checked copy. */
static const kn_recog_nest *fast_nest(const fixture *f) {
  for (int i = 0; i < f->res.nnests; i++) {
    const kn_recog_nest *n = &f->res.nests[i];
    if (!ir_loop_checked(n->cfg, n->nest) && n->ok) return n;
  }
  for (int i = 0; i < f->res.nnests; i++) fprintf(stderr, "  nest %d: %s\n", i, f->res.nests[i].reason);
  ck_abort_msg("no nest recognised");
  return NULL;
}

static const char *flags(int i) { return i ? "-fno-unroll-loops" : ""; }

/* `assert(i * n + k < len && k * n + j < len)` in the k loop of an
 * unsigned product: two guards firing at `index >=u len`, len an
 * argument, the index moving with i and k, then k and j; the product's
 * one exit the nest's own. */
START_TEST(product_with_asserts) {
  fixture f;
  recognise(&f, "mm_assert", flags(_i));
  const kn_recog_nest *n = fast_nest(&f);
  ck_assert_int_eq(n->desc.kind, KN_MATMUL);
  ck_assert_int_eq(n->nexits, 1);
  ck_assert_int_eq(n->nguards, 2);
  int moves[2] = {0, 0};
  for (int g = 0; g < 2; g++) {
    const kn_guard *x = &n->guards[g];
    ck_assert_int_eq(x->fire, KN_CMP_UGE);
    ck_assert(LLVMIsAArgument(x->bound));
    ck_assert_int_eq(x->bits, 32);
    ck_assert_int_eq(x->ndims, 3);
    for (int t = 0; t < x->nterms; t++)
      if (x->dim[t] >= 0) moves[g] |= 1 << x->dim[t];
  }
  /* one guard reads (i, k), the other (k, j) */
  ck_assert_msg((moves[0] == 5 && moves[1] == 6) || (moves[0] == 6 && moves[1] == 5), "%d %d", moves[0],
                moves[1]);
  release(&f);
}
END_TEST

/* `assert(i < x->len && i < y->len)` in a map: x->len loaded before the
 * loop (clang's `i == smax(len, 0)`), y->len reloaded on each iteration
 * (the store to y->data may change it): a field whose bytes the runtime
 * checks against the output, as for a layout's fields. */
START_TEST(map_with_field_asserts) {
  fixture f;
  recognise(&f, "scale_vec", flags(_i));
  const kn_recog_nest *n = fast_nest(&f);
  ck_assert_int_eq(n->desc.kind, KN_MAP);
  ck_assert_int_eq(n->nexits, 1);
  ck_assert_int_eq(n->nguards, 2);
  bool field = false;
  for (int g = 0; g < 2; g++) field |= LLVMIsALoadInst(n->guards[g].bound) && n->guards[g].fire == KN_CMP_SGE;
  ck_assert(field);
  ck_assert(n->check_overlap);
  release(&f);
}
END_TEST

/* A product through get/set accessors asserting each index against its
 * matrix's fields (`r < m->rows`, `c < m->cols`), at -fno-unroll-loops:
 * LLVM hoists the k loop's `k < b->rows` out of it as `a->cols - 1 <u
 * smax(b->rows, 0)`, a guard of host values alone; the others compare
 * counters with fields.  (At plain -O2 the re-rolled k loop's bypass
 * keeps it off: "inner loop runs only under a condition".) */
START_TEST(accessor_product) {
  fixture f;
  recognise(&f, "mm_get_set", "-fno-unroll-loops");
  const kn_recog_nest *n = fast_nest(&f);
  ck_assert_int_eq(n->desc.kind, KN_MATMUL);
  ck_assert_int_eq(n->nexits, 1);
  ck_assert_int_ge(n->nguards, 3);
  bool invariant = false, field = false;
  for (int g = 0; g < n->nguards; g++) {
    const kn_guard *x = &n->guards[g];
    bool moves = false;
    for (int t = 0; t < x->nterms; t++) moves |= x->dim[t] >= 0;
    invariant |= !moves;
    field |= moves && LLVMIsALoadInst(x->bound);
  }
  ck_assert(invariant && field);
  ck_assert(n->check_overlap);
  release(&f);
}
END_TEST

/* No guard: an assert on an element's value, and one LLVM turned into a
 * test of the whole row before the inner loop (smax of the row's start).
 * The nest with the assert is refused; what may be taken is a loop the
 * assert is not in: mv_assert's row sum after LLVM's row test, an exact
 * in-order float sum of its own (the seqsum path), with no guard. */
START_TEST(asserts_that_are_no_guards) {
  static const struct {
    const char *func, *reason;
  } cases[] = {
      {"neg_assert_value", "a guard exit (a call that never returns) under a condition that is no compare"},
      {"mv_assert", "a guard exit (a call that never returns) on a value that is no affine index"},
  };
  fixture f;
  recognise(&f, cases[_i % 2].func, flags(_i / 2));
  bool seen = false;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    ck_assert_msg(!n->ok || (n->desc.kind == KN_REDUCE && n->nguards == 0),
                  "%s: nest %d recognised", cases[_i % 2].func, i);
    seen |= !n->ok && n->reason && strcmp(n->reason, cases[_i % 2].reason) == 0;
  }
  ck_assert_msg(seen, "%s: no nest refused for: %s", cases[_i % 2].func, cases[_i % 2].reason);
  release(&f);
}
END_TEST

/* The program: an unsigned product asserted against len, a map asserted
 * against two struct fields (signed) and a product through get/set
 * accessors asserting each index against its matrix's fields, each
 * called with its bound as argv says; built with -fno-unroll-loops (at
 * plain -O2 the accessors' product is not recognised yet). */
static const char *program =
    "#include <assert.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
    "__attribute__((noinline)) void mm(const float *a, const float *b, float *c, unsigned n, unsigned len) {\n"
    "  for (unsigned i = 0; i < n; i++) for (unsigned j = 0; j < n; j++) { float s = 0;\n"
    "    for (unsigned k = 0; k < n; k++) { assert(i * n + k < len && k * n + j < len);\n"
    "      s += a[i * n + k] * b[k * n + j]; }\n"
    "    c[i * n + j] = s; } }\n"
    "typedef struct { int len; float *data; } vec;\n"
    "__attribute__((noinline)) void scale(const vec *x, vec *y, int n) {\n"
    "  for (int i = 0; i < n; i++) { assert(i < x->len && i < y->len); y->data[i] = 2.0f * x->data[i]; } }\n"
    "typedef struct { int rows, cols; float *v; } mat;\n"
    "static float get(const mat *m, int r, int c) {\n"
    "  assert(r >= 0 && r < m->rows && c >= 0 && c < m->cols); return m->v[r * m->cols + c]; }\n"
    "static void set(mat *m, int r, int c, float x) { assert(r < m->rows && c < m->cols); m->v[r * m->cols + c] = x; }\n"
    "__attribute__((noinline)) void mmg(const mat *a, const mat *b, mat *c) {\n"
    "  for (int i = 0; i < a->rows; i++) for (int j = 0; j < b->cols; j++) { float s = 0;\n"
    "    for (int k = 0; k < a->cols; k++) s += get(a, i, k) * get(b, k, j);\n"
    "    set(c, i, j, s); } }\n"
    "int main(int argc, char **argv) {\n"
    "  unsigned n = 40; int what = atoi(argv[1]), len = atoi(argv[2]);\n"
    "  float *a = calloc(n * n, 4), *b = calloc(n * n, 4), *c = calloc(n * n, 4);\n"
    "  for (unsigned i = 0; i < n * n; i++) a[i] = (float)(i % 7), b[i] = (float)(i % 5);\n"
    "  if (what == 0) mm(a, b, c, n, (unsigned)len);\n"
    "  else if (what == 1) { vec x = {len, a}, y = {(int)(n * n), c}; scale(&x, &y, (int)(n * n)); }\n"
    "  else { mat A = {(int)n, (int)n, a}, B = {len, (int)n, b}, C = {(int)n, (int)n, c}; mmg(&A, &B, &C); }\n"
    "  double t = 0; for (unsigned i = 0; i < n * n; i++) t += c[i] * (double)(i % 3);\n"
    "  printf(\"%.1f\\n\", t); return 0; }\n";

static char tmpdir[64];

static void build(void) {
  char path[128], cmd[2048], out[8192];
  strcpy(tmpdir, "/tmp/twasm-guardXXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
  snprintf(path, sizeof path, "%s/g.c", tmpdir);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(program, f);
  fclose(f);
  snprintf(cmd, sizeof cmd,
           "clang-19 --target=wasm32-wasi --sysroot=/usr -O2 -fno-unroll-loops -c %s -o %s/g.o && "
           "clang-19 --target=wasm32-wasi --sysroot=/usr %s/g.o -o %s/g.wasm && "
           "mkdir %s/off %s/on && %s --no-offload %s/g.wasm -o %s/off/g && %s --offload-report %s/g.wasm -o %s/on/g",
           path, tmpdir, tmpdir, tmpdir, tmpdir, tmpdir, unit_twasmc(), tmpdir, tmpdir, unit_twasmc(), tmpdir, tmpdir);
  ck_assert_msg(unit_sh(cmd, out, sizeof out) == 0, "%s: %s", cmd, out);
  ck_assert_msg(strstr(out, "mm: offloaded as matmul") && strstr(out, "scale: offloaded as map") &&
                    strstr(out, "mmg: offloaded as matmul"),
                "%s", out);
}

static void teardown(void) {
  char cmd[128], out[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
  unit_sh(cmd, out, sizeof out);
}

/* Each bound at the box's edge (every index below it: launched) and one
 * short (the last index reaches it: the CPU loop, which aborts with
 * __assert_fail's message and status 134 as the build without offload
 * does). */
START_TEST(guards_checked_before_launch) {
  const char *dir = getenv("FAKE_CUDA_DIR");
  if (!dir) {
    printf("recog_guard: skipped the fake driver's launches: FAKE_CUDA_DIR not set (run through make unit)\n");
    return;
  }
  static const struct {
    const char *args, *kind;
    bool launch;
  } cases[] = {
      {"0 1600", "(matmul): gpu: ", true}, {"0 1599", "(matmul): gpu: ", false}, {"0 4000", "(matmul): gpu: ", true},
      {"1 1600", "(map): gpu: ", true},    {"1 1599", "(map): gpu: ", false},    {"1 -5", "(map): gpu: ", false},
      {"2 40", "(matmul): gpu: ", true},   {"2 39", "(matmul): gpu: ", false},   {"2 41", "(matmul): gpu: ", true},
  };
  build();
  char cmd[1024], want[4096], got[4096], trace[32768];
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    snprintf(cmd, sizeof cmd, "env -u TWASM_TRACE %s/off/g %s 2>&1 | grep -v '^ '", tmpdir, cases[i].args);
    unit_sh(cmd, want, sizeof want);
    snprintf(cmd, sizeof cmd, "env -u TWASM_TRACE LD_LIBRARY_PATH=%s FAKE_CUDA=any TWASM_DEVICE=gpu %s/on/g %s 2>&1 | grep -v '^ '",
             dir, tmpdir, cases[i].args);
    unit_sh(cmd, got, sizeof got);
    snprintf(cmd, sizeof cmd, "{ LD_LIBRARY_PATH=%s FAKE_CUDA=any TWASM_DEVICE=gpu TWASM_TRACE=1 %s/on/g %s 2>&1; echo status $?; }",
             dir, tmpdir, cases[i].args);
    unit_sh(cmd, trace, sizeof trace);
    ck_assert_msg((strstr(trace, cases[i].kind) != NULL) == cases[i].launch, "%s: %s", cases[i].args, trace);
    if (cases[i].launch) continue; /* the stand-in's kernels do nothing */
    ck_assert_msg(strstr(trace, "status 134") && strstr(want, "Assertion failed"), "%s: %s", cases[i].args, trace);
    ck_assert_msg(!strcmp(want, got), "%s: %s != %s", cases[i].args, got, want);
  }
  teardown();
}
END_TEST

static Suite *guard_suite(void) {
  Suite *s = suite_create("recog_guard");
  TCase *tc = tcase_create("recognise");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, product_with_asserts, 0, 2);
  tcase_add_loop_test(tc, map_with_field_asserts, 0, 2);
  tcase_add_loop_test(tc, asserts_that_are_no_guards, 0, 4);
  tcase_add_test(tc, accessor_product);
  suite_add_tcase(s, tc);
  TCase *run = tcase_create("run");
  tcase_set_timeout(run, 300);
  tcase_add_test(run, guards_checked_before_launch);
  suite_add_tcase(s, run);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(guard_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
