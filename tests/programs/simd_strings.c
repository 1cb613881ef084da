/* simd_strings.c: string and byte code that -msimd128 vectorises (case
 * mapping, counting, searching, comparing, hex and checksum loops) over a
 * generated text with lines of every length. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_SIZE 100003

static char text[TEXT_SIZE + 1];
static char work[TEXT_SIZE + 1];

static uint32_t seed = 777;
static uint32_t next(void) {
  seed = seed * 1103515245u + 12345u;
  return (seed >> 16) & 0x7fff;
}

static const char *const words[] = {"vector", "Lane", "shuffle", "SWIZZLE", "bitmask", "a", "of",
                                    "saturate", "Wasm", "x86", "narrow", "widen", "q15", "pmin"};

/* Words, spaces, punctuation and newlines, NUL-terminated. */
static void make_text(void) {
  size_t at = 0;
  while (at < TEXT_SIZE) {
    const char *w = words[next() % (sizeof words / sizeof words[0])];
    for (size_t i = 0; w[i] && at < TEXT_SIZE; i++) text[at++] = w[i];
    if (at < TEXT_SIZE) text[at++] = next() % 11 == 0 ? '\n' : next() % 7 == 0 ? ',' : ' ';
  }
  text[TEXT_SIZE] = 0;
}

static uint32_t hash(const void *p, size_t n) {
  const uint8_t *b = p;
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 16777619u;
  return h;
}

static void to_upper(char *dst, const char *src, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char c = src[i];
    dst[i] = (c >= 'a' && c <= 'z') ? (char)(c - 32) : c;
  }
}

static size_t count_byte(const char *s, size_t n, char c) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) k += s[i] == c;
  return k;
}

static size_t count_class(const char *s, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) k += (unsigned char)(s[i] - 'A') < 26;
  return k;
}

/* Lengths of every line, summed in a histogram of length % 16. */
static void line_lengths(unsigned hist[16]) {
  const char *p = text;
  while (*p) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    hist[len % 16]++;
    p += len + (nl != NULL);
  }
}

static void hex_encode(char *dst, const unsigned char *src, size_t n) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    dst[2 * i] = digits[src[i] >> 4];
    dst[2 * i + 1] = digits[src[i] & 15];
  }
}

static void reverse(char *s, size_t n) {
  for (size_t i = 0; i < n / 2; i++) {
    char t = s[i];
    s[i] = s[n - 1 - i];
    s[n - 1 - i] = t;
  }
}

static int compare_words(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Splits a copy of the text at spaces and newlines and sorts the words. */
static void sort_words(void) {
  static char copy[TEXT_SIZE + 1];
  static const char *list[TEXT_SIZE / 2];
  size_t n = 0;
  memcpy(copy, text, sizeof copy);
  for (char *tok = strtok(copy, " \n,"); tok; tok = strtok(NULL, " \n,")) list[n++] = tok;
  qsort(list, n, sizeof list[0], compare_words);
  size_t distinct = n ? 1 : 0;
  for (size_t i = 1; i < n; i++) distinct += strcmp(list[i], list[i - 1]) != 0;
  printf("words %zu distinct %zu first %s last %s\n", n, distinct, list[0], list[n - 1]);
}

/* Adler-32 and a byte-wise sum of squares. */
static void checksums(void) {
  uint32_t a = 1, b = 0;
  for (size_t i = 0; i < TEXT_SIZE; i++) {
    a = (a + (unsigned char)text[i]) % 65521;
    b = (b + a) % 65521;
  }
  uint64_t squares = 0;
  for (size_t i = 0; i < TEXT_SIZE; i++) squares += (unsigned)(unsigned char)text[i] * (unsigned char)text[i];
  printf("adler32 %08x squares %llu\n", (b << 16) | a, (unsigned long long)squares);
}

int main(void) {
  make_text();
  size_t n = strlen(text);
  printf("length %zu hash %08x\n", n, hash(text, n));
  to_upper(work, text, n);
  printf("upper %08x\n", hash(work, n));
  printf("spaces %zu newlines %zu commas %zu capitals %zu\n", count_byte(text, n, ' '),
         count_byte(text, n, '\n'), count_byte(text, n, ','), count_class(text, n));
  unsigned hist[16] = {0};
  line_lengths(hist);
  for (int i = 0; i < 16; i++) printf("%u%c", hist[i], i == 15 ? '\n' : ' ');
  const char *hit = strstr(text, "saturate q15");
  printf("strstr at %ld\n", hit ? (long)(hit - text) : -1L);
  printf("memchr x at %ld\n", (long)((const char *)memchr(text, 'x', n) - text));
  printf("memcmp %d %d\n", memcmp(text, text + 1, 64) > 0, memcmp(text, text, n));
  static char hex[2 * 4096 + 1];
  hex_encode(hex, (const unsigned char *)text + 1000, 4096);
  printf("hex %08x %.16s\n", hash(hex, 2 * 4096), hex);
  memcpy(work, text, n);
  reverse(work, n);
  printf("reversed %08x\n", hash(work, n));
  for (size_t i = 0; i < n; i++) work[i] = (char)tolower((unsigned char)text[i]);
  printf("tolower %08x\n", hash(work, n));
  checksums();
  sort_words();
  return 0;
}
