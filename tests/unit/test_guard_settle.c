/* test_guard_settle.c: Check suite "guard_settle": in guard mode, the
 * size GVN carries in phis through a loop that calls a comparator inlined
 * or a function through the table, for the tests and trip counts of the
 * copy loop after it, becomes one load past the loop (bnd_fresh.c, "a phi
 * read again where it is still the same").  Read from twasmc's optimised
 * IR at -O2 of tests/spec/traps/settled.wast's module (function 4, run),
 * whose results and traps that .wast checks, and of a variant of it whose
 * loops run a known number of times (below). */
#include <check.h>
#include <stdlib.h>

#include <llvm-c/Core.h>

#include "driver.h"
#include "unit_ir.h"

#define WAST "tests/spec/traps/settled.wast"

/* The same module with both loops run 64 times (run's n and m fixed):
 * since the short-trip branch (bnd_short.c), a lone loop whose trip count
 * is not known at compile time loads the size for its range test on its
 * long way only, so with run's counts from parameters GVN has no size to
 * carry through the first loop, with or without the guard pass.  Known
 * counts keep the tests as before, and the phis this suite is about. */
static const char *const counted_text =
    "(module\n"
    "  (memory 1 3)\n"
    "  (type $t (func (param i32 i32) (result i32)))\n"
    "  (table 2 funcref)\n"
    "  (elem (i32.const 0) $cmp $grow)\n"
    "  (func $cmp (type $t) (i32.sub (i32.load16_u (local.get 0)) (i32.load16_u (local.get 1))))\n"
    "  (func $grow (type $t) (drop (memory.grow (i32.const 1))) (i32.const 0))\n"
    "  (func (export \"size\") (result i32) (memory.size))\n"
    "  (func (export \"peek64\") (param i32) (result i64) (i64.load (local.get 0)))\n"
    "  (func (export \"run\") (param $f i32) (param $p i32) (param $q i32) (result i32)\n"
    "    (local $i i32) (local $n i32) (local $m i32) (local $acc i32)\n"
    "    (local.set $n (i32.const 64))\n"
    "    (block $done (loop $l\n"
    "      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))\n"
    "      (local.set $acc (i32.add (local.get $acc)\n"
    "        (if (result i32) (i32.eqz (local.get $f))\n"
    "          (then (call $cmp (i32.add (local.get $p) (i32.shl (local.get $i) (i32.const 1))) (local.get $p)))\n"
    "          (else (call_indirect (type $t) (local.get $p) (local.get $p) (local.get $f))))))\n"
    "      (i32.store (i32.add (local.get $q) (i32.shl (local.get $i) (i32.const 2))) (local.get $acc))\n"
    "      (local.set $i (i32.add (local.get $i) (i32.const 1)))\n"
    "      (br $l)))\n"
    "    (local.set $i (i32.const 0))\n"
    "    (local.set $m (i32.const 64))\n"
    "    (block $d2 (loop $c\n"
    "      (br_if $d2 (i32.ge_u (local.get $i) (local.get $m)))\n"
    "      (i64.store (i32.add (local.get $q) (i32.shl (local.get $i) (i32.const 3)))\n"
    "                 (i64.load (i32.add (local.get $p) (i32.shl (local.get $i) (i32.const 3)))))\n"
    "      (local.set $i (i32.add (local.get $i) (i32.const 1)))\n"
    "      (br $c)))\n"
    "    (local.get $acc))\n"
    ")\n";

static unit_ir ir_of(const char *skip) {
  drv_options o;
  drv_options_default(&o);
  o.opt_level = 2;
  o.skip_pass = skip;
  return unit_ir_of_wast("guard-settle", WAST, &o);
}

static unit_ir counted_ir_of(const char *skip) {
  drv_options o;
  drv_options_default(&o);
  o.opt_level = 2;
  o.skip_pass = skip;
  return unit_ir_of_wat("guard-settle-counted", counted_text, &o);
}

/* Whether v is a load of an i64 (the size: the only i64 run loads from
 * other than linear memory's, which the copy loop's are not: volatile or
 * vector) or an i64 phi of one. */
static bool size_value(LLVMValueRef v, int depth) {
  if (depth > 4 || LLVMTypeOf(v) != LLVMInt64TypeInContext(LLVMGetTypeContext(LLVMTypeOf(v)))) return false;
  if (LLVMIsALoadInst(v)) return !LLVMGetVolatile(v);
  if (!LLVMIsAPHINode(v)) return false;
  for (unsigned k = 0; k < LLVMCountIncoming(v); k++)
    if (LLVMGetIncomingValue(v, k) != v && size_value(LLVMGetIncomingValue(v, k), depth + 1)) return true;
  return false;
}

/* The i64 phis of function run that carry the size. */
static int size_phis(const unit_ir *m) {
  LLVMValueRef fn = unit_ir_func(m, 4);
  int n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i && LLVMIsAPHINode(i); i = LLVMGetNextInstruction(i))
      n += size_value(i, 0);
  return n;
}

START_TEST(size_phis_settle_past_the_loop) {
  unit_ir m = ir_of(NULL);
  ck_assert_int_eq(size_phis(&m), 0);
  unit_ir_dispose(&m);
}
END_TEST

START_TEST(counted_size_phis_settle_past_the_loop) {
  unit_ir m = counted_ir_of(NULL);
  ck_assert_int_eq(size_phis(&m), 0);
  unit_ir_dispose(&m);
}
END_TEST

/* The control: without the guard pass the phis are there to settle. */
START_TEST(without_guard_pass_phis_stay) {
  unit_ir m = counted_ir_of("guard");
  ck_assert_int_ge(size_phis(&m), 1);
  unit_ir_dispose(&m);
}
END_TEST

static Suite *guard_settle_suite(void) {
  Suite *s = suite_create("guard_settle");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, size_phis_settle_past_the_loop);
  tcase_add_test(tc, counted_size_phis_settle_past_the_loop);
  tcase_add_test(tc, without_guard_pass_phis_stay);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(guard_settle_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
