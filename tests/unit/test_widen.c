/* test_widen.c: Check suite "widen": in the unchecked copy of a
 * bounds-versioned loop (compiler/bnd_loop.c), the i32 address sums the
 * copy's proved checks cover are i64 sums (compiler/bnd_widen.c), read from
 * twasmc's optimised IR of the module of tests/spec/traps/widened.wast
 * (whose results and traps `make spec-traps` checks). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "driver.h"
#include "unit_ir.h"
#include "twasm_abi.h"

#define WAST "tests/spec/traps/widened.wast"

static unit_ir ir_at(int opt_level, int bounds_mode) {
  drv_options o;
  drv_options_default(&o);
  o.opt_level = opt_level;
  /* the vunroll pass's four copies of axpy's f64x2 loop add LLVM's
   * run-time unroll arithmetic (zext of i32 sums) to bnd.fast blocks,
   * which narrow_sums_in_copy would count: these checks are about the
   * widening alone (simd branch, 28 Nov 2026: left for review) */
  o.skip_pass = "vunroll";
  o.bounds_mode = bounds_mode;
  return unit_ir_of_wast("widen", WAST, &o);
}

/* In function index's blocks whose name starts with "bnd.fast" (the
 * unchecked copy; none: -1), the zexts to i64 of an i32 add. */
static int narrow_sums_in_copy(unit_ir *m, unsigned index) {
  LLVMValueRef fn = unit_ir_func(m, index);
  int n = 0, blocks = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    if (strncmp(LLVMGetBasicBlockName(bb), "bnd.fast", 8) != 0) continue;
    blocks++;
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      if (!LLVMIsAZExtInst(i)) continue;
      LLVMValueRef x = LLVMGetOperand(i, 0);
      n += LLVMIsAInstruction(x) && LLVMGetInstructionOpcode(x) == LLVMAdd;
    }
  }
  return blocks ? n : -1;
}

/* Functions: 0 f64, 1 axpy, 2 sum_before, 3 sum_to_zero, 4 triangle. */
START_TEST(row_plus_offset_widened) {
  for (int level = 2; level <= 3; level++) {
    unit_ir m = ir_at(level, TWASM_BOUNDS_GUARD);
    ck_assert_int_eq(narrow_sums_in_copy(&m, 1), 0);
    unit_ir_dispose(&m);
  }
}
END_TEST

/* A counter running from -n up to 0: its form is negative, so it is
 * sign-extended; read as unsigned the fast copy's condition would be
 * false, and the copy dead. */
START_TEST(negative_counter_widened) {
  unit_ir m = ir_at(2, TWASM_BOUNDS_GUARD);
  ck_assert_int_eq(narrow_sums_in_copy(&m, 3), 0);
  unit_ir_dispose(&m);
}
END_TEST

START_TEST(explicit_mode_has_no_copy) {
  unit_ir m = ir_at(2, TWASM_BOUNDS_EXPLICIT);
  ck_assert_int_eq(narrow_sums_in_copy(&m, 1), -1);
  unit_ir_dispose(&m);
}
END_TEST

static Suite *widen_suite(void) {
  Suite *s = suite_create("widen");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, row_plus_offset_widened);
  tcase_add_test(tc, negative_counter_widened);
  tcase_add_test(tc, explicit_mode_has_no_copy);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(widen_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
