/* test_guard_tail.c: Check suite "guard_tail": guard mode's late stage
 * (compiler/bnd_late.c end_tail, compiler/bnd_tail.c) puts the empty
 * barrier after a labelled access's block only where the branch folder's
 * tail merging could join that block's tail with another's: another
 * block going to the same block ends with an access of the same kind.
 * Read from twasmc's optimised IR at -O2 of the functions here:
 *   - alone: a guarded i32 load on one arm of an if, a constant on the
 *     other: no other tail holds a load, no barrier;
 *   - twin: a guarded i32 load on each arm (the second's result xor'ed,
 *     so that SimplifyCFG does not sink the two into one), both going to
 *     the join: an access of the same kind ends the other arm, a barrier;
 *   - narrow: an i32 load on one arm, an i16 load on the other: different
 *     instructions, no barrier. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "driver.h"
#include "unit_ir.h"

static const char *const wat =
    "(module (memory 1)\n"
    " (func (export \"alone\") (param i32 i32) (result i32)\n"
    "  (if (result i32) (local.get 1) (then (i32.load (local.get 0))) (else (i32.const 5))))\n"
    " (func (export \"twin\") (param i32 i32) (result i32)\n"
    "  (if (result i32) (local.get 1) (then (i32.load (local.get 0)))\n"
    "   (else (i32.xor (i32.load offset=4 (local.get 0)) (i32.const 7)))))\n"
    " (func (export \"narrow\") (param i32 i32) (result i32)\n"
    "  (if (result i32) (local.get 1) (then (i32.load (local.get 0)))\n"
    "   (else (i32.load16_u offset=4 (local.get 0))))))\n";

/* Empty inline asm calls (barriers) and labelled loads in fn. */
static void count(LLVMValueRef fn, int *barriers, int *labelled) {
  *barriers = *labelled = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      if (!LLVMIsACallInst(i) || !LLVMIsAInlineAsm(LLVMGetCalledValue(i))) continue;
      size_t len = 0;
      LLVMGetInlineAsmAsmString(LLVMGetCalledValue(i), &len);
      if (len == 0) {
        (*barriers)++;
      } else {
        LLVMValueRef next = LLVMGetNextInstruction(i);
        *labelled += next && LLVMIsALoadInst(next);
      }
    }
}

static void check(const char *name, int want_barriers, int want_labelled) {
  drv_options o;
  drv_options_default(&o);
  o.opt_level = 2;
  unit_ir m = unit_ir_of_wat("guard-tail", wat, &o);
  int barriers, labelled;
  count(unit_ir_exported(m.mod, name), &barriers, &labelled);
  ck_assert_msg(labelled == want_labelled, "%s: %d labelled loads, want %d", name, labelled, want_labelled);
  ck_assert_msg(want_barriers ? barriers >= 1 : barriers == 0, "%s: %d barriers, want %s", name, barriers,
                want_barriers ? ">= 1" : "0");
  unit_ir_dispose(&m);
}

START_TEST(alone_needs_no_barrier) {
  check("alone", 0, 1);
}
END_TEST

START_TEST(twin_loads_get_a_barrier) {
  check("twin", 1, 2);
}
END_TEST

START_TEST(narrower_load_needs_no_barrier) {
  check("narrow", 0, 2);
}
END_TEST

static Suite *guard_tail_suite(void) {
  Suite *s = suite_create("guard_tail");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, alone_needs_no_barrier);
  tcase_add_test(tc, twin_loads_get_a_barrier);
  tcase_add_test(tc, narrower_load_needs_no_barrier);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(guard_tail_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
