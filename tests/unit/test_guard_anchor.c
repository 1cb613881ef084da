/* test_guard_anchor.c: Check suite "guard_anchor": guard mode's late
 * stage (compiler/bnd_late.c) leaves a join's rotated checks to the guard
 * page where a load that cannot fault lies between an edge's check and the
 * join, as in Lua's luaV_execute: a frame loop over `ci` (ci->savedpc at
 * ci + 16 read at its header, its check rotated into the block before the
 * loop and into the latch after `ci = ci->previous`), L->hookmask read in
 * the preheader LLVM split off between the first check and the loop, that
 * load proved by the check of L at entry.  IR written here, in the form
 * the stage sees (twasmc -O2 --dump-after=masks of Lua 5.4's wasm32 build,
 * cut down).  Controls: the preheader's load reaching past L's check (it
 * may fault: the checks stay), and the preheader's load proved only by the
 * join's own check of `ci` (it would fault before the access once that
 * check went: the checks stay). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "unit_ir.h"

/* HOOK: the address the preheader loads from. */
static const char *const frames_ir =
    "declare void @twasm_rt_trap(ptr, i32, i32, i32)\n"
    "declare i32 @opaque(ptr)\n"
    "define i32 @f(ptr %0, i32 %L, i32 %ci0) {\n"
    "entry:\n"
    "  %mp = getelementptr inbounds i8, ptr %0, i64 8\n"
    "  %mem = load ptr, ptr %mp, align 8\n"
    "  %base = load ptr, ptr %0, align 8\n"
    "  %sp = getelementptr inbounds i8, ptr %mem, i64 8\n"
    "  %zL = zext i32 %L to i64\n"
    "  %eaL = add nuw nsw i64 %zL, 112\n"
    "  %eaL4 = add nuw nsw i64 %zL, 116\n"
    "  %size0 = load i64, ptr %sp, align 8\n"
    "  %limit0 = add nsw i64 %size0, -4\n"
    "  %cL = icmp ugt i64 %eaL, %limit0\n"
    "  br i1 %cL, label %bounds_trap, label %lrph\n"
    "lrph:\n"
    "  br label %outer\n"
    "outer:\n"
    "  %ci = phi i32 [ %ci0, %lrph ], [ %r, %outer.back ]\n"
    "  %zci = zext i32 %ci to i64\n"
    "  %ea1 = add nuw nsw i64 %zci, 16\n"
    "  %size1 = load i64, ptr %sp, align 8\n"
    "  %limit1 = add nsw i64 %size1, -4\n"
    "  %c1 = icmp ugt i64 %ea1, %limit1\n"
    "  br i1 %c1, label %bounds_trap, label %pre\n"
    "pre:\n"
    "  %gL = getelementptr i8, ptr %base, i64 HOOK\n"
    "  %hook = load i32, ptr %gL, align 1\n"
    "  br label %head\n"
    "head:\n"
    "  %ea = phi i64 [ %ea1, %pre ], [ %ea3, %chk ]\n"
    "  %zf = phi i64 [ %zci, %pre ], [ %zp, %chk ]\n"
    "  %h = phi i32 [ %hook, %pre ], [ %r, %chk ]\n"
    "  %g2 = getelementptr i8, ptr %base, i64 %ea\n"
    "  %pc = load i32, ptr %g2, align 1\n"
    "  %g3 = getelementptr i8, ptr %base, i64 %zf\n"
    "  %fn = load i32, ptr %g3, align 1\n"
    "  %r = call i32 @opaque(ptr %0)\n"
    "  %sum = add i32 %pc, %fn\n"
    "  %more = icmp ne i32 %h, 0\n"
    "  br i1 %more, label %chk, label %outer.back\n"
    "chk:\n"
    "  %zp = zext i32 %sum to i64\n"
    "  %ea3 = add nuw nsw i64 %zp, 16\n"
    "  %size3 = load i64, ptr %sp, align 8\n"
    "  %limit3 = add nsw i64 %size3, -4\n"
    "  %c3 = icmp ugt i64 %ea3, %limit3\n"
    "  br i1 %c3, label %bounds_trap, label %head\n"
    "outer.back:\n"
    "  %done = icmp eq i32 %r, 0\n"
    "  br i1 %done, label %exit, label %outer\n"
    "exit:\n"
    "  ret i32 %sum\n"
    "bounds_trap:\n"
    "  %off = phi i32 [ 10, %entry ], [ 20, %outer ], [ 20, %chk ]\n"
    "  call void @twasm_rt_trap(ptr %0, i32 5, i32 0, i32 %off)\n"
    "  unreachable\n"
    "}\n";

/* The branches to bounds_trap left in @f after bnd_late, the preheader
 * loading from base + hook. */
static int checks_left(const char *hook) {
  return unit_late_checks_left(frames_ir, "HOOK", hook, "frames");
}

START_TEST(proved_load_before_join_lets_checks_go) {
  /* the two checks of ci go; L's stays, proving the preheader's load */
  ck_assert_int_eq(checks_left("%eaL"), 1);
}
END_TEST

START_TEST(load_past_its_check_keeps_the_join) {
  ck_assert_int_eq(checks_left("%eaL4"), 3);
}
END_TEST

START_TEST(load_proved_by_own_check_keeps_the_join) {
  ck_assert_int_eq(checks_left("%zci"), 3);
}
END_TEST

static Suite *guard_anchor_suite(void) {
  Suite *s = suite_create("guard_anchor");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, proved_load_before_join_lets_checks_go);
  tcase_add_test(tc, load_past_its_check_keeps_the_join);
  tcase_add_test(tc, load_proved_by_own_check_keeps_the_join);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(guard_anchor_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
