/* unit_fake.c: the fake CUDA driver for unit tests (unit_fake.h). */
#include "unit_fake.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cu.h"
#include "rt_internal.h"
#include "rt_offload.h"

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

static struct sigaction old_segv;
static int faults;

static void on_segv(int sig, siginfo_t *si, void *uctx) {
  (void)uctx;
  faults++;
  if (rt_resident_fault((uintptr_t)si->si_addr)) return;
  sigaction(sig, &old_segv, NULL);
}

rt_resident *unit_resident_up(uint8_t **host, uint32_t mem) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, &old_segv);
  uint8_t *h = mmap(NULL, mem, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert_ptr_ne(h, MAP_FAILED);
  for (uint32_t i = 0; i < mem; i++) h[i] = (uint8_t)(i * 7 + 3);
  rt_resident *res = rt_resident_new(h, mem);
  ck_assert_ptr_nonnull(res);
  faults = 0;
  *host = h;
  return res;
}

void unit_resident_down(rt_resident *res, uint8_t *host, uint32_t mem) {
  rt_resident_free(res);
  munmap(host, mem);
  sigaction(SIGSEGV, &old_segv, NULL);
}

int unit_resident_faults(void) { return faults; }
