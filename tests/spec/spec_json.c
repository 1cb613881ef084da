/* spec_json.c: a small JSON parser for the files wast2json writes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"

/* Members are collected in a growing malloc'd buffer, then copied into
 * the arena once their number is known. */
typedef struct {
  tw_arena *arena;
  const char *p, *end, *start;
  char *err;
  size_t errcap;
  int depth;
} sj_parser;

#define SJ_MAX_DEPTH 64

static bool sj_fail(sj_parser *ps, const char *what) {
  snprintf(ps->err, ps->errcap, "JSON offset %zu: %s", (size_t)(ps->p - ps->start), what);
  return false;
}

static void sj_skip_space(sj_parser *ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
    ps->p++;
}

static int sj_hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static bool sj_read_u16(sj_parser *ps, unsigned *out) {
  if (ps->end - ps->p < 4) return sj_fail(ps, "short \\u escape");
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    int h = sj_hex(ps->p[i]);
    if (h < 0) return sj_fail(ps, "bad \\u escape");
    v = v * 16 + (unsigned)h;
  }
  ps->p += 4;
  *out = v;
  return true;
}

static size_t sj_put_utf8(char *dst, unsigned cp) {
  if (cp < 0x80) { dst[0] = (char)cp; return 1; }
  if (cp < 0x800) {
    dst[0] = (char)(0xc0 | cp >> 6); dst[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    dst[0] = (char)(0xe0 | cp >> 12); dst[1] = (char)(0x80 | (cp >> 6 & 0x3f));
    dst[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  dst[0] = (char)(0xf0 | cp >> 18); dst[1] = (char)(0x80 | (cp >> 12 & 0x3f));
  dst[2] = (char)(0x80 | (cp >> 6 & 0x3f)); dst[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

/* A \uXXXX escape, joining surrogate pairs. */
static bool sj_unicode(sj_parser *ps, char *dst, size_t *n) {
  unsigned cp;
  if (!sj_read_u16(ps, &cp)) return false;
  if (cp >= 0xd800 && cp < 0xdc00 && ps->end - ps->p >= 6 && ps->p[0] == '\\' && ps->p[1] == 'u') {
    ps->p += 2;
    unsigned lo;
    if (!sj_read_u16(ps, &lo)) return false;
    if (lo < 0xdc00 || lo >= 0xe000) return sj_fail(ps, "unpaired surrogate");
    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
  }
  *n += sj_put_utf8(dst + *n, cp);
  return true;
}

static bool sj_escape(sj_parser *ps, char *dst, size_t *n) {
  static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
  if (ps->p >= ps->end) return sj_fail(ps, "unterminated string");
  char c = *ps->p++;
  if (c == 'u') return sj_unicode(ps, dst, n);
  const char *at = strchr(from, c);
  if (!at || !c) return sj_fail(ps, "bad escape");
  dst[(*n)++] = to[at - from];
  return true;
}

/* The decoded text is never longer than the quoted text. */
static bool sj_string(sj_parser *ps, const char **str, size_t *len) {
  ps->p++; /* opening quote */
  const char *q = ps->p;
  while (q < ps->end && *q != '"') q += *q == '\\' ? 2 : 1;
  if (q >= ps->end) return sj_fail(ps, "unterminated string");
  char *dst = tw_arena_alloc(ps->arena, (size_t)(q - ps->p) + 1);
  size_t n = 0;
  while (*ps->p != '"') {
    char c = *ps->p++;
    if (c != '\\') dst[n++] = c;
    else if (!sj_escape(ps, dst, &n)) return false;
  }
  ps->p++;
  dst[n] = 0;
  *str = dst;
  *len = n;
  return true;
}

static bool sj_value_at(sj_parser *ps, sj_value *out);

static bool sj_grow(sj_value **items, const char ***keys, size_t n, size_t *cap, bool with_keys) {
  if (n < *cap) return true;
  *cap = *cap ? *cap * 2 : 8;
  sj_value *ni = realloc(*items, *cap * sizeof **items);
  if (!ni) return false;
  *items = ni;
  if (!with_keys) return true;
  const char **nk = realloc(*keys, *cap * sizeof **keys);
  if (!nk) return false;
  *keys = nk;
  return true;
}

/* Arrays and objects: members separated by commas up to close. */
static bool sj_members(sj_parser *ps, sj_value *out, char close) {
  bool is_obj = close == '}';
  sj_value *items = NULL;
  const char **keys = NULL;
  size_t n = 0, cap = 0;
  bool ok = true;
  ps->p++;
  sj_skip_space(ps);
  if (ps->p < ps->end && *ps->p == close) ps->p++;
  else for (;;) {
    if (!sj_grow(&items, &keys, n, &cap, is_obj)) { ok = sj_fail(ps, "out of memory"); break; }
    if (is_obj) {
      size_t klen;
      sj_skip_space(ps);
      if (ps->p >= ps->end || *ps->p != '"') { ok = sj_fail(ps, "expected a key"); break; }
      if (!(ok = sj_string(ps, &keys[n], &klen))) break;
      sj_skip_space(ps);
      if (ps->p >= ps->end || *ps->p != ':') { ok = sj_fail(ps, "expected ':'"); break; }
      ps->p++;
    }
    if (!(ok = sj_value_at(ps, &items[n]))) break;
    n++;
    sj_skip_space(ps);
    if (ps->p < ps->end && *ps->p == ',') { ps->p++; continue; }
    if (ps->p < ps->end && *ps->p == close) { ps->p++; break; }
    ok = sj_fail(ps, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
    break;
  }
  if (ok) {
    out->kind = is_obj ? SJ_OBJECT : SJ_ARRAY;
    out->len = n;
    out->items = n ? tw_arena_dup(ps->arena, items, n * sizeof *items) : NULL;
    out->keys = is_obj && n ? tw_arena_dup(ps->arena, keys, n * sizeof *keys) : NULL;
  }
  free(items);
  free(keys);
  return ok;
}

static bool sj_literal(sj_parser *ps, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) return sj_fail(ps, "unexpected character");
  ps->p += n;
  return true;
}

static bool sj_number(sj_parser *ps, sj_value *out) {
  char buf[64];
  size_t n = 0;
  while (ps->p + n < ps->end && n + 1 < sizeof buf && strchr("+-.0123456789eE", ps->p[n])) n++;
  memcpy(buf, ps->p, n);
  buf[n] = 0;
  char *endp;
  out->number = strtod(buf, &endp);
  if (n == 0 || *endp) return sj_fail(ps, "bad number");
  ps->p += n;
  out->kind = SJ_NUMBER;
  return true;
}

static bool sj_value_at(sj_parser *ps, sj_value *out) {
  memset(out, 0, sizeof *out);
  sj_skip_space(ps);
  if (ps->p >= ps->end) return sj_fail(ps, "unexpected end");
  if (++ps->depth > SJ_MAX_DEPTH) return sj_fail(ps, "nested too deeply");
  bool ok;
  switch (*ps->p) {
  case '{': ok = sj_members(ps, out, '}'); break;
  case '[': ok = sj_members(ps, out, ']'); break;
  case '"': out->kind = SJ_STRING; ok = sj_string(ps, &out->str, &out->len); break;
  case 't': out->kind = SJ_BOOL; out->boolean = true; ok = sj_literal(ps, "true"); break;
  case 'f': out->kind = SJ_BOOL; ok = sj_literal(ps, "false"); break;
  case 'n': out->kind = SJ_NULL; ok = sj_literal(ps, "null"); break;
  default: ok = sj_number(ps, out); break;
  }
  ps->depth--;
  return ok;
}

bool sj_parse(tw_arena *a, const char *text, size_t len, sj_value *out, char *err, size_t errcap) {
  sj_parser ps = {.arena = a, .p = text, .end = text + len, .start = text, .err = err, .errcap = errcap};
  if (!sj_value_at(&ps, out)) return false;
  sj_skip_space(&ps);
  return ps.p == ps.end || sj_fail(&ps, "trailing characters");
}

const sj_value *sj_get(const sj_value *obj, const char *key) {
  if (!obj || obj->kind != SJ_OBJECT) return NULL;
  for (size_t i = 0; i < obj->len; i++)
    if (strcmp(obj->keys[i], key) == 0) return &obj->items[i];
  return NULL;
}

const char *sj_str(const sj_value *obj, const char *key) {
  const sj_value *v = sj_get(obj, key);
  return v && v->kind == SJ_STRING ? v->str : NULL;
}
