/* simd_compress.c: a small LZ77 compression library (hash-chain match
 * finder, LZ4-like token stream, overlapping copies) with CRC-32 and
 * Adler-32, run over generated inputs: text, runs, noise and a mix.  Each
 * input is compressed at three effort levels, decompressed and checked. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HASH_BITS 14
#define WINDOW 65535
#define MIN_MATCH 4

/* ---- checksums ---------------------------------------------------------- */

static uint32_t crc_table[256];

static void crc_init(void) {
  for (uint32_t n = 0; n < 256; n++) {
    uint32_t c = n;
    for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
    crc_table[n] = c;
  }
}

static uint32_t crc32(const uint8_t *p, size_t n) {
  uint32_t c = ~0u;
  for (size_t i = 0; i < n; i++) c = crc_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return ~c;
}

/* Adler-32 in blocks of 5552 bytes, the most that cannot overflow. */
static uint32_t adler32(const uint8_t *p, size_t n) {
  uint32_t a = 1, b = 0;
  while (n) {
    size_t k = n < 5552 ? n : 5552;
    n -= k;
    for (size_t i = 0; i < k; i++) {
      a += p[i];
      b += a;
    }
    p += k;
    a %= 65521;
    b %= 65521;
  }
  return b << 16 | a;
}

/* ---- compression -------------------------------------------------------- */

typedef struct {
  int32_t head[1 << HASH_BITS];
  int32_t chain[WINDOW + 1];
} matcher;

static uint32_t hash4(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return (v * 2654435761u) >> (32 - HASH_BITS);
}

static size_t match_length(const uint8_t *a, const uint8_t *b, size_t max) {
  size_t n = 0;
  while (n + 8 <= max) {
    uint64_t x, y;
    memcpy(&x, a + n, 8);
    memcpy(&y, b + n, 8);
    if (x != y) return n + (size_t)(__builtin_ctzll(x ^ y) / 8);
    n += 8;
  }
  while (n < max && a[n] == b[n]) n++;
  return n;
}

/* A length field: 15 in the token nibble means more bytes follow, each
 * adding up to 255. */
static uint8_t *put_length(uint8_t *out, size_t len) {
  for (len -= 15; len >= 255; len -= 255) *out++ = 255;
  *out++ = (uint8_t)len;
  return out;
}

static uint8_t *put_sequence(uint8_t *out, const uint8_t *lit, size_t nlit, size_t dist, size_t mlen) {
  uint8_t *token = out++;
  size_t mcode = mlen ? mlen - MIN_MATCH : 0;
  *token = (uint8_t)((nlit < 15 ? nlit : 15) << 4 | (mcode < 15 ? mcode : 15));
  if (nlit >= 15) out = put_length(out, nlit);
  memcpy(out, lit, nlit);
  out += nlit;
  if (!mlen) return out;
  *out++ = (uint8_t)dist;
  *out++ = (uint8_t)(dist >> 8);
  if (mcode >= 15) out = put_length(out, mcode);
  return out;
}

/* Greedy parse; effort bounds the chain steps per position. */
static size_t compress(matcher *m, const uint8_t *in, size_t n, uint8_t *out, int effort) {
  for (size_t i = 0; i < (1u << HASH_BITS); i++) m->head[i] = -1;
  uint8_t *o = out;
  size_t lit = 0, i = 0;
  while (i + MIN_MATCH <= n) {
    uint32_t h = hash4(in + i);
    size_t best = 0, best_dist = 0;
    int32_t cand = m->head[h];
    for (int step = 0; cand >= 0 && step < effort && i - (size_t)cand <= WINDOW; step++) {
      size_t len = match_length(in + cand, in + i, n - i);
      if (len > best) best = len, best_dist = i - (size_t)cand;
      cand = m->chain[cand & WINDOW];
    }
    m->chain[i & WINDOW] = m->head[h];
    m->head[h] = (int32_t)i;
    if (best < MIN_MATCH) {
      i++;
      continue;
    }
    o = put_sequence(o, in + lit, i - lit, best_dist, best);
    for (size_t k = i + 1; k < i + best && k + MIN_MATCH <= n; k++) {
      uint32_t hk = hash4(in + k);
      m->chain[k & WINDOW] = m->head[hk];
      m->head[hk] = (int32_t)k;
    }
    i += best;
    lit = i;
  }
  return (size_t)(put_sequence(o, in + lit, n - lit, 0, 0) - out);
}

static size_t get_length(const uint8_t **p, size_t len) {
  if (len != 15) return len;
  uint8_t b;
  do len += (b = *(*p)++);
  while (b == 255);
  return len;
}

/* Returns the decompressed size, or 0 on a corrupt stream. */
static size_t decompress(const uint8_t *in, size_t n, uint8_t *out, size_t cap) {
  const uint8_t *p = in, *end = in + n;
  uint8_t *o = out;
  while (p < end) {
    uint8_t token = *p++;
    size_t nlit = get_length(&p, token >> 4);
    if ((size_t)(end - p) < nlit || (size_t)(out + cap - o) < nlit) return 0;
    memcpy(o, p, nlit);
    o += nlit, p += nlit;
    if (p >= end) break;
    size_t dist = p[0] | (size_t)p[1] << 8;
    p += 2;
    size_t mlen = get_length(&p, token & 15) + MIN_MATCH;
    if (dist == 0 || dist > (size_t)(o - out) || (size_t)(out + cap - o) < mlen) return 0;
    for (size_t k = 0; k < mlen; k++) o[k] = o[k - dist]; /* may overlap */
    o += mlen;
  }
  return (size_t)(o - out);
}

/* ---- inputs ------------------------------------------------------------- */

static uint32_t seed = 4242;
static uint32_t next(void) {
  seed ^= seed << 13;
  seed ^= seed >> 17;
  seed ^= seed << 5;
  return seed;
}

static void make_input(int kind, uint8_t *buf, size_t n) {
  static const char *const words[] = {"lane ", "vector ", "compress ", "the ", "window ", "match ",
                                      "literal ", "hash ", "\n"};
  size_t at = 0;
  while (at < n) {
    switch (kind) {
    case 0: { /* text */
      const char *w = words[next() % 9];
      for (size_t i = 0; w[i] && at < n; i++) buf[at++] = (uint8_t)w[i];
      break;
    }
    case 1: { /* runs */
      uint8_t b = (uint8_t)next();
      for (size_t k = next() % 300; k-- && at < n;) buf[at++] = b;
      break;
    }
    case 2: buf[at++] = (uint8_t)next(); break; /* noise */
    default: /* numbers in a table */
      at += (size_t)snprintf((char *)buf + at, n - at, "%u,%u;", next() % 1000, next() % 50);
      break;
    }
  }
}

int main(void) {
  enum { SIZE = 200000 };
  static uint8_t in[SIZE], out[SIZE + SIZE / 8 + 64], back[SIZE];
  static matcher m;
  static const char *const kinds[] = {"text", "runs", "noise", "table"};
  crc_init();
  for (int kind = 0; kind < 4; kind++) {
    make_input(kind, in, SIZE);
    printf("%-5s crc32 %08x adler32 %08x\n", kinds[kind], crc32(in, SIZE), adler32(in, SIZE));
    for (int effort = 1; effort <= 64; effort *= 8) {
      size_t c = compress(&m, in, SIZE, out, effort);
      size_t d = decompress(out, c, back, SIZE);
      printf("  effort %2d: %6zu bytes (crc32 %08x), round trip %s\n", effort, c, crc32(out, c),
             d == SIZE && memcmp(in, back, SIZE) == 0 ? "ok" : "FAILED");
    }
  }
  out[5] ^= 0x40; /* a corrupt stream is refused or decodes to other bytes */
  size_t d = decompress(out, 100, back, SIZE);
  printf("corrupt: %zu bytes\n", d);
  return 0;
}
