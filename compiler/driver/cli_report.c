/* cli_report.c: folds the offload report's lines of C-library functions
 * (the allocator's, printf's and the string routines' loops, listed in
 * every C program) into one summary line. */
#include "cli_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The report's lines are "FILE:0xOFF: FUNC: offloaded as ..." or
 * "FILE:0xOFF: FUNC: not offloaded: ...".  The function's name is what lies
 * between the offset and the verdict (a name may hold ": "); *file_len is
 * the length of FILE. */
static bool split_line(const char *line, size_t len, size_t *file_len, const char **name,
                       size_t *name_len, bool *offloaded) {
  const char *end = line + len, *p = strstr(line, ":0x");
  if (!p || p >= end) return false;
  *file_len = (size_t)(p - line);
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

char *cli_report_fold(const char *report) {
  char *kept = NULL, *funcs = NULL;
  size_t kept_len = 0, funcs_len = 0;
  FILE *out = open_memstream(&kept, &kept_len), *names = open_memstream(&funcs, &funcs_len);
  unsigned nests = 0, nfuncs = 0, offloaded_n = 0;
  const char *file = NULL;
  size_t file_len = 0;
  for (const char *line = report; out && names && *line;) {
    const char *nl = strchr(line, '\n'), *name;
    size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line), flen, name_len;
    bool offloaded = false, lib = false;
    if (split_line(line, len, &flen, &name, &name_len, &offloaded) && name_len > 0 && name_len < 256) {
      char n[256], key[260];
      memcpy(n, name, name_len);
      n[name_len] = 0;
      lib = reserved(n) || cli_libc_name(n);
      if (lib) {
        nests++, offloaded_n += offloaded;
        if (!file) file = line, file_len = flen;
        /* each function once, in the order first seen: " a, b," */
        snprintf(key, sizeof key, " %s,", n);
        fflush(names);
        if (!funcs || !strstr(funcs, key)) fputs(key, names), nfuncs++;
      }
    }
    if (!lib) fwrite(line, 1, len, out);
    line += len;
  }
  bool ok = out && names;
  if (names) ok = fclose(names) == 0 && ok;
  if (ok && nests) {
    funcs[funcs_len - 1] = 0; /* the last comma */
    fprintf(out, "%.*s: C library: %u loop nest%s in %u function%s not listed (%u offloaded):%s"
                 "; --offload-report=all lists them\n",
            (int)(file_len < 256 ? file_len : 255), file, nests, nests == 1 ? "" : "s", nfuncs,
            nfuncs == 1 ? "" : "s", offloaded_n, funcs);
  }
  if (out) ok = fclose(out) == 0 && ok;
  free(funcs);
  if (!ok) {
    free(kept);
    return NULL;
  }
  return kept;
}
