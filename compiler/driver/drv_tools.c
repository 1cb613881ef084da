/* drv_tools.c: input reading and the external tools the driver runs
 * (wabt's wat2wasm for text input, the system C compiler for linking). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver.h"
#include "drv_internal.h"
#include "drv_output.h"

extern char **environ;

/* Starts argv in a process group of its own, with signals held until it
 * is recorded, so that a signal handler can stop it (and what it runs)
 * before removing the files it writes. */
static bool spawn_tool(pid_t *pid, char *const argv[], posix_spawn_file_actions_t *fa,
                       char *const envp[]) {
  posix_spawnattr_t attr;
  sigset_t mask;
  posix_spawnattr_init(&attr);
  sigprocmask(SIG_SETMASK, NULL, &mask);
  drv_hold_signals(true);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigmask(&attr, &mask); /* the tool's, not the held one */
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  bool ok = posix_spawnp(pid, argv[0], fa, &attr, argv, envp) == 0;
  if (ok) drv_child_running(*pid);
  drv_hold_signals(false);
  posix_spawnattr_destroy(&attr);
  return ok;
}

/* environ with TMPDIR set to dir (NULL: environ itself); free with free(). */
static char **env_with_tmpdir(const char *dir, char *var, size_t cap) {
  if (!dir || (size_t)snprintf(var, cap, "TMPDIR=%s", dir) >= cap) return NULL;
  size_t n = 0;
  while (environ[n]) n++;
  char **envp = malloc((n + 2) * sizeof *envp);
  if (!envp) return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "TMPDIR=", 7)) envp[k++] = environ[i];
  envp[k++] = var;
  envp[k] = NULL;
  return envp;
}

int drv_run_tool(char *const argv[], char *errbuf, size_t errcap) {
  char errpath[PATH_MAX], dir[PATH_MAX], var[PATH_MAX + 8];
  bool own_dir = drv_tool_dir_make(dir, sizeof dir);
  char **envp = env_with_tmpdir(own_dir ? dir : NULL, var, sizeof var);
  int errfd = drv_temp_in_tmpdir(errpath, sizeof errpath, "twasmc-errXXXXXX", 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (errfd >= 0) {
    posix_spawn_file_actions_adddup2(&fa, errfd, 2);
    posix_spawn_file_actions_adddup2(&fa, errfd, 1);
  }
  pid_t pid;
  int status = 127;
  if (spawn_tool(&pid, argv, &fa, envp ? envp : environ)) {
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    drv_child_running(0);
    status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  posix_spawn_file_actions_destroy(&fa);
  free(envp);
  if (own_dir) drv_tool_dir_remove();
  if (errbuf && errcap) errbuf[0] = 0;
  if (errfd >= 0) {
    if (errbuf && errcap) {
      ssize_t n = pread(errfd, errbuf, errcap - 1, 0);
      errbuf[n > 0 ? n : 0] = 0;
      char *nl = strchr(errbuf, '\n');
      if (nl && nl[1]) nl[1] = 0; /* first line is enough */
      size_t len = strlen(errbuf);
      if (len && errbuf[len - 1] == '\n') errbuf[len - 1] = 0;
    }
    close(errfd);
    drv_temp_release(errpath, true);
  }
  return status;
}

static bool on_path(const char *prog) {
  const char *path = getenv("PATH");
  if (!path) path = "/usr/bin:/bin";
  char buf[4096];
  for (const char *p = path; *p;) {
    const char *colon = strchr(p, ':');
    size_t n = colon ? (size_t)(colon - p) : strlen(p);
    snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, prog);
    if (access(buf, X_OK) == 0) return true;
    p += n + (colon ? 1 : 0);
  }
  return false;
}

/* All of f into a malloc'd buffer. */
static drv_status read_stream(FILE *f, uint8_t **bytes, size_t *size, tw_diag *d) {
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  for (;;) {
    if (n == cap) buf = realloc(buf, cap *= 2);
    size_t got = fread(buf + n, 1, cap - n, f);
    if (got == 0) break;
    n += got;
  }
  if (ferror(f)) {
    free(buf);
    tw_fail(d, TW_DIAG_NO_OFFSET, "read error: %s", strerror(errno));
    return DRV_IO;
  }
  *bytes = buf;
  *size = n;
  return DRV_OK;
}

static drv_status read_file(const char *path, uint8_t **bytes, size_t *size, tw_diag *d) {
  struct stat st;
  if (stat(path, &st) != 0) {
    tw_fail(d, TW_DIAG_NO_OFFSET, "cannot open: %s", strerror(errno));
    return DRV_IO;
  }
  if (S_ISDIR(st.st_mode)) {
    tw_fail(d, TW_DIAG_NO_OFFSET, "is a directory, expected a .wasm or .wat file");
    return DRV_IO;
  }
  FILE *f = fopen(path, "rb");
  if (!f) {
    tw_fail(d, TW_DIAG_NO_OFFSET, "cannot open: %s", strerror(errno));
    return DRV_IO;
  }
  drv_status st2 = read_stream(f, bytes, size, d);
  fclose(f);
  return st2;
}

static bool is_text_name(const char *path) {
  const char *dot = strrchr(path, '.');
  return dot && (strcmp(dot, ".wat") == 0 || strcmp(dot, ".wast") == 0);
}

bool drv_is_text_input(const char *path) { return is_text_name(path); }

/* A text module at path through wat2wasm into *bytes. */
static drv_status convert_text(const char *path, uint8_t **bytes, size_t *size, tw_diag *d) {
  if (!on_path("wat2wasm")) {
    tw_fail(d, TW_DIAG_NO_OFFSET,
            "text input needs wabt's wat2wasm, which is not installed (apt-get install wabt)");
    return DRV_IO;
  }
  char tmp[PATH_MAX];
  int fd = drv_temp_in_tmpdir(tmp, sizeof tmp, "twasmc-watXXXXXX", 0);
  if (fd < 0) {
    tw_fail(d, TW_DIAG_NO_OFFSET, "cannot create a temporary file: %s", strerror(errno));
    return DRV_IO;
  }
  close(fd);
  char err[512];
  char *argv[] = {"wat2wasm", "--enable-all", (char *)path, "-o", tmp, NULL};
  int rc = drv_run_tool(argv, err, sizeof err);
  drv_status st = DRV_OK;
  if (rc != 0) {
    tw_fail(d, TW_DIAG_NO_OFFSET, "wat2wasm rejected the text module: %s", err);
    st = DRV_MALFORMED;
  } else {
    st = read_file(tmp, bytes, size, d);
  }
  drv_temp_release(tmp, true);
  return st;
}

drv_status drv_read_input(const char *path, uint8_t **bytes, size_t *size, tw_diag *d) {
  if (!is_text_name(path)) return read_file(path, bytes, size, d);
  struct stat st;
  if (stat(path, &st) != 0 || S_ISDIR(st.st_mode)) return read_file(path, bytes, size, d);
  return convert_text(path, bytes, size, d);
}

/* Standard input: a binary module as is, anything else as text, which
 * wat2wasm reads from a temporary copy. */
drv_status drv_read_stdin(uint8_t **bytes, size_t *size, bool *was_text, tw_diag *d) {
  drv_status st = read_stream(stdin, bytes, size, d);
  *was_text = st == DRV_OK && (*size < 4 || memcmp(*bytes, "\0asm", 4) != 0);
  if (st != DRV_OK || !*was_text) return st;
  char tmp[PATH_MAX];
  int fd = drv_temp_in_tmpdir(tmp, sizeof tmp, "twasmc-stdinXXXXXX.wat", 4);
  bool ok = fd >= 0 && write(fd, *bytes, *size) == (ssize_t)*size;
  if (fd >= 0) close(fd);
  free(*bytes);
  *bytes = NULL;
  if (!ok) {
    if (fd >= 0) drv_temp_release(tmp, true);
    tw_fail(d, TW_DIAG_NO_OFFSET, "cannot copy standard input to a temporary file");
    return DRV_IO;
  }
  st = convert_text(tmp, bytes, size, d);
  drv_temp_release(tmp, true);
  return st;
}

bool drv_link_shared(const char *obj_path, const char *so_path, tw_diag *d) {
  char err[512];
  char *argv[] = {"cc", "-shared", "-o", (char *)so_path, (char *)obj_path, NULL};
  if (drv_run_tool(argv, err, sizeof err) != 0)
    return tw_fail(d, TW_DIAG_NO_OFFSET, "linking a shared object failed: %s", err);
  return true;
}

/* argv as one shell-quoted line, for twasmc -v (malloc'd). */
static char *command_line(char *const argv[]) {
  size_t cap = 1;
  for (int i = 0; argv[i]; i++) cap += strlen(argv[i]) * 4 + 3;
  char *line = malloc(cap), *at = line;
  for (int i = 0; argv[i]; i++) {
    const char *a = argv[i];
    bool plain = *a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                 "-_./=+:,%@") == strlen(a);
    if (i) *at++ = ' ';
    if (plain) {
      at = stpcpy(at, a);
      continue;
    }
    *at++ = '\'';
    for (; *a; a++) at = *a == '\'' ? stpcpy(at, "'\\''") : (*at++ = *a, at);
    *at++ = '\'';
  }
  *at = 0;
  return line;
}

bool drv_link_objects(const char *const *objs, unsigned nobjs, const char *exe_path,
                      const char *rt_lib_dir, const drv_options *o, tw_diag *d) {
  char lib[4096], err[512];
  snprintf(lib, sizeof lib, "%s/libtwasm-rt.a", rt_lib_dir);
  if (access(lib, R_OK) != 0)
    return tw_fail(d, TW_DIAG_NO_OFFSET, "runtime library not found: %s", lib);
  static char *const tail[] = {"-lzstd", "-ldl", "-lm", "-lpthread"};
  enum { NTAIL = sizeof tail / sizeof tail[0] };
  char **argv = malloc((nobjs + NTAIL + 6) * sizeof *argv);
  int n = 0;
  /* non-PIE: the objects' code is static (drv_host_machine's exe) */
  argv[n++] = "cc", argv[n++] = "-no-pie", argv[n++] = "-o", argv[n++] = (char *)exe_path;
  for (unsigned i = 0; i < nobjs; i++) argv[n++] = (char *)objs[i];
  argv[n++] = lib;
  for (int i = 0; i < NTAIL; i++) argv[n++] = tail[i];
  argv[n] = NULL;
  char *line = command_line(argv);
  drv_report(o, (drv_event){.kind = DRV_EV_COMMAND, .name = line});
  drv_report(o, (drv_event){.kind = DRV_EV_BEGIN, .name = "link"});
  double t0 = drv_now();
  bool ok = drv_run_tool(argv, err, sizeof err) == 0;
  drv_report(o, (drv_event){.kind = DRV_EV_END, .name = "link", .seconds = drv_now() - t0});
  free(line);
  free(argv);
  /* libzstd1 alone (on every Debian system) has no libzstd.so or .a to
   * link with: name the package that has them */
  const char *hint = strstr(err, "-lzstd") ? " (libzstd's development files are missing: on Debian "
                                             "`apt install libzstd-dev`)" : "";
  return ok || tw_fail(d, TW_DIAG_NO_OFFSET, "linking the executable failed: %s%s", err, hint);
}

bool drv_link_executable(const char *obj_path, const char *exe_path, const char *rt_lib_dir,
                         tw_diag *d) {
  return drv_link_objects(&obj_path, 1, exe_path, rt_lib_dir, NULL, d);
}

bool drv_combine_objects(const drv_objects *objs, uint8_t **obj, size_t *size,
                         const drv_options *o, tw_diag *d) {
  char *paths[DRV_MAX_PARTS], out[PATH_MAX], err[512];
  if (objs->n > DRV_MAX_PARTS) return tw_fail(d, TW_DIAG_NO_OFFSET, "internal error: too many parts");
  int fd = drv_temp_in_tmpdir(out, sizeof out, "twasmc-allXXXXXX.o", 2);
  if (fd < 0) return tw_fail(d, TW_DIAG_NO_OFFSET, "cannot create a temporary file: %s", strerror(errno));
  close(fd);
  bool ok = drv_temps_write(objs, paths, d);
  if (ok) {
    char *argv[DRV_MAX_PARTS + 8];
    int n = 0;
    argv[n++] = "cc", argv[n++] = "-r", argv[n++] = "-nostdlib", argv[n++] = "-o", argv[n++] = out;
    for (unsigned i = 0; i < objs->n; i++) argv[n++] = paths[i];
    argv[n] = NULL;
    char *line = command_line(argv);
    drv_report(o, (drv_event){.kind = DRV_EV_COMMAND, .name = line});
    free(line);
    ok = drv_run_tool(argv, err, sizeof err) == 0 ||
         tw_fail(d, TW_DIAG_NO_OFFSET, "combining the parts' objects failed: %s", err);
    drv_temps_remove(paths, objs->n);
  }
  if (ok) {
    FILE *f = fopen(out, "rb");
    ok = f && read_stream(f, obj, size, d) == DRV_OK;
    if (!f) tw_fail(d, TW_DIAG_NO_OFFSET, "cannot read %s: %s", out, strerror(errno));
    if (f) fclose(f);
  }
  drv_temp_release(out, true);
  return ok;
}
