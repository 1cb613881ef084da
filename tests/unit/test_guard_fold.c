/* test_guard_fold.c: Check suite "guard_fold": two rules of guard mode's
 * late stage, read from twasmc's optimised IR at -O2 of
 * tests/spec/traps/compared.wast's module (which checks the results and
 * traps of the same functions):
 *   - cmp (function 0): of a comparator's two guarded 16-bit loads, the
 *     second, compared with the first in its block's branch and again in
 *     another block, stays a plain load after its label, so that code
 *     generation may fold it into the compare (compiler/bnd_fold.c); the
 *     first, with the second's label between it and the compare, stays
 *     volatile;
 *   - rare (function 1): the size load the checks of its first access
 *     left in the entry block, once those went to the guard page, moves
 *     down to the rare path whose versioned loop's test reads it
 *     (compiler/bnd_fresh.c, sink_size_load). */
#include <check.h>
#include <stdlib.h>

#include <llvm-c/Core.h>

#include "driver.h"
#include "unit_ir.h"

#define WAST "tests/spec/traps/compared.wast"

static unit_ir ir_of(void) {
  drv_options o;
  drv_options_default(&o);
  o.opt_level = 2;
  return unit_ir_of_wast("guard-fold", WAST, &o);
}

static bool is_i16_load(LLVMValueRef i) {
  return LLVMIsALoadInst(i) && LLVMTypeOf(i) == LLVMInt16TypeInContext(LLVMGetTypeContext(LLVMTypeOf(i)));
}

static bool is_label(LLVMValueRef i) {
  return i && LLVMIsACallInst(i) && LLVMIsAInlineAsm(LLVMGetCalledValue(i));
}

START_TEST(compared_load_left_plain) {
  unit_ir m = ir_of();
  LLVMValueRef fn = unit_ir_func(&m, 0);
  int vol = 0, plain = 0, labelled = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      if (!is_i16_load(i)) continue;
      if (LLVMGetVolatile(i)) {
        vol++;
        continue;
      }
      plain++;
      labelled += is_label(LLVMGetPreviousInstruction(i));
    }
  ck_assert_int_eq(vol, 1);      /* the first key */
  ck_assert_int_eq(plain, 1);    /* the second, volatile before bnd_fold.c */
  ck_assert_int_eq(labelled, 1); /* right after its label */
  unit_ir_dispose(&m);
}
END_TEST

/* i64 loads (the size: the only ones rare makes) in the entry block, and
 * in all. */
static void size_loads(const unit_ir *m, int *entry, int *all) {
  LLVMValueRef fn = unit_ir_func(m, 1);
  LLVMBasicBlockRef first = LLVMGetEntryBasicBlock(fn);
  *entry = *all = 0;
  for (LLVMBasicBlockRef bb = first; bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
      if (LLVMIsALoadInst(i) && LLVMTypeOf(i) == LLVMInt64TypeInContext(LLVMGetTypeContext(LLVMTypeOf(i)))) {
        (*all)++;
        *entry += bb == first;
      }
}

START_TEST(size_load_moves_to_its_rare_use) {
  unit_ir m = ir_of();
  int entry, all;
  size_loads(&m, &entry, &all);
  ck_assert_int_ge(all, 1); /* the versioned loop's test still reads it */
  ck_assert_int_eq(entry, 0);
  unit_ir_dispose(&m);
}
END_TEST

static Suite *guard_fold_suite(void) {
  Suite *s = suite_create("guard_fold");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, compared_load_left_plain);
  tcase_add_test(tc, size_load_moves_to_its_rare_use);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(guard_fold_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
