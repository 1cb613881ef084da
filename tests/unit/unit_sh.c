/* unit_sh.c: the unit tests' shell runner (unit_sh.h). */
#include "unit_sh.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

const char *unit_twasmc(void) {
  const char *t = getenv("TWASMC");
  return t ? t : "build/bin/twasmc";
}

int unit_sh(const char *cmd, char *out, size_t cap) {
  char full[8192];
  snprintf(full, sizeof full, "%s 2>&1", cmd);
  FILE *p = popen(full, "r");
  ck_assert_ptr_nonnull(p);
  size_t n = fread(out, 1, cap - 1, p);
  out[n] = 0;
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
