/* cli_report.c: folds the offload report's lines of C-library functions
 * (the allocator's, printf's and the string routines' loops, listed in
 * every C program) into one summary line. */
#include "cli_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The report's lines are "FILE:0xOFF: FUNC: offloaded as ..." or
 * "FILE:0xOFF: FUNC: not offloaded: ...".  The function's name is what lies
 * between the offset and the verdict (a name may hold ": "). */
static bool split_line(const char *line, size_t len, const char **name, size_t *name_len,
                       bool *offloaded) {
  const char *end = line + len, *p = strstr(line, ":0x");
  if (!p || p >= end) return false;
  p += 3;
  while (p < end && strchr("0123456789abcdef", *p)) p++;
  if (end - p < 2 || p[0] != ':' || p[1] != ' ') return false;
  p += 2;
  static const char *const verdicts[] = {": offloaded as ", ": not offloaded: "};
  const char *best = NULL;
  for (int v = 0; v < 2; v++) {
    const char *q = strstr(p, verdicts[v]);
    if (q && q < end && (!best || q < best)) best = q, *offloaded = v == 0;
  }
  if (!best) return false;
  *name = p, *name_len = (size_t)(best - p);
  return true;
}

static bool reserved(const char *name) {
  return name[0] == '_' && (name[1] == '_' || (name[1] >= 'A' && name[1] <= 'Z'));
}

typedef struct {
  char *buf;
  size_t len, cap;
} text;

static bool put(text *t, const char *s, size_t n) {
  if (t->len + n + 1 > t->cap) {
    size_t cap = (t->len + n + 1) * 2;
    char *b = realloc(t->buf, cap);
    if (!b) return false;
    t->buf = b, t->cap = cap;
  }
  memcpy(t->buf + t->len, s, n);
  t->len += n;
  t->buf[t->len] = 0;
  return true;
}

char *cli_report_fold(const char *report) {
  text kept = {0}, funcs = {0};
  unsigned nests = 0, nfuncs = 0, offloaded_n = 0;
  const char *file = NULL;
  size_t file_len = 0;
  bool ok = put(&kept, "", 0) && put(&funcs, "", 0);
  for (const char *line = report; ok && *line;) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
    const char *name;
    size_t name_len;
    bool offloaded = false, lib = false;
    if (split_line(line, len, &name, &name_len, &offloaded) && name_len > 0 && name_len < 256) {
      char n[256];
      memcpy(n, name, name_len);
      n[name_len] = 0;
      lib = reserved(n) || cli_libc_name(n);
      if (lib) {
        nests++, offloaded_n += offloaded;
        if (!file) file = line, file_len = (size_t)(strstr(line, ":0x") - line);
        /* each function once, in the order first seen */
        char key[260];
        snprintf(key, sizeof key, " %s,", n);
        if (!strstr(funcs.buf, key)) ok = put(&funcs, key, strlen(key)), nfuncs++;
      }
    }
    if (!lib && ok) ok = put(&kept, line, len);
    line += len;
  }
  if (ok && nests) {
    char head[512];
    funcs.buf[funcs.len - 1] = 0; /* the last comma */
    snprintf(head, sizeof head, "%.*s: C library: %u loop nest%s in %u function%s not listed (%u offloaded):",
             (int)(file_len < 256 ? file_len : 255), file, nests, nests == 1 ? "" : "s", nfuncs,
             nfuncs == 1 ? "" : "s", offloaded_n);
    static const char tail[] = "; --offload-report=all lists them\n";
    ok = put(&kept, head, strlen(head)) && put(&kept, funcs.buf, strlen(funcs.buf)) &&
         put(&kept, tail, sizeof tail - 1);
  }
  free(funcs.buf);
  if (!ok) {
    free(kept.buf);
    return NULL;
  }
  return kept.buf;
}
