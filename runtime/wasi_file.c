/* wasi_file.c: opening files beneath a directory descriptor, listing
 * directories, creating them, and file status by path. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wasi_internal.h"

#define WASI_DIRENT_SIZE 24u

#define R(name) WASI_RIGHT(WASI_R_##name)

uint32_t wasi_dir_path(wasi_call *c, uint32_t dir_fd, uint64_t needed, uint32_t ptr,
                       uint32_t len, wasi_fd **dir, char **path) {
  wasi_fd *e = wasi_fd_get(c->w, dir_fd);
  if (!e) return WASI_EBADF;
  if (e->filetype != WASI_FILETYPE_DIRECTORY) return WASI_ENOTDIR;
  if ((e->rights_base & needed) != needed) return WASI_ENOTCAPABLE;
  *dir = e;
  return wasi_mem_path(c, ptr, len, path);
}

/* Host open flags for path_open's oflags, fdflags and requested rights
 * (the access mode follows the rights, as wasi-libc computes them). */
static int open_flags(uint32_t oflags, uint32_t fdflags, uint64_t rights) {
  static const struct { uint32_t wasi; int host; } ofl[] = {
      {WASI_OFLAG_CREAT, O_CREAT}, {WASI_OFLAG_DIRECTORY, O_DIRECTORY},
      {WASI_OFLAG_EXCL, O_EXCL}, {WASI_OFLAG_TRUNC, O_TRUNC},
  }, fdfl[] = {
      {WASI_FDFLAG_APPEND, O_APPEND}, {WASI_FDFLAG_DSYNC, O_DSYNC},
      {WASI_FDFLAG_NONBLOCK, O_NONBLOCK}, {WASI_FDFLAG_RSYNC, O_RSYNC},
      {WASI_FDFLAG_SYNC, O_SYNC},
  };
  int flags = 0;
  for (size_t i = 0; i < sizeof ofl / sizeof ofl[0]; i++)
    if (oflags & ofl[i].wasi) flags |= ofl[i].host;
  for (size_t i = 0; i < sizeof fdfl / sizeof fdfl[0]; i++)
    if (fdflags & fdfl[i].wasi) flags |= fdfl[i].host;
  bool read = rights & (WASI_RIGHT_FD_READ | WASI_RIGHT_FD_READDIR);
  bool write = rights & (WASI_RIGHT_FD_DATASYNC | WASI_RIGHT_FD_WRITE | WASI_RIGHT_FD_ALLOCATE |
                         WASI_RIGHT_FD_FILESTAT_SET_SIZE);
  return flags | (read && write ? O_RDWR : write ? O_WRONLY : O_RDONLY);
}

/* A directory opens read-only unless the write right was asked for
 * (EISDIR then, as natively): whether the directory flag said so or it
 * was found to be one (the rights a preopen reports include some, such
 * as datasync, that open a file for writing). */
static uint32_t open_file(const wasi_fd *dir, const char *path, uint32_t oflags, int flags,
                          bool follow, bool write_asked, int *fd) {
  if ((oflags & WASI_OFLAG_DIRECTORY) && !write_asked) flags &= ~O_ACCMODE;
  /* Created files get 0666 less the umask, as a native program's would. */
  uint32_t err = wasi_resolve_open(dir->host_fd, path, flags, 0666, follow, fd);
  if (err == WASI_EISDIR && !write_asked && !(flags & (O_CREAT | O_TRUNC)))
    err = wasi_resolve_open(dir->host_fd, path, (flags & ~O_ACCMODE) | O_DIRECTORY, 0, follow, fd);
  return err;
}

/* The new descriptor's rights: what was asked for, as far as the
 * directory passes it on and the file's type allows. */
uint32_t wasi_path_open(wasi_call *c, const twasm_val *a) {
  wasi_fd *dir;
  char *path;
  uint8_t *out;
  uint32_t oflags = A_I32(4), fdflags = A_I32(7);
  if (oflags > 15 || fdflags > 31) return WASI_EINVAL;
  if (!wasi_mem_range(c, A_I32(8), 4, &out)) return WASI_EFAULT;
  uint64_t needed = R(PATH_OPEN) | (oflags & WASI_OFLAG_CREAT ? R(PATH_CREATE_FILE) : 0) |
                    (oflags & WASI_OFLAG_TRUNC ? R(PATH_FILESTAT_SET_SIZE) : 0);
  uint32_t err = wasi_dir_path(c, A_I32(0), needed, A_I32(2), A_I32(3), &dir, &path);
  if (err) return err;
  uint64_t base = A_I64(5) & dir->rights_inheriting, inheriting = A_I64(6) & dir->rights_inheriting;
  int fd;
  err = open_file(dir, path, oflags, open_flags(oflags, fdflags, base),
                  A_I32(1) & WASI_LOOKUP_SYMLINK_FOLLOW, base & R(FD_WRITE), &fd);
  free(path);
  if (err) return err;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    err = wasi_errno_from_host(errno);
    close(fd);
    return err;
  }
  uint8_t type = wasi_filetype_of(fd, st.st_mode);
  uint32_t n;
  if (!wasi_fd_add(c->w, fd, type, base & wasi_rights_of_type(type), inheriting, &n))
    return WASI_ENOMEM;
  c->w->fds[n].rsync = fdflags & WASI_FDFLAG_RSYNC;
  wasi_put_u32(out, n);
  return WASI_ESUCCESS;
}

static uint8_t dirent_type(DIR *d, const struct dirent *ent) {
  static const struct { unsigned char dt; uint8_t wasi; } types[] = {
      {DT_REG, WASI_FILETYPE_REGULAR_FILE}, {DT_DIR, WASI_FILETYPE_DIRECTORY},
      {DT_LNK, WASI_FILETYPE_SYMBOLIC_LINK}, {DT_CHR, WASI_FILETYPE_CHARACTER_DEVICE},
      {DT_BLK, WASI_FILETYPE_BLOCK_DEVICE}, {DT_SOCK, WASI_FILETYPE_SOCKET_STREAM},
  };
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (ent->d_type == types[i].dt) return types[i].wasi;
  struct stat st;
  if (ent->d_type == DT_UNKNOWN && fstatat(dirfd(d), ent->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    return wasi_filetype_of(-1, st.st_mode);
  return WASI_FILETYPE_UNKNOWN;
}

/* Copies as much of src as fits; a full buffer tells libc to come back
 * with a bigger one. */
static void put_clipped(uint8_t *buf, uint32_t cap, uint32_t *used, const void *src, uint32_t len) {
  uint32_t n = cap - *used < len ? cap - *used : len;
  memcpy(buf + *used, src, n);
  *used += n;
}

/* Cookies are entry positions: entry i's d_next is i + 1.  Each call
 * lists the directory afresh, so a cookie stays valid across calls. */
uint32_t wasi_fd_readdir(wasi_call *c, const twasm_val *a) {
  wasi_fd *e = wasi_fd_get(c->w, A_I32(0));
  uint32_t cap = A_I32(2);
  uint64_t cookie = A_I64(3);
  uint8_t *buf;
  if (!e) return WASI_EBADF;
  if (e->filetype != WASI_FILETYPE_DIRECTORY) return WASI_ENOTDIR;
  if (!(e->rights_base & R(FD_READDIR))) return WASI_ENOTCAPABLE;
  if (!wasi_mem_range(c, A_I32(1), cap, &buf)) return WASI_EFAULT;
  int fd = openat(e->host_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  if (!d) {
    uint32_t err = wasi_errno_from_host(errno);
    if (fd >= 0) close(fd);
    return err;
  }
  uint32_t used = 0;
  uint64_t index = 0;
  struct dirent *ent;
  errno = 0;
  while (used < cap && (ent = readdir(d))) {
    if (index++ < cookie) continue;
    uint8_t head[WASI_DIRENT_SIZE] = {0};
    uint32_t name_len = (uint32_t)strlen(ent->d_name);
    wasi_put_u64(head, index);
    wasi_put_u64(head + 8, (uint64_t)ent->d_ino);
    wasi_put_u32(head + 16, name_len);
    head[20] = dirent_type(d, ent);
    put_clipped(buf, cap, &used, head, WASI_DIRENT_SIZE);
    put_clipped(buf, cap, &used, ent->d_name, name_len);
  }
  uint32_t err = errno ? wasi_errno_from_host(errno) : WASI_ESUCCESS;
  closedir(d);
  if (err) return err;
  return wasi_store_u32(c, A_I32(4), used) ? WASI_ESUCCESS : WASI_EFAULT;
}

uint32_t wasi_path_create_directory(wasi_call *c, const twasm_val *a) {
  wasi_fd *dir;
  char *path;
  const char *leaf;
  int parent;
  uint32_t err = wasi_dir_path(c, A_I32(0), R(PATH_CREATE_DIRECTORY), A_I32(1), A_I32(2), &dir,
                               &path);
  if (err) return err;
  err = wasi_resolve_parent(dir->host_fd, path, &parent, &leaf);
  if (!err) {
    /* 0777 less the umask, as a native program's would. */
    if (mkdirat(parent, leaf, 0777) != 0) err = wasi_errno_from_host(errno);
    close(parent);
  }
  free(path);
  return err;
}

/* The file a path names, as an O_PATH descriptor: the link itself unless
 * symlinks are followed. */
static uint32_t open_path_only(wasi_call *c, const twasm_val *a, uint64_t needed,
                               uint32_t path_arg, int *fd) {
  wasi_fd *dir;
  char *path;
  uint32_t err = wasi_dir_path(c, A_I32(0), needed, A_I32(path_arg), A_I32(path_arg + 1), &dir,
                               &path);
  if (err) return err;
  err = wasi_resolve_open(dir->host_fd, path, O_PATH, 0, A_I32(1) & WASI_LOOKUP_SYMLINK_FOLLOW, fd);
  free(path);
  return err;
}

uint32_t wasi_path_filestat_get(wasi_call *c, const twasm_val *a) {
  int fd;
  struct stat st;
  uint32_t err = open_path_only(c, a, R(PATH_FILESTAT_GET), 2, &fd);
  if (err) return err;
  err = fstat(fd, &st) == 0 ? wasi_store_filestat(c, A_I32(4), fd, &st) : wasi_errno_from_host(errno);
  close(fd);
  return err;
}

/* Following: through /proc/self/fd, as utimensat cannot act on an O_PATH
 * descriptor itself and the magic link names exactly the file resolved
 * beneath.  Not following: on the name in its parent directory. */
static uint32_t set_times_at(wasi_call *c, const twasm_val *a, const struct timespec ts[2]) {
  wasi_fd *dir;
  char *path;
  const char *leaf;
  int parent;
  uint32_t err = wasi_dir_path(c, A_I32(0), R(PATH_FILESTAT_SET_TIMES), A_I32(2), A_I32(3), &dir,
                               &path);
  if (err) return err;
  err = wasi_resolve_parent(dir->host_fd, path, &parent, &leaf);
  if (!err) {
    if (utimensat(parent, leaf, ts, AT_SYMLINK_NOFOLLOW) != 0) err = wasi_errno_from_host(errno);
    close(parent);
  }
  free(path);
  return err;
}

uint32_t wasi_path_filestat_set_times(wasi_call *c, const twasm_val *a) {
  struct timespec ts[2];
  char proc_path[64];
  int fd;
  uint32_t err = wasi_timespecs(A_I64(4), A_I64(5), A_I32(6), ts);
  if (err) return err;
  /* A trailing slash names the directory a link leads to: followed. */
  uint8_t *guest_path;
  bool slash = A_I32(3) && wasi_mem_range(c, A_I32(2), A_I32(3), &guest_path) &&
               guest_path[A_I32(3) - 1] == '/';
  if (!(A_I32(1) & WASI_LOOKUP_SYMLINK_FOLLOW) && !slash) return set_times_at(c, a, ts);
  err = open_path_only(c, a, R(PATH_FILESTAT_SET_TIMES), 2, &fd);
  if (err) return err;
  snprintf(proc_path, sizeof proc_path, "/proc/self/fd/%d", fd);
  if (utimensat(AT_FDCWD, proc_path, ts, 0) != 0) err = wasi_errno_from_host(errno);
  close(fd);
  return err;
}
