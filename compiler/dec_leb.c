/* dec_leb.c: LEB128 integer readers with the binary format's exact limits. */
#include "dec_internal.h"

/* The spec's rule: at most ceil(bits/7) bytes, and the unused bits of the
 * last permitted byte must be zero (unsigned) or copies of the sign bit
 * (signed).  "too large" is checked before "too long", as the spec's
 * reference decoder does, so both tests agree on the message. */
bool dec_leb(const uint8_t *bytes, size_t end, size_t *pos, unsigned bits,
             bool is_signed, uint64_t *out, const char *eof_msg, tw_diag *d) {
  uint64_t result = 0;
  unsigned shift = 0;
  size_t p = *pos;
  uint8_t b;
  do {
    int left = (int)bits - (int)shift;
    if (left <= 0) return tw_fail(d, (uint32_t)p, "integer representation too long");
    if (p >= end) return tw_fail(d, (uint32_t)p, "%s", eof_msg);
    b = bytes[p++];
    if (left < 7) {
      unsigned mask = (0x7fu << (is_signed ? left - 1 : left)) & 0x7fu;
      unsigned high = b & mask;
      if (high != 0 && !(is_signed && high == mask))
        return tw_fail(d, (uint32_t)(p - 1), "integer too large");
    }
    result |= (uint64_t)(b & 0x7f) << shift;
    shift += 7;
  } while (b & 0x80);
  if (is_signed && shift < 64 && (b & 0x40)) result |= ~(uint64_t)0 << shift;
  *pos = p;
  *out = result;
  return true;
}

bool dec_u32(const uint8_t *bytes, size_t end, size_t *pos, uint32_t *out, tw_diag *d) {
  uint64_t v;
  if (!dec_leb(bytes, end, pos, 32, false, &v, "unexpected end", d)) return false;
  *out = (uint32_t)v;
  return true;
}

bool dec_s32(const uint8_t *bytes, size_t end, size_t *pos, int32_t *out, tw_diag *d) {
  uint64_t v;
  if (!dec_leb(bytes, end, pos, 32, true, &v, "unexpected end", d)) return false;
  *out = (int32_t)v;
  return true;
}

bool dec_u64(const uint8_t *bytes, size_t end, size_t *pos, uint64_t *out, tw_diag *d) {
  return dec_leb(bytes, end, pos, 64, false, out, "unexpected end", d);
}

bool dec_s64(const uint8_t *bytes, size_t end, size_t *pos, int64_t *out, tw_diag *d) {
  uint64_t v;
  if (!dec_leb(bytes, end, pos, 64, true, &v, "unexpected end", d)) return false;
  *out = (int64_t)v;
  return true;
}

bool dec_s33(const uint8_t *bytes, size_t end, size_t *pos, int64_t *out, tw_diag *d) {
  uint64_t v;
  if (!dec_leb(bytes, end, pos, 33, true, &v, "unexpected end", d)) return false;
  *out = (int64_t)v;
  return true;
}
