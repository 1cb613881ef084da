/* wasi_json.c: turns one wasi-testsuite NAME.json (legacy or
 * operation-based, doc/specification.md) into plain files for run.sh. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Usage: wasi_json SPEC.json OUTDIR   (SPEC.json may be "-" for none)
 * Writes into OUTDIR:
 *   args       the arguments, each followed by a NUL byte
 *   env        NAME=VALUE entries, each followed by a NUL byte
 *   dirs       directories to preopen under their own names (the older
 *              form of the spec), each followed by a NUL byte
 *   root       the root directory to preopen as "/" (absent: none)
 *   exit_code  the expected exit status (default 0)
 *   stdout     the expected standard output, only when the spec gives one
 *   stderr     the expected standard error, only when the spec gives one
 *              (the suite's own runner compares only what a spec gives:
 *              tests such as poll_oneoff_stdio print diagnostics)
 *   skip       a reason not to run the test (a proposal or an operation
 *              this runner does not do), when there is one
 * Exit status 0, or 1 with a message for a spec it cannot read. */

typedef struct {
  const char *p, *end, *base;
  char err[256];
} parser;

typedef struct {
  char *buf;
  size_t len, cap;
} text;

typedef struct {
  text args, env, dirs, root, out, err, skip;
  long exit_code;
  bool has_root, has_out, has_err;
} spec;

static bool fail(parser *ps, const char *fmt, ...) {
  if (ps->err[0]) return false;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ps->err, sizeof ps->err, fmt, ap);
  va_end(ap);
  return false;
}

static void put(text *t, const void *data, size_t n) {
  if (t->len + n + 1 > t->cap) {
    t->cap = (t->len + n + 1) * 2;
    t->buf = realloc(t->buf, t->cap);
    if (!t->buf) abort();
  }
  memcpy(t->buf + t->len, data, n);
  t->len += n;
  t->buf[t->len] = 0;
}

static void put_char(text *t, char c) { put(t, &c, 1); }

static void skip_ws(parser *ps) {
  while (ps->p < ps->end && isspace((unsigned char)*ps->p)) ps->p++;
}

static bool expect(parser *ps, char c) {
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == c) {
    ps->p++;
    return true;
  }
  return fail(ps, "expected '%c' at byte %ld", c, (long)(ps->p - ps->base));
}

static bool peek(parser *ps, char c) {
  skip_ws(ps);
  return ps->p < ps->end && *ps->p == c;
}

static void put_utf8(text *t, unsigned long cp) {
  if (cp < 0x80) {
    put_char(t, (char)cp);
  } else if (cp < 0x800) {
    put_char(t, (char)(0xc0 | (cp >> 6)));
    put_char(t, (char)(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    put_char(t, (char)(0xe0 | (cp >> 12)));
    put_char(t, (char)(0x80 | ((cp >> 6) & 0x3f)));
    put_char(t, (char)(0x80 | (cp & 0x3f)));
  } else {
    put_char(t, (char)(0xf0 | (cp >> 18)));
    put_char(t, (char)(0x80 | ((cp >> 12) & 0x3f)));
    put_char(t, (char)(0x80 | ((cp >> 6) & 0x3f)));
    put_char(t, (char)(0x80 | (cp & 0x3f)));
  }
}

static bool hex4(parser *ps, unsigned long *out) {
  if (ps->end - ps->p < 4) return fail(ps, "short \\u escape");
  char buf[5] = {0};
  memcpy(buf, ps->p, 4);
  char *end;
  *out = strtoul(buf, &end, 16);
  if (*end) return fail(ps, "bad \\u escape");
  ps->p += 4;
  return true;
}

static bool escape(parser *ps, text *t) {
  static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
  char c = *ps->p++;
  const char *at = strchr(from, c);
  if (c && at) {
    put_char(t, to[at - from]);
    return true;
  }
  unsigned long cp, lo;
  if (c != 'u' || !hex4(ps, &cp)) return fail(ps, "bad escape in a string");
  if (cp >= 0xd800 && cp < 0xdc00 && ps->end - ps->p >= 6 && ps->p[0] == '\\' && ps->p[1] == 'u') {
    ps->p += 2;
    if (!hex4(ps, &lo)) return false;
    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
  }
  put_utf8(t, cp);
  return true;
}

/* A string, decoded into t (appended). */
static bool string(parser *ps, text *t) {
  if (!expect(ps, '"')) return false;
  while (ps->p < ps->end && *ps->p != '"') {
    if (*ps->p == '\\') {
      ps->p++;
      if (ps->p >= ps->end || !escape(ps, t)) return fail(ps, "bad escape in a string");
    } else {
      put_char(t, *ps->p++);
    }
  }
  return expect(ps, '"');
}

static bool number(parser *ps, long *out) {
  skip_ws(ps);
  char *end;
  errno = 0;
  *out = strtol(ps->p, &end, 10);
  if (end == ps->p || errno) return fail(ps, "expected a number");
  ps->p = end;
  return true;
}

/* Skips any value (for keys this runner does not need). */
static bool skip_value(parser *ps) {
  skip_ws(ps);
  if (ps->p >= ps->end) return fail(ps, "unexpected end");
  char c = *ps->p;
  text scratch = {0};
  bool ok = true;
  if (c == '"') {
    ok = string(ps, &scratch);
  } else if (c == '{' || c == '[') {
    char close = c == '{' ? '}' : ']';
    ps->p++;
    while (ok && !peek(ps, close)) {
      if (c == '{') ok = string(ps, &scratch) && expect(ps, ':');
      ok = ok && skip_value(ps);
      if (ok && !peek(ps, close)) ok = expect(ps, ',');
    }
    ok = ok && expect(ps, close);
  } else {
    while (ps->p < ps->end && (isalnum((unsigned char)*ps->p) || strchr("+-.", *ps->p))) ps->p++;
  }
  free(scratch.buf);
  return ok;
}

static bool is_null(parser *ps) {
  skip_ws(ps);
  if (ps->end - ps->p >= 4 && !strncmp(ps->p, "null", 4)) {
    ps->p += 4;
    return true;
  }
  return false;
}

/* An array of strings, each appended to t with a NUL after it. */
static bool string_list(parser *ps, text *t) {
  if (!expect(ps, '[')) return false;
  while (!peek(ps, ']')) {
    if (!string(ps, t)) return false;
    put_char(t, 0); /* kept: put() counts it, then terminates again */
    if (!peek(ps, ']') && !expect(ps, ',')) return false;
  }
  return expect(ps, ']');
}

/* An object of strings, appended to t as NAME=VALUE NUL entries. */
static bool env_object(parser *ps, text *t) {
  if (!expect(ps, '{')) return false;
  while (!peek(ps, '}')) {
    if (!string(ps, t)) return false;
    put_char(t, '=');
    if (!expect(ps, ':') || !string(ps, t)) return false;
    put_char(t, 0);
    if (!peek(ps, '}') && !expect(ps, ',')) return false;
  }
  return expect(ps, '}');
}

typedef enum { KEYS_LEGACY, KEYS_RUN, KEYS_WAIT, KEYS_READ } key_set;

/* One key of the legacy object or of an operation; `stream` is the
 * operation's "id" for a read (stdout by default). */
static bool field(parser *ps, spec *s, const char *key, key_set set, text *payload, text *id,
                  text *type) {
  bool run = set == KEYS_LEGACY || set == KEYS_RUN;
  if (!strcmp(key, "type") && set != KEYS_LEGACY) return string(ps, type);
  if (run && !strcmp(key, "args")) return string_list(ps, &s->args);
  if (run && !strcmp(key, "env")) return env_object(ps, &s->env);
  if (run && !strcmp(key, "root")) {
    if (is_null(ps)) return true;
    s->has_root = true;
    return string(ps, &s->root);
  }
  if ((set == KEYS_LEGACY || set == KEYS_WAIT) && !strcmp(key, "exit_code"))
    return number(ps, &s->exit_code);
  if (set == KEYS_LEGACY && !strcmp(key, "stdout")) {
    s->has_out = true;
    return string(ps, &s->out);
  }
  if (set == KEYS_LEGACY && !strcmp(key, "stderr")) {
    s->has_err = true;
    return string(ps, &s->err);
  }
  if (set == KEYS_READ && !strcmp(key, "payload")) return string(ps, payload);
  if (set == KEYS_READ && !strcmp(key, "id")) return string(ps, id);
  /* The older form: directories preopened under their own names. */
  if (run && !strcmp(key, "dirs")) return string_list(ps, &s->dirs);
  return skip_value(ps);
}

/* The keys a run, wait or read operation sets; others skip the test. */
static bool operation(parser *ps, spec *s) {
  text type = {0}, payload = {0}, id = {0};
  const char *start = ps->p;
  bool ok = expect(ps, '{');
  /* First pass: the type (it may come after the other keys). */
  while (ok && !peek(ps, '}')) {
    text key = {0};
    ok = string(ps, &key) && expect(ps, ':');
    ok = ok && (key.buf && !strcmp(key.buf, "type") ? string(ps, &type) : skip_value(ps));
    if (ok && !peek(ps, '}')) ok = expect(ps, ',');
    free(key.buf);
  }
  ok = ok && expect(ps, '}');
  const char *t = type.buf ? type.buf : "";
  key_set set = !strcmp(t, "run") ? KEYS_RUN : !strcmp(t, "wait") ? KEYS_WAIT
              : !strcmp(t, "read") ? KEYS_READ : KEYS_LEGACY;
  if (ok && set == KEYS_LEGACY) {
    char msg[96];
    snprintf(msg, sizeof msg, "needs the \"%.40s\" operation", t);
    if (!s->skip.len) put(&s->skip, msg, strlen(msg));
  }
  const char *after = ps->p;
  ps->p = start;
  ok = ok && expect(ps, '{');
  while (ok && set != KEYS_LEGACY && !peek(ps, '}')) {
    text key = {0}, scratch = {0};
    ok = string(ps, &key) && expect(ps, ':');
    ok = ok && (!strcmp(key.buf ? key.buf : "", "type") ? string(ps, &scratch)
                                                        : field(ps, s, key.buf ? key.buf : "", set,
                                                                &payload, &id, &scratch));
    if (ok && !peek(ps, '}')) ok = expect(ps, ',');
    free(key.buf);
    free(scratch.buf);
  }
  if (ok && set == KEYS_READ) {
    bool err = id.buf && !strcmp(id.buf, "stderr");
    text *dst = err ? &s->err : &s->out;
    if (err) s->has_err = true;
    else s->has_out = true;
    if (payload.len) put(dst, payload.buf, payload.len);
  }
  ps->p = after;
  free(type.buf);
  free(payload.buf);
  free(id.buf);
  return ok;
}

static bool operations(parser *ps, spec *s) {
  if (!expect(ps, '[')) return false;
  while (!peek(ps, ']')) {
    if (!operation(ps, s)) return false;
    if (!peek(ps, ']') && !expect(ps, ',')) return false;
  }
  return expect(ps, ']');
}

static bool proposals(parser *ps, spec *s) {
  text list = {0};
  bool ok = string_list(ps, &list);
  if (ok && list.len && !s->skip.len) {
    char msg[128];
    snprintf(msg, sizeof msg, "needs the WASI proposal \"%.60s\"", list.buf);
    put(&s->skip, msg, strlen(msg));
  }
  free(list.buf);
  return ok;
}

static bool document(parser *ps, spec *s) {
  if (!expect(ps, '{')) return false;
  while (!peek(ps, '}')) {
    text key = {0};
    bool ok = string(ps, &key) && expect(ps, ':');
    const char *k = key.buf ? key.buf : "";
    if (ok && !strcmp(k, "operations")) ok = operations(ps, s);
    else if (ok && !strcmp(k, "proposals")) ok = proposals(ps, s);
    else if (ok) ok = field(ps, s, k, KEYS_LEGACY, NULL, NULL, NULL);
    free(key.buf);
    if (!ok) return false;
    if (!peek(ps, '}') && !expect(ps, ',')) return false;
  }
  if (!expect(ps, '}')) return false;
  skip_ws(ps);
  return ps->p == ps->end || fail(ps, "trailing bytes after the object");
}

static bool write_file(const char *dir, const char *name, const void *data, size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "wasi_json: cannot write %s: %s\n", path, strerror(errno));
    return false;
  }
  bool ok = fwrite(data, 1, n, f) == n;
  return (fclose(f) == 0) && ok;
}

static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096;
  char *buf = malloc(cap + 1);
  *n = 0;
  for (size_t got; buf && (got = fread(buf + *n, 1, cap - *n, f)) > 0;) {
    *n += got;
    if (*n == cap) buf = realloc(buf, (cap *= 2) + 1);
  }
  fclose(f);
  if (buf) buf[*n] = 0;
  return buf;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fputs("usage: wasi_json SPEC.json|- OUTDIR\n", stderr);
    return 2;
  }
  spec s = {0};
  if (strcmp(argv[1], "-")) {
    size_t n;
    char *json = slurp(argv[1], &n);
    if (!json) {
      fprintf(stderr, "wasi_json: cannot read %s: %s\n", argv[1], strerror(errno));
      return 1;
    }
    parser ps = {.p = json, .end = json + n, .base = json};
    if (strlen(json) != n || !document(&ps, &s)) {
      fprintf(stderr, "wasi_json: %s: %s\n", argv[1], ps.err[0] ? ps.err : "NUL byte in the file");
      return 1;
    }
    free(json);
  }
  char code[32];
  snprintf(code, sizeof code, "%ld\n", s.exit_code);
  bool ok = write_file(argv[2], "args", s.args.buf ? s.args.buf : "", s.args.len) &&
            write_file(argv[2], "env", s.env.buf ? s.env.buf : "", s.env.len) &&
            write_file(argv[2], "dirs", s.dirs.buf ? s.dirs.buf : "", s.dirs.len) &&
            write_file(argv[2], "exit_code", code, strlen(code)) &&
            (!s.has_out || write_file(argv[2], "stdout", s.out.buf ? s.out.buf : "", s.out.len)) &&
            (!s.has_root || write_file(argv[2], "root", s.root.buf, s.root.len)) &&
            (!s.has_err || write_file(argv[2], "stderr", s.err.buf ? s.err.buf : "", s.err.len)) &&
            (!s.skip.len || write_file(argv[2], "skip", s.skip.buf, s.skip.len));
  return ok ? 0 : 1;
}
