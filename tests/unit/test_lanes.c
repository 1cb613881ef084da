/* test_lanes.c: Check suite "lanes": what the lanes pass
 * (compiler/ir/ir_lanes.c) rewrites and what it must leave alone, read from
 * twasmc's optimised IR of the module in tests/wast/simd_lanes.wast (whose
 * results the spec runner checks in `make spec`). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "driver.h"
#include "unit_ir.h"

#define WAST "tests/wast/simd_lanes.wast"

static unit_ir ir_at(int opt_level, const char *skip) {
  drv_options o;
  drv_options_default(&o);
  o.opt_level = opt_level;
  o.skip_pass = skip;
  return unit_ir_of_wast("lanes", WAST, &o);
}

/* and <N x i32> x, splat(0x7fff): the multiply's masks. */
static int masks(LLVMValueRef fn) {
  int n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      if (LLVMGetInstructionOpcode(i) != LLVMAnd) continue;
      LLVMValueRef c = LLVMGetOperand(i, 1);
      if (LLVMGetTypeKind(LLVMTypeOf(c)) != LLVMVectorTypeKind || !LLVMIsAConstant(c)) continue;
      LLVMValueRef e = LLVMGetAggregateElement(c, 0);
      if (e && LLVMIsAConstantInt(e) && LLVMConstIntGetZExtValue(e) == 0x7fff) n++;
    }
  return n;
}

/* Calls of the intrinsic whose name starts with prefix; instructions of op. */
static int calls(LLVMValueRef fn, const char *prefix) {
  int n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      if (LLVMGetInstructionOpcode(i) != LLVMCall) continue;
      size_t len;
      const char *name = LLVMGetValueName2(LLVMGetCalledValue(i), &len);
      if (!strncmp(name, prefix, strlen(prefix))) n++;
    }
  return n;
}

static int count(LLVMValueRef fn, LLVMOpcode op) {
  int n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
      n += LLVMGetInstructionOpcode(i) == op;
  return n;
}

/* Functions of the module: 0 $w, 1 blur9, 2 square9, 3 wide_sum, 4 mul16,
 * 5 absdiff, 6 absdiff64, 7 $q1, 8 $q3, 9 quarters, 10 mixed_quarters,
 * 11 not_absdiff. */
START_TEST(multiplies_below_2_15_masked) {
  for (int level = 1; level <= 3; level++) {
    unit_ir m = ir_at(level, NULL);
    ck_assert_int_eq(masks(unit_ir_func(&m, 1)), 1); /* the sum; the constant is visible */
    ck_assert_int_eq(masks(unit_ir_func(&m, 2)), 1); /* one mask for both operands */
    ck_assert_int_eq(masks(unit_ir_func(&m, 3)), 0); /* up to 255 * 129 + 255: not below 2^15 */
    ck_assert_int_eq(masks(unit_ir_func(&m, 4)), 0); /* 16-bit lanes */
    unit_ir_dispose(&m);
  }
}
END_TEST

START_TEST(absolute_differences_traced) {
  unit_ir m = ir_at(2, NULL);
  ck_assert_int_eq(calls(unit_ir_func(&m, 6), "llvm.usub.sat."), 2); /* bytes: |a - b| before widening */
  ck_assert_int_eq(count(unit_ir_func(&m, 6), LLVMSExt), 0); /* |a - b| widened: zext nneg */
  ck_assert_int_eq(count(unit_ir_func(&m, 6), LLVMSelect), 0);
  /* The comparison's lanes are not the subtraction's: left alone. */
  ck_assert_int_eq(calls(unit_ir_func(&m, 11), "llvm.abs.") + calls(unit_ir_func(&m, 11), "llvm.usub.sat."), 0);
  unit_ir_dispose(&m);
}
END_TEST

/* 16-bit sums of whole halves: an add of <8 x i16> zero-extended from the
 * 8-byte halves of the loads. */
static int half_sums(LLVMValueRef fn) {
  int n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      if (LLVMGetInstructionOpcode(i) != LLVMZExt) continue;
      LLVMValueRef s = LLVMGetOperand(i, 0);
      if (!LLVMIsAShuffleVectorInst(s) || LLVMGetVectorSize(LLVMTypeOf(s)) != 8) continue;
      bool whole = true;
      for (unsigned k = 0; k < 8; k++) whole &= LLVMGetMaskValue(s, k) == LLVMGetMaskValue(s, 0) + (int)k;
      n += whole && LLVMGetMaskValue(s, 0) % 8 == 0;
    }
  return n;
}

START_TEST(byte_sums_share_halves) {
  unit_ir m = ir_at(2, NULL);
  ck_assert_int_eq(half_sums(unit_ir_func(&m, 1)), 9); /* nine loads, one half each */
  ck_assert_int_eq(half_sums(unit_ir_func(&m, 9)), 6); /* three vectors, two halves */
  ck_assert_int_eq(half_sums(unit_ir_func(&m, 10)), 0); /* bytes 4.. plus bytes 12..: left alone */
  unit_ir_dispose(&m);
}
END_TEST

START_TEST(skip_pass_leaves_them) {
  unit_ir m = ir_at(2, "lanes");
  ck_assert_int_eq(masks(unit_ir_func(&m, 1)), 0);
  ck_assert_int_eq(calls(unit_ir_func(&m, 6), "llvm.usub.sat."), 0);
  ck_assert_int_eq(half_sums(unit_ir_func(&m, 9)), 0);
  unit_ir_dispose(&m);
}
END_TEST

/* The IR of a compilation by the command-line compiler (a process of its
 * own: heap addresses differ from run to run); malloc'd, NULL on failure. */
static char *cli_ir(const char *wat) {
  const char *tw = getenv("TWASMC") ? getenv("TWASMC") : "build/bin/twasmc";
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s -O2 --emit-llvm %s -o -", tw, wat);
  FILE *p = popen(cmd, "r");
  if (!p) return NULL;
  size_t n = 0, cap = 1 << 16;
  char *text = malloc(cap);
  for (size_t got; text && (got = fread(text + n, 1, cap - n - 1, p)) > 0;) {
    n += got;
    if (cap - n < 2) {
      char *t = realloc(text, cap *= 2);
      if (!t) free(text);
      text = t;
    }
  }
  if (pclose(p) != 0 || !text) {
    free(text);
    return NULL;
  }
  text[n] = 0;
  return text;
}

/* The halves' sums are built in the function's order of their loads, not
 * in the order of the loads' addresses in the compiler's heap (which made
 * --emit-llvm differ between two runs on the same module). */
START_TEST(same_ir_every_run) {
  char wat[512];
  unit_wast_module("lanes-runs", WAST, wat, sizeof wat);
  char *first = cli_ir(wat);
  ck_assert_ptr_nonnull(first);
  ck_assert_ptr_nonnull(strstr(first, "half16"));
  for (int run = 1; run < 10; run++) {
    char *again = cli_ir(wat);
    ck_assert_ptr_nonnull(again);
    ck_assert_msg(!strcmp(first, again), "run %d of the same module gave other IR", run + 1);
    free(again);
  }
  free(first);
  remove(wat);
}
END_TEST

static Suite *lanes_suite(void) {
  Suite *s = suite_create("lanes");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, multiplies_below_2_15_masked);
  tcase_add_test(tc, absolute_differences_traced);
  tcase_add_test(tc, byte_sums_share_halves);
  tcase_add_test(tc, skip_pass_leaves_them);
  tcase_add_test(tc, same_ir_every_run);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(lanes_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
