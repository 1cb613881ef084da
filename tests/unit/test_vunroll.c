/* test_vunroll.c: Check suite "vunroll": the one-block loops of v128
 * arithmetic that compiler/ir/ir_vunroll.c asks LLVM to unroll, read from
 * twasmc's optimised IR of the module in tests/wast/simd_unroll.wast
 * (whose results, remainders included, the spec runner checks). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "driver.h"
#include "unit_ir.h"

#define WAST "tests/wast/simd_unroll.wast"

static unit_ir ir_at(int opt_level, const char *skip, bool offload) {
  drv_options o;
  drv_options_default(&o);
  o.opt_level = opt_level;
  o.skip_pass = skip;
  o.offload.enabled = offload;
  return unit_ir_of_wast("vunroll", WAST, &o);
}

/* Instructions of op whose type is a vector of lanes lanes in fn. */
static int vector_ops(LLVMValueRef fn, LLVMOpcode op, unsigned lanes) {
  int n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      LLVMTypeRef t = LLVMTypeOf(i);
      n += LLVMGetInstructionOpcode(i) == op && LLVMGetTypeKind(t) == LLVMVectorTypeKind &&
           LLVMGetVectorSize(t) == lanes;
    }
  return n;
}

/* Functions: 0 $init, 1 $sum, 2 $axpy, 3 $twice, 4 $axpy_call, 5 run,
 * 6 run_call, 7 iloop. */

/* axpy's loop runs four vectors a trip (and a remainder loop of one):
 * at least five f64x2 multiplies; iloop's likewise. */
START_TEST(vector_loops_unrolled_by_four) {
  unit_ir m = ir_at(2, NULL, true);
  ck_assert_int_ge(vector_ops(unit_ir_func(&m, 2), LLVMFMul, 2), 5);
  ck_assert_int_ge(vector_ops(unit_ir_func(&m, 7), LLVMMul, 4), 5);
  unit_ir_dispose(&m);
}
END_TEST

/* Without the offload stage the pipeline is not staged and the pass does
 * not run (LLVM's pipeline has unrolled such loops by two already): the
 * same IR as with --skip-pass=vunroll. */
START_TEST(not_without_offload) {
  unit_ir m = ir_at(2, NULL, false);
  int with = vector_ops(unit_ir_func(&m, 2), LLVMFMul, 2);
  unit_ir_dispose(&m);
  m = ir_at(2, "vunroll", false);
  ck_assert_int_eq(vector_ops(unit_ir_func(&m, 2), LLVMFMul, 2), with);
  unit_ir_dispose(&m);
}
END_TEST

/* Without the pass LLVM leaves them at fewer copies. */
START_TEST(skip_pass_leaves_them) {
  unit_ir m = ir_at(2, "vunroll", true);
  ck_assert_int_lt(vector_ops(unit_ir_func(&m, 2), LLVMFMul, 2), 5);
  ck_assert_int_lt(vector_ops(unit_ir_func(&m, 7), LLVMMul, 4), 5);
  unit_ir_dispose(&m);
}
END_TEST

/* At -O1 there is no unroller: one multiply each. */
START_TEST(not_at_o1) {
  unit_ir m = ir_at(1, NULL, true);
  ck_assert_int_eq(vector_ops(unit_ir_func(&m, 2), LLVMFMul, 2), 1);
  unit_ir_dispose(&m);
}
END_TEST

static Suite *vunroll_suite(void) {
  Suite *s = suite_create("vunroll");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, vector_loops_unrolled_by_four);
  tcase_add_test(tc, skip_pass_leaves_them);
  tcase_add_test(tc, not_without_offload);
  tcase_add_test(tc, not_at_o1);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(vunroll_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
