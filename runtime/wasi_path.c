/* wasi_path.c: resolving guest paths beneath a preopened directory, with
 * no way out through "..", absolute paths or symlinks. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "wasi_internal.h"

/* Linux's own limit on symlinks followed in one lookup. */
#define WASI_MAX_SYMLINKS 40
#define WASI_OPENAT2_RETRIES 8

wasi_resolve_mode wasi_resolve = WASI_RESOLVE_AUTO;
static bool wasi_openat2_missing;

/* 0 with *out set, or a host errno; ENOSYS when the kernel lacks openat2. */
static int open_beneath_kernel(int dir_fd, const char *path, int flags, mode_t mode, int *out) {
  struct open_how how = {
      .flags = (uint64_t)(flags | O_CLOEXEC),
      .mode = (flags & O_CREAT) ? mode : 0,
      .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
  };
  for (int i = 0; i < WASI_OPENAT2_RETRIES; i++) {
    long fd = syscall(SYS_openat2, dir_fd, path, &how, sizeof how);
    if (fd >= 0) {
      *out = (int)fd;
      return 0;
    }
    /* EAGAIN: a concurrent rename made ".." ambiguous; try again. */
    if (errno != EAGAIN && errno != EINTR) return errno;
  }
  return EAGAIN;
}

/* ---- the walk, for kernels without openat2 ------------------------------ */

typedef struct walk {
  int base;        /* the preopen: never closed, never left */
  int *stack;      /* directories entered beneath base */
  size_t depth, cap;
  unsigned links;  /* symlinks expanded so far */
} walk;

static int walk_cur(const walk *k) { return k->depth ? k->stack[k->depth - 1] : k->base; }

static void walk_pop_all(walk *k) {
  while (k->depth) close(k->stack[--k->depth]);
  free(k->stack);
}

static uint32_t walk_push(walk *k, int fd) {
  if (k->depth == k->cap) {
    size_t cap = k->cap ? 2 * k->cap : 8;
    int *grown = realloc(k->stack, cap * sizeof *grown);
    if (!grown) {
      close(fd);
      return WASI_ENOMEM;
    }
    k->stack = grown;
    k->cap = cap;
  }
  k->stack[k->depth++] = fd;
  return WASI_ESUCCESS;
}

/* Replaces *pending with the link's target followed by rest. */
static uint32_t walk_expand(walk *k, const char *name, const char *rest, char **pending) {
  char target[4096];
  if (++k->links > WASI_MAX_SYMLINKS) return WASI_ELOOP;
  ssize_t n = readlinkat(walk_cur(k), name, target, sizeof target - 1);
  if (n < 0) return wasi_errno_from_host(errno);
  if (n == 0) return WASI_ENOENT;
  if (target[0] == '/') return WASI_ENOTCAPABLE;
  size_t rest_len = strlen(rest);
  char *next = malloc((size_t)n + rest_len + 2);
  if (!next) return WASI_ENOMEM;
  memcpy(next, target, (size_t)n);
  next[n] = '/';
  memcpy(next + n + 1, rest, rest_len + 1);
  free(*pending);
  *pending = next;
  return WASI_ESUCCESS;
}

static bool is_symlink(int dir, const char *name) {
  struct stat st;
  return fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

/* One step on component name: enter it, leave it (".."), expand it, or
 * stop on it as the leaf (*done).  rest is what follows it. */
static uint32_t walk_step(walk *k, char *name, const char *rest, bool follow_last,
                          char **pending, bool *done) {
  bool last = *rest == 0;
  if (!strcmp(name, ".") || !strcmp(name, "..")) {
    if (name[1] == '.') {
      if (!k->depth) return WASI_ENOTCAPABLE;
      close(k->stack[--k->depth]);
    }
    *done = last;
    return WASI_ESUCCESS;
  }
  if (last && (!follow_last || !is_symlink(walk_cur(k), name))) {
    *done = true;
    return WASI_ESUCCESS;
  }
  if (last) return walk_expand(k, name, rest, pending);
  int fd = openat(walk_cur(k), name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) return walk_push(k, fd);
  int err = errno;
  if ((err == ENOTDIR || err == ELOOP) && is_symlink(walk_cur(k), name))
    return walk_expand(k, name, rest, pending);
  return wasi_errno_from_host(err);
}

/* Resolves all of path but its last component; *parent is a new
 * descriptor, *leaf a heap string ("." when path ends in "." or ".."). */
static uint32_t walk_path(int dir_fd, const char *path, bool follow_last, int *parent, char **leaf) {
  if (path[0] == '/') return WASI_ENOTCAPABLE;
  if (path[0] == 0) return WASI_ENOENT;
  walk k = {.base = dir_fd};
  char *pending = strdup(path), *name = NULL;
  uint32_t err = pending ? WASI_ESUCCESS : WASI_ENOMEM;
  bool done = false;
  for (size_t pos = 0; !err && !done;) {
    while (pending[pos] == '/') pos++;
    size_t end = pos;
    while (pending[end] && pending[end] != '/') end++;
    size_t next = end;
    while (pending[next] == '/') next++;
    free(name);
    name = strndup(pending + pos, end - pos);
    if (!name) {
      err = WASI_ENOMEM;
      break;
    }
    if (!name[0]) { /* a trailing slash: the directory itself */
      strcpy(name, ".");
      done = true;
      break;
    }
    char *old = pending;
    err = walk_step(&k, name, pending + next, follow_last, &pending, &done);
    pos = pending != old ? 0 : next;
  }
  free(pending);
  if (!err && name && !strcmp(name, "..")) strcpy(name, ".");
  int fd = err ? -1 : fcntl(walk_cur(&k), F_DUPFD_CLOEXEC, 0);
  if (!err && fd < 0) err = wasi_errno_from_host(errno);
  walk_pop_all(&k);
  if (err) {
    free(name);
    return err;
  }
  *parent = fd;
  *leaf = name;
  return WASI_ESUCCESS;
}

static uint32_t open_beneath_walk(int dir_fd, const char *path, int flags, mode_t mode,
                                  bool follow, int *out) {
  int parent;
  char *leaf;
  /* "name/" is a directory, through a link if name is one (the walk
   * follows it, beneath): as the kernel reads a trailing slash. */
  size_t len = strlen(path);
  bool dir_only = len && path[len - 1] == '/';
  uint32_t err = walk_path(dir_fd, path, follow || dir_only, &parent, &leaf);
  if (err) return err;
  if (dir_only) flags |= O_DIRECTORY;
  /* O_NOFOLLOW: the walk expanded the link it was asked to follow; one
   * that appears here since then is not followed out of the tree. */
  int fd = openat(parent, leaf, flags | O_NOFOLLOW | O_CLOEXEC, mode);
  err = fd < 0 ? wasi_errno_from_host(errno) : WASI_ESUCCESS;
  close(parent);
  free(leaf);
  if (!err) *out = fd;
  return err;
}

uint32_t wasi_resolve_open(int dir_fd, const char *path, int flags, mode_t mode, bool follow,
                           int *out_fd) {
  if (!follow) flags |= O_NOFOLLOW;
  if (wasi_resolve == WASI_RESOLVE_AUTO && !wasi_openat2_missing) {
    int err = open_beneath_kernel(dir_fd, path, flags, mode, out_fd);
    if (err != ENOSYS) return err == EXDEV ? WASI_ENOTCAPABLE : wasi_errno_from_host(err);
    wasi_openat2_missing = true;
  }
  return open_beneath_walk(dir_fd, path, flags, mode, follow, out_fd);
}

uint32_t wasi_resolve_parent(int dir_fd, char *path, int *parent_fd, const char **leaf) {
  size_t len = strlen(path), end = len, start;
  if (!len) return WASI_ENOENT;
  if (path[0] == '/') return WASI_ENOTCAPABLE;
  while (end && path[end - 1] == '/') end--;
  for (start = end; start && path[start - 1] != '/'; start--) {
  }
  /* The leaf keeps its trailing slashes: the kernel then demands a
   * directory, as it would of a native program (unlink "file/" is
   * ENOTDIR, link to "new/" ENOENT). */
  const char *name = path + start, *dir = ".";
  size_t name_len = end - start;
  if ((name_len == 1 && name[0] == '.') || (name_len == 2 && name[0] == '.' && name[1] == '.')) {
    /* The directory named by the whole path, so ".." is checked too. */
    dir = path;
    name = ".";
  } else if (start) {
    path[start - 1] = 0;
    dir = path;
  }
  uint32_t err = wasi_resolve_open(dir_fd, dir, O_PATH | O_DIRECTORY, 0, true, parent_fd);
  if (!err) *leaf = name;
  return err;
}
