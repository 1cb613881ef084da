/* test_vunroll.c: Check suite "vunroll": the one-block loops of v128
 * arithmetic that compiler/ir/ir_vunroll.c asks LLVM to unroll, read from
 * twasmc's optimised IR of the module in tests/wast/simd_unroll.wast
 * (whose results, remainders included, the spec runner checks). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/Core.h>
#include <llvm-c/IRReader.h>

#include "driver.h"

#define WAST "tests/wast/simd_unroll.wast"

typedef struct {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
} ir_module;

/* The first module of WAST, written to a .wat file; its path in out. */
static void module_of_wast(char *out, size_t size) {
  FILE *f = fopen(WAST, "r");
  ck_assert_msg(f != NULL, "%s: run from the repository root", WAST);
  static char text[16384];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  char *start = strstr(text, "\n(module");
  char *end = start ? strstr(start, "\n)\n") : NULL;
  ck_assert(start && end);
  end[2] = 0;
  snprintf(out, size, "/tmp/vunroll-%d.wat", (int)getpid());
  FILE *w = fopen(out, "w");
  ck_assert(w != NULL);
  fputs(start + 1, w);
  fclose(w);
}

static ir_module ir_at(int opt_level, const char *skip, bool offload) {
  char path[64];
  module_of_wast(path, sizeof path);
  uint8_t *bytes;
  size_t size;
  tw_diag d = {.offset = TW_DIAG_NO_OFFSET};
  ck_assert_msg(drv_read_input(path, &bytes, &size, &d) == DRV_OK, "%s", d.msg);
  remove(path);
  drv_options o;
  drv_options_default(&o);
  o.opt_level = opt_level;
  o.skip_pass = skip;
  o.offload.enabled = offload;
  char *ir = NULL;
  ck_assert_msg(drv_emit_llvm(bytes, size, path, &o, &ir, &d) == DRV_OK, "%s", d.msg);
  free(bytes);
  ir_module m;
  m.ctx = LLVMContextCreate();
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, strlen(ir), "m");
  free(ir);
  char *msg = NULL;
  if (LLVMParseIRInContext(m.ctx, buf, &m.mod, &msg)) ck_abort_msg("bad IR: %s", msg);
  return m;
}

static LLVMValueRef func(ir_module *m, unsigned index) {
  char name[32];
  snprintf(name, sizeof name, "wasm_f%u", index);
  LLVMValueRef fn = LLVMGetNamedFunction(m->mod, name);
  ck_assert_msg(fn != NULL, "no function %s", name);
  return fn;
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
  ir_module m = ir_at(2, NULL, true);
  ck_assert_int_ge(vector_ops(func(&m, 2), LLVMFMul, 2), 5);
  ck_assert_int_ge(vector_ops(func(&m, 7), LLVMMul, 4), 5);
  LLVMDisposeModule(m.mod);
  LLVMContextDispose(m.ctx);
}
END_TEST

/* Without the offload stage the pipeline is not staged and the pass does
 * not run (LLVM's pipeline has unrolled such loops by two already): the
 * same IR as with --skip-pass=vunroll. */
START_TEST(not_without_offload) {
  ir_module m = ir_at(2, NULL, false);
  int with = vector_ops(func(&m, 2), LLVMFMul, 2);
  LLVMDisposeModule(m.mod);
  LLVMContextDispose(m.ctx);
  m = ir_at(2, "vunroll", false);
  ck_assert_int_eq(vector_ops(func(&m, 2), LLVMFMul, 2), with);
  LLVMDisposeModule(m.mod);
  LLVMContextDispose(m.ctx);
}
END_TEST

/* Without the pass LLVM leaves them at fewer copies. */
START_TEST(skip_pass_leaves_them) {
  ir_module m = ir_at(2, "vunroll", true);
  ck_assert_int_lt(vector_ops(func(&m, 2), LLVMFMul, 2), 5);
  ck_assert_int_lt(vector_ops(func(&m, 7), LLVMMul, 4), 5);
  LLVMDisposeModule(m.mod);
  LLVMContextDispose(m.ctx);
}
END_TEST

/* At -O1 there is no unroller: one multiply each. */
START_TEST(not_at_o1) {
  ir_module m = ir_at(1, NULL, true);
  ck_assert_int_eq(vector_ops(func(&m, 2), LLVMFMul, 2), 1);
  LLVMDisposeModule(m.mod);
  LLVMContextDispose(m.ctx);
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
