/* test_recog.c: Check suite "recog": C loops from tests/gpu/detect compiled
 * to Wasm (clang-19), then to host IR (twasmc --emit-llvm), recognised. */
#include <check.h>
#include <math.h>
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

#ifndef DETECT_DIR
#define DETECT_DIR "tests/gpu/detect"
#endif

typedef struct {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  tw_arena arena;
  kn_recog_result res;
  bool skipped;
} fixture;

static bool have_tools(void) {
  return system("clang-19 --version >/dev/null 2>&1") == 0 && access(unit_twasmc(), X_OK) == 0;
}

static void recognise_with(fixture *f, const char *file, const char *export, bool reassociate,
                           const char *cflags) {
  memset(f, 0, sizeof *f);
  if (!have_tools()) {
    printf("recog: skipping %s: clang-19 or %s missing\n", file, unit_twasmc());
    f->skipped = true;
    return;
  }
  char dir[] = "/tmp/recog-test-XXXXXX", cmd[1024];
  ck_assert(mkdtemp(dir) != NULL);
  snprintf(cmd, sizeof cmd,
           "clang-19 --target=wasm32-wasi --sysroot=/usr -O2 %s -nostdlib -Wl,--no-entry -Wl,--export-all -Wl,--allow-undefined "
           "%s/%s -o %s/m.wasm",
           cflags, DETECT_DIR, file, dir);
  ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
  /* The IR the offload stage sees: optimised, loops not yet vectorised. */
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
  ck_assert(system(cmd) == 0);
  f->ctx = LLVMContextCreate();
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, strlen(ir), file);
  free(ir);
  char *msg = NULL;
  if (LLVMParseIRInContext(f->ctx, buf, &f->mod, &msg)) ck_abort_msg("bad IR: %s", msg);
  kn_recog_opts opts = {.fp_reassociate = reassociate};
  ck_assert(kn_recognise_opts(unit_ir_exported(f->mod, export), &opts, &f->res, &f->arena));
}

static void recognise(fixture *f, const char *file, const char *export, bool reassociate) {
  recognise_with(f, file, export, reassociate, "");
}

static void release(fixture *f) {
  if (f->skipped) return;
  tw_arena_free(&f->arena);
  LLVMDisposeModule(f->mod);
  LLVMContextDispose(f->ctx);
}

static void dump(const fixture *f) {
  for (int i = 0; i < f->res.nnests; i++)
    fprintf(stderr, "  nest %d: %s\n", i, f->res.nests[i].ok ? "ok" : f->res.nests[i].reason);
}

/* The one recognised nest of the given kind. */
static const kn_recog_nest *found(const fixture *f, kn_kind kind) {
  for (int i = 0; i < f->res.nnests; i++)
    if (f->res.nests[i].ok && f->res.nests[i].desc.kind == kind) return &f->res.nests[i];
  dump(f);
  ck_abort_msg("no nest of kind %d", kind);
  return NULL;
}

/* No nest recognised, and one was rejected for `reason`. */
static void rejected(const fixture *f, const char *reason) {
  bool seen = false;
  for (int i = 0; i < f->res.nnests; i++) {
    if (f->res.nests[i].ok) dump(f);
    ck_assert_msg(!f->res.nests[i].ok, "nest %d recognised", i);
    seen |= strstr(f->res.nests[i].reason, reason) != NULL;
  }
  if (!seen) dump(f);
  ck_assert_msg(seen, "no nest rejected for: %s", reason);
}

/* One nest rejected for `reason` (a product's outer loop), and the one
 * recognised nest the inner loop's float sum, now a sequential reduce of
 * its own (one row's sum, run alone where its data lies on the GPU).  The
 * bounds pass's checked copy of that loop is left out, as the offload
 * stage leaves it (never offloaded). */
static void rejected_beside_sum(const fixture *f, const char *reason) {
  bool seen = false;
  int sums = 0;
  for (int i = 0; i < f->res.nnests; i++) {
    const kn_recog_nest *n = &f->res.nests[i];
    if (n->ok && ir_checked_copy(n->cfg->blocks[n->nest->header].bb)) continue;
    if (n->ok) {
      ck_assert_msg(n->desc.kind == KN_REDUCE && n->desc.reduce.sequential, "nest %d recognised", i);
      sums++;
    } else {
      seen |= strstr(n->reason, reason) != NULL;
    }
  }
  if (!seen || sums != 1) dump(f);
  ck_assert_msg(seen, "no nest rejected for: %s", reason);
  ck_assert_int_eq(sums, 1);
}

static const kn_expr *node(const kn_recog_nest *n, int32_t i) {
  ck_assert_int_ge(i, 0);
  ck_assert_uint_lt((unsigned)i, n->desc.nnodes);
  return &n->desc.nodes[i];
}

static int count_op(const kn_recog_nest *n, kn_op op) {
  int k = 0;
  for (unsigned i = 0; i < n->desc.nnodes; i++) k += n->desc.nodes[i].op == op;
  return k;
}

/* ---- Maps ---------------------------------------------------------------- */

START_TEST(saxpy) {
  fixture f;
  recognise(&f, "saxpy.c", "saxpy", false);
  if (f.skipped) return;
  const kn_recog_nest *n = found(&f, KN_MAP);
  const kn_map *m = &n->desc.map;
  ck_assert_uint_eq(m->ndims, 1);
  ck_assert_int_eq(m->out_type, KN_F32);
  ck_assert_int_eq(m->out_addr.iv_coeff[0], 4);
  ck_assert(m->trip[0].is_param);
  ck_assert_int_eq(n->binds[m->trip[0].value].kind, KN_BIND_TRIP);
  ck_assert_int_eq(node(n, m->value)->op, KN_E_ADD);
  ck_assert_int_eq(count_op(n, KN_E_LOAD), 2);
  ck_assert_int_eq(count_op(n, KN_E_MUL), 1);
  ck_assert(n->check_overlap);
  ck_assert_int_eq(n->nranges, 3);
  release(&f);
}
END_TEST

/* A map calling a pure function of its module (kn_recog_call.c): one
 * KN_E_CALL node of f32 whose argument is the loaded (or computed)
 * value, the callee recorded once, its table of 32 doubles a read range
 * of its own (no dims, 256 bytes or more) checked against the output. */
static const kn_recog_nest *pure_call_map(fixture *f, const char *export) {
  recognise(f, "pure_call.c", export, false);
  if (f->skipped) return NULL;
  const kn_recog_nest *n = found(f, KN_MAP);
  ck_assert_int_eq(count_op(n, KN_E_CALL), 1);
  ck_assert_int_eq(n->ncallees, 1);
  ck_assert_int_ge(ir_wasm_index(n->callees[0]), 0);
  int consts = 0;
  for (int i = 0; i < n->nranges; i++)
    if (n->ranges[i].ndims == 0 && !n->ranges[i].is_write) {
      consts++;
      ck_assert_uint_ge(n->ranges[i].size, 256);
      ck_assert_int_ge(n->ranges[i].addr.c0, 0);
    }
  ck_assert_int_eq(consts, 1);
  ck_assert(n->check_overlap);
  return n;
}

START_TEST(pure_call) {
  fixture f;
  const kn_recog_nest *n = pure_call_map(&f, "pure_call");
  if (!n) return;
  const kn_expr *v = node(n, n->desc.map.value);
  ck_assert_int_eq(v->op, KN_E_CALL);
  ck_assert_int_eq(v->type, KN_F32);
  ck_assert_int_eq(node(n, v->a)->op, KN_E_LOAD);
  ck_assert_int_lt(v->b, 0);
  release(&f);
}
END_TEST

START_TEST(pure_call_scaled) {
  fixture f;
  const kn_recog_nest *n = pure_call_map(&f, "pure_call_scaled");
  if (!n) return;
  const kn_expr *v = node(n, n->desc.map.value);
  ck_assert_int_eq(v->op, KN_E_MUL);
  const kn_expr *call = node(n, node(n, v->a)->op == KN_E_CALL ? v->a : v->b);
  ck_assert_int_eq(call->op, KN_E_CALL);
  ck_assert_int_eq(node(n, call->a)->op, KN_E_SUB);
  release(&f);
}
END_TEST

/* A map calling a function of pure_call.c that is not pure: refused. */
static void call_refused(const char *export, const char *reason) {
  fixture f;
  recognise(&f, "pure_call.c", export, false);
  if (f.skipped) return;
  rejected(&f, reason);
  release(&f);
}

START_TEST(neg_call_stores) { call_refused("count_call", "stores"); }
END_TEST

START_TEST(neg_call_unbounded) {
  call_refused("wild_call", "calls a function that reads memory at an unbounded address");
}
END_TEST

START_TEST(jacobi) {
  fixture f;
  recognise(&f, "jacobi.c", "jacobi", false);
  if (f.skipped) return;
  const kn_recog_nest *n = found(&f, KN_MAP);
  const kn_map *m = &n->desc.map;
  ck_assert_uint_eq(m->ndims, 2);
  ck_assert(!m->trip[0].is_param && !m->trip[1].is_param);
  ck_assert_int_eq(m->trip[0].value, 254);
  ck_assert_int_eq(m->trip[1].value, 254);
  ck_assert_int_eq(m->out_addr.iv_coeff[0], 1024);
  ck_assert_int_eq(m->out_addr.iv_coeff[1], 4);
  ck_assert_int_eq(count_op(n, KN_E_LOAD), 5);
  /* Every load is at a constant offset from its neighbours. */
  for (unsigned i = 0; i < n->desc.nnodes; i++)
    if (n->desc.nodes[i].op == KN_E_LOAD) {
      ck_assert_int_eq(n->desc.nodes[i].load.addr.iv_coeff[0], 1024);
      ck_assert_int_eq(n->desc.nodes[i].load.addr.iv_coeff[1], 4);
    }
  ck_assert(n->check_overlap);
  release(&f);
}
END_TEST

/* ---- Reductions ---------------------------------------------------------- */

static void check_reduce(const char *file, const char *export, kn_red_op op, kn_type type) {
  fixture f;
  recognise(&f, file, export, false);
  if (f.skipped) return;
  const kn_recog_nest *n = found(&f, KN_REDUCE);
  const kn_reduce *r = &n->desc.reduce;
  ck_assert_int_eq(r->op, op);
  ck_assert_int_eq(r->type, type);
  ck_assert(r->trip.is_param);
  ck_assert(n->result != NULL);
  ck_assert_int_eq(n->binds[r->init_param].kind, KN_BIND_VALUE);
  release(&f);
}

START_TEST(dot_i32) { check_reduce("dot_i32.c", "dot_i32", KN_RED_ADD, KN_I32); }
END_TEST

START_TEST(dot_i64) { check_reduce("dot_i64.c", "dot_i64", KN_RED_ADD, KN_I64); }
END_TEST

START_TEST(max_i32) { check_reduce("max_i32.c", "max_i32", KN_RED_SMAX, KN_I32); }
END_TEST

/* Unrolled by four at -O2: each x[k] loaded once for two copies, the last
 * copy's product written x[i+3] * x[i+4] where the others read the higher
 * address first (copies numbered by their lowest load, compared up to a
 * commuted operation). */
START_TEST(lag_i64) { check_reduce("lag_i64.c", "lag_i64", KN_RED_ADD, KN_I64); }
END_TEST

/* Without --fp-reassociate a float sum in program order is a sequential
 * reduce (one GPU thread adds in that order, ptx_seqsum.c); with it, the
 * parallel tree, order unspecified. */
START_TEST(dot_f32) {
  fixture f;
  recognise(&f, "dot_f32.c", "dot_f32", false);
  if (f.skipped) return;
  const kn_recog_nest *n = found(&f, KN_REDUCE);
  ck_assert_int_eq(n->desc.reduce.type, KN_F32);
  ck_assert(n->desc.reduce.sequential && !n->desc.reduce.reassociate);
  ck_assert_int_eq(node(n, n->desc.reduce.value)->op, KN_E_MUL);
  release(&f);
  recognise(&f, "dot_f32.c", "dot_f32", true);
  n = found(&f, KN_REDUCE);
  ck_assert_int_eq(n->desc.reduce.type, KN_F32);
  ck_assert(n->desc.reduce.reassociate && !n->desc.reduce.sequential);
  release(&f);
}
END_TEST

/* The sequential sum of one export of seq_sums.c: its type, the op of
 * its term's root and how many loads the term makes. */
static const kn_recog_nest *check_sequential(fixture *f, const char *export, kn_type type, kn_op root,
                                             int loads) {
  recognise(f, "seq_sums.c", export, false);
  if (f->skipped) return NULL;
  const kn_recog_nest *n = found(f, KN_REDUCE);
  const kn_reduce *r = &n->desc.reduce;
  ck_assert(r->sequential && !r->reassociate);
  ck_assert_int_eq(r->op, KN_RED_ADD);
  ck_assert_int_eq(r->type, type);
  ck_assert_int_eq(node(n, r->value)->op, root);
  ck_assert_int_eq(count_op(n, KN_E_LOAD), loads);
  ck_assert_int_eq(n->binds[r->init_param].kind, KN_BIND_VALUE);
  ck_assert(n->result != NULL);
  return n;
}

/* rmsnorm's sum of squares: x[i] loaded once, squared, added in order. */
START_TEST(seq_sum_squares) {
  fixture f;
  if (check_sequential(&f, "sum_squares", KN_F32, KN_E_MUL, 1)) release(&f);
}
END_TEST

START_TEST(seq_sum_f64) {
  fixture f;
  if (check_sequential(&f, "sum_f64", KN_F64, KN_E_LOAD, 1)) release(&f);
}
END_TEST

/* s += a[i] + b[i]: one term a sum itself, added to s as a whole (the
 * integer reading would take a[i] and b[i] as two terms). */
START_TEST(seq_sum_of_pairs) {
  fixture f;
  if (check_sequential(&f, "sum_pairs", KN_F32, KN_E_ADD, 2)) release(&f);
}
END_TEST

/* Two adds a step, x[2i] then x[2i+1]: two copies in order, re-rolled
 * into one term over consecutive elements. */
START_TEST(seq_sum_unrolled) {
  fixture f;
  const kn_recog_nest *n = check_sequential(&f, "sum_unrolled", KN_F32, KN_E_LOAD, 1);
  if (!n) return;
  ck_assert_int_eq(node(n, n->desc.reduce.value)->load.addr.iv_coeff[0], 4);
  release(&f);
}
END_TEST

/* s += s * x[i]: the running sum in a term too, no sum at all. */
START_TEST(seq_sum_twice_refused) {
  fixture f;
  recognise(&f, "seq_sums.c", "neg_sum_twice", false);
  if (f.skipped) return;
  rejected(&f, "loop-carried dependence");
  release(&f);
}
END_TEST

/* ---- Matmuls ------------------------------------------------------------- */

static const kn_matmul *check_matmul(fixture *f, const char *file, kn_mm_type type, bool accumulate) {
  recognise(f, file, "matmul", false);
  if (f->skipped) return NULL;
  const kn_matmul *mm = &found(f, KN_MATMUL)->desc.matmul;
  ck_assert_int_eq(mm->type, type);
  ck_assert_int_eq(mm->accumulate, accumulate);
  return mm;
}

static void check_const_layout(const kn_layout *l, int64_t rows, int64_t cols) {
  ck_assert(!l->row_stride.is_param && !l->col_stride.is_param);
  ck_assert_int_eq(l->row_stride.value, rows);
  ck_assert_int_eq(l->col_stride.value, cols);
  ck_assert(l->offset.is_param);
}

static void check_sizes(const kn_matmul *mm, int64_t m, int64_t n, int64_t k) {
  ck_assert(!mm->m.is_param && !mm->n.is_param && !mm->k.is_param);
  ck_assert_int_eq(mm->m.value, m);
  ck_assert_int_eq(mm->n.value, n);
  ck_assert_int_eq(mm->k.value, k);
}

START_TEST(matmul_ijk_f32) {
  fixture f;
  const kn_matmul *mm = check_matmul(&f, "matmul_ijk_f32.c", KN_MM_F32, false);
  if (!mm) return;
  check_sizes(mm, 64, 48, 32);
  check_const_layout(&mm->a, 32, 1);
  check_const_layout(&mm->b, 48, 1);
  check_const_layout(&mm->c, 48, 1);
  release(&f);
}
END_TEST

START_TEST(matmul_ikj_f32) {
  fixture f;
  const kn_matmul *mm = check_matmul(&f, "matmul_ikj_f32.c", KN_MM_F32, true);
  if (!mm) return;
  check_sizes(mm, 64, 48, 32);
  check_const_layout(&mm->a, 32, 1);
  check_const_layout(&mm->b, 48, 1);
  check_const_layout(&mm->c, 48, 1);
  release(&f);
}
END_TEST

START_TEST(matmul_ikj_i32) {
  fixture f;
  const kn_matmul *mm = check_matmul(&f, "matmul_ikj_i32.c", KN_MM_I32, true);
  if (!mm) return;
  check_sizes(mm, 32, 32, 32);
  release(&f);
}
END_TEST

START_TEST(matmul_i8) {
  fixture f;
  const kn_matmul *mm = check_matmul(&f, "matmul_i8.c", KN_MM_I8_I32, false);
  if (!mm) return;
  ck_assert(mm->a_signed && mm->b_signed);
  check_sizes(mm, 32, 32, 64);
  check_const_layout(&mm->a, 64, 1);
  check_const_layout(&mm->b, 32, 1);
  release(&f);
}
END_TEST

/* ---- Batches of products ------------------------------------------------ */

/* The batch tests' C sources keep clang from unrolling the 16-trip loops. */
static const kn_matmul *check_batch(fixture *f, const char *file, kn_mm_type type, bool accumulate) {
  recognise_with(f, file, "batch", false, "-fno-unroll-loops");
  if (f->skipped) return NULL;
  const kn_recog_nest *n = found(f, KN_MATMUL);
  const kn_matmul *mm = &n->desc.matmul;
  ck_assert(mm->batched);
  ck_assert_int_eq(mm->type, type);
  ck_assert_int_eq(mm->accumulate, accumulate);
  /* every range has the batch as its outermost dim */
  ck_assert_int_eq(n->nranges, 3);
  for (int r = 0; r < n->nranges; r++) ck_assert_uint_eq(n->ranges[r].ndims, 4);
  return mm;
}

static void check_const_batch(const kn_layout *l, int64_t rows, int64_t cols, int64_t batch) {
  check_const_layout(l, rows, cols);
  ck_assert(!l->batch_stride.is_param);
  ck_assert_int_eq(l->batch_stride.value, batch);
}

/* for t < nb: C[t] = A[t] x B[t], 16x16x16, all at t * 256 elements */
START_TEST(batch16_f32) {
  fixture f;
  const kn_matmul *mm = check_batch(&f, "batch16_f32.c", KN_MM_F32, false);
  if (!mm) return;
  ck_assert(mm->batch.is_param);
  check_sizes(mm, 16, 16, 16);
  check_const_batch(&mm->a, 16, 1, 256);
  check_const_batch(&mm->b, 16, 1, 256);
  check_const_batch(&mm->c, 16, 1, 256);
  release(&f);
}
END_TEST

/* 64 products, pointers advanced by live strides; B shared (stride 0) */
START_TEST(batch_i8_live_strides) {
  fixture f;
  const kn_matmul *mm = check_batch(&f, "batch_i8_ptr.c", KN_MM_I8_I32, false);
  if (!mm) return;
  ck_assert(mm->a_signed && mm->b_signed);
  ck_assert(!mm->batch.is_param);
  ck_assert_int_eq(mm->batch.value, 64);
  check_sizes(mm, 16, 8, 32);
  ck_assert(mm->a.batch_stride.is_param && mm->c.batch_stride.is_param);
  ck_assert(mm->a.batch_stride.value != mm->c.batch_stride.value); /* two params */
  check_const_batch(&mm->b, 8, 1, 0);
  release(&f);
}
END_TEST

/* an ikj i32 product inlined into the batch loop, accumulating */
START_TEST(batch_inlined_ikj) {
  fixture f;
  const kn_matmul *mm = check_batch(&f, "batch_ikj_inline.c", KN_MM_I32, true);
  if (!mm) return;
  check_sizes(mm, 12, 20, 24);
  check_const_batch(&mm->a, 24, 1, 288);
  check_const_batch(&mm->b, 20, 1, 480);
  check_const_batch(&mm->c, 20, 1, 240);
  release(&f);
}
END_TEST

/* The loop around the product is refused for `reason`, and the product
 * inside it is still recognised on its own (one launch per iteration). */
static void batch_refused(const char *export, const char *reason) {
  fixture f;
  recognise_with(&f, "neg_batch.c", export, false, "-fno-unroll-loops");
  if (f.skipped) return;
  bool seen = false;
  for (int i = 0; i < f.res.nnests; i++)
    seen |= !f.res.nests[i].ok && strstr(f.res.nests[i].reason, reason) != NULL;
  if (!seen) dump(&f);
  ck_assert_msg(seen, "no nest rejected for: %s", reason);
  const kn_matmul *inner = &found(&f, KN_MATMUL)->desc.matmul;
  ck_assert(!inner->batched);
  check_sizes(inner, 16, 16, 16);
  release(&f);
}

START_TEST(neg_batch_overlap) { batch_refused("overlap", "products of the batch write the same elements of C"); }
END_TEST

START_TEST(neg_batch_same_c) { batch_refused("same_c_ijk", "products of the batch write the same elements of C"); }
END_TEST

START_TEST(neg_batch_other_store) { batch_refused("other_store", "stores to more than one array"); }
END_TEST

START_TEST(neg_batch_call) { batch_refused("with_call", "calls a function"); }
END_TEST

/* ---- Rejections ---------------------------------------------------------- */

static void check_rejected(const char *file, const char *export, const char *reason) {
  fixture f;
  recognise(&f, file, export, false);
  if (f.skipped) return;
  rejected(&f, reason);
  release(&f);
}

START_TEST(neg_call) { check_rejected("neg_call.c", "apply", "calls a function"); }
END_TEST

START_TEST(neg_two_stores) { check_rejected("neg_two_stores.c", "split", "stores to more than one array"); }
END_TEST

START_TEST(neg_dependence) { check_rejected("neg_dependence.c", "recur", "loop-carried dependence"); }
END_TEST

/* Built without clang's interleaving: in the interleaved loop twasmc
 * proves p, p + 4, p + 8 neighbours (ir_address.c) and LLVM vectorises
 * it, so this final IR would no longer show the dependence. */
START_TEST(neg_ahead) {
  fixture f;
  recognise_with(&f, "neg_ahead.c", "shift", false, "-fno-vectorize -fno-unroll-loops");
  if (f.skipped) return;
  rejected(&f, "loop-carried dependence");
  release(&f);
}
END_TEST

/* A map whose value uses the counter: an IV node, no load. */
static void counter_map(const char *export, int loads) {
  fixture f;
  recognise_with(&f, "counter.c", export, false, "-fno-vectorize -fno-unroll-loops");
  if (f.skipped) return;
  const kn_recog_nest *n = found(&f, KN_MAP);
  ck_assert_uint_eq(n->desc.map.ndims, 1);
  ck_assert_int_eq(count_op(n, KN_E_IV), 1);
  ck_assert_int_eq(count_op(n, KN_E_LOAD), loads);
  ck_assert_int_ge(count_op(n, KN_E_PARAM), 1);
  release(&f);
}

/* LLVM has already turned the dependence into a[0] + i. */
START_TEST(counter_prefix) { counter_map("prefix", 0); }
END_TEST

START_TEST(counter_ramp) { counter_map("ramp", 0); }
END_TEST

/* The 2-D map keeps the hoisted guard: its inner trip param is zero
 * unless `w > 2`. */
START_TEST(guarded_interior) {
  fixture f;
  recognise_with(&f, "guarded.c", "interior", false, "-fno-unroll-loops");
  if (f.skipped) return;
  const kn_recog_nest *n = found(&f, KN_MAP);
  ck_assert_uint_eq(n->desc.map.ndims, 2);
  ck_assert(n->desc.map.trip[1].is_param);
  const kn_bind *b = &n->binds[n->desc.map.trip[1].value];
  ck_assert_int_eq(b->kind, KN_BIND_TRIP);
  ck_assert_ptr_nonnull(b->guard);
  ck_assert_int_eq(count_op(n, KN_E_LOAD), 4);
  release(&f);
}
END_TEST

START_TEST(neg_rows_if) {
  fixture f;
  recognise_with(&f, "guarded.c", "rows_if", false, "-fno-unroll-loops");
  if (f.skipped) return;
  ck_assert_int_ge(f.res.nnests, 2);
  ck_assert(!f.res.nests[0].ok);
  ck_assert_str_eq(f.res.nests[0].reason, "inner loop runs only under a condition");
  ck_assert_uint_eq(found(&f, KN_MAP)->desc.map.ndims, 1);
  release(&f);
}
END_TEST

START_TEST(narrow_blur9) {
  fixture f;
  recognise_with(&f, "narrow.c", "blur9", false, "-fno-unroll-loops");
  if (f.skipped) return;
  const kn_recog_nest *n = found(&f, KN_MAP);
  ck_assert_uint_eq(n->desc.map.ndims, 2);
  ck_assert_int_eq(n->desc.map.out_type, KN_I8);
  ck_assert_int_eq(count_op(n, KN_E_LOAD), 9);
  ck_assert_int_eq(count_op(n, KN_E_UDIV), 1);
  for (unsigned i = 0; i < n->desc.nnodes; i++)
    ck_assert_msg(n->desc.nodes[i].type != KN_I8 && n->desc.nodes[i].type != KN_I16,
                  "node %u is narrow", i);
  release(&f);
}
END_TEST

START_TEST(division_by_constants) {
  fixture f;
  recognise_with(&f, "narrow.c", "quot", false, "-fno-unroll-loops");
  if (f.skipped) return;
  const kn_recog_nest *n = found(&f, KN_MAP);
  ck_assert_int_eq(count_op(n, KN_E_SDIV) + count_op(n, KN_E_UREM), 2);
  release(&f);
}
END_TEST

START_TEST(neg_div_live) { check_rejected("narrow.c", "quot0", "may trap: integer division"); }
END_TEST

/* u8 times s8: A unsigned, B signed, whichever side of the multiply
 * each sits on. */
START_TEST(matmul_mixed_signs) {
  fixture f;
  recognise(&f, "matmul_mixed.c", "qmm", false);
  if (f.skipped) return;
  const kn_matmul *mm = &found(&f, KN_MATMUL)->desc.matmul;
  ck_assert_int_eq(mm->type, KN_MM_I8_I32);
  ck_assert(!mm->a_signed);
  ck_assert(mm->b_signed);
  release(&f);
}
END_TEST

/* acc = bias[j]: accumulate from a start matrix of row stride 0, not C. */
START_TEST(matmul_bias_start) {
  fixture f;
  recognise_with(&f, "dense.c", "dense", false, "-fno-unroll-loops");
  if (f.skipped) return;
  const kn_matmul *mm = &found(&f, KN_MATMUL)->desc.matmul;
  ck_assert_int_eq(mm->type, KN_MM_F32);
  ck_assert(mm->accumulate);
  ck_assert(!mm->start.row_stride.is_param);
  ck_assert_int_eq(mm->start.row_stride.value, 0);
  ck_assert(!mm->start.col_stride.is_param);
  ck_assert_int_eq(mm->start.col_stride.value, 1);
  ck_assert(mm->c.row_stride.is_param);
  release(&f);
}
END_TEST

/* A matrix-vector product is an exact product with n = 1 (the vector a
 * K x 1 B, y a column). */
START_TEST(matvec_as_matmul) {
  fixture f;
  recognise_with(&f, "matvec.c", "matvec", false, "-fno-unroll-loops");
  if (f.skipped) return;
  const kn_matmul *mm = &found(&f, KN_MATMUL)->desc.matmul;
  ck_assert_int_eq(mm->type, KN_MM_F32);
  ck_assert(!mm->n.is_param);
  ck_assert_int_eq(mm->n.value, 1);
  ck_assert(mm->m.is_param && mm->k.is_param);
  ck_assert(!mm->accumulate);
  ck_assert(mm->a.row_stride.is_param);
  ck_assert_int_eq(mm->b.row_stride.value, 1);
  release(&f);
}
END_TEST

/* Three loops whose vector moves with the outer one (attention's scores
 * and weighted sums over every head): a batch of one-column products,
 * the batch strides those of the source (live: the head size; seq for
 * the scores), each product's k in source order.  Before this reading
 * the nest was "not a matmul access pattern". */
START_TEST(matvec_batch) {
  static const char *const funcs[] = {"heads_scores", "heads_mix"};
  fixture f;
  recognise_with(&f, "heads.c", funcs[_i], false, "-fno-unroll-loops");
  if (f.skipped) return;
  const kn_matmul *mm = &found(&f, KN_MATMUL)->desc.matmul;
  ck_assert_int_eq(mm->type, KN_MM_F32);
  ck_assert(mm->batched && mm->batch.is_param);
  ck_assert(!mm->n.is_param);
  ck_assert_int_eq(mm->n.value, 1);
  ck_assert(mm->m.is_param && mm->k.is_param && !mm->accumulate);
  /* A (keys or values) and x (q or att) move with the head */
  ck_assert(mm->a.batch_stride.is_param);
  ck_assert(mm->b.batch_stride.is_param);
  ck_assert(mm->c.batch_stride.is_param);
  if (_i == 0) { /* keys[t * stride + h * size + i]: rows `stride` apart */
    ck_assert(mm->a.row_stride.is_param);
    ck_assert_int_eq(mm->a.col_stride.value, 1);
  } else { /* values[t * stride + h * size + i]: the outputs along i */
    ck_assert_int_eq(mm->a.row_stride.value, 1);
    ck_assert(mm->a.col_stride.is_param);
  }
  ck_assert_int_eq(mm->b.row_stride.value, 1);
  ck_assert_int_eq(mm->c.row_stride.value, 1);
  release(&f);
}
END_TEST

/* Constant strides and counts: batch 8 of 32x1x16, strides 512 and 16. */
START_TEST(matvec_batch_const) {
  fixture f;
  recognise_with(&f, "heads.c", "rows_dot", false, "-fno-unroll-loops");
  if (f.skipped) return;
  const kn_matmul *mm = &found(&f, KN_MATMUL)->desc.matmul;
  ck_assert(mm->batched && !mm->batch.is_param);
  ck_assert_int_eq(mm->batch.value, 8);
  ck_assert_int_eq(mm->m.value, 32);
  ck_assert_int_eq(mm->n.value, 1);
  ck_assert_int_eq(mm->k.value, 16);
  ck_assert_int_eq(mm->a.batch_stride.value, 512);
  ck_assert_int_eq(mm->b.batch_stride.value, 16);
  ck_assert_int_eq(mm->c.batch_stride.value, 32);
  release(&f);
}
END_TEST

START_TEST(neg_div) { check_rejected("neg_div.c", "divide", "may trap: integer division"); }
END_TEST

/* Sums kept in memory, at plain -O2 (k loops unrolled by clang) and with
 * -fno-unroll-loops: products (n, m, k and start as the source says),
 * their overlap with C left to the runtime's check. */
typedef struct {
  const char *func;
  bool one_row, one_col; /* m = 1 (vector-matrix), n = 1 (matrix-vector) */
  bool accumulate, has_start;
} mem_sum_case;

static const mem_sum_case mem_sum_cases[] = {
    {"matmul_zeroed", false, false, false, false},
    {"matvec_acc", false, true, true, false},
    {"matvec_t_bias", false, true, true, true},
    {"vecmat", true, false, true, false},
};

START_TEST(sums_in_memory) {
  const mem_sum_case *c = &mem_sum_cases[_i % 4];
  fixture f;
  recognise_with(&f, "sums_in_memory.c", c->func, false, _i < 4 ? "" : "-fno-unroll-loops");
  if (f.skipped) return;
  const kn_recog_nest *nest = found(&f, KN_MATMUL);
  const kn_matmul *mm = &nest->desc.matmul;
  ck_assert_int_eq(mm->type, KN_MM_F32);
  ck_assert_msg(nest->check_overlap, "%s: C must be checked against A and B", c->func);
  ck_assert_int_eq(!mm->m.is_param && mm->m.value == 1, c->one_row);
  ck_assert_int_eq(!mm->n.is_param && mm->n.value == 1, c->one_col);
  ck_assert(mm->k.is_param);
  ck_assert_int_eq(mm->accumulate, c->accumulate);
  ck_assert_int_eq(mm->has_start, c->has_start);
  release(&f);
}
END_TEST

/* neg_prefix is no product; neg_scaled_after (`y[i] *= 0.5f` after the
 * sum, a third store) is one only with that factor after its sum
 * (kn_mm_post), never as the bare sum. */
START_TEST(neg_sums_in_memory) {
  const char *funcs[] = {"neg_scaled_after", "neg_prefix"};
  fixture f;
  recognise(&f, "sums_in_memory.c", funcs[_i], false);
  if (f.skipped) return;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    if (!n->ok || n->desc.kind != KN_MATMUL) continue;
    ck_assert_msg(_i == 0 && n->desc.matmul.post.on && !n->desc.matmul.post.div, "%s: taken as a product", funcs[_i]);
    const kn_bind *b = &n->binds[n->desc.matmul.post.param];
    ck_assert(b->kind == KN_BIND_VALUE && LLVMIsAConstantFP(b->value));
  }
  release(&f);
}
END_TEST

/* Reference SGEMM and SSYRK 'U' ported from Netlib (blas_cols.c, plain
 * -O2 and -fno-unroll-loops): the j nest holds memset (no kernel), the l-i
 * nest inside it is a product of one row (C's column j read as a row),
 * C(:,j) += (alpha*B(l,j)) * A(:,l), launched per j.  Its C and B start at a sum of live values of
 * the j loop (`C + 4*j*ldc`): one param the host sums (kn_bind's more).
 * Before that sum the nest was "matrix layout not expressible" (the map's
 * reason reported). */
START_TEST(blas_columns) {
  static const char *const funcs[] = {"sgemm_nn", "ssyrk_un"};
  fixture f;
  recognise_with(&f, "blas_cols.c", funcs[_i % 2], false, _i < 2 ? "" : "-fno-unroll-loops");
  if (f.skipped) return;
  const kn_recog_nest *n = NULL;
  for (int i = 0; i < f.res.nnests && !n; i++)
    if (f.res.nests[i].ok && f.res.nests[i].desc.kind == KN_MATMUL && f.res.nests[i].nest->depth == 2 &&
        !ir_loop_checked(f.res.nests[i].cfg, f.res.nests[i].nest))
      n = &f.res.nests[i];
  if (!n) dump(&f);
  ck_assert_msg(n != NULL, "%s: the column's l-i nest is no product", funcs[_i % 2]);
  const kn_matmul *mm = &n->desc.matmul;
  ck_assert_int_eq(mm->type, KN_MM_F32);
  /* y[i] += x[l] * A[l][i] in l, i order: a product with one row */
  ck_assert(!mm->m.is_param);
  ck_assert_int_eq(mm->m.value, 1);
  ck_assert(mm->n.is_param && mm->k.is_param && mm->accumulate);
  ck_assert(n->check_overlap);
  /* temp = alpha * B(l,j), then temp * A(i,l): the vector's element
   * scaled (the product's A, one row), the matrix's not */
  ck_assert(mm->a_scale.on && !mm->b_scale.on);
  /* B(0,j) or C(0,j): a column's start, live values of the j loop
   * summed by the host (kn_bind's more) */
  bool summed = false;
  const kn_layout *ls[3] = {&mm->a, &mm->b, &mm->c};
  for (int k = 0; k < 3; k++)
    if (ls[k]->offset.is_param) {
      const kn_bind *b = &n->binds[ls[k]->offset.value];
      ck_assert_int_eq(b->kind, KN_BIND_VALUE);
      summed |= b->more[0] != NULL;
    }
  ck_assert_msg(summed, "%s: no offset is a sum of live values", funcs[_i % 2]);
  ck_assert(!mm->c.col_stride.is_param);
  ck_assert_int_eq(mm->c.col_stride.value, 1);
  release(&f);
}
END_TEST

/* The dot-product forms of reference BLAS (blas_dot.c, plain -O2 and
 * -fno-unroll-loops), whose store is two operations after the sum: a
 * product (of the whole nest or per column) whose sum is scaled by alpha
 * (kn_mm_post, the function's argument) and then has C's own element
 * added (kn_mm_blend, C's layout), scaled by beta where the source does,
 * behind SGEMM's `beta == 0` test where it has one (the guard a compare
 * of beta, its sense the arm that adds).  Before kn_mm_blend: "stores
 * something other than the sum". */
typedef struct {
  const char *func;
  unsigned alpha_arg;
  int beta_arg;          /* -1: the element unscaled (`y[j] += alpha*temp`) */
  bool guarded;
} blend_case;

static const blend_case blend_cases[] = {
    {"sgemm_tn", 3, 8, true},      {"sgemm_tn_beta", 3, 8, false}, {"sgemv_t", 2, -1, false},
    {"sgemv_t_long", 2, 6, false}, {"ssyrk_lt", 2, 5, true},
};
enum { NBLEND = sizeof blend_cases / sizeof *blend_cases };

static bool same_layout(const kn_layout *x, const kn_layout *y) {
  const kn_size *a[4] = {&x->offset, &x->row_stride, &x->col_stride, &x->batch_stride};
  const kn_size *b[4] = {&y->offset, &y->row_stride, &y->col_stride, &y->batch_stride};
  for (int i = 0; i < 4; i++)
    if (a[i]->is_param != b[i]->is_param || a[i]->value != b[i]->value) return false;
  return true;
}

START_TEST(blas_epilogues) {
  const blend_case *c = &blend_cases[_i % NBLEND];
  fixture f;
  recognise_with(&f, "blas_dot.c", c->func, false, _i < NBLEND ? "" : "-fno-unroll-loops");
  if (f.skipped) return;
  const kn_recog_nest *n = NULL;
  for (int i = 0; i < f.res.nnests && !n; i++)
    if (f.res.nests[i].ok && f.res.nests[i].desc.kind == KN_MATMUL &&
        !ir_loop_checked(f.res.nests[i].cfg, f.res.nests[i].nest))
      n = &f.res.nests[i];
  if (!n) dump(&f);
  ck_assert_msg(n != NULL, "%s: no product", c->func);
  const kn_matmul *mm = &n->desc.matmul;
  LLVMValueRef fn = unit_ir_exported(f.mod, c->func);
  ck_assert_int_eq(mm->type, KN_MM_F32);
  ck_assert(!mm->accumulate && n->check_overlap);
  /* alpha * temp: one multiply by the argument */
  ck_assert(mm->post.on && !mm->post.div && !mm->post.add && !mm->post.sub && !mm->post.elem);
  ck_assert_int_eq(n->binds[mm->post.param].kind, KN_BIND_VALUE);
  ck_assert(n->binds[mm->post.param].value == LLVMGetParam(fn, 1 + c->alpha_arg));
  /* + beta * C: C's own element */
  const kn_mm_blend *bl = &mm->blend;
  ck_assert_msg(bl->on, "%s: no element added after the sum", c->func);
  ck_assert(same_layout(&bl->e, &mm->c));
  ck_assert_int_eq(bl->scaled, c->beta_arg >= 0);
  if (bl->scaled) {
    ck_assert_int_eq(n->binds[bl->param].kind, KN_BIND_VALUE);
    ck_assert(n->binds[bl->param].value == LLVMGetParam(fn, 1 + (unsigned)c->beta_arg));
  }
  ck_assert_int_eq(bl->guarded, c->guarded);
  if (bl->guarded) {
    /* beta == 0 (oeq) skips the add; beta != 0 (une) takes it */
    LLVMValueRef g = n->binds[bl->guard_param].value;
    ck_assert(n->binds[bl->guard_param].kind == KN_BIND_VALUE && LLVMIsAFCmpInst(g));
    ck_assert(LLVMGetOperand(g, 0) == LLVMGetParam(fn, 1 + (unsigned)c->beta_arg));
    LLVMRealPredicate p = LLVMGetFCmpPredicate(g);
    ck_assert(p == LLVMRealOEQ || p == LLVMRealUNE);
    ck_assert_int_eq(bl->guard_on, p == LLVMRealUNE);
  }
  release(&f);
}
END_TEST

/* neg_blend_cond: the arm depends on C's element (a select, or a branch
 * inside the nest): no product with an element added after its sum. */
START_TEST(neg_blas_epilogue) {
  fixture f;
  recognise_with(&f, "blas_dot.c", "neg_blend_cond", false, _i ? "-fno-unroll-loops" : "");
  if (f.skipped) return;
  for (int i = 0; i < f.res.nnests; i++)
    ck_assert_msg(!f.res.nests[i].ok || f.res.nests[i].desc.kind != KN_MATMUL ||
                      !f.res.nests[i].desc.matmul.blend.on,
                  "neg_blend_cond: taken with kn_mm_blend");
  release(&f);
}
END_TEST

/* Scaled products (scaled_products.c, PolyBench's gemm and 2mm in plain
 * C), at plain -O2 and with -fno-unroll-loops: the whole nest is one
 * product, its outermost loop the nest's (so one launch, not one per row),
 * with each factor where the source puts it, bound to the function's
 * argument. */
typedef struct {
  const char *func;
  kn_mm_type type;
  bool a_scaled, start_scaled, accumulate;
  unsigned alpha_arg, beta_arg; /* Wasm params (after vmctx) of the factors */
} scaled_case;

static const scaled_case scaled_cases[] = {
    {"gemm", KN_MM_F32, true, true, true, 3, 4},
    {"gemm_beta", KN_MM_F32, false, true, true, 0, 3},
    {"gemm_ijk", KN_MM_F64, true, true, true, 3, 4},
    {"mm2_first", KN_MM_F32, true, false, false, 3, 0},
    {"mm2_second", KN_MM_F32, false, true, true, 0, 3},
};
enum { NSCALED = sizeof scaled_cases / sizeof *scaled_cases };

/* The first nest the offload stage would take: not the bounds-checked
 * copy of a versioned nest (its fast copy speaks for it). */
static const kn_recog_nest *first_fast(const fixture *f) {
  for (int i = 0; i < f->res.nnests; i++)
    if (!ir_loop_checked(f->res.nests[i].cfg, f->res.nests[i].nest)) return &f->res.nests[i];
  ck_abort_msg("no nest");
  return NULL;
}

/* The fast copy's outermost nest (the bounds-checked copy's mark is on
 * its latch: its header may be a block LICM left unmarked). */
static const kn_recog_nest *fast_whole(const fixture *f) {
  for (int i = 0; i < f->res.nnests; i++)
    if (f->res.nests[i].nest->depth == 1 &&
        !ir_loop_checked(f->res.nests[i].cfg, f->res.nests[i].nest))
      return &f->res.nests[i];
  ck_abort_msg("no nest");
  return NULL;
}

/* The fast copy's whole nest, a product: the bounds-checked copy's inner
 * nests (a row of the triangle each, since offsets of two live values
 * are taken) may come first in block order, and are never offloaded. */
static const kn_recog_nest *whole_matmul(const fixture *f) {
  for (int i = 0; i < f->res.nnests; i++) {
    const kn_recog_nest *n = &f->res.nests[i];
    if (n->ok && n->desc.kind == KN_MATMUL && n->nest->depth == 1 &&
        !ir_loop_checked(n->cfg, n->nest))
      return n;
  }
  dump(f);
  ck_abort_msg("no whole nest is a product");
  return NULL;
}

static void check_factor(const kn_recog_nest *n, const kn_mm_scale *s, bool on, unsigned arg, LLVMValueRef fn) {
  ck_assert_int_eq(s->on, on);
  if (!on) return;
  ck_assert_uint_lt(s->param, n->desc.nparams);
  ck_assert_int_eq(n->binds[s->param].kind, KN_BIND_VALUE);
  ck_assert_msg(n->binds[s->param].value == LLVMGetParam(fn, arg), "factor bound to another value");
}

START_TEST(scaled_products) {
  const scaled_case *c = &scaled_cases[_i % NSCALED];
  fixture f;
  recognise_with(&f, "scaled_products.c", c->func, false, _i < NSCALED ? "" : "-fno-unroll-loops");
  if (f.skipped) return;
  const kn_recog_nest *n = first_fast(&f);
  if (!n->ok) dump(&f);
  ck_assert_msg(n->ok, "%s: the whole nest is no kernel", c->func);
  ck_assert_int_eq(n->desc.kind, KN_MATMUL);
  ck_assert_int_eq(n->nest->depth, 1);
  const kn_matmul *mm = &n->desc.matmul;
  ck_assert_int_eq(mm->type, c->type);
  ck_assert(!mm->batched && mm->m.is_param && mm->n.is_param && mm->k.is_param);
  ck_assert_int_eq(mm->accumulate, c->accumulate);
  ck_assert(!mm->has_start);
  ck_assert(n->check_overlap);
  LLVMValueRef fn = unit_ir_exported(f.mod, c->func);
  check_factor(n, &mm->a_scale, c->a_scaled, 1 + c->alpha_arg, fn);
  check_factor(n, &mm->start_scale, c->start_scaled, 1 + c->beta_arg, fn);
  ck_assert(!mm->b_scale.on);
  /* the operand order of the source's multiplications (LLVM puts the
   * load first: A[i][k] * alpha, C[i][j] * beta) */
  ck_assert(!mm->a_scale.first && !mm->start_scale.first);
  release(&f);
}
END_TEST

/* Look-alikes: the nest as a whole is no product (its inner k-j nest may
 * still be one, launched per row, as before). */
START_TEST(neg_scaled_products) {
  static const struct {
    const char *func, *reason;
  } cases[] = {
      {"neg_other_scaled", "is not `C[i][j] *= factor`"},
      {"neg_other_count", "may run over other columns than the product"},
      {"neg_shifted", "is not `C[i][j] *= factor`"},
      {"neg_row_factor", "matmul operand is not a load"},
      {"neg_scaled_after", "not a single chain of loops"},
      {"neg_ijk_prologue", "not a single chain of loops"},
      {"neg_scale_break", "is not `C[i][j] *= factor`"},
  };
  fixture f;
  recognise_with(&f, "scaled_products.c", cases[_i].func, false, "-fno-unroll-loops");
  if (f.skipped) return;
  const kn_recog_nest *n = first_fast(&f);
  if (n->ok) dump(&f);
  ck_assert_msg(!n->ok, "%s: taken as a whole", cases[_i].func);
  ck_assert_msg(strstr(n->reason, cases[_i].reason), "%s: %s", cases[_i].func, n->reason);
  for (int i = 0; i < f.res.nnests; i++)
    ck_assert_msg(!f.res.nests[i].ok || f.res.nests[i].desc.kind != KN_MATMUL ||
                      !kn_matmul_scaled(&f.res.nests[i].desc.matmul),
                  "%s: a scaled product", cases[_i].func);
  release(&f);
}
END_TEST

/* Products over row pointers (styles.c mv_rows and mm_rows at plain -O2
 * and -fno-unroll-loops, round 13): a row `A[i]` loaded in the nest is
 * the row table's (kn_layout's row_table, kr_row_load): the matrix's rows
 * through the table at a param (the function's argument), no row stride,
 * one column per element; the bounds pass's checked copy set aside for
 * its fast copy; each such matrix's range through its table (table_dim:
 * 1 + the dim of the table's loop, i for A and C, k for B) and each
 * table's own 4 bytes per row a read range of their own; the overlap
 * check on.  mv_rows's x and y stay flat.  mm_rows's i nest reads the
 * memory size for the bounds checks the bounds pass left there (only
 * compared: only_bounded), and its store's address is a phi of copies of
 * `4 * j` (GVN's PRE: same_incoming).  Before round 13 both were refused
 * ("rows located through pointers loaded in the nest", "reads the memory
 * size inside the nest").  The flat control (mv_flat) stays a product. */
static void check_table(const kn_recog_nest *n, const kn_layout *l, unsigned table_dim, bool is_write) {
  ck_assert(l->row_table);
  ck_assert(l->table.is_param && n->binds[l->table.value].kind == KN_BIND_VALUE);
  /* the function's argument, or its extension (an i64 IV's start) */
  LLVMValueRef t = n->binds[l->table.value].value;
  if (LLVMIsAZExtInst(t)) t = LLVMGetOperand(t, 0);
  ck_assert(LLVMIsAArgument(t));
  ck_assert(!l->offset.is_param && l->offset.value == 0);
  ck_assert(!l->row_stride.is_param && l->row_stride.value == 0);
  ck_assert(!l->col_stride.is_param && l->col_stride.value == 1);
  int tabled = 0, tables = 0;
  for (int r = 0; r < n->nranges; r++) {
    const kn_range *x = &n->ranges[r];
    if (x->table_dim && x->table.is_param && x->table.value == l->table.value) {
      tabled++;
      ck_assert_uint_eq(x->table_dim, table_dim);
      ck_assert(x->is_write == is_write && x->size == 4 && x->coeff[table_dim - 1] == 0);
    } else if (!x->table_dim && !x->is_write && x->coeff[table_dim - 1] == 4 && x->addr.nparam_terms == 1 &&
               x->addr.param_index[0] == (unsigned)l->table.value) {
      tables++;
    }
  }
  ck_assert_int_ge(tabled, 1);
  ck_assert_int_ge(tables, 1);
}

static void check_row_product(const fixture *f, bool mm) {
  const kn_recog_nest *n = found(f, KN_MATMUL);
  const kn_matmul *m = &n->desc.matmul;
  ck_assert_int_eq(m->type, KN_MM_F32);
  ck_assert(!m->accumulate && !m->batched);
  ck_assert(n->check_overlap);
  check_table(n, &m->a, 1, false);
  if (mm) {
    check_table(n, &m->b, 3, false);
    check_table(n, &m->c, 1, true);
  } else {
    ck_assert(!m->b.row_table && !m->c.row_table);
  }
}

START_TEST(row_tables) {
  fixture f;
  bool mm = _i / 2;
  recognise_with(&f, "styles.c", mm ? "mm_rows" : "mv_rows", false, _i % 2 ? "-fno-unroll-loops" : "");
  if (f.skipped) return;
  check_row_product(&f, mm);
  release(&f);
  recognise_with(&f, "styles.c", "mv_flat", false, _i % 2 ? "-fno-unroll-loops" : "");
  const kn_recog_nest *n = found(&f, KN_MATMUL);
  ck_assert(!n->desc.matmul.a.row_table);
  release(&f);
}
END_TEST

/* Round 14: mm_rows at -O3.  clang's LICM hoists the bounds pass's test
 * of `A[i]`'s row (which copy of the k loop runs) out of the j loop into
 * the i loop; the fork is still in the j loop, between the k loop's fast
 * and checked copies.  Refused before ("loop nest is not a single chain
 * of loops": the test's load was looked for in the j loop only); now the
 * product of row_tables (loaded_layout looks in the whole nest). */
START_TEST(row_tables_o3) {
  fixture f;
  recognise_with(&f, "styles.c", "mm_rows", false, "-O3");
  if (f.skipped) return;
  check_row_product(&f, true);
  release(&f);
}
END_TEST

/* Round 14: y = A^T x through row pointers (styles.c mtv_rows, plain -O2
 * and -fno-unroll-loops, -O3): `y[j] += A[i][j] * x[i]`, y kept in memory over
 * i, a product with one output row (m = 1) summed from y itself, the
 * matrix (B here, k = i the table's loop: table_dim 1) through its table.
 * The bounds pass versions the j loop on each row pointer, and both
 * copies store y: refused before ("stores to more than one array"); the
 * checked copy's store is its fast copy's now (kr_in_slice). */
START_TEST(row_table_transposed) {
  fixture f;
  static const char *const flags[] = {"", "-fno-unroll-loops", "-O3"};
  recognise_with(&f, "styles.c", "mtv_rows", false, flags[_i]);
  if (f.skipped) return;
  const kn_recog_nest *n = found(&f, KN_MATMUL);
  const kn_matmul *m = &n->desc.matmul;
  ck_assert_int_eq(m->type, KN_MM_F32);
  ck_assert(m->accumulate && !m->has_start && !m->batched);
  ck_assert(!m->m.is_param && m->m.value == 1);
  ck_assert(n->check_overlap);
  ck_assert(!m->a.row_table && !m->c.row_table);
  check_table(n, &m->b, 1, false);
  release(&f);
}
END_TEST

/* Products through a struct's fields (styles.c mv_struct, mm_struct,
 * mtm_struct at plain -O2 and -fno-unroll-loops): `m->data` and
 * `m->stride` loaded in the nest are params the host loads before the
 * launch (the matrices' offsets and row strides), the bounds pass's
 * checked copy of the inner loop set aside for its fast copy, and each
 * field's 4 bytes a read range of their own, checked against C. */
static bool loaded(const kn_recog_nest *n, kn_size s) {
  return s.is_param && n->binds[s.value].kind == KN_BIND_VALUE && LLVMIsALoadInst(n->binds[s.value].value);
}

/* Read ranges of one 4-byte element that no counter moves. */
static int field_ranges(const kn_recog_nest *n) {
  int k = 0;
  for (int r = 0; r < n->nranges; r++) {
    const kn_range *x = &n->ranges[r];
    bool fixed = !x->is_write && x->size == 4;
    for (unsigned d = 0; d < x->ndims; d++) fixed &= x->coeff[d] == 0 && x->pcoeff[d] == 0;
    k += fixed;
  }
  return k;
}

START_TEST(struct_fields) {
  static const struct {
    const char *func;
    bool one_col;   /* y = A x: B is x, a plain pointer */
    bool a_trans;   /* A^T: A's column stride the field */
    int fields;     /* field ranges: each matrix's data and stride, and
                     * a->cols where the nest reloads it */
  } cases[] = {
      {"mv_struct", true, false, 2},
      {"mm_struct", false, false, 7},
      {"mtm_struct", false, true, 7},
  };
  const int nc = sizeof cases / sizeof *cases;
  fixture f;
  recognise_with(&f, "styles.c", cases[_i % nc].func, false, _i < nc ? "" : "-fno-unroll-loops");
  if (f.skipped) return;
  const kn_recog_nest *n = found(&f, KN_MATMUL);
  const kn_matmul *mm = &n->desc.matmul;
  ck_assert_int_eq(mm->type, KN_MM_F32);
  ck_assert(!mm->accumulate);
  ck_assert(n->check_overlap);
  ck_assert(loaded(n, mm->a.offset));
  ck_assert(loaded(n, cases[_i % nc].a_trans ? mm->a.col_stride : mm->a.row_stride));
  ck_assert(!cases[_i % nc].one_col || !loaded(n, mm->b.offset));
  ck_assert(cases[_i % nc].one_col || (loaded(n, mm->b.offset) && loaded(n, mm->b.row_stride) &&
                                       loaded(n, mm->c.offset) && loaded(n, mm->c.row_stride)));
  ck_assert_int_eq(field_ranges(n), cases[_i % nc].fields);
  release(&f);
}
END_TEST

/* A product storing its sums over a struct field it reads its layout
 * from (styles.c mv_struct_punned): refused.  Every row's sum goes to the
 * one field, so the check of one_output_for_every_row refuses it first;
 * kr_field_ranges's own check stays behind it (a field is one element,
 * so only an output of no stride can have a field's form). */
START_TEST(struct_field_stored) {
  fixture f;
  recognise_with(&f, "styles.c", "mv_struct_punned", false, _i ? "-fno-unroll-loops" : "");
  if (f.skipped) return;
  rejected_beside_sum(&f, "every row's sum stored to one element of C");
  release(&f);
}
END_TEST

/* Every row's sum stored to one element (styles.c mv_one_out, `*y = s`
 * in the i loop): C's row stride is 0, which the runtime's check of
 * distinct writes takes for the k dim, so the product would launch and
 * its threads race for *y.  Refused, at -O2 and -fno-unroll-loops. */
START_TEST(one_output_for_every_row) {
  fixture f;
  recognise_with(&f, "styles.c", "mv_one_out", false, _i ? "-fno-unroll-loops" : "");
  if (f.skipped) return;
  rejected_beside_sum(&f, "sum stored to one element of C");
  release(&f);
}
END_TEST

/* PolyBench's mvt (x1 += A y1, x2 += A^T y2) and syrk (the lower
 * triangle, j <= i: one product over the triangle, kn_mm_tri) at plain
 * -O2 and with -fno-unroll-loops: products whose sums clang keeps in
 * memory, C checked against A and B by the runtime.  The -O2 shapes are
 * the re-roll's (a bypass `n - 1 != 0`, or `(i + 1 & 1 | i) == 0` with
 * the count i + 1 a second phi); without unrolling syrk's j loops count
 * down from i + 1. */
typedef struct {
  const char *func;
  bool one_row, one_col; /* m = 1, n = 1 */
  bool a_scaled;
  bool tri;              /* j < i + 1, n = m */
} suite_case;

static const suite_case suite_cases[] = {
    {"mvt_x1", false, true, false, false},
    {"mvt_x2", false, true, false, false},
    {"syrk", false, false, true, true},
};
enum { NSUITE = sizeof suite_cases / sizeof *suite_cases };

START_TEST(polybench_products) {
  const suite_case *c = &suite_cases[_i % NSUITE];
  fixture f;
  recognise_with(&f, "polybench_suite.c", c->func, false, _i < NSUITE ? "" : "-fno-unroll-loops");
  if (f.skipped) return;
  /* a triangle: the fast copy's whole nest (the bounds-checked copy's
   * nests are never offloaded) */
  const kn_recog_nest *n = c->tri ? fast_whole(&f) : found(&f, KN_MATMUL);
  if (!n->ok || n->desc.kind != KN_MATMUL) dump(&f);
  ck_assert_msg(n->ok && n->desc.kind == KN_MATMUL, "%s: %s", c->func, n->ok ? "not a product" : n->reason);
  const kn_matmul *mm = &n->desc.matmul;
  ck_assert_int_eq(mm->type, KN_MM_F64);
  ck_assert_msg(n->check_overlap, "%s: C must be checked against A and B", c->func);
  ck_assert_int_eq(!mm->m.is_param && mm->m.value == 1, c->one_row);
  ck_assert_int_eq(!mm->n.is_param && mm->n.value == 1, c->one_col);
  ck_assert(mm->k.is_param && mm->accumulate && !mm->has_start);
  ck_assert_int_eq(mm->a_scale.on, c->a_scaled);
  ck_assert_int_eq(mm->tri.on, c->tri);
  if (c->tri) {
    ck_assert_int_eq(n->nest->depth, 1); /* the i loop's nest, not a row's */
    ck_assert_int_eq(mm->tri.add, 1);
    ck_assert(mm->m.is_param && mm->n.is_param && mm->m.value == mm->n.value);
    ck_assert(mm->start_scale.on);
  }
  release(&f);
}
END_TEST

/* Sums divided or scaled as they are stored after the k loop
 * (tests/gpu/detect/post_scaled.c, kn_mm_post) at plain -O2, -O3 and
 * -fno-unroll-loops: one product each, its factor bound to the function's
 * argument, the division or the operand order the source's. */
typedef struct {
  const char *func;
  unsigned arg;          /* the factor's argument, after vmctx */
  bool div, first;
  kn_mm_type type;
} post_case;

static const post_case post_cases[] = {
    {"cov_rect", 1 + 2, true, false, KN_MM_F64},
    {"scores", 1 + 2, false, false, KN_MM_F32},
    {"scaled_first", 1 + 3, false, false, KN_MM_F32}, /* LLVM puts the sum first */
};
enum { NPOST = sizeof post_cases / sizeof *post_cases };
static const char *const post_flags[] = {"", "-O3", "-fno-unroll-loops"};

START_TEST(post_scaled) {
  const post_case *c = &post_cases[_i % NPOST];
  fixture f;
  recognise_with(&f, "post_scaled.c", c->func, false, post_flags[_i / NPOST]);
  if (f.skipped) return;
  const kn_recog_nest *n = found(&f, KN_MATMUL);
  const kn_matmul *mm = &n->desc.matmul;
  ck_assert_int_eq(mm->type, c->type);
  ck_assert(n->check_overlap && !mm->accumulate && !mm->batched && mm->k.is_param);
  ck_assert_msg(mm->post.on, "%s %s: no factor after the sum", c->func, post_flags[_i / NPOST]);
  ck_assert_int_eq(mm->post.div, c->div);
  if (!c->div) ck_assert_int_eq(mm->post.first, c->first);
  LLVMValueRef fn = unit_ir_exported(f.mod, c->func);
  ck_assert_uint_lt(mm->post.param, n->desc.nparams);
  ck_assert_int_eq(n->binds[mm->post.param].kind, KN_BIND_VALUE);
  ck_assert_msg(n->binds[mm->post.param].value == LLVMGetParam(fn, c->arg), "%s: factor bound to another value",
                c->func);
  ck_assert(kn_matmul_scaled(mm)); /* the exact kernel alone */
  release(&f);
}
END_TEST

/* A divisor loaded in the nest at C's row (`C[i][j] /= A[i][i]`): an
 * element post (kn_mm_post's elem, the diagonal's stride n + 1 on the
 * row, 0 on the column), the sum the dividend (refused before this
 * branch: "a store after the k loop other than the sum"). */
START_TEST(div_by_elem) {
  fixture f;
  recognise_with(&f, "post_scaled.c", "neg_div_by_elem", false, _i ? "-O3" : "");
  if (f.skipped) return;
  const kn_recog_nest *n = found(&f, KN_MATMUL);
  const kn_matmul *mm = &n->desc.matmul;
  ck_assert(n->check_overlap && mm->post.on && mm->post.elem && mm->post.div && !mm->post.first);
  const kn_layout *e = &mm->post.e;
  ck_assert(!e->row_stride.is_param && e->row_stride.value == 257 && !e->col_stride.is_param && e->col_stride.value == 0);
  release(&f);
}
END_TEST

/* An add after the division: no product with a factor after its sum. */
START_TEST(neg_post_scaled) {
  static const char *const funcs[] = {"neg_div_then_add"};
  fixture f;
  recognise_with(&f, "post_scaled.c", funcs[0], false, _i < 1 ? "" : "-O3");
  if (f.skipped) return;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    ck_assert_msg(!n->ok || n->desc.kind != KN_MATMUL || !n->desc.matmul.post.on, "%s: nest %d taken with a factor",
                  funcs[0], i);
    for (int p = 0; n->ok && p < n->nparts; p++)
      ck_assert(n->parts[p].desc.kind != KN_MATMUL || !n->parts[p].desc.matmul.post.on);
  }
  release(&f);
}
END_TEST

/* Sums combined with an element at the output's own index as they are
 * stored (tests/gpu/detect/post_elem.c, kn_mm_post's elem) at plain -O2,
 * -O3 and -fno-unroll-loops: one product each (before: "stores something
 * other than the sum"), the element's matrix bound to the function's
 * argument at C's index, the operation and (for a subtraction) the
 * operand order the source's, its range read. */
typedef struct {
  const char *func;
  unsigned arg;          /* the element's array, after vmctx */
  bool sub;              /* else an add */
  bool first;            /* with sub: the element the left operand */
  bool matrix;           /* a product (n > 1), else a matrix-vector one */
  kn_mm_type type;
} post_elem_case;

static const post_elem_case post_elem_cases[] = {
    {"residual", 1 + 2, true, true, false, KN_MM_F64},
    {"bias_after", 1 + 5, false, false, false, KN_MM_F32},
    {"plus_matrix", 1 + 6, false, false, true, KN_MM_F32},
};
enum { NPOSTE = sizeof post_elem_cases / sizeof *post_elem_cases };

START_TEST(post_elem) {
  const post_elem_case *c = &post_elem_cases[_i % NPOSTE];
  const char *flags = post_flags[_i / NPOSTE];
  fixture f;
  recognise_with(&f, "post_elem.c", c->func, false, flags);
  if (f.skipped) return;
  const kn_recog_nest *n = found(&f, KN_MATMUL);
  const kn_matmul *mm = &n->desc.matmul;
  ck_assert_int_eq(mm->type, c->type);
  ck_assert(n->check_overlap && !mm->accumulate && !mm->batched && mm->k.is_param);
  ck_assert_msg(mm->post.on && mm->post.elem, "%s %s: no element after the sum", c->func, flags);
  ck_assert(!mm->post.div && mm->post.sub == c->sub && mm->post.add == !c->sub);
  if (c->sub) ck_assert_int_eq(mm->post.first, c->first);
  /* at C's index: the same strides as C, its own base */
  const kn_layout *e = &mm->post.e, *out = &mm->c;
  ck_assert(e->row_stride.is_param == out->row_stride.is_param && e->row_stride.value == out->row_stride.value);
  if (c->matrix) ck_assert(e->col_stride.is_param == out->col_stride.is_param && e->col_stride.value == out->col_stride.value);
  ck_assert_msg(e->offset.is_param, "%s: the element's base is no live value", c->func);
  LLVMValueRef fn = unit_ir_exported(f.mod, c->func);
  const kn_bind *b = &n->binds[e->offset.value];
  ck_assert_int_eq(b->kind, KN_BIND_VALUE);
  ck_assert_msg(b->value == LLVMGetParam(fn, c->arg) && b->addend == 0, "%s %s: element bound to another value", c->func,
                flags);
  /* read: A, B and the element (C written) */
  int reads = 0;
  for (int i = 0; i < n->nranges; i++) reads += !n->ranges[i].is_write;
  ck_assert_int_eq(reads, 3);
  ck_assert(kn_matmul_scaled(mm)); /* the exact kernel alone */
  release(&f);
}
END_TEST

/* `x[i] += W o` after the sum (a residual connection): C's own element,
 * the element first, no read range of its own (so the overlap check of C
 * against its reads does not refuse every call). */
START_TEST(post_elem_own) {
  fixture f;
  recognise_with(&f, "post_elem.c", "residual_add", false, post_flags[_i]);
  if (f.skipped) return;
  const kn_recog_nest *n = found(&f, KN_MATMUL);
  const kn_matmul *mm = &n->desc.matmul;
  ck_assert(n->check_overlap && !mm->accumulate && mm->post.on && mm->post.elem && mm->post.add);
  ck_assert(mm->post.e.offset.is_param == mm->c.offset.is_param && mm->post.e.offset.value == mm->c.offset.value);
  int reads = 0;
  for (int i = 0; i < n->nranges; i++) reads += !n->ranges[i].is_write;
  ck_assert_int_eq(reads, 2);
  release(&f);
}
END_TEST

/* `y[i] = s + b[i] * c` (two_ops): since issue 19 round 10 a product
 * with an element added after its sum, scaled (kn_mm_blend, no
 * kn_mm_post): b's element at the output's index, c the argument, b's
 * range read; before, no product.  Two operations of which the second
 * has no element (`s / d + 1.0f`, neg_two_consts) are still none. */
START_TEST(post_two_ops) {
  fixture f;
  recognise_with(&f, "post_elem.c", "neg_two_ops", false, post_flags[_i]);
  if (f.skipped) return;
  const kn_recog_nest *n = found(&f, KN_MATMUL);
  const kn_matmul *mm = &n->desc.matmul;
  LLVMValueRef fn = unit_ir_exported(f.mod, "neg_two_ops");
  ck_assert(n->check_overlap && !mm->accumulate && !mm->post.on);
  ck_assert(mm->blend.on && mm->blend.scaled && !mm->blend.guarded && !mm->blend.first);
  ck_assert(n->binds[mm->blend.param].value == LLVMGetParam(fn, 3));
  ck_assert(!(mm->blend.e.offset.is_param == mm->c.offset.is_param && mm->blend.e.offset.value == mm->c.offset.value));
  int reads = 0;
  for (int i = 0; i < n->nranges; i++) reads += !n->ranges[i].is_write;
  ck_assert_int_eq(reads, 3);
  release(&f);
}
END_TEST

START_TEST(neg_post_elem) {
  fixture f;
  recognise_with(&f, "post_elem.c", "neg_two_consts", false, post_flags[_i]);
  if (f.skipped) return;
  for (int i = 0; i < f.res.nnests; i++)
    ck_assert_msg(!f.res.nests[i].ok || f.res.nests[i].desc.kind != KN_MATMUL, "nest %d taken as a product", i);
  release(&f);
}
END_TEST

/* Sums passed through a ReLU as they are stored
 * (tests/gpu/detect/post_relu.c, kn_mm_act) at plain -O2, -O3 and
 * -fno-unroll-loops: one product each (before: "stores something other
 * than the sum"), the compare and select the source's (its predicate,
 * operand order, arm and constants), after the bias added to the sum
 * where the source adds it (kn_mm_post's elem), the bias as the sum's
 * start where it starts from it; a leaky ReLU (`s > 0 ? s : 0.01f * s`,
 * kn_mm_act's mul), libc's fmaxf(s, 0) inlined (the compare and select
 * alone), libc's fminf(s, 1) (`s < 1 ? s : 1`) and Wasm's f32.max(s, 0)
 * (nan_add): issue 19 round 6, before
 * "stores something other than the sum". */
typedef struct {
  const char *func;
  LLVMRealPredicate pred;
  bool when_true;        /* the sum the select's first arm */
  bool post;             /* an element added after the sum */
  bool start;            /* the sum starts from an element */
  kn_mm_type type;
  double cmp;            /* the compare's constant */
  double sel;            /* the other value's constant */
  bool mul;              /* the other value sum * sel (a leaky ReLU) */
  bool nan_add;          /* a NaN sum stores sum + 0 (Wasm's f32.max) */
} post_relu_case;

static const post_relu_case post_relu_cases[] = {
    {"relu_start", LLVMRealOGT, true, false, true, KN_MM_F32, 0.0, 0.0, false, false},
    {"relu_bias", LLVMRealOGT, true, true, false, KN_MM_F32, 0.0, 0.0, false, false},
    {"relu_matrix", LLVMRealOLT, false, false, false, KN_MM_F64, 0.0, 0.0, false, false},
    {"leaky", LLVMRealOGT, true, false, false, KN_MM_F32, 0.0, (double)0.01f, true, false},
    {"fmax_lib", LLVMRealOGT, true, false, true, KN_MM_F32, 0.0, 0.0, false, false},
    {"wasm_max", LLVMRealOGT, true, false, false, KN_MM_F32, 0.0, 0.0, false, true},
    {"fmin_cap", LLVMRealOLT, true, false, false, KN_MM_F32, 1.0, 1.0, false, false},
};
enum { NRELU = sizeof post_relu_cases / sizeof *post_relu_cases };

START_TEST(post_relu) {
  const post_relu_case *c = &post_relu_cases[_i % NRELU];
  const char *flags = post_flags[_i / NRELU];
  fixture f;
  recognise_with(&f, "post_relu.c", c->func, false, flags);
  if (f.skipped) return;
  const kn_recog_nest *n = NULL;
  for (int i = 0; i < f.res.nnests && !n; i++)
    if (f.res.nests[i].ok && f.res.nests[i].desc.kind == KN_MATMUL) n = &f.res.nests[i];
  if (!n) dump(&f);
  ck_assert_msg(n, "%s %s: no product", c->func, flags);
  const kn_matmul *mm = &n->desc.matmul;
  ck_assert_int_eq(mm->type, c->type);
  ck_assert_msg(mm->act.on, "%s %s: no compare and select after the sum", c->func, flags);
  ck_assert_uint_eq(mm->act.pred, c->pred);
  ck_assert(mm->act.left && mm->act.when_true == c->when_true);
  ck_assert(mm->act.cmp == c->cmp && mm->act.sel == c->sel && !signbit(mm->act.sel));
  ck_assert_msg(mm->act.mul == c->mul && !mm->act.mul_first, "%s %s: mul %d", c->func, flags, mm->act.mul);
  ck_assert_msg(mm->act.nan_add == c->nan_add && !mm->act.add_first, "%s %s: nan_add %d", c->func, flags,
                mm->act.nan_add);
  ck_assert_int_eq(mm->post.on, c->post);
  if (c->post) ck_assert(mm->post.elem && mm->post.add);
  ck_assert_int_eq(mm->accumulate && mm->has_start, c->start);
  ck_assert(kn_matmul_scaled(mm)); /* the exact kernel alone */
  release(&f);
}
END_TEST

/* A leaky ReLU whose slope is a run-time value (`s > 0 ? s : slope *
 * s`): the other arm no constant times the sum, no product. */
START_TEST(neg_post_relu) {
  fixture f;
  recognise_with(&f, "post_relu.c", "neg_leaky_var", false, post_flags[_i]);
  if (f.skipped) return;
  for (int i = 0; i < f.res.nnests; i++)
    ck_assert_msg(!f.res.nests[i].ok || f.res.nests[i].desc.kind != KN_MATMUL, "nest %d taken as a product", i);
  release(&f);
}
END_TEST

/* Sums clamped as they are stored (tests/gpu/detect/post_clamp.c, kn_mm_act
 * then act2) at plain -O2, -O3 and -fno-unroll-loops: one product each
 * (before: "stores something other than the sum"), act the first
 * compare and select the source applies, act2 the second on its result:
 * libc's fminf(fmaxf(s, 0), 6) (a ReLU6), fmaxf then Wasm's f32.min
 * (nan_add the second), Wasm's f32.min(f32.max(s, 0), 6) (nan_add
 * both), two ifs on the sum from the bias (`s > 4`, then `s < -4`), and the nested `s < -1 ? -1 : s > 1 ? 1 : s` (f64): the inner
 * `s > 1 ? 1 : s` first, then `< -1` on its result (clamp_safe: the same
 * as comparing s).  Issue 19 round 7. */
typedef struct {
  const char *func;
  kn_mm_type type;
  LLVMRealPredicate pred1, pred2;
  double cmp1, sel1, cmp2, sel2;
  bool nan_add1, nan_add2, start;
} post_clamp_case;

static const post_clamp_case post_clamp_cases[] = {
    {"relu6_lib", KN_MM_F32, LLVMRealOGT, LLVMRealOLT, 0.0, 0.0, 6.0, 6.0, false, false, false},
    {"relu6_mixed", KN_MM_F32, LLVMRealOGT, LLVMRealOLT, 0.0, 0.0, 6.0, 6.0, false, true, false},
    {"relu6_wasm", KN_MM_F32, LLVMRealOGT, LLVMRealOLT, 0.0, 0.0, 6.0, 6.0, true, true, false},
    {"clamp_tern", KN_MM_F64, LLVMRealOGT, LLVMRealOLT, 1.0, 1.0, -1.0, -1.0, false, false, false},
    {"clamp_if", KN_MM_F32, LLVMRealOGT, LLVMRealOLT, 4.0, 4.0, -4.0, -4.0, false, false, true},
};
enum { NCLAMP = sizeof post_clamp_cases / sizeof *post_clamp_cases };

START_TEST(post_clamp) {
  const post_clamp_case *c = &post_clamp_cases[_i % NCLAMP];
  const char *flags = post_flags[_i / NCLAMP];
  fixture f;
  recognise_with(&f, "post_clamp.c", c->func, false, flags);
  if (f.skipped) return;
  const kn_recog_nest *n = NULL;
  for (int i = 0; i < f.res.nnests && !n; i++)
    if (f.res.nests[i].ok && f.res.nests[i].desc.kind == KN_MATMUL) n = &f.res.nests[i];
  if (!n) dump(&f);
  ck_assert_msg(n, "%s %s: no product", c->func, flags);
  const kn_matmul *mm = &n->desc.matmul;
  ck_assert_int_eq(mm->type, c->type);
  ck_assert_msg(mm->act.on && mm->act2.on, "%s %s: not two compares and selects", c->func, flags);
  const kn_mm_act *a[2] = {&mm->act, &mm->act2};
  const LLVMRealPredicate pred[2] = {c->pred1, c->pred2};
  const double cmp[2] = {c->cmp1, c->cmp2}, sel[2] = {c->sel1, c->sel2};
  for (int i = 0; i < 2; i++) {
    ck_assert_msg(a[i]->pred == (unsigned)pred[i] && a[i]->left, "%s %s: act %d pred %u left %d", c->func, flags, i,
                  a[i]->pred, a[i]->left);
    ck_assert_msg(a[i]->cmp == cmp[i] && a[i]->sel == sel[i], "%s %s: act %d %g %g", c->func, flags, i, a[i]->cmp,
                  a[i]->sel);
    ck_assert_msg(!a[i]->mul && a[i]->nan_add == (i ? c->nan_add2 : c->nan_add1), "%s %s: act %d nan_add %d",
                  c->func, flags, i, a[i]->nan_add);
  }
  ck_assert_int_eq(mm->accumulate && mm->has_start, c->start);
  ck_assert(kn_matmul_scaled(mm)); /* the exact kernel alone */
  release(&f);
}
END_TEST

/* A clamp's bound a run-time value (neg_clamp_var) and crossed bounds
 * (`s < 2 ? 2 : s > 1 ? 1 : s`: clamp_safe refuses, s = 3 would store 2
 * through two compares in a row): no product. */
static const char *const neg_clamp_funcs[] = {"neg_clamp_var", "neg_clamp_cross"};

START_TEST(neg_post_clamp) {
  fixture f;
  recognise_with(&f, "post_clamp.c", neg_clamp_funcs[_i % 2], false, post_flags[_i / 2]);
  if (f.skipped) return;
  for (int i = 0; i < f.res.nnests; i++)
    ck_assert_msg(!f.res.nests[i].ok || f.res.nests[i].desc.kind != KN_MATMUL, "%s: nest %d taken as a product",
                  neg_clamp_funcs[_i % 2], i);
  release(&f);
}
END_TEST

/* Products over an upper triangle (tests/gpu/detect/upper_tri.c,
 * kn_mm_tri's upper) at plain -O2, -O3 and -fno-unroll-loops: covariance's
 * product, j from i to m, its sum divided in place and mirrored to
 * C[j][i]: the fast copy's whole nest is one product over the square (m =
 * n, the row loop's count), C row-major (row stride 256, column 1), the
 * mirror C transposed, C checked against D; without a mirror (gram_upper,
 * its register sum unrolled by 4 at -O2 and -O3 with the counters LLVM's
 * strength reduction leaves, ir_reroll_canon.c) no mirror. */
static const char *const upper_flags[] = {"", "-O3", "-fno-unroll-loops"};

START_TEST(upper_triangle) {
  bool gram = _i >= 3;
  const char *func = gram ? "gram_upper" : "cov_tri";
  fixture f;
  recognise_with(&f, "upper_tri.c", func, false, upper_flags[_i % 3]);
  if (f.skipped) return;
  const kn_recog_nest *n = whole_matmul(&f);
  const kn_matmul *mm = &n->desc.matmul;
  ck_assert_int_eq(mm->type, KN_MM_F64);
  ck_assert(n->check_overlap && !mm->batched && mm->k.is_param && !mm->accumulate);
  ck_assert_msg(mm->tri.on && mm->tri.upper && mm->tri.add == 0, "%s %s: not an upper triangle", func,
                upper_flags[_i % 3]);
  ck_assert_int_eq(mm->tri.mirror, !gram);
  ck_assert_int_eq(mm->post.on, !gram);
  ck_assert(mm->m.is_param && mm->n.is_param && mm->m.value == mm->n.value);
  ck_assert(!mm->c.row_stride.is_param && mm->c.row_stride.value == 256);
  ck_assert(!mm->c.col_stride.is_param && mm->c.col_stride.value == 1);
  /* A = D^T (row i of A is column i of D), B = D */
  ck_assert(!mm->a.row_stride.is_param && mm->a.row_stride.value == 1 && mm->a.col_stride.value == 256);
  ck_assert(!mm->b.row_stride.is_param && mm->b.row_stride.value == 256 && mm->b.col_stride.value == 1);
  /* the mirror's range written too: C's two ranges and D's two */
  int writes = 0;
  for (int r = 0; r < n->nranges; r++) writes += n->ranges[r].is_write;
  ck_assert_int_eq(writes, gram ? 1 : 2);
  release(&f);
}
END_TEST

/* correlation's product (upper_tri.c's corr_tri) at plain -O2, -O3 and
 * -fno-unroll-loops: one product over the strict upper triangle (add 1)
 * of rows m - 1 and columns m (n the column loop's bound, a live value),
 * mirrored, with C[i][i] = 1.0 (the f64 bits) as its diagonal, its range
 * written with C's and the mirror's. */
START_TEST(strict_upper_triangle) {
  fixture f;
  recognise_with(&f, "upper_tri.c", "corr_tri", false, upper_flags[_i]);
  if (f.skipped) return;
  const kn_recog_nest *n = whole_matmul(&f);
  const kn_matmul *mm = &n->desc.matmul;
  ck_assert_int_eq(mm->type, KN_MM_F64);
  ck_assert(n->check_overlap && !mm->batched && !mm->accumulate && !mm->post.on);
  ck_assert_msg(mm->tri.on && mm->tri.upper && mm->tri.add == 1 && mm->tri.mirror && mm->tri.diag,
                "corr_tri %s: not a strict upper triangle with its mirror and diagonal", upper_flags[_i]);
  ck_assert_uint_eq(mm->tri.diag_bits, 0x3ff0000000000000ull);
  ck_assert(mm->m.is_param && mm->n.is_param && mm->m.value != mm->n.value);
  ck_assert_int_eq(n->binds[mm->m.value].kind, KN_BIND_TRIP);
  ck_assert_int_eq(n->binds[mm->n.value].kind, KN_BIND_VALUE);
  LLVMValueRef fn = unit_ir_exported(f.mod, "corr_tri");
  ck_assert_msg(n->binds[mm->n.value].value == LLVMGetParam(fn, 1), "columns bound to another value than m");
  ck_assert(!mm->c.row_stride.is_param && mm->c.row_stride.value == 256 && mm->c.col_stride.value == 1);
  int writes = 0;
  for (int r = 0; r < n->nranges; r++) writes += n->ranges[r].is_write;
  ck_assert_int_eq(writes, 3);
  release(&f);
}
END_TEST

/* A mirror at C[j][i + 1], a row loop to another bound than the i loop's,
 * a mirror into another array, a diagonal constant at C[i][i + 1] or a
 * diagonal value loaded from memory: no upper triangle taken. */
START_TEST(neg_upper_triangle) {
  static const char *const funcs[] = {"neg_mirror_shift", "neg_upper_bound", "neg_mirror_other", "neg_diag_shift",
                                      "neg_diag_value"};
  fixture f;
  recognise_with(&f, "upper_tri.c", funcs[_i % 5], false, upper_flags[_i / 5]);
  if (f.skipped) return;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    ck_assert_msg(!n->ok || n->desc.kind != KN_MATMUL || !n->desc.matmul.tri.upper, "%s %s: nest %d taken",
                  funcs[_i % 5], upper_flags[_i / 5], i);
    for (int p = 0; n->ok && p < n->nparts; p++)
      ck_assert(n->parts[p].desc.kind != KN_MATMUL || !n->parts[p].desc.matmul.tri.upper);
  }
  release(&f);
}
END_TEST

/* bicg: s[j] += r[i] * A[i][j] and q[i] += A[i][j] * p[j] in one j loop,
 * at -O2 and without unrolling: one nest of two parts, each a
 * matrix-vector product (s: one row, the sum over i kept in s; q: one
 * column, its sum read back from memory on every j, the other part's
 * store between), each checked against its own inputs; the parts' ranges
 * apart are the runtime's check (twasm_rt_offload_group); and bicg_restrict
 * without unrolling (q summed in a register, stored after the loop). */
START_TEST(polybench_parts) {
  fixture f;
  /* bicg_restrict: q's sum in a register, stored after the j loop, is its
   * product's own store, not an epilogue (kr_split tries without one
   * first) */
  recognise_with(&f, "polybench_suite.c", _i == 2 ? "bicg_restrict" : "bicg", false, _i ? "-fno-unroll-loops" : "");
  if (f.skipped) return;
  const kn_recog_nest *n = first_fast(&f);
  if (!n->ok) dump(&f);
  ck_assert_msg(n->ok, "bicg: %s", n->reason);
  ck_assert_int_eq(n->nparts, 1);
  ck_assert_ptr_null(n->result);
  bool row = false, col = false;
  for (int p = 0; p <= n->nparts; p++) {
    const kn_recog_nest *part = p ? &n->parts[p - 1] : n;
    const kn_matmul *mm = &part->desc.matmul;
    ck_assert_int_eq(part->desc.kind, KN_MATMUL);
    ck_assert_int_eq(mm->type, KN_MM_F64);
    ck_assert(part->check_overlap && mm->k.is_param && !mm->has_start);
    if (p) ck_assert_int_eq(part->nparts, 0);
    row |= !mm->m.is_param && mm->m.value == 1 && mm->n.is_param && mm->accumulate;
    col |= !mm->n.is_param && mm->n.value == 1 && mm->m.is_param && !mm->accumulate; /* q[i] = 0 first */
  }
  ck_assert_msg(row && col, "bicg: want s as one row (C +=) and q as one column (from 0)");
  release(&f);
}
END_TEST

/* atax: tmp[i] = A[i] . x in a first j loop, y += A[i] * tmp[i] in a
 * second, one i loop around both, without unrolling (at plain -O2 the
 * re-roller leaves a straight copy of both loops for n = 1 inside this
 * standalone function's nest; the e2e programs polybench_atax*.c, whole
 * programs at -O2 and -O3, have none): one nest
 * of two parts in the loops' order (kr_split_loops), tmp one column from
 * 0, y one row (C +=), and exactly one of part 2's ranges forwarded: its
 * read of tmp, the same bytes part 1 writes.  atax_ahead (tmp[i + 1])
 * and atax_before (tmp[i] read before the first loop) are two parts too,
 * with no range forwarded, so that the runtime refuses them. */
START_TEST(polybench_ordered_parts) {
  static const char *const funcs[] = {"atax", "atax_ahead", "atax_before"};
  const char *func = funcs[_i % 3];
  fixture f;
  recognise_with(&f, "polybench_suite.c", func, false, "-fno-unroll-loops");
  if (f.skipped) return;
  const kn_recog_nest *n = first_fast(&f);
  if (!n->ok) dump(&f);
  ck_assert_msg(n->ok, "%s: %s", func, n->reason);
  ck_assert_int_eq(n->nparts, 1);
  const kn_recog_nest *second = &n->parts[0];
  const kn_matmul *tmp = &n->desc.matmul, *y = &second->desc.matmul;
  ck_assert(n->desc.kind == KN_MATMUL && second->desc.kind == KN_MATMUL);
  ck_assert_msg(!tmp->n.is_param && tmp->n.value == 1 && tmp->m.is_param && !tmp->accumulate,
                "%s: part 1 is tmp = A x, one column from 0", func);
  ck_assert_msg(!y->m.is_param && y->m.value == 1 && y->n.is_param && y->accumulate,
                "%s: part 2 is y += tmp^T A, one row", func);
  int forwarded = 0;
  const kn_range *fw = NULL, *written = NULL;
  for (int r = 0; r < second->nranges; r++)
    if (second->ranges[r].forwarded) forwarded++, fw = &second->ranges[r];
  for (int r = 0; r < n->nranges; r++) {
    ck_assert(!n->ranges[r].forwarded);
    if (n->ranges[r].is_write) written = &n->ranges[r];
  }
  ck_assert_int_eq(forwarded, _i % 3 == 0 ? 1 : 0);
  if (fw) {
    /* tmp[i]: the bytes part 1 writes, moving with i alone */
    ck_assert(written && !fw->is_write);
    ck_assert_int_eq(fw->coeff[0], written->coeff[0]);
    ck_assert_int_eq(fw->coeff[0], 8);
    ck_assert_int_eq(fw->coeff[1], 0);
    ck_assert_int_eq(fw->addr.c0, written->addr.c0);
  }
  release(&f);
}
END_TEST

/* gesummv: tmp = A x and y = B x in one j loop, y = alpha * tmp + beta *
 * y after it, at -O2 and without unrolling: one nest of three parts
 * (kn_recog_split.c's epilogue), two matrix-vector products with one
 * column from 0, then a map over i, its write of y forwarded (the bytes
 * part 2 writes), and its reads of tmp (a load) and of y (y's running
 * sum, used after the loop as it was stored last) forwarded too.
 * gesummv_ahead reads tmp[i + 1] after the loop: that read is not
 * forwarded; gesummv_over_x writes x[i], which the products read: that
 * write is not (the runtime then refuses either, an ordinary overlap). */
START_TEST(polybench_epilogue) {
  static const char *const funcs[] = {"gesummv", "gesummv_ahead", "gesummv_over_x"};
  const char *func = funcs[_i % 3];
  fixture f;
  recognise_with(&f, "polybench_suite.c", func, false, _i < 3 ? "" : "-fno-unroll-loops");
  if (f.skipped) return;
  const kn_recog_nest *n = first_fast(&f);
  if (!n->ok) dump(&f);
  ck_assert_msg(n->ok, "%s: %s", func, n->reason);
  ck_assert_int_eq(n->nparts, 2);
  for (int p = 0; p < 2; p++) {
    const kn_recog_nest *part = p ? &n->parts[0] : n;
    const kn_matmul *mm = &part->desc.matmul;
    ck_assert_int_eq(part->desc.kind, KN_MATMUL);
    ck_assert_msg(!mm->n.is_param && mm->n.value == 1 && mm->m.is_param && !mm->accumulate,
                  "%s: part %d is one column from 0", func, p + 1);
    for (int r = 0; r < part->nranges; r++) ck_assert(!part->ranges[r].forwarded);
  }
  const kn_recog_nest *epi = &n->parts[1];
  ck_assert_int_eq(epi->desc.kind, KN_MAP);
  ck_assert_int_eq(epi->desc.map.ndims, 1);
  ck_assert(epi->check_overlap);
  int reads = 0, forwarded_reads = 0, forwarded_writes = 0, writes = 0;
  for (int r = 0; r < epi->nranges; r++) {
    const kn_range *x = &epi->ranges[r];
    ck_assert_int_eq(x->ndims, 1);
    if (x->is_write) writes++, forwarded_writes += x->forwarded;
    else reads++, forwarded_reads += x->forwarded;
  }
  ck_assert_int_eq(writes, 1);
  ck_assert_int_eq(reads, 2);
  ck_assert_int_eq(forwarded_reads, _i % 3 == 1 ? 1 : 2);
  ck_assert_int_eq(forwarded_writes, _i % 3 == 2 ? 0 : 1);
  release(&f);
}
END_TEST

/* syr2k (C[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha *
 * A[i][k] over j <= i), at -O2 and without unrolling: the whole nest is
 * one product over the triangle with a second product per term
 * (kn_mm_second), each product's operands where the source has them:
 * row i of B times alpha-scaled row j of A, then row i of A times
 * alpha-scaled row j of B, C checked against all four. */
static void check_operand(const kn_recog_nest *n, const kn_layout *l, unsigned arg, LLVMValueRef fn) {
  ck_assert(l->offset.is_param);
  ck_assert_int_eq(n->binds[l->offset.value].kind, KN_BIND_VALUE);
  ck_assert_msg(n->binds[l->offset.value].value == LLVMGetParam(fn, arg), "operand bound to another array");
}

START_TEST(polybench_syr2k) {
  fixture f;
  recognise_with(&f, "polybench_suite.c", "syr2k", false, _i ? "-fno-unroll-loops" : "");
  if (f.skipped) return;
  const kn_recog_nest *n = fast_whole(&f);
  if (!n->ok || n->desc.kind != KN_MATMUL) dump(&f);
  ck_assert_msg(n->ok && n->desc.kind == KN_MATMUL, "syr2k: %s", n->ok ? "not a product" : n->reason);
  const kn_matmul *mm = &n->desc.matmul;
  ck_assert_int_eq(mm->type, KN_MM_F64);
  ck_assert(n->check_overlap && mm->accumulate && !mm->has_start && !mm->batched);
  ck_assert(mm->tri.on && mm->tri.add == 1 && mm->m.is_param && mm->k.is_param);
  ck_assert(mm->second.on);
  LLVMValueRef fn = unit_ir_exported(f.mod, "syr2k");
  /* args: n m alpha C A B, after vmctx */
  check_operand(n, &mm->a, 1 + 5, fn);
  check_operand(n, &mm->b, 1 + 4, fn);
  check_operand(n, &mm->second.a, 1 + 4, fn);
  check_operand(n, &mm->second.b, 1 + 5, fn);
  ck_assert(!mm->a_scale.on && !mm->second.a_scale.on);
  check_factor(n, &mm->b_scale, true, 1 + 2, fn);
  check_factor(n, &mm->second.b_scale, true, 1 + 2, fn);
  ck_assert(!mm->b_scale.first && !mm->second.b_scale.first); /* A[j][k] * alpha */
  /* B's rows move with j: the second operand of each is transposed */
  ck_assert(!mm->b.row_stride.is_param && mm->b.row_stride.value == 1);
  ck_assert(!mm->second.b.row_stride.is_param && mm->second.b.row_stride.value == 1);
  int reads = 0;
  for (int r = 0; r < n->nranges; r++) reads += !n->ranges[r].is_write;
  ck_assert_int_ge(reads, 4);
  release(&f);
}
END_TEST

/* A float fill (fill.c's fill_halves) at plain -O2 and -fno-unroll-loops:
 * one map of i32 elements storing 0.5f's bits, 4 bytes apart, in both;
 * at -O2 its main loop's 8-byte stores of 0x3F0000003F000000 are read as
 * two i32 stores each (split_halves), and its remainder loop (`n & 7`
 * iterations at most) is refused as too little work. */
START_TEST(fill_halves) {
  fixture f;
  recognise_with(&f, "fill.c", "fill_halves", false, _i ? "-fno-unroll-loops" : "");
  if (f.skipped) return;
  int maps = 0, little = 0;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    if (ir_loop_checked(n->cfg, n->nest)) continue;
    if (!n->ok) {
      little += strstr(n->reason, "too little work") != NULL;
      continue;
    }
    ck_assert_int_eq(n->desc.kind, KN_MAP);
    const kn_map *m = &n->desc.map;
    ck_assert_int_eq(m->ndims, 1);
    ck_assert_int_eq(m->out_type, KN_I32);
    ck_assert_int_eq(m->out_addr.iv_coeff[0], 4);
    ck_assert(m->trip[0].is_param);
    ck_assert_int_eq(node(n, m->value)->op, KN_E_CONST);
    ck_assert_uint_eq(node(n, m->value)->bits & 0xffffffffu, 0x3F000000u);
    maps++;
  }
  if (maps != 1 || little != (_i ? 0 : 1)) dump(&f);
  ck_assert_int_eq(maps, 1);
  ck_assert_int_eq(little, _i ? 0 : 1);
  release(&f);
}
END_TEST

/* A scale bound to the float constant want (negate_product's factors). */
static void check_const_factor(const kn_recog_nest *n, const kn_mm_scale *s, double want) {
  ck_assert(s->on);
  ck_assert_uint_lt(s->param, n->desc.nparams);
  ck_assert_int_eq(n->binds[s->param].kind, KN_BIND_VALUE);
  LLVMValueRef v = n->binds[s->param].value;
  ck_assert_msg(LLVMIsAConstantFP(v), "factor not a constant");
  LLVMBool lost = false;
  ck_assert_double_eq(LLVMConstRealGetDouble(v, &lost), want);
}

/* Products subtracted from C (syrk_sub.c's syrk_neg, syrk_sub,
 * syr2k_neg) at plain -O2 and -fno-unroll-loops: `C - (A * 0.75) * A'`
 * (LLVM's form of `C += -0.75 * A * A'`), `C - A * A'`, and syr2k's `C +
 * (P1 - (B * 0.75) * A)`: each one product over the triangle, the
 * subtraction a negated factor (-0.75 on the constant's operand, -1 on
 * A where there is none), exact as the Wasm code computes it. */
START_TEST(subtracted_products) {
  static const char *const funcs[] = {"syrk_neg", "syrk_sub", "syr2k_neg"};
  const char *func = funcs[_i % 3];
  fixture f;
  recognise_with(&f, "syrk_sub.c", func, false, _i < 3 ? "" : "-fno-unroll-loops");
  if (f.skipped) return;
  const kn_recog_nest *n = fast_whole(&f);
  if (!n->ok || n->desc.kind != KN_MATMUL) dump(&f);
  ck_assert_msg(n->ok && n->desc.kind == KN_MATMUL, "%s: %s", func, n->ok ? "not a product" : n->reason);
  const kn_matmul *mm = &n->desc.matmul;
  ck_assert(mm->type == KN_MM_F64 && mm->tri.on && mm->tri.add == 1 && mm->accumulate);
  if (_i % 3 == 2) {
    ck_assert(mm->second.on && !mm->a_scale.on && !mm->second.a_scale.on);
    check_const_factor(n, &mm->b_scale, -0.75);
    check_const_factor(n, &mm->second.b_scale, -0.75);
  } else {
    ck_assert(!mm->second.on && !mm->b_scale.on && mm->start_scale.on);
    check_const_factor(n, &mm->a_scale, _i % 3 ? -1.0 : -0.75);
  }
  release(&f);
}
END_TEST

/* Near misses: no nest of theirs is a product, at -O2 or without
 * unrolling (two products added to C one by one, a matrix updated from
 * itself); but trmm's nest of one row i (`B[i][j] = alpha * (B[i][j] +
 * sum over k > i of A[k][i] * B[k][j])`) may be a matrix-vector product
 * (the row's j as its one column, B^T times A's column i) from B's own
 * row, alpha after the sum (kn_mm_post), launched per row: its output
 * row is none of the rows it reads, which the runtime checks. */
START_TEST(neg_polybench) {
  static const char *const funcs[] = {"neg_symm", "neg_syr2k_chain", "neg_trmm"};
  enum { NNEG = sizeof funcs / sizeof *funcs };
  fixture f;
  recognise_with(&f, "polybench_suite.c", funcs[_i % NNEG], false, _i < NNEG ? "" : "-fno-unroll-loops");
  if (f.skipped) return;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    if (!n->ok || n->desc.kind != KN_MATMUL) continue;
    const kn_matmul *mm = &n->desc.matmul;
    bool one = (!mm->m.is_param && mm->m.value == 1) || (!mm->n.is_param && mm->n.value == 1);
    bool row = _i % NNEG == 2 && n->nest->depth > 1 && one && mm->accumulate && !mm->has_start && mm->post.on &&
               !mm->post.div && n->check_overlap;
    ck_assert_msg(row, "%s: taken as a product (depth %d, m %d/%lld, accumulate %d, start %d, post %d/%d)",
                  funcs[_i % NNEG], n->nest->depth, mm->m.is_param, (long long)mm->m.value, mm->accumulate,
                  mm->has_start, mm->post.on, mm->post.div);
  }
  release(&f);
}
END_TEST

/* Triangles other than j <= i, at -O2 and without unrolling: no nest is a
 * product over a triangle (a row's k-j nest may still be one, launched
 * per row). */
START_TEST(neg_triangles) {
  static const char *const funcs[] = {"neg_tri_past", "neg_tri_k_bound"};
  enum { NNEG = sizeof funcs / sizeof *funcs };
  fixture f;
  recognise_with(&f, "polybench_suite.c", funcs[_i % NNEG], false, _i < NNEG ? "" : "-fno-unroll-loops");
  if (f.skipped) return;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    if (n->ok && n->desc.kind == KN_MATMUL && n->desc.matmul.tri.on) dump(&f);
    ck_assert_msg(!n->ok || n->desc.kind != KN_MATMUL || !n->desc.matmul.tri.on, "%s: taken as a triangle",
                  funcs[_i % NNEG]);
    ck_assert_msg(n->nest->depth != 1 || !n->ok, "%s: the whole nest taken", funcs[_i % NNEG]);
  }
  release(&f);
}
END_TEST

static Suite *recog_suite(void) {
  Suite *s = suite_create("recog");
  TCase *tc = tcase_create("detect");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, saxpy);
  tcase_add_test(tc, pure_call);
  tcase_add_test(tc, pure_call_scaled);
  tcase_add_test(tc, neg_call_stores);
  tcase_add_test(tc, neg_call_unbounded);
  tcase_add_loop_test(tc, polybench_products, 0, 2 * NSUITE);
  tcase_add_loop_test(tc, subtracted_products, 0, 6);
  tcase_add_loop_test(tc, fill_halves, 0, 2);
  tcase_add_loop_test(tc, polybench_syr2k, 0, 2);
  tcase_add_loop_test(tc, neg_polybench, 0, 6);
  tcase_add_loop_test(tc, neg_triangles, 0, 4);
  tcase_add_loop_test(tc, polybench_epilogue, 0, 6);
  tcase_add_loop_test(tc, polybench_ordered_parts, 0, 3);
  tcase_add_loop_test(tc, polybench_parts, 0, 3);
  tcase_add_test(tc, jacobi);
  tcase_add_test(tc, dot_i32);
  tcase_add_test(tc, dot_i64);
  tcase_add_test(tc, max_i32);
  tcase_add_test(tc, lag_i64);
  tcase_add_test(tc, dot_f32);
  tcase_add_test(tc, seq_sum_squares);
  tcase_add_test(tc, seq_sum_f64);
  tcase_add_test(tc, seq_sum_of_pairs);
  tcase_add_test(tc, seq_sum_unrolled);
  tcase_add_test(tc, seq_sum_twice_refused);
  tcase_add_test(tc, matmul_ijk_f32);
  tcase_add_test(tc, matmul_ikj_f32);
  tcase_add_test(tc, matmul_ikj_i32);
  tcase_add_test(tc, matmul_i8);
  tcase_add_test(tc, batch16_f32);
  tcase_add_test(tc, batch_i8_live_strides);
  tcase_add_test(tc, batch_inlined_ikj);
  tcase_add_test(tc, neg_batch_overlap);
  tcase_add_test(tc, neg_batch_same_c);
  tcase_add_test(tc, neg_batch_other_store);
  tcase_add_test(tc, neg_batch_call);
  tcase_add_test(tc, neg_call);
  tcase_add_test(tc, neg_two_stores);
  tcase_add_test(tc, neg_dependence);
  tcase_add_test(tc, neg_ahead);
  tcase_add_test(tc, counter_prefix);
  tcase_add_test(tc, counter_ramp);
  tcase_add_test(tc, neg_div);
  tcase_add_test(tc, matvec_as_matmul);
  tcase_add_loop_test(tc, matvec_batch, 0, 2);
  tcase_add_test(tc, matvec_batch_const);
  tcase_add_loop_test(tc, sums_in_memory, 0, 8);
  tcase_add_loop_test(tc, neg_sums_in_memory, 0, 2);
  tcase_add_loop_test(tc, blas_columns, 0, 4);
  tcase_add_loop_test(tc, blas_epilogues, 0, 2 * NBLEND);
  tcase_add_loop_test(tc, neg_blas_epilogue, 0, 2);
  tcase_add_test(tc, matmul_bias_start);
  tcase_add_loop_test(tc, scaled_products, 0, 2 * NSCALED);
  tcase_add_loop_test(tc, neg_scaled_products, 0, 7);
  tcase_add_test(tc, matmul_mixed_signs);
  tcase_add_test(tc, narrow_blur9);
  tcase_add_test(tc, division_by_constants);
  tcase_add_test(tc, neg_div_live);
  tcase_add_test(tc, guarded_interior);
  tcase_add_test(tc, neg_rows_if);
  tcase_add_loop_test(tc, post_scaled, 0, 3 * NPOST);
  tcase_add_loop_test(tc, div_by_elem, 0, 2);
  tcase_add_loop_test(tc, neg_post_scaled, 0, 2);
  tcase_add_loop_test(tc, post_elem, 0, 3 * NPOSTE);
  tcase_add_loop_test(tc, post_two_ops, 0, 3);
  tcase_add_loop_test(tc, neg_post_elem, 0, 3);
  tcase_add_loop_test(tc, post_elem_own, 0, 3);
  tcase_add_loop_test(tc, post_relu, 0, 3 * NRELU);
  tcase_add_loop_test(tc, neg_post_relu, 0, 3);
  tcase_add_loop_test(tc, post_clamp, 0, 3 * NCLAMP);
  tcase_add_loop_test(tc, neg_post_clamp, 0, 6);
  tcase_add_loop_test(tc, upper_triangle, 0, 6);
  tcase_add_loop_test(tc, strict_upper_triangle, 0, 3);
  tcase_add_loop_test(tc, neg_upper_triangle, 0, 15);
  tcase_add_loop_test(tc, row_tables, 0, 4);
  tcase_add_test(tc, row_tables_o3);
  tcase_add_loop_test(tc, row_table_transposed, 0, 3);
  tcase_add_loop_test(tc, struct_fields, 0, 6);
  tcase_add_loop_test(tc, struct_field_stored, 0, 2);
  tcase_add_loop_test(tc, one_output_for_every_row, 0, 2);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(recog_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
