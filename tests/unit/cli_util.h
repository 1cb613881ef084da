/* cli_util.h: what the command-line suites (test_cli*.c) share: running
 * twasmc and the programs it makes, and scratch folders that all live in
 * one folder, removed by main() whatever the tests did. */
#ifndef CLI_UTIL_H
#define CLI_UTIL_H

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit_sh.h"

static inline const char *twasmc(void) { return unit_twasmc(); }

/* The shell command cmd, stdout+stderr into out: unit_sh.h. */
static inline int run_shell(const char *cmd, char *out, size_t cap) { return unit_sh(cmd, out, cap); }

/* Runs `twasmc ARGS`, capturing stdout+stderr into out; returns the exit status. */
static inline int run(const char *args, char *out, size_t cap) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s %s", twasmc(), args);
  return run_shell(cmd, out, cap);
}

/* The folder every test's scratch folder goes in (made by cli_main). */
static char cli_base[64];
static char tmpdir[128];

static inline void make_tmpdir(void) {
  snprintf(tmpdir, sizeof tmpdir, "%s/tXXXXXX", cli_base);
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static inline void write_file(const char *name, const void *data, size_t n) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  fwrite(data, 1, n, f);
  fclose(f);
}

static inline bool exists(const char *name) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  return access(path, F_OK) == 0;
}

/* Files in dir whose name starts with prefix (leftover temporaries). */
static inline int count_prefixed_in(const char *dir, const char *prefix) {
  char cmd[512], buf[4096];
  snprintf(cmd, sizeof cmd, "ls -a %s | grep -c '^%s' || true", dir, prefix);
  FILE *p = popen(cmd, "r");
  size_t n = fread(buf, 1, sizeof buf - 1, p);
  buf[n] = 0;
  pclose(p);
  return atoi(buf);
}

static inline int count_prefixed(const char *prefix) { return count_prefixed_in(tmpdir, prefix); }

/* Runs the suite in a scratch folder of its own, removed afterwards
 * (the tests run in forked children; this parent outlives them). */
static inline int cli_main(Suite *s, const char *name) {
  snprintf(cli_base, sizeof cli_base, "/tmp/twasm-%s-XXXXXX", name);
  if (!mkdtemp(cli_base)) {
    perror("mkdtemp");
    return 1;
  }
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "chmod -R u+w %s; rm -rf %s", cli_base, cli_base);
  if (system(cmd) != 0) fprintf(stderr, "%s: cannot remove %s\n", name, cli_base);
  return failed ? 1 : 0;
}

#endif
