/* unit_fake.c: the fake CUDA driver for unit tests (unit_fake.h). */
#include "unit_fake.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cu.h"

static char log_path[96];

bool unit_fake_up(const char *tag) {
  const char *dir = getenv("FAKE_CUDA_DIR");
  if (!dir) return false;
  char lib[512];
  snprintf(lib, sizeof lib, "%s/libcuda.so.1", dir);
  setenv("FAKE_CUDA", "old", 1);
  if (tag) {
    snprintf(log_path, sizeof log_path, "/tmp/twasm-test-%s-%d.log", tag, (int)getpid());
    setenv("FAKE_CUDA_LOG", log_path, 1);
    setenv("FAKE_CUDA_LOG_WAITS", "1", 1);
  }
  cu_test_use_library(lib);
  return cu_available();
}

const char *unit_fake_log(void) { return log_path; }

int unit_fake_logged(const char *line) {
  FILE *f = log_path[0] ? fopen(log_path, "r") : NULL;
  int n = 0;
  char got[128];
  while (f && fgets(got, sizeof got, f)) {
    got[strcspn(got, "\n")] = 0;
    n += strcmp(got, line) == 0;
  }
  if (f) fclose(f);
  return n;
}
