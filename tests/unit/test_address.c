/* test_address.c: Check suite "address": the address fold
 * (compiler/ir/ir_address.c) takes v128 accesses (16 bytes; 8 for the
 * load-and-extend forms) as proof that an address does not wrap and as
 * accesses to rewrite, so a scalar and a vector access through one i32
 * address share one bounds check (guard mode, bnd_insert.c's groups).
 * Read from twasmc's optimised IR; tests/spec/traps/folded.wast
 * checks the same functions' results and traps in `make spec`. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "driver.h"
#include "unit_ir.h"

/* Function 0: a v128 load at x, then an i32 load at x + 12 (inside the
 * 16 bytes just read).  Function 1: an i32 load at x, then a v128 load
 * at x + 4.  Function 2: an i64x2 load-and-extend (8 bytes) at x, then an
 * i32 load at x + 4.  Function 3: a scalar load at x + 12 first: nothing
 * proves that x + 12 does not wrap, two checks stay. */
static const char *const module_text =
    "(module (memory 1)\n"
    "  (func (param i32) (result i32)\n"
    "    (i32.add (i32x4.extract_lane 1 (v128.load (local.get 0)))\n"
    "             (i32.load (i32.add (local.get 0) (i32.const 12)))))\n"
    "  (func (param i32) (result i32)\n"
    "    (i32.add (i32.load (local.get 0))\n"
    "             (i32x4.extract_lane 3 (v128.load (i32.add (local.get 0) (i32.const 4))))))\n"
    "  (func (param i32) (result i64)\n"
    "    (i64.add (i64x2.extract_lane 0 (v128.load32x2_u (local.get 0)))\n"
    "             (i64.extend_i32_u (i32.load (i32.add (local.get 0) (i32.const 4))))))\n"
    "  (func (param i32) (result i32)\n"
    "    (i32.add (i32.load (i32.add (local.get 0) (i32.const 12)))\n"
    "             (i32x4.extract_lane 0 (v128.load (local.get 0))))))\n";

static unit_ir ir_of(const char *skip) {
  drv_options o;
  drv_options_default(&o);
  o.opt_level = 2;
  o.skip_pass = skip;
  return unit_ir_of_wat("address", module_text, &o);
}

/* The bounds checks of function index: its conditional branches (the
 * functions are straight-line code), and the labels of the checks left to
 * the guard pages after the IR passes (compiler/bnd_late.c). */
static int checks(unit_ir *m, unsigned index) {
  LLVMValueRef fn = unit_ir_func(m, index);
  int n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
    n += term && LLVMIsABranchInst(term) && LLVMIsConditional(term);
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      LLVMValueRef callee = LLVMIsACallInst(i) ? LLVMGetCalledValue(i) : NULL;
      if (!callee || LLVMGetValueKind(callee) != LLVMInlineAsmValueKind) continue;
      size_t len;
      const char *text = LLVMGetInlineAsmAsmString(callee, &len);
      n += memmem(text, len, ".pushsection", 12) != NULL;
    }
  }
  return n;
}

START_TEST(vector_access_proves_the_next) {
  unit_ir m = ir_of(NULL);
  ck_assert_int_eq(checks(&m, 0), 1);
  ck_assert_int_eq(checks(&m, 2), 1);
  unit_ir_dispose(&m);
}
END_TEST

START_TEST(vector_access_is_folded) {
  /* counted before the guard pass: after it, the group's two loads each
   * have a label of their own (bnd_late.c, a group's check) */
  unit_ir m = ir_of("guard");
  ck_assert_int_eq(checks(&m, 1), 1);
  unit_ir_dispose(&m);
}
END_TEST

START_TEST(unproved_stays_checked) {
  unit_ir m = ir_of(NULL);
  ck_assert_int_eq(checks(&m, 3), 2);
  unit_ir_dispose(&m);
}
END_TEST

START_TEST(skip_pass_keeps_both) {
  unit_ir m = ir_of("addresses");
  ck_assert_int_eq(checks(&m, 0), 2);
  ck_assert_int_eq(checks(&m, 1), 2);
  unit_ir_dispose(&m);
}
END_TEST

static Suite *address_suite(void) {
  Suite *s = suite_create("address");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, vector_access_proves_the_next);
  tcase_add_test(tc, vector_access_is_folded);
  tcase_add_test(tc, unproved_stays_checked);
  tcase_add_test(tc, skip_pass_keeps_both);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(address_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
