/* test_guard_settle.c: Check suite "guard_settle": in guard mode, the
 * size GVN carries in phis through a loop that calls a comparator inlined
 * or a function through the table, for the tests and trip counts of the
 * copy loop after it, becomes one load past the loop (bnd_fresh.c, "a phi
 * read again where it is still the same").  Read from twasmc's optimised
 * IR at -O2 of tests/spec/traps/settled.wast's module (function 4, run),
 * whose results and traps that .wast checks. */
#include <check.h>
#include <stdlib.h>

#include <llvm-c/Core.h>

#include "driver.h"
#include "unit_ir.h"

#define WAST "tests/spec/traps/settled.wast"

static unit_ir ir_of(const char *skip) {
  drv_options o;
  drv_options_default(&o);
  o.opt_level = 2;
  o.skip_pass = skip;
  return unit_ir_of_wast("guard-settle", WAST, &o);
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

/* The control: without the guard pass the phis are there to settle. */
START_TEST(without_guard_pass_phis_stay) {
  unit_ir m = ir_of("guard");
  ck_assert_int_ge(size_phis(&m), 1);
  unit_ir_dispose(&m);
}
END_TEST

static Suite *guard_settle_suite(void) {
  Suite *s = suite_create("guard_settle");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, size_phis_settle_past_the_loop);
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
