/* wasi_ctx.c: the WASI context: arguments, environment, preopens and the
 * guest's descriptor table. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wasi_internal.h"

static char **copy_strings(char *const *src, uint32_t n) {
  char **out = calloc(n + 1u, sizeof *out);
  if (!out) return NULL;
  for (uint32_t i = 0; i < n; i++) {
    out[i] = strdup(src[i]);
    if (!out[i]) {
      while (i) free(out[--i]);
      free(out);
      return NULL;
    }
  }
  return out;
}

static void free_strings(char **s, uint32_t n) {
  if (!s) return;
  for (uint32_t i = 0; i < n; i++) free(s[i]);
  free(s);
}

uint8_t wasi_filetype_of(int host_fd, mode_t mode) {
  if (S_ISREG(mode)) return WASI_FILETYPE_REGULAR_FILE;
  if (S_ISDIR(mode)) return WASI_FILETYPE_DIRECTORY;
  if (S_ISCHR(mode)) return WASI_FILETYPE_CHARACTER_DEVICE;
  if (S_ISBLK(mode)) return WASI_FILETYPE_BLOCK_DEVICE;
  if (S_ISLNK(mode)) return WASI_FILETYPE_SYMBOLIC_LINK;
  if (S_ISSOCK(mode)) {
    int type = 0;
    socklen_t len = sizeof type;
    if (host_fd >= 0 && getsockopt(host_fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
        type == SOCK_DGRAM)
      return WASI_FILETYPE_SOCKET_DGRAM;
    return WASI_FILETYPE_SOCKET_STREAM;
  }
  return WASI_FILETYPE_UNKNOWN;
}

static bool add_stdio(twasm_wasi *w) {
  for (int fd = 0; fd < 3; fd++) {
    struct stat st;
    uint8_t type = fstat(fd, &st) == 0 ? wasi_filetype_of(fd, st.st_mode) : WASI_FILETYPE_UNKNOWN;
    uint32_t n;
    /* A closed host stream stays a (failing) descriptor so that the guest's
     * numbering matches the host's. */
    /* What a stream can do; a listening socket passes it on to accepted ones. */
    uint64_t rights = wasi_rights_of_type(type);
    if (!wasi_fd_add(w, fd, type, rights, rights, &n)) return false;
    w->fds[n].owned = false;
  }
  return true;
}

twasm_wasi *twasm_wasi_new(int argc, char *const *argv, char *const *envp) {
  twasm_wasi *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  uint32_t nenv = 0;
  while (envp && envp[nenv]) nenv++;
  w->nargs = argc > 0 ? (uint32_t)argc : 0;
  w->nenv = nenv;
  w->args = copy_strings(argv, w->nargs);
  w->env = copy_strings(envp, nenv);
  if (!w->args || !w->env || !add_stdio(w)) {
    twasm_wasi_delete(w);
    return NULL;
  }
  return w;
}

bool twasm_wasi_add_preopen(twasm_wasi *w, const char *host_dir, const char *guest_dir) {
  int fd = open(host_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  char *name = strdup(guest_dir ? guest_dir : host_dir);
  uint32_t n;
  /* The sandbox is the directory, not the rights: it may do all a
   * directory can, and pass on all a directory or file can, so that what
   * the guest opens beneath gets what it asks for. */
  if (!name || !wasi_fd_add(w, fd, WASI_FILETYPE_DIRECTORY,
                            wasi_rights_of_type(WASI_FILETYPE_DIRECTORY),
                            wasi_rights_inherited_by_dirs(), &n)) {
    free(name);
    errno = ENOMEM;
    return false;
  }
  w->fds[n].preopen_name = name;
  return true;
}

void twasm_wasi_delete(twasm_wasi *w) {
  if (!w) return;
  for (uint32_t i = 0; i < w->nfds; i++) wasi_fd_release(&w->fds[i]);
  free(w->fds);
  wasi_funcs_free(w);
  free_strings(w->args, w->nargs);
  free_strings(w->env, w->nenv);
  free(w);
}

wasi_fd *wasi_fd_get(twasm_wasi *w, uint32_t fd) {
  if (fd >= w->nfds || w->fds[fd].host_fd < 0) return NULL;
  return &w->fds[fd];
}

bool wasi_fd_add(twasm_wasi *w, int host_fd, uint8_t filetype, uint64_t base,
                 uint64_t inheriting, uint32_t *out) {
  uint32_t n = 0;
  while (n < w->nfds && w->fds[n].host_fd >= 0) n++;
  if (n == w->nfds) {
    uint32_t cap = w->nfds ? w->nfds * 2 : 8;
    wasi_fd *grown = realloc(w->fds, cap * sizeof *grown);
    if (!grown) {
      close(host_fd);
      return false;
    }
    for (uint32_t i = w->nfds; i < cap; i++) grown[i] = (wasi_fd){.host_fd = -1};
    w->fds = grown;
    w->nfds = cap;
  }
  w->fds[n] = (wasi_fd){.host_fd = host_fd, .owned = true, .filetype = filetype,
                        .rights_base = base, .rights_inheriting = inheriting};
  *out = n;
  return true;
}

void wasi_fd_release(wasi_fd *e) {
  if (e->host_fd >= 0 && e->owned) close(e->host_fd);
  free(e->preopen_name);
  *e = (wasi_fd){.host_fd = -1};
}
