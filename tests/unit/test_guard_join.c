/* test_guard_join.c: Check suite "guard_join": checks that loop rotation
 * copied into every block entering an access's block (preheader and
 * latch, the access at the loop header through a phi) are left to the
 * guard page together (compiler/bnd_late.c), and the loop's size phi
 * goes where only versioned nests' tests used it (bnd_fresh.c).  Read
 * from twasmc's optimised IR at -O2; tests/spec/traps/joined.wast checks
 * the results and traps of the same shapes. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "driver.h"
#include "unit_ir.h"

/* Function 0: walks bytes from pc until a zero one, storing the count at
 * each step (a store before the next iteration's load, so the latch's
 * check is not the only way into the load's block).  Function 1: the
 * same load behind a store in the same block, its check the only way in
 * (kept as a control: one check, left to the guard page as before). */
static const char *const module_text =
    "(module (memory 1)\n"
    "  (func (param $pc i32) (result i32) (local $n i32)\n"
    "    (block $done (loop $next\n"
    "      (br_if $done (i32.eqz (i32.load8_u (local.get $pc))))\n"
    "      (i32.store (i32.const 0) (local.get $n))\n"
    "      (local.set $n (i32.add (local.get $n) (i32.const 1)))\n"
    "      (local.set $pc (i32.add (local.get $pc) (i32.const 1)))\n"
    "      (br $next)))\n"
    "    (local.get $n))\n"
    "  (func (param $pc i32) (result i32)\n"
    "    (i32.store (i32.const 0) (i32.const 1))\n"
    "    (i32.load8_u (local.get $pc))))\n";

static unit_ir ir_of(const char *skip) {
  drv_options o;
  drv_options_default(&o);
  o.opt_level = 2;
  o.skip_pass = skip;
  return unit_ir_of_wat("guard-join", module_text, &o);
}

/* In function index: the branches to the out-of-bounds trap block (named
 * bounds_trap by bnd_insert.c) and the accesses labelled for the guard
 * pages (the asm pushing to the pc map). */
static void count(unit_ir *m, unsigned index, int *checks, int *labels) {
  LLVMValueRef fn = unit_ir_func(m, index);
  *checks = *labels = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
    if (term && LLVMIsABranchInst(term) && LLVMIsConditional(term))
      for (unsigned s = 0; s < 2; s++) {
        size_t len;
        const char *succ = LLVMGetBasicBlockName(LLVMGetSuccessor(term, s));
        len = strlen(succ);
        *checks += len >= 11 && strncmp(succ, "bounds_trap", 11) == 0;
      }
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      LLVMValueRef callee = LLVMIsACallInst(i) ? LLVMGetCalledValue(i) : NULL;
      if (!callee || LLVMGetValueKind(callee) != LLVMInlineAsmValueKind) continue;
      size_t len;
      const char *text = LLVMGetInlineAsmAsmString(callee, &len);
      *labels += memmem(text, len, ".pushsection", 12) != NULL;
    }
  }
}

START_TEST(rotated_checks_go_together) {
  unit_ir m = ir_of(NULL);
  int checks, labels;
  count(&m, 0, &checks, &labels);
  ck_assert_int_eq(checks, 0);
  ck_assert_int_eq(labels, 1);
  unit_ir_dispose(&m);
}
END_TEST

START_TEST(single_check_still_goes) {
  unit_ir m = ir_of(NULL);
  int checks, labels;
  count(&m, 1, &checks, &labels);
  ck_assert_int_eq(checks, 0);
  ck_assert_int_eq(labels, 1);
  unit_ir_dispose(&m);
}
END_TEST

START_TEST(without_guard_pass_checks_stay) {
  unit_ir m = ir_of("guard");
  int checks, labels;
  count(&m, 0, &checks, &labels);
  ck_assert_int_ge(checks, 2);
  ck_assert_int_eq(labels, 0);
  unit_ir_dispose(&m);
}
END_TEST

static Suite *guard_join_suite(void) {
  Suite *s = suite_create("guard_join");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, rotated_checks_go_together);
  tcase_add_test(tc, single_check_still_goes);
  tcase_add_test(tc, without_guard_pass_checks_stay);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(guard_join_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
