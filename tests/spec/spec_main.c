/* spec_main.c: twasm-spec: options, forked workers per .wast file, counts
 * and the report. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spec.h"
#include "twasm_abi.h"

/* A worker that reports nothing for this long is stuck (e.g. in a loop
 * that should have trapped); it is ended with SIGALRM. */
#define SPEC_CMD_TIMEOUT_S 60

typedef struct {
  unsigned long passed, failed, skipped;
} spec_counts;

/* The results of one file as they come in. */
typedef struct {
  const char *path;
  bool verbose;
  unsigned long total;
  spec_counts got;
  char first_skip[512];
  char dir[64];           /* the worker's temporary folder */
} spec_tally;

static void spec_usage(FILE *out) {
  fputs("usage: twasm-spec [--jobs=N] [--bounds-checks=guard|explicit] [-O N] [--cpu=NAME] [-v]\n"
        "                  FILE.wast...\n"
        "  --jobs=N   run files in N forked workers (default 1; 0: in this process)\n"
        "  -O N       optimisation level of the compiled modules (default 1)\n"
        "  --cpu=NAME target CPU of the compiled modules, as twasmc's --cpu\n"
        "  -v         a line per command and a summary per file\n",
        out);
}

static void spec_emit(void *ctx, char tag, const char *text) {
  spec_tally *t = ctx;
  switch (tag) {
  case 'D': snprintf(t->dir, sizeof t->dir, "%s", text); return;
  case 'T': t->total = strtoul(text, NULL, 10); return;
  case 'P': t->got.passed++; break;
  case 'F': t->got.failed++; break;
  case 'S':
    if (!t->got.skipped++) snprintf(t->first_skip, sizeof t->first_skip, "%s", text);
    break;
  default: return;
  }
  if (tag == 'F' || t->verbose) printf("%s\n", text);
}

/* Ends a file: a worker that died fails every command it did not report. */
static void spec_file_done(spec_tally *t, int wstatus, spec_counts *all) {
  unsigned long done = t->got.passed + t->got.failed + t->got.skipped;
  bool died = WIFSIGNALED(wstatus) || (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) != 0);
  if (died) {
    unsigned long left = t->total > done ? t->total - done : (t->total ? 0 : 1);
    if (WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGALRM)
      printf("%s: FAIL: worker stopped: a command ran over %d s, after %lu of %lu commands\n",
             t->path, SPEC_CMD_TIMEOUT_S, done, t->total);
    else if (WIFSIGNALED(wstatus))
      printf("%s: FAIL: worker killed by signal %d (%s) after %lu of %lu commands\n", t->path,
             WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)), done, t->total);
    else
      printf("%s: FAIL: worker exited with status %d after %lu of %lu commands\n", t->path,
             WEXITSTATUS(wstatus), done, t->total);
    t->got.failed += left;
    if (t->dir[0]) sr_remove_dir(t->dir);
  }
  if (t->verbose)
    printf("%s: %lu passed, %lu failed, %lu skipped\n", t->path, t->got.passed, t->got.failed,
           t->got.skipped);
  else if (t->got.skipped)
    printf("%s: %lu skipped, e.g. %s\n", t->path, t->got.skipped, t->first_skip);
  fflush(stdout);
  all->passed += t->got.passed;
  all->failed += t->got.failed;
  all->skipped += t->got.skipped;
}

/* ---- workers ---------------------------------------------------------- */

/* Records go through the pipe one line each: "<tag> <text>\n". */
static void spec_pipe_emit(void *ctx, char tag, const char *text) {
  int fd = *(int *)ctx;
  alarm(SPEC_CMD_TIMEOUT_S);
  size_t n = strlen(text);
  char *line = malloc(n + 3);
  if (!line) return;
  line[0] = tag;
  line[1] = ' ';
  for (size_t i = 0; i < n; i++) line[2 + i] = text[i] == '\n' ? ' ' : text[i];
  line[n + 2] = '\n';
  for (size_t off = 0; off < n + 3;) {
    ssize_t w = write(fd, line + off, n + 3 - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    off += (size_t)w;
  }
  free(line);
}

typedef struct {
  pid_t pid;
  int fd;
  spec_tally tally;
  char *buf;       /* a partial line */
  size_t len, cap;
} spec_worker;

static bool spec_start(spec_worker *w, const char *path, const sr_config *cfg) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    close(fds[0]);
    alarm(SPEC_CMD_TIMEOUT_S);
    sr_run_file(path, cfg, spec_pipe_emit, &fds[1]);
    fflush(stdout);
    _exit(0); /* no atexit work of LLVM in a forked copy */
  }
  close(fds[1]);
  memset(w, 0, sizeof *w);
  w->pid = pid;
  w->fd = fds[0];
  w->tally.path = path;
  w->tally.verbose = cfg->verbose;
  return true;
}

/* Splits what arrived into records; false at end of input. */
static bool spec_read(spec_worker *w) {
  if (w->cap - w->len < 4096) {
    w->cap = w->cap ? w->cap * 2 : 8192;
    w->buf = realloc(w->buf, w->cap);
    if (!w->buf) abort();
  }
  ssize_t n = read(w->fd, w->buf + w->len, w->cap - w->len - 1);
  if (n < 0 && errno == EINTR) return true;
  if (n <= 0) return false;
  w->len += (size_t)n;
  char *start = w->buf, *nl;
  while ((nl = memchr(start, '\n', (size_t)(w->buf + w->len - start)))) {
    *nl = 0;
    if (nl - start >= 2) spec_emit(&w->tally, start[0], start + 2);
    start = nl + 1;
  }
  w->len -= (size_t)(start - w->buf);
  memmove(w->buf, start, w->len);
  return true;
}

static void spec_reap(spec_worker *w, spec_counts *all) {
  int status = 0;
  close(w->fd);
  while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {
  }
  spec_file_done(&w->tally, status, all);
  free(w->buf);
  w->pid = 0;
}

static void spec_run_forked(char **files, int nfiles, int jobs, const sr_config *cfg, spec_counts *all) {
  spec_worker *ws = calloc((size_t)jobs, sizeof *ws);
  struct pollfd *pfds = calloc((size_t)jobs, sizeof *pfds);
  if (!ws || !pfds) abort();
  int next = 0, active = 0;
  for (;;) {
    for (int i = 0; i < jobs && next < nfiles; i++) {
      if (ws[i].pid) continue;
      if (spec_start(&ws[i], files[next], cfg)) active++;
      else printf("%s: FAIL: cannot start a worker: %s\n", files[next], strerror(errno)), all->failed++;
      next++;
    }
    if (!active) break;
    for (int i = 0; i < jobs; i++) pfds[i] = (struct pollfd){ws[i].pid ? ws[i].fd : -1, POLLIN, 0};
    if (poll(pfds, (nfds_t)jobs, -1) < 0 && errno != EINTR) break;
    for (int i = 0; i < jobs; i++) {
      if (!ws[i].pid || !(pfds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (!spec_read(&ws[i])) {
        spec_reap(&ws[i], all);
        active--;
      }
    }
  }
  free(ws);
  free(pfds);
}

/* ---- options ------------------------------------------------------------ */

static bool spec_options(int argc, char **argv, sr_config *cfg, int *jobs, int *first_file) {
  drv_options_default(&cfg->opts);
  cfg->opts.opt_level = 1;
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    const char *a = argv[i];
    if (strncmp(a, "--jobs=", 7) == 0) *jobs = atoi(a + 7);
    else if (strcmp(a, "--bounds-checks=guard") == 0) cfg->opts.bounds_mode = TWASM_BOUNDS_GUARD;
    else if (strcmp(a, "--bounds-checks=explicit") == 0) cfg->opts.bounds_mode = TWASM_BOUNDS_EXPLICIT;
    else if (strcmp(a, "-v") == 0) cfg->verbose = true;
    else if (strncmp(a, "--cpu=", 6) == 0 && drv_cpu_known(a + 6)) cfg->opts.cpu = a + 6;
    else if (strcmp(a, "-O") == 0 && i + 1 < argc) cfg->opts.opt_level = atoi(argv[++i]);
    else if (strncmp(a, "-O", 2) == 0 && a[2]) cfg->opts.opt_level = atoi(a + 2);
    else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      spec_usage(stdout);
      exit(0);
    } else {
      fprintf(stderr, "twasm-spec: unknown option %s\n", a);
      return false;
    }
  }
  *first_file = i;
  return *jobs >= 0 && i < argc;
}

int main(int argc, char **argv) {
  sr_config cfg = {0};
  int jobs = 1, first;
  if (!spec_options(argc, argv, &cfg, &jobs, &first)) {
    spec_usage(stderr);
    return 2;
  }
  spec_counts all = {0};
  if (jobs == 0) {
    for (int i = first; i < argc; i++) {
      spec_tally t = {.path = argv[i], .verbose = cfg.verbose};
      sr_run_file(argv[i], &cfg, spec_emit, &t);
      spec_file_done(&t, 0, &all);
    }
  } else {
    spec_run_forked(argv + first, argc - first, jobs, &cfg, &all);
  }
  printf("spec: %lu passed, %lu failed, %lu skipped\n", all.passed, all.failed, all.skipped);
  return all.failed == 0 ? 0 : 1;
}
