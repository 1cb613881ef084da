/* test_guard_low.c: Check suite "guard_low": guard mode's late stage
 * (compiler/bnd_late.c) leaves a rotated loop's checks to the guard page
 * where the preheader's check and the header's phi reach the same index
 * in two forms, as LLVM leaves json's whitespace loops: the check tests
 * zext(trunc(iv) + 1) of the loop before (its i64 counter), the phi
 * starts at zext(iv32 + 1) of the i32 counter LLVM keeps beside it.  The
 * two are equal by induction over the first loop's visits (both counters
 * start from one value and step by one together), which the stage proves
 * on the low 32 bits.  IR written here, in the form the stage sees (the
 * output of twasmc -O2 --skip-pass=guard on tests/bench/json.c, cut down);
 * a control where the phi starts one byte further keeps its checks. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/IRReader.h>

#include "bnd.h"
#include "unit_ir.h"

/* START: the second loop's first index (%p32.next: equal to the check's
 * %q; %p32.two: one past it). */
static const char *const ws_ir =
    "declare void @twasm_rt_trap(ptr, i32, i32, i32)\n"
    "declare i32 @opaque(ptr)\n"
    "define i32 @f(ptr %0) {\n"
    "entry:\n"
    "  %mp = getelementptr inbounds i8, ptr %0, i64 8\n"
    "  %mem = load ptr, ptr %mp, align 8\n"
    "  %base = load ptr, ptr %0, align 8\n"
    "  %atp = getelementptr i8, ptr %base, i64 3872\n"
    "  %a0 = load i32, ptr %atp, align 1\n"
    "  %sp = getelementptr inbounds i8, ptr %mem, i64 8\n"
    "  %size = load i64, ptr %sp, align 8\n"
    "  %limit = add nsw i64 %size, -1\n"
    "  %z0 = zext i32 %a0 to i64\n"
    "  %c0 = icmp ult i64 %limit, %z0\n"
    "  br i1 %c0, label %bounds_trap, label %head1\n"
    "head1:\n"
    "  %p32 = phi i32 [ %p32.next, %latch1 ], [ %a0, %entry ]\n"
    "  %p = phi i64 [ %p.next, %latch1 ], [ %z0, %entry ]\n"
    "  %p32.next = add i32 %p32, 1\n"
    "  %p32.two = add i32 %p32, 2\n"
    "  %g1 = getelementptr i8, ptr %base, i64 %p\n"
    "  %b1 = load i8, ptr %g1, align 1\n"
    "  %w1 = icmp eq i8 %b1, 32\n"
    "  br i1 %w1, label %latch1, label %out1\n"
    "latch1:\n"
    "  %p.next = add nuw nsw i64 %p, 1\n"
    "  %t1 = trunc nuw i64 %p.next to i32\n"
    "  store i32 %t1, ptr %atp, align 1\n"
    "  %c1 = icmp ugt i64 %limit, %p\n"
    "  br i1 %c1, label %head1, label %bounds_trap\n"
    "out1:\n"
    "  %t = trunc nuw i64 %p to i32\n"
    "  %n = call i32 @opaque(ptr %0)\n"
    "  %q = add i32 %t, 1\n"
    "  %size2 = load i64, ptr %sp, align 8\n"
    "  %limit2 = add nsw i64 %size2, -1\n"
    "  %zq = zext i32 %q to i64\n"
    "  %c2 = icmp ult i64 %limit2, %zq\n"
    "  br i1 %c2, label %bounds_trap, label %pre2\n"
    "pre2:\n"
    "  %s = zext i32 START to i64\n"
    "  br label %head2\n"
    "head2:\n"
    "  %r = phi i64 [ %s, %pre2 ], [ %r.next, %latch2 ]\n"
    "  %g2 = getelementptr i8, ptr %base, i64 %r\n"
    "  %b2 = load i8, ptr %g2, align 1\n"
    "  %w2 = icmp eq i8 %b2, 32\n"
    "  br i1 %w2, label %latch2, label %out2\n"
    "latch2:\n"
    "  %r.next = add nuw nsw i64 %r, 1\n"
    "  %c3 = icmp ugt i64 %limit2, %r\n"
    "  br i1 %c3, label %head2, label %bounds_trap\n"
    "out2:\n"
    "  %t2 = trunc nuw i64 %r to i32\n"
    "  store i32 %t2, ptr %atp, align 1\n"
    "  ret i32 %n\n"
    "bounds_trap:\n"
    "  %off = phi i32 [ 10, %entry ], [ 10, %latch1 ], [ 20, %out1 ], [ 20, %latch2 ]\n"
    "  call void @twasm_rt_trap(ptr %0, i32 5, i32 0, i32 %off)\n"
    "  unreachable\n"
    "}\n";

/* The branches to bounds_trap left in @f after bnd_late, with the second
 * loop starting at `start`. */
static int checks_left(const char *start) {
  return unit_late_checks_left(ws_ir, "START", start, "ws");
}

START_TEST(two_counters_one_index) {
  ck_assert_int_eq(checks_left("%p32.next"), 0);
}
END_TEST

START_TEST(one_byte_further_keeps_its_checks) {
  /* the first loop's two still go; the second's stay */
  ck_assert_int_eq(checks_left("%p32.two"), 2);
}
END_TEST

static Suite *guard_low_suite(void) {
  Suite *s = suite_create("guard_low");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, two_counters_one_index);
  tcase_add_test(tc, one_byte_further_keeps_its_checks);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(guard_low_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
