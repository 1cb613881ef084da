/* drv_output.c: safe outputs for the command line: only regular files
 * (never a device or the input), written whole or not at all, with the
 * modes a linker gives, and no temporary left when a signal ends us. */
#include "drv_output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "drv_internal.h"

/* ---- temporaries and the signal handler ---------------------------------- */

/* A split module's parts (DRV_MAX_PARTS) and the few others. */
#define MAX_TEMPS (DRV_MAX_PARTS + 16)
static char temp_paths[MAX_TEMPS][PATH_MAX];
static volatile sig_atomic_t temp_used[MAX_TEMPS];
static volatile pid_t child_group;
static char tool_dir[PATH_MAX];
static volatile sig_atomic_t tool_dir_used;
static const int guarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NGUARDED (sizeof guarded / sizeof guarded[0])

void drv_hold_signals(bool hold) {
  static sigset_t saved;
  static int depth;
  if (hold && depth++ == 0) {
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < NGUARDED; i++) sigaddset(&set, guarded[i]);
    sigprocmask(SIG_BLOCK, &set, &saved);
  } else if (!hold && depth && --depth == 0) {
    sigprocmask(SIG_SETMASK, &saved, NULL);
  }
}

int drv_temp_create(char *templ, int suffix_len) {
  if (strlen(templ) >= PATH_MAX) {
    errno = ENAMETOOLONG;
    return -1;
  }
  drv_hold_signals(true);
  int fd = mkstemps(templ, suffix_len);
  if (fd >= 0) {
    size_t i = 0;
    while (i < MAX_TEMPS && temp_used[i]) i++;
    if (i == MAX_TEMPS) {
      close(fd);
      unlink(templ);
      fd = -1;
      errno = EMFILE;
    } else {
      strcpy(temp_paths[i], templ);
      temp_used[i] = 1;
    }
  }
  drv_hold_signals(false);
  return fd;
}

/* buf gets "$TMPDIR/" pattern ($TMPDIR default /tmp); false (errno
 * ENAMETOOLONG) when it does not fit. */
static bool in_tmpdir(char *buf, size_t cap, const char *pattern) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  if ((size_t)snprintf(buf, cap, "%s/%s", dir, pattern) < cap) return true;
  errno = ENAMETOOLONG;
  return false;
}

int drv_temp_in_tmpdir(char *buf, size_t cap, const char *pattern, int suffix_len) {
  return in_tmpdir(buf, cap, pattern) ? drv_temp_create(buf, suffix_len) : -1;
}

void drv_temp_release(const char *path, bool unlink_it) {
  drv_hold_signals(true);
  for (size_t i = 0; i < MAX_TEMPS; i++)
    if (temp_used[i] && !strcmp(temp_paths[i], path)) temp_used[i] = 0;
  if (unlink_it) unlink(path);
  drv_hold_signals(false);
}

void drv_child_running(pid_t pgid) { child_group = pgid; }

bool drv_tool_dir_make(char *buf, size_t cap) {
  if (!in_tmpdir(buf, cap, "twasmc-toolXXXXXX") || strlen(buf) >= PATH_MAX) return false;
  drv_hold_signals(true);
  bool ok = !tool_dir_used && mkdtemp(buf);
  if (ok) {
    strcpy(tool_dir, buf);
    tool_dir_used = 1;
  }
  drv_hold_signals(false);
  return ok;
}

/* Async-signal-safe (open, getdents64, unlinkat, rmdir): removes the
 * tool directory's entries (the tool makes files, at most an empty
 * folder) and the directory. */
static void empty_tool_dir(void) {
  if (!tool_dir_used) return;
  int fd = open(tool_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    char buf[4096] __attribute__((aligned(8)));
    long n;
    while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
      for (long off = 0; off < n;) {
        /* struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name */
        unsigned short reclen;
        memcpy(&reclen, buf + off + 16, sizeof reclen);
        const char *name = buf + off + 19;
        if (strcmp(name, ".") && strcmp(name, "..") && unlinkat(fd, name, 0) != 0)
          unlinkat(fd, name, AT_REMOVEDIR);
        off += reclen;
      }
    }
    close(fd);
  }
  rmdir(tool_dir);
}

void drv_tool_dir_remove(void) {
  drv_hold_signals(true);
  empty_tool_dir();
  tool_dir_used = 0;
  drv_hold_signals(false);
}

/* Stops the tool's whole process group (cc, collect2, ld) and waits, up
 * to about 10 s, until none is left to create a file: a tool killed with
 * SIGKILL leaves its own temporaries behind, and on a loaded machine cc
 * can take seconds to clean up after SIGTERM. */
/* Waits up to ticks x 10 ms for process group g to be gone, reaping
 * those of its members that are our children. */
static void wait_group_gone(pid_t g, int ticks) {
  struct timespec tick = {0, 10 * 1000 * 1000};
  for (int i = 0; i < ticks && kill(-g, 0) == 0; i++) {
    while (waitpid(-g, NULL, WNOHANG) > 0) {
    }
    nanosleep(&tick, NULL);
  }
}

static void stop_child(void) {
  pid_t g = child_group;
  if (g <= 0) return;
  kill(-g, SIGTERM);
  wait_group_gone(g, 1000);
  /* Still there after 10 s: killed, and waited for (a second at most) so
   * that nothing writes in the tool's folder once it is emptied. */
  kill(-g, SIGKILL);
  wait_group_gone(g, 100);
}

/* Async-signal-safe: kill, waitpid, nanosleep, unlink, sigaction, raise
 * and empty_tool_dir's calls. */
static void on_signal(int sig) {
  stop_child();
  empty_tool_dir();
  for (size_t i = 0; i < MAX_TEMPS; i++)
    if (temp_used[i]) unlink(temp_paths[i]);
  struct sigaction dfl = {.sa_handler = SIG_DFL};
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, NULL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  raise(sig);
}

void drv_remove_temps_on_signals(void) {
  struct sigaction sa = {.sa_handler = on_signal};
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < NGUARDED; i++) sigaddset(&sa.sa_mask, guarded[i]);
  for (size_t i = 0; i < NGUARDED; i++) {
    struct sigaction old;
    /* A signal the shell made us ignore (nohup, &) stays ignored. */
    if (sigaction(guarded[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(guarded[i], &sa, NULL);
  }
}

/* ---- which paths, and how ---------------------------------------------- */

bool drv_is_stdout(const char *path) { return !strcmp(path, "-"); }

static const char *kind_of(mode_t mode) {
  return S_ISDIR(mode) ? "a directory" : S_ISCHR(mode) ? "a character device"
         : S_ISBLK(mode) ? "a block device" : S_ISFIFO(mode) ? "a fifo"
         : S_ISSOCK(mode) ? "a socket" : "not a regular file";
}

bool drv_output_allowed(const char *path, const char *input, tw_diag *d) {
  struct stat out, in;
  if (drv_is_stdout(path) || stat(path, &out) != 0) return true;
  if (!S_ISREG(out.st_mode))
    return tw_fail(d, TW_DIAG_NO_OFFSET, "will not write %s: it is %s, not a regular file%s", path,
                   kind_of(out.st_mode), S_ISDIR(out.st_mode) ? "" : " (for standard output: -o -)");
  if (input && stat(input, &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
    return tw_fail(d, TW_DIAG_NO_OFFSET, "will not write %s: it is the input file", path);
  return true;
}

static mode_t current_umask(void) {
  mode_t mask = umask(0);
  umask(mask);
  return mask;
}

static bool write_all(int fd, const void *data, size_t size) {
  for (size_t done = 0; done < size;) {
    ssize_t w = write(fd, (const char *)data + done, size - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += (size_t)w;
  }
  return true;
}

/* path.tmpXXXXXX, recorded; NULL (errno set) on failure. */
static char *temp_beside(const char *path, int *fd) {
  size_t n = strlen(path) + 16;
  char *tmp = malloc(n);
  if (!tmp) return NULL;
  snprintf(tmp, n, "%s.tmpXXXXXX", path);
  *fd = drv_temp_create(tmp, 0);
  if (*fd < 0) {
    free(tmp);
    return NULL;
  }
  return tmp;
}

/* Renames tmp over path, or removes it; frees it. */
static bool finish(char *tmp, const char *path, bool ok, tw_diag *d) {
  if (ok && rename(tmp, path) != 0)
    ok = tw_fail(d, TW_DIAG_NO_OFFSET, "cannot write %s: %s", path, strerror(errno));
  drv_temp_release(tmp, !ok);
  free(tmp);
  return ok;
}

bool drv_write_output(const char *path, const void *data, size_t size, tw_diag *d) {
  if (drv_is_stdout(path)) {
    bool ok = write_all(STDOUT_FILENO, data, size);
    return ok || tw_fail(d, TW_DIAG_NO_OFFSET, "cannot write to standard output: %s", strerror(errno));
  }
  int fd;
  char *tmp = temp_beside(path, &fd);
  if (!tmp) return tw_fail(d, TW_DIAG_NO_OFFSET, "cannot write %s: %s", path, strerror(errno));
  bool ok = write_all(fd, data, size);
  if (!ok) tw_fail(d, TW_DIAG_NO_OFFSET, "cannot write %s: %s", path, strerror(errno));
  fchmod(fd, 0666 & ~current_umask()); /* mkstemp made it private */
  if (close(fd) != 0 && ok) ok = tw_fail(d, TW_DIAG_NO_OFFSET, "cannot write %s: %s", path, strerror(errno));
  return finish(tmp, path, ok, d);
}

bool drv_temps_write(const drv_objects *objs, char **paths, tw_diag *d) {
  for (unsigned i = 0; i < objs->n; i++) paths[i] = NULL;
  for (unsigned i = 0; i < objs->n; i++) {
    paths[i] = malloc(PATH_MAX);
    int fd = drv_temp_in_tmpdir(paths[i], PATH_MAX, "twasmc-objXXXXXX.o", 2);
    if (fd < 0) {
      free(paths[i]);
      paths[i] = NULL;
      drv_temps_remove(paths, i);
      return tw_fail(d, TW_DIAG_NO_OFFSET, "cannot create a temporary file: %s", strerror(errno));
    }
    bool ok = write_all(fd, objs->parts[i].data, objs->parts[i].size);
    if (close(fd) != 0 || !ok) {
      tw_fail(d, TW_DIAG_NO_OFFSET, "cannot write the temporary file %s", paths[i]);
      drv_temps_remove(paths, i + 1);
      return false;
    }
  }
  return true;
}

void drv_temps_remove(char **paths, unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    if (paths[i]) drv_temp_release(paths[i], true);
    free(paths[i]);
    paths[i] = NULL;
  }
}

bool drv_write_executable(const drv_objects *objs, const char *out, const char *rt_lib_dir,
                          const drv_options *o, tw_diag *d) {
  char *paths[DRV_MAX_PARTS];
  if (objs->n > DRV_MAX_PARTS) return tw_fail(d, TW_DIAG_NO_OFFSET, "internal error: too many parts");
  if (!drv_temps_write(objs, paths, d)) return false;
  int tfd;
  bool ok = true;
  char *tmp = temp_beside(out, &tfd);
  if (!tmp) ok = tw_fail(d, TW_DIAG_NO_OFFSET, "cannot write %s: %s", out, strerror(errno));
  else close(tfd);
  ok = ok && drv_link_objects((const char *const *)paths, objs->n, tmp, rt_lib_dir, o, d);
  /* The linker kept mkstemp's 0600 and added execute bits (0711): give
   * the mode it gives a file it creates. */
  if (ok && chmod(tmp, 0777 & ~current_umask()) != 0)
    ok = tw_fail(d, TW_DIAG_NO_OFFSET, "cannot set the mode of %s: %s", out, strerror(errno));
  if (tmp) ok = finish(tmp, out, ok, d);
  drv_temps_remove(paths, objs->n);
  return ok;
}
