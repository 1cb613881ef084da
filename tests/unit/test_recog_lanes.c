/* test_recog_lanes.c: Check suite "recog_lanes": loops clang vectorised
 * (tests/gpu/detect/simd_lanes.c and simd_nested.c at -O2 -msimd128), read
 * lane by lane as the scalar loops they implement (kernels/kn_lanes.c), or
 * refused where the lanes are not independent iterations. */
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

/* src (in tests/gpu/detect) at -O2 and `flags`, the IR the offload stage
 * sees, fn recognised. */
typedef void (*mutation)(LLVMValueRef fn);

/* Set: src is an e2e program, built as the e2e tests build it (with its
 * main and libc, memory up to 4 GiB), fn one of its functions by name
 * (not exported: the optimiser sees every caller). */
static bool app_build;

static LLVMValueRef named_function(LLVMModuleRef mod, const char *fn) {
  size_t n = strlen(fn);
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
    size_t len;
    const char *name = LLVMGetValueName2(f, &len);
    if (len > n + 1 && !strncmp(name, "wasm_f", 6) && name[len - n - 1] == '_' && !strcmp(name + len - n, fn))
      return f;
  }
  ck_abort_msg("no function %s", fn);
  return NULL;
}
/* Recognise a vector loop at the top of a function with its remainder as
 * one nest (kernels/kn_recog_top.c), as the offload stage does. */
static bool whole_regions;

static void recognise_mutated(fixture *f, const char *src, const char *fn, const char *flags, mutation mutate) {
  memset(f, 0, sizeof *f);
  if (system("clang-19 --version >/dev/null 2>&1") != 0 || access(unit_twasmc(), X_OK) != 0) {
    printf("recog_lanes: skipping %s: clang-19 or %s missing\n", fn, unit_twasmc());
    f->skipped = true;
    return;
  }
  char dir[] = "/tmp/recog-lanes-XXXXXX", cmd[1024];
  ck_assert(mkdtemp(dir) != NULL);
  if (app_build)
    snprintf(cmd, sizeof cmd,
             "clang-19 --target=wasm32-wasi --sysroot=/usr -O2 %s -c %s/%s -o %s/m.o && "
             "clang-19 --target=wasm32-wasi --sysroot=/usr %s/m.o -o %s/m.wasm "
             "-Wl,--max-memory=4294967296 -Wl,-z,stack-size=1048576 -lm",
             flags, DETECT_DIR, src, dir, dir, dir);
  else
    snprintf(cmd, sizeof cmd,
             "clang-19 --target=wasm32-wasi --sysroot=/usr -O2 %s -nostdlib -Wl,--no-entry "
             "-Wl,--export-all -Wl,--allow-undefined %s/%s -o %s/m.wasm",
             flags, DETECT_DIR, src, dir);
  ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
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
  /* the module really holds vector code, or the test proves nothing */
  if (strstr(flags, "-msimd128"))
    ck_assert_msg(strstr(ir, "<4 x ") || strstr(ir, "<2 x "), "no vector code at -msimd128");
  f->ctx = LLVMContextCreate();
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, strlen(ir), "simd_lanes");
  free(ir);
  char *msg = NULL;
  if (LLVMParseIRInContext(f->ctx, buf, &f->mod, &msg)) ck_abort_msg("bad IR: %s", msg);
  LLVMValueRef func = app_build ? named_function(f->mod, fn) : unit_ir_exported(f->mod, fn);
  if (mutate) mutate(func);
  /* each loop its own nest, as kn_lanes.c reads a vector loop alone,
   * unless a test asks for the region at the top as one (whole_regions) */
  kn_recog_opts ro = {.loops_alone = !whole_regions};
  ck_assert(kn_recognise_opts(func, &ro, &f->res, &f->arena));
}

static void recognise_flags(fixture *f, const char *src, const char *fn, const char *flags) {
  recognise_mutated(f, src, fn, flags, NULL);
}

static void recognise_in(fixture *f, const char *src, const char *fn) {
  recognise_flags(f, src, fn, "-msimd128");
}

static void recognise(fixture *f, const char *fn) { recognise_in(f, "simd_lanes.c", fn); }

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

/* Whether the nest stores a vector: the v128 loop, not its remainder. */
static bool stores_vector(const kn_recog_nest *n) {
  for (int b = 0; b < n->nest->nbody; b++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(n->cfg->blocks[n->nest->body[b]].bb); i;
         i = LLVMGetNextInstruction(i))
      if (LLVMIsAStoreInst(i) && LLVMGetTypeKind(LLVMTypeOf(LLVMGetOperand(i, 0))) == LLVMVectorTypeKind)
        return true;
  return false;
}

/* The map of the vector loop (vector true) or of its remainder loop;
 * not a checked copy (the unrolled loop a re-roll keeps behind its range
 * test, which off.c never offloads). */
static const kn_recog_nest *map_of(const fixture *f, bool vector) {
  for (int i = 0; i < f->res.nnests; i++) {
    const kn_recog_nest *n = &f->res.nests[i];
    if (n->ok && n->desc.kind == KN_MAP && stores_vector(n) == vector && !ir_loop_checked(n->cfg, n->nest))
      return n;
  }
  dump(f);
  ck_abort_msg("no map of the %s loop", vector ? "vector" : "remainder");
  return NULL;
}

/* The copies per trip of a map's innermost loop (lanes for a vector loop). */
static unsigned map_copies(const kn_recog_nest *n) {
  const kn_map *m = &n->desc.map;
  const kn_size *trip = &m->trip[m->ndims - 1];
  if (!trip->is_param) return 0;
  const kn_bind *b = &n->binds[trip->value];
  return b->kind == KN_BIND_TRIP ? b->scale : 0;
}

static int count_op(const kn_recog_nest *n, kn_op op) {
  int k = 0;
  for (unsigned i = 0; i < n->desc.nnodes; i++) k += n->desc.nodes[i].op == op;
  return k;
}

/* The vector loop's map is the scalar loop's: one element per virtual
 * iteration (`lanes` of them a trip), the same operations as the map of
 * the remainder loop beside it. */
static void check_lane_map(const char *fn, unsigned lanes, kn_type type, unsigned elem, int loads,
                           int muls, int adds) {
  fixture f;
  recognise(&f, fn);
  if (f.skipped) return;
  const kn_recog_nest *v = map_of(&f, true), *r = map_of(&f, false);
  const kn_map *m = &v->desc.map;
  ck_assert_uint_eq(m->ndims, 1);
  ck_assert_uint_eq(map_copies(v), lanes);
  ck_assert_int_eq(m->out_type, type);
  ck_assert_int_eq(m->out_addr.iv_coeff[0], elem);
  ck_assert_int_eq(count_op(v, KN_E_LOAD), loads);
  ck_assert_int_eq(count_op(v, KN_E_MUL), muls);
  ck_assert_int_eq(count_op(v, KN_E_ADD), adds);
  ck_assert_uint_eq(v->desc.nnodes, r->desc.nnodes);
  /* (LLVM may order a product's operands differently in the two loops) */
  for (kn_op op = 0; op < KN_E_COUNT; op++) ck_assert_int_eq(count_op(v, op), count_op(r, op));
  ck_assert(v->check_overlap);
  ck_assert_int_eq(r->desc.map.out_addr.iv_coeff[0], elem);
  release(&f);
}

START_TEST(lanes_saxpy_f32) { check_lane_map("saxpy4", 4, KN_F32, 4, 2, 1, 1); }
END_TEST

START_TEST(lanes_scale_i32) { check_lane_map("scale_i32", 4, KN_I32, 4, 1, 1, 1); }
END_TEST

START_TEST(lanes_axpy_f64) { check_lane_map("axpy_f64", 2, KN_F64, 8, 2, 1, 1); }
END_TEST

/* The counter used as a value (ramp: `a[i] = (3 i + from) * 0.5f`):
 * clang's induction vector <0, 1, 2, 3> + splat(4) t read lane by lane as
 * the iteration j = 4 t + l (kn_lanes.c vector_counter): a map of one
 * element a virtual iteration, the counter a kernel index as in the
 * remainder's map (before: "vectorised integer reduction") */
static int count_iv(const kn_recog_nest *n) { return count_op(n, KN_E_IV); }

static int replace_each(LLVMValueRef fn, bool (*pick)(LLVMValueRef),
                        LLVMValueRef (*make)(LLVMBuilderRef, LLVMValueRef));

START_TEST(lanes_counter) {
  fixture f;
  recognise(&f, "ramp");
  if (f.skipped) return;
  const kn_recog_nest *v = map_of(&f, true), *r = map_of(&f, false);
  ck_assert_uint_eq(v->desc.map.ndims, 1);
  ck_assert_uint_eq(map_copies(v), 4);
  ck_assert_int_eq(v->desc.map.out_type, KN_F32);
  ck_assert_int_eq(v->desc.map.out_addr.iv_coeff[0], 4);
  ck_assert_int_eq(count_op(v, KN_E_LOAD), 0);
  ck_assert_int_ge(count_iv(v), 1);
  ck_assert_int_ge(count_iv(r), 1);
  release(&f);
}
END_TEST

/* `add <4 x i32> phi, splat(4)` of ramp's vector counter */
static bool counter_step(LLVMValueRef i) {
  if (LLVMGetInstructionOpcode(i) != LLVMAdd || LLVMGetTypeKind(LLVMTypeOf(i)) != LLVMVectorTypeKind ||
      !LLVMIsAPHINode(LLVMGetOperand(i, 0)) || !LLVMIsAConstant(LLVMGetOperand(i, 1)))
    return false;
  LLVMValueRef e = LLVMGetAggregateElement(LLVMGetOperand(i, 1), 0);
  return e && LLVMIsAConstantInt(e) && LLVMConstIntGetSExtValue(e) == 4;
}

static LLVMValueRef as_step8(LLVMBuilderRef b, LLVMValueRef i) {
  LLVMTypeRef t = LLVMTypeOf(i);
  LLVMValueRef eight = LLVMConstInt(LLVMGetElementType(t), 8, 0), lanes[4] = {eight, eight, eight, eight};
  return LLVMBuildAdd(b, LLVMGetOperand(i, 0), LLVMConstVector(lanes, 4), "");
}

/* the counter stepped by 8 a trip of 4 lanes: lane l of trip t holds
 * 8 t + l, no iteration's i (every other group of four skipped) */
static void steps_by_eight(LLVMValueRef fn) { ck_assert_int_ge(replace_each(fn, counter_step, as_step8), 1); }

START_TEST(neg_lanes_counter_step) {
  fixture f;
  recognise_mutated(&f, "simd_lanes.c", "ramp", "-msimd128", steps_by_eight);
  if (f.skipped) return;
  bool seen = false;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    ck_assert_msg(!n->ok || !stores_vector(n), "ramp stepped by 8: the vector loop taken");
    seen |= !n->ok && strstr(n->reason, "vectorised integer reduction") != NULL;
  }
  if (!seen) dump(&f);
  ck_assert(seen);
  release(&f);
}
END_TEST

/* No nest read lane by lane, and one refused for `reason`. */
static void check_refused(const char *fn, const char *reason) {
  fixture f;
  recognise(&f, fn);
  if (f.skipped) return;
  bool seen = false;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    ck_assert_msg(!n->ok || !stores_vector(n), "%s: a vector loop taken", fn);
    seen |= !n->ok && strstr(n->reason, reason) != NULL;
  }
  if (!seen) dump(&f);
  ck_assert_msg(seen, "%s: no nest refused for: %s", fn, reason);
  release(&f);
}

/* reversed lanes (a byte shuffle of the vector): lane l holds another
 * iteration's element */
START_TEST(neg_lanes_reversed) { check_refused("reverse", "vector (SIMD)"); }
END_TEST

/* lane l reads element l + 1: the lanes' copies differ */
START_TEST(neg_lanes_rotated) { check_refused("rotated", "unrolled copies differ"); }
END_TEST

/* shuffles that give every lane its own element back: the scalar map */
START_TEST(lanes_shuffled_back) {
  fixture f;
  recognise(&f, "shuffled_back");
  if (f.skipped) return;
  const kn_recog_nest *v = map_of(&f, true);
  ck_assert_uint_eq(map_copies(v), 4);
  ck_assert_int_eq(v->desc.map.out_addr.iv_coeff[0], 4);
  ck_assert_int_eq(count_op(v, KN_E_LOAD), 2);
  ck_assert_int_eq(count_op(v, KN_E_MUL), 1);
  const kn_expr *mul = &v->desc.nodes[v->desc.map.value];
  ck_assert_int_eq(mul->op, KN_E_MUL);
  const kn_expr *a = &v->desc.nodes[mul->a], *b = &v->desc.nodes[mul->b];
  ck_assert_int_eq(a->op, KN_E_LOAD);
  ck_assert_int_eq(b->op, KN_E_LOAD);
  ck_assert_int_eq(a->load.addr.c0, b->load.addr.c0);
  ck_assert_int_eq(a->load.addr.iv_coeff[0], 4);
  ck_assert_int_eq(b->load.addr.iv_coeff[0], 4);
  release(&f);
}
END_TEST

/* two vector stores a trip, 16 bytes apart: 8 copies of one store (16
 * where clang unrolled the loop by two as well) */
START_TEST(lanes_two_stores) {
  fixture f;
  recognise(&f, "two_stores");
  if (f.skipped) return;
  const kn_recog_nest *v = map_of(&f, true);
  ck_assert_uint_ge(map_copies(v), 8);
  ck_assert_uint_eq(map_copies(v) % 8, 0);
  ck_assert_int_eq(v->desc.map.out_addr.iv_coeff[0], 4);
  ck_assert_int_eq(count_op(v, KN_E_LOAD), 2);
  ck_assert_int_eq(count_op(v, KN_E_MUL), 1);
  release(&f);
}
END_TEST

START_TEST(neg_lanes_reduction) { check_refused("sum_i32", "vectorised integer reduction"); }
END_TEST

START_TEST(neg_lanes_float_sum) { check_refused("sum_lanes", "vectorised float reduction"); }
END_TEST

START_TEST(neg_lanes_inner) { check_refused("rows", "vector (SIMD) loop inside another loop"); }
END_TEST

/* Whether the nest holds a vector phi (a sum in lanes). */
static bool has_vector_phi(const kn_recog_nest *n) {
  for (int b = 0; b < n->nest->nbody; b++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(n->cfg->blocks[n->nest->body[b]].bb); i && LLVMIsAPHINode(i);
         i = LLVMGetNextInstruction(i))
      if (LLVMGetTypeKind(LLVMTypeOf(i)) == LLVMVectorTypeKind) return true;
  return false;
}

/* simd_nested.c's fn: no nest storing a vector is taken; every nest with a
 * sum in lanes is refused for `sum_reason`, whichever of its vector
 * instructions the scan meets first (at least one such nest when
 * sum_reason is given); of the other nests storing a vector (none when
 * other is NULL) at least one is refused for `other` (the outer ones may
 * give an earlier reason). */
static void check_nested(const char *fn, const char *sum_reason, const char *other) {
  fixture f;
  recognise_in(&f, "simd_nested.c", fn);
  if (f.skipped) return;
  int sums = 0, others = 0;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    ck_assert_msg(!n->ok || !stores_vector(n), "%s: a vector loop taken", fn);
    if (has_vector_phi(n)) {
      ck_assert_msg(sum_reason, "%s: nest %d holds a sum in lanes", fn, i);
      if (n->ok || !strstr(n->reason, sum_reason)) dump(&f);
      ck_assert_msg(!n->ok && strstr(n->reason, sum_reason), "%s: nest %d not refused for: %s", fn, i, sum_reason);
      sums++;
    } else if (stores_vector(n)) {
      ck_assert_msg(other, "%s: nest %d stores a vector", fn, i);
      others += strstr(n->reason, other) != NULL;
    }
  }
  if (sum_reason) ck_assert_msg(sums > 0, "%s: no nest with a sum in lanes", fn);
  if (other && !others) dump(&f);
  ck_assert_msg(!other || others > 0, "%s: no nest refused for: %s", fn, other);
  release(&f);
}

/* What a param of nest n stands for, in words that do not depend on the
 * module: an argument of the function by its index, a trip count by its
 * bound's, or the kind of value. */
static void param_key(const kn_recog_nest *n, unsigned p, char *out, size_t size) {
  const kn_bind *b = &n->binds[p];
  LLVMValueRef v = b->kind == KN_BIND_VALUE ? b->value : b->trip->bound;
  /* x & 0x7fffffff, an extension: x (the count's own tests differ) */
  while (v && LLVMIsAInstruction(v) &&
         (LLVMIsAZExtInst(v) || LLVMIsASExtInst(v) ||
          (LLVMGetInstructionOpcode(v) == LLVMAnd && LLVMIsAConstantInt(LLVMGetOperand(v, 1)) &&
           LLVMConstIntGetZExtValue(LLVMGetOperand(v, 1)) == 0x7fffffff)))
    v = LLVMGetOperand(v, 0);
  LLVMValueRef fn = LLVMGetBasicBlockParent(n->cfg->blocks[n->nest->header].bb);
  int arg = -1;
  for (unsigned i = 0; v && i < LLVMCountParams(fn); i++)
    if (LLVMGetParam(fn, i) == v) arg = (int)i;
  snprintf(out, size, "%s(arg %d%+lld)", b->kind == KN_BIND_VALUE ? "value" : "count", arg,
           (long long)b->addend);
}

static void size_key(const kn_recog_nest *n, kn_size s, char *out, size_t size) {
  if (!s.is_param) snprintf(out, size, "%lld", (long long)s.value);
  else param_key(n, (unsigned)s.value, out, size);
}

/* The product's description with its params named (param_key). */
static void matmul_key(const kn_recog_nest *n, char *out, size_t size) {
  const kn_matmul *m = &n->desc.matmul;
  char k[12][40];
  const kn_size sizes[12] = {m->m, m->n, m->k, m->a.offset, m->a.row_stride, m->a.col_stride,
                             m->b.offset, m->b.row_stride, m->b.col_stride, m->c.offset, m->c.row_stride,
                             m->c.col_stride};
  for (int i = 0; i < 12; i++) size_key(n, sizes[i], k[i], sizeof k[i]);
  if (size < 1024) return;
  snprintf(out, 1024,
           "m %s n %s k %s A %s %s %s B %s %s %s C %s %s %s type %d acc %d start %d scales %d %d %d tri %d+%d",
           k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7], k[8], k[9], k[10], k[11], m->type, m->accumulate,
           m->has_start, m->a_scale.on, m->b_scale.on, m->start_scale.on, m->tri.on, (int)m->tri.add);
}

/* The one product among the nests of src's fn built with `flags` (the
 * beta loop before it may be a map of its own), described; when mutate
 * is given, no product: the nests refused are then searched for
 * `reason`.  false when skipped. */
static bool product_in(const char *src, const char *fn, const char *flags, mutation mutate, const char *reason,
                       char *out, size_t size) {
  fixture f;
  recognise_mutated(&f, src, fn, flags, mutate);
  if (f.skipped) return false;
  const kn_recog_nest *p = NULL;
  bool seen = false;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    seen |= !n->ok && reason && strstr(n->reason, reason) != NULL;
    if (!n->ok || n->desc.kind != KN_MATMUL || ir_loop_checked(n->cfg, n->nest)) continue;
    ck_assert_msg(!p, "%s %s: two products", fn, flags);
    p = &f.res.nests[i];
  }
  if (mutate) {
    if (p || !seen) dump(&f);
    ck_assert_msg(!p, "%s %s, changed: a product taken", fn, flags);
    ck_assert_msg(seen, "%s %s, changed: no nest refused for: %s", fn, flags, reason);
  } else {
    if (!p) dump(&f);
    ck_assert_msg(p, "%s %s: no product", fn, flags);
    ck_assert(p->check_overlap);
    matmul_key(p, out, size);
  }
  release(&f);
  return true;
}

/* fn's product built with `flags` (into simd) is the plain build's;
 * false when skipped. */
static bool same_as_plain_in(const char *src, const char *fn, const char *flags, char *simd, size_t size) {
  char plain[1024];
  if (!product_in(src, fn, "", NULL, NULL, plain, sizeof plain) || !product_in(src, fn, flags, NULL, NULL, simd, size))
    return false;
  ck_assert_msg(strcmp(plain, simd) == 0, "plain: %s\n%s:  %s", plain, flags, simd);
  return true;
}

static bool same_as_plain(const char *fn, const char *flags, char *simd, size_t size) {
  return same_as_plain_in("simd_nested.c", fn, flags, simd, size);
}

/* the product's j loop vectorised inside the k and i loops, with its
 * peeled iteration and its scalar remainder beside it
 * (kernels/kn_lanes_region.c): the plain build's product, the same sizes,
 * layouts and operands, whose j count is the argument n */
START_TEST(nested_product) {
  char simd[1024];
  if (!same_as_plain("gemm_ikj", "-msimd128", simd, sizeof simd)) return;
  ck_assert_msg(strstr(simd, "n count(arg 2"), "%s", simd);
}
END_TEST

/* the same at -O3 -msimd128: clang tests every count once before the
 * nest (`m < 1 || p < 1 || n < 1`, selects) and no `n < 1` stands in the
 * k loop, so the region's guard G is that or'ed test (guard_outside,
 * none_when_any); the plain -O2 build's product, f32 and int8 (before: a
 * map of the remainder alone, "not the shape of a vector loop and its
 * scalar remainder") */
START_TEST(nested_product_o3) {
  char simd[1024];
  if (!same_as_plain("gemm_ikj", "-O3 -msimd128", simd, sizeof simd)) return;
  ck_assert_msg(strstr(simd, "n count(arg 2"), "%s", simd);
  if (!same_as_plain("qmm_ikj_i8", "-O3 -msimd128", simd, sizeof simd)) return;
  ck_assert_msg(strstr(simd, "type 3"), "%s", simd);
}
END_TEST

/* Each instruction of fn for which `pick` holds, replaced by what `make`
 * builds in its place (before it); how many. */
static int replace_each(LLVMValueRef fn, bool (*pick)(LLVMValueRef),
                        LLVMValueRef (*make)(LLVMBuilderRef, LLVMValueRef)) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetTypeContext(LLVMTypeOf(fn)));
  int n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef next;
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = next) {
      next = LLVMGetNextInstruction(i);
      if (!pick(i)) continue;
      LLVMPositionBuilderBefore(b, i);
      LLVMValueRef r = make(b, i);
      LLVMReplaceAllUsesWith(i, r);
      LLVMInstructionEraseFromParent(i);
      n++;
    }
  }
  LLVMDisposeBuilder(b);
  return n;
}

static bool vector_fadd(LLVMValueRef i) {
  return LLVMGetInstructionOpcode(i) == LLVMFAdd && LLVMGetTypeKind(LLVMTypeOf(i)) == LLVMVectorTypeKind;
}

static LLVMValueRef as_fsub(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildFSub(b, LLVMGetOperand(i, 0), LLVMGetOperand(i, 1), "");
}

/* the vector loop (both of its copies) stores C - alpha A B, the remainder
 * and the peel C + alpha A B */
static void vector_subtracts(LLVMValueRef fn) { ck_assert_int_eq(replace_each(fn, vector_fadd, as_fsub), 2); }

/* `n - 1` in the test after the peel (the only `add x, -1` of gemm_ikj) */
static bool minus_one(LLVMValueRef i) {
  return LLVMGetInstructionOpcode(i) == LLVMAdd && LLVMIsAConstantInt(LLVMGetOperand(i, 1)) &&
         LLVMConstIntGetSExtValue(LLVMGetOperand(i, 1)) == -1 && LLVMIsAArgument(LLVMGetOperand(i, 0));
}

static LLVMValueRef as_minus_three(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildAdd(b, LLVMGetOperand(i, 0), LLVMConstInt(LLVMTypeOf(i), (unsigned long long)-3, 1), "");
}

/* the region left when s == n - 3: the last elements never stored */
static void skips_tail(LLVMValueRef fn) { ck_assert_int_eq(replace_each(fn, minus_one, as_minus_three), 1); }

/* `n < 1` (the guard before the region) */
static bool below_one(LLVMValueRef i) {
  return LLVMIsAICmpInst(i) && LLVMGetICmpPredicate(i) == LLVMIntSLT && LLVMIsAArgument(LLVMGetOperand(i, 0)) &&
         LLVMIsAConstantInt(LLVMGetOperand(i, 1)) && LLVMConstIntGetSExtValue(LLVMGetOperand(i, 1)) == 1;
}

static LLVMValueRef as_below_five(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildICmp(b, LLVMIntSLT, LLVMGetOperand(i, 0), LLVMConstInt(LLVMTypeOf(LLVMGetOperand(i, 0)), 5, 1), "");
}

/* the whole region skipped when n < 5 (every row, every k): rows of fewer
 * than 5 columns never stored */
static void skips_short_rows(LLVMValueRef fn) { ck_assert_int_ge(replace_each(fn, below_one, as_below_five), 1); }

/* gemm_ikj at -O2 -msimd128 changed by `mutate`: no product and no nest
 * storing a vector taken (the scalar remainder alone stays a map, as
 * before this analysis), one refused for `reason` */
static void check_mutated_flags(const char *fn, const char *flags, mutation mutate, const char *reason) {
  fixture f;
  recognise_mutated(&f, "simd_nested.c", fn, flags, mutate);
  if (f.skipped) return;
  bool seen = false;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    ck_assert_msg(!n->ok || (n->desc.kind == KN_MAP && !stores_vector(n) && !n->nest->nchildren), "nest %d taken", i);
    seen |= !n->ok && strstr(n->reason, reason) != NULL;
  }
  if (!seen) dump(&f);
  ck_assert_msg(seen, "no nest refused for: %s", reason);
  release(&f);
}

static void check_mutated_in(const char *fn, mutation mutate, const char *reason) {
  check_mutated_flags(fn, "-msimd128", mutate, reason);
}

static void check_mutated(mutation mutate, const char *reason) { check_mutated_in("gemm_ikj", mutate, reason); }

static LLVMValueRef as_below_zero(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildICmp(b, LLVMIntSLT, LLVMGetOperand(i, 0), LLVMConstInt(LLVMTypeOf(LLVMGetOperand(i, 0)), 0, 1), "");
}

/* -O3's one guard made `m < 0 || p < 0 || n < 0`: n == 0 then enters
 * the region, whose remainder would count n - s' = 0 down by 2 */
static void enters_empty_rows(LLVMValueRef fn) { ck_assert_int_ge(replace_each(fn, below_one, as_below_zero), 1); }

START_TEST(neg_region_o3_guard) {
  check_mutated_flags("gemm_ikj", "-O3 -msimd128", enters_empty_rows,
                      "not the shape of a vector loop and its scalar remainder");
}
END_TEST

/* syrk over a triangle (j <= i): both j loops vector regions whose count
 * is the row's i + 1, LLVM's widened counter of the i loop
 * (kn_lanes_region.c tri_count): the plain build's product over the
 * triangle, its beta prologue included */
START_TEST(nested_triangle) {
  char simd[1024];
  if (!same_as_plain("syrk_tri", "-msimd128", simd, sizeof simd)) return;
  /* over the triangle, C scaled by beta (the prologue region) as its start */
  ck_assert_msg(strstr(simd, "acc 1") && strstr(simd, " 1 tri 1+1"), "%s", simd);
}
END_TEST

/* syrk_tri at -O3 -msimd128: -O3 unswitches `p > 0` out of the i loop, so
 * the prologue region's exits fall through the k loop's preheader into its
 * header (kr_region_before: the done block is the k loop's header): the
 * plain -O2 build's product over the triangle, its beta prologue included
 * (before: "a loop before the product's k loop that is not
 * `C[i][j] *= factor`") */
START_TEST(nested_triangle_o3) {
  char simd[1024];
  if (!same_as_plain("syrk_tri", "-O3 -msimd128", simd, sizeof simd)) return;
  ck_assert_msg(strstr(simd, "acc 1") && strstr(simd, " 1 tri 1+1"), "%s", simd);
}
END_TEST

/* `wide & (2^32 - 4)`, the test E of syrk_tri's regions (all of the row
 * stored by the lanes) */
static bool wide_mask(LLVMValueRef i) {
  return LLVMGetInstructionOpcode(i) == LLVMAnd && LLVMGetIntTypeWidth(LLVMTypeOf(i)) == 64 &&
         LLVMIsAConstantInt(LLVMGetOperand(i, 1)) && LLVMConstIntGetZExtValue(LLVMGetOperand(i, 1)) == 0xfffffffcu;
}

static LLVMValueRef as_mask8(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildAnd(b, LLVMGetOperand(i, 0), LLVMConstInt(LLVMTypeOf(i), 0xfffffff8u, 0), "");
}

/* E then leaves rows whose length is a multiple of 8 only: a row of
 * 4 (mod 8) elements never reaches its remainder */
static void skips_row_tails(LLVMValueRef fn) { ck_assert_int_ge(replace_each(fn, wide_mask, as_mask8), 1); }

START_TEST(neg_triangle_skips_tail) {
  check_mutated_in("syrk_tri", skips_row_tails, "not the shape of a vector loop and its scalar remainder");
}
END_TEST

/* a triangle's row region with no product around it: no nest storing a
 * vector taken, refused as a count that varies with the outer loop */
START_TEST(neg_triangle_map) {
  fixture f;
  recognise_in(&f, "simd_nested.c", "scale_tri");
  if (f.skipped) return;
  bool seen = false;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    ck_assert_msg(!n->ok || (!stores_vector(n) && !n->nest->nchildren), "nest %d taken", i);
    seen |= !n->ok && strstr(n->reason, "trip count depends on an outer loop") != NULL;
  }
  if (!seen) dump(&f);
  ck_assert(seen);
  release(&f);
}
END_TEST

/* The one 2-D map of fn (simd_nested.c) built with flags: the nest of
 * the i loop taken as a map of two dims (the loops inside it may be
 * taken too: the offload stage launches the outermost nest taken).  Its
 * key (ops, output type and address) into out; false when skipped. */
static bool map2_in(const char *src, const char *fn, const char *flags, bool with_c0, char *out, size_t size) {
  fixture f;
  recognise_flags(&f, src, fn, flags);
  if (f.skipped) return false;
  const kn_recog_nest *m = NULL;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    if (!n->ok || !n->nest->nchildren) continue;
    if (n->desc.kind != KN_MAP || n->desc.map.ndims != 2) dump(&f);
    ck_assert_msg(n->desc.kind == KN_MAP && n->desc.map.ndims == 2, "%s %s: nest %d not a 2-D map", fn, flags, i);
    if (!m || n->nest->nbody > m->nest->nbody) m = n; /* the outermost */
  }
  if (!m) dump(&f);
  ck_assert_msg(m, "%s %s: no 2-D map", fn, flags);
  const kn_map *mp = &m->desc.map;
  /* (without c0: a row from j0 puts its offset there or in a live value) */
  int len = snprintf(out, size, "type %d addr %lld %lld %lld %lld %lld trip %d %d ops", (int)mp->out_type,
                     with_c0 ? (long long)mp->out_addr.c0 : 0LL, (long long)mp->out_addr.iv_coeff[0],
                     (long long)mp->out_addr.iv_coeff[1], (long long)mp->out_addr.iv_pcoeff[0],
                     (long long)mp->out_addr.iv_pcoeff[1], mp->trip[0].is_param, mp->trip[1].is_param);
  for (kn_op op = 0; op < KN_E_COUNT && len > 0 && (size_t)len < size; op++)
    len += snprintf(out + len, size - (size_t)len, " %d", count_op(m, op));
  release(&f);
  return true;
}

static bool map2_of(const char *fn, const char *flags, char *out, size_t size) {
  return map2_in("simd_nested.c", fn, flags, true, out, size);
}

/* covariance's centring `data[i][j] -= mean[j]` at -O2 -msimd128: the
 * vector loop, a prologue loop of m & 3 (f32x4) or (m - s) & 3 (f64x2)
 * iterations and the rest unrolled by 4, each a Wasm loop in its bounds
 * copies (kn_lanes_region.c prol_shape), read as one scalar j loop: the
 * plain -O2 build's one 2-D map (before: "its scalar remainder loop
 * beside it makes the pair one scalar loop, not recognised yet", the
 * prologue and remainder loops maps of their own) */
START_TEST(nested_center) {
  const char *fns[] = {"center_f32", "center_f64"};
  for (int k = 0; k < 2; k++) {
    char plain[512], simd[512];
    if (!map2_of(fns[k], "", plain, sizeof plain) || !map2_of(fns[k], "-msimd128", simd, sizeof simd)) return;
    ck_assert_msg(strcmp(plain, simd) == 0, "%s plain: %s\n-msimd128: %s", fns[k], plain, simd);
  }
}
END_TEST

/* `and x, 3` (P's count, K) made `and x, 1`: P then runs K' = 1 trip at
 * most, and the rest R counts down by 4 (n - s' no longer a multiple of
 * 4: it would run past the row) */
static bool and_three(LLVMValueRef i) {
  return LLVMGetInstructionOpcode(i) == LLVMAnd && LLVMGetTypeKind(LLVMTypeOf(i)) == LLVMIntegerTypeKind &&
         LLVMGetIntTypeWidth(LLVMTypeOf(i)) == 32 && LLVMIsAConstantInt(LLVMGetOperand(i, 1)) &&
         LLVMConstIntGetSExtValue(LLVMGetOperand(i, 1)) == 3;
}

static LLVMValueRef as_and_one(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildAnd(b, LLVMGetOperand(i, 0), LLVMConstInt(LLVMTypeOf(i), 1, 0), "");
}

static void prol_count_one(LLVMValueRef fn) { ck_assert_int_ge(replace_each(fn, and_three, as_and_one), 1); }

/* D's `s - n >u -4` made `>u -2`: with n - s = 3 the rest R would count
 * n - s' = 0 down by 4 */
static bool above_minus_four(LLVMValueRef i) {
  return LLVMIsAICmpInst(i) && LLVMGetICmpPredicate(i) == LLVMIntUGT && LLVMIsAConstantInt(LLVMGetOperand(i, 1)) &&
         LLVMConstIntGetSExtValue(LLVMGetOperand(i, 1)) == -4;
}

static LLVMValueRef as_above_minus_two(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildICmp(b, LLVMIntUGT, LLVMGetOperand(i, 0), LLVMConstInt(LLVMTypeOf(LLVMGetOperand(i, 0)), -2, 1), "");
}

static void prol_leaves_early(LLVMValueRef fn) { ck_assert_int_eq(replace_each(fn, above_minus_four, as_above_minus_two), 1); }

/* P's address counter stepping 8 bytes (2 floats) a trip: P stores every
 * other element (`add i64 phi, 4`, P's two copies' only such adds) */
static bool step_four(LLVMValueRef i) {
  return LLVMGetInstructionOpcode(i) == LLVMAdd && LLVMGetTypeKind(LLVMTypeOf(i)) == LLVMIntegerTypeKind &&
         LLVMGetIntTypeWidth(LLVMTypeOf(i)) == 64 && LLVMIsAPHINode(LLVMGetOperand(i, 0)) &&
         LLVMIsAConstantInt(LLVMGetOperand(i, 1)) && LLVMConstIntGetSExtValue(LLVMGetOperand(i, 1)) == 4;
}

static LLVMValueRef as_step_eight(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildAdd(b, LLVMGetOperand(i, 0), LLVMConstInt(LLVMTypeOf(i), 8, 0), "");
}

static void prol_strides_two(LLVMValueRef fn) { ck_assert_int_eq(replace_each(fn, step_four, as_step_eight), 2); }

START_TEST(neg_prol_count) {
  check_mutated_in("center_f32", prol_count_one, "not the shape of a vector loop and its scalar remainder");
  check_mutated_in("center_f64", prol_count_one, "not the shape of a vector loop and its scalar remainder");
}
END_TEST

START_TEST(neg_prol_leaves_early) {
  check_mutated_in("center_f32", prol_leaves_early, "not the shape of a vector loop and its scalar remainder");
}
END_TEST

START_TEST(neg_prol_stride) { check_mutated_in("center_f32", prol_strides_two, "vector (SIMD) loop inside another loop"); }
END_TEST

START_TEST(neg_region_other_value) { check_mutated(vector_subtracts, "its parts store different values"); }
END_TEST

START_TEST(neg_region_skips_tail) {
  check_mutated(skips_tail, "not the shape of a vector loop and its scalar remainder");
}
END_TEST

START_TEST(neg_region_skips_rows) {
  check_mutated(skips_short_rows, "not the shape of a vector loop and its scalar remainder");
}
END_TEST

/* a float sum in lanes per row, from zero or from a splat made before the
 * j loop: a float reduction (not the scalar order) at every level of the
 * nest, though the accumulator is an <2 x i64> phi */
START_TEST(neg_nested_float_sum) {
  check_nested("rows_dot_lanes", "vectorised float reduction", NULL);
  check_nested("rows_dot_bias", "vectorised float reduction", NULL);
}
END_TEST

/* an i32 row sum clang keeps in i32x4 lanes, its lanes added up after the
 * vector loop and its scalar remainder continuing the sum
 * (kernels/kn_lanes_region.c, a sum region): exact in any order, so the
 * plain build's matrix-vector product, whose k count is the argument n */
START_TEST(nested_int_sum) {
  char simd[1024];
  if (!same_as_plain("rows_dot_i32", "-msimd128", simd, sizeof simd)) return;
  ck_assert_msg(strstr(simd, "k count(arg 2"), "%s", simd);
}
END_TEST

/* the row sums at -O3 -msimd128: clang versions the nest for n >= 1 (a
 * memset of y for n < 1), so the sum region has its guard G before the
 * nest (guard_outside, as for stores); the plain -O2 build's
 * matrix-vector products (before: "vectorised integer reduction", each
 * row's remainder a reduce) */
START_TEST(nested_int_sum_o3) {
  char simd[1024];
  if (!same_as_plain("rows_dot_i32", "-O3 -msimd128", simd, sizeof simd)) return;
  ck_assert_msg(strstr(simd, "k count(arg 2"), "%s", simd);
}
END_TEST

START_TEST(nested_i8_sum_o3) {
  char simd[1024];
  if (!same_as_plain("rows_dot_i8", "-O3 -msimd128", simd, sizeof simd)) return;
  ck_assert_msg(strstr(simd, "k count(arg 2"), "%s", simd);
}
END_TEST

/* quant.c's k_ikj: B's bytes widened twice (i8 -> i16 -> i32 lanes,
 * kn_lanes.c widened_bytes) and multiplied in i32x4 lanes by a splat of
 * A's byte read as an int: the plain build's int8 product, at -O2 and -O3
 * (before: "vector (SIMD) lanes moved between shapes") */
START_TEST(nested_i8_widened) {
  char simd[1024];
  if (!same_as_plain("qmm_ikj_x", "-msimd128", simd, sizeof simd)) return;
  ck_assert_msg(strstr(simd, "type 3"), "%s", simd);
  if (!same_as_plain("qmm_ikj_x", "-O3 -msimd128", simd, sizeof simd)) return;
  ck_assert_msg(strstr(simd, "type 3"), "%s", simd);
}
END_TEST

/* `sext <4 x i16> to <4 x i32>` of bytes sign-extended to i16 */
static bool sext_16_32(LLVMValueRef i) {
  LLVMTypeRef t = LLVMTypeOf(i);
  return LLVMGetInstructionOpcode(i) == LLVMSExt && LLVMGetTypeKind(t) == LLVMVectorTypeKind &&
         LLVMGetIntTypeWidth(LLVMGetElementType(t)) == 32 &&
         LLVMGetIntTypeWidth(LLVMGetElementType(LLVMTypeOf(LLVMGetOperand(i, 0)))) == 16;
}

static LLVMValueRef as_zext(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildZExt(b, LLVMGetOperand(i, 0), LLVMTypeOf(i), "");
}

/* the second widening made a zext: a negative byte becomes 2^16 - |b|
 * in its lane, not the remainder's value */
static void zext_of_sext(LLVMValueRef fn) { ck_assert_int_ge(replace_each(fn, sext_16_32, as_zext), 1); }

START_TEST(neg_i8_widened_zext) {
  check_mutated_in("qmm_ikj_x", zext_of_sext, "vector (SIMD) lanes moved between shapes");
}
END_TEST

/* an int8 ikj product whose j loop multiplies bytes widened to i16x8 and
 * widens the products to i32x4 (narrow lanes, kn_lanes.c narrow_product):
 * the plain build's int8 product */
START_TEST(nested_i8_product) {
  char simd[1024];
  if (!same_as_plain("qmm_ikj_i8", "-msimd128", simd, sizeof simd)) return;
  ck_assert_msg(strstr(simd, "type 3"), "%s", simd);
}
END_TEST

/* an int8 row sum in lanes (narrow lanes in a sum region), its remainder
 * unrolled by 2 after a peeled iteration that adds to the sum: the plain
 * build's int8 matrix-vector product, whose k count is the argument n */
START_TEST(nested_i8_sum) {
  char simd[1024];
  if (!same_as_plain("rows_dot_i8", "-msimd128", simd, sizeof simd)) return;
  ck_assert_msg(strstr(simd, "k count(arg 2"), "%s", simd);
}
END_TEST

/* The int8 ikj product built with -fno-unroll-loops: its remainder not
 * unrolled (no peel), the skip's edge to the remainder split by GVN, the
 * splat's address a phi of two copies of one extension and the memory
 * size read for the bounds tests joined by a phi: the plain build's
 * product (failed before: "reads host state") */
START_TEST(nested_i8_product_no_unroll) {
  char simd[1024];
  if (!same_as_plain("qmm_ikj_i8", "-msimd128 -fno-unroll-loops", simd, sizeof simd)) return;
}
END_TEST

/* simd_nested.c's atax_rows built with `flags`: its one nest taken, in
 * two parts, each product described (part 1 into one, part 2 into two). */
static bool atax_parts(const char *flags, char *one, char *two, size_t size) {
  fixture f;
  recognise_flags(&f, "simd_nested.c", "atax_rows", flags);
  if (f.skipped) return false;
  const kn_recog_nest *p = NULL;
  for (int i = 0; i < f.res.nnests; i++)
    if (f.res.nests[i].ok && f.res.nests[i].nparts == 1) p = &f.res.nests[i];
  if (!p) dump(&f);
  ck_assert_msg(p && p->desc.kind == KN_MATMUL && p->parts[0].desc.kind == KN_MATMUL, "atax_rows %s: no two parts",
                flags);
  matmul_key(p, one, size);
  matmul_key(&p->parts[0], two, size);
  release(&f);
  return true;
}

/* key with each count of the argument n, or of a bound that is no
 * argument (the plain build's j loops count to another form of n),
 * written count(n), into out */
static void n_counts(const char *key, char *out, size_t size) {
  out[0] = 0;
  for (const char *p = key; *p;) {
    const char *forms[] = {"count(arg 2+0)", "count(arg -1+0)"}, *hit = NULL;
    for (int f = 0; f < 2; f++)
      if (!strncmp(p, forms[f], strlen(forms[f]))) hit = forms[f];
    size_t len = strlen(out);
    if (len + 16 >= size) break;
    if (hit) {
      strcat(out, "count(n)");
      p += strlen(hit);
    } else {
      out[len] = *p++;
      out[len + 1] = 0;
    }
  }
}



/* the ijk integer products at -O2 -msimd128: clang vectorises the k sum
 * only for n == 1 (the region's unit), its lanes reading w[p + j]: the
 * plain build's products, B's row stride the argument n */
START_TEST(nested_ijk_unit) {
  char simd[1024];
  if (!same_as_plain("dense_i8_ijk", "-msimd128", simd, sizeof simd)) return;
  if (!same_as_plain("mm_i32_ijk", "-msimd128", simd, sizeof simd)) return;
}
END_TEST

/* the versioning test on n against 2 (tests_one, below): the lanes
 * (w[p + j]) then differ from the remainder's at n = 2, no unit: refused */
static bool tests_one(LLVMValueRef i);
static LLVMValueRef as_two(LLVMBuilderRef b, LLVMValueRef i);

static void versions_on_n_two(LLVMValueRef fn) { ck_assert_int_eq(replace_each(fn, tests_one, as_two), 1); }

START_TEST(neg_ijk_other_stride) {
  fixture f;
  recognise_mutated(&f, "simd_nested.c", "dense_i8_ijk", "-msimd128", versions_on_n_two);
  if (f.skipped) return;
  bool why = false;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    ck_assert_msg(!n->ok || n->desc.kind != KN_MATMUL, "nest %d taken as a product", i);
    why |= !n->ok && strstr(n->reason, "its lanes add other terms than its remainder") != NULL;
  }
  if (!why) dump(&f);
  ck_assert(why);
  release(&f);
}
END_TEST

/* The one 2-D map of simd_nested.c's fn built with `flags` (none with a
 * vector store taken when the region is refused), described with its
 * params named. */
static bool map2d_of(const char *fn, const char *flags, mutation mutate, char *out, size_t size) {
  fixture f;
  recognise_mutated(&f, "simd_nested.c", fn, flags, mutate);
  if (f.skipped) return false;
  const kn_recog_nest *p = NULL;
  for (int i = 0; i < f.res.nnests; i++)
    if (f.res.nests[i].ok && f.res.nests[i].desc.kind == KN_MAP && f.res.nests[i].desc.map.ndims == 2 &&
        !ir_loop_checked(f.res.nests[i].cfg, f.res.nests[i].nest)) {
      ck_assert_msg(!p, "%s %s: two 2-D maps taken", fn, flags);
      p = &f.res.nests[i];
    }
  if (!p) {
    snprintf(out, size, "none");
    release(&f);
    return true;
  }
  const kn_map *m = &p->desc.map;
  const kn_addr *a = &m->out_addr;
  char k[2][40];
  for (int d = 0; d < 2; d++)
    if (a->iv_pcoeff[d]) param_key(p, a->iv_pindex[d], k[d], sizeof k[d]);
    else snprintf(k[d], sizeof k[d], "-");
  snprintf(out, size, "type %d c0 %lld iv %lld %lld pcoeff %lld*%s %lld*%s params %u nodes %u", m->out_type,
           (long long)a->c0, (long long)a->iv_coeff[0], (long long)a->iv_coeff[1], (long long)a->iv_pcoeff[0], k[0],
           (long long)a->iv_pcoeff[1], k[1], a->nparam_terms, p->desc.nnodes);
  release(&f);
  return true;
}

/* transpose_i32 at -O2 -msimd128: clang's vector loop runs only when ldt
 * == 1 (kn_lanes_region.c: the region's unit); the region is the plain
 * build's map, t's column stride the argument ldt (LLVM's arg 4: arg 0 is the instance) */
START_TEST(nested_transpose_unit) {
  char plain[512], simd[512];
  if (!map2d_of("transpose_i32", "", NULL, plain, sizeof plain) ||
      !map2d_of("transpose_i32", "-msimd128", NULL, simd, sizeof simd))
    return;
  ck_assert_msg(strcmp(plain, "none") != 0, "plain build: no map");
  ck_assert_msg(strcmp(plain, simd) == 0, "plain: %s\nsimd:  %s", plain, simd);
  ck_assert_msg(strstr(simd, "4*value(arg 4+0)"), "%s", simd);
}
END_TEST

/* `x == 1` or `x != 1` of an argument x: the versioning test (clang
 * writes either, with the module around it) */
static bool tests_one(LLVMValueRef i) {
  return LLVMIsAICmpInst(i) &&
         (LLVMGetICmpPredicate(i) == LLVMIntEQ || LLVMGetICmpPredicate(i) == LLVMIntNE) &&
         LLVMIsAArgument(LLVMGetOperand(i, 0)) && LLVMIsAConstantInt(LLVMGetOperand(i, 1)) &&
         LLVMConstIntGetSExtValue(LLVMGetOperand(i, 1)) == 1;
}

/* the same test against 2 */
static LLVMValueRef as_two(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildICmp(b, LLVMGetICmpPredicate(i), LLVMGetOperand(i, 0),
                       LLVMConstInt(LLVMTypeOf(LLVMGetOperand(i, 0)), 2, 0), "");
}

/* the vector loop entered when ldt == 2, where its lanes store t[j + i]
 * and the remainder t[2 j + i]: no unit, the lanes differ, refused */
static void versions_on_two(LLVMValueRef fn) { ck_assert_int_eq(replace_each(fn, tests_one, as_two), 1); }

START_TEST(neg_transpose_other_stride) {
  char simd[512];
  if (!map2d_of("transpose_i32", "-msimd128", versions_on_two, simd, sizeof simd)) return;
  ck_assert_msg(strcmp(simd, "none") == 0, "taken: %s", simd);
  fixture f;
  recognise_mutated(&f, "simd_nested.c", "transpose_i32", "-msimd128", versions_on_two);
  bool why = false;
  for (int i = 0; i < f.res.nnests; i++)
    why |= !f.res.nests[i].ok && strstr(f.res.nests[i].reason, "its parts store different values") != NULL;
  if (!why) dump(&f);
  ck_assert(why);
  release(&f);
}
END_TEST

/* atax's second j loop a vector region beside the first loop's scalar sum
 * in memory (kn_recog_split.c split_region), its splat the sum the first
 * loop left in a register: the two matrix-vector parts of the plain
 * -fno-unroll-loops build (plain -O2 leaves a straight copy for n = 1 in
 * the nest, the polybench_suite gap), with -msimd128 and with the
 * remainder not unrolled; failed before: a map of the remainder only */
START_TEST(nested_atax_parts) {
  char plain[2][1024], simd[2][1024];
  if (!atax_parts("-fno-unroll-loops", plain[0], plain[1], sizeof plain[0])) return;
  const char *flags[] = {"-msimd128", "-msimd128 -fno-unroll-loops"};
  for (int k = 0; k < 2; k++) {
    ck_assert(atax_parts(flags[k], simd[0], simd[1], sizeof simd[0]));
    /* n, the sum's k count and the region's j count: the argument in
     * the simd build, another form of it in the plain build's loops */
    for (int p = 0; p < 2; p++) {
      char a[1024], b[1024];
      n_counts(plain[p], a, sizeof a);
      n_counts(simd[p], b, sizeof b);
      ck_assert_msg(strcmp(a, b) == 0, "part %d plain: %s\n%s:  %s", p + 1, plain[p], flags[k], simd[p]);
    }
    /* unrolled, the sum's count is the argument (not so without) */
    ck_assert_msg(k == 1 || strstr(simd[0], " k count(arg 2+0)"), "%s", simd[0]);
  }
  /* the second part's rows: n (the region's j count) */
  ck_assert_msg(strstr(simd[1], " n count(arg 2+0)"), "%s", simd[1]);
}
END_TEST

/* the splat V multiplies by: -tmp[i] instead of the sum left in a
 * register (the peel and the remainder still load tmp[i]) */
static bool splat_source(LLVMValueRef i) {
  return LLVMGetInstructionOpcode(i) == LLVMInsertElement && LLVMIsAPHINode(LLVMGetOperand(i, 1)) &&
         LLVMGetTypeKind(LLVMTypeOf(LLVMGetOperand(i, 1))) == LLVMFloatTypeKind;
}

static LLVMValueRef as_negated_splat(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildInsertElement(b, LLVMGetOperand(i, 0), LLVMBuildFNeg(b, LLVMGetOperand(i, 1), ""),
                                LLVMGetOperand(i, 2), "");
}

static void splat_negated(LLVMValueRef fn) { ck_assert_int_eq(replace_each(fn, splat_source, as_negated_splat), 1); }

/* atax_rows changed so that V stores y - A tmp, or multiplies by -tmp[i]:
 * no parts taken, each refused for the region's values */
START_TEST(neg_atax_other_value) {
  check_mutated_in("atax_rows", vector_subtracts, "its parts store different values");
  check_mutated_in("atax_rows", splat_negated, "its parts store different values");
}
END_TEST

static bool vector_access(LLVMValueRef u) {
  bool vec_type = LLVMGetTypeKind(LLVMTypeOf(LLVMIsAStoreInst(u) ? LLVMGetOperand(u, 0) : u)) == LLVMVectorTypeKind;
  if (LLVMIsAStoreInst(u)) return vec_type;
  if (!LLVMIsALoadInst(u)) return false;
  /* a v128.load32_zero: the scalar loaded into lane 0 */
  LLVMUseRef f = LLVMGetFirstUse(u);
  return vec_type || (f && LLVMIsAInsertElementInst(LLVMGetUser(f)));
}

/* Whether fn accesses v128 lanes at an i64 counter (a GEP of an i64 phi):
 * a vector loop whose i32 pointers LLVM widened after the pointers pass
 * (compiler/ir/ir_address_loop.c). */
static bool widened_vector_loop(LLVMValueRef fn) {
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i && LLVMIsAPHINode(i); i = LLVMGetNextInstruction(i)) {
      LLVMTypeRef t = LLVMTypeOf(i);
      if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(t) != 64) continue;
      for (LLVMUseRef u = LLVMGetFirstUse(i); u; u = LLVMGetNextUse(u)) {
        LLVMValueRef g = LLVMGetUser(u);
        if (!LLVMIsAGetElementPtrInst(g)) continue;
        for (LLVMUseRef w = LLVMGetFirstUse(g); w; w = LLVMGetNextUse(w))
          if (vector_access(LLVMGetUser(w))) return true;
      }
    }
  return false;
}

/* The nested sums and products above are read through counters widened
 * to i64 (kn_lanes_region.c kr_region_widened_start): the IR the offload
 * stage sees holds them, so those tests cover the widened form (fails
 * while the pointers pass leaves v128 functions alone) */
START_TEST(nested_widened_counters) {
  static const char *const fns[] = {"rows_dot_i32", "qmm_ikj_i8", "rows_dot_i8", "gemm_ikj"};
  for (size_t k = 0; k < sizeof fns / sizeof *fns; k++) {
    fixture f;
    recognise_in(&f, "simd_nested.c", fns[k]);
    if (f.skipped) return;
    ck_assert_msg(widened_vector_loop(unit_ir_exported(f.mod, fns[k])), "%s: no vector loop with an i64 counter",
                  fns[k]);
    release(&f);
  }
}
END_TEST

static bool narrow_mul(LLVMValueRef i) {
  return LLVMGetInstructionOpcode(i) == LLVMMul && LLVMGetTypeKind(LLVMTypeOf(i)) == LLVMVectorTypeKind &&
         LLVMGetIntTypeWidth(LLVMGetElementType(LLVMTypeOf(i))) == 16;
}

static LLVMValueRef as_narrow_add(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildAdd(b, LLVMGetOperand(i, 0), LLVMGetOperand(i, 1), "");
}

/* the i16 lanes add A + B where the remainder multiplies */
static void narrow_adds(LLVMValueRef fn) { ck_assert_int_ge(replace_each(fn, narrow_mul, as_narrow_add), 1); }

START_TEST(neg_narrow_other_op) {
  fixture f;
  recognise_mutated(&f, "simd_nested.c", "qmm_ikj_i8", "-msimd128", narrow_adds);
  if (f.skipped) return;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    ck_assert_msg(!n->ok || (n->desc.kind == KN_MAP && !n->nest->nchildren), "nest %d taken", i);
  }
  release(&f);
}
END_TEST

/* the same in the int8 row sum: no product (the remainder alone stays a
 * reduce) */
START_TEST(neg_narrow_sum_other_op) {
  fixture f;
  recognise_mutated(&f, "simd_nested.c", "rows_dot_i8", "-msimd128", narrow_adds);
  if (f.skipped) return;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    ck_assert_msg(!n->ok || (n->desc.kind == KN_REDUCE && !n->nest->nchildren), "nest %d taken", i);
  }
  release(&f);
}
END_TEST

static bool vector_mul(LLVMValueRef i) {
  return LLVMGetInstructionOpcode(i) == LLVMMul && LLVMGetTypeKind(LLVMTypeOf(i)) == LLVMVectorTypeKind;
}

static LLVMValueRef as_sub(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildSub(b, LLVMGetOperand(i, 0), LLVMGetOperand(i, 1), "");
}

/* the lanes (both copies of the vector loop) add A - x, the remainder A x */
static void lanes_subtract(LLVMValueRef fn) { ck_assert_int_eq(replace_each(fn, vector_mul, as_sub), 2); }

/* the first shuffle of the lanes' sum after the vector loop (lanes 2, 3
 * onto 0, 1) */
static bool first_hsum_shuffle(LLVMValueRef i) {
  return LLVMGetInstructionOpcode(i) == LLVMShuffleVector && LLVMGetNumMaskElements(i) == 4 &&
         LLVMGetMaskValue(i, 0) == 2 && LLVMGetMaskValue(i, 1) == 3;
}

static LLVMValueRef as_lanes_01(LLVMBuilderRef b, LLVMValueRef i) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(LLVMGetTypeContext(LLVMTypeOf(i)));
  LLVMValueRef mask[4] = {LLVMConstInt(i32, 0, 0), LLVMConstInt(i32, 1, 0), LLVMConstInt(i32, 0, 0),
                          LLVMConstInt(i32, 0, 0)};
  return LLVMBuildShuffleVector(b, LLVMGetOperand(i, 0), LLVMGetOperand(i, 1), LLVMConstVector(mask, 4), "");
}

/* the lanes' sum adds lanes 0 and 1 twice and never lanes 2 and 3 */
static void hsum_twice(LLVMValueRef fn) { ck_assert_int_eq(replace_each(fn, first_hsum_shuffle, as_lanes_01), 1); }

/* rows_dot_i32 at -O2 -msimd128 changed by `mutate`: no product taken (the
 * scalar remainder alone stays a reduce, as before), one nest refused for
 * `reason` */
static void check_sum_mutated(mutation mutate, const char *reason) {
  fixture f;
  recognise_mutated(&f, "simd_nested.c", "rows_dot_i32", "-msimd128", mutate);
  if (f.skipped) return;
  bool seen = false;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    ck_assert_msg(!n->ok || (n->desc.kind == KN_REDUCE && !n->nest->nchildren && !has_vector_phi(n)),
                  "nest %d taken", i);
    seen |= !n->ok && strstr(n->reason, reason) != NULL;
  }
  if (!seen) dump(&f);
  ck_assert_msg(seen, "no nest refused for: %s", reason);
  release(&f);
}

START_TEST(neg_sum_other_terms) { check_sum_mutated(lanes_subtract, "its lanes add other terms than its remainder"); }
END_TEST

START_TEST(neg_sum_lane_twice) { check_sum_mutated(hsum_twice, "vectorised integer reduction"); }
END_TEST

START_TEST(neg_sum_skips_rows) {
  check_sum_mutated(skips_short_rows, "vectorised integer reduction");
}
END_TEST

/* Reference SGEMM's l-i nest (C(:,j) += temp * A(:,l)) inside its j loop,
 * the i loop vectorised: a region in a nest whose root has a parent
 * loop (before: refused as "its scalar remainder loop beside it makes the
 * pair one scalar loop"), its peel storing at `j * 4ldc + C` where V and
 * R store through the j loop's column pointer (kn_recog_affine.c
 * outer_iv_alias, before: "its parts store different values"): the
 * plain build's product of column j */
START_TEST(nested_column_product) {
  char plain[1024], simd[1024];
  if (!product_in("blas_cols.c", "sgemm_nn", "", NULL, NULL, plain, sizeof plain) ||
      !product_in("blas_cols.c", "sgemm_nn", "-msimd128", NULL, NULL, simd, sizeof simd))
    return;
  ck_assert_msg(strcmp(plain, simd) == 0, "plain: %s\nsimd:  %s", plain, simd);
  /* one output row (m 1) of the i loop's count, the argument m */
  ck_assert_msg(strstr(simd, "m 1 n count(arg 1+0)") && strstr(simd, "acc 1"), "%s", simd);
}
END_TEST

/* `trunc(iv)` of the j loop's widened counter times 4ldc: the peel's column */
static bool column_of_counter(LLVMValueRef i) {
  if (LLVMGetInstructionOpcode(i) != LLVMMul || LLVMGetTypeKind(LLVMTypeOf(i)) != LLVMIntegerTypeKind) return false;
  for (unsigned k = 0; k < 2; k++)
    if (LLVMIsATruncInst(LLVMGetOperand(i, k)) && LLVMIsAPHINode(LLVMGetOperand(LLVMGetOperand(i, k), 0)))
      return true;
  return false;
}

static LLVMValueRef as_next_column(LLVMBuilderRef b, LLVMValueRef i) {
  LLVMValueRef k = LLVMGetOperand(i, 0);
  return LLVMBuildAdd(b, LLVMBuildMul(b, LLVMGetOperand(i, 0), LLVMGetOperand(i, 1), ""), k, "");
}

/* the peel stores into column j + 1 (`(j + 1) * 4ldc + C`) */
static void peel_next_column(LLVMValueRef fn) { ck_assert_int_ge(replace_each(fn, column_of_counter, as_next_column), 1); }

START_TEST(neg_column_peel_elsewhere) {
  char out[1024];
  product_in("blas_cols.c", "sgemm_nn", "-msimd128", peel_next_column, "its parts store different values", out, sizeof out);
}
END_TEST

/* SSYRK 'U', 'N' (i <= j) the same way: the region's count n = trunc(w),
 * w the j loop's widened j + 1 outside the nest, LLVM's `trunc nuw`
 * keeping n = w in [1, 2^32) (kn_lanes_region.c row_outside_ok; before:
 * "not the shape of a vector loop and its scalar remainder"): the plain
 * build's product of column j over rows [0, j] */
START_TEST(nested_column_triangle) {
  char plain[1024], simd[1024];
  if (!product_in("blas_cols.c", "ssyrk_un", "", NULL, NULL, plain, sizeof plain) ||
      !product_in("blas_cols.c", "ssyrk_un", "-msimd128", NULL, NULL, simd, sizeof simd))
    return;
  ck_assert_msg(strcmp(plain, simd) == 0, "plain: %s\nsimd:  %s", plain, simd);
}
END_TEST

static bool trunc_nuw(LLVMValueRef i) {
  return LLVMIsATruncInst(i) && LLVMGetNUW(i) && LLVMGetIntTypeWidth(LLVMTypeOf(LLVMGetOperand(i, 0))) == 64;
}

static LLVMValueRef as_plain_trunc(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildTrunc(b, LLVMGetOperand(i, 0), LLVMTypeOf(i), "");
}

/* the row count's truncation without nuw: w may be 2^32, n then 0 while
 * the region (no guard) runs its vector loop from M = 0 */
static void row_may_wrap(LLVMValueRef fn) { ck_assert_int_ge(replace_each(fn, trunc_nuw, as_plain_trunc), 1); }

START_TEST(neg_column_triangle_wraps) {
  char out[1024];
  product_in("blas_cols.c", "ssyrk_un", "-msimd128", row_may_wrap, "not the shape of a vector loop and its scalar remainder", out,
                 sizeof out);
}
END_TEST

/* A constant count with no remainder (matmul_f32_large.c, N = 256): the
 * vector j loop and the scalar one are alternatives behind clang's alias
 * check, each over all of [0, N) (kn_lanes_region.c alt_shape; before:
 * "not the shape of a vector loop and its scalar remainder"): the plain
 * build's product */
START_TEST(nested_constant_alternative) {
  char plain[1024], simd[1024];
  if (!product_in("matmul_f32_large.c", "matmul", "", NULL, NULL, plain, sizeof plain) ||
      !product_in("matmul_f32_large.c", "matmul", "-msimd128", NULL, NULL, simd, sizeof simd))
    return;
  ck_assert_msg(strcmp(plain, simd) == 0, "plain: %s\nsimd:  %s", plain, simd);
  ck_assert_msg(strstr(simd, "m 256 n 256 k 256"), "%s", simd);
}
END_TEST

/* the vector loop's exit `iv.next == 1024` (bytes: N = 256 floats), i64 */
static bool vector_exit_1024(LLVMValueRef i) {
  if (!LLVMIsAICmpInst(i) || LLVMGetICmpPredicate(i) != LLVMIntEQ || !LLVMIsAConstantInt(LLVMGetOperand(i, 1)) ||
      LLVMConstIntGetZExtValue(LLVMGetOperand(i, 1)) != 1024)
    return false;
  LLVMValueRef next = LLVMGetOperand(i, 0);
  return LLVMIsAInstruction(next) && LLVMGetInstructionOpcode(next) == LLVMAdd &&
         LLVMIsAConstantInt(LLVMGetOperand(next, 1)) && LLVMConstIntGetZExtValue(LLVMGetOperand(next, 1)) == 16;
}

static LLVMValueRef as_exit_1008(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildICmp(b, LLVMIntEQ, LLVMGetOperand(i, 0), LLVMConstInt(LLVMTypeOf(LLVMGetOperand(i, 0)), 1008, 0),
                       "");
}

/* the vector loop stops a vector short: its last four columns never stored */
static void vector_stops_short(LLVMValueRef fn) { ck_assert_int_ge(replace_each(fn, vector_exit_1024, as_exit_1008), 1); }

START_TEST(neg_constant_alternative_short) {
  char out[1024];
  product_in("matmul_f32_large.c", "matmul", "-msimd128", vector_stops_short,
             "not the shape of a vector loop and its scalar remainder", out, sizeof out);
}
END_TEST

/* A stencil's row `for (j = 1; j < n - 1; j++)` (jacobi_n.c) at -O2
 * -msimd128: V's lanes and R run j - 1 over [0, n - 2), R from s' = 1
 * or M + 1 to n - 1, the count n - 2 masked with -4 and guarded by
 * `n > 2` before the nest (kn_lanes_region.c "j from j0"): the plain
 * build's one 2-D map, the same address and operations (before: "not
 * the shape of a vector loop and its scalar remainder", R alone a 1-D
 * map) */
START_TEST(nested_from_one) {
  char plain[512], simd[512];
  if (!map2_in("jacobi_n.c", "jacobi_n", "", false, plain, sizeof plain) ||
      !map2_in("jacobi_n.c", "jacobi_n", "-msimd128", false, simd, sizeof simd))
    return;
  ck_assert_msg(strcmp(plain, simd) == 0, "plain: %s\n-msimd128: %s", plain, simd);
}
END_TEST

/* fn of src built with -msimd128 and changed by mutate: no nest of two
 * loops taken, one refused for `reason`. */
static void check_no_map2(const char *src, const char *fn, mutation mutate, const char *reason) {
  fixture f;
  recognise_mutated(&f, src, fn, "-msimd128", mutate);
  if (f.skipped) return;
  bool seen = false;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    if (n->ok && n->nest->nchildren) dump(&f);
    ck_assert_msg(!(n->ok && n->nest->nchildren), "%s, changed: nest %d taken", fn, i);
    seen |= !n->ok && strstr(n->reason, reason) != NULL;
  }
  if (!seen) dump(&f);
  ck_assert_msg(seen, "%s, changed: no nest refused for: %s", fn, reason);
  release(&f);
}

/* s after V, `or disjoint M, 1` (M + j0), the row's first j */
static bool after_vector_plus_one(LLVMValueRef i) {
  return LLVMGetInstructionOpcode(i) == LLVMOr && LLVMGetIsDisjoint(i) && LLVMIsAConstantInt(LLVMGetOperand(i, 1)) &&
         LLVMConstIntGetSExtValue(LLVMGetOperand(i, 1)) == 1 && LLVMIsAInstruction(LLVMGetOperand(i, 0)) &&
         LLVMGetInstructionOpcode(LLVMGetOperand(i, 0)) == LLVMAnd;
}

static LLVMValueRef as_plus_two(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildAdd(b, LLVMGetOperand(i, 0), LLVMConstInt(LLVMTypeOf(i), 2, 0), "");
}

/* R then starts one column past where V stopped: column M + 1 of each
 * row never stored */
static void remainder_skips_one(LLVMValueRef fn) {
  ck_assert_int_ge(replace_each(fn, after_vector_plus_one, as_plus_two), 1);
}

START_TEST(neg_from_one_gap) {
  check_no_map2("jacobi_n.c", "jacobi_n", remainder_skips_one, "not the shape of a vector loop and its scalar remainder");
}
END_TEST

/* the guard before the nest `n > 2` (the row count n - 2 >= 1) */
static bool guard_above_two(LLVMValueRef i) {
  return LLVMIsAICmpInst(i) && LLVMGetICmpPredicate(i) == LLVMIntSGT && LLVMIsAConstantInt(LLVMGetOperand(i, 1)) &&
         LLVMConstIntGetSExtValue(LLVMGetOperand(i, 1)) == 2;
}

static LLVMValueRef as_above_one(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildICmp(b, LLVMIntSGT, LLVMGetOperand(i, 0), LLVMConstInt(LLVMTypeOf(LLVMGetOperand(i, 0)), 1, 0), "");
}

/* `n > 1`: the count n - 2 may be 0 where the nest runs, which no guard
 * then proves positive (its mask -4 then no longer 2^31 - 4's) */
static void guard_one_lower(LLVMValueRef fn) { ck_assert_int_ge(replace_each(fn, guard_above_two, as_above_one), 1); }

START_TEST(neg_from_one_guard) {
  check_no_map2("jacobi_n.c", "jacobi_n", guard_one_lower, "not the shape of a vector loop and its scalar remainder");
}
END_TEST

/* guarded.c's interior `for (x = 1; x < w - 1; x++)` at -O2 -msimd128:
 * R counts `~s' + w` (w - 1 - s') down from s' while its counters start
 * at 0, s' in its addresses' row base beside them; the guard `w < 3` in
 * the outer loop on n = w - 2 without nsw (n positive again where w - 2
 * wraps), so the trip reads 0 when it holds (kr_region.guard): the plain
 * build's one 2-D map (before: "not the shape of a vector loop and its
 * scalar remainder") */
START_TEST(nested_from_one_guarded) {
  char plain[512], simd[512];
  if (!map2_in("guarded.c", "interior", "", false, plain, sizeof plain) ||
      !map2_in("guarded.c", "interior", "-msimd128", false, simd, sizeof simd))
    return;
  ck_assert_msg(strcmp(plain, simd) == 0, "plain: %s\n-msimd128: %s", plain, simd);
  fixture f;
  recognise_in(&f, "guarded.c", "interior");
  bool guarded = false;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    for (unsigned p = 0; n->ok && n->nest->nchildren && p < n->desc.nparams; p++)
      guarded |= n->binds[p].kind == KN_BIND_TRIP && n->binds[p].top_tested && n->binds[p].guard;
  }
  ck_assert_msg(guarded, "interior -msimd128: the row's trip not read as 0 under the guard");
  release(&f);
}
END_TEST

/* the guard in the outer loop `w < 3` */
static bool guard_below_three(LLVMValueRef i) {
  return LLVMIsAICmpInst(i) && LLVMGetICmpPredicate(i) == LLVMIntSLT && LLVMIsAConstantInt(LLVMGetOperand(i, 1)) &&
         LLVMConstIntGetSExtValue(LLVMGetOperand(i, 1)) == 3;
}

static LLVMValueRef as_below_four(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildICmp(b, LLVMIntSLT, LLVMGetOperand(i, 0), LLVMConstInt(LLVMTypeOf(LLVMGetOperand(i, 0)), 4, 0), "");
}

/* `w < 4`: rows of one column (w = 3) skipped, which the scalar loop
 * stores */
static void guard_skips_one_column(LLVMValueRef fn) {
  ck_assert_int_ge(replace_each(fn, guard_below_three, as_below_four), 1);
}

START_TEST(neg_from_one_guard_inside) {
  check_no_map2("guarded.c", "interior", guard_skips_one_column, "not the shape of a vector loop and its scalar remainder");
}
END_TEST

/* A constant j loop that clang vectorised and unrolled completely at -O2
 * -msimd128 (matmul_ikj_f32.c, N = 48: twelve f32x4 copies in one block,
 * its scalar alternative unrolled by 3 behind the alias check): the
 * re-roll (ir_reroll_vec.c) makes the copies a vector loop of 12 trips,
 * the region (alt_shape) takes the alternative's 16 trips of 3 copies as
 * 48 columns: the plain build's product (before: "vector (SIMD)
 * operations in a loop nest: not recognised yet"); batch_ikj_inline.c's
 * batch of i32 products the same way */
START_TEST(straight_vector_alternative) {
  char simd[1024];
  if (!same_as_plain_in("matmul_ikj_f32.c", "matmul", "-msimd128", simd, sizeof simd)) return;
  ck_assert_msg(strstr(simd, "m 64 n 48 k 32"), "%s", simd);
  if (!same_as_plain_in("batch_ikj_inline.c", "batch", "-msimd128", simd, sizeof simd)) return;
}
END_TEST

/* the re-rolled vector loop's exit `j + 1 == 12` */
static bool vector_exit_12(LLVMValueRef i) {
  if (!LLVMIsAICmpInst(i) || LLVMGetICmpPredicate(i) != LLVMIntEQ || !LLVMIsAConstantInt(LLVMGetOperand(i, 1)) ||
      LLVMConstIntGetZExtValue(LLVMGetOperand(i, 1)) != 12)
    return false;
  LLVMValueRef next = LLVMGetOperand(i, 0);
  return LLVMIsAInstruction(next) && LLVMGetInstructionOpcode(next) == LLVMAdd &&
         LLVMIsAConstantInt(LLVMGetOperand(next, 1)) && LLVMConstIntGetZExtValue(LLVMGetOperand(next, 1)) == 1;
}

static LLVMValueRef as_exit_11(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildICmp(b, LLVMIntEQ, LLVMGetOperand(i, 0), LLVMConstInt(LLVMTypeOf(LLVMGetOperand(i, 0)), 11, 0), "");
}

/* the vector loop stops a vector short: 44 of the 48 columns stored */
static void vector_stops_at_11(LLVMValueRef fn) { ck_assert_int_ge(replace_each(fn, vector_exit_12, as_exit_11), 1); }

START_TEST(neg_straight_vector_short) {
  char out[1024];
  product_in("matmul_ikj_f32.c", "matmul", "-msimd128", vector_stops_at_11,
             "not the shape of a vector loop and its scalar remainder", out, sizeof out);
}
END_TEST

/* An int8 product of constant sizes (matmul_i8.c, 32 x 32 x 64) whose k
 * loop clang vectorises whole at -O2 -msimd128: i8 lanes multiplied in
 * i16 lanes, summed in i32x4 lanes from zero, the lanes added up after
 * the loop, no remainder (kernels/kn_lanes_sum.c): the plain build's
 * product, its k count 64 (before: "vectorised integer reduction ...: not
 * recognised yet"); matmul_i8_large.c's the same way */
START_TEST(whole_i8_sum) {
  char simd[1024];
  if (!same_as_plain_in("matmul_i8.c", "matmul", "-msimd128", simd, sizeof simd)) return;
  ck_assert_msg(strstr(simd, "k 64 ") && strstr(simd, "type 3"), "%s", simd);
  if (!same_as_plain_in("matmul_i8_large.c", "matmul", "-msimd128", simd, sizeof simd)) return;
  ck_assert_msg(strstr(simd, "type 3"), "%s", simd);
}
END_TEST

/* int8 products whose k loop clang unrolled completely and vectorised
 * as i32x4 sums of bytes widened twice, vector by vector (mm16_i8.c's
 * 16x16x16; 16x8x32 with its j loop unrolled too), re-rolled
 * (ir_reroll_full.c, ir_reroll_copies.c) into the shape of
 * kn_lanes_sum.c: the plain build's product (before: "vector (SIMD)
 * operations in a loop nest", "narrow lanes") */
START_TEST(unrolled_i8_sum) {
  char simd[1024];
  if (!same_as_plain_in("mm16_i8.c", "mm16_i8", "-msimd128", simd, sizeof simd)) return;
  ck_assert_msg(strstr(simd, "k 16 ") && strstr(simd, "type 3"), "%s", simd);
  if (!same_as_plain_in("mm16_i8.c", "rows_i8", "-msimd128", simd, sizeof simd)) return;
  ck_assert_msg(strstr(simd, "k 32 ") && strstr(simd, "type 3"), "%s", simd);
}
END_TEST

/* u8 activations times s8 weights (matmul_mixed.c): the bytes of each
 * widened twice, A's by zero and B's by sign, multiplied in i32x4 lanes in
 * a sum region: the plain build's product (before: "vector (SIMD)
 * operations on narrow lanes", the zext of bytes to i16 lanes refused) */
START_TEST(mixed_u8_s8_sum) {
  char simd[1024];
  if (!same_as_plain_in("matmul_mixed.c", "qmm", "-msimd128", simd, sizeof simd)) return;
  ck_assert_msg(strstr(simd, "type 3"), "%s", simd);
}
END_TEST

/* matmul_i8.c's matmul at -O2 -msimd128 changed by `mutate`: no product
 * taken; some nest refused for `reason` */
static void check_whole_sum_mutated(mutation mutate, const char *reason) {
  fixture f;
  recognise_mutated(&f, "matmul_i8.c", "matmul", "-msimd128", mutate);
  if (f.skipped) return;
  bool seen = false;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    ck_assert_msg(!n->ok || n->desc.kind != KN_MATMUL, "nest %d taken", i);
    seen |= !n->ok && strstr(n->reason, reason) != NULL;
  }
  if (!seen) dump(&f);
  ck_assert_msg(seen, "no nest refused for: %s", reason);
  release(&f);
}

/* the lanes' sum counts lanes 0 and 1 twice, never 2 and 3 */
static void hsum_twice_each(LLVMValueRef fn) { ck_assert_int_ge(replace_each(fn, first_hsum_shuffle, as_lanes_01), 1); }

START_TEST(neg_whole_sum_lane_twice) { check_whole_sum_mutated(hsum_twice_each, "vectorised integer reduction"); }
END_TEST

/* `mul <8 x i16>` of bytes widened by sign */
static bool i16_mul(LLVMValueRef i) {
  LLVMTypeRef t = LLVMTypeOf(i);
  return LLVMGetInstructionOpcode(i) == LLVMMul && LLVMGetTypeKind(t) == LLVMVectorTypeKind &&
         LLVMGetIntTypeWidth(LLVMGetElementType(t)) == 16;
}

/* the i16 products widened to i32 lanes by zero: -1 * 1 reads 65535, not
 * the scalar loop's -1 */
static void product_zext(LLVMValueRef fn) { ck_assert_int_ge(replace_each(fn, sext_16_32, as_zext), 1); }

START_TEST(neg_whole_sum_zext) { check_whole_sum_mutated(product_zext, "narrow lanes"); }
END_TEST

/* the lanes subtract the bytes instead of multiplying them */
static void lanes_sub(LLVMValueRef fn) { ck_assert_int_ge(replace_each(fn, i16_mul, as_sub), 1); }

START_TEST(neg_whole_sum_other_op) { check_whole_sum_mutated(lanes_sub, "vectorised integer reduction"); }
END_TEST

/* the insertelement of B's byte into lane 1 or 3 of the gather */
static bool lane13_byte(LLVMValueRef i) {
  if (!LLVMIsAInsertElementInst(i)) return false;
  LLVMTypeRef t = LLVMTypeOf(i);
  LLVMValueRef k = LLVMGetOperand(i, 2);
  return LLVMGetIntTypeWidth(LLVMGetElementType(t)) == 8 && LLVMIsAConstantInt(k) &&
         (LLVMConstIntGetZExtValue(k) == 1 || LLVMConstIntGetZExtValue(k) == 3);
}

/* lanes 1 and 3 swapped: lane 1 multiplies A at k + 1 by B at k + 3 */
static LLVMValueRef swap_13(LLVMBuilderRef b, LLVMValueRef i) {
  LLVMTypeRef i64 = LLVMInt64TypeInContext(LLVMGetTypeContext(LLVMTypeOf(i)));
  uint64_t k = LLVMConstIntGetZExtValue(LLVMGetOperand(i, 2));
  return LLVMBuildInsertElement(b, LLVMGetOperand(i, 0), LLVMGetOperand(i, 1), LLVMConstInt(i64, 4 - k, 0), "");
}

static void bytes_swapped(LLVMValueRef fn) { ck_assert_int_ge(replace_each(fn, lane13_byte, swap_13), 2); }

START_TEST(neg_whole_sum_lane_moved) { check_whole_sum_mutated(bytes_swapped, "unrolled copies differ"); }
END_TEST

/* Row pointers (styles.c's mtv_rows, `y[j] += A[i][j] * x[i]`, and
 * mm_rows_ikj's `c[j] += aik * b[j]`): clang skips V in two blocks, `n <
 * 4` and, after loading the row pointer A[i], its alias check against
 * that row, each with its own edge to J, so s = phi(M, 0, 0)
 * (kn_lanes_region.c skip_chain; before: "not the shape of a vector loop
 * and its scalar remainder"), and the parts' addresses add the row
 * pointer, a name in the region's proof (kr_param; before: "a row pointer
 * loaded in the nest used other than as a matrix's row"): the plain
 * build's products through row tables */
START_TEST(nested_row_pointers) {
  char simd[1024];
  if (!same_as_plain_in("styles.c", "mtv_rows", "-msimd128", simd, sizeof simd)) return;
  if (!same_as_plain_in("styles.c", "mm_rows_ikj", "-msimd128", simd, sizeof simd)) return;
}
END_TEST

/* `n <u 4`, the chain's skip that keeps V from rows shorter than its lanes */
static bool below_lanes(LLVMValueRef i) {
  return LLVMIsAICmpInst(i) && LLVMGetICmpPredicate(i) == LLVMIntULT && LLVMIsAArgument(LLVMGetOperand(i, 0)) &&
         LLVMIsAConstantInt(LLVMGetOperand(i, 1)) && LLVMConstIntGetSExtValue(LLVMGetOperand(i, 1)) == 4;
}

static LLVMValueRef as_below_two(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildICmp(b, LLVMIntULT, LLVMGetOperand(i, 0), LLVMConstInt(LLVMTypeOf(LLVMGetOperand(i, 0)), 2, 0), "");
}

/* the skip made `n < 2`: rows of 2 or 3 enter V with M = 0, which counts
 * 0 down by 4 (no skip of the chain reads n < L) */
static void skips_below_two(LLVMValueRef fn) { ck_assert_int_eq(replace_each(fn, below_lanes, as_below_two), 1); }

/* mtv_rows unchanged is a product (nested_row_pointers): what the
 * mutation takes away */
static bool row_product(void) {
  char plain[1024];
  return product_in("styles.c", "mtv_rows", "-msimd128", NULL, NULL, plain, sizeof plain);
}

START_TEST(neg_chain_short_rows) {
  if (!row_product()) return;
  product_in("styles.c", "mtv_rows", "-msimd128", skips_below_two,
             "not the shape of a vector loop and its scalar remainder", NULL, 0);
}
END_TEST

/* `zext(r)` of a loaded i32 r that a phi takes: V's counters' start, the
 * row pointer A[i] (R and the peel add their offsets to it first) */
static bool row_start(LLVMValueRef i) {
  if (!LLVMIsAZExtInst(i) || !LLVMIsALoadInst(LLVMGetOperand(i, 0))) return false;
  for (LLVMUseRef u = LLVMGetFirstUse(i); u; u = LLVMGetNextUse(u))
    if (LLVMIsAPHINode(LLVMGetUser(u))) return true;
  return false;
}

static LLVMValueRef as_next_element(LLVMBuilderRef b, LLVMValueRef i) {
  LLVMValueRef r = LLVMGetOperand(i, 0);
  return LLVMBuildZExt(b, LLVMBuildAdd(b, r, LLVMConstInt(LLVMTypeOf(r), 4, 0), ""), LLVMTypeOf(i), "");
}

/* V reads A[i][j + 1] where R and the peel read A[i][j] */
static void vector_next_element(LLVMValueRef fn) { ck_assert_int_ge(replace_each(fn, row_start, as_next_element), 1); }

START_TEST(neg_row_pointer_other_element) {
  if (!row_product()) return;
  product_in("styles.c", "mtv_rows", "-msimd128", vector_next_element, "its parts store different values", NULL, 0);
}
END_TEST

/* s = 1 from the alias check's block, the second skip (J's phi then no
 * longer 0 from every skip: R would start at j = 1 there) */
static bool s_phi_of_skips(LLVMValueRef i) {
  if (!LLVMIsAPHINode(i) || LLVMCountIncoming(i) != 3 || LLVMGetTypeKind(LLVMTypeOf(i)) != LLVMIntegerTypeKind)
    return false;
  int zeros = 0;
  for (unsigned k = 0; k < 3; k++) {
    LLVMValueRef v = LLVMGetIncomingValue(i, k);
    zeros += LLVMIsAConstantInt(v) && LLVMConstIntGetZExtValue(v) == 0;
  }
  return zeros == 2;
}

static void one_from_second_skip(LLVMValueRef fn) {
  int n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      if (!s_phi_of_skips(i)) continue;
      /* the last incoming 0: one of the skips' */
      for (unsigned k = 3; k-- > 0;) {
        LLVMValueRef v = LLVMGetIncomingValue(i, k);
        if (!LLVMIsAConstantInt(v) || LLVMConstIntGetZExtValue(v) != 0) continue;
        LLVMSetOperand(i, k, LLVMConstInt(LLVMTypeOf(i), 1, 0));
        n++;
        break;
      }
    }
  ck_assert_int_ge(n, 1);
}

START_TEST(neg_chain_skip_not_zero) {
  if (!row_product()) return;
  product_in("styles.c", "mtv_rows", "-msimd128", one_from_second_skip,
             "not the shape of a vector loop and its scalar remainder", NULL, 0);
}
END_TEST

/* Reference BLAS's ssyrk_un and ssyr2k_un in tests/gpu/e2e/blas_ref.c,
 * built as an e2e program (its main the only caller of the kernels): the
 * j loop's counter is then an i64 and the l-i regions' test D reads
 * `zext(s) == q`, q that counter from 0 (kn_lanes_region.c last_wide;
 * blas_cols.c's exported ssyrk_un has the i32 `s == j`), before: "not
 * the shape of a vector loop and its scalar remainder": the plain
 * build's products of column j */
START_TEST(nested_column_triangle_wide) {
  char simd[1024];
  app_build = true;
  bool ran = same_as_plain_in("../e2e/blas_ref.c", "kernel_ssyrk_un", "-msimd128", simd, sizeof simd) &&
             same_as_plain_in("../e2e/blas_ref.c", "kernel_ssyr2k_un", "-msimd128", simd, sizeof simd);
  app_build = false;
  (void)ran;
}
END_TEST

/* `icmp eq i64 q, zext(s)`: D's test of the wide form */
static bool wide_last_test(LLVMValueRef i) {
  if (!LLVMIsAICmpInst(i) || LLVMGetICmpPredicate(i) != LLVMIntEQ) return false;
  LLVMValueRef a = LLVMGetOperand(i, 0), b = LLVMGetOperand(i, 1);
  return LLVMIsAPHINode(a) && LLVMIsAZExtInst(b) && LLVMIsAPHINode(LLVMGetOperand(b, 0)) &&
         LLVMGetIntTypeWidth(LLVMTypeOf(a)) == 64;
}

static LLVMValueRef as_q_plus_one(LLVMBuilderRef b, LLVMValueRef i) {
  LLVMValueRef q = LLVMGetOperand(i, 0);
  return LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAdd(b, q, LLVMConstInt(LLVMTypeOf(q), 1, 0), ""), LLVMGetOperand(i, 1),
                       "");
}

/* D made `zext(s) == q + 1` (s == n): the region leaves before R when s
 * == n - 1 no longer, and R counts n - s' = -1 down by 2 */
static void last_one_off(LLVMValueRef fn) { ck_assert_int_ge(replace_each(fn, wide_last_test, as_q_plus_one), 1); }

START_TEST(neg_column_triangle_wide_last) {
  char simd[1024];
  app_build = true;
  if (product_in("../e2e/blas_ref.c", "kernel_ssyrk_un", "-msimd128", NULL, NULL, simd, sizeof simd))
    product_in("../e2e/blas_ref.c", "kernel_ssyrk_un", "-msimd128", last_one_off,
               "not the shape of a vector loop and its scalar remainder", NULL, 0);
  app_build = false;
}
/* ---- a vector loop at the top of a function (kernels/kn_recog_top.c) ---- */

/* Whether the nest stores a scalar too: its remainder's stores. */
static bool stores_scalar(const kn_recog_nest *n) {
  for (int b = 0; b < n->nest->nbody; b++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(n->cfg->blocks[n->nest->body[b]].bb); i;
         i = LLVMGetNextInstruction(i))
      if (LLVMIsAStoreInst(i) && LLVMGetTypeKind(LLVMTypeOf(LLVMGetOperand(i, 0))) != LLVMVectorTypeKind)
        return true;
  return false;
}

/* fn (simd_lanes.c, a 1-D map at the top of its function) with its
 * region as one nest: the only nest offloaded, holding the v128 loop and
 * the scalar remainder, a map over j in [0, n) (n the function's
 * argument n_arg, 1 its first, counted from the constant 0 as the top-tested loop) whose
 * every other param is an argument of the function (the values the
 * region's blocks compute are read at j = 0), the nodes those of the
 * scalar loop's map alone. */
static void check_top_region_at(const char *src, const char *fn, kn_type type, unsigned elem, unsigned n_arg) {
  fixture alone, f;
  recognise_in(&alone, src, fn);
  if (alone.skipped) return;
  whole_regions = true;
  recognise_in(&f, src, fn);
  whole_regions = false;
  int ok = 0;
  const kn_recog_nest *n = NULL;
  for (int i = 0; i < f.res.nnests; i++)
    if (f.res.nests[i].ok) n = &f.res.nests[i], ok++;
  if (ok != 1 || !stores_vector(n) || !stores_scalar(n)) dump(&f);
  ck_assert_int_eq(ok, 1);
  ck_assert(stores_vector(n) && stores_scalar(n));
  const kn_map *m = &n->desc.map;
  ck_assert_int_eq(n->desc.kind, KN_MAP);
  ck_assert_uint_eq(m->ndims, 1);
  ck_assert_int_eq(m->out_type, type);
  ck_assert_int_eq(m->out_addr.iv_coeff[0], elem);
  ck_assert(m->trip[0].is_param);
  const kn_bind *t = &n->binds[m->trip[0].value];
  LLVMValueRef func = LLVMGetParamParent(t->trip->bound);
  ck_assert_int_eq(t->kind, KN_BIND_TRIP);
  ck_assert(t->top_tested && t->scale == 1 && !t->guard);
  ck_assert(LLVMIsAConstantInt(t->trip->start) && LLVMConstIntGetZExtValue(t->trip->start) == 0);
  ck_assert_ptr_eq(t->trip->bound, LLVMGetParam(func, n_arg));
  for (unsigned i = 0; i < n->desc.nparams; i++)
    if (n->binds[i].kind == KN_BIND_VALUE) ck_assert(LLVMIsAArgument(n->binds[i].value));
  const kn_recog_nest *r = map_of(&alone, false);
  /* the scalar loop's own overlap check (none without loads: fill.c) */
  ck_assert(n->check_overlap == r->check_overlap);
  ck_assert(n->check_overlap || !count_op(n, KN_E_LOAD));
  ck_assert_uint_eq(n->desc.nnodes, r->desc.nnodes);
  for (kn_op op = 0; op < KN_E_COUNT; op++) ck_assert_int_eq(count_op(n, op), count_op(r, op));
  release(&f);
  release(&alone);
}

static void check_top_region_in(const char *src, const char *fn, kn_type type, unsigned elem) {
  check_top_region_at(src, fn, type, elem, 1);
}

static void check_top_region(const char *fn, kn_type type, unsigned elem) {
  check_top_region_in("simd_lanes.c", fn, type, elem);
}

/* fn of tests/gpu/e2e/map1d.c, built as the e2e tests build it. */
static void check_top_region_map1d(const char *fn, kn_type type, unsigned elem) {
  app_build = true;
  check_top_region_in("../e2e/map1d.c", fn, type, elem);
  app_build = false;
}

START_TEST(top_saxpy) { check_top_region("saxpy4", KN_F32, 4); }
END_TEST

/* The remainder R unrolled by 4 after its prologue loop (K = n & 3 from
 * s, P from s to s + K): one nest over [0, n).  R's counters start at
 * the arrays' bases, s' * 4 added beside them (kr_region_iv's k = 0). */
START_TEST(top_prologue) { check_top_region("scale_i32", KN_I32, 4); }
END_TEST

/* The blocks of the region in a function: the false side of its entry's
 * test (n < 1), every block it dominates; the done block ends in `ret`. */
static LLVMBasicBlockRef skip_block(LLVMValueRef fn) {
  LLVMValueRef br = LLVMGetBasicBlockTerminator(LLVMGetEntryBasicBlock(fn));
  ck_assert(br && LLVMIsABranchInst(br) && LLVMIsConditional(br));
  return LLVMGetSuccessor(br, 1);
}

static LLVMBasicBlockRef ret_block(LLVMValueRef fn) {
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    if (LLVMIsAReturnInst(LLVMGetBasicBlockTerminator(bb))) return bb;
  ck_abort_msg("no return block");
  return NULL;
}

/* A value of the region reaching its done block: a phi there taking 1
 * from the skip's way past V... and 2 from each other block of the
 * region (0 from the entry): the launch, which leaves to done from the
 * region's entry, could give it no one value. */
static void phi_after(LLVMValueRef fn) {
  LLVMBasicBlockRef done = ret_block(fn), entry = LLVMGetEntryBasicBlock(fn);
  LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(fn));
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  LLVMPositionBuilderBefore(b, LLVMGetFirstInstruction(done));
  LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
  LLVMValueRef phi = LLVMBuildPhi(b, i32, "after");
  int k = 0;
  for (LLVMUseRef u = LLVMGetFirstUse(LLVMBasicBlockAsValue(done)); u; u = LLVMGetNextUse(u)) {
    LLVMBasicBlockRef from = LLVMGetInstructionParent(LLVMGetUser(u));
    LLVMValueRef v = LLVMConstInt(i32, from == entry ? 0 : (unsigned)++k, false);
    LLVMAddIncoming(phi, &v, &from, 1);
  }
  ck_assert_int_ge(k, 2);
  LLVMDisposeBuilder(b);
}

/* A store of the region outside its loops (in the skip S): not the
 * scalar loop's, so the region is no kernel of it. */
static void store_in_skip(LLVMValueRef fn) {
  LLVMBasicBlockRef s = skip_block(fn);
  LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(fn));
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(s));
  /* the linear memory's base: the first pointer loaded from vmctx */
  LLVMValueRef base = NULL;
  for (LLVMValueRef i = LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(fn)); i && !base; i = LLVMGetNextInstruction(i))
    if (LLVMIsALoadInst(i) && LLVMGetOperand(i, 0) == LLVMGetParam(fn, 0)) base = i;
  ck_assert_ptr_nonnull(base);
  LLVMBuildStore(b, LLVMConstInt(LLVMInt32TypeInContext(ctx), 7, false), base);
  LLVMDisposeBuilder(b);
}

/* Mutated so the region is not the scalar loop alone: no nest holds both
 * loops, and the loops are nests of their own as before (the vector
 * loop's map read lane by lane). */
static void check_no_top_region(const char *fn, mutation mutate) {
  fixture f;
  whole_regions = true;
  recognise_mutated(&f, "simd_lanes.c", fn, "-msimd128", mutate);
  whole_regions = false;
  if (f.skipped) return;
  for (int i = 0; i < f.res.nnests; i++)
    ck_assert(!(f.res.nests[i].ok && stores_vector(&f.res.nests[i]) && stores_scalar(&f.res.nests[i])));
  map_of(&f, true);
  map_of(&f, false);
  release(&f);
}

START_TEST(neg_top_value_after) { check_no_top_region("saxpy4", phi_after); }
END_TEST

START_TEST(neg_top_other_store) { check_no_top_region("saxpy4", store_in_skip); }
END_TEST

/* R's `s' << 2`, added beside its counters (which start without s'), as
 * s' << 3: R then stores from 2 s' on, not from s', and j in [s', 2 s')
 * is never stored; the region's proof (sprime_drop: s' part against j
 * part) refuses it. */
static bool sprime_times_four(LLVMValueRef i) {
  if (!LLVMIsABinaryOperator(i) || LLVMGetInstructionOpcode(i) != LLVMShl) return false;
  LLVMValueRef x = LLVMGetOperand(i, 0), k = LLVMGetOperand(i, 1);
  return LLVMIsAPHINode(x) && LLVMCountIncoming(x) == 3 && LLVMIsAConstantInt(k) && LLVMConstIntGetZExtValue(k) == 2;
}

static LLVMValueRef as_times_eight(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildShl(b, LLVMGetOperand(i, 0), LLVMConstInt(LLVMTypeOf(i), 3, false), "");
}

static void sprime_doubled(LLVMValueRef fn) { ck_assert_int_ge(replace_each(fn, sprime_times_four, as_times_eight), 1); }

START_TEST(neg_top_prologue_gap) { check_no_top_region("scale_i32", sprime_doubled); }
END_TEST

/* V's forms of R's expression (kn_recog_expr.c same_rewritten): k_f32_select's
 * `x * 0.5 - b` as `splat(-b) + x * 0.5`; k_f64_select's `o < d ? d - o :
 * o * 0.25` as `o >= d (unordered) ? o * 0.25 : d - o`; k_f32_const's
 * NaN-propagating `t + (isnan(t) ? t : 1)` as `t + 1`. */
START_TEST(top_sub_as_add) { check_top_region_map1d("k_f32_select", KN_F32, 4); }
END_TEST

START_TEST(top_select_swapped) { check_top_region_map1d("k_f64_select", KN_F64, 8); }
END_TEST

START_TEST(top_nan_add) { check_top_region_map1d("k_f32_const", KN_F32, 4); }
END_TEST

/* fill.c's `x[i] = 0.5f`: V stores the constant as `<2 x i64>` (f32
 * pairs), R as `i32`; read as four i32 lanes (kn_lanes_region.c
 * const_stores_as_rep), the region is one map of R's stores. */
/* fn of tests/gpu/e2e/pure_calls.c at -O2 -msimd128 (app build, wasi-libc's
 * libm): clang's vector loop calls expf once per lane (extractelement,
 * the call, insertelement), read lane by lane as R's call
 * (kn_lanes.c kr_lane_extract); one region, one nest. */
static void check_top_calls(const char *fn) {
  app_build = true;
  check_top_region_in("../e2e/pure_calls.c", fn, KN_F32, 4);
  app_build = false;
}

START_TEST(top_lane_calls) { check_top_calls("exp_map"); }
END_TEST

/* swiglu's `1.0f / (1.0f + expf(-v))`: R's division is the lowering's
 * NaN-propagating `isnan(d) ? d + d : 1 / d`, V's a plain division
 * (kn_recog_expr.c same_rewritten). */
START_TEST(top_lane_calls_quotient) { check_top_calls("swiglu"); }
END_TEST

START_TEST(top_const_pairs) { check_top_region_in("fill.c", "fill_halves", KN_I32, 4); }
END_TEST

/* fn of an e2e program (its app build at -O2 -msimd128) with regions
 * read: no nest ok, its vector loop refused and its scalar remainder
 * with it ("the scalar remainder of a vector (SIMD) loop that stays on
 * the CPU"), not offloaded alone as if it were the loop
 * (kernels/kn_recog_rest.c). */
static void check_rest_refused(const char *src, const char *fn) {
  fixture f;
  app_build = true;
  whole_regions = true;
  recognise_in(&f, src, fn);
  whole_regions = false;
  app_build = false;
  if (f.skipped) return;
  int ok = 0, rests = 0;
  for (int i = 0; i < f.res.nnests; i++) {
    ok += f.res.nests[i].ok;
    rests += !f.res.nests[i].ok && strstr(f.res.nests[i].reason, "scalar remainder of a vector") != NULL;
  }
  if (ok || rests < 1) dump(&f);
  ck_assert_int_eq(ok, 0);
  ck_assert_int_ge(rests, 1); /* R (and its bounds-checked copy) */
  release(&f);
}

/* map1d.c's k_i32_select: its v128 loop is refused (lanes moved between
 * shapes), so is its remainder (at most 3 iterations). */
START_TEST(neg_top_remainder_alone) { check_rest_refused("../e2e/map1d.c", "k_i32_select"); }
END_TEST

/* counter.c's k_grid: the x loop of each row y is vectorised (a vector
 * counter `x ^ 5` inside the y loop), and that region is refused; its
 * remainder, a loop of the y loop's body, is refused with it, not
 * offloaded alone once a row (R's siblings). */
START_TEST(neg_row_remainder_alone) { check_rest_refused("../e2e/counter.c", "k_grid"); }
END_TEST

/* e2e simd_fills.c's round_of: its own fill after a printf and the
 * inlined fill_half, ramp and ramp_i32, each a region at the top: four
 * nests, each holding its v128 loop and its remainder (none of V or R
 * alone).  ramp_i32's V addresses b through GVN's phi of copies of
 * `zext b` on the paths out of ramp's region (kn_recog_affine.c
 * live_value); read as the phi, its stores differed from R's. */
START_TEST(top_back_to_back) {
  fixture f;
  app_build = true;
  whole_regions = true;
  recognise_mutated(&f, "../e2e/simd_fills.c", "round_of", "-msimd128", NULL);
  whole_regions = false;
  app_build = false;
  if (f.skipped) return;
  int regions = 0, alone = 0;
  for (int i = 0; i < f.res.nnests; i++) {
    const kn_recog_nest *n = &f.res.nests[i];
    if (!n->ok || (!stores_vector(n) && !stores_scalar(n))) continue;
    if (n->desc.kind != KN_MAP || ir_loop_checked(n->cfg, n->nest)) continue;
    if (stores_vector(n) && stores_scalar(n)) regions++;
    else alone++;
  }
  if (regions != 4 || alone) dump(&f);
  ck_assert_int_eq(regions, 4);
  ck_assert_int_eq(alone, 0);
  release(&f);
}
END_TEST

/* counter.c's ramp `a[i] = (3 * i + from) * 0.5f`: V's lanes are a
 * vector counter times 3 plus splat(from), R's a scalar counter from
 * `3 s + from` by 3; read as one affine form each (kn_lanes.c lane_form,
 * kn_recog_expr.c kr_counter_value's term order), the region is one map. */
START_TEST(top_vector_counter) { check_top_region_at("counter.c", "ramp", KN_F32, 4, 2); }
END_TEST

/* An integer sum in lanes at the top of its function (V's i32x4 or
 * i64x2 accumulator from zero, its lanes added after V, R going on from
 * that sum: kernels/kn_recog_top.c (g)): one nest, the plain -O2 build's
 * reduction (the same op, type and nodes, n from 0, init 0), whose result
 * is the done block's phi; `mutate`, when given, must make it refused. */
static void check_top_red(const char *src, const char *fn, kn_type type, kn_red_op op, mutation mutate) {
  fixture plain, f;
  recognise_mutated(&plain, src, fn, "", NULL);
  if (plain.skipped) return;
  whole_regions = true;
  recognise_mutated(&f, src, fn, "-msimd128", mutate);
  whole_regions = false;
  const kn_recog_nest *r = NULL, *n = NULL;
  int ok = 0;
  for (int i = 0; i < plain.res.nnests; i++)
    if (plain.res.nests[i].ok && plain.res.nests[i].desc.kind == KN_REDUCE) r = &plain.res.nests[i];
  for (int i = 0; i < f.res.nnests; i++)
    if (f.res.nests[i].ok) n = &f.res.nests[i], ok++;
  ck_assert_msg(r, "%s: the plain build's reduction", fn);
  if (mutate) {
    if (ok) dump(&f);
    ck_assert_int_eq(ok, 0);
    release(&f);
    release(&plain);
    return;
  }
  if (ok != 1) dump(&f);
  ck_assert_int_eq(ok, 1);
  ck_assert_int_eq(n->desc.kind, KN_REDUCE);
  /* the region: V (vector accumulator) and R in one nest */
  ck_assert(ir_loop_has_vectors(n->cfg, n->nest));
  ck_assert_int_eq(n->desc.reduce.op, op);
  ck_assert_int_eq(n->desc.reduce.op, r->desc.reduce.op);
  ck_assert_int_eq(n->desc.reduce.type, type);
  ck_assert_int_eq(r->desc.reduce.type, type);
  ck_assert_uint_eq(n->desc.nnodes, r->desc.nnodes);
  for (kn_op op = 0; op < KN_E_COUNT; op++) ck_assert_int_eq(count_op(n, op), count_op(r, op));
  /* init: the scalar loop's start (0, or INT_MIN for a max), not V's
   * lanes combined (R's own start) */
  const kn_bind *init = &n->binds[n->desc.reduce.init_param];
  const kn_bind *rinit = &r->binds[r->desc.reduce.init_param];
  ck_assert_int_eq(init->kind, KN_BIND_VALUE);
  ck_assert(LLVMIsAConstantInt(init->value) && LLVMIsAConstantInt(rinit->value));
  ck_assert(LLVMConstIntGetSExtValue(init->value) == LLVMConstIntGetSExtValue(rinit->value));
  /* the result: the return block's phi, which the launch's path feeds */
  ck_assert(LLVMIsAPHINode(n->result));
  ck_assert(LLVMIsAReturnInst(LLVMGetBasicBlockTerminator(LLVMGetInstructionParent(n->result))));
  /* n from 0 */
  ck_assert(n->desc.reduce.trip.is_param);
  const kn_bind *t = &n->binds[n->desc.reduce.trip.value];
  ck_assert_int_eq(t->kind, KN_BIND_TRIP);
  ck_assert(LLVMIsAConstantInt(t->trip->start) && LLVMConstIntGetZExtValue(t->trip->start) == 0);
  release(&f);
  release(&plain);
}

static void check_top_sum(const char *src, const char *fn, kn_type type, mutation mutate) {
  check_top_red(src, fn, type, KN_RED_ADD, mutate);
}

START_TEST(top_sum_dot_i32) { check_top_sum("dot_i32.c", "dot_i32", KN_I32, NULL); }
END_TEST

START_TEST(top_sum_dot_i64) { check_top_sum("dot_i64.c", "dot_i64", KN_I64, NULL); }
END_TEST

/* i32 terms summed into an i64: V loads two i32 lanes (v128.load32x2_s)
 * and sign-extends them to i64x2 (kn_lanes.c half_load_extended); the
 * plain build's i64 sum of sign-extended loads. */
START_TEST(top_sum_widen) { check_top_sum("../e2e/reduce_int.c", "k_sum_widen", KN_I64, NULL); }
END_TEST

/* A max in lanes (llvm.smax on i32x4 from a splat of INT_MIN, combined
 * after V by smax and shuffles): the plain build's max, from INT_MIN. */
START_TEST(top_max_i32) { check_top_red("max_i32.c", "max_i32", KN_I32, KN_RED_SMAX, NULL); }
END_TEST

/* V's lanes started at 0 where the scalar max starts at INT_MIN (max is
 * idempotent, but 0 is not X0): refused. */
static void max_lanes_from_zero(LLVMValueRef fn) {
  int n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i && LLVMIsAPHINode(i); i = LLVMGetNextInstruction(i))
      for (unsigned k = 0; k < LLVMCountIncoming(i); k++) {
        LLVMValueRef v = LLVMGetIncomingValue(i, k);
        if (LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMVectorTypeKind && LLVMIsAConstant(v) && !LLVMIsNull(v)) {
          LLVMSetOperand(i, k, LLVMConstNull(LLVMTypeOf(v)));
          n++;
        }
      }
  ck_assert_int_ge(n, 1);
}

START_TEST(neg_top_max_from_zero) { check_top_red("max_i32.c", "max_i32", KN_I32, KN_RED_SMAX, max_lanes_from_zero); }
END_TEST

/* V's lane product `mul` as `sub` (lanes_subtract): V's lanes no longer
 * add R's term, the region's proof (sum_terms_alike) refuses it; the
 * first shuffle of V's lanes after V as <0, 1, 0, 0> (hsum_twice_each):
 * lanes 0 and 1 added twice, 2 and 3 never (kr_lane_counts), refused. */
START_TEST(neg_top_sum_other_term) { check_top_sum("dot_i32.c", "dot_i32", KN_I32, lanes_subtract); }
END_TEST

START_TEST(neg_top_sum_lane_twice) { check_top_sum("dot_i32.c", "dot_i32", KN_I32, hsum_twice_each); }
END_TEST

/* V's `fcmp uge` as `fcmp ugt` (no longer R's compare's complement where
 * o == d): not the scalar loop, refused. */
static bool vector_uge(LLVMValueRef i) {
  return LLVMIsAFCmpInst(i) && LLVMGetFCmpPredicate(i) == LLVMRealUGE &&
         LLVMGetTypeKind(LLVMTypeOf(i)) == LLVMVectorTypeKind;
}

static LLVMValueRef as_ugt(LLVMBuilderRef b, LLVMValueRef i) {
  return LLVMBuildFCmp(b, LLVMRealUGT, LLVMGetOperand(i, 0), LLVMGetOperand(i, 1), "");
}

static void select_off_by_equal(LLVMValueRef fn) { ck_assert_int_ge(replace_each(fn, vector_uge, as_ugt), 1); }

START_TEST(neg_top_select_swapped) {
  app_build = true;
  fixture f;
  whole_regions = true;
  recognise_mutated(&f, "../e2e/map1d.c", "k_f64_select", "-msimd128", select_off_by_equal);
  whole_regions = false;
  app_build = false;
  if (f.skipped) return;
  for (int i = 0; i < f.res.nnests; i++)
    ck_assert(!(f.res.nests[i].ok && stores_vector(&f.res.nests[i]) && stores_scalar(&f.res.nests[i])));
  release(&f);
}
END_TEST

static Suite *recog_lanes_suite(void) {
  Suite *s = suite_create("recog_lanes");
  TCase *tc = tcase_create("lanes");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, lanes_saxpy_f32);
  tcase_add_test(tc, lanes_scale_i32);
  tcase_add_test(tc, lanes_axpy_f64);
  tcase_add_test(tc, neg_lanes_reversed);
  tcase_add_test(tc, neg_lanes_rotated);
  tcase_add_test(tc, lanes_shuffled_back);
  tcase_add_test(tc, lanes_two_stores);
  tcase_add_test(tc, neg_lanes_reduction);
  tcase_add_test(tc, lanes_counter);
  tcase_add_test(tc, neg_lanes_counter_step);
  tcase_add_test(tc, neg_lanes_float_sum);
  tcase_add_test(tc, neg_lanes_inner);
  tcase_add_test(tc, nested_product);
  tcase_add_test(tc, neg_region_other_value);
  tcase_add_test(tc, neg_region_skips_tail);
  tcase_add_test(tc, neg_region_skips_rows);
  tcase_add_test(tc, neg_nested_float_sum);
  tcase_add_test(tc, nested_int_sum);
  tcase_add_test(tc, nested_product_o3);
  tcase_add_test(tc, nested_i8_widened);
  tcase_add_test(tc, neg_i8_widened_zext);
  tcase_add_test(tc, neg_region_o3_guard);
  tcase_add_test(tc, nested_int_sum_o3);
  tcase_add_test(tc, nested_i8_sum_o3);
  tcase_add_test(tc, nested_i8_product);
  tcase_add_test(tc, neg_narrow_other_op);
  tcase_add_test(tc, nested_i8_sum);
  tcase_add_test(tc, nested_i8_product_no_unroll);
  tcase_add_test(tc, nested_widened_counters);
  tcase_add_test(tc, neg_narrow_sum_other_op);
  tcase_add_test(tc, neg_sum_other_terms);
  tcase_add_test(tc, neg_sum_lane_twice);
  tcase_add_test(tc, neg_sum_skips_rows);
  tcase_add_test(tc, whole_i8_sum);
  tcase_add_test(tc, unrolled_i8_sum);
  tcase_add_test(tc, mixed_u8_s8_sum);
  tcase_add_test(tc, neg_whole_sum_lane_twice);
  tcase_add_test(tc, neg_whole_sum_zext);
  tcase_add_test(tc, neg_whole_sum_other_op);
  tcase_add_test(tc, neg_whole_sum_lane_moved);
  tcase_add_test(tc, nested_triangle);
  tcase_add_test(tc, nested_triangle_o3);
  tcase_add_test(tc, neg_triangle_skips_tail);
  tcase_add_test(tc, neg_triangle_map);
  tcase_add_test(tc, nested_atax_parts);
  tcase_add_test(tc, neg_atax_other_value);
  tcase_add_test(tc, nested_transpose_unit);
  tcase_add_test(tc, neg_transpose_other_stride);
  tcase_add_test(tc, nested_ijk_unit);
  tcase_add_test(tc, neg_ijk_other_stride);
  tcase_add_test(tc, nested_center);
  tcase_add_test(tc, neg_prol_count);
  tcase_add_test(tc, neg_prol_leaves_early);
  tcase_add_test(tc, neg_prol_stride);
  suite_add_tcase(s, tc);
  /* regions in a nest inside another loop (CK_RUN_CASE=column: alone) */
  TCase *column = tcase_create("column");
  tcase_set_timeout(column, 60);
  tcase_add_test(column, nested_column_product);
  tcase_add_test(column, neg_column_peel_elsewhere);
  tcase_add_test(column, nested_column_triangle);
  tcase_add_test(column, neg_column_triangle_wraps);
  tcase_add_test(column, nested_constant_alternative);
  tcase_add_test(column, neg_constant_alternative_short);
  tcase_add_test(column, straight_vector_alternative);
  tcase_add_test(column, neg_straight_vector_short);
  tcase_add_test(column, nested_from_one);
  tcase_add_test(column, neg_from_one_gap);
  tcase_add_test(column, neg_from_one_guard);
  tcase_add_test(column, nested_from_one_guarded);
  tcase_add_test(column, neg_from_one_guard_inside);
  suite_add_tcase(s, column);
  /* regions skipped by a chain of tests (CK_RUN_CASE=chain: alone) */
  TCase *chain = tcase_create("chain");
  tcase_set_timeout(chain, 60);
  tcase_add_test(chain, nested_row_pointers);
  tcase_add_test(chain, neg_chain_short_rows);
  tcase_add_test(chain, neg_row_pointer_other_element);
  tcase_add_test(chain, neg_chain_skip_not_zero);
  tcase_add_test(chain, nested_column_triangle_wide);
  tcase_add_test(chain, neg_column_triangle_wide_last);
  suite_add_tcase(s, chain);
  /* a region at the top of a function as one nest (CK_RUN_CASE=top: alone) */
  TCase *top = tcase_create("top");
  tcase_set_timeout(top, 60);
  tcase_add_test(top, top_saxpy);
  tcase_add_test(top, top_prologue);
  tcase_add_test(top, neg_top_prologue_gap);
  tcase_add_test(top, top_sub_as_add);
  tcase_add_test(top, top_select_swapped);
  tcase_add_test(top, top_nan_add);
  tcase_add_test(top, top_const_pairs);
  tcase_add_test(top, top_lane_calls);
  tcase_add_test(top, top_lane_calls_quotient);
  tcase_add_test(top, top_vector_counter);
  tcase_add_test(top, top_back_to_back);
  tcase_add_test(top, neg_row_remainder_alone);
  tcase_add_test(top, neg_top_remainder_alone);
  tcase_add_test(top, top_sum_dot_i32);
  tcase_add_test(top, top_sum_dot_i64);
  tcase_add_test(top, neg_top_sum_other_term);
  tcase_add_test(top, neg_top_sum_lane_twice);
  tcase_add_test(top, top_max_i32);
  tcase_add_test(top, top_sum_widen);
  tcase_add_test(top, neg_top_max_from_zero);
  tcase_add_test(top, neg_top_select_swapped);
  tcase_add_test(top, neg_top_value_after);
  tcase_add_test(top, neg_top_other_store);
  suite_add_tcase(s, top);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(recog_lanes_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
