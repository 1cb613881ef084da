/* test_cli.c: the twasmc command line: usage errors (GPU archs, --env),
 * bad input (memory limits), no partial outputs, --version, and --help
 * agreeing with man/twasmc.1. */
#include "cli_util.h"

typedef struct {
  const char *args;
  int status;
  const char *needle;
} usage_case;

static const usage_case usage_cases[] = {
    {"", 2, "no input file"},
    {"--frobnicate x.wasm", 2, "unknown option"},
    {"-o", 2, "needs a file name"},
    {"--bounds-checks=maybe x.wasm", 2, "unknown bounds-check mode"},
    {"--gpu-arch=sm_x x.wasm", 2, "bad --gpu-arch list"},
    /* archs LLVM 19's NVPTX cannot build for are refused before it aborts */
    {"--gpu-arch=sm_100 x.wasm", 2, "bad --gpu-arch list 'sm_100': up to 7 of sm_50,sm_52,"},
    {"--gpu-arch=sm_75,sm_35 x.wasm", 2, ",sm_89,sm_90"},
    {"--env =x x.wasm", 2, "--env needs NAME or NAME=VALUE"},
    {"--env", 2, "--env needs NAME or NAME=VALUE"},
    {"--tensor-cores=fp8 x.wasm", 2, "unknown tensor-core mode"},
    {"--cpu=pentium9 x.wasm", 2, "unknown CPU 'pentium9'"},
    {"--extract-ptx", 2, "needs an executable"},
    {"--dump-after=nothing x.wasm", 2, "unknown pass 'nothing'"},
    {"--skip-pass=lower x.wasm", 2, "pass 'lower' cannot be skipped"},
    {"a.wasm b.wasm", 2, "more than one input"},
    {"/nonexistent/x.wasm -o /tmp/never", 1, "cannot open"},
    {"/tmp -o /tmp/never", 1, "is a directory"},
};

START_TEST(usage_errors) {
  char out[4096];
  const usage_case *c = &usage_cases[_i];
  ck_assert_int_eq(run(c->args, out, sizeof out), c->status);
  ck_assert_msg(strstr(out, c->needle), "'%s' printed: %s", c->args, out);
}
END_TEST

typedef struct {
  const char *name;
  const unsigned char *bytes;
  size_t size;
  const char *needle;
} bad_case;

static const unsigned char empty_bytes[1] = {0};
static const unsigned char bad_magic[] = {0, 'a', 's', 'n', 1, 0, 0, 0};
static const unsigned char truncated[] = {0, 'a', 's', 'm', 1, 0, 0, 0, 1, 5, 1, 0x60};
static const unsigned char invalid_body[] = {
    0, 'a', 's', 'm', 1, 0, 0, 0,
    1, 5, 1, 0x60, 0, 1, 0x7f,       /* type: [] -> [i32] */
    3, 2, 1, 0,                      /* func 0: type 0 */
    10, 4, 1, 2, 0, 0x0b};           /* body: end (no i32 result) */

static const bad_case bad_cases[] = {
    {"empty.wasm", empty_bytes, 0, "error:"},
    {"magic.wasm", bad_magic, sizeof bad_magic, ":0x0: error: magic header not detected"},
    {"trunc.wasm", truncated, sizeof truncated, "error:"},
    {"invalid.wasm", invalid_body, sizeof invalid_body, "type mismatch"},
};

START_TEST(bad_input_leaves_nothing) {
  const bad_case *c = &bad_cases[_i];
  make_tmpdir();
  write_file(c->name, c->bytes, c->size);
  char args[512], out[4096];
  snprintf(args, sizeof args, "%s/%s -o %s/out", tmpdir, c->name, tmpdir);
  ck_assert_int_eq(run(args, out, sizeof out), 1);
  ck_assert_msg(strstr(out, c->needle), "%s printed: %s", c->name, out);
  ck_assert_msg(strstr(out, c->name), "message names the file: %s", out);
  ck_assert(!exists("out"));
  ck_assert_int_eq(count_prefixed("out"), 0);
  snprintf(args, sizeof args, "-c %s/%s -o %s/out.o", tmpdir, c->name, tmpdir);
  ck_assert_int_eq(run(args, out, sizeof out), 1);
  ck_assert_int_eq(count_prefixed("out"), 0);
}
END_TEST

/* Every option --help lists is in the man page, and the other way round. */
static int collect_options(const char *text, char opts[][32], int max, bool roff) {
  int n = 0;
  for (const char *p = text; *p && n < max; p++) {
    bool start = p == text || p[-1] == ' ' || p[-1] == '\n' || p[-1] == ',' ||
                 (roff && (p[-1] == 'B' || p[-1] == 'R' || p[-1] == '"'));
    if (!start || p[0] != (roff ? '\\' : '-')) continue;
    const char *q = p;
    char name[32];
    int k = 0;
    while (*q && k < 30) {
      if (roff && q[0] == '\\' && q[1] == '-') { name[k++] = '-'; q += 2; continue; }
      if (*q == '-' || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')) {
        name[k++] = *q++;
        continue;
      }
      break;
    }
    name[k] = 0;
    if (k < 2 || name[0] != '-' || (name[1] == '-' && k == 2)) continue;
    bool dup = false;
    for (int i = 0; i < n; i++) dup |= !strcmp(opts[i], name);
    if (!dup) strcpy(opts[n++], name);
  }
  return n;
}

START_TEST(help_matches_man_page) {
  static char help[16384], man[65536];
  ck_assert_int_eq(run("--help", help, sizeof help), 0);
  const char *mp = getenv("TWASMC_MAN");
  FILE *f = fopen(mp ? mp : "man/twasmc.1", "r");
  ck_assert_ptr_nonnull(f);
  size_t n = fread(man, 1, sizeof man - 1, f);
  man[n] = 0;
  fclose(f);
  char hopts[64][32], mopts[64][32];
  int nh = collect_options(help, hopts, 64, false), nm = collect_options(man, mopts, 64, true);
  ck_assert_int_ge(nh, 8);
  for (int i = 0; i < nh; i++) {
    bool found = false;
    for (int k = 0; k < nm; k++) found |= !strcmp(hopts[i], mopts[k]);
    ck_assert_msg(found, "--help lists %s but man/twasmc.1 does not", hopts[i]);
  }
  for (int k = 0; k < nm; k++) {
    bool found = false;
    for (int i = 0; i < nh; i++) found |= !strcmp(hopts[i], mopts[k]);
    ck_assert_msg(found, "man/twasmc.1 documents %s but --help does not", mopts[k]);
  }
}
END_TEST

/* The words between `from` and the next `to` in file (at most max). */
static int words_between(const char *path, const char *from, char to, char words[][48], int max) {
  static char text[32768];
  FILE *f = fopen(path, "r");
  ck_assert_msg(f != NULL, "cannot read %s", path);
  text[fread(text, 1, sizeof text - 1, f)] = 0;
  fclose(f);
  char *at = strstr(text, from);
  ck_assert_msg(at != NULL, "%s lacks %s", path, from);
  at += strlen(from);
  char *end = strchr(at, to);
  ck_assert_ptr_nonnull(end);
  *end = 0;
  int n = 0;
  for (char *w = strtok(at, " \n"); w && n < max; w = strtok(NULL, " \n")) snprintf(words[n++], 48, "%s", w);
  return n;
}

/* README's requirements are the packages .ci/setup installs. */
START_TEST(requirements_match_setup) {
  char readme[32][48], setup[32][48];
  int nr = words_between("README.md", "Requirements (Debian 12): `", '`', readme, 32);
  int ns = words_between(".ci/setup", "pkgs=\"", '"', setup, 32);
  ck_assert_int_ge(ns, 10);
  for (int i = 0; i < ns; i++) {
    bool found = false;
    for (int k = 0; k < nr; k++) found |= !strcmp(setup[i], readme[k]);
    ck_assert_msg(found, ".ci/setup installs %s, README's requirements lack it", setup[i]);
  }
  ck_assert_msg(nr == ns, "README lists %d packages, .ci/setup %d", nr, ns);
}
END_TEST

/* An executable that traps: message, backtrace and status 134. */
START_TEST(trap_reports_backtrace) {
  static const char wat[] =
      "(module\n"
      "  (func $inner (param i32) (result i32) (i32.div_u (i32.const 1) (local.get 0)))\n"
      "  (func $middle (param i32) (result i32) (i32.add (call $inner (local.get 0)) (i32.const 1)))\n"
      "  (func $outer (export \"_start\") (drop (call $middle (i32.const 0)))))\n";
  make_tmpdir();
  write_file("bt.wat", wat, sizeof wat - 1);
  char cmd[1024], out[4096];
  snprintf(cmd, sizeof cmd, "wat2wasm --debug-names %s/bt.wat -o %s/bt.wasm", tmpdir, tmpdir);
  ck_assert_int_eq(system(cmd), 0);
  snprintf(cmd, sizeof cmd, "-O0 %s/bt.wasm -o %s/bt", tmpdir, tmpdir);
  ck_assert_int_eq(run(cmd, out, sizeof out), 0);
  snprintf(cmd, sizeof cmd, "%s/bt 2>&1", tmpdir);
  FILE *p = popen(cmd, "r");
  size_t n = fread(out, 1, sizeof out - 1, p);
  out[n] = 0;
  int st = pclose(p);
  ck_assert_int_eq(WEXITSTATUS(st), 134);
  ck_assert_msg(strstr(out, "bt: trap: integer divide by zero in inner (bt.wasm:0x"), "got: %s", out);
  const char *a = strstr(out, "at inner"), *b = strstr(out, "at middle"), *c = strstr(out, "at outer");
  ck_assert_msg(a && b && c && a < b && b < c, "backtrace: %s", out);
}
END_TEST

/* --dump-after=PASS: the IR after that pass of the pipeline, on stderr;
 * versioning's offload call appears after the offload pass, not before. */
START_TEST(dump_after_pass) {
  static const char wat[] =
      "(module (memory 1) (func (export \"f\") (param i32) (local i32)\n"
      "  (loop (i32.store (local.get 1) (local.get 0))\n"
      "    (local.set 1 (i32.add (local.get 1) (i32.const 4)))\n"
      "    (br_if 0 (i32.lt_u (local.get 1) (i32.const 4000))))))\n";
  make_tmpdir();
  write_file("loop.wat", wat, sizeof wat - 1);
  static char out[1 << 16];
  char args[512];
  ck_assert_int_eq(run("--dump-after=list", out, sizeof out), 0);
  ck_assert(strstr(out, "reroll") && strstr(out, "offload") && strstr(out, "late"));
  static const struct {
    const char *pass, *level, *needle;
    bool offload_call;
  } cases[] = {
      {"lower", "", "; twasmc: IR after lower\n", false},
      {"optimise", "", "; twasmc: IR after optimise\n", false},
      {"offload", "", "; twasmc: IR after offload\n", true},
      {"reroll", "-O0", "; twasmc: IR after reroll: not run\n", false},
  };
  for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(args, sizeof args, "-c %s --dump-after=%s %s/loop.wat -o %s/loop.o", cases[i].level,
             cases[i].pass, tmpdir, tmpdir);
    ck_assert_int_eq(run(args, out, sizeof out), 0);
    ck_assert_msg(strstr(out, cases[i].needle), "%s: %.200s", cases[i].pass, out);
    ck_assert_int_eq(strstr(out, "define") != NULL, strcmp(cases[i].level, "-O0") != 0);
    ck_assert_int_eq(strstr(out, "@twasm_rt_offload(") != NULL, cases[i].offload_call);
  }
  /* --skip-pass: the pass does not run, and its checks are not there */
  snprintf(args, sizeof args, "-c --skip-pass=bounds --dump-after=bounds %s/loop.wat -o %s/loop.o", tmpdir, tmpdir);
  ck_assert_int_eq(run(args, out, sizeof out), 0);
  ck_assert_msg(strstr(out, "; twasmc: IR after bounds: not run\n"), "%.200s", out);
  static const char load[] = "(module (memory 1) (func (export \"g\") (param i32) (result i32)\n"
                             "  (i32.load (local.get 0))))\n";
  write_file("load.wat", load, sizeof load - 1);
  snprintf(args, sizeof args, "-c --skip-pass=bounds --emit-llvm %s/load.wat -o -", tmpdir);
  ck_assert_int_eq(run(args, out, sizeof out), 0);
  ck_assert_msg(strstr(out, "define") && !strstr(out, "@twasm_rt_trap("), "%.300s", out);
  snprintf(args, sizeof args, "-c --emit-llvm %s/load.wat -o -", tmpdir);
  ck_assert_int_eq(run(args, out, sizeof out), 0);
  ck_assert_msg(strstr(out, "@twasm_rt_trap("), "%.300s", out);
}
END_TEST

/* Out-of-bounds accesses in executables: status 134 in every mode, and
 * the message names the access that faults (issue 18: the value of an
 * out-of-bounds load that nobody reads; a group of loads from one address
 * whose check is one compare; a loop whose checks run before it). */
static const struct {
  const char *name, *body;
  const unsigned char mark[6]; /* bytes just before the faulting opcode */
  unsigned nmark;
} oob_cases[] = {
    {"unused", "(local.set 0 (i32.load (i32.const 65536)))", {0x41, 0x80, 0x80, 0x04}, 4},
    /* p = size - 4: the load at p fits, the one at p + 8 does not */
    {"group",
     "(local.set 0 (i32.sub (i32.mul (memory.size) (i32.const 65536)) (i32.const 4)))\n"
     "(drop (i32.add (i32.load (local.get 0)) (i32.load offset=8 (local.get 0))))",
     {0x28, 0x02, 0x00, 0x20, 0x00}, 5},
    {"loop",
     "(loop $l (i32.store (i32.mul (local.get 0) (i32.const 4)) (local.get 0))\n"
     "  (local.set 0 (i32.add (local.get 0) (i32.const 1)))\n"
     "  (br_if $l (i32.lt_u (local.get 0) (i32.const 20000))))",
     {0x41, 0x04, 0x6c, 0x20, 0x00}, 5},
};

static const char *const oob_modes[] = {"-O0", "-O2", "-O3", "-O2 --bounds-checks=explicit"};

/* File offset of the opcode after `mark` (the faulting access), or 0. */
static unsigned offset_after(const char *path, const unsigned char *mark, unsigned n) {
  unsigned char buf[4096];
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  size_t len = fread(buf, 1, sizeof buf, f);
  fclose(f);
  for (size_t i = 0; i + n < len; i++)
    if (!memcmp(buf + i, mark, n)) return (unsigned)(i + n);
  return 0;
}

START_TEST(oob_traps_at_the_access) {
  int c = _i / 4;
  const char *mode = oob_modes[_i % 4];
  char wat[1024], cmd[1024], out[4096], want[128], wasm[256];
  snprintf(wat, sizeof wat, "(module (memory 1)\n (func $start (export \"_start\") (local i32)\n %s))\n",
           oob_cases[c].body);
  make_tmpdir();
  write_file("oob.wat", wat, strlen(wat));
  snprintf(wasm, sizeof wasm, "%s/oob.wasm", tmpdir);
  snprintf(cmd, sizeof cmd, "wat2wasm --debug-names %s/oob.wat -o %s", tmpdir, wasm);
  ck_assert_int_eq(system(cmd), 0);
  snprintf(cmd, sizeof cmd, "%s %s -o %s/oob", mode, wasm, tmpdir);
  ck_assert_msg(run(cmd, out, sizeof out) == 0, "%s", out);
  snprintf(cmd, sizeof cmd, "%s/oob 2>&1", tmpdir);
  FILE *p = popen(cmd, "r");
  size_t n = fread(out, 1, sizeof out - 1, p);
  out[n] = 0;
  int st = pclose(p);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 134, "%s %s: status %d: %s", oob_cases[c].name, mode, st, out);
  unsigned nmark = oob_cases[c].nmark;
  unsigned at = offset_after(wasm, oob_cases[c].mark, nmark);
  ck_assert(at != 0);
  snprintf(want, sizeof want, "oob: trap: out of bounds memory access in start (oob.wasm:0x%x)", at);
  ck_assert_msg(strstr(out, want), "%s %s: want '%s' in: %s", oob_cases[c].name, mode, want, out);
}
END_TEST

START_TEST(version_prints) {
  char out[1024];
  ck_assert_int_eq(run("--version", out, sizeof out), 0);
  ck_assert(strstr(out, "twasmc ") == out);
  ck_assert_msg(strstr(out, "(LLVM 19."), "%s", out);
  ck_assert_msg(strstr(out, "multi-value") && strstr(out, "bulk memory") && strstr(out, "WASI preview 1"),
                "%s", out);
}
END_TEST

/* Memory limits: errors point at the limits; what twasmc cannot hold is
 * refused at compile time; offsets into wat2wasm's output are said to be
 * that. */
typedef struct {
  const char *name;
  const unsigned char *bytes; /* a binary module, or NULL for text */
  size_t size;
  const char *text;
  const char *needle;
} limit_case;

static const unsigned char min_over_max[] = {0, 'a', 's', 'm', 1, 0, 0, 0, 5, 4, 1, 1, 2, 1};
static const unsigned char too_large[] = {0, 'a', 's', 'm', 1, 0, 0, 0, 5, 5, 1, 0, 0x81, 0x80, 0x04};
static const unsigned char table_min_over_max[] = {0, 'a', 's', 'm', 1, 0, 0, 0, 4, 5, 1, 0x70, 1, 2, 1};

static const limit_case limit_cases[] = {
    {"minmax.wasm", min_over_max, sizeof min_over_max, NULL,
     "minmax.wasm:0xb: error: size minimum must not be greater than maximum"},
    {"large.wasm", too_large, sizeof too_large, NULL,
     "large.wasm:0xb: error: memory size must be at most 65536 pages (4GiB)"},
    {"table.wasm", table_min_over_max, sizeof table_min_over_max, NULL,
     "table.wasm:0xc: error: size minimum must not be greater than maximum"},
    {"full.wat", NULL, 0, "(module (memory 65536))\n",
     "full.wat (converted by wat2wasm):0xb: error: memory of 65536 pages (4 GiB) at start: twasmc "
     "supports at most 65535 pages"},
    {"import.wat", NULL, 0, "(module (import \"m\" \"mem\" (memory 65536)))\n", "at most 65535 pages"},
};

START_TEST(memory_limits) {
  const limit_case *k = &limit_cases[_i];
  make_tmpdir();
  if (k->bytes) write_file(k->name, k->bytes, k->size);
  else write_file(k->name, k->text, strlen(k->text));
  char args[512], out[4096];
  snprintf(args, sizeof args, "%s/%s -o %s/out", tmpdir, k->name, tmpdir);
  ck_assert_int_eq(run(args, out, sizeof out), 1);
  ck_assert_msg(strstr(out, k->needle), "%s printed: %s", k->name, out);
  ck_assert(!exists("out"));
}
END_TEST

/* Where only libzstd1 is installed the linker finds no libzstd to link
 * executables with: twasmc names the package that has it.  A cc first in
 * PATH that fails as GNU ld does there. */
START_TEST(missing_libzstd_is_named) {
  make_tmpdir();
  static const char fake_cc[] =
      "#!/bin/sh\n"
      "for a in \"$@\"; do [ \"$a\" = -lzstd ] && {\n"
      "  echo '/usr/bin/ld: cannot find -lzstd: No such file or directory' >&2\n"
      "  echo 'collect2: error: ld returned 1 exit status' >&2; exit 1; }; done\n"
      "exec /usr/bin/cc \"$@\"\n";
  write_file("cc", fake_cc, sizeof fake_cc - 1);
  static const char wat[] = "(module (func (export \"_start\")))";
  write_file("m.wat", wat, sizeof wat - 1);
  char cmd[1024], out[4096];
  snprintf(cmd, sizeof cmd, "chmod +x %s/cc && PATH=%s:$PATH %s %s/m.wat -o %s/m", tmpdir, tmpdir, twasmc(), tmpdir,
           tmpdir);
  ck_assert_int_eq(run_shell(cmd, out, sizeof out), 1);
  ck_assert_msg(strstr(out, "linking the executable failed") && strstr(out, "cannot find -lzstd") &&
                    strstr(out, "apt install libzstd-dev"), "%s", out);
  ck_assert(!exists("m"));
}
END_TEST

static Suite *cli_suite(void) {
  Suite *s = suite_create("cli");
  TCase *tc = tcase_create("cli");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, usage_errors, 0, sizeof usage_cases / sizeof usage_cases[0]);
  tcase_add_loop_test(tc, bad_input_leaves_nothing, 0, sizeof bad_cases / sizeof bad_cases[0]);
  tcase_add_test(tc, help_matches_man_page);
  tcase_add_test(tc, requirements_match_setup);
  tcase_add_test(tc, version_prints);
  tcase_add_test(tc, missing_libzstd_is_named);
  tcase_add_loop_test(tc, memory_limits, 0, sizeof limit_cases / sizeof limit_cases[0]);
  tcase_add_test(tc, dump_after_pass);
  tcase_add_test(tc, trap_reports_backtrace);
  tcase_add_loop_test(tc, oob_traps_at_the_access, 0, 4 * (int)(sizeof oob_cases / sizeof oob_cases[0]));
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return cli_main(cli_suite(), "cli"); }
