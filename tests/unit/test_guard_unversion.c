/* test_guard_unversion.c: Check suite "guard_unversion": a versioned
 * loop (compiler/bnd_loop.c) whose checked copy the late stage left no
 * explicit check in runs that copy only (compiler/bnd_unversion.c): the
 * versioning test's branch is folded to the checked copy.  A loop whose
 * unchecked copy the offload stage gates, or LLVM unrolled further, or
 * whose checked copy LLVM gave one merged check, keeps its test.  Read from twasmc's
 * optimised IR at -O2; tests/spec/traps/shortloop.wast checks the
 * results and traps of the same functions. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "driver.h"
#include "unit_ir.h"

/* f0: SQLite's OP_MakeRecord copy of an integer's last bytes (after
 * clang's 4-byte steps, 0 to 3 of them), big-endian:
 * n = k & 3; if (n) do { p[--n] = v; v >>= 8; } while (n).  Both copies
 * unrolled whole; the checked one's stores left to the guard pages.
 * f1: for (i = 0; i < n; i++) d[i] = s[i] + 1 over i32 words (the
 * unchecked copy is the one the offload stage gates).
 * f2: f0 without the bound on n: LLVM unrolls the unchecked copy by
 * four (the checked one, with its trap exits, not).
 * f3: a count of the non-zero low nibbles of 0 to 3 bytes 16 apart (a
 * loop of Lua's): both copies unrolled whole, and LLVM merges the checked
 * copy's three checks into one before it, on a bound computed from the
 * size; that copy then costs more than the test (Lua's loops.lua
 * +19,494 instructions when it ran). */
static const char *const module_text =
    "(module (memory 1)\n"
    "  (func (export \"be3\") (param $p i32) (param $k i32) (param $v i64) (local $n i32)\n"
    "    (local.set $n (i32.and (local.get $k) (i32.const 3)))\n"
    "    (if (local.get $n) (then\n"
    "      (loop $next\n"
    "        (local.set $n (i32.sub (local.get $n) (i32.const 1)))\n"
    "        (i64.store8 (i32.add (local.get $p) (local.get $n)) (local.get $v))\n"
    "        (local.set $v (i64.shr_u (local.get $v) (i64.const 8)))\n"
    "        (br_if $next (local.get $n))))))\n"
    "  (func (export \"inc\") (param $d i32) (param $s i32) (param $n i32) (local $i i32)\n"
    "    (block $done\n"
    "      (br_if $done (i32.le_s (local.get $n) (i32.const 0)))\n"
    "      (loop $next\n"
    "        (i32.store (i32.add (local.get $d) (i32.shl (local.get $i) (i32.const 2)))\n"
    "          (i32.add (i32.load (i32.add (local.get $s) (i32.shl (local.get $i) (i32.const 2))))\n"
    "                   (i32.const 1)))\n"
    "        (br_if $next (i32.lt_s (local.tee $i (i32.add (local.get $i) (i32.const 1)))\n"
    "                               (local.get $n))))))\n"
    "  (func (export \"be\") (param $p i32) (param $n i32) (param $v i64)\n"
    "    (loop $next\n"
    "      (local.set $n (i32.sub (local.get $n) (i32.const 1)))\n"
    "      (i64.store8 (i32.add (local.get $p) (local.get $n)) (local.get $v))\n"
    "      (local.set $v (i64.shr_u (local.get $v) (i64.const 8)))\n"
    "      (br_if $next (local.get $n))))\n"
    "  (func (export \"cnt3\") (param $p i32) (param $k i32) (result i32) (local $n i32) (local $acc i32)\n"
    "    (local.set $n (i32.and (local.get $k) (i32.const 3)))\n"
    "    (if (local.get $n) (then\n"
    "      (loop $next\n"
    "        (local.set $acc (i32.add (local.get $acc)\n"
    "          (i32.ne (i32.and (i32.load8_u (local.get $p)) (i32.const 15)) (i32.const 0))))\n"
    "        (local.set $p (i32.add (local.get $p) (i32.const 16)))\n"
    "        (local.set $n (i32.sub (local.get $n) (i32.const 1)))\n"
    "        (br_if $next (local.get $n)))))\n"
    "    (local.get $acc)))\n";

static unit_ir ir_of(void) {
  drv_options o;
  drv_options_default(&o);
  o.opt_level = 2;
  return unit_ir_of_wat("guard-unversion", module_text, &o);
}

typedef struct {
  int tests;  /* conditional branches still marked as a versioning test */
  int folded; /* conditional branches on a constant */
} shape;

static shape shape_of(unit_ir *m, unsigned index) {
  LLVMValueRef fn = unit_ir_func(m, index);
  unsigned kind = LLVMGetMDKindIDInContext(m->ctx, "twasm.bnd.test", 14);
  shape s = {0};
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
    if (!term || !LLVMIsABranchInst(term) || !LLVMIsConditional(term)) continue;
    s.tests += LLVMGetMetadata(term, kind) != NULL;
    s.folded += LLVMIsAConstantInt(LLVMGetCondition(term)) != NULL;
  }
  return s;
}

START_TEST(short_guarded_loop_not_versioned) {
  unit_ir m = ir_of();
  shape s = shape_of(&m, 0);
  ck_assert_int_eq(s.tests, 0);
  ck_assert_int_eq(s.folded, 1);
  unit_ir_dispose(&m);
}
END_TEST

START_TEST(offloaded_loop_keeps_its_test) {
  unit_ir m = ir_of();
  shape s = shape_of(&m, 1);
  ck_assert_int_eq(s.tests, 1);
  ck_assert_int_eq(s.folded, 0);
  unit_ir_dispose(&m);
}
END_TEST

START_TEST(unrolled_loop_keeps_its_test) {
  unit_ir m = ir_of();
  shape s = shape_of(&m, 2);
  ck_assert_int_eq(s.tests, 1);
  ck_assert_int_eq(s.folded, 0);
  unit_ir_dispose(&m);
}
END_TEST

START_TEST(merged_check_keeps_its_test) {
  unit_ir m = ir_of();
  shape s = shape_of(&m, 3);
  ck_assert_int_eq(s.tests, 1);
  ck_assert_int_eq(s.folded, 0);
  unit_ir_dispose(&m);
}
END_TEST

static Suite *guard_unversion_suite(void) {
  Suite *s = suite_create("guard_unversion");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, short_guarded_loop_not_versioned);
  tcase_add_test(tc, offloaded_loop_keeps_its_test);
  tcase_add_test(tc, unrolled_loop_keeps_its_test);
  tcase_add_test(tc, merged_check_keeps_its_test);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(guard_unversion_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
