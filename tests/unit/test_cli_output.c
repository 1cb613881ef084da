/* test_cli_output.c: where twasmc writes: refused outputs (devices,
 * fifos, folders, the input, a header over its object), no temporaries
 * left by a signal, the modes of what it writes, standard input and
 * standard output. */
#include <errno.h>
#include <signal.h>
#include <time.h>

#include "cli_util.h"

static const char small_wat[] = "(module (func (export \"_start\")))\n";

/* ---- refused outputs ------------------------------------------------------ */

typedef struct {
  const char *flags;  /* before the input */
  const char *output; /* -o; "@" stands for the scratch folder */
  const char *needle;
} refused_case;

static const refused_case refused_cases[] = {
    {"", "/dev/null", "a character device"},
    {"", "/dev/full", "a character device"},
    {"", "@/fifo", "a fifo"},
    {"", "@/dir", "a directory"},
    {"", "@/in.wat", "is the input file"},
    {"", "@/hard.wat", "is the input file"},
    {"-c", "@/x.h", "-c writes the header @/x.h beside the object"},
    {"-c", "@/dir.o", "a directory"}, /* dir.h is a folder below */
    {"--emit-llvm", "/dev/null", "a character device"},
};

static void expand(const char *pattern, char *out, size_t cap) {
  const char *at = strchr(pattern, '@');
  if (at) snprintf(out, cap, "%.*s%s%s", (int)(at - pattern), pattern, tmpdir, at + 1);
  else snprintf(out, cap, "%s", pattern);
}

START_TEST(refused_outputs) {
  const refused_case *k = &refused_cases[_i];
  make_tmpdir();
  write_file("in.wat", small_wat, sizeof small_wat - 1);
  char cmd[1024], out[4096], output[512], needle[512];
  snprintf(cmd, sizeof cmd, "cd %s && mkfifo fifo && mkdir dir dir.h && ln in.wat hard.wat", tmpdir);
  ck_assert_int_eq(system(cmd), 0);
  expand(k->output, output, sizeof output);
  expand(k->needle, needle, sizeof needle);
  snprintf(cmd, sizeof cmd, "%s %s/in.wat -o %s", k->flags, tmpdir, output);
  ck_assert_int_eq(run(cmd, out, sizeof out), 2);
  ck_assert_msg(strstr(out, needle), "%s printed: %s", cmd, out);
  struct stat st;
  ck_assert_int_eq(stat("/dev/null", &st), 0);
  ck_assert(S_ISCHR(st.st_mode)); /* as root, a rename would have replaced it */
  ck_assert_int_eq(count_prefixed("fifo.tmp") + count_prefixed("in.wat.tmp") + count_prefixed("x"), 0);
  ck_assert_int_eq(stat(tmpdir, &st), 0);
  snprintf(cmd, sizeof cmd, "%s/in.wat", tmpdir);
  ck_assert_int_eq(stat(cmd, &st), 0);
  ck_assert_int_eq(st.st_size, (off_t)(sizeof small_wat - 1));
}
END_TEST

/* ---- signals -------------------------------------------------------------- */

/* A module that takes seconds to compile at -O2. */
static void write_big_module(void) {
  char path[256];
  snprintf(path, sizeof path, "%s/big.wat", tmpdir);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs("(module (memory 1)\n", f);
  for (int i = 0; i < 3000; i++)
    fprintf(f,
            "(func (param i32) (result i32) (local i32) (loop $l (local.set 1 (i32.add (local.get 1)"
            " (i32.mul (local.get 0) (i32.const %d)))) (i32.store (local.get 1) (local.get 0))"
            " (br_if $l (i32.lt_u (local.get 1) (i32.const 1000)))) (local.get 1))\n",
            i + 3);
  fputs("(func (export \"_start\")))\n", f);
  fclose(f);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef enum { KILL_AFTER, KILL_AT_LINK } kill_when;

typedef struct {
  const char *input; /* big.wasm or big.wat */
  int sig;
  kill_when when;
  double delay_s;
} signal_case;

static const signal_case signal_cases[] = {
    {"big.wasm", SIGTERM, KILL_AFTER, 0.5},  /* in LLVM's code generation */
    {"big.wasm", SIGINT, KILL_AT_LINK, 0},   /* while cc links */
    {"big.wasm", SIGTERM, KILL_AT_LINK, 0},
    {"big.wat", SIGINT, KILL_AFTER, 0.02},   /* while wat2wasm converts */
};

/* Starts twasmc with TMPDIR in the scratch folder; kills it as the case
 * says.  Returns its wait status. */
static int compile_and_kill(const signal_case *k) {
  char tmp[256], in[256], outp[256];
  snprintf(tmp, sizeof tmp, "%s/tmp", tmpdir);
  snprintf(in, sizeof in, "%s/%s", tmpdir, k->input);
  snprintf(outp, sizeof outp, "%s/out", tmpdir);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    setenv("TMPDIR", tmp, 1);
    execl(twasmc(), "twasmc", in, "-o", outp, (char *)NULL);
    _exit(127);
  }
  double start = now_s();
  int status;
  for (;;) {
    if (waitpid(pid, &status, WNOHANG) == pid) return status; /* it won the race */
    bool due = k->when == KILL_AFTER ? now_s() - start >= k->delay_s
                                      : count_prefixed_in(tmp, "twasmc-obj") > 0;
    if (due || now_s() - start > 120) break;
    usleep(2000);
  }
  kill(pid, k->sig);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  return status;
}

START_TEST(signal_leaves_no_temporaries) {
  const signal_case *k = &signal_cases[_i];
  make_tmpdir();
  write_big_module();
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "cd %s && mkdir tmp && wat2wasm big.wat -o big.wasm", tmpdir);
  ck_assert_int_eq(system(cmd), 0);
  int status = compile_and_kill(k);
  char tmp[256];
  snprintf(tmp, sizeof tmp, "%s/tmp", tmpdir);
  ck_assert_int_eq(count_prefixed_in(tmp, "[^.]"), 0);
  ck_assert_int_eq(count_prefixed("out.tmp"), 0);
  if (k->when == KILL_AFTER) {
    /* Killed long before it could finish: by the signal, nothing written. */
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == k->sig, "status %#x", status);
    ck_assert(!exists("out"));
  } else {
    /* At link time the process may finish first; either way no leftovers. */
    ck_assert((WIFSIGNALED(status) && WTERMSIG(status) == k->sig) ||
              (WIFEXITED(status) && WEXITSTATUS(status) == 0));
  }
}
END_TEST

/* A linker that leaves a file in its TMPDIR and dies by the signal
 * without cleaning up (as a tool killed mid-write does): a fake `cc`
 * first on PATH.  Whatever it leaves goes with twasmc's temporaries. */
START_TEST(killed_tool_leaves_nothing) {
  make_tmpdir();
  write_file("in.wat", small_wat, sizeof small_wat - 1);
  char cmd[1024], tmp[256], path[1200], in[256], outp[256], started[256];
  snprintf(cmd, sizeof cmd,
           "cd %s && mkdir tmp bin && printf '#!/bin/sh\n: > \"$TMPDIR/ccleft.o\"\n"
           ": > %s/started\nexec sleep 60\n' > bin/cc && chmod +x bin/cc",
           tmpdir, tmpdir);
  ck_assert_int_eq(system(cmd), 0);
  snprintf(tmp, sizeof tmp, "%s/tmp", tmpdir);
  snprintf(path, sizeof path, "%s/bin:%s", tmpdir, getenv("PATH"));
  snprintf(in, sizeof in, "%s/in.wat", tmpdir);
  snprintf(outp, sizeof outp, "%s/out", tmpdir);
  snprintf(started, sizeof started, "%s/started", tmpdir);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    setenv("TMPDIR", tmp, 1);
    setenv("PATH", path, 1);
    execl(twasmc(), "twasmc", in, "-o", outp, (char *)NULL);
    _exit(127);
  }
  double start = now_s();
  while (access(started, F_OK) != 0 && now_s() - start < 60) usleep(2000);
  ck_assert_msg(access(started, F_OK) == 0, "the fake cc never ran");
  kill(pid, SIGTERM);
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "status %#x", status);
  ck_assert_int_eq(count_prefixed_in(tmp, "[^.]"), 0);
  ck_assert_int_eq(count_prefixed("out"), 0);
}
END_TEST

/* ---- modes ---------------------------------------------------------------- */

static mode_t mode_of(const char *name) {
  char path[256];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  ck_assert_int_eq(stat(path, &st), 0);
  return st.st_mode & 07777;
}

/* What a linker and a compiler give under the umask: 0777 and 0666 less it. */
START_TEST(output_modes_follow_umask) {
  static const struct { mode_t mask, exe, obj; } cases[] = {{022, 0755, 0644}, {077, 0700, 0600}};
  make_tmpdir();
  write_file("in.wat", small_wat, sizeof small_wat - 1);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char cmd[1024], out[4096];
    snprintf(cmd, sizeof cmd, "umask %03o && %s %s/in.wat -o %s/exe%zu && %s -c %s/in.wat -o %s/obj%zu.o",
             (unsigned)cases[i].mask, twasmc(), tmpdir, tmpdir, i, twasmc(), tmpdir, tmpdir, i);
    ck_assert_msg(run_shell(cmd, out, sizeof out) == 0, "%s", out);
    char name[32];
    snprintf(name, sizeof name, "exe%zu", i);
    ck_assert_uint_eq(mode_of(name), cases[i].exe);
    snprintf(name, sizeof name, "obj%zu.o", i);
    ck_assert_uint_eq(mode_of(name), cases[i].obj);
    snprintf(name, sizeof name, "obj%zu.h", i);
    ck_assert_uint_eq(mode_of(name), cases[i].obj);
  }
}
END_TEST

/* ---- standard input and output ------------------------------------------ */

typedef struct {
  const char *cmd;    /* shell; @ is the scratch folder, T twasmc */
  int status;
  const char *needle; /* in the output, or NULL */
} stdio_case;

static const stdio_case stdio_cases[] = {
    {"T - -o @/a < @/in.wat && @/a && echo ran", 0, "ran"},
    {"T - -o @/b < @/in.wasm && @/b && echo ran", 0, "ran"},
    {"cat @/in.wat | T --emit-llvm - -o -", 0, "define"},
    {"T -S @/in.wat -o -", 0, ".text"},
    {"T -c @/in.wat -o - | od -c | head -1", 0, "E   L   F"},
    {"T -c @/in.wat -o - >/dev/null; ls @", 0, "in.wat"},
    {"T @/in.wat -o -", 2, "an executable cannot go to standard output"},
    {"T - < @/in.wat", 2, "standard input (-) needs -o"},
    {"echo '(module (memory 2 1))' | T - -o @/c", 1, "<stdin>: error: wat2wasm rejected"},
};

static void expand_cmd(const char *pattern, char *out, size_t cap) {
  size_t n = 0;
  for (const char *p = pattern; *p && n + 1 < cap; p++) {
    const char *with = *p == '@' ? tmpdir : *p == 'T' ? twasmc() : NULL;
    if (with) n += (size_t)snprintf(out + n, cap - n, "%s", with);
    else out[n++] = *p;
  }
  out[n < cap ? n : cap - 1] = 0;
}

START_TEST(stdin_and_stdout) {
  const stdio_case *k = &stdio_cases[_i];
  make_tmpdir();
  write_file("in.wat", small_wat, sizeof small_wat - 1);
  char cmd[2048], out[8192];
  snprintf(cmd, sizeof cmd, "wat2wasm %s/in.wat -o %s/in.wasm", tmpdir, tmpdir);
  ck_assert_int_eq(system(cmd), 0);
  expand_cmd(k->cmd, cmd, sizeof cmd);
  int status = run_shell(cmd, out, sizeof out);
  ck_assert_msg(status == k->status, "%s: status %d: %s", cmd, status, out);
  ck_assert_msg(!k->needle || strstr(out, k->needle), "%s printed: %s", cmd, out);
  /* -c with -o - writes no header anywhere */
  ck_assert_int_eq(count_prefixed("-"), 0);
}
END_TEST

static Suite *output_suite(void) {
  Suite *s = suite_create("cli_output");
  TCase *tc = tcase_create("outputs");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, refused_outputs, 0, sizeof refused_cases / sizeof refused_cases[0]);
  tcase_add_loop_test(tc, signal_leaves_no_temporaries, 0, sizeof signal_cases / sizeof signal_cases[0]);
  tcase_add_test(tc, killed_tool_leaves_nothing);
  tcase_add_test(tc, output_modes_follow_umask);
  tcase_add_loop_test(tc, stdin_and_stdout, 0, sizeof stdio_cases / sizeof stdio_cases[0]);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return cli_main(output_suite(), "cli-output"); }
