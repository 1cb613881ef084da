/* wasi_fd.c: reading, writing, seeking, closing and renumbering
 * descriptors, and the preopen queries. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wasi_internal.h"

typedef enum { IO_READ, IO_WRITE, IO_PREAD, IO_PWRITE } io_kind;

/* One transfer through guest iovecs; *done gets the byte count. */
static uint32_t transfer(wasi_call *c, io_kind kind, uint32_t fd, uint32_t iovs, uint32_t n,
                         uint64_t offset, uint32_t done_ptr) {
  /* pread and pwrite use a position: they need seek too. */
  static const uint64_t needed[] = {
      [IO_READ] = WASI_RIGHT_FD_READ, [IO_WRITE] = WASI_RIGHT_FD_WRITE,
      [IO_PREAD] = WASI_RIGHT_FD_READ | WASI_RIGHT_FD_SEEK,
      [IO_PWRITE] = WASI_RIGHT_FD_WRITE | WASI_RIGHT_FD_SEEK,
  };
  wasi_fd *e;
  uint32_t err = wasi_data_fd(c, fd, needed[kind], &e);
  if (err) return err;
  if ((kind == IO_PREAD || kind == IO_PWRITE) && offset > INT64_MAX) return WASI_EINVAL;
  struct iovec *v;
  err = wasi_mem_iovecs(c, iovs, n, &v);
  if (err) return err;
  ssize_t got;
  do {
    switch (kind) {
    case IO_READ: got = readv(e->host_fd, v, (int)n); break;
    case IO_WRITE: got = writev(e->host_fd, v, (int)n); break;
    case IO_PREAD: got = preadv(e->host_fd, v, (int)n, (off_t)offset); break;
    default: got = pwritev(e->host_fd, v, (int)n, (off_t)offset); break;
    }
  } while (got < 0 && errno == EINTR);
  int host_err = errno;
  free(v);
  if (got < 0) return wasi_errno_from_host(host_err);
  /* A short count is fine: Wasm iovecs may total more than 4 GiB. */
  return wasi_store_u32(c, done_ptr, (uint32_t)got) ? WASI_ESUCCESS : WASI_EFAULT;
}

uint32_t wasi_fd_read(wasi_call *c, const twasm_val *a) {
  return transfer(c, IO_READ, A_I32(0), A_I32(1), A_I32(2), 0, A_I32(3));
}

uint32_t wasi_fd_write(wasi_call *c, const twasm_val *a) {
  return transfer(c, IO_WRITE, A_I32(0), A_I32(1), A_I32(2), 0, A_I32(3));
}

uint32_t wasi_fd_pread(wasi_call *c, const twasm_val *a) {
  return transfer(c, IO_PREAD, A_I32(0), A_I32(1), A_I32(2), A_I64(3), A_I32(4));
}

uint32_t wasi_fd_pwrite(wasi_call *c, const twasm_val *a) {
  return transfer(c, IO_PWRITE, A_I32(0), A_I32(1), A_I32(2), A_I64(3), A_I32(4));
}

uint32_t wasi_fd_seek(wasi_call *c, const twasm_val *a) {
  static const int whences[] = {SEEK_SET, SEEK_CUR, SEEK_END};
  uint32_t whence = A_I32(2);
  /* Asking where one is (0 from the current position) is a tell. */
  wasi_fd *e = wasi_fd_get(c->w, A_I32(0));
  bool tell = whence == 1 && A_I64(1) == 0 && e && (e->rights_base & WASI_RIGHT_FD_TELL);
  uint32_t err = wasi_data_fd(c, A_I32(0), tell ? WASI_RIGHT_FD_TELL : WASI_RIGHT_FD_SEEK, &e);
  if (err) return err;
  if (whence >= 3) return WASI_EINVAL;
  off_t pos = lseek(e->host_fd, (off_t)(int64_t)A_I64(1), whences[whence]);
  if (pos < 0) return wasi_errno_from_host(errno);
  return wasi_store_u64(c, A_I32(3), (uint64_t)pos) ? WASI_ESUCCESS : WASI_EFAULT;
}

uint32_t wasi_fd_tell(wasi_call *c, const twasm_val *a) {
  wasi_fd *e;
  uint32_t err = wasi_data_fd(c, A_I32(0), WASI_RIGHT_FD_TELL, &e);
  if (err) return err;
  off_t pos = lseek(e->host_fd, 0, SEEK_CUR);
  if (pos < 0) return wasi_errno_from_host(errno);
  return wasi_store_u64(c, A_I32(1), (uint64_t)pos) ? WASI_ESUCCESS : WASI_EFAULT;
}

uint32_t wasi_fd_close(wasi_call *c, const twasm_val *a) {
  wasi_fd *e = wasi_fd_get(c->w, A_I32(0));
  if (!e) return WASI_EBADF;
  wasi_fd_release(e);
  return WASI_ESUCCESS;
}

/* The entry moves: no host descriptor is duplicated or renumbered. */
uint32_t wasi_fd_renumber(wasi_call *c, const twasm_val *a) {
  uint32_t from = A_I32(0), to = A_I32(1);
  wasi_fd *src = wasi_fd_get(c->w, from), *dst = wasi_fd_get(c->w, to);
  if (!src || !dst) return WASI_EBADF;
  if (from == to) return WASI_ESUCCESS;
  wasi_fd_release(dst);
  *dst = *src;
  *src = (wasi_fd){.host_fd = -1};
  return WASI_ESUCCESS;
}

uint32_t wasi_fd_prestat_get(wasi_call *c, const twasm_val *a) {
  wasi_fd *e = wasi_fd_get(c->w, A_I32(0));
  uint8_t *out;
  if (!e || !e->preopen_name) return WASI_EBADF;
  if (!wasi_mem_range(c, A_I32(1), 8, &out)) return WASI_EFAULT;
  memset(out, 0, 8); /* tag 0: a directory */
  wasi_put_u32(out + 4, (uint32_t)strlen(e->preopen_name));
  return WASI_ESUCCESS;
}

uint32_t wasi_fd_prestat_dir_name(wasi_call *c, const twasm_val *a) {
  wasi_fd *e = wasi_fd_get(c->w, A_I32(0));
  uint32_t len = A_I32(2);
  uint8_t *out;
  if (!e || !e->preopen_name) return WASI_EBADF;
  size_t name_len = strlen(e->preopen_name);
  if (len < name_len) return WASI_ENAMETOOLONG;
  if (!wasi_mem_range(c, A_I32(1), name_len, &out)) return WASI_EFAULT;
  memcpy(out, e->preopen_name, name_len);
  return WASI_ESUCCESS;
}
