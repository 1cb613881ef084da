/* test_guard_reach.c: Check suite "guard_reach": a versioned nest over a
 * triangle (an inner loop whose start or bound moves with the outer
 * counter: j from i, from i + 1, or up to i) has its stores bounded by
 * the triangle's real extent (compiler/bnd_trip.c, bnd_trip_range), not
 * by the largest row start plus the largest row length.  Each function
 * writes a 64-column i32 matrix (and its mirror) at a constant base, so
 * the check block is a constant compare with the memory's size, which is
 * at least the declared page: where the triangle ends exactly at 65536
 * the test folds to true and only the unchecked copy is left (no test,
 * no checked copy); one word further, the test and the checked copy
 * stay.  Before, the upper triangle's mirror was bounded at 81664 and the
 * upper and strict triangles kept their checked copies (the lower one's
 * box corner is its real last element: a guard against losing it).  tests/spec/traps/upper.wast checks results and traps. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "driver.h"
#include "unit_ir.h"

/* the store pair a[i][j] = a[j][i] = 64 i + j at BASE (text spliced in) */
#define PAIR(BASE)                                                                                   \
  "      (local.set $v (i32.add (i32.shl (local.get $i) (i32.const 6)) (local.get $j)))\n"          \
  "      (i32.store (i32.add (i32.const " BASE ")\n"                                                 \
  "        (i32.shl (i32.add (i32.shl (local.get $i) (i32.const 6)) (local.get $j)) (i32.const 2)))\n" \
  "        (local.get $v))\n"                                                                        \
  "      (i32.store (i32.add (i32.const " BASE ")\n"                                                 \
  "        (i32.shl (i32.add (i32.shl (local.get $j) (i32.const 6)) (local.get $i)) (i32.const 2)))\n" \
  "        (local.get $v))\n"

/* f0: j from i to 63 at 49152 (a[63][63] the last word of the page);
 * f1: the same at 49156 (a[63][63] past it);
 * f2: j from 0 to i at 49152 (lower triangle, the same extent);
 * f3: i to 62, j from i + 1 to 63 at 49156 (the strict triangle:
 *     a[63][62] the last word).  clang's rotated shape. */
static const char *const module_text =
    "(module (memory 1)\n"
    "  (func (local $i i32) (local $j i32) (local $v i32)\n"
    "    (loop $outer (local.set $j (local.get $i))\n"
    "     (loop $inner\n" PAIR("49152")
    "      (local.set $j (i32.add (local.get $j) (i32.const 1)))\n"
    "      (br_if $inner (i32.lt_s (local.get $j) (i32.const 64))))\n"
    "     (local.set $i (i32.add (local.get $i) (i32.const 1)))\n"
    "     (br_if $outer (i32.lt_s (local.get $i) (i32.const 64)))))\n"
    "  (func (local $i i32) (local $j i32) (local $v i32)\n"
    "    (loop $outer (local.set $j (local.get $i))\n"
    "     (loop $inner\n" PAIR("49156")
    "      (local.set $j (i32.add (local.get $j) (i32.const 1)))\n"
    "      (br_if $inner (i32.lt_s (local.get $j) (i32.const 64))))\n"
    "     (local.set $i (i32.add (local.get $i) (i32.const 1)))\n"
    "     (br_if $outer (i32.lt_s (local.get $i) (i32.const 64)))))\n"
    "  (func (local $i i32) (local $j i32) (local $v i32)\n"
    "    (loop $outer (local.set $j (i32.const 0))\n"
    "     (loop $inner\n" PAIR("49152")
    "      (local.set $j (i32.add (local.get $j) (i32.const 1)))\n"
    "      (br_if $inner (i32.le_s (local.get $j) (local.get $i))))\n"
    "     (local.set $i (i32.add (local.get $i) (i32.const 1)))\n"
    "     (br_if $outer (i32.lt_s (local.get $i) (i32.const 64)))))\n"
    "  (func (local $i i32) (local $j i32) (local $v i32)\n"
    "    (loop $outer (local.set $j (i32.add (local.get $i) (i32.const 1)))\n"
    "     (loop $inner\n" PAIR("49156")
    "      (local.set $j (i32.add (local.get $j) (i32.const 1)))\n"
    "      (br_if $inner (i32.lt_s (local.get $j) (i32.const 64))))\n"
    "     (local.set $i (i32.add (local.get $i) (i32.const 1)))\n"
    "     (br_if $outer (i32.lt_s (local.get $i) (i32.const 63)))))\n"
    ")\n";

static unit_ir ir_of(void) {
  drv_options o;
  drv_options_default(&o);
  o.opt_level = 2;
  return unit_ir_of_wat("guard-reach", module_text, &o);
}

typedef struct {
  int checks;      /* branches to the out-of-bounds trap block */
  int tests;       /* versioned nests' tests left (twasm.bnd.test) */
  int checked;     /* blocks of a checked copy (twasm.bounds.checked) */
} shape;

static shape shape_of(unit_ir *m, unsigned index) {
  LLVMValueRef fn = unit_ir_func(m, index);
  unsigned test_kind = LLVMGetMDKindIDInContext(m->ctx, "twasm.bnd.test", 14);
  unsigned checked_kind = LLVMGetMDKindIDInContext(m->ctx, "twasm.bounds.checked", 20);
  shape s = {0};
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
    if (term && LLVMIsABranchInst(term) && LLVMIsConditional(term)) {
      for (unsigned k = 0; k < 2; k++)
        s.checks += strncmp(LLVMGetBasicBlockName(LLVMGetSuccessor(term, k)), "bounds_trap", 11) == 0;
      s.tests += LLVMGetMetadata(term, test_kind) != NULL;
    }
    s.checked += term && LLVMGetMetadata(term, checked_kind) != NULL;
  }
  return s;
}

/* Only the unchecked copy: its test folded to true. */
static void only_fast_copy(unsigned index) {
  unit_ir m = ir_of();
  shape s = shape_of(&m, index);
  ck_assert_int_eq(s.checks, 0);
  ck_assert_int_eq(s.tests, 0);
  ck_assert_int_eq(s.checked, 0);
  unit_ir_dispose(&m);
}

START_TEST(upper_triangle_to_the_last_word) { only_fast_copy(0); }
END_TEST

START_TEST(lower_triangle_to_the_last_word) { only_fast_copy(2); }
END_TEST

START_TEST(strict_triangle_to_the_last_word) { only_fast_copy(3); }
END_TEST

START_TEST(one_word_past_keeps_checks) {
  unit_ir m = ir_of();
  shape s = shape_of(&m, 1);
  /* a[63][63] lies past the first page: the checked copy stays, behind
   * the test (memory may have grown; its checks left to the guard pages
   * by the guard pass, its accesses labelled) */
  ck_assert_int_eq(s.tests, 1);
  ck_assert_int_ge(s.checked, 1);
  unit_ir_dispose(&m);
}
END_TEST

static bool int_type(LLVMTypeRef t, unsigned bits) {
  return LLVMGetTypeKind(t) == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == bits;
}

/* upper.wast's triangle, base and n parameters: its check block, built
 * in i128, is rewritten in i64 (bnd_narrow.c): every value's interval in
 * reach, trip_last's `max(bound - start, 0)` (a select of the larger)
 * read as at least 0, so its shift needs no clamp.  Before, the select's
 * interval was the union of its operands' (down to -1) and the block
 * stayed in i128 (14 instructions after -O2). */
/* fn has exactly one versioning test and no i128 value anywhere. */
static void assert_one_test_no_i128(const unit_ir *m, LLVMValueRef fn) {
  unsigned test_kind = LLVMGetMDKindIDInContext(m->ctx, "twasm.bnd.test", 14);
  int tests = 0, wide = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
    tests += term && LLVMGetMetadata(term, test_kind) != NULL;
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      wide += int_type(LLVMTypeOf(i), 128);
      for (int k = 0; k < LLVMGetNumOperands(i); k++)
        wide += LLVMGetValueKind(LLVMGetOperand(i, k)) != LLVMBasicBlockValueKind &&
                int_type(LLVMTypeOf(LLVMGetOperand(i, k)), 128);
    }
  }
  ck_assert_int_eq(tests, 1);
  ck_assert_int_eq(wide, 0);
}

START_TEST(triangle_test_in_i64) {
  drv_options o;
  drv_options_default(&o);
  o.opt_level = 2;
  unit_ir m = unit_ir_of_wast("guard-reach-upper", "tests/spec/traps/upper.wast", &o);
  LLVMValueRef fn = unit_ir_func(&m, 0);
  assert_one_test_no_i128(&m, fn);
  unit_ir_dispose(&m);
}
END_TEST

/* A loop storing p[i] that reads q + 664 in every iteration (SQLite's
 * OP_Column header loop reads its cursor's fields so): the invariant
 * load's end, `zext q + 664` computed before the loop in i64, reaches the
 * check block through bnd_lin.c's sign extension, and its interval
 * ([664, 2^32 + 663], bnd_narrow.c's range64) puts it in reach, so the
 * block is rewritten in i64.  Before, the sign extension of an i64 left
 * the whole block in i128 (speedtest1's OP_Column entry: 43 instructions
 * of test, the i128 adds as add/adc pairs). */
static const char *const invariant_text =
    "(module (memory 1)\n"
    "  (func (param $p i32) (param $q i32) (param $n i32) (local $i i32)\n"
    "    (loop $l\n"
    "      (i32.store (i32.add (local.get $p) (i32.shl (local.get $i) (i32.const 2)))\n"
    "        (i32.add (local.get $i) (i32.load offset=664 (local.get $q))))\n"
    "      (local.set $i (i32.add (local.get $i) (i32.const 1)))\n"
    "      (br_if $l (i32.lt_u (local.get $i) (local.get $n))))))\n";

START_TEST(invariant_end_test_in_i64) {
  drv_options o;
  drv_options_default(&o);
  o.opt_level = 2;
  unit_ir m = unit_ir_of_wat("guard-reach-invariant", invariant_text, &o);
  LLVMValueRef fn = unit_ir_func(&m, 0);
  assert_one_test_no_i128(&m, fn);
  unit_ir_dispose(&m);
}
END_TEST

static Suite *guard_reach_suite(void) {
  Suite *s = suite_create("guard_reach");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, upper_triangle_to_the_last_word);
  tcase_add_test(tc, lower_triangle_to_the_last_word);
  tcase_add_test(tc, strict_triangle_to_the_last_word);
  tcase_add_test(tc, one_word_past_keeps_checks);
  tcase_add_test(tc, triangle_test_in_i64);
  tcase_add_test(tc, invariant_end_test_in_i64);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(guard_reach_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
