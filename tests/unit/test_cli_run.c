/* test_cli_run.c: what the executables twasmc makes show when they run:
 * backtraces (names from DWARF when there is no name section, recursion
 * told in one line, truncation said) and the environment they see. */
#include "cli_util.h"

/* Runs the executable NAME (with environment settings env in front) and
 * returns its status, stdout+stderr in out. */
static int run_exe(const char *env, const char *name, char *out, size_t cap) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "cd %s && env %s ./%s", tmpdir, env, name);
  return run_shell(cmd, out, cap);
}

static void twasmc_ok(const char *args) {
  char out[8192];
  ck_assert_msg(run(args, out, sizeof out) == 0, "twasmc %s: %s", args, out);
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

/* ---- names from DWARF ----------------------------------------------------- */

static const char dwarf_c[] =
    "#include <stdio.h>\n"
    "static int __attribute__((noinline)) inner(int x) { return 10 / x; }\n"
    "int __attribute__((noinline)) middle(int x) { return inner(x) + 1; }\n"
    "int main(int argc, char **argv) { printf(\"%d\\n\", middle(argc - 1)); return 0; }\n";

/* Builds p.wasm from dwarf_c with clang's -gdwarf-N, then drops its name
 * section (as wasm-opt does), leaving DWARF the only source of names. */
static void build_dwarf_module(int version) {
  char cmd[2048], out[8192];
  write_file("p.c", dwarf_c, sizeof dwarf_c - 1);
  snprintf(cmd, sizeof cmd,
           "cd %s && clang-19 --target=wasm32-wasi --sysroot=/usr -O1 -gdwarf-%d -c p.c -o p.o && "
           "clang-19 --target=wasm32-wasi --sysroot=/usr -g p.o -o named.wasm && "
           "llvm-objcopy-19 --remove-section=name named.wasm p.wasm && "
           "! wasm-objdump -h p.wasm | grep -q '\"name\"'",
           tmpdir, version);
  ck_assert_msg(run_shell(cmd, out, sizeof out) == 0, "%s", out);
}

START_TEST(names_from_dwarf) {
  make_tmpdir();
  build_dwarf_module(_i == 0 ? 4 : 5);
  char args[512], out[8192];
  snprintf(args, sizeof args, "-O0 %s/p.wasm -o %s/p", tmpdir, tmpdir);
  twasmc_ok(args);
  ck_assert_int_eq(run_exe("", "p", out, sizeof out), 134);
  static const char *const order[] = {"trap: integer divide by zero in inner (p.wasm:0x",
                                      "at inner", "at middle", "at main"};
  assert_in_order(out, order, sizeof order / sizeof order[0]);
}
END_TEST

/* The size of a LEB128 at p, its value in *v. */
static size_t leb(const unsigned char *p, size_t n, unsigned long *v) {
  size_t i = 0;
  *v = 0;
  for (unsigned shift = 0; i < n; shift += 7) {
    *v |= (unsigned long)(p[i] & 0x7f) << shift;
    if (!(p[i++] & 0x80)) break;
  }
  return i;
}

/* [start, end) of the contents of custom section `name` after its name. */
static bool find_custom(const unsigned char *b, size_t n, const char *name, size_t *start, size_t *end) {
  for (size_t pos = 8; pos < n;) {
    unsigned long size, nlen;
    unsigned char id = b[pos++];
    pos += leb(b + pos, n - pos, &size);
    size_t next = pos + size;
    if (id == 0) {
      size_t at = pos + leb(b + pos, n - pos, &nlen);
      if (nlen == strlen(name) && !memcmp(b + at, name, nlen)) {
        *start = at + nlen;
        *end = next;
        return true;
      }
    }
    pos = next;
  }
  return false;
}

/* DWARF that lies (bytes flipped, lengths and offsets out of range) costs
 * names, never the compilation. */
START_TEST(broken_dwarf_is_ignored) {
  static const char *const sections[] = {".debug_info", ".debug_abbrev", ".debug_str"};
  make_tmpdir();
  build_dwarf_module(_i % 2 ? 5 : 4);
  char path[256], args[512];
  snprintf(path, sizeof path, "%s/p.wasm", tmpdir);
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  static unsigned char bytes[1 << 20];
  size_t n = fread(bytes, 1, sizeof bytes, f);
  fclose(f);
  size_t start, end;
  ck_assert(find_custom(bytes, n, sections[_i / 2], &start, &end));
  for (size_t i = start; i < end; i += 3 + (size_t)_i) bytes[i] ^= 0x5a + (unsigned char)i;
  if (_i / 2 == 0) memset(bytes + start, 0x7f, 4); /* a unit longer than the section */
  write_file("bad.wasm", bytes, n);
  snprintf(args, sizeof args, "-O0 %s/bad.wasm -o %s/bad", tmpdir, tmpdir);
  twasmc_ok(args);
  char out[8192];
  ck_assert_int_eq(run_exe("", "bad", out, sizeof out), 134);
  ck_assert_msg(strstr(out, "trap: integer divide by zero in "), "%s", out);
}
END_TEST

/* ---- collapsed and truncated backtraces ---------------------------------- */

typedef struct {
  const char *wat;
  const char *needles[4];
} backtrace_case;

static const backtrace_case backtrace_cases[] = {
    {"(module (func $a (param i32) (if (i32.eqz (local.get 0)) (then unreachable))"
     " (call $a (i32.sub (local.get 0) (i32.const 1))))"
     " (func $b (export \"_start\") (call $a (i32.const 5))))",
     {"trap: unreachable in a", "    at a\n    ... 5 more frames of a\n    at b\n", NULL}},
    {"(module (func $rec (export \"_start\") (call $rec)))",
     {"trap: call stack exhausted in rec", "    at rec\n    ... 15 more frames of rec\n",
      "    ... more frames not shown (the backtrace keeps the innermost 16)\n", NULL}},
    {"(module (func $x (param i32) (if (local.get 0) (then (call $x (i32.const 0))) (else unreachable)))"
     " (func (export \"_start\") (call $x (i32.const 1))))",
     {"    at x\n    at x\n    at func[1]\n", NULL}},
};

START_TEST(backtraces_collapse_and_truncate) {
  const backtrace_case *k = &backtrace_cases[_i];
  make_tmpdir();
  write_file("bt.wat", k->wat, strlen(k->wat));
  char cmd[1024], out[8192];
  snprintf(cmd, sizeof cmd, "wat2wasm --debug-names %s/bt.wat -o %s/bt.wasm", tmpdir, tmpdir);
  ck_assert_int_eq(system(cmd), 0);
  snprintf(cmd, sizeof cmd, "-O0 %s/bt.wasm -o %s/bt", tmpdir, tmpdir);
  twasmc_ok(cmd);
  ck_assert_int_eq(run_exe("", "bt", out, sizeof out), 134);
  for (int i = 0; k->needles[i]; i++) ck_assert_msg(strstr(out, k->needles[i]), "'%s' not in:\n%s", k->needles[i], out);
}
END_TEST

/* ---- the environment --------------------------------------------------------- */

static const char env_c[] =
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include <string.h>\n"
    "extern char **environ;\n"
    "static int cmp(const void *a, const void *b) { return strcmp(*(char **)a, *(char **)b); }\n"
    "int main(void) {\n"
    "  int n = 0;\n"
    "  while (environ[n]) n++;\n"
    "  qsort(environ, n, sizeof *environ, cmp);\n"
    "  for (int i = 0; i < n; i++) printf(\"[%s]\\n\", environ[i]);\n"
    "  printf(\"%d\\n\", n);\n"
    "  return 0;\n"
    "}\n";

typedef struct {
  const char *flags;      /* twasmc options */
  const char *run_env;    /* in front of the program */
  const char *expect;     /* exactly this output, or NULL */
  const char *has, *lacks; /* or: a line it holds and one it lacks */
} env_case;

static const env_case env_cases[] = {
    {"", "HOSTVAR=h TWASM_DIRS=.", "0\n", NULL, NULL},
    {"--env A=1 --env 'B=two words' --env HOSTVAR --env MISSING", "HOSTVAR=h OTHER=x TWASM_DIRS=.",
     "[A=1]\n[B=two words]\n[HOSTVAR=h]\n3\n", NULL, NULL},
    {"--env A=1 --env A=2", "", "[A=2]\n1\n", NULL, NULL},
    {"--inherit-env --env OTHER=baked", "OTHER=x TWASM_DIRS=. TWASM_TRACE=0",
     NULL, "[OTHER=baked]", "[TWASM_"},
    {"--inherit-env", "TWASM_INHERIT_ENV=0 OTHER=x", "0\n", NULL, NULL},
    {"--env A=1", "TWASM_INHERIT_ENV=1 OTHER=x", NULL, "[OTHER=x]", "[TWASM_"},
};

START_TEST(environment_is_what_was_asked) {
  const env_case *k = &env_cases[_i];
  make_tmpdir();
  write_file("env.c", env_c, sizeof env_c - 1);
  char cmd[1024], out[8192];
  snprintf(cmd, sizeof cmd, "clang-19 --target=wasm32-wasi --sysroot=/usr -O1 %s/env.c -o %s/env.wasm",
           tmpdir, tmpdir);
  ck_assert_int_eq(system(cmd), 0);
  snprintf(cmd, sizeof cmd, "%s %s/env.wasm -o %s/env", k->flags, tmpdir, tmpdir);
  twasmc_ok(cmd);
  ck_assert_int_eq(run_exe(k->run_env, "env", out, sizeof out), 0);
  if (k->expect) ck_assert_str_eq(out, k->expect);
  if (k->has) ck_assert_msg(strstr(out, k->has), "'%s' not in:\n%s", k->has, out);
  if (k->lacks) ck_assert_msg(!strstr(out, k->lacks), "'%s' in:\n%s", k->lacks, out);
}
END_TEST

static Suite *run_suite(void) {
  Suite *s = suite_create("cli_run");
  TCase *tc = tcase_create("run");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, names_from_dwarf, 0, 2);
  tcase_add_loop_test(tc, broken_dwarf_is_ignored, 0, 6);
  tcase_add_loop_test(tc, backtraces_collapse_and_truncate, 0,
                      sizeof backtrace_cases / sizeof backtrace_cases[0]);
  tcase_add_loop_test(tc, environment_is_what_was_asked, 0, sizeof env_cases / sizeof env_cases[0]);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return cli_main(run_suite(), "cli-run"); }
