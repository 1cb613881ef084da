/* simd_text.c: text codecs written with <wasm_simd128.h> the way SIMD
 * string libraries are: base64 encoding (a byte shuffle, 6-bit fields cut
 * out with i32x4 shifts and masks, the alphabet looked up with four
 * swizzles whose out-of-range indices give 0) and decoding (range
 * compares, a bitselect chain, any_true for bad characters, lane stores),
 * a UTF-8 validator with a 16-byte ASCII fast path (bitmask), a code
 * point counter (compare, subtract, pairwise widening sums) and memchr /
 * strlen by bitmask and count-trailing-zeros.  Built with -msimd128 the
 * vector code runs; natively (and in the plain wasm build) the scalar
 * code does, so the expected output, made natively, checks the vector
 * code against the scalar one. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

#define N 60000
static unsigned char input[N + 64];
static char encoded[N / 3 * 4 + 64];
static unsigned char decoded[N + 64];

static uint32_t seed = 2024;
static uint32_t next(void) {
  seed = seed * 1664525u + 1013904223u;
  return seed >> 8;
}

static uint32_t fnv(const void *p, size_t n) {
  const unsigned char *b = p;
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 16777619u;
  return h;
}

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* ---- base64 -------------------------------------------------------------- */

static size_t b64_encode_tail(char *dst, const unsigned char *src, size_t n) {
  size_t o = 0, i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t w = (uint32_t)src[i] << 16 | (uint32_t)src[i + 1] << 8 | src[i + 2];
    dst[o++] = alphabet[w >> 18];
    dst[o++] = alphabet[w >> 12 & 63];
    dst[o++] = alphabet[w >> 6 & 63];
    dst[o++] = alphabet[w & 63];
  }
  if (n - i == 1) {
    uint32_t w = (uint32_t)src[i] << 16;
    dst[o++] = alphabet[w >> 18];
    dst[o++] = alphabet[w >> 12 & 63];
    dst[o++] = '=';
    dst[o++] = '=';
  } else if (n - i == 2) {
    uint32_t w = (uint32_t)src[i] << 16 | (uint32_t)src[i + 1] << 8;
    dst[o++] = alphabet[w >> 18];
    dst[o++] = alphabet[w >> 12 & 63];
    dst[o++] = alphabet[w >> 6 & 63];
    dst[o++] = '=';
  }
  return o;
}

/* Encodes n bytes; src must have 4 readable bytes past the end. */
static size_t b64_encode(char *dst, const unsigned char *src, size_t n) {
  size_t o = 0, i = 0;
#ifdef __wasm_simd128__
  const v128_t t0 = wasm_v128_load(alphabet), t1 = wasm_v128_load(alphabet + 16);
  const v128_t t2 = wasm_v128_load(alphabet + 32), t3 = wasm_v128_load(alphabet + 48);
  for (; i + 16 <= n; i += 12, o += 16) {
    v128_t in = wasm_v128_load(src + i);
    /* each i32 lane: b1 b0 b2 b1 (bytes of one 3-byte group) */
    v128_t w = wasm_i8x16_shuffle(in, in, 1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
    v128_t idx = wasm_v128_or(
        wasm_v128_or(wasm_v128_and(wasm_u32x4_shr(w, 10), wasm_i32x4_splat(0x3f)),
                     wasm_v128_and(wasm_i32x4_shl(w, 4), wasm_i32x4_splat(0x3f00))),
        wasm_v128_or(wasm_v128_and(wasm_u32x4_shr(w, 6), wasm_i32x4_splat(0x3f0000)),
                     wasm_v128_and(wasm_i32x4_shl(w, 8), wasm_i32x4_splat(0x3f000000))));
    /* a 64-entry table as four swizzles: indices past 15 (or wrapped
     * below 0) give 0 */
    v128_t r = wasm_v128_or(
        wasm_v128_or(wasm_i8x16_swizzle(t0, idx),
                     wasm_i8x16_swizzle(t1, wasm_i8x16_sub(idx, wasm_i8x16_splat(16)))),
        wasm_v128_or(wasm_i8x16_swizzle(t2, wasm_i8x16_sub(idx, wasm_i8x16_splat(32))),
                     wasm_i8x16_swizzle(t3, wasm_i8x16_sub(idx, wasm_i8x16_splat(48)))));
    wasm_v128_store(dst + o, r);
  }
#endif
  return o + b64_encode_tail(dst + o, src + i, n - i);
}

static int b64_value(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

/* Decodes; returns the byte count, or -1 - (offset of the first bad
 * character's group) on a character outside the alphabet. */
static long b64_decode(unsigned char *dst, const char *src, size_t n) {
  size_t o = 0, i = 0;
#ifdef __wasm_simd128__
  for (; i + 16 <= n; i += 16, o += 12) {
    v128_t c = wasm_v128_load(src + i);
    v128_t upper = wasm_v128_and(wasm_u8x16_ge(c, wasm_i8x16_splat('A')), wasm_u8x16_le(c, wasm_i8x16_splat('Z')));
    v128_t lower = wasm_v128_and(wasm_u8x16_ge(c, wasm_i8x16_splat('a')), wasm_u8x16_le(c, wasm_i8x16_splat('z')));
    v128_t digit = wasm_v128_and(wasm_u8x16_ge(c, wasm_i8x16_splat('0')), wasm_u8x16_le(c, wasm_i8x16_splat('9')));
    v128_t plus = wasm_i8x16_eq(c, wasm_i8x16_splat('+'));
    v128_t slash = wasm_i8x16_eq(c, wasm_i8x16_splat('/'));
    v128_t ok = wasm_v128_or(wasm_v128_or(upper, lower), wasm_v128_or(digit, wasm_v128_or(plus, slash)));
    if (wasm_i8x16_bitmask(ok) != 0xffff) break; /* the scalar code finds it */
    v128_t s = wasm_i8x16_splat(63);
    s = wasm_v128_bitselect(wasm_i8x16_splat(62), s, plus);
    s = wasm_v128_bitselect(wasm_i8x16_add(c, wasm_i8x16_splat(4)), s, digit);
    s = wasm_v128_bitselect(wasm_i8x16_sub(c, wasm_i8x16_splat(71)), s, lower);
    s = wasm_v128_bitselect(wasm_i8x16_sub(c, wasm_i8x16_splat(65)), s, upper);
    /* each i32 lane s0 s1 s2 s3 -> 24 bits s0 s1 s2 s3, big-endian bytes */
    v128_t m = wasm_i32x4_splat(0x3f);
    v128_t bits = wasm_v128_or(
        wasm_v128_or(wasm_i32x4_shl(wasm_v128_and(s, m), 18),
                     wasm_i32x4_shl(wasm_v128_and(wasm_u32x4_shr(s, 8), m), 12)),
        wasm_v128_or(wasm_i32x4_shl(wasm_v128_and(wasm_u32x4_shr(s, 16), m), 6), wasm_u32x4_shr(s, 24)));
    v128_t out = wasm_i8x16_shuffle(bits, bits, 2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, 0, 0, 0, 0);
    wasm_v128_store64_lane(dst + o, out, 0);
    wasm_v128_store32_lane(dst + o + 8, out, 2);
  }
#endif
  for (; i + 4 <= n; i += 4) {
    int v[4], pad = 0;
    for (int k = 0; k < 4; k++) {
      v[k] = b64_value((unsigned char)src[i + k]);
      if (src[i + k] == '=' && i + 4 == n && k >= 2) v[k] = 0, pad++;
      else if (v[k] < 0) return -1 - (long)i;
    }
    uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
    dst[o++] = (unsigned char)(w >> 16);
    if (pad < 2) dst[o++] = (unsigned char)(w >> 8);
    if (pad < 1) dst[o++] = (unsigned char)w;
  }
  return i == n ? (long)o : -1 - (long)i;
}

/* ---- UTF-8 --------------------------------------------------------------- */

/* 1 when the 16 bytes at p are all ASCII. */
static int ascii16(const unsigned char *p) {
#ifdef __wasm_simd128__
  return wasm_i8x16_bitmask(wasm_v128_load(p)) == 0;
#else
  for (int k = 0; k < 16; k++)
    if (p[k] & 0x80) return 0;
  return 1;
#endif
}

/* Offset of the first byte of the first invalid sequence, or -1. */
static long utf8_check(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    if (i + 16 <= n && ascii16(s + i)) {
      i += 16;
      continue;
    }
    unsigned c = s[i];
    size_t len;
    uint32_t cp, min;
    if (c < 0x80) {
      i++;
      continue;
    } else if ((c & 0xe0) == 0xc0) len = 2, cp = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0) len = 3, cp = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0) len = 4, cp = c & 0x07, min = 0x10000;
    else return (long)i;
    if (i + len > n) return (long)i;
    for (size_t k = 1; k < len; k++) {
      if ((s[i + k] & 0xc0) != 0x80) return (long)i;
      cp = cp << 6 | (s[i + k] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return (long)i;
    i += len;
  }
  return -1;
}

/* Code points of valid UTF-8: the bytes that are not 10xxxxxx. */
static size_t utf8_count(const unsigned char *s, size_t n) {
  size_t count = 0, i = 0;
#ifdef __wasm_simd128__
  const v128_t cont = wasm_i8x16_splat((int8_t)0xbf);
  while (i + 16 <= n) {
    v128_t acc = wasm_i8x16_splat(0);
    for (int r = 0; r < 255 && i + 16 <= n; r++, i += 16) /* each lane below 256 */
      acc = wasm_i8x16_sub(acc, wasm_i8x16_gt(wasm_v128_load(s + i), cont));
    v128_t sums = wasm_u32x4_extadd_pairwise_u16x8(wasm_u16x8_extadd_pairwise_u8x16(acc));
    count += (uint32_t)wasm_i32x4_extract_lane(sums, 0) + (uint32_t)wasm_i32x4_extract_lane(sums, 1) +
             (uint32_t)wasm_i32x4_extract_lane(sums, 2) + (uint32_t)wasm_i32x4_extract_lane(sums, 3);
  }
#endif
  for (; i < n; i++) count += (s[i] & 0xc0) != 0x80;
  return count;
}

/* ---- searching ----------------------------------------------------------- */

static long find_byte(const unsigned char *s, size_t n, unsigned char c) {
  size_t i = 0;
#ifdef __wasm_simd128__
  v128_t want = wasm_i8x16_splat((int8_t)c);
  for (; i + 16 <= n; i += 16) {
    uint32_t m = wasm_i8x16_bitmask(wasm_i8x16_eq(wasm_v128_load(s + i), want));
    if (m) return (long)(i + (size_t)__builtin_ctz(m));
  }
#endif
  for (; i < n; i++)
    if (s[i] == c) return (long)i;
  return -1;
}

/* strlen of a string with 16 readable bytes past its NUL. */
static size_t str_len(const char *s) {
  size_t i = 0;
#ifdef __wasm_simd128__
  for (;; i += 16) {
    v128_t v = wasm_v128_load(s + i);
    if (!wasm_i8x16_all_true(v)) return i + (size_t)__builtin_ctz(wasm_i8x16_bitmask(wasm_i8x16_eq(v, wasm_i8x16_splat(0))));
  }
#else
  while (s[i]) i++;
  return i;
#endif
}

/* ---- inputs -------------------------------------------------------------- */

/* Text in UTF-8: mostly ASCII words, some 2-, 3- and 4-byte characters. */
static size_t make_utf8(unsigned char *p, size_t cap) {
  size_t o = 0;
  while (o + 8 < cap) {
    uint32_t r = next() % 100, cp;
    if (r < 80) cp = 'a' + next() % 26;
    else if (r < 88) cp = ' ';
    else if (r < 94) cp = 0x80 + next() % 0x780;
    else if (r < 98) cp = 0x800 + next() % 0xd000; /* below the surrogates */
    else cp = 0x10000 + next() % 0x100000;
    if (cp < 0x80) p[o++] = (unsigned char)cp;
    else if (cp < 0x800) p[o++] = (unsigned char)(0xc0 | cp >> 6), p[o++] = (unsigned char)(0x80 | (cp & 0x3f));
    else if (cp < 0x10000) {
      p[o++] = (unsigned char)(0xe0 | cp >> 12);
      p[o++] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
      p[o++] = (unsigned char)(0x80 | (cp & 0x3f));
    } else {
      p[o++] = (unsigned char)(0xf0 | cp >> 18);
      p[o++] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
      p[o++] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
      p[o++] = (unsigned char)(0x80 | (cp & 0x3f));
    }
  }
  return o;
}

int main(void) {
  /* base64 round trips of random bytes, every length remainder */
  uint32_t total = 0;
  for (int round = 0; round < 40; round++) {
    size_t n = N - (size_t)round * 997 - (size_t)round % 3;
    for (size_t i = 0; i < n + 16; i++) input[i] = (unsigned char)next();
    size_t e = b64_encode(encoded, input, n);
    encoded[e] = 0;
    long d = b64_decode(decoded, encoded, e);
    int same = d == (long)n && memcmp(decoded, input, n) == 0;
    total = total * 31 + fnv(encoded, e);
    if (round % 8 == 0 || !same)
      printf("base64 %zu bytes: %zu chars, fnv %08x, tail %.8s, round trip %s\n", n, e, fnv(encoded, e),
             encoded + e - 8, same ? "ok" : "FAILED");
  }
  printf("base64 all rounds: %08x\n", total);
  printf("base64 'Many hands': ");
  const char *msg = "Many hands make light work.";
  memcpy(input, msg, strlen(msg) + 1);
  size_t e = b64_encode(encoded, input, strlen(msg));
  printf("%.*s\n", (int)e, encoded);

  /* bad characters at several places (each a 16-char block of its own) */
  size_t n = 3000;
  for (size_t i = 0; i < n + 16; i++) input[i] = (unsigned char)next();
  e = b64_encode(encoded, input, n);
  const size_t at[] = {0, 5, 15, 16, 17, 1000, 2391, 3995, 3999};
  const char bad[] = {'-', '_', ' ', '\n', '=', '@', '[', '`', '{'};
  for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
    char keep = encoded[at[k]];
    encoded[at[k]] = bad[k];
    printf("bad %#04x at %zu: decode gives %ld\n", bad[k], at[k], b64_decode(decoded, encoded, e));
    encoded[at[k]] = keep;
  }

  /* UTF-8: valid text, then single broken bytes */
  size_t u = make_utf8(input, N);
  printf("utf8 %zu bytes: check %ld, code points %zu\n", u, utf8_check(input, u), utf8_count(input, u));
  const struct {
    size_t at;
    unsigned char b[4];
    int len;
    const char *what;
  } breaks[] = {
      {100, {0x80}, 1, "lone continuation"},  {2000, {0xc0, 0xaf}, 2, "overlong 2-byte"},
      {3001, {0xe0, 0x80, 0xaf}, 3, "overlong 3-byte"}, {17, {0xed, 0xa0, 0x80}, 3, "surrogate"},
      {40000, {0xf4, 0x90, 0x80, 0x80}, 4, "above U+10FFFF"}, {55555, {0xff}, 1, "byte 0xff"},
      {31, {0xe2, 0x82}, 2, "truncated 3-byte"},
  };
  for (size_t k = 0; k < sizeof breaks / sizeof breaks[0]; k++) {
    unsigned char keep[64];
    size_t p = breaks[k].at;
    memcpy(keep, input + p, sizeof keep);
    memset(input + p, 'x', 8);
    memcpy(input + p, breaks[k].b, (size_t)breaks[k].len);
    printf("utf8 %s at %zu: check %ld\n", breaks[k].what, p, utf8_check(input, u));
    memcpy(input + p, keep, sizeof keep);
  }

  /* searching */
  memset(input, 'a', N);
  input[N] = 0;
  const size_t marks[] = {0, 1, 15, 16, 31, 4097, N - 1};
  for (size_t k = 0; k < sizeof marks / sizeof marks[0]; k++) {
    input[marks[k]] = 'Z';
    printf("find Z: %ld (placed at %zu)\n", find_byte(input, N, 'Z'), marks[k]);
    input[marks[k]] = 'a';
  }
  printf("find missing: %ld\n", find_byte(input, N, 'Q'));
  for (size_t len = 0; len < 40; len += 13) {
    memset(encoded, 'q', 64);
    encoded[len] = 0;
    printf("strlen %zu: %zu\n", len, str_len(encoded));
  }
  input[777] = 0;
  printf("strlen long: %zu\n", str_len((const char *)input));
  return 0;
}
