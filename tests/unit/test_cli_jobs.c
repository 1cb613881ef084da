/* test_cli_jobs.c: what twasmc says while it compiles (-v, the progress
 * line on a terminal) and code generation in parts (-j): a large module's
 * executable is the same for any number of threads, computes what it
 * should, and traps with a backtrace across its parts. */
#include <stdint.h>

#include "cli_util.h"

/* ---- a module large enough to be cut into parts ---------------------------- */

enum { FUNCS = 400, STEPS = 44 };

static void step_constants(unsigned k, unsigned j, uint32_t *mul, uint32_t *shift, uint32_t *x) {
  uint32_t v = k * 2654435761u + j * 40503u + 12345u;
  *mul = v | 1, *shift = (v >> 7) % 31 + 1, *x = (v >> 13) & 0xffff;
}

/* What function k of the module computes, here in C. */
static uint32_t func_value(unsigned k, uint32_t a) {
  for (unsigned j = 0; j < STEPS; j++) {
    uint32_t mul, shift, x;
    step_constants(k, j, &mul, &shift, &x);
    a = (a * mul + (a >> shift)) ^ x;
  }
  return a;
}

/* FUNCS functions of STEPS steps each (and a load of zeros from an
 * address the compiler cannot bound); _start sums f_k(k) and traps
 * unless the sum is the one C computes.  With an argument it traps
 * instead in trap_last, at the module's end (the last part), called from
 * trap_first near its start (the first part); both recurse, so neither is
 * inlined. */
static void write_large_module(const char *name) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  uint32_t sum = 0;
  for (unsigned k = 0; k < FUNCS; k++) sum += func_value(k, k);
  fputs("(module\n (import \"wasi_snapshot_preview1\" \"args_sizes_get\""
        " (func $args (param i32 i32) (result i32)))\n (memory 1)\n"
        " (global $g (mut i32) (i32.const 0))\n"
        " (func $start (export \"_start\") (local i32)\n"
        "  (drop (call $args (i32.const 0) (i32.const 4)))\n"
        "  (if (i32.gt_u (i32.load (i32.const 0)) (i32.const 1)) (then (call $trap_first (i32.const 2))))\n",
        f);
  for (unsigned k = 0; k < FUNCS; k++)
    fprintf(f, "  (local.set 0 (i32.add (local.get 0) (call $f%u (i32.const %u))))\n", k, k);
  fprintf(f, "  (if (i32.ne (local.get 0) (i32.const %d)) (then unreachable)))\n", (int32_t)sum);
  fputs(" (func $trap_first (param i32) (if (local.get 0)"
        " (then (call $trap_first (i32.sub (local.get 0) (i32.const 1))))"
        " (else (call $trap_last (i32.const 2)))))\n", f);
  for (unsigned k = 0; k < FUNCS; k++) {
    fprintf(f, " (func $f%u (param i32) (result i32)\n", k);
    for (unsigned j = 0; j < STEPS; j++) {
      uint32_t mul, shift, x;
      step_constants(k, j, &mul, &shift, &x);
      fprintf(f, "  (local.set 0 (i32.xor (i32.add (i32.mul (local.get 0) (i32.const %d))"
                 " (i32.shr_u (local.get 0) (i32.const %u))) (i32.const %u)))\n",
              (int32_t)mul, shift, x);
    }
    /* linear memory is zeros: the load changes nothing but needs a check */
    fputs("  (local.set 0 (i32.xor (local.get 0) (i32.load (i32.add (global.get $g)"
          " (i32.and (local.get 0) (i32.const 0xfffc))))))\n  (local.get 0))\n",
          f);
  }
  fputs(" (func $trap_last (param i32) (if (local.get 0)"
        " (then (call $trap_last (i32.sub (local.get 0) (i32.const 1)))) (else unreachable))))\n", f);
  fclose(f);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "cd %s && wat2wasm --debug-names %s -o large.wasm", tmpdir, name);
  ck_assert_int_eq(system(cmd), 0);
}

static bool same_file(const char *a, const char *b) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "cmp -s %s/%s %s/%s", tmpdir, a, tmpdir, b);
  return system(cmd) == 0;
}

/* Each needle in order in text. */
static void assert_in_order(const char *text, const char *const *needles, size_t n) {
  const char *at = text;
  for (size_t i = 0; i < n; i++) {
    const char *hit = strstr(at, needles[i]);
    ck_assert_msg(hit, "'%s' missing (in order) from:\n%s", needles[i], text);
    at = hit + strlen(needles[i]);
  }
}

START_TEST(parts_same_for_any_jobs) {
  static char out[65536];
  char args[1024];
  make_tmpdir();
  write_large_module("large.wat");
  snprintf(args, sizeof args, "-v -j3 %s/large.wasm -o %s/p3", tmpdir, tmpdir);
  ck_assert_msg(run(args, out, sizeof out) == 0, "%s", out);
  ck_assert_msg(strstr(out, " instructions on 3 threads;"), "%s", out);
  /* the late function passes ran in the parts, not on the whole module */
  ck_assert_msg(!strstr(out, "twasmc: late"), "%s", out);
  snprintf(args, sizeof args, "-v --jobs=1 %s/large.wasm -o %s/p1", tmpdir, tmpdir);
  ck_assert_msg(run(args, out, sizeof out) == 0, "%s", out);
  ck_assert_msg(strstr(out, " instructions on 1 thread;"), "%s", out);
  ck_assert_msg(same_file("p1", "p3"), "the executable depends on -j");
  char cmd[512];
  snprintf(cmd, sizeof cmd, "cd %s && ./p3", tmpdir);
  ck_assert_msg(run_shell(cmd, out, sizeof out) == 0, "wrong sum, or: %s", out);
  snprintf(cmd, sizeof cmd, "cd %s && ./p3 trap", tmpdir);
  ck_assert_int_eq(run_shell(cmd, out, sizeof out), 134);
  static const char *const frames[] = {"trap: unreachable in trap_last", "    at trap_last\n",
                                       "    at trap_first\n", "    at start\n"};
  assert_in_order(out, frames, sizeof frames / sizeof frames[0]);
}
END_TEST

/* --skip-pass names a pass that runs in the parts of a cut module too: the
 * executable of `--skip-pass=guard` (each function's load keeps its
 * explicit bounds check, which the guard pages would stand in for) is not
 * the default one.  Before, the parts ran every per-part pass whatever
 * --skip-pass said, so the two were the same file. */
START_TEST(parts_honour_skip_pass) {
  static char out[65536];
  char args[1024];
  make_tmpdir();
  write_large_module("large.wat");
  snprintf(args, sizeof args, "-j3 %s/large.wasm -o %s/all", tmpdir, tmpdir);
  ck_assert_msg(run(args, out, sizeof out) == 0, "%s", out);
  snprintf(args, sizeof args, "-j3 --skip-pass=guard %s/large.wasm -o %s/skip", tmpdir, tmpdir);
  ck_assert_msg(run(args, out, sizeof out) == 0, "%s", out);
  ck_assert_msg(!same_file("all", "skip"), "--skip-pass=guard changed nothing in a cut module");
  char cmd[512];
  snprintf(cmd, sizeof cmd, "cd %s && ./skip", tmpdir);
  ck_assert_msg(run_shell(cmd, out, sizeof out) == 0, "wrong sum, or: %s", out);
}
END_TEST

/* -c: one object of the parts; what one part defines for another is
 * hidden and named after the module, so two such objects link together. */
START_TEST(parts_make_one_object) {
  static char out[65536];
  char args[1024];
  make_tmpdir();
  write_large_module("large.wat");
  snprintf(args, sizeof args, "-c -v -j2 %s/large.wasm -o %s/mod.o", tmpdir, tmpdir);
  ck_assert_msg(run(args, out, sizeof out) == 0, "%s", out);
  ck_assert_msg(strstr(out, "twasmc: run: cc -r -nostdlib -o "), "%s", out);
  snprintf(args, sizeof args,
           "readelf -hsW %s/mod.o | grep -E 'REL \\(|HIDDEN .* twasm_module_mod\\.wasm_f"
           "|GLOBAL DEFAULT .* twasm_module_mod$'",
           tmpdir);
  ck_assert_int_eq(run_shell(args, out, sizeof out), 0);
  ck_assert_msg(strstr(out, "REL (Relocatable file)") && strstr(out, "HIDDEN") &&
                    strstr(out, "DEFAULT"),
                "%s", out);
  snprintf(args, sizeof args, "-c -j2 %s/large.wasm -o %s/other.o", tmpdir, tmpdir);
  ck_assert_msg(run(args, out, sizeof out) == 0, "%s", out);
  snprintf(args, sizeof args, "cd %s && cc -r -nostdlib -o both.o mod.o other.o", tmpdir);
  ck_assert_msg(run_shell(args, out, sizeof out) == 0, "two modules' parts clash: %s", out);
}
END_TEST

/* ---- what it says --------------------------------------------------------------- */

/* A loop the offload stage takes, so that -v has PTX lines. */
static const char scale_c[] =
    "#include <stdio.h>\n"
    "float a[4096];\n"
    "__attribute__((noinline)) void scale(float *p, int n) { for (int i = 0; i < n; i++) p[i] = p[i] * 3.0f + 1.0f; }\n"
    "int main(void) { scale(a, 4096); printf(\"%g\\n\", a[7]); return 0; }\n";

static void build_scale(void) {
  char cmd[1024], out[4096];
  write_file("s.c", scale_c, sizeof scale_c - 1);
  snprintf(cmd, sizeof cmd,
           "cd %s && clang-19 --target=wasm32-wasi --sysroot=/usr -O2 -fno-unroll-loops s.c -o s.wasm",
           tmpdir);
  ck_assert_msg(run_shell(cmd, out, sizeof out) == 0, "%s", out);
}

START_TEST(verbose_lists_phases) {
  static char out[65536];
  char args[1024];
  make_tmpdir();
  build_scale();
  snprintf(args, sizeof args, "-v %s/s.wasm -o %s/s", tmpdir, tmpdir);
  ck_assert_msg(run(args, out, sizeof out) == 0, "%s", out);
  static const char *const phases[] = {
      "twasmc: decode ", "twasmc: validate ", "twasmc: lower ", "twasmc: mem2reg ",
      "twasmc: optimise ", " s  (default<O2>,function(loop-simplify))", "twasmc:   ptx sm_75 ", "twasmc:   ptx sm_90 ",
      "twasmc: offload ", " kernel", "twasmc: late ", "twasmc: codegen ",
      "twasmc: run: cc -no-pie -o ", "libtwasm-rt.a -lzstd -ldl", "twasmc: link ", "twasmc: total "};
  assert_in_order(out, phases, sizeof phases / sizeof phases[0]);
  ck_assert_msg(!strchr(out, '\r'), "no progress line off a terminal: %s", out);
  /* -O0: no pass of -O2's */
  snprintf(args, sizeof args, "-v -O0 --no-offload %s/s.wasm -o %s/s0", tmpdir, tmpdir);
  ck_assert_msg(run(args, out, sizeof out) == 0, "%s", out);
  ck_assert_msg(strstr(out, "(default<O0>)") && !strstr(out, "mem2reg") &&
                    !strstr(out, "twasmc: offload"),
                "%s", out);
  /* without -v, off a terminal: nothing */
  snprintf(args, sizeof args, "%s/s.wasm -o %s/s1", tmpdir, tmpdir);
  ck_assert_int_eq(run(args, out, sizeof out), 0);
  ck_assert_msg(!out[0], "printed: %s", out);
}
END_TEST

/* On a terminal (script(1) makes one) the running phase is shown on one
 * line, redrawn in place, and removed at the end. */
START_TEST(progress_on_a_terminal) {
  static char out[65536];
  if (system("command -v script >/dev/null 2>&1") != 0) {
    printf("progress_on_a_terminal: skipped: no script(1) to make a terminal\n");
    return;
  }
  make_tmpdir();
  write_large_module("large.wat");
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "script -qec '%s -j2 %s/large.wasm -o %s/p' /dev/null", twasmc(), tmpdir,
           tmpdir);
  ck_assert_msg(run_shell(cmd, out, sizeof out) == 0, "%s", out);
  ck_assert_msg(strstr(out, "\r\033[Ktwasmc: optimise ...") && strstr(out, "twasmc: codegen: ") &&
                    strstr(out, " functions"),
                "%s", out);
  /* the line is cleared at the end: the last thing written */
  size_t n = strlen(out);
  ck_assert_msg(n >= 4 && !strcmp(out + n - 4, "\r\033[K"), "ends with: %s", out + (n > 40 ? n - 40 : 0));
}
END_TEST

START_TEST(jobs_usage) {
  char out[4096];
  ck_assert_int_eq(run("-j0 x.wasm", out, sizeof out), 2);
  ck_assert_msg(strstr(out, "-j/--jobs needs a number of threads"), "%s", out);
  ck_assert_int_eq(run("--jobs=many x.wasm", out, sizeof out), 2);
  ck_assert_int_eq(run("x.wasm -j", out, sizeof out), 2);
}
END_TEST

static Suite *jobs_suite(void) {
  Suite *s = suite_create("cli_jobs");
  TCase *tc = tcase_create("jobs");
  tcase_set_timeout(tc, 240);
  tcase_add_test(tc, jobs_usage);
  tcase_add_test(tc, parts_honour_skip_pass);
  tcase_add_test(tc, verbose_lists_phases);
  tcase_add_test(tc, parts_same_for_any_jobs);
  tcase_add_test(tc, parts_make_one_object);
  tcase_add_test(tc, progress_on_a_terminal);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return cli_main(jobs_suite(), "cli_jobs"); }
