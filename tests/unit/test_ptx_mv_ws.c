/* test_ptx_mv_ws.c: Check suite "ptx_mv_ws": the warp-specialised
 * variant of the matrix-vector kernel (ptx/ptx_matvec.c built with
 * PTX_MV_WS=2 PTX_MV_FIRST=64 PTX_MV_PDL=1, as `make gpu-mv-variants`
 * builds 16-16384-4-ws2-f64-pdl; this binary links that object ahead of
 * libtwasmc's, see the Makefile).  The vector body of sm_80 and sm_90
 * code copies W and v with cp.async into a ring and hands buffers over
 * with named barriers; sm_75 code (no cp.async) keeps the committed
 * body; griddepcontrol only in sm_90 code.  Every body still adds each
 * product separately (mul.rn, add.rn, no fma), and the PTX assembles
 * where ptxas is installed ($PTXAS, else /usr/local/cuda/bin/ptxas). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit_mv.h"


START_TEST(test_ring_on_sm80_and_up) {
  tw_arena arena = {0};
  ptx_out out;
  mv_generate(KN_MM_F32, "mv_f32", &arena, &out);
  for (unsigned a = 0; a < 3; a++) {
    const char *text = out.codes[a].text;
    unsigned sm = out.codes[a].sm;
    bool ring = sm >= 80;
    /* W as 16-byte copies, v as elements, one group per chunk, the
     * oldest of LAG = 1 waited for before its FULL barrier */
    ck_assert_msg((mv_count_of(text, "cp.async.cg.shared.global") > 0) == ring, "sm_%u", sm);
    ck_assert_msg((mv_count_of(text, "cp.async.ca.shared.global") > 0) == ring, "sm_%u", sm);
    ck_assert_msg((mv_count_of(text, "cp.async.wait_group 1;") > 0) == ring, "sm_%u", sm);
    /* FULL (1, 2) and EMPTY (3, 4): a wait and an arrival each, immediate ids */
    bool waits = mv_count_of(text, "barrier.sync 1, 256;") && mv_count_of(text, "barrier.sync 4, 256;");
    bool arrivals = mv_count_of(text, "barrier.arrive 2, 256;") && mv_count_of(text, "barrier.arrive 3, 256;");
    ck_assert_msg(waits == ring && arrivals == ring, "sm_%u", sm);
    ck_assert_msg((mv_count_of(text, "griddepcontrol.wait") > 0) == (sm >= 90), "sm_%u", sm);
    ck_assert_msg((mv_count_of(text, "griddepcontrol.launch_dependents") == 1) == (sm >= 90), "sm_%u", sm);
    /* exact: a multiply and an add per term; the ring's vector body adds
     * a whole chunk (256 terms) and the first chunk (64) straight-line */
    unsigned muls = mv_count_of(text, "mul.rn.f32");
    ck_assert_uint_eq(muls, mv_count_of(text, "add.rn.f32"));
    ck_assert_uint_ge(muls, ring ? 256 + 64 : 256);
    ck_assert(!strstr(text, "fma") && !strstr(text, ".ftz"));
    ck_assert_msg(mv_assembles(text, sm), "sm_%u: ptxas failed", sm);
  }
  ck_assert_uint_eq(out.plan.launch.block[0], 256);
  ck_assert_uint_eq(out.plan.launch.per_block[0], 16);
  tw_arena_free(&arena);
}
END_TEST

/* f64: the same bytes a chunk, so 128 terms a row and 32 in the first
 * chunk; v's elements copied 8 bytes at a time. */
START_TEST(test_ring_f64) {
  tw_arena arena = {0};
  ptx_out out;
  mv_generate(KN_MM_F64, "mv_f64", &arena, &out);
  const char *text = out.codes[2].text;
  ck_assert_uint_eq(out.codes[2].sm, 90);
  ck_assert_uint_gt(mv_count_of(text, "cp.async.cg.shared.global"), 0);
  ck_assert_uint_gt(mv_count_of(text, "], 8;"), 0);
  unsigned muls = mv_count_of(text, "mul.rn.f64");
  ck_assert_uint_eq(muls, mv_count_of(text, "add.rn.f64"));
  ck_assert_uint_ge(muls, 128 + 32);
  ck_assert_msg(mv_assembles(text, 90), "sm_90: ptxas failed");
  ck_assert_msg(mv_assembles(out.codes[1].text, 80), "sm_80: ptxas failed");
  tw_arena_free(&arena);
}
END_TEST

static Suite *mv_ws_suite(void) {
  Suite *s = suite_create("ptx_mv_ws");
  TCase *tc = tcase_create("ring");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_ring_on_sm80_and_up);
  tcase_add_test(tc, test_ring_f64);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(mv_ws_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
