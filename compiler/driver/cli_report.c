/* cli_report.c: folds the offload report's lines of C-library functions
 * (the allocator's, printf's and the string routines' loops, listed in
 * every C program) into one summary line, and the refused nests of
 * large unnamed functions into another. */
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

/* A function the module does not name: the report calls it "func[N]"
 * (binaryen's wasm-opt, which clang runs after linking at -O1 and up when
 * it is on PATH, drops the name section; clang does not pass it -g). */
static bool unnamed(const char *name) {
  size_t n = strlen(name);
  return n > 6 && strncmp(name, "func[", 5) == 0 && name[n - 1] == ']';
}

/* The function of a report line, or false. */
static bool line_func(const char *line, size_t len, size_t *flen, char n[256], bool *offloaded) {
  const char *name;
  size_t name_len;
  if (!split_line(line, len, flen, &name, &name_len, offloaded) || name_len == 0 || name_len >= 256) return false;
  memcpy(n, name, name_len);
  n[name_len] = 0;
  return true;
}

/* Each function once, in the order first seen: " a, b,". */
typedef struct {
  FILE *f;
  char *text;
  size_t len;
  unsigned nests, funcs, offloaded;
} fold_set;

/* How many times n is in set's text (flushed first). */
static unsigned count_of(fold_set *set, const char *n) {
  char key[260];
  snprintf(key, sizeof key, " %s,", n);
  fflush(set->f);
  unsigned c = 0;
  for (const char *p = set->text; p && (p = strstr(p, key)); p += strlen(key)) c++;
  return c;
}

static void add(fold_set *set, const char *n, bool offloaded) {
  set->nests++, set->offloaded += offloaded;
  if (count_of(set, n) == 0) fprintf(set->f, " %s,", n), set->funcs++;
}

/* The length of the report line at line, its newline included. */
static size_t line_len(const char *line) {
  const char *nl = strchr(line, '\n');
  return nl ? (size_t)(nl - line) + 1 : strlen(line);
}

#define CLI_FOLD_REFUSED 4

char *cli_report_fold(const char *report) {
  char *kept = NULL;
  size_t kept_len = 0;
  FILE *out = open_memstream(&kept, &kept_len);
  /* lib: C-library functions; anon: the refused nests of unnamed
   * functions that refuse at least CLI_FOLD_REFUSED (an allocator's, a
   * formatter's: general-purpose code, most of it the C library's); what
   * runs on the GPU stays listed wherever it is, and so do the few
   * refusals of a small function (a kernel's reason) */
  fold_set lib = {0}, anon = {0};
  lib.f = open_memstream(&lib.text, &lib.len);
  anon.f = open_memstream(&anon.text, &anon.len);
  bool ok = out && lib.f && anon.f;
  const char *file = NULL;
  size_t file_len = 0, flen;
  char n[256];
  bool offloaded;
  /* pass 1: each unnamed function's refusals, " func[N]," once per nest */
  fold_set refused = {0};
  refused.f = open_memstream(&refused.text, &refused.len);
  ok = ok && refused.f;
  for (const char *line = report, *next; ok && *line; line = next) {
    next = line + line_len(line);
    if (line_func(line, (size_t)(next - line), &flen, n, &offloaded) && !offloaded && unnamed(n))
      fprintf(refused.f, " %s,", n);
  }
  for (const char *line = report; ok && *line;) {
    size_t len = line_len(line);
    fold_set *into = NULL;
    if (line_func(line, len, &flen, n, &offloaded)) {
      if (reserved(n) || cli_libc_name(n)) into = &lib;
      else if (unnamed(n) && !offloaded && count_of(&refused, n) >= CLI_FOLD_REFUSED) into = &anon;
    }
    if (into) {
      add(into, n, offloaded);
      if (!file) file = line, file_len = flen;
    } else {
      fwrite(line, 1, len, out);
    }
    line += len;
  }
  int fl = (int)(file_len < 256 ? file_len : 255);
  if (ok) {
    fflush(lib.f), fflush(anon.f);
    if (lib.nests) {
      lib.text[lib.len - 1] = 0; /* the last comma */
      fprintf(out, "%.*s: C library: %u loop nest%s in %u function%s not listed (%u offloaded):%s"
                   "; --offload-report=all lists them\n",
              fl, file, lib.nests, lib.nests == 1 ? "" : "s", lib.funcs, lib.funcs == 1 ? "" : "s",
              lib.offloaded, lib.text);
    }
    if (anon.nests)
      fprintf(out, "%.*s: %u loop nest%s not offloaded in %u unnamed function%s of %d or more such nests "
                   "not listed (the module has no function names: clang's wasm-opt step drops them); "
                   "--offload-report=all lists them\n",
              fl, file, anon.nests, anon.nests == 1 ? "" : "s", anon.funcs, anon.funcs == 1 ? "" : "s",
              CLI_FOLD_REFUSED);
  }
  FILE *fs[4] = {lib.f, anon.f, refused.f, out};
  for (int k = 0; k < 4; k++)
    if (fs[k]) ok = fclose(fs[k]) == 0 && ok;
  free(lib.text), free(anon.text), free(refused.text);
  if (!ok) {
    free(kept);
    return NULL;
  }
  return kept;
}
