/* test_ptx_mv_chain.c: Check suite "ptx_mv_chain": the matrix-vector
 * kernel of round 12 (ptx/ptx_matvec.c built with PTX_MV_PDL=1,
 * PTX_MV_MULS=2, PTX_MV_SPREAD=4 and PTX_MV_VROT=1, as `make
 * gpu-mv-variants` builds 16-16384-4-pdl-m2-sp4-r; this binary links that
 * object ahead of libtwasmc's, see the Makefile).  In the whole-chunk block (the one with
 * the most adds) the products of two 16-byte vectors are formed before
 * the first add of the first of them, and every add's product exists
 * before it; the outputs are summed by lanes 0-3 of warps 0-3 (the
 * summing test compares the lane with 4 and the thread with 128, never
 * the thread with 16); in every product of that block the W and v
 * elements are different lanes of their 16-byte loads (v rotated by one,
 * so after ptxas their registers differ in parity); every product is still a separate mul.rn and
 * add.rn, and the PTX assembles where ptxas is installed. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_mv.h"

/* The basic block (from a label to the next) with the most `add`s. */
static void busiest_block(const char *text, const char *add, const char **from, const char **to) {
  unsigned best = 0;
  *from = *to = NULL;
  for (const char *p = strstr(text, "\n$L__BB"); p; ) {
    const char *next = strstr(p + 1, "\n$L__BB");
    const char *end = next ? next : text + strlen(text);
    unsigned n = 0;
    for (const char *q = strstr(p, add); q && q < end; q = strstr(q + 1, add)) n++;
    if (n > best) best = n, *from = p, *to = end;
    p = next;
  }
}

/* In [from, to): before add number a (0-based), at least min(muls in
 * all, lanes x (a / lanes + ahead)) multiplies. */
static void check_products_ahead(const char *from, const char *to, const char *mul, const char *add,
                                 unsigned lanes, unsigned ahead) {
  unsigned total = 0;
  for (const char *q = strstr(from, mul); q && q < to; q = strstr(q + 1, mul)) total++;
  unsigned muls = 0, adds = 0;
  for (const char *line = from; line && line < to; line = strchr(line + 1, '\n')) {
    if (!strncmp(line + 2, mul, strlen(mul))) muls++;  /* "\n\t" before each instruction */
    if (strncmp(line + 2, add, strlen(add))) continue;
    unsigned want = lanes * (adds / lanes + ahead);
    want = want < total ? want : total;
    ck_assert_msg(muls >= want, "add %u: %u products formed, %u wanted", adds, muls, want);
    adds++;
  }
  ck_assert_uint_eq(adds, total);
  ck_assert_uint_ge(adds, 64);  /* a whole chunk straight-line */
}

/* The register number after `prefix` from p on ("%f12" -> 12), or -1. */
static long reg_after(const char *p, const char *prefix) {
  p = strstr(p, prefix);
  return p ? strtol(p + strlen(prefix), NULL, 10) : -1;
}

/* In [from, to): the lane of each register a `ld.shared.v4`/`.v2` fills,
 * then for each `mul` its two operands' lanes, which must differ. */
enum { MAX_REG = 8192 };
static void check_lanes_differ(const char *from, const char *to, const char *mul, const char *prefix) {
  static signed char lane[MAX_REG];
  memset(lane, -1, sizeof lane);
  unsigned muls = 0;
  for (const char *line = strchr(from, '\n'); line && line < to; line = strchr(line + 1, '\n')) {
    if (strstr(line, "ld.shared.v") == line + 2) {
      const char *p = strchr(line, '{'), *end = strchr(line, '}');
      for (int l = 0; p && end && p < end; l++, p = strchr(p + 1, ',')) {
        long r = reg_after(p, prefix);
        if (r >= 0 && r < MAX_REG) lane[r] = (signed char)l;
      }
    } else if (strstr(line, mul) == line + 2) {
      const char *a = strchr(line, ',');
      const char *b = a ? strchr(a + 1, ',') : NULL;
      long ra = a ? reg_after(a, prefix) : -1, rb = b ? reg_after(b, prefix) : -1;
      ck_assert(ra >= 0 && ra < MAX_REG && rb >= 0 && rb < MAX_REG);
      ck_assert_msg(lane[ra] >= 0 && lane[rb] >= 0, "a product of a register no vector load filled");
      ck_assert_msg(lane[ra] != lane[rb], "product %u: W and v from lane %d of their loads", muls, lane[ra]);
      muls++;
    }
  }
  ck_assert_uint_ge(muls, 64);
}

/* Lines "setp.lt.* ..., bound;" in text. */
static unsigned below_tests(const char *text, unsigned bound) {
  char tail[32];
  snprintf(tail, sizeof tail, ", %u;", bound);
  unsigned n = 0;
  for (const char *line = strstr(text, "setp.lt."); line; line = strstr(line + 1, "setp.lt.")) {
    const char *eol = strchr(line, '\n');
    size_t len = eol ? (size_t)(eol - line) : strlen(line);
    if (len >= strlen(tail) && !strncmp(line + len - strlen(tail), tail, strlen(tail))) n++;
  }
  return n;
}

START_TEST(test_chain_f32) {
  tw_arena arena = {0};
  ptx_out out;
  mv_generate(KN_MM_F32, "mv_f32", &arena, &out);
  for (unsigned a = 0; a < 3; a++) {
    const char *text = out.codes[a].text, *from, *to;
    unsigned sm = out.codes[a].sm;
    busiest_block(text, "add.rn.f32", &from, &to);
    ck_assert_msg(from != NULL, "sm_%u: no add", sm);
    check_products_ahead(from, to, "mul.rn.f32", "add.rn.f32", 4, 2);
    ck_assert_uint_eq(mv_count_of(text, "mul.rn.f32"), mv_count_of(text, "add.rn.f32"));
    ck_assert(!strstr(text, "fma") && !strstr(text, ".ftz"));
    ck_assert_msg(mv_assembles(text, sm), "sm_%u: ptxas failed", sm);
  }
  tw_arena_free(&arena);
}
END_TEST

START_TEST(test_chain_f64) {
  tw_arena arena = {0};
  ptx_out out;
  mv_generate(KN_MM_F64, "mv_f64", &arena, &out);
  const char *text = out.codes[2].text, *from, *to;
  busiest_block(text, "add.rn.f64", &from, &to);
  ck_assert(from != NULL);
  check_products_ahead(from, to, "mul.rn.f64", "add.rn.f64", 2, 2);
  ck_assert_msg(mv_assembles(text, 90), "sm_90: ptxas failed");
  ck_assert_msg(mv_assembles(out.codes[1].text, 80), "sm_80: ptxas failed");
  tw_arena_free(&arena);
}
END_TEST

/* Three bodies (vectors, aligned elements, bytes), each guarding its
 * sums and stores by "lane < 4 and thread < 128". */
START_TEST(test_chain_spread) {
  tw_arena arena = {0};
  ptx_out out;
  mv_generate(KN_MM_F32, "mv_f32", &arena, &out);
  for (unsigned a = 0; a < 3; a++) {
    const char *text = out.codes[a].text;
    unsigned sm = out.codes[a].sm;
    ck_assert_msg(below_tests(text, 16) == 0, "sm_%u: a thread below 16 still sums", sm);
    ck_assert_msg(below_tests(text, 4) >= 3 && below_tests(text, 128) >= 3, "sm_%u: no lane < 4 of warps 0-3", sm);
    ck_assert_msg(!strstr(text, "cp.async"), "sm_%u: the ring", sm);
  }
  tw_arena_free(&arena);
}
END_TEST

START_TEST(test_chain_rotated) {
  tw_arena arena = {0};
  ptx_out out;
  mv_generate(KN_MM_F32, "mv_f32", &arena, &out);
  for (unsigned a = 0; a < 3; a++) {
    const char *from, *to;
    busiest_block(out.codes[a].text, "add.rn.f32", &from, &to);
    ck_assert(from != NULL);
    check_lanes_differ(from, to, "mul.rn.f32", "%f");
  }
  mv_generate(KN_MM_F64, "mv_f64", &arena, &out);
  const char *from, *to;
  busiest_block(out.codes[2].text, "add.rn.f64", &from, &to);
  ck_assert(from != NULL);
  check_lanes_differ(from, to, "mul.rn.f64", "%fd");
  tw_arena_free(&arena);
}
END_TEST

static Suite *mv_chain_suite(void) {
  Suite *s = suite_create("ptx_mv_chain");
  TCase *tc = tcase_create("chain");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_chain_f32);
  tcase_add_test(tc, test_chain_f64);
  tcase_add_test(tc, test_chain_spread);
  tcase_add_test(tc, test_chain_rotated);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(mv_chain_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
