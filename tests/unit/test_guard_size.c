/* test_guard_size.c: Check suite "guard_size": in guard mode, every load
 * of the memory's size in a loop that calls nothing that writes memory
 * carries the size's TBAA tag (bnd_insert.c, tag_size_loads), those of
 * wasi-libc's memcmp inlined by low_libc.c included, which are made
 * without it: untagged, such a load may alias
 * any store to linear memory, so a loop that stores (kvstore's binary
 * search counting its compares, tests/bench/kvstore.c) reloaded the size
 * on every step where GVN would take the value loaded before the loop.
 * The C source is built with clang-19 and wasi-libc (skipped, saying
 * why, without them); the old mode (no bounds pass) is the control. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/Core.h>

#include "driver.h"
#include "unit_ir.h"

static const char source[] =
    "#include <string.h>\n"
    "unsigned long long compares;\n"
    "typedef struct { unsigned short klen; char data[30]; } rec;\n"
    "rec recs[8];\n"
    "rec *table[8];\n"
    "static int key_cmp(const char *a, unsigned alen, const char *b, unsigned blen) {\n"
    "  compares++;\n"
    "  int c = memcmp(a, b, alen < blen ? alen : blen);\n"
    "  return c ? c : (int)alen - (int)blen;\n"
    "}\n"
    "__attribute__((export_name(\"find\"), noinline))\n"
    "int find(rec **t, int n, const char *k, unsigned kl) {\n"
    "  int lo = 0, hi = n;\n"
    "  while (lo < hi) {\n"
    "    int mid = (lo + hi) / 2;\n"
    "    int c = key_cmp(t[mid]->data, t[mid]->klen, k, kl);\n"
    "    if (c == 0) return mid;\n"
    "    if (c < 0) lo = mid + 1; else hi = mid;\n"
    "  }\n"
    "  return -1;\n"
    "}\n"
    "__attribute__((export_name(\"same\"), noinline))\n"
    "int same(const char *a, const char *b, unsigned n) { return memcmp(a, b, n) == 0; }\n"
    "__attribute__((export_name(\"less\"), noinline))\n"
    "int less(const char *a, const char *b, unsigned n) { return memcmp(a, b, n) < 0; }\n"
    "int main(void) {\n"
    "  static const char *w[8] = {\"alpha\", \"bravo\", \"charlie\", \"delta\", \"echo\", \"foxtrot\", \"golf\", \"hotel\"};\n"
    "  for (int i = 0; i < 8; i++) { recs[i].klen = (unsigned short)strlen(w[i]); memcpy(recs[i].data, w[i], recs[i].klen); table[i] = &recs[i]; }\n"
    "  return find(table, 8, \"echo\", 4) == 4 ? 0 : 1;\n"
    "}\n";

static bool tools(void) {
  return system("clang-19 --version >/dev/null 2>&1") == 0 && access("/usr/lib/wasm32-wasi/libc.a", R_OK) == 0;
}

static unit_ir ir_of_find(const char *skip) {
  char dir[] = "/tmp/guard-size-XXXXXX", path[256], cmd[1024];
  ck_assert(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/m.c", dir);
  FILE *f = fopen(path, "w");
  ck_assert(f != NULL);
  fputs(source, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "clang-19 --target=wasm32-wasi --sysroot=/usr -O2 %s -o %s/m.wasm", path, dir);
  ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
  snprintf(path, sizeof path, "%s/m.wasm", dir);
  drv_options o;
  drv_options_default(&o);
  o.opt_level = 2;
  o.skip_pass = skip;
  unit_ir m = unit_ir_of_file(path, &o, false);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert(system(cmd) == 0);
  return m;
}

/* gep(base, 8): the field at offset 8 of base. */
static bool field_8(LLVMValueRef p, LLVMValueRef *base) {
  if (!LLVMIsAGetElementPtrInst(p) || LLVMGetNumOperands(p) != 2) return false;
  LLVMValueRef k = LLVMGetOperand(p, 1);
  if (!LLVMIsAConstantInt(k) || LLVMConstIntGetZExtValue(k) != 8) return false;
  *base = LLVMGetOperand(p, 0);
  return true;
}

/* A load of vmctx->mem->size_bytes (twasm_abi.h: both at offset 8). */
static bool size_load(LLVMValueRef fn, LLVMValueRef i) {
  LLVMValueRef obj, ctx;
  return LLVMIsALoadInst(i) && !LLVMGetVolatile(i) && field_8(LLVMGetOperand(i, 0), &obj) &&
         LLVMIsALoadInst(obj) && field_8(LLVMGetOperand(obj, 0), &ctx) && ctx == LLVMGetParam(fn, 0);
}

/* Size loads without a TBAA tag inside loops of the module's Wasm
 * functions (the search's loop calls nothing that writes memory, where
 * bnd_insert.c tags them). */
static int untagged_size_loads(LLVMModuleRef mod) {
  unsigned tbaa = LLVMGetMDKindIDInContext(LLVMGetModuleContext(mod), "tbaa", 4);
  int n = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    size_t len;
    if (!LLVMCountBasicBlocks(fn) || strncmp(LLVMGetValueName2(fn, &len), "wasm_f", 6) != 0) continue;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
        n += size_load(fn, i) && !LLVMGetMetadata(i, tbaa) && unit_in_cycle(bb);
  }
  return n;
}

/* Whether the module runs wasi-libc's memcmp natively (low_libc.c found it). */
static bool native_memcmp(LLVMModuleRef mod) { return LLVMGetNamedFunction(mod, "twasm_rt_memcmp") != NULL; }

START_TEST(size_loads_tagged) {
  if (!tools()) {
    printf("guard_size: skipped size_loads_tagged: clang-19 or wasi-libc missing\n");
    return;
  }
  unit_ir m = ir_of_find(NULL);
  ck_assert(native_memcmp(m.mod));
  ck_assert_int_eq(untagged_size_loads(m.mod), 0);
  unit_ir_dispose(&m);
}
END_TEST

/* The control: without the bounds pass the memcmp's load in the search's
 * loop stays untagged. */
START_TEST(old_mode_leaves_them) {
  if (!tools()) {
    printf("guard_size: skipped old_mode_leaves_them: clang-19 or wasi-libc missing\n");
    return;
  }
  unit_ir m = ir_of_find("bounds");
  ck_assert(native_memcmp(m.mod));
  ck_assert_int_ge(untagged_size_loads(m.mod), 1);
  unit_ir_dispose(&m);
}
END_TEST

static Suite *guard_size_suite(void) {
  Suite *s = suite_create("guard_size");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, size_loads_tagged);
  tcase_add_test(tc, old_mode_leaves_them);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(guard_size_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
