/* wasi_internal.h: the WASI context, descriptor table, guest-memory access
 * and sandboxed path resolution shared by the runtime's wasi_*.c files. */
#ifndef WASI_INTERNAL_H
#define WASI_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>

#include "twasm_wasi.h"

/* ---- WASI preview 1 constants (witx numbering, not the host's) --------- */

enum {
  WASI_ESUCCESS = 0, WASI_E2BIG = 1, WASI_EACCES = 2, WASI_EADDRINUSE = 3,
  WASI_EADDRNOTAVAIL = 4, WASI_EAFNOSUPPORT = 5, WASI_EAGAIN = 6,
  WASI_EALREADY = 7, WASI_EBADF = 8, WASI_EBADMSG = 9, WASI_EBUSY = 10,
  WASI_ECANCELED = 11, WASI_ECHILD = 12, WASI_ECONNABORTED = 13,
  WASI_ECONNREFUSED = 14, WASI_ECONNRESET = 15, WASI_EDEADLK = 16,
  WASI_EDESTADDRREQ = 17, WASI_EDOM = 18, WASI_EDQUOT = 19, WASI_EEXIST = 20,
  WASI_EFAULT = 21, WASI_EFBIG = 22, WASI_EHOSTUNREACH = 23, WASI_EIDRM = 24,
  WASI_EILSEQ = 25, WASI_EINPROGRESS = 26, WASI_EINTR = 27, WASI_EINVAL = 28,
  WASI_EIO = 29, WASI_EISCONN = 30, WASI_EISDIR = 31, WASI_ELOOP = 32,
  WASI_EMFILE = 33, WASI_EMLINK = 34, WASI_EMSGSIZE = 35, WASI_EMULTIHOP = 36,
  WASI_ENAMETOOLONG = 37, WASI_ENETDOWN = 38, WASI_ENETRESET = 39,
  WASI_ENETUNREACH = 40, WASI_ENFILE = 41, WASI_ENOBUFS = 42, WASI_ENODEV = 43,
  WASI_ENOENT = 44, WASI_ENOEXEC = 45, WASI_ENOLCK = 46, WASI_ENOLINK = 47,
  WASI_ENOMEM = 48, WASI_ENOMSG = 49, WASI_ENOPROTOOPT = 50, WASI_ENOSPC = 51,
  WASI_ENOSYS = 52, WASI_ENOTCONN = 53, WASI_ENOTDIR = 54, WASI_ENOTEMPTY = 55,
  WASI_ENOTRECOVERABLE = 56, WASI_ENOTSOCK = 57, WASI_ENOTSUP = 58,
  WASI_ENOTTY = 59, WASI_ENXIO = 60, WASI_EOVERFLOW = 61, WASI_EOWNERDEAD = 62,
  WASI_EPERM = 63, WASI_EPIPE = 64, WASI_EPROTO = 65, WASI_EPROTONOSUPPORT = 66,
  WASI_EPROTOTYPE = 67, WASI_ERANGE = 68, WASI_EROFS = 69, WASI_ESPIPE = 70,
  WASI_ESRCH = 71, WASI_ESTALE = 72, WASI_ETIMEDOUT = 73, WASI_ETXTBSY = 74,
  WASI_EXDEV = 75, WASI_ENOTCAPABLE = 76,
};

enum {
  WASI_FILETYPE_UNKNOWN = 0, WASI_FILETYPE_BLOCK_DEVICE = 1,
  WASI_FILETYPE_CHARACTER_DEVICE = 2, WASI_FILETYPE_DIRECTORY = 3,
  WASI_FILETYPE_REGULAR_FILE = 4, WASI_FILETYPE_SOCKET_DGRAM = 5,
  WASI_FILETYPE_SOCKET_STREAM = 6, WASI_FILETYPE_SYMBOLIC_LINK = 7,
};

enum { WASI_CLOCK_REALTIME = 0, WASI_CLOCK_MONOTONIC = 1,
       WASI_CLOCK_PROCESS_CPUTIME = 2, WASI_CLOCK_THREAD_CPUTIME = 3 };

enum { WASI_FDFLAG_APPEND = 1, WASI_FDFLAG_DSYNC = 2, WASI_FDFLAG_NONBLOCK = 4,
       WASI_FDFLAG_RSYNC = 8, WASI_FDFLAG_SYNC = 16 };
enum { WASI_OFLAG_CREAT = 1, WASI_OFLAG_DIRECTORY = 2, WASI_OFLAG_EXCL = 4,
       WASI_OFLAG_TRUNC = 8 };
enum { WASI_LOOKUP_SYMLINK_FOLLOW = 1 };
enum { WASI_FST_ATIM = 1, WASI_FST_ATIM_NOW = 2, WASI_FST_MTIM = 4,
       WASI_FST_MTIM_NOW = 8 };

#define WASI_RIGHT(bit) ((uint64_t)1 << (bit))
enum {
  WASI_R_FD_DATASYNC, WASI_R_FD_READ, WASI_R_FD_SEEK, WASI_R_FD_FDSTAT_SET_FLAGS,
  WASI_R_FD_SYNC, WASI_R_FD_TELL, WASI_R_FD_WRITE, WASI_R_FD_ADVISE, WASI_R_FD_ALLOCATE,
  WASI_R_PATH_CREATE_DIRECTORY, WASI_R_PATH_CREATE_FILE, WASI_R_PATH_LINK_SOURCE,
  WASI_R_PATH_LINK_TARGET, WASI_R_PATH_OPEN, WASI_R_FD_READDIR, WASI_R_PATH_READLINK,
  WASI_R_PATH_RENAME_SOURCE, WASI_R_PATH_RENAME_TARGET, WASI_R_PATH_FILESTAT_GET,
  WASI_R_PATH_FILESTAT_SET_SIZE, WASI_R_PATH_FILESTAT_SET_TIMES, WASI_R_FD_FILESTAT_GET,
  WASI_R_FD_FILESTAT_SET_SIZE, WASI_R_FD_FILESTAT_SET_TIMES, WASI_R_PATH_SYMLINK,
  WASI_R_PATH_REMOVE_DIRECTORY, WASI_R_PATH_UNLINK_FILE, WASI_R_POLL_FD_READWRITE,
  WASI_R_SOCK_SHUTDOWN, WASI_R_SOCK_ACCEPT, WASI_R_COUNT
};
#define WASI_RIGHT_FD_DATASYNC WASI_RIGHT(WASI_R_FD_DATASYNC)
#define WASI_RIGHT_FD_READ WASI_RIGHT(WASI_R_FD_READ)
#define WASI_RIGHT_FD_SEEK WASI_RIGHT(WASI_R_FD_SEEK)
#define WASI_RIGHT_FD_TELL WASI_RIGHT(WASI_R_FD_TELL)
#define WASI_RIGHT_FD_WRITE WASI_RIGHT(WASI_R_FD_WRITE)
#define WASI_RIGHT_FD_ALLOCATE WASI_RIGHT(WASI_R_FD_ALLOCATE)
#define WASI_RIGHT_FD_READDIR WASI_RIGHT(WASI_R_FD_READDIR)
#define WASI_RIGHT_FD_FILESTAT_SET_SIZE WASI_RIGHT(WASI_R_FD_FILESTAT_SET_SIZE)
#define WASI_RIGHT_PATH_OPEN WASI_RIGHT(WASI_R_PATH_OPEN)
#define WASI_RIGHT_PATH_CREATE_FILE WASI_RIGHT(WASI_R_PATH_CREATE_FILE)
#define WASI_RIGHT_PATH_FILESTAT_SET_SIZE WASI_RIGHT(WASI_R_PATH_FILESTAT_SET_SIZE)
#define WASI_RIGHTS_ALL (WASI_RIGHT(WASI_R_COUNT) - 1)

/* A host function's result that is not an errno: the call traps (proc_exit
 * or a host failure), with the trap already filled. */
#define WASI_UNWIND UINT32_MAX

/* ---- the context and its descriptors (wasi_ctx.c) ---------------------- */

typedef struct wasi_fd {
  int host_fd;            /* -1: the slot is free */
  bool owned;             /* closed with the entry (not the host's stdio) */
  uint8_t filetype;       /* WASI_FILETYPE_* at open time */
  uint16_t rsync;         /* WASI_FDFLAG_RSYNC as asked: Linux has no flag */
  uint64_t rights_base, rights_inheriting;
  char *preopen_name;     /* the guest's name of a preopened directory */
} wasi_fd;

struct twasm_wasi {
  char **args, **env;
  uint32_t nargs, nenv;
  wasi_fd *fds;
  uint32_t nfds;
  twasm_func **funcs;     /* one host function per WASI import, made lazily */
  struct wasi_binding *bindings;
};

/* The descriptor fd, or NULL (EBADF) when it is not open. */
wasi_fd *wasi_fd_get(twasm_wasi *w, uint32_t fd);
/* Takes ownership of host_fd under the lowest free number; false (host_fd
 * closed) when out of memory. */
bool wasi_fd_add(twasm_wasi *w, int host_fd, uint8_t filetype, uint64_t base,
                 uint64_t inheriting, uint32_t *out);
void wasi_fd_release(wasi_fd *e);
/* The WASI file type of a host descriptor (sockets by their type). */
uint8_t wasi_filetype_of(int host_fd, mode_t mode);
/* Deletes the host functions twasm_wasi_imports made (wasi_imports.c). */
void wasi_funcs_free(twasm_wasi *w);

/* ---- rights (wasi_rights.c) --------------------------------------------- */

/* The rights a descriptor of a WASI file type can hold at most. */
uint64_t wasi_rights_of_type(uint8_t filetype);
/* What a preopened directory passes on: directory and file rights. */
uint64_t wasi_rights_inherited_by_dirs(void);

/* ---- errno mapping (wasi_errno.c) -------------------------------------- */

uint32_t wasi_errno_from_host(int host_errno);
/* For host calls that return 0 or -1 with errno. */
uint32_t wasi_host_result(int rc);

/* ---- one host call: guest memory, checked (wasi_mem.c) ----------------- */

typedef struct wasi_call {
  twasm_wasi *w;
  uint8_t *mem;           /* memory 0 of the caller, re-read at every call */
  uint64_t mem_size;
  twasm_trap *trap;
} wasi_call;

/* Each returns false when [ptr, ptr+len) leaves the memory (EFAULT). */
bool wasi_mem_range(const wasi_call *c, uint32_t ptr, uint64_t len, uint8_t **out);
bool wasi_store_u8(const wasi_call *c, uint32_t ptr, uint8_t v);
bool wasi_store_u16(const wasi_call *c, uint32_t ptr, uint16_t v);
bool wasi_store_u32(const wasi_call *c, uint32_t ptr, uint32_t v);
bool wasi_store_u64(const wasi_call *c, uint32_t ptr, uint64_t v);
bool wasi_load_u32(const wasi_call *c, uint32_t ptr, uint32_t *v);
bool wasi_load_u64(const wasi_call *c, uint32_t ptr, uint64_t *v);
void wasi_put_u16(uint8_t *p, uint16_t v);
void wasi_put_u32(uint8_t *p, uint32_t v);
void wasi_put_u64(uint8_t *p, uint64_t v);

/* Host iovecs for a guest iovec array; *out is heap memory the caller
 * frees.  Returns a WASI errno. */
uint32_t wasi_mem_iovecs(const wasi_call *c, uint32_t iovs, uint32_t n,
                         struct iovec **out);
/* A NUL-terminated heap copy of a guest path (the caller frees). */
uint32_t wasi_mem_path(const wasi_call *c, uint32_t ptr, uint32_t len, char **out);

/* ---- sandboxed paths (wasi_path.c) -------------------------------------- */

/* How paths are resolved beneath a directory: openat2(RESOLVE_BENEATH)
 * where the kernel has it, else a component walk.  Tests force the walk. */
typedef enum { WASI_RESOLVE_AUTO, WASI_RESOLVE_WALK } wasi_resolve_mode;
extern wasi_resolve_mode wasi_resolve;

/* Opens path beneath dir_fd with host open flags (O_NOFOLLOW is added for
 * the last component unless follow).  Returns a WASI errno; an escape is
 * ENOTCAPABLE. */
uint32_t wasi_resolve_open(int dir_fd, const char *path, int flags, mode_t mode,
                           bool follow, int *out_fd);
/* The directory holding path's last component, beneath dir_fd, and that
 * component with any trailing slashes (a pointer into path, which is
 * modified): for the *at() calls that act on a name rather than a file. */
uint32_t wasi_resolve_parent(int dir_fd, char *path, int *parent_fd, const char **leaf);

/* The descriptor fd for a call that needs the base rights `needed`:
 * EBADF when it is not open, ENOTCAPABLE when a right is missing. */
uint32_t wasi_fd_use(wasi_call *c, uint32_t fd, uint64_t needed, wasi_fd **out);
/* The same for calls on a file's data: EISDIR for a directory first. */
uint32_t wasi_data_fd(wasi_call *c, uint32_t fd, uint64_t needed, wasi_fd **out);

/* ---- the functions, by family ------------------------------------------ */

/* A host function's arguments, as the unsigned WASI types. */
#define A_I32(i) ((uint32_t)a[i].of.i32)
#define A_I64(i) ((uint64_t)a[i].of.i64)

typedef uint32_t (*wasi_impl)(wasi_call *c, const twasm_val *args);

#define WASI_DECL(name) uint32_t wasi_##name(wasi_call *c, const twasm_val *a)
/* wasi_proc.c */
WASI_DECL(args_get); WASI_DECL(args_sizes_get); WASI_DECL(environ_get);
WASI_DECL(environ_sizes_get); WASI_DECL(clock_res_get); WASI_DECL(clock_time_get);
WASI_DECL(proc_exit); WASI_DECL(proc_raise); WASI_DECL(sched_yield);
WASI_DECL(random_get);
/* wasi_fd.c */
WASI_DECL(fd_close); WASI_DECL(fd_read); WASI_DECL(fd_write); WASI_DECL(fd_pread);
WASI_DECL(fd_pwrite); WASI_DECL(fd_seek); WASI_DECL(fd_tell); WASI_DECL(fd_renumber);
WASI_DECL(fd_prestat_get); WASI_DECL(fd_prestat_dir_name);
/* wasi_fdstat.c */
WASI_DECL(fd_advise); WASI_DECL(fd_allocate); WASI_DECL(fd_datasync); WASI_DECL(fd_sync);
WASI_DECL(fd_fdstat_get); WASI_DECL(fd_fdstat_set_flags); WASI_DECL(fd_fdstat_set_rights);
WASI_DECL(fd_filestat_get); WASI_DECL(fd_filestat_set_size);
WASI_DECL(fd_filestat_set_times);
/* wasi_file.c */
WASI_DECL(path_open); WASI_DECL(fd_readdir); WASI_DECL(path_create_directory);
WASI_DECL(path_filestat_get); WASI_DECL(path_filestat_set_times);
/* wasi_link.c */
WASI_DECL(path_link); WASI_DECL(path_readlink); WASI_DECL(path_remove_directory);
WASI_DECL(path_rename); WASI_DECL(path_symlink); WASI_DECL(path_unlink_file);
/* wasi_poll.c */
WASI_DECL(poll_oneoff); WASI_DECL(sock_accept); WASI_DECL(sock_recv);
WASI_DECL(sock_send); WASI_DECL(sock_shutdown);
#undef WASI_DECL

/* The directory descriptor dir_fd (ENOTDIR when it is not one,
 * ENOTCAPABLE without the base rights `needed`) and a heap copy of the
 * guest path at ptr/len: the start of every path_* call. */
uint32_t wasi_dir_path(wasi_call *c, uint32_t dir_fd, uint64_t needed, uint32_t ptr,
                       uint32_t len, wasi_fd **dir, char **path);

/* Shared by fd_filestat_get and path_filestat_get: a WASI filestat. */
uint32_t wasi_store_filestat(const wasi_call *c, uint32_t ptr, int host_fd,
                             const struct stat *st);
/* Host timespecs for WASI (atim, mtim, fst_flags); EINVAL for a clash. */
uint32_t wasi_timespecs(uint64_t atim, uint64_t mtim, uint32_t fst, struct timespec ts[2]);

#endif
