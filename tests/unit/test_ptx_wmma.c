/* test_ptx_wmma.c: Check suite "wmma": tensor-core matmul kernels for
 * sm_75/80/90: on sm_80/90 mma.sync m16n8k32 for int8 (always) and wmma
 * m16n16k8 for f32 (only with tf32), both fed by cp.async, never
 * .satfinite, the exact kernel elsewhere, ASCII, and ptxas when present;
 * with tensor cores also sm_90a: wgmma.mma_async with the sm_90 body
 * inside for other shapes, and the packed product's two entries (ABI 5):
 * NAME_pack and NAME_tc with bulk copies, mbarriers and setmaxnreg, which
 * ptxas must not serialise (warning C7515). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptx.h"

#define PTXAS "/usr/local/cuda/bin/ptxas"
#define C(v) {false, v}
#define P(i) {true, i}
#define ROW_MAJOR(off, cols) {off, cols, C(1)}

/* p0 M, p1 N, p2 K, p3 &A, p4 &B, p5 &C, all row-major. */
#define MM(t, sgn, acc) {.kind = KN_MATMUL, .nparams = 6,                                   \
                         .matmul = {.m = P(0), .n = P(1), .k = P(2), .type = t,            \
                                    .a_signed = sgn, .b_signed = sgn, .accumulate = acc,                    \
                                    .a = ROW_MAJOR(P(3), P(2)), .b = ROW_MAJOR(P(4), P(1)), \
                                    .c = ROW_MAJOR(P(5), P(1)), .align = 1}}

typedef struct {
  const char *name;
  kn_desc desc;
  bool tf32;
  const char *wmma;        /* the mma on sm_80/90; NULL: no tensor cores anywhere */
  const char *wgmma;       /* the wgmma on sm_90a */
  unsigned tc_bytes;       /* the packed product's element size, 0: none */
  bool packed_only;        /* the main sm_90a entry runs the wmma body */
} wmma_case;

static const wmma_case cases[] = {
  {"mm_s8", MM(KN_MM_I8_I32, true, false), false, "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
   "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8", 1, false},
  {"mm_u8_acc", MM(KN_MM_I8_I32, false, true), false, "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32",
   "wgmma.mma_async.sync.aligned.m64n128k32.s32.u8.u8", 1, false},
  {"mm_tf32", MM(KN_MM_F32, false, false), true, "wmma.mma.sync.aligned.row.row.m16n16k8.f32.tf32.tf32.f32",
   "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32", 4, false},
  {"mm_f32_exact", MM(KN_MM_F32, false, false), false, NULL, NULL, 0, false},
  /* u8 x s8: mma.sync takes mixed types; wgmma only in the packed
   * product, at PTX ISA 8.4 */
  {"mm_u8s8", {.kind = KN_MATMUL, .nparams = 6,
               .matmul = {.m = P(0), .n = P(1), .k = P(2), .type = KN_MM_I8_I32, .a_signed = false,
                          .b_signed = true, .a = ROW_MAJOR(P(3), P(2)), .b = ROW_MAJOR(P(4), P(1)),
                          .c = ROW_MAJOR(P(5), P(1)), .align = 1}},
   false, "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32",
   "wgmma.mma_async.sync.aligned.m64n128k32.s32.u8.s8", 1, true},
  /* C = bias row (p6) + A B: the packed product adds the bias exactly */
  {"mm_s8_bias", {.kind = KN_MATMUL, .nparams = 7,
                  .matmul = {.m = P(0), .n = P(1), .k = P(2), .type = KN_MM_I8_I32, .a_signed = true,
                             .b_signed = true, .accumulate = true, .has_start = true,
                             .a = ROW_MAJOR(P(3), P(2)), .b = ROW_MAJOR(P(4), P(1)),
                             .c = ROW_MAJOR(P(5), P(1)), .start = {P(6), C(0), C(1)}, .align = 1}},
   false, "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
   "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8", 1, true},
  {"mm_s8_tiny", {.kind = KN_MATMUL, .nparams = 3,
                  .matmul = {.m = C(32), .n = C(32), .k = C(32), .type = KN_MM_I8_I32,
                             .a_signed = true, .b_signed = true, .a = ROW_MAJOR(P(0), C(32)),
                             .b = ROW_MAJOR(P(1), C(32)), .c = ROW_MAJOR(P(2), C(32)),
                             .align = 1}}, false, NULL, NULL, 0, false},
};

/* ptxas assembles text, and says nothing of serialised wgmma (C7515). */
static bool ptxas_accepts(const char *text, unsigned sm, bool specific) {
  char path[] = "/tmp/test_wmma_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  FILE *f = fdopen(fd, "w");
  fputs(text, f);
  fclose(f);
  char cmd[256];
  snprintf(cmd, sizeof cmd, PTXAS " -arch=sm_%u%s %s -o /dev/null 2>&1", sm, specific ? "a" : "", path);
  FILE *p = popen(cmd, "r");
  ck_assert_ptr_nonnull(p);
  char line[512];
  bool serialised = false;
  while (fgets(line, sizeof line, p)) serialised |= strstr(line, "C7515") != NULL;
  int status = pclose(p);
  unlink(path);
  return status == 0 && !serialised;
}

/* The packed product's entries in an sm_90a text. */
static void check_packed(const wmma_case *tc, const ptx_out *out, const char *text) {
  char entry[96];
  static const char *const parts[] = {
    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
    "mbarrier.arrive.expect_tx.shared::cta.b64", "mbarrier.try_wait.parity.shared::cta.b64",
    "setmaxnreg.inc.sync.aligned.u32", "setmaxnreg.dec.sync.aligned.u32", ".extern .shared",
    ".maxntid 384, 1, 1"};
  for (unsigned i = 0; i < 2; i++) {
    snprintf(entry, sizeof entry, ".entry %s_%s(", tc->name, i ? "tc" : "pack");
    ck_assert_msg(strstr(text, entry), "%s sm_90a: no %s", tc->name, entry);
  }
  for (unsigned i = 0; i < sizeof parts / sizeof parts[0]; i++)
    ck_assert_msg(strstr(text, parts[i]), "%s sm_90a: no %s", tc->name, parts[i]);
  bool mixed = tc->desc.matmul.a_signed != tc->desc.matmul.b_signed;
  ck_assert_uint_ge(out->codes[3].ptx_isa, mixed ? 84 : 80);
}

START_TEST(test_case_all_archs) {
  const wmma_case *tc = &cases[_i];
  tw_arena arena = {0};
  tw_diag diag = {0};
  ptx_out out;
  ptx_options opts = {.tf32 = tc->tf32};
  ck_assert_msg(ptx_generate_opts(&tc->desc, tc->name, NULL, 0, &opts, &arena, &out, &diag),
                "%s: %s", tc->name, diag.msg);
  ck_assert_uint_eq(out.ncodes, tc->wgmma ? 4 : 3);
  ck_assert_uint_eq(out.plan.tc_elem_bytes, tc->tc_bytes);
  bool have_ptxas = access(PTXAS, X_OK) == 0;
  if (!have_ptxas) printf("%s: skipped: ptxas not installed\n", tc->name);
  for (unsigned a = 0; a < out.ncodes; a++) {
    const char *text = out.codes[a].text;
    unsigned sm = out.codes[a].sm;
    bool specific = out.codes[a].specific;
    ck_assert(specific == (a == 3));
    if (specific) {
      ck_assert_uint_eq(sm, 90);
      ck_assert_uint_ge(out.codes[a].ptx_isa, 80);
      ck_assert_msg(strstr(text, "\n.target sm_90a"), "%s: not sm_90a", tc->name);
      ck_assert_msg(strstr(text, tc->wgmma), "%s sm_90a: no %s", tc->name, tc->wgmma);
      ck_assert_msg(tc->packed_only || strstr(text, "fence.proxy.async.shared::cta"),
                    "%s sm_90a: no proxy fence", tc->name);
      ck_assert_msg(strstr(text, "wgmma.wait_group.sync.aligned 0"), "%s sm_90a: no final wait", tc->name);
      check_packed(tc, &out, text);
    } else {
      ck_assert_msg(!strstr(text, "wgmma"), "%s sm_%u: wgmma", tc->name, sm);
    }
    ck_assert(ptx_is_ascii(text, strlen(text)));
    bool want = tc->wmma && sm >= 80;
    ck_assert_msg(!want || strstr(text, tc->wmma), "%s sm_%u: no %s", tc->name, sm, tc->wmma);
    ck_assert_msg(want || !strstr(text, "mma."), "%s sm_%u: unexpected mma", tc->name, sm);
    ck_assert_msg(!want || strstr(text, "cp.async.cg.shared.global"), "%s sm_%u: no cp.async", tc->name, sm);
    ck_assert_msg(!strstr(text, "satfinite"), "%s sm_%u: .satfinite", tc->name, sm);
    ck_assert_msg(!want || !tc->tf32 || strstr(text, "cvt.rna.tf32.f32"), "%s: no cvt.rna", tc->name);
    ck_assert_msg(!strstr(text, "fma") && !strstr(text, ".ftz"), "%s sm_%u: fma/ftz", tc->name, sm);
    if (have_ptxas)
      ck_assert_msg(ptxas_accepts(text, sm, specific), "%s sm_%u%s: ptxas rejects", tc->name, sm,
                    specific ? "a" : "");
  }
  tw_arena_free(&arena);
}
END_TEST

/* All archs launch with the same geometry, so the exact fallback (sm_75)
 * must be correct under the wmma launch: 16x16 threads, 128x128 per block. */
START_TEST(test_launch_shape) {
  tw_arena arena = {0};
  tw_diag diag = {0};
  ptx_out out;
  ck_assert(ptx_generate(&cases[0].desc, "mm", NULL, 0, &arena, &out, &diag));
  ck_assert_uint_eq(out.plan.launch.block[0] * out.plan.launch.block[1], 256);
  ck_assert_uint_eq(out.plan.launch.per_block[0], 128);
  int64_t params[6] = {4096, 300, 64, 0, 0, 0};
  uint32_t grid[3];
  ptx_launch_grid(&out.plan.launch, params, grid);
  ck_assert_uint_eq(grid[0], 3);
  ck_assert_uint_eq(grid[1], 32);
  tw_arena_free(&arena);
}
END_TEST

static Suite *wmma_suite(void) {
  Suite *s = suite_create("wmma");
  TCase *tc = tcase_create("kernels");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_case_all_archs, 0, sizeof cases / sizeof cases[0]);
  tcase_add_test(tc, test_launch_shape);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(wmma_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
