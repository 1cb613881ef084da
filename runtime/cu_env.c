/* cu_env.c: the environment variables that steer offload (TWASM_DEVICE,
 * TWASM_TRACE, TWASM_GPU_MEM_CAP's syntax) and the trace line printer. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cu.h"

static const struct {
  const char *name;
  cu_mode mode;
} cu_modes[] = {
    {"auto", CU_MODE_AUTO},
    {"cpu", CU_MODE_CPU},
    {"gpu", CU_MODE_GPU},
};

bool cu_parse_mode(const char *text, cu_mode *out) {
  for (size_t i = 0; i < sizeof cu_modes / sizeof cu_modes[0]; i++) {
    if (strcmp(text, cu_modes[i].name) == 0) {
      *out = cu_modes[i].mode;
      return true;
    }
  }
  return false;
}

bool cu_parse_size(const char *text, uint64_t *out) {
  uint64_t value = 0;
  const char *p = text;
  if (*p < '0' || *p > '9') return false;
  for (; *p >= '0' && *p <= '9'; p++) {
    uint64_t digit = (uint64_t)(*p - '0');
    if (value > (UINT64_MAX - digit) / 10) return false;
    value = value * 10 + digit;
  }
  unsigned shift = 0;
  switch (*p) {
  case 0: break;
  case 'k': case 'K': shift = 10; p++; break;
  case 'm': case 'M': shift = 20; p++; break;
  case 'g': case 'G': shift = 30; p++; break;
  default: return false;
  }
  if (*p != 0) return false;
  if (shift && value > (UINT64_MAX >> shift)) return false;
  *out = value << shift;
  return true;
}

static pthread_once_t cu_env_once = PTHREAD_ONCE_INIT;
static cu_mode cu_env_mode;
static bool cu_env_trace;
/* TWASM_TRACE_TIME=1: each trace line ends with the milliseconds since
 * the first trace, to see where a run's time goes. */
static bool cu_env_trace_time;
static double cu_env_t0_ms;

static double cu_env_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void cu_env_read(void) {
  const char *trace = getenv("TWASM_TRACE");
  cu_env_trace = trace && strcmp(trace, "1") == 0;
  const char *when = getenv("TWASM_TRACE_TIME");
  cu_env_trace_time = cu_env_trace && when && strcmp(when, "1") == 0;
  cu_env_t0_ms = cu_env_now_ms();
  const char *device = getenv("TWASM_DEVICE");
  cu_env_mode = CU_MODE_AUTO;
  /* A misspelt value must not silently put work on a GPU the user tried
   * to turn off. */
  if (device && *device && !cu_parse_mode(device, &cu_env_mode)) {
    cu_env_mode = CU_MODE_CPU;
    /* Not cu_trace: that would re-enter this pthread_once. */
    if (cu_env_trace)
      fprintf(stderr, "twasm: TWASM_DEVICE=%s is not cpu, gpu or auto: using the cpu\n", device);
  }
}

cu_mode cu_mode_get(void) {
  pthread_once(&cu_env_once, cu_env_read);
  return cu_env_mode;
}

bool cu_tracing(void) {
  pthread_once(&cu_env_once, cu_env_read);
  return cu_env_trace;
}

void cu_trace(const char *fmt, ...) {
  if (!cu_tracing()) return;
  /* One write per line, so lines from several threads do not interleave. */
  char line[1200];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n > sizeof line - 40) n = (int)sizeof line - 40;
  if (cu_env_trace_time) n += snprintf(line + n, 32, " [%.3f ms]", cu_env_now_ms() - cu_env_t0_ms);
  line[n] = '\n';
  line[n + 1] = 0;
  fprintf(stderr, "twasm: %s", line);
}
