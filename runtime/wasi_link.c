/* wasi_link.c: the path calls that act on a name in a directory: links,
 * symlinks, renames and removals. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wasi_internal.h"

#define R(name) WASI_RIGHT(WASI_R_##name)

/* A name beneath guest directory fd: its parent (to close) and leaf, which
 * points into *path (to free). */
typedef struct at_name {
  int parent;
  const char *leaf;
  char *path;
} at_name;

static uint32_t name_open(wasi_call *c, uint32_t fd, uint64_t needed, uint32_t ptr, uint32_t len,
                          at_name *n) {
  wasi_fd *dir;
  uint32_t err = wasi_dir_path(c, fd, needed, ptr, len, &dir, &n->path);
  if (err) return err;
  err = wasi_resolve_parent(dir->host_fd, n->path, &n->parent, &n->leaf);
  if (err) free(n->path);
  return err;
}

static void name_close(at_name *n) {
  close(n->parent);
  free(n->path);
}

/* Links the file a followed path resolves to, via its /proc/self/fd magic
 * link: linkat would otherwise follow a symlink out of the tree. */
static uint32_t link_followed(wasi_call *c, const twasm_val *a, const at_name *to) {
  wasi_fd *dir;
  char *path, proc_path[64];
  int fd;
  uint32_t err = wasi_dir_path(c, A_I32(0), R(PATH_LINK_SOURCE), A_I32(2), A_I32(3), &dir, &path);
  if (err) return err;
  err = wasi_resolve_open(dir->host_fd, path, O_PATH, 0, true, &fd);
  free(path);
  if (err) return err;
  snprintf(proc_path, sizeof proc_path, "/proc/self/fd/%d", fd);
  err = wasi_host_result(linkat(AT_FDCWD, proc_path, to->parent, to->leaf, AT_SYMLINK_FOLLOW));
  close(fd);
  return err;
}

uint32_t wasi_path_link(wasi_call *c, const twasm_val *a) {
  at_name from, to;
  uint32_t err = name_open(c, A_I32(4), R(PATH_LINK_TARGET), A_I32(5), A_I32(6), &to);
  if (err) return err;
  if (A_I32(1) & WASI_LOOKUP_SYMLINK_FOLLOW) {
    err = link_followed(c, a, &to);
  } else if (!(err = name_open(c, A_I32(0), R(PATH_LINK_SOURCE), A_I32(2), A_I32(3), &from))) {
    err = wasi_host_result(linkat(from.parent, from.leaf, to.parent, to.leaf, 0));
    name_close(&from);
  }
  name_close(&to);
  return err;
}

/* "name/" is the directory a link leads to, never the link: readlinkat
 * would follow it out of the tree, so it is resolved here, beneath. */
static uint32_t readlink_of_directory(wasi_call *c, const twasm_val *a) {
  wasi_fd *dir;
  char *path;
  int fd;
  uint32_t err = wasi_dir_path(c, A_I32(0), R(PATH_READLINK), A_I32(1), A_I32(2), &dir, &path);
  if (err) return err;
  err = wasi_resolve_open(dir->host_fd, path, O_PATH | O_DIRECTORY, 0, true, &fd);
  free(path);
  if (err) return err;
  close(fd);
  return WASI_EINVAL;
}

uint32_t wasi_path_readlink(wasi_call *c, const twasm_val *a) {
  at_name n;
  uint8_t *buf, *guest_path;
  uint32_t cap = A_I32(4);
  if (!wasi_mem_range(c, A_I32(3), cap, &buf)) return WASI_EFAULT;
  if (A_I32(2) && wasi_mem_range(c, A_I32(1), A_I32(2), &guest_path) &&
      guest_path[A_I32(2) - 1] == '/')
    return readlink_of_directory(c, a);
  uint32_t err = name_open(c, A_I32(0), R(PATH_READLINK), A_I32(1), A_I32(2), &n);
  if (err) return err;
  /* Truncated to the buffer, as readlink does. */
  ssize_t len = readlinkat(n.parent, n.leaf, (char *)buf, cap);
  err = len < 0 ? wasi_errno_from_host(errno) : WASI_ESUCCESS;
  name_close(&n);
  if (err) return err;
  return wasi_store_u32(c, A_I32(5), (uint32_t)len) ? WASI_ESUCCESS : WASI_EFAULT;
}

static uint32_t unlink_name(wasi_call *c, const twasm_val *a, uint64_t needed, int flags) {
  at_name n;
  uint32_t err = name_open(c, A_I32(0), needed, A_I32(1), A_I32(2), &n);
  if (err) return err;
  err = wasi_host_result(unlinkat(n.parent, n.leaf, flags));
  name_close(&n);
  return err;
}

uint32_t wasi_path_remove_directory(wasi_call *c, const twasm_val *a) {
  return unlink_name(c, a, R(PATH_REMOVE_DIRECTORY), AT_REMOVEDIR);
}

uint32_t wasi_path_unlink_file(wasi_call *c, const twasm_val *a) {
  return unlink_name(c, a, R(PATH_UNLINK_FILE), 0);
}

uint32_t wasi_path_rename(wasi_call *c, const twasm_val *a) {
  at_name from, to;
  uint32_t err = name_open(c, A_I32(0), R(PATH_RENAME_SOURCE), A_I32(1), A_I32(2), &from);
  if (err) return err;
  if (!(err = name_open(c, A_I32(3), R(PATH_RENAME_TARGET), A_I32(4), A_I32(5), &to))) {
    err = wasi_host_result(renameat(from.parent, from.leaf, to.parent, to.leaf));
    name_close(&to);
  }
  name_close(&from);
  return err;
}

/* An absolute target could never be followed beneath a preopen; refusing
 * it also keeps host programs from being pointed outside by the guest. */
uint32_t wasi_path_symlink(wasi_call *c, const twasm_val *a) {
  char *target;
  at_name n;
  uint32_t err = wasi_mem_path(c, A_I32(0), A_I32(1), &target);
  if (err) return err;
  if (target[0] == '/') err = WASI_ENOTCAPABLE;
  else if (!(err = name_open(c, A_I32(2), R(PATH_SYMLINK), A_I32(3), A_I32(4), &n))) {
    err = wasi_host_result(symlinkat(target, n.parent, n.leaf));
    name_close(&n);
  }
  free(target);
  return err;
}
