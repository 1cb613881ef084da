/* wasi_fdstat.c: descriptor attributes: flags, rights, file status,
 * times, size, advice, allocation and syncing. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "wasi_internal.h"

#define R(name) WASI_RIGHT(WASI_R_##name)

uint32_t wasi_fd_advise(wasi_call *c, const twasm_val *a) {
  static const int advice[] = {POSIX_FADV_NORMAL, POSIX_FADV_SEQUENTIAL, POSIX_FADV_RANDOM,
                               POSIX_FADV_WILLNEED, POSIX_FADV_DONTNEED, POSIX_FADV_NOREUSE};
  wasi_fd *e;
  uint32_t err = wasi_data_fd(c, A_I32(0), R(FD_ADVISE), &e);
  if (err) return err;
  if (A_I32(3) >= sizeof advice / sizeof advice[0]) return WASI_EINVAL;
  if (A_I64(1) > INT64_MAX || A_I64(2) > INT64_MAX) return WASI_EINVAL;
  /* posix_fadvise returns the error instead of setting errno. */
  return wasi_errno_from_host(posix_fadvise(e->host_fd, (off_t)A_I64(1), (off_t)A_I64(2),
                                            advice[A_I32(3)]));
}

uint32_t wasi_fd_allocate(wasi_call *c, const twasm_val *a) {
  wasi_fd *e;
  uint32_t err = wasi_data_fd(c, A_I32(0), R(FD_ALLOCATE), &e);
  if (err) return err;
  if (A_I64(1) > INT64_MAX || A_I64(2) > INT64_MAX - A_I64(1)) return WASI_EINVAL;
  return wasi_errno_from_host(posix_fallocate(e->host_fd, (off_t)A_I64(1), (off_t)A_I64(2)));
}

uint32_t wasi_fd_datasync(wasi_call *c, const twasm_val *a) {
  wasi_fd *e;
  uint32_t err = wasi_fd_use(c, A_I32(0), R(FD_DATASYNC), &e);
  return err ? err : wasi_host_result(fdatasync(e->host_fd));
}

uint32_t wasi_fd_sync(wasi_call *c, const twasm_val *a) {
  wasi_fd *e;
  uint32_t err = wasi_fd_use(c, A_I32(0), R(FD_SYNC), &e);
  return err ? err : wasi_host_result(fsync(e->host_fd));
}

static uint16_t fdflags_of(const wasi_fd *e) {
  int fl = fcntl(e->host_fd, F_GETFL);
  uint16_t out = e->rsync;
  if (fl < 0) return out;
  if (fl & O_APPEND) out |= WASI_FDFLAG_APPEND;
  if (fl & O_NONBLOCK) out |= WASI_FDFLAG_NONBLOCK;
  /* O_SYNC contains the O_DSYNC bit. */
  if ((fl & O_SYNC) == O_SYNC) out |= WASI_FDFLAG_SYNC;
  else if (fl & O_DSYNC) out |= WASI_FDFLAG_DSYNC;
  return out;
}

uint32_t wasi_fd_fdstat_get(wasi_call *c, const twasm_val *a) {
  wasi_fd *e = wasi_fd_get(c->w, A_I32(0));
  uint8_t *out;
  if (!e) return WASI_EBADF;
  if (!wasi_mem_range(c, A_I32(1), 24, &out)) return WASI_EFAULT;
  memset(out, 0, 24);
  out[0] = e->filetype;
  wasi_put_u16(out + 2, fdflags_of(e));
  wasi_put_u64(out + 8, e->rights_base);
  wasi_put_u64(out + 16, e->rights_inheriting);
  return WASI_ESUCCESS;
}

/* Linux changes only append and nonblock on an open file. */
uint32_t wasi_fd_fdstat_set_flags(wasi_call *c, const twasm_val *a) {
  wasi_fd *e;
  uint32_t flags = A_I32(1), err = wasi_fd_use(c, A_I32(0), R(FD_FDSTAT_SET_FLAGS), &e);
  if (err) return err;
  if (flags & ~(uint32_t)(WASI_FDFLAG_APPEND | WASI_FDFLAG_NONBLOCK)) return WASI_ENOTSUP;
  int fl = fcntl(e->host_fd, F_GETFL);
  if (fl < 0) return wasi_errno_from_host(errno);
  fl &= ~(O_APPEND | O_NONBLOCK);
  if (flags & WASI_FDFLAG_APPEND) fl |= O_APPEND;
  if (flags & WASI_FDFLAG_NONBLOCK) fl |= O_NONBLOCK;
  return wasi_host_result(fcntl(e->host_fd, F_SETFL, fl));
}

/* Rights may only shrink, and stay shrunk: what a descriptor loses here
 * it never gets back. */
uint32_t wasi_fd_fdstat_set_rights(wasi_call *c, const twasm_val *a) {
  wasi_fd *e = wasi_fd_get(c->w, A_I32(0));
  uint64_t base = A_I64(1), inheriting = A_I64(2);
  if (!e) return WASI_EBADF;
  if ((base & ~e->rights_base) || (inheriting & ~e->rights_inheriting)) return WASI_ENOTCAPABLE;
  e->rights_base = base;
  e->rights_inheriting = inheriting;
  return WASI_ESUCCESS;
}

static uint64_t ns_of(const struct timespec *ts) {
  return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

uint32_t wasi_store_filestat(const wasi_call *c, uint32_t ptr, int host_fd, const struct stat *st) {
  uint8_t *out;
  if (!wasi_mem_range(c, ptr, 64, &out)) return WASI_EFAULT;
  memset(out, 0, 64);
  wasi_put_u64(out + 0, (uint64_t)st->st_dev);
  wasi_put_u64(out + 8, (uint64_t)st->st_ino);
  out[16] = wasi_filetype_of(host_fd, st->st_mode);
  wasi_put_u64(out + 24, (uint64_t)st->st_nlink);
  wasi_put_u64(out + 32, (uint64_t)st->st_size);
  wasi_put_u64(out + 40, ns_of(&st->st_atim));
  wasi_put_u64(out + 48, ns_of(&st->st_mtim));
  wasi_put_u64(out + 56, ns_of(&st->st_ctim));
  return WASI_ESUCCESS;
}

uint32_t wasi_fd_filestat_get(wasi_call *c, const twasm_val *a) {
  wasi_fd *e;
  struct stat st;
  uint32_t err = wasi_fd_use(c, A_I32(0), R(FD_FILESTAT_GET), &e);
  if (err) return err;
  if (fstat(e->host_fd, &st) != 0) return wasi_errno_from_host(errno);
  return wasi_store_filestat(c, A_I32(1), e->host_fd, &st);
}

uint32_t wasi_fd_filestat_set_size(wasi_call *c, const twasm_val *a) {
  wasi_fd *e;
  uint32_t err = wasi_data_fd(c, A_I32(0), R(FD_FILESTAT_SET_SIZE), &e);
  if (err) return err;
  if (A_I64(1) > INT64_MAX) return WASI_EINVAL;
  return wasi_host_result(ftruncate(e->host_fd, (off_t)A_I64(1)));
}

static struct timespec one_time(uint64_t ns, bool set, bool now) {
  if (now) return (struct timespec){.tv_nsec = UTIME_NOW};
  if (!set) return (struct timespec){.tv_nsec = UTIME_OMIT};
  return (struct timespec){.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
}

uint32_t wasi_timespecs(uint64_t atim, uint64_t mtim, uint32_t fst, struct timespec ts[2]) {
  if (((fst & WASI_FST_ATIM) && (fst & WASI_FST_ATIM_NOW)) ||
      ((fst & WASI_FST_MTIM) && (fst & WASI_FST_MTIM_NOW)) || fst > 15)
    return WASI_EINVAL;
  ts[0] = one_time(atim, fst & WASI_FST_ATIM, fst & WASI_FST_ATIM_NOW);
  ts[1] = one_time(mtim, fst & WASI_FST_MTIM, fst & WASI_FST_MTIM_NOW);
  return WASI_ESUCCESS;
}

uint32_t wasi_fd_filestat_set_times(wasi_call *c, const twasm_val *a) {
  wasi_fd *e;
  struct timespec ts[2];
  uint32_t err = wasi_fd_use(c, A_I32(0), R(FD_FILESTAT_SET_TIMES), &e);
  if (err) return err;
  err = wasi_timespecs(A_I64(1), A_I64(2), A_I32(3), ts);
  return err ? err : wasi_host_result(futimens(e->host_fd, ts));
}
