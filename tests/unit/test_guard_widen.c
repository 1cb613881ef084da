/* test_guard_widen.c: Check suite "guard_widen": a sum of absolute byte
 * differences whose counter runs from -2^20 up to zero (clang's wasm32
 * code for imgproc.c's abs_diff_sum, unrolled by 2 as clang writes it)
 * keeps its i32 address sums in the versioned loop's unchecked copy
 * (bnd_widen.c leaves byte loops counting up to zero alone), and LLVM's
 * loop vectoriser vectorises it as in the old guard mode.  Widened, the
 * loop stayed scalar: 1.01 G instructions more over imgproc's run.  Read
 * from twasmc's optimised IR at -O2. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include <llvm-c/Core.h>

#include "driver.h"
#include "unit_ir.h"

static const char *const module_text =
    "(module (memory 64)\n"
    "  (func (export \"sad\") (result i64) (local $i i32) (local $a i32) (local $b i32) (local $s i64)\n"
    "    (local.set $i (i32.const -1048576))\n"
    "    (loop $next\n"
    "      (local.set $a (i32.load8_u (i32.add (local.get $i) (i32.const 3149408))))\n"
    "      (local.set $b (i32.load8_u (i32.add (local.get $i) (i32.const 1052256))))\n"
    "      (local.set $s (i64.add (local.get $s) (i64.extend_i32_s\n"
    "        (select (i32.sub (local.get $a) (local.get $b)) (i32.sub (local.get $b) (local.get $a))\n"
    "                (i32.gt_u (local.get $a) (local.get $b))))))\n"
    "      (local.set $a (i32.load8_u (i32.add (local.get $i) (i32.const 3149409))))\n"
    "      (local.set $b (i32.load8_u (i32.add (local.get $i) (i32.const 1052257))))\n"
    "      (local.set $s (i64.add (local.get $s) (i64.extend_i32_s\n"
    "        (select (i32.sub (local.get $a) (local.get $b)) (i32.sub (local.get $b) (local.get $a))\n"
    "                (i32.gt_u (local.get $a) (local.get $b))))))\n"
    "      (br_if $next (local.tee $i (i32.add (local.get $i) (i32.const 2)))))\n"
    "    (local.get $s)))\n";

static unit_ir ir_of(const char *skip) {
  drv_options o;
  drv_options_default(&o);
  o.opt_level = 2;
  o.skip_pass = skip;
  return unit_ir_of_wat("guard-widen", module_text, &o);
}

/* Loads of a vector of bytes in function 0. */
static int vector_byte_loads(unit_ir *m) {
  LLVMValueRef fn = unit_ir_func(m, 0);
  int n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      if (!LLVMIsALoadInst(i)) continue;
      LLVMTypeRef t = LLVMTypeOf(i);
      if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) continue;
      LLVMTypeRef e = LLVMGetElementType(t);
      n += LLVMGetTypeKind(e) == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(e) == 8;
    }
  return n;
}

START_TEST(byte_loop_up_to_zero_vectorises) {
  unit_ir m = ir_of(NULL);
  ck_assert_int_ge(vector_byte_loads(&m), 2);
  unit_ir_dispose(&m);
}
END_TEST

/* Control: the old guard mode (no bounds pass, so no versioning and no
 * widening) vectorises the same loop. */
START_TEST(old_guard_mode_vectorises) {
  unit_ir m = ir_of("bounds");
  ck_assert_int_ge(vector_byte_loads(&m), 2);
  unit_ir_dispose(&m);
}
END_TEST

static Suite *guard_widen_suite(void) {
  Suite *s = suite_create("guard_widen");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, byte_loop_up_to_zero_vectorises);
  tcase_add_test(tc, old_guard_mode_vectorises);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(guard_widen_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
