/* test_v128_host.c: Check suite "v128_host": v128 values across the
 * runtime.  A module compiled with `twasmc -c` imports a host function
 * taking and returning v128 values (with other values around them, and
 * several results), exports functions and a v128 global; a C host built
 * with its header calls them through the typed wrappers, twasm_call and
 * twasm_global_get/set, and prints what it sees. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char module_wat[] =
    "(module\n"
    "  (import \"env\" \"mix\" (func $mix (param i32 v128 f64 v128) (result v128 i64 v128)))\n"
    "  (global $g (export \"g\") (mut v128) (v128.const i32x4 10 20 30 40))\n"
    "  ;; mix(a, b) from the host, then the lane-wise sum of its two v128 results\n"
    "  (func (export \"call_mix\") (param v128 v128) (result v128 i64)\n"
    "    (local i64)\n"
    "    (call $mix (i32.const 7) (local.get 0) (f64.const 2.5) (local.get 1))\n"
    "    (local.set 0)\n"
    "    (local.set 2)\n"
    "    (i32x4.add (local.get 0))\n"
    "    (local.get 2))\n"
    "  ;; the global times a splat, stored back; returns old and new\n"
    "  (func (export \"scale_g\") (param i32) (result v128 v128)\n"
    "    (global.get $g)\n"
    "    (global.set $g (i32x4.mul (global.get $g) (i32x4.splat (local.get 0))))\n"
    "    (global.get $g))\n"
    "  (func (export \"swap\") (param f32 v128 v128) (result v128 f32 v128)\n"
    "    (local.get 2) (local.get 0) (local.get 1)))\n";

static const char host_c[] =
    "#include <stdio.h>\n"
    "#include <twasm.h>\n"
    "#include \"mod.h\"\n"
    "static void show(const char *what, twasm_v128 v) {\n"
    "  printf(\"%s %d %d %d %d\\n\", what, v.i32[0], v.i32[1], v.i32[2], v.i32[3]);\n"
    "}\n"
    "/* (i32 k, v128 a, f64 x, v128 b) -> (a * k, (i64)(x * 100), b + 1) */\n"
    "static int mix(void *env, twasm_instance *caller, const twasm_val *args, twasm_val *res,\n"
    "               twasm_trap *trap) {\n"
    "  (void)env, (void)caller, (void)trap;\n"
    "  for (int i = 0; i < 4; i++) {\n"
    "    res[0].of.v128.i32[i] = args[1].of.v128.i32[i] * args[0].of.i32;\n"
    "    res[2].of.v128.i32[i] = args[3].of.v128.i32[i] + 1;\n"
    "  }\n"
    "  res[1].of.i64 = (long long)(args[2].of.f64 * 100);\n"
    "  return 0;\n"
    "}\n"
    "int main(void) {\n"
    "  static const twasm_valkind params[] = {TWASM_I32, TWASM_V128, TWASM_F64, TWASM_V128};\n"
    "  static const twasm_valkind results[] = {TWASM_V128, TWASM_I64, TWASM_V128};\n"
    "  twasm_functype type = {4, 3, params, results};\n"
    "  twasm_extern imports[1] = {{.kind = TWASM_EXTERN_FUNC, .of.func = twasm_func_new_host(&type, mix, 0)}};\n"
    "  twasm_trap err = {0};\n"
    "  mod_instance m;\n"
    "  if (mod_instantiate(&m, imports, &err)) { printf(\"instantiate: %s\\n\", err.message); return 1; }\n"
    "  twasm_v128 a = {.i32 = {1, 2, 3, -4}}, b = {.i32 = {100, 200, 300, 400}}, r;\n"
    "  int64_t k;\n"
    "  if (mod_call_mix(&m, a, b, &r, &k, &err)) return 2;\n"
    "  show(\"call_mix\", r);\n"
    "  printf(\"call_mix i64 %lld\\n\", (long long)k);\n"
    "  twasm_v128 before, after;\n"
    "  if (mod_scale_g(&m, 3, &before, &after, &err)) return 3;\n"
    "  show(\"scale_g before\", before);\n"
    "  show(\"scale_g after\", after);\n"
    "  twasm_val g = twasm_global_get(m.g);\n"
    "  show(g.kind == TWASM_V128 ? \"global\" : \"global of the wrong kind\", g.of.v128);\n"
    "  g.of.v128.i64[0] = -1;\n"
    "  twasm_global_set(m.g, g);\n"
    "  if (mod_scale_g(&m, 1, &before, &after, &err)) return 4;\n"
    "  show(\"set global\", before);\n"
    "  twasm_val args[3] = {{.kind = TWASM_F32, .of.f32 = 1.5f}, {.kind = TWASM_V128, .of.v128 = a},\n"
    "                       {.kind = TWASM_V128, .of.v128 = b}};\n"
    "  twasm_val res[3];\n"
    "  if (twasm_call(m.swap, args, 3, res, 3, &err)) return 5;\n"
    "  show(\"swap 0\", res[0].of.v128);\n"
    "  printf(\"swap 1 %g\\n\", res[1].of.f32);\n"
    "  show(\"swap 2\", res[2].of.v128);\n"
    "  mod_delete(&m);\n"
    "  return 0;\n"
    "}\n";

static const char expected[] =
    "call_mix 108 215 322 373\n"
    "call_mix i64 250\n"
    "scale_g before 10 20 30 40\n"
    "scale_g after 30 60 90 120\n"
    "global 30 60 90 120\n"
    "set global -1 -1 90 120\n"
    "swap 0 100 200 300 400\n"
    "swap 1 1.5\n"
    "swap 2 1 2 3 -4\n";

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

START_TEST(host_sees_v128_values) {
  const char *twasmc = getenv("TWASMC") ? getenv("TWASMC") : "build/bin/twasmc";
  if (system("wat2wasm --version >/dev/null 2>&1") != 0) {
    printf("v128_host: skipped: wat2wasm is not installed\n");
    return;
  }
  char dir[] = "/tmp/twasm-v128XXXXXX", path[256], cmd[2048];
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/mod.wat", dir);
  write_text(path, module_wat);
  snprintf(path, sizeof path, "%s/host.c", dir);
  write_text(path, host_c);
  /* the runtime library beside twasmc: build/bin/twasmc -> build/lib */
  snprintf(cmd, sizeof cmd,
           "%s -c %s/mod.wat -o %s/mod.o && cc -std=c11 -Wall -Werror -Iinclude -I%s %s/host.c %s/mod.o "
           "$(dirname %s)/../lib/libtwasm-rt.a -lzstd -ldl -lm -lpthread -o %s/host && %s/host > %s/out.txt",
           twasmc, dir, dir, dir, dir, dir, twasmc, dir, dir, dir);
  int rc = system(cmd);
  static char got[4096];
  snprintf(path, sizeof path, "%s/out.txt", dir);
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(got, 1, sizeof got - 1, f) : 0;
  got[n] = 0;
  if (f) fclose(f);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
  ck_assert_msg(rc == 0, "build or run failed (%d): %s", rc, got);
  ck_assert_str_eq(got, expected);
}
END_TEST

int main(void) {
  Suite *s = suite_create("v128_host");
  TCase *t = tcase_create("host");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, host_sees_v128_values);
  suite_add_tcase(s, t);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
