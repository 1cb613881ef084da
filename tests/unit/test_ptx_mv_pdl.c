/* test_ptx_mv_pdl.c: Check suite "ptx_mv_pdl": the committed
 * matrix-vector body with programmatic dependent launch (ptx/ptx_matvec.c
 * built with PTX_MV_PDL=1 alone, as `make gpu-mv-variants` builds
 * 16-16384-4-pdl; this binary links that object ahead of libtwasmc's,
 * see the Makefile).  In sm_90 code every thread issues
 * griddepcontrol.launch_dependents once at entry, and the vector body
 * loads its first chunk of W (16-byte global loads) before
 * griddepcontrol.wait and v (element loads) after it, before any shared
 * store or barrier; sm_80 and sm_75 code has no griddepcontrol; no body
 * uses the ring (cp.async).  Every product is still a separate mul.rn and
 * add.rn, and the PTX assembles where ptxas is installed ($PTXAS, else
 * /usr/local/cuda/bin/ptxas). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit_mv.h"

/* The first `what` in [from, to), or NULL. */
static const char *find_in(const char *from, const char *to, const char *what) {
  const char *p = strstr(from, what);
  return p && p < to ? p : NULL;
}


/* The vector body's first chunk: from the first 16-byte load of W the
 * next griddepcontrol.wait comes before any load of v (ELEM_LOAD), shared
 * store or barrier, and v's first load follows it before any barrier. */
static void check_wait_after_w(const char *text, const char *vec_load, const char *elem_load) {
  const char *w = strstr(text, vec_load);
  ck_assert_msg(w != NULL, "no %s", vec_load);
  const char *end = text + strlen(text);
  const char *wait = find_in(w, end, "griddepcontrol.wait");
  ck_assert_msg(wait != NULL, "no griddepcontrol.wait after W's first load");
  ck_assert_msg(!find_in(w, wait, elem_load), "v loaded before the wait");
  ck_assert_msg(!find_in(w, wait, "st.shared") && !find_in(w, wait, "bar.sync"), "W stored before the wait");
  const char *bar = find_in(wait, end, "bar.sync");
  const char *v = find_in(wait, end, elem_load);
  ck_assert_msg(v && bar && v < bar, "v's first load not between the wait and the barrier");
}

START_TEST(test_pdl_committed_body) {
  tw_arena arena = {0};
  ptx_out out;
  mv_generate(KN_MM_F32, "mv_f32", &arena, &out);
  for (unsigned a = 0; a < 3; a++) {
    const char *text = out.codes[a].text;
    unsigned sm = out.codes[a].sm;
    ck_assert_msg(!strstr(text, "cp.async"), "sm_%u: the ring in a PDL-only build", sm);
    ck_assert_msg((mv_count_of(text, "griddepcontrol.launch_dependents") == 1) == (sm >= 90), "sm_%u", sm);
    ck_assert_msg((mv_count_of(text, "griddepcontrol.wait") > 0) == (sm >= 90), "sm_%u", sm);
    if (sm >= 90) check_wait_after_w(text, "ld.global.v4.f32", "ld.global.f32");
    unsigned muls = mv_count_of(text, "mul.rn.f32");
    ck_assert_uint_eq(muls, mv_count_of(text, "add.rn.f32"));
    ck_assert_uint_ge(muls, 256);  /* a whole chunk straight-line */
    ck_assert(!strstr(text, "fma") && !strstr(text, ".ftz"));
    ck_assert_msg(mv_assembles(text, sm), "sm_%u: ptxas failed", sm);
  }
  tw_arena_free(&arena);
}
END_TEST

START_TEST(test_pdl_f64) {
  tw_arena arena = {0};
  ptx_out out;
  mv_generate(KN_MM_F64, "mv_f64", &arena, &out);
  const char *text = out.codes[2].text;
  ck_assert_uint_eq(out.codes[2].sm, 90);
  check_wait_after_w(text, "ld.global.v2.f64", "ld.global.f64");
  ck_assert_uint_eq(mv_count_of(text, "mul.rn.f64"), mv_count_of(text, "add.rn.f64"));
  ck_assert_msg(mv_assembles(text, 90), "sm_90: ptxas failed");
  ck_assert_msg(mv_assembles(out.codes[1].text, 80), "sm_80: ptxas failed");
  tw_arena_free(&arena);
}
END_TEST

static Suite *mv_pdl_suite(void) {
  Suite *s = suite_create("ptx_mv_pdl");
  TCase *tc = tcase_create("pdl");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_pdl_committed_body);
  tcase_add_test(tc, test_pdl_f64);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(mv_pdl_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
