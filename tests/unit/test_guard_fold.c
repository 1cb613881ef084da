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
 *     (compiler/bnd_fresh.c, sink_size_load);
 * and, on IR written here, a merge loop's latch `and i1 (j < n), (i < h)`
 * whose `i < h` the exit carries on in a phi tests that one first
 * (bnd_fold.c, late_exit_first). */
#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/Analysis.h>
#include <llvm-c/IRReader.h>

#include "bnd_late.h"
#include "driver.h"
#include "twasm.h"
#include "twasm_abi.h"
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

/* A merge loop's latch: %jn = j < n, %ih = i < h, the exit's phi
 * carries %ih (USE_A: %jn too). */
static const char *const latch_ir =
    "define i1 @f(i32 %h, i32 %n) {\n"
    "entry:\n  br label %loop\n"
    "loop:\n"
    "  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]\n"
    "  %j = phi i32 [ 0, %entry ], [ %j1, %loop ]\n"
    "  %i1 = add i32 %i, 1\n  %j1 = add i32 %j, 2\n"
    "  %jn = icmp ult i32 %j1, %n\n  %ih = icmp ult i32 %i1, %h\n"
    "  %c = and i1 %jn, %ih\n"
    "  br i1 %c, label %loop, label %exit\n"
    "exit:\n  %r = phi i1 [ %ih, %loop ]\n  %r2 = phi i1 [ USE_A, %loop ]\n"
    "  %x = xor i1 %r, %r2\n  ret i1 %x\n}\n";

/* The name of the and's first operand after late_exit_first, its result
 * in *swapped; use_a: what the second phi carries. */
static const char *first_after(const char *use_a, bool *swapped) {
  static char name[16];
  char text[1024];
  const char *at = strstr(latch_ir, "USE_A");
  snprintf(text, sizeof text, "%.*s%s%s", (int)(at - latch_ir), latch_ir, use_a, at + 5);
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = unit_ir_parse(ctx, text, "latch");
  LLVMBasicBlockRef loop = LLVMGetNextBasicBlock(LLVMGetEntryBasicBlock(LLVMGetFirstFunction(mod)));
  LLVMValueRef br = LLVMGetBasicBlockTerminator(loop);
  *swapped = late_exit_first(br);
  size_t len;
  const char *n = LLVMGetValueName2(LLVMGetOperand(LLVMGetCondition(br), 0), &len);
  snprintf(name, sizeof name, "%.*s", (int)len, n);
  LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  return name;
}

START_TEST(carried_exit_test_first) {
  bool swapped;
  ck_assert_str_eq(first_after("true", &swapped), "ih");
  ck_assert(swapped);
  /* both carried on: left as it is */
  ck_assert_str_eq(first_after("%jn", &swapped), "jn");
  ck_assert(!swapped);
}
END_TEST

/* A check before a loop and its copy at the latch (loop rotation's), of
 * the same end `zext p + 68` (4 bytes: traps iff end > size - 4), each
 * with the size loaded again, a call between each and the access it
 * guards (so neither goes to the guard pages).  LATCH_LESS: the latch
 * copy's 4, or 8 (it then proves more than the first and stays). */
static const char *const dominated_ir =
    "declare void @twasm_rt_trap(ptr, i32, i32, i32)\n"
    "declare i32 @g(ptr, i32)\n"
    "define i32 @f(ptr %vm, i32 %p, i32 %n) {\n"
    "entry:\n"
    "  %mp = getelementptr inbounds i8, ptr %vm, i64 MEM_AT\n"
    "  %mem = load ptr, ptr %mp, align 8, !invariant.load !0\n"
    "  %sp = getelementptr inbounds i8, ptr %mem, i64 SIZE_AT\n"
    "  %base = load ptr, ptr %vm, align 8, !invariant.load !0\n"
    "  %z = zext i32 %p to i64\n"
    "  %ea = add nuw nsw i64 %z, 68\n"
    "  %s0 = load i64, ptr %sp, align 8\n"
    "  %lim0 = add nsw i64 %s0, -4\n"
    "  %c0 = icmp ugt i64 %ea, %lim0\n"
    "  br i1 %c0, label %oob, label %pre\n"
    "pre:\n  br label %loop\n"
    "loop:\n"
    "  %i = phi i32 [ 0, %pre ], [ %i1, %latch ]\n"
    "  %acc = phi i32 [ 0, %pre ], [ %acc2, %latch ]\n"
    "  %r = call i32 @g(ptr %vm, i32 %i)\n"
    "  %a = getelementptr i8, ptr %base, i64 %ea\n"
    "  %v = load i32, ptr %a, align 1\n"
    "  %acc1 = add i32 %acc, %r\n  %acc2 = add i32 %acc1, %v\n"
    "  %i1 = add i32 %i, 1\n"
    "  %more = icmp ult i32 %i1, %n\n"
    "  br i1 %more, label %latch, label %exit\n"
    "latch:\n"
    "  %s1 = load i64, ptr %sp, align 8\n"
    "  %lim1 = add nsw i64 %s1, -LATCH_LESS\n"
    "  %c1 = icmp ugt i64 %ea, %lim1\n"
    "  br i1 %c1, label %oob, label %loop\n"
    "exit:\n  ret i32 %acc2\n"
    "oob:\n"
    "  call void @twasm_rt_trap(ptr %vm, i32 OOB_CODE, i32 0, i32 0)\n"
    "  unreachable\n"
    "}\n"
    "!0 = !{}\n";

/* Conditional branches left after bnd_late on dominated_ir with the latch
 * copy's LATCH_LESS = latch_less; *in_entry: how many of them are in the
 * entry block. */
static int checks_after_late(int latch_less, int *in_entry) {
  static const char *const keys[] = {"MEM_AT", "SIZE_AT", "LATCH_LESS", "OOB_CODE"};
  long vals[] = {(long)offsetof(twasm_vmctx, mem), (long)offsetof(twasm_memory_abi, size_bytes), latch_less,
                 TWASM_TRAP_MEMORY_OOB};
  char text[4096];
  size_t n = 0;
  for (const char *at = dominated_ir; *at;) {
    int k = 0;
    while (k < 4 && strncmp(at, keys[k], strlen(keys[k])) != 0) k++;
    if (k < 4) {
      n += (size_t)snprintf(text + n, sizeof text - n, "%ld", vals[k]);
      at += strlen(keys[k]);
    } else {
      text[n++] = *at++;
    }
    ck_assert_uint_lt(n, sizeof text - 32);
  }
  text[n] = 0;
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = unit_ir_parse(ctx, text, "dominated");
  char *msg = NULL;
  bnd_late(mod);
  ck_assert_msg(!LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg), "%s", msg);
  LLVMDisposeMessage(msg);
  LLVMValueRef fn = LLVMGetNamedFunction(mod, "f");
  int checks = 0;
  *in_entry = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
    bool check = t && LLVMIsABranchInst(t) && LLVMIsConditional(t) && LLVMIsAICmpInst(LLVMGetCondition(t)) &&
                 LLVMGetOperand(LLVMGetCondition(t), 0) != LLVMGetOperand(LLVMGetCondition(t), 1) &&
                 LLVMGetTypeKind(LLVMTypeOf(LLVMGetOperand(LLVMGetCondition(t), 0))) == LLVMIntegerTypeKind &&
                 LLVMGetIntTypeWidth(LLVMTypeOf(LLVMGetOperand(LLVMGetCondition(t), 0))) == 64;
    checks += check;
    *in_entry += check && bb == LLVMGetEntryBasicBlock(fn);
  }
  LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  return checks;
}

/* The latch copy of a check that passed before the loop goes: memory
 * never shrinks, so it cannot trap (compiler/bnd_dom.c).  A copy that
 * proves more (end + 8) stays.  Fails before: both checks stay. */
START_TEST(dominated_check_goes) {
  int in_entry;
  ck_assert_int_eq(checks_after_late(4, &in_entry), 1);
  ck_assert_int_eq(in_entry, 1);
  ck_assert_int_eq(checks_after_late(8, &in_entry), 2);
  ck_assert_int_eq(in_entry, 1);
}
END_TEST

static Suite *guard_fold_suite(void) {
  Suite *s = suite_create("guard_fold");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, compared_load_left_plain);
  tcase_add_test(tc, size_load_moves_to_its_rare_use);
  tcase_add_test(tc, carried_exit_test_first);
  tcase_add_test(tc, dominated_check_goes);
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
