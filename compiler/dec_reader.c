/* dec_reader.c: bounded reads of bytes, integers, names, types and limits. */
#include "dec_internal.h"

#include <string.h>

static const char *eof_msg(const dec_reader *r) {
  return r->in_section ? "unexpected end of section or function" : "unexpected end";
}

bool dec_fail_eof(dec_reader *r) {
  return tw_fail(r->d, (uint32_t)r->pos, "%s", eof_msg(r));
}

bool dec_byte(dec_reader *r, uint8_t *out) {
  if (r->pos >= r->end) return dec_fail_eof(r);
  *out = r->bytes[r->pos++];
  return true;
}

bool dec_u32r(dec_reader *r, uint32_t *out) {
  uint64_t v;
  if (!dec_leb(r->bytes, r->end, &r->pos, 32, false, &v, eof_msg(r), r->d)) return false;
  *out = (uint32_t)v;
  return true;
}

/* Limits and mutability-style flags are one-bit LEB128s in the spec's
 * reference decoder: 0x02 is "too large", 0x81 0x00 "too long". */
bool dec_flag(dec_reader *r, uint32_t *out) {
  uint64_t v;
  if (!dec_leb(r->bytes, r->end, &r->pos, 1, false, &v, eof_msg(r), r->d)) return false;
  *out = (uint32_t)v;
  return true;
}

/* A vector count: every element takes at least one byte, so a count above
 * the bytes left is truncation, and refusing it early bounds allocations. */
bool dec_count(dec_reader *r, uint32_t *out) {
  if (!dec_u32r(r, out)) return false;
  if (*out > r->end - r->pos) {
    r->pos = r->end;
    return dec_fail_eof(r);
  }
  return true;
}

/* A byte-string length (names, data segments, bodies): must fit. */
bool dec_bytes_len(dec_reader *r, uint32_t *out) {
  size_t at = r->pos;
  if (!dec_u32r(r, out)) return false;
  if (*out > r->end - r->pos)
    return tw_fail(r->d, (uint32_t)at, "length out of bounds");
  return true;
}

/* UTF-8 as the spec defines it: shortest form, no surrogates, <= U+10FFFF. */
bool dec_utf8_valid(const uint8_t *s, size_t len) {
  size_t i = 0;
  while (i < len) {
    uint8_t c = s[i];
    size_t n;
    uint32_t cp, min;
    if (c < 0x80) { i++; continue; }
    if ((c & 0xe0) == 0xc0) { n = 1; cp = c & 0x1f; min = 0x80; }
    else if ((c & 0xf0) == 0xe0) { n = 2; cp = c & 0x0f; min = 0x800; }
    else if ((c & 0xf8) == 0xf0) { n = 3; cp = c & 0x07; min = 0x10000; }
    else return false;
    if (len - i - 1 < n) return false;
    for (size_t k = 1; k <= n; k++) {
      if ((s[i + k] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n + 1;
  }
  return true;
}

bool dec_name(dec_reader *r, wasm_name *out) {
  uint32_t len;
  if (!dec_bytes_len(r, &len)) return false;
  const uint8_t *s = r->bytes + r->pos;
  if (!dec_utf8_valid(s, len))
    return tw_fail(r->d, (uint32_t)r->pos, "malformed UTF-8 encoding");
  char *copy = tw_arena_alloc(r->arena, (size_t)len + 1);
  memcpy(copy, s, len);
  out->bytes = copy;
  out->len = len;
  r->pos += len;
  return true;
}

bool dec_is_valtype(uint8_t b) {
  return b == VT_I32 || b == VT_I64 || b == VT_F32 || b == VT_F64 || b == VT_V128 ||
         b == VT_FUNCREF || b == VT_EXTERNREF;
}

bool dec_valtype(dec_reader *r, uint8_t *out) {
  size_t at = r->pos;
  if (!dec_byte(r, out)) return false;
  if (dec_is_valtype(*out)) return true;
  const char *feature = dec_type_feature(*out);
  if (feature) return dec_unsupported(r, at, feature);
  return tw_fail(r->d, (uint32_t)at, "malformed value type");
}

bool dec_reftype(dec_reader *r, uint8_t *out) {
  size_t at = r->pos;
  if (!dec_byte(r, out)) return false;
  if (*out == VT_FUNCREF || *out == VT_EXTERNREF) return true;
  const char *feature = dec_type_feature(*out);
  if (feature) return dec_unsupported(r, at, feature);
  return tw_fail(r->d, (uint32_t)at, "malformed reference type");
}

bool dec_limits(dec_reader *r, wasm_limits *out) {
  uint32_t flags, min, max = 0;
  out->offset = (uint32_t)r->pos;
  const char *feature = dec_limits_feature(r);
  if (feature) return dec_unsupported(r, r->pos, feature);
  if (!dec_flag(r, &flags) || !dec_u32r(r, &min)) return false;
  if (flags && !dec_u32r(r, &max)) return false;
  out->min = min;
  out->max = max;
  out->has_max = flags != 0;
  return true;
}
