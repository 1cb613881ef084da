/* spec_file.c: one .wast file: its temporary folder, wast2json, the JSON
 * script, running its commands in order and cleaning up. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spec.h"

extern char **environ;

/* Converts the .wast with wabt into dir/script.json (and its modules);
 * --no-check keeps invalid modules for assert_invalid.  err gets the
 * first line wast2json printed. */
static bool sr_wast2json(const char *wast, const char *dir, char *json, size_t jcap, char *err,
                         size_t ecap) {
  char errpath[4096];
  snprintf(json, jcap, "%s/script.json", dir);
  snprintf(errpath, sizeof errpath, "%s/wast2json.err", dir);
  int errfd = open(errpath, O_RDWR | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (errfd >= 0) {
    posix_spawn_file_actions_adddup2(&fa, errfd, 1);
    posix_spawn_file_actions_adddup2(&fa, errfd, 2);
  }
  char *argv[] = {"wast2json", "--no-check", "--enable-relaxed-simd", (char *)wast, "-o", json, NULL};
  pid_t pid;
  int status = -1;
  bool spawned = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) == 0;
  posix_spawn_file_actions_destroy(&fa);
  while (spawned && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  snprintf(err, ecap, "cannot run wast2json (is wabt installed?)");
  if (spawned && errfd >= 0) {
    ssize_t n = pread(errfd, err, ecap - 1, 0);
    err[n > 0 ? n : 0] = 0;
    err[strcspn(err, "\n")] = 0;
    if (WIFSIGNALED(status)) snprintf(err, ecap, "wast2json killed by signal %d", WTERMSIG(status));
    else if (!err[0]) snprintf(err, ecap, "wast2json exited with status %d", WEXITSTATUS(status));
  }
  if (errfd >= 0) close(errfd);
  return status == 0;
}

static char *sr_read_text(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  for (size_t got = 1; buf && got;) {
    if (n == cap) {
      char *bigger = realloc(buf, cap *= 2);
      if (!bigger) free(buf);
      buf = bigger;
      if (!buf) break;
    }
    got = fread(buf + n, 1, cap - n, f);
    n += got;
  }
  fclose(f);
  *len = n;
  return buf;
}

void sr_remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  char path[4096];
  for (struct dirent *e; (e = readdir(d));) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    unlink(path);
  }
  closedir(d);
  rmdir(dir);
}

/* A whole-file failure (no script to run) counts as one failed command. */
static void sr_file_error(const char *wast, const char *what, const char *why, sr_emit_fn emit,
                          void *ctx) {
  char line[1024];
  emit(ctx, 'T', "1");
  snprintf(line, sizeof line, "%.400s: FAIL: %.200s: %.400s", wast, what, why);
  emit(ctx, 'F', line);
}

static const char *const sr_tag_words[] = {[SR_PASS] = "ok", [SR_FAIL] = "FAIL", [SR_SKIP] = "SKIP"};
static const char sr_tags[] = {[SR_PASS] = 'P', [SR_FAIL] = 'F', [SR_SKIP] = 'S'};

static void sr_run_commands(sr_file *f, const sj_value *cmds, sr_emit_fn emit, void *ctx) {
  char count[32], detail[1024], what[512], line[1600];
  snprintf(count, sizeof count, "%zu", cmds->len);
  emit(ctx, 'T', count);
  for (size_t i = 0; i < cmds->len; i++) {
    const sj_value *cmd = &cmds->items[i];
    const sj_value *lineno = sj_get(cmd, "line");
    const char *type = sj_str(cmd, "type");
    sr_outcome o = sr_command(f, cmd, detail, sizeof detail);
    sr_describe(cmd, what, sizeof what);
    int n = snprintf(line, sizeof line, "%s:%d: %s: %s%s", f->wast_path,
                     lineno && lineno->kind == SJ_NUMBER ? (int)lineno->number : 0, sr_tag_words[o],
                     type ? type : "?", what);
    if (detail[0] && n > 0 && (size_t)n < sizeof line)
      snprintf(line + n, sizeof line - (size_t)n, o == SR_SKIP ? " (%s)" : ": %s", detail);
    emit(ctx, sr_tags[o], line);
  }
}

/* Parses the script and runs it against fresh spectest objects. */
static void sr_run_json(sr_file *f, const char *json, sr_emit_fn emit, void *ctx) {
  size_t len;
  char *text = sr_read_text(json, &len);
  char err[512];
  tw_arena arena = {0};
  sj_value root;
  if (!text) {
    sr_file_error(f->wast_path, "reading the wast2json output", json, emit, ctx);
  } else if (!sj_parse(&arena, text, len, &root, err, sizeof err)) {
    sr_file_error(f->wast_path, "parsing the wast2json output", err, emit, ctx);
  } else {
    const sj_value *cmds = sj_get(&root, "commands");
    sh_spectest *host = sh_new(f->cfg->verbose);
    if (!cmds || cmds->kind != SJ_ARRAY) {
      sr_file_error(f->wast_path, "wast2json output", "no \"commands\" array", emit, ctx);
      sh_delete(host);
    } else if (!host) {
      sr_file_error(f->wast_path, "spectest", "cannot create the host module", emit, ctx);
    } else {
      sm_init(&f->modules, f->dir, &f->cfg->opts, host);
      sr_run_commands(f, cmds, emit, ctx);
      sm_finish(&f->modules);
    }
  }
  free(text);
  tw_arena_free(&arena);
}

void sr_run_file(const char *wast_path, const sr_config *cfg, sr_emit_fn emit, void *ctx) {
  sr_file f = {.wast_path = wast_path, .cfg = cfg};
  snprintf(f.dir, sizeof f.dir, "/tmp/twasm-spec-XXXXXX");
  if (!mkdtemp(f.dir)) {
    sr_file_error(wast_path, "cannot create a temporary folder", strerror(errno), emit, ctx);
    return;
  }
  emit(ctx, 'D', f.dir);
  char json[4096], err[512];
  if (!sr_wast2json(wast_path, f.dir, json, sizeof json, err, sizeof err))
    sr_file_error(wast_path, "wast2json failed", err, emit, ctx);
  else
    sr_run_json(&f, json, emit, ctx);
  sr_remove_dir(f.dir);
}
