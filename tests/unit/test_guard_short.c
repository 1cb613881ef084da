/* test_guard_short.c: Check suite "guard_short": a lone versioned loop
 * (compiler/bnd_loop.c) whose checked copy the guard pass left no
 * explicit check in is entered there directly, before the versioning
 * test's range arithmetic, when its trip count is at most BND_SHORT_TRIPS
 * (compiler/bnd_short.c, after the offload stage); where the checked copy
 * keeps a check, every entry runs the test as before; the IR the offload
 * stage reads holds no short branch.  Read from twasmc's IR at -O2;
 * tests/spec/traps/shorttrip.wast checks the results and traps of the
 * same loops. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "driver.h"
#include "unit_ir.h"

/* f0: SQLite's OP_Column record-header loop, reduced: one byte read per
 * column (advancing by 1 or 2), its value stored at d[i] (i32) and q[i]
 * (i16), its address at o[i] (i64): three ranges, as OP_Column's test
 * has, while ++i <= p2 and s < end.  f1: a count of the non-zero low
 * nibbles of 0 to 3 bytes 16 apart (test_guard_unversion's f3): LLVM
 * gives its checked copy one merged check, so that copy keeps a check.
 * f2: f0 with d[i] alone (one range).  f3: f0's loop inside a loop over
 * rows (i from 0 each row, s carried on, d, o and q moved on by end a
 * row): the inner loop is versioned alone, its short branch inside the
 * outer loop, a nest the offload stage reads. */
static const char *const module_text =
    "(module (memory 1)\n"
    "  (func (export \"hdr\") (param $d i32) (param $s i32) (param $i i32) (param $p2 i32) (param $end i32)\n"
    "    (param $o i32) (param $q i32) (result i32) (local $t i32)\n"
    "    (block $done\n"
    "      (loop $next\n"
    "        (local.set $t (i32.load8_u (local.get $s)))\n"
    "        (i32.store (i32.add (local.get $d) (i32.shl (local.get $i) (i32.const 2))) (local.get $t))\n"
    "        (i64.store (i32.add (local.get $o) (i32.shl (local.get $i) (i32.const 3))) (i64.extend_i32_u (local.get $s)))\n"
    "        (i32.store16 (i32.add (local.get $q) (i32.shl (local.get $i) (i32.const 1))) (local.get $t))\n"
    "        (local.set $s (i32.add (local.get $s) (i32.add (i32.const 1) (i32.shr_u (local.get $t) (i32.const 7)))))\n"
    "        (local.set $i (i32.add (local.get $i) (i32.const 1)))\n"
    "        (br_if $done (i32.gt_u (local.get $i) (local.get $p2)))\n"
    "        (br_if $next (i32.lt_u (local.get $s) (local.get $end)))))\n"
    "    (local.get $i))\n"
    "  (func (export \"cnt3\") (param $p i32) (param $k i32) (result i32) (local $n i32) (local $acc i32)\n"
    "    (local.set $n (i32.and (local.get $k) (i32.const 3)))\n"
    "    (if (local.get $n) (then\n"
    "      (loop $next\n"
    "        (local.set $acc (i32.add (local.get $acc)\n"
    "          (i32.ne (i32.and (i32.load8_u (local.get $p)) (i32.const 15)) (i32.const 0))))\n"
    "        (local.set $p (i32.add (local.get $p) (i32.const 16)))\n"
    "        (local.set $n (i32.sub (local.get $n) (i32.const 1)))\n"
    "        (br_if $next (local.get $n)))))\n"
    "    (local.get $acc))\n"
    "  (func (export \"hdr2\") (param $d i32) (param $s i32) (param $i i32) (param $p2 i32) (param $end i32)\n"
    "    (result i32) (local $t i32)\n"
    "    (block $done\n"
    "      (loop $next\n"
    "        (local.set $t (i32.load8_u (local.get $s)))\n"
    "        (i32.store (i32.add (local.get $d) (i32.shl (local.get $i) (i32.const 2))) (local.get $t))\n"
    "        (local.set $s (i32.add (local.get $s) (i32.add (i32.const 1) (i32.shr_u (local.get $t) (i32.const 7)))))\n"
    "        (local.set $i (i32.add (local.get $i) (i32.const 1)))\n"
    "        (br_if $done (i32.gt_u (local.get $i) (local.get $p2)))\n"
    "        (br_if $next (i32.lt_u (local.get $s) (local.get $end)))))\n"
    "    (local.get $i))\n"
    "  (func (export \"rows\") (param $d i32) (param $s i32) (param $nr i32) (param $p2 i32) (param $end i32)\n"
    "    (param $o i32) (param $q i32) (result i32) (local $t i32) (local $i i32) (local $r i32)\n"
    "    (loop $row\n"
    "      (local.set $i (i32.const 0))\n"
    "      (block $done\n"
    "        (loop $next\n"
    "          (local.set $t (i32.load8_u (local.get $s)))\n"
    "          (i32.store (i32.add (local.get $d) (i32.shl (local.get $i) (i32.const 2))) (local.get $t))\n"
    "          (i64.store (i32.add (local.get $o) (i32.shl (local.get $i) (i32.const 3))) (i64.extend_i32_u (local.get $s)))\n"
    "          (i32.store16 (i32.add (local.get $q) (i32.shl (local.get $i) (i32.const 1))) (local.get $t))\n"
    "          (local.set $s (i32.add (local.get $s) (i32.add (i32.const 1) (i32.shr_u (local.get $t) (i32.const 7)))))\n"
    "          (local.set $i (i32.add (local.get $i) (i32.const 1)))\n"
    "          (br_if $done (i32.gt_u (local.get $i) (local.get $p2)))\n"
    "          (br_if $next (i32.lt_u (local.get $s) (local.get $end)))))\n"
    "      (local.set $d (i32.add (local.get $d) (local.get $end)))\n"
    "      (local.set $o (i32.add (local.get $o) (local.get $end)))\n"
    "      (local.set $q (i32.add (local.get $q) (local.get $end)))\n"
    "      (local.set $r (i32.add (local.get $r) (i32.const 1)))\n"
    "      (br_if $row (i32.lt_u (local.get $r) (local.get $nr))))\n"
    "    (local.get $s)))\n";

static unit_ir ir_of(void) {
  drv_options o;
  drv_options_default(&o);
  o.opt_level = 2;
  return unit_ir_of_wat("guard-short", module_text, &o);
}

/* The successor of versioning test br its weights make unlikely (the
 * checked copy). */
static LLVMBasicBlockRef checked_of(LLVMContextRef ctx, LLVMValueRef br) {
  LLVMValueRef prof = LLVMGetMetadata(br, LLVMGetMDKindIDInContext(ctx, "prof", 4));
  ck_assert_ptr_nonnull(prof);
  LLVMValueRef ops[3];
  ck_assert_int_eq(LLVMGetMDNodeNumOperands(prof), 3);
  LLVMGetMDNodeOperands(prof, ops);
  return LLVMGetSuccessor(br, LLVMConstIntGetZExtValue(ops[1]) > LLVMConstIntGetZExtValue(ops[2]) ? 1 : 0);
}

typedef struct {
  int tests;  /* branches marked as a versioning test */
  int shorts; /* conditional branches, not on a constant, into a test's block and its checked copy */
} shape;

static shape shape_of(unit_ir *m, unsigned index) {
  LLVMValueRef fn = unit_ir_func(m, index);
  unsigned kind = LLVMGetMDKindIDInContext(m->ctx, "twasm.bnd.test", 14);
  shape s = {0};
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
    if (!t || !LLVMIsABranchInst(t) || !LLVMIsConditional(t) || !LLVMGetMetadata(t, kind)) continue;
    s.tests++;
    LLVMBasicBlockRef checked = checked_of(m->ctx, t);
    for (LLVMBasicBlockRef pb = LLVMGetFirstBasicBlock(fn); pb; pb = LLVMGetNextBasicBlock(pb)) {
      LLVMValueRef p = LLVMGetBasicBlockTerminator(pb);
      if (!p || !LLVMIsABranchInst(p) || !LLVMIsConditional(p) || LLVMIsAConstantInt(LLVMGetCondition(p))) continue;
      LLVMBasicBlockRef a = LLVMGetSuccessor(p, 0), b = LLVMGetSuccessor(p, 1);
      s.shorts += (a == bb && b == checked) || (b == bb && a == checked);
    }
  }
  return s;
}

START_TEST(short_loop_enters_checked_copy_first) {
  unit_ir m = ir_of();
  shape s = shape_of(&m, 0);
  ck_assert_int_eq(s.tests, 1);
  ck_assert_int_eq(s.shorts, 1);
  unit_ir_dispose(&m);
}
END_TEST

START_TEST(checked_copy_with_a_check_runs_the_test) {
  unit_ir m = ir_of();
  shape s = shape_of(&m, 1);
  ck_assert_int_eq(s.tests, 1);
  ck_assert_int_eq(s.shorts, 0);
  unit_ir_dispose(&m);
}
END_TEST

/* The short branch inside the loop over rows, in the IR code generation
 * reads. */
START_TEST(short_loop_in_a_nest_enters_checked_copy_first) {
  unit_ir m = ir_of();
  shape s = shape_of(&m, 3);
  ck_assert_int_eq(s.tests, 1);
  ck_assert_int_eq(s.shorts, 1);
  unit_ir_dispose(&m);
}
END_TEST

/* The IR after pass `after` (--dump-after) parsed back. */
static unit_ir ir_after(const char *after) {
  drv_options o;
  drv_options_default(&o);
  o.opt_level = 2;
  char *dump = NULL;
  o.dump_after = after;
  o.dump = &dump;
  unit_ir full = unit_ir_of_wat("guard-short-stage", module_text, &o);
  unit_ir_dispose(&full);
  ck_assert_ptr_nonnull(dump);
  ck_assert_ptr_null(strstr(dump, ": not run"));
  unit_ir m = {.ctx = LLVMContextCreate()};
  m.mod = unit_ir_parse(m.ctx, dump, after);
  free(dump);
  return m;
}

/* What the offload stage reads (after it, the hold lifted: the last
 * IR before the per-part passes) holds the versioning tests and no short
 * branch: its recognisers see the nests as before (rounds 12 and 13 lost
 * GPU products to the branch's marker and blocks). */
START_TEST(offload_stage_sees_no_short_branch) {
  unit_ir m = ir_after("release");
  for (unsigned f = 0; f < 4; f++) {
    if (f == 2) continue;
    shape s = shape_of(&m, f);
    ck_assert_int_eq(s.tests, 1);
    ck_assert_int_eq(s.shorts, 0);
  }
  unit_ir_dispose(&m);
}
END_TEST

static Suite *guard_short_suite(void) {
  Suite *s = suite_create("guard_short");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, short_loop_enters_checked_copy_first);
  tcase_add_test(tc, checked_copy_with_a_check_runs_the_test);
  tcase_add_test(tc, short_loop_in_a_nest_enters_checked_copy_first);
  tcase_add_test(tc, offload_stage_sees_no_short_branch);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(guard_short_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
