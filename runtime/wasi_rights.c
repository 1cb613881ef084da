/* wasi_rights.c: which rights a descriptor of each file type can hold,
 * and the check every call makes before it acts on a descriptor. */
#include <sys/stat.h>

#include "wasi_internal.h"

#define R(name) WASI_RIGHT(WASI_R_##name)

/* What a regular file can do: its data and its own status. */
#define FILE_RIGHTS                                                                          \
  (R(FD_DATASYNC) | R(FD_READ) | R(FD_SEEK) | R(FD_FDSTAT_SET_FLAGS) | R(FD_SYNC) |          \
   R(FD_TELL) | R(FD_WRITE) | R(FD_ADVISE) | R(FD_ALLOCATE) | R(FD_FILESTAT_GET) |           \
   R(FD_FILESTAT_SET_SIZE) | R(FD_FILESTAT_SET_TIMES) | R(POLL_FD_READWRITE))

/* What a directory can do: the path calls beneath it, listing, its own
 * status; no data, so no read, write, seek, tell, allocate or size. */
#define DIRECTORY_RIGHTS                                                                     \
  (R(FD_DATASYNC) | R(FD_FDSTAT_SET_FLAGS) | R(FD_SYNC) |                                   \
   R(PATH_CREATE_DIRECTORY) | R(PATH_CREATE_FILE) | R(PATH_LINK_SOURCE) |                    \
   R(PATH_LINK_TARGET) | R(PATH_OPEN) | R(FD_READDIR) | R(PATH_READLINK) |                   \
   R(PATH_RENAME_SOURCE) | R(PATH_RENAME_TARGET) | R(PATH_FILESTAT_GET) |                    \
   R(PATH_FILESTAT_SET_SIZE) | R(PATH_FILESTAT_SET_TIMES) | R(FD_FILESTAT_GET) |             \
   R(FD_FILESTAT_SET_TIMES) | R(PATH_SYMLINK) | R(PATH_REMOVE_DIRECTORY) |                   \
   R(PATH_UNLINK_FILE) | R(POLL_FD_READWRITE))

/* A stream has no position: without seek and tell wasi-libc's isatty()
 * takes a character device for a terminal. */
#define STREAM_RIGHTS (FILE_RIGHTS & ~(R(FD_SEEK) | R(FD_TELL) | R(FD_ALLOCATE)))
#define SOCKET_RIGHTS (STREAM_RIGHTS | R(SOCK_SHUTDOWN) | R(SOCK_ACCEPT))

uint64_t wasi_rights_of_type(uint8_t filetype) {
  static const uint64_t by_type[] = {
      [WASI_FILETYPE_UNKNOWN] = STREAM_RIGHTS,
      [WASI_FILETYPE_BLOCK_DEVICE] = FILE_RIGHTS,
      [WASI_FILETYPE_CHARACTER_DEVICE] = STREAM_RIGHTS,
      [WASI_FILETYPE_DIRECTORY] = DIRECTORY_RIGHTS,
      [WASI_FILETYPE_REGULAR_FILE] = FILE_RIGHTS,
      [WASI_FILETYPE_SOCKET_DGRAM] = SOCKET_RIGHTS,
      [WASI_FILETYPE_SOCKET_STREAM] = SOCKET_RIGHTS,
      [WASI_FILETYPE_SYMBOLIC_LINK] = 0,
  };
  return filetype < sizeof by_type / sizeof by_type[0] ? by_type[filetype] : 0;
}

uint64_t wasi_rights_inherited_by_dirs(void) { return DIRECTORY_RIGHTS | FILE_RIGHTS; }

uint32_t wasi_fd_use(wasi_call *c, uint32_t fd, uint64_t needed, wasi_fd **out) {
  wasi_fd *e = wasi_fd_get(c->w, fd);
  if (!e) return WASI_EBADF;
  *out = e;
  return (e->rights_base & needed) == needed ? WASI_ESUCCESS : WASI_ENOTCAPABLE;
}

uint32_t wasi_data_fd(wasi_call *c, uint32_t fd, uint64_t needed, wasi_fd **out) {
  wasi_fd *e = wasi_fd_get(c->w, fd);
  if (!e) return WASI_EBADF;
  if (e->filetype == WASI_FILETYPE_DIRECTORY) return WASI_EISDIR;
  return wasi_fd_use(c, fd, needed, out);
}
