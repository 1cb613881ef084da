/* test_guard_phifn.c: Check suite "guard_phifn": a dispatch loop whose
 * first access (the opcode at 1024 + 4 pc) is checked in every block
 * entering the loop's header keeps, once bnd_late.c has left those checks
 * to the guard page, no phi of the checked address: it is computed from
 * the pc phi in the header again (compiler/bnd_phifn.c).  Read from
 * twasmc's optimised IR at -O2; tests/spec/traps/phifn.wast checks the
 * results and traps of the same loop. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include <llvm-c/Core.h>

#include "driver.h"
#include "unit_ir.h"

/* Opcode 0 adds the operand after it and steps by 2, 1 jumps to its
 * operand, others return. */
static const char *const module_text =
    "(module (memory 1)\n"
    "  (func (param $pc i32) (result i32) (local $acc i32)\n"
    "    (block $exit (loop $next\n"
    "      (block $jump (block $step\n"
    "        (br_table $step $jump $exit\n"
    "          (i32.load offset=1024 (i32.shl (local.get $pc) (i32.const 2)))))\n"
    "        (local.set $acc (i32.add (local.get $acc)\n"
    "          (i32.load offset=1028 (i32.shl (local.get $pc) (i32.const 2)))))\n"
    "        (i32.store (i32.const 0) (local.get $acc))\n"
    "        (local.set $pc (i32.add (local.get $pc) (i32.const 2)))\n"
    "        (br $next))\n"
    "      (local.set $pc (i32.load offset=1028 (i32.shl (local.get $pc) (i32.const 2))))\n"
    "      (br $next)))\n"
    "    (local.get $acc)))\n";

static unit_ir ir_of(const char *skip) {
  drv_options o;
  drv_options_default(&o);
  o.opt_level = 2;
  o.skip_pass = skip;
  return unit_ir_of_wat("guard-phifn", module_text, &o);
}

/* Phis of type i64 (addresses) and all phis in function 0. */
static void count(unit_ir *m, int *wide, int *all) {
  LLVMValueRef fn = unit_ir_func(m, 0);
  *wide = *all = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i && LLVMIsAPHINode(i); i = LLVMGetNextInstruction(i)) {
      (*all)++;
      LLVMTypeRef t = LLVMTypeOf(i);
      *wide += LLVMGetTypeKind(t) == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == 64;
    }
}

START_TEST(address_phis_go) {
  unit_ir m = ir_of(NULL);
  int wide, all;
  count(&m, &wide, &all);
  ck_assert_int_eq(wide, 0);
  ck_assert_int_le(all, 3); /* pc and acc (the outer loop's and the inner's) */
  unit_ir_dispose(&m);
}
END_TEST

/* Control: without the guard pass the checks stay, and the address phis
 * with them (the shape this suite is about still arises). */
START_TEST(without_guard_pass_phis_stay) {
  unit_ir m = ir_of("guard");
  int wide, all;
  count(&m, &wide, &all);
  ck_assert_int_ge(wide, 2);
  unit_ir_dispose(&m);
}
END_TEST

static Suite *guard_phifn_suite(void) {
  Suite *s = suite_create("guard_phifn");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, address_phis_go);
  tcase_add_test(tc, without_guard_pass_phis_stay);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(guard_phifn_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
