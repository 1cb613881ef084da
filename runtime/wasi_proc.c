/* wasi_proc.c: arguments, environment, clocks, random bytes and the
 * process calls of WASI preview 1. */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "wasi_internal.h"

static uint64_t strings_bytes(char *const *s, uint32_t n) {
  uint64_t total = 0;
  for (uint32_t i = 0; i < n; i++) total += strlen(s[i]) + 1;
  return total;
}

static uint32_t strings_sizes(const wasi_call *c, char *const *s, uint32_t n,
                              uint32_t count_ptr, uint32_t size_ptr) {
  uint64_t bytes = strings_bytes(s, n);
  if (bytes > UINT32_MAX) return WASI_EOVERFLOW;
  if (!wasi_store_u32(c, count_ptr, n) || !wasi_store_u32(c, size_ptr, (uint32_t)bytes))
    return WASI_EFAULT;
  return WASI_ESUCCESS;
}

/* The layout libc expects: n pointers into one buffer of NUL-terminated
 * strings, back to back. */
static uint32_t strings_get(const wasi_call *c, char *const *s, uint32_t n,
                            uint32_t ptrs, uint32_t buf) {
  uint8_t *ptr_area, *buf_area;
  uint64_t bytes = strings_bytes(s, n);
  if (!wasi_mem_range(c, ptrs, (uint64_t)n * 4u, &ptr_area) ||
      !wasi_mem_range(c, buf, bytes, &buf_area))
    return WASI_EFAULT;
  uint32_t off = 0;
  for (uint32_t i = 0; i < n; i++) {
    size_t len = strlen(s[i]) + 1;
    wasi_put_u32(ptr_area + 4 * i, buf + off);
    memcpy(buf_area + off, s[i], len);
    off += (uint32_t)len;
  }
  return WASI_ESUCCESS;
}

uint32_t wasi_args_sizes_get(wasi_call *c, const twasm_val *a) {
  return strings_sizes(c, c->w->args, c->w->nargs, A_I32(0), A_I32(1));
}

uint32_t wasi_args_get(wasi_call *c, const twasm_val *a) {
  return strings_get(c, c->w->args, c->w->nargs, A_I32(0), A_I32(1));
}

uint32_t wasi_environ_sizes_get(wasi_call *c, const twasm_val *a) {
  return strings_sizes(c, c->w->env, c->w->nenv, A_I32(0), A_I32(1));
}

uint32_t wasi_environ_get(wasi_call *c, const twasm_val *a) {
  return strings_get(c, c->w->env, c->w->nenv, A_I32(0), A_I32(1));
}

static bool host_clock(uint32_t id, clockid_t *out) {
  static const clockid_t ids[] = {
      [WASI_CLOCK_REALTIME] = CLOCK_REALTIME,
      [WASI_CLOCK_MONOTONIC] = CLOCK_MONOTONIC,
      [WASI_CLOCK_PROCESS_CPUTIME] = CLOCK_PROCESS_CPUTIME_ID,
      [WASI_CLOCK_THREAD_CPUTIME] = CLOCK_THREAD_CPUTIME_ID,
  };
  if (id >= sizeof ids / sizeof ids[0]) return false;
  *out = ids[id];
  return true;
}

static uint64_t timespec_ns(const struct timespec *ts) {
  return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

uint32_t wasi_clock_res_get(wasi_call *c, const twasm_val *a) {
  clockid_t id;
  struct timespec ts;
  if (!host_clock(A_I32(0), &id)) return WASI_EINVAL;
  if (clock_getres(id, &ts) != 0) return wasi_errno_from_host(errno);
  return wasi_store_u64(c, A_I32(1), timespec_ns(&ts)) ? WASI_ESUCCESS : WASI_EFAULT;
}

/* The precision argument is a hint; the host clocks are all finer. */
uint32_t wasi_clock_time_get(wasi_call *c, const twasm_val *a) {
  clockid_t id;
  struct timespec ts;
  if (!host_clock(A_I32(0), &id)) return WASI_EINVAL;
  if (clock_gettime(id, &ts) != 0) return wasi_errno_from_host(errno);
  return wasi_store_u64(c, A_I32(2), timespec_ns(&ts)) ? WASI_ESUCCESS : WASI_EFAULT;
}

/* Unwinds the guest like a trap; twasm_main turns it into the status. */
uint32_t wasi_proc_exit(wasi_call *c, const twasm_val *a) {
  c->trap->code = TWASM_TRAP_EXIT;
  c->trap->exit_status = (int)A_I32(0);
  strcpy(c->trap->message, "exit");
  return WASI_UNWIND;
}

/* Raising a host signal on the guest's behalf would end or stop the whole
 * host process, which WASI's sandbox should not allow. */
uint32_t wasi_proc_raise(wasi_call *c, const twasm_val *a) {
  (void)c;
  (void)a;
  return WASI_ENOSYS;
}

uint32_t wasi_sched_yield(wasi_call *c, const twasm_val *a) {
  (void)c;
  (void)a;
  return sched_yield() == 0 ? WASI_ESUCCESS : wasi_errno_from_host(errno);
}

uint32_t wasi_random_get(wasi_call *c, const twasm_val *a) {
  uint8_t *buf;
  uint32_t len = A_I32(1);
  if (!wasi_mem_range(c, A_I32(0), len, &buf)) return WASI_EFAULT;
  while (len) {
    ssize_t n = getrandom(buf, len, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return wasi_errno_from_host(errno);
    }
    buf += n;
    len -= (uint32_t)n;
  }
  return WASI_ESUCCESS;
}
