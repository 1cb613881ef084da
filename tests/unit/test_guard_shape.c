/* test_guard_shape.c: Check suite "guard_shape": the shapes guard mode's
 * late rules leave in twasmc's optimised IR at -O2 (compiler/bnd_late.c,
 * compiler/bnd_narrow.c): a guarded byte and the plain byte below it
 * read as one volatile 16-bit load, a store whose continuation reloads
 * bytes an earlier access reached left to the guard page, and a
 * versioned copy loop's check block computed in i64 although its trip
 * count shifts a possibly negative value, and the loads of a group
 * under one check (a `bounds_which` block picking the one that fails)
 * each labelled, and an access through a phi of addresses whose check
 * is on the phi of their indices, and a group's check with loads proved
 * elsewhere between it and its accesses.  tests/spec/traps/paired.wast,
 * anchored.wast, clamped.wast, picked.wast, carried.wast and celled.wast check the results and traps of the same
 * functions. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "driver.h"
#include "unit_ir.h"

/* f0: an interpreter loop whose opcode 1 adds (pc[1] | pc[2] << 8) << 4,
 * pc[2] read first (in a function that only reads the two bytes, LLVM
 * merges them itself).  f1: q[1] = p[1];
 * q[2] = p[0] (8-byte words: p[0] lies below the p[1] read before it).
 * f2: do { 4 bytes copied at i } while ((i += 4) != end).
 * f3: p->fd == p->bk (offsets 8 and 12 under one check of 16 bytes).
 * f4: a bytecode loop reading frames[fp] + 12, fp changed by two of its
 * cases (tests/spec/traps/carried.wast): GVN carries the address and its
 * index around the loop in two phis.
 * f5: an entry's tag and hash word read, the slot found past an if/else,
 * then the entry's 8-byte words copied there (tests/spec/traps/dominated.wast):
 * the first word's load lies between the first store's check and the
 * store, a join below the accesses that prove it.
 * f6, f7: a binary search over a page's cells (SQLite's): each step reads
 * a cell pointer's two bytes big-endian under one check, the page's mask
 * and data offset (loaded between that check and the bytes) proved by
 * the check of the page header, and calls f6, which may grow memory
 * (tests/spec/traps/celled.wast).
 * f8, f9: the same search calling a comparator that cannot grow memory:
 * LLVM unswitches the page header's check out of the loop, so the loads
 * between the cell check and its bytes are proved a join away.
 * f10: a record's header byte and type byte (SQLite's
 * vdbeRecordCompareInt), one check of both; InstCombine writes the which
 * block's `p + 1 > size` as `size > p`, its offsets swapped
 * (tests/spec/traps/picked.wast "header"). */
static const char *const module_text =
    "(module (memory 1)\n"
    "  (func (param $pc i32) (result i32) (local $acc i32) (local $op i32)\n"
    "    (loop $next\n"
    "      (local.set $op (i32.load8_u (local.get $pc)))\n"
    "      (if (i32.eq (local.get $op) (i32.const 1))\n"
    "        (then (local.set $acc (i32.add (local.get $acc)\n"
    "                 (i32.or (i32.shl (i32.load8_u offset=2 (local.get $pc)) (i32.const 12))\n"
    "                         (i32.shl (i32.load8_u offset=1 (local.get $pc)) (i32.const 4)))))\n"
    "              (local.set $pc (i32.add (local.get $pc) (i32.const 3))))\n"
    "        (else (local.set $pc (i32.add (local.get $pc) (i32.const 1)))))\n"
    "      (br_if $next (local.get $op)))\n"
    "    (local.get $acc))\n"
    "  (func (param $p i32) (param $q i32)\n"
    "    (i64.store offset=8 (local.get $q) (i64.load offset=8 (local.get $p)))\n"
    "    (i64.store offset=16 (local.get $q) (i64.load (local.get $p))))\n"
    "  (func (param $dst i32) (param $src i32) (param $i i32) (param $end i32)\n"
    "    (local $d i32) (local $s i32)\n"
    "    (loop $next\n"
    "      (local.set $d (i32.add (local.get $dst) (local.get $i)))\n"
    "      (local.set $s (i32.add (local.get $src) (local.get $i)))\n"
    "      (i32.store8 (local.get $d) (i32.load8_u (local.get $s)))\n"
    "      (i32.store8 offset=1 (local.get $d) (i32.load8_u offset=1 (local.get $s)))\n"
    "      (i32.store8 offset=2 (local.get $d) (i32.load8_u offset=2 (local.get $s)))\n"
    "      (i32.store8 offset=3 (local.get $d) (i32.load8_u offset=3 (local.get $s)))\n"
    "      (local.set $i (i32.add (local.get $i) (i32.const 4)))\n"
    "      (br_if $next (i32.ne (local.get $i) (local.get $end)))))\n"
    "  (func (param $p i32) (result i32)\n"
    "    (i32.eq (i32.load offset=8 (local.get $p)) (i32.load offset=12 (local.get $p))))\n"
    "  (func (param $code i32) (result i32) (local $pc i32) (local $fp i32) (local $op i32) (local $acc i32)\n"
    "    (loop $next\n"
    "      (local.set $op (i32.load (i32.add (local.get $code) (i32.shl (local.get $pc) (i32.const 2)))))\n"
    "      (local.set $pc (i32.add (local.get $pc) (i32.const 1)))\n"
    "      (block $done (block $ret (block $call (block $arg\n"
    "        (br_table $arg $call $ret $done (local.get $op)))\n"
    "        (local.set $acc (i32.add (local.get $acc)\n"
    "          (i32.load offset=12 (i32.add (i32.const 65512) (i32.shl (local.get $fp) (i32.const 3))))))\n"
    "        (br $next))\n"
    "        (local.set $fp (i32.add (local.get $fp) (i32.const 1)))\n"
    "        (i32.store offset=4 (i32.add (i32.const 65512) (i32.shl (local.get $fp) (i32.const 3))) (local.get $pc))\n"
    "        (br $next))\n"
    "        (local.set $fp (i32.sub (local.get $fp) (i32.const 1)))\n"
    "        (br $next))\n"
    "      (return (local.get $acc)))\n"
    "    (unreachable))\n"
    "  (func (param $p i32) (param $q i32) (param $k i32) (result i32) (local $h i32)\n"
    "    (if (i32.eqz (i32.load (local.get $p))) (then (return (i32.const 0))))\n"
    "    (local.set $h (i32.load offset=12 (local.get $p)))\n"
    "    (if (i32.eq (local.get $k) (i32.const 2))\n"
    "      (then (local.set $h (i32.mul (local.get $h) (i32.const 3))))\n"
    "      (else (local.set $h (i32.xor (local.get $h) (i32.load offset=8 (local.get $p))))))\n"
    "    (local.set $q (i32.add (local.get $q) (i32.shl (i32.and (local.get $h) (i32.const 15)) (i32.const 5))))\n"
    "    (i64.store (local.get $q) (i64.load (local.get $p)))\n"
    "    (i64.store offset=8 (local.get $q) (i64.load offset=8 (local.get $p)))\n"
    "    (i32.const 1))\n"
    "  (func $cmp (param $c i32) (result i32)\n"
    "    (if (i32.eq (i32.load8_u (local.get $c)) (i32.const 9)) (then (drop (memory.grow (i32.const 0)))))\n"
    "    (i32.sub (i32.load8_u (local.get $c)) (i32.const 7)))\n"
    "  (func (param $pg i32) (result i32) (local $lo i32) (local $hi i32) (local $i i32) (local $c i32)\n"
    "    (local.set $hi (i32.load16_u offset=24 (local.get $pg)))\n"
    "    (loop $next\n"
    "      (local.set $i (i32.shr_u (i32.add (local.get $lo) (local.get $hi)) (i32.const 1)))\n"
    "      (local.set $c (i32.add (i32.load offset=64 (local.get $pg))\n"
    "        (i32.and (i32.shl (local.get $i) (i32.const 1)) (i32.const -4))))\n"
    "      (local.set $c (i32.add (i32.load offset=68 (local.get $pg))\n"
    "        (i32.and (i32.load16_u offset=26 (local.get $pg))\n"
    "          (i32.or (i32.shl (i32.load8_u (local.get $c)) (i32.const 8)) (i32.load8_u offset=1 (local.get $c))))))\n"
    "      (if (i32.lt_s (call $cmp (local.get $c)) (i32.const 0))\n"
    "        (then (local.set $lo (i32.add (local.get $i) (i32.const 1))))\n"
    "        (else (local.set $hi (local.get $i))))\n"
    "      (br_if $next (i32.lt_u (local.get $lo) (local.get $hi))))\n"
    "    (local.get $lo))\n"
    "  (func $cmp_pure (param $c i32) (result i32) (i32.sub (i32.load8_u (local.get $c)) (i32.const 7)))\n"
    "  (func (param $pg i32) (result i32) (local $lo i32) (local $hi i32) (local $i i32) (local $c i32)\n"
    "    (local.set $hi (i32.load16_u offset=24 (local.get $pg)))\n"
    "    (loop $next\n"
    "      (local.set $i (i32.shr_u (i32.add (local.get $lo) (local.get $hi)) (i32.const 1)))\n"
    "      (local.set $c (i32.add (i32.load offset=64 (local.get $pg))\n"
    "        (i32.and (i32.shl (local.get $i) (i32.const 1)) (i32.const -4))))\n"
    "      (local.set $c (i32.add (i32.load offset=68 (local.get $pg))\n"
    "        (i32.and (i32.load16_u offset=26 (local.get $pg))\n"
    "          (i32.or (i32.shl (i32.load8_u (local.get $c)) (i32.const 8)) (i32.load8_u offset=1 (local.get $c))))))\n"
    "      (if (i32.lt_s (call $cmp_pure (local.get $c)) (i32.const 0))\n"
    "        (then (local.set $lo (i32.add (local.get $i) (i32.const 1))))\n"
    "        (else (local.set $hi (local.get $i))))\n"
    "      (br_if $next (i32.lt_u (local.get $lo) (local.get $hi))))\n"
    "    (local.get $lo))\n"
    "  (func (param $p i32) (result i32) (local $h i32)\n"
    "    (local.set $h (i32.and (i32.load8_u (local.get $p)) (i32.const 63)))\n"
    "    (block $b (block $a\n"
    "      (br_table $a $b (i32.load8_u offset=1 (local.get $p))))\n"
    "      (return (i32.load8_u (i32.add (local.get $p) (local.get $h)))))\n"
    "    (local.get $h)))\n";

static unit_ir ir_of(const char *skip) {
  drv_options o;
  drv_options_default(&o);
  o.opt_level = 2;
  o.skip_pass = skip;
  return unit_ir_of_wat("guard-shape", module_text, &o);
}

typedef struct {
  int checks;      /* branches to the out-of-bounds trap block or a group's which block */
  int labels;      /* accesses labelled for the guard pages */
  int volatile16;  /* volatile i16 loads */
  int volatile8;   /* volatile i8 loads */
  int wide;        /* instructions of an i128 result */
  int stores;      /* stores */
} shape;

static bool int_type(LLVMTypeRef t, unsigned bits) {
  return LLVMGetTypeKind(t) == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == bits;
}

static shape shape_of(unit_ir *m, unsigned index) {
  LLVMValueRef fn = unit_ir_func(m, index);
  shape s = {0};
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
    if (term && LLVMIsABranchInst(term) && LLVMIsConditional(term))
      for (unsigned k = 0; k < 2; k++)
        s.checks += strncmp(LLVMGetBasicBlockName(LLVMGetSuccessor(term, k)), "bounds_trap", 11) == 0 ||
                    strncmp(LLVMGetBasicBlockName(LLVMGetSuccessor(term, k)), "bounds_which", 12) == 0;
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      s.wide += int_type(LLVMTypeOf(i), 128);
      s.stores += LLVMIsAStoreInst(i) != NULL;
      if (LLVMIsALoadInst(i) && LLVMGetVolatile(i)) {
        s.volatile16 += int_type(LLVMTypeOf(i), 16);
        s.volatile8 += int_type(LLVMTypeOf(i), 8);
      }
      LLVMValueRef callee = LLVMIsACallInst(i) ? LLVMGetCalledValue(i) : NULL;
      if (!callee || LLVMGetValueKind(callee) != LLVMInlineAsmValueKind) continue;
      size_t len;
      const char *text = LLVMGetInlineAsmAsmString(callee, &len);
      s.labels += memmem(text, len, ".pushsection", 12) != NULL;
    }
  }
  return s;
}

START_TEST(byte_pair_one_load) {
  unit_ir m = ir_of(NULL);
  shape s = shape_of(&m, 0);
  /* the opcode's byte and the operand's 16 bits */
  ck_assert_int_eq(s.checks, 0);
  ck_assert_int_eq(s.labels, 2);
  ck_assert_int_eq(s.volatile16, 1);
  ck_assert_int_eq(s.volatile8, 1);
  unit_ir_dispose(&m);
}
END_TEST

START_TEST(reload_after_access_needs_no_check) {
  unit_ir m = ir_of(NULL);
  shape s = shape_of(&m, 1);
  /* the load of p[1], both stores: labelled; the reload of p[0] plain */
  ck_assert_int_eq(s.checks, 0);
  ck_assert_int_eq(s.labels, 3);
  unit_ir_dispose(&m);
}
END_TEST

START_TEST(clamped_check_block_in_i64) {
  unit_ir m = ir_of(NULL);
  shape s = shape_of(&m, 2);
  /* versioned: the 4 stores in the fast copy and in the checked one (a
   * test false at compile time would leave one copy), the check block
   * in i64 */
  ck_assert_int_ge(s.stores, 8);
  ck_assert_int_eq(s.wide, 0);
  unit_ir_dispose(&m);
}
END_TEST

START_TEST(group_loads_each_labelled) {
  unit_ir m = ir_of(NULL);
  shape s = shape_of(&m, 3);
  /* the group's check gone, each load with its own label */
  ck_assert_int_eq(s.checks, 0);
  ck_assert_int_eq(s.labels, 2);
  unit_ir_dispose(&m);
  m = ir_of("guard");
  s = shape_of(&m, 3);
  ck_assert_int_eq(s.checks, 1);
  ck_assert_int_eq(s.labels, 0);
  unit_ir_dispose(&m);
}
END_TEST

START_TEST(address_phi_read_through_its_index) {
  unit_ir m = ir_of(NULL);
  shape s = shape_of(&m, 4);
  /* the dispatch load, the frame read, the frame write */
  ck_assert_int_eq(s.checks, 0);
  ck_assert_int_eq(s.labels, 3);
  unit_ir_dispose(&m);
}
END_TEST

START_TEST(load_proved_a_join_away) {
  unit_ir m = ir_of(NULL);
  shape s = shape_of(&m, 5);
  /* the tag, the hash word and both stores labelled: the words' loads
   * are proved by the hash word's, whose block dominates theirs */
  ck_assert_int_eq(s.checks, 0);
  ck_assert_int_eq(s.labels, 4);
  unit_ir_dispose(&m);
}
END_TEST

START_TEST(cell_bytes_past_proved_loads) {
  unit_ir m = ir_of(NULL);
  shape s = shape_of(&m, 7);
  /* only the page header's check (its fields read in the loop) stays; the
   * cell pointer's two bytes each labelled */
  ck_assert_int_eq(s.checks, 1);
  ck_assert_int_ge(s.volatile8, 2);
  unit_ir_dispose(&m);
}
END_TEST

START_TEST(cell_bytes_proved_a_join_away) {
  unit_ir m = ir_of(NULL);
  shape s = shape_of(&m, 9);
  /* the entry's check and the page header's before the loop stay (the
   * latter proves the loop's loads of the header); the cell pointer's
   * check in the loop goes */
  ck_assert_int_eq(s.checks, 2);
  ck_assert_int_ge(s.volatile8, 3);
  unit_ir_dispose(&m);
}
END_TEST

START_TEST(group_which_swapped_labelled) {
  unit_ir m = ir_of(NULL);
  shape s = shape_of(&m, 10);
  /* the two bytes' check gone, each byte labelled (and the third load) */
  ck_assert_int_eq(s.checks, 0);
  ck_assert_int_eq(s.volatile8, 3);
  unit_ir_dispose(&m);
}
END_TEST

/* f10's body behind a dispatch over 1,100 cases, each calling an import:
 * a function of more than GROUP_FORMS_MAX_BLOCKS blocks keeps that check. */
START_TEST(group_forms_not_in_big_functions) {
  size_t cap = 1 << 17, len = 0;
  char *text = malloc(cap);
  ck_assert_ptr_nonnull(text);
  len += (size_t)snprintf(text + len, cap - len,
                          "(module (import \"env\" \"f\" (func $f (param i32))) (memory 1)\n"
                          "  (func (param $p i32) (param $x i32) (result i32) (local $h i32)\n");
  for (int k = 0; k < 1100; k++)
    len += (size_t)snprintf(text + len, cap - len,
                            "    (if (i32.eq (local.get $x) (i32.const %d)) (then (call $f (i32.const %d))))\n", k,
                            k * 7);
  snprintf(text + len, cap - len,
           "    (local.set $h (i32.and (i32.load8_u (local.get $p)) (i32.const 63)))\n"
           "    (block $b (block $a\n"
           "      (br_table $a $b (i32.load8_u offset=1 (local.get $p))))\n"
           "      (return (i32.load8_u (i32.add (local.get $p) (local.get $h)))))\n"
           "    (local.get $h)))\n");
  drv_options o;
  drv_options_default(&o);
  o.opt_level = 2;
  unit_ir m = unit_ir_of_wat("guard-shape-big", text, &o);
  free(text);
  LLVMValueRef fn = unit_ir_func(&m, 1);
  ck_assert_int_gt(LLVMCountBasicBlocks(fn), 1000);
  shape s = shape_of(&m, 1);
  ck_assert_int_ge(s.checks, 1);
  unit_ir_dispose(&m);
}
END_TEST

START_TEST(without_guard_pass_checks_stay) {
  unit_ir m = ir_of("guard");
  shape s = shape_of(&m, 0);
  ck_assert_int_ge(s.checks, 1);
  ck_assert_int_eq(s.labels, 0);
  ck_assert_int_eq(s.volatile16, 0);
  unit_ir_dispose(&m);
}
END_TEST

static Suite *guard_shape_suite(void) {
  Suite *s = suite_create("guard_shape");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, byte_pair_one_load);
  tcase_add_test(tc, reload_after_access_needs_no_check);
  tcase_add_test(tc, clamped_check_block_in_i64);
  tcase_add_test(tc, group_loads_each_labelled);
  tcase_add_test(tc, address_phi_read_through_its_index);
  tcase_add_test(tc, load_proved_a_join_away);
  tcase_add_test(tc, cell_bytes_past_proved_loads);
  tcase_add_test(tc, cell_bytes_proved_a_join_away);
  tcase_add_test(tc, group_which_swapped_labelled);
  tcase_add_test(tc, group_forms_not_in_big_functions);
  tcase_add_test(tc, without_guard_pass_checks_stay);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(guard_shape_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
