/* rt_libc.c: native equivalents of the C library's byte-wise string
 * routines that twasmc recognises in a module (compiler/low_libc.c).  Each
 * gives exactly the result of musl's C code (the difference of the first
 * differing bytes as unsigned values), reads only inside linear memory,
 * and reports when the Wasm code would have read past its end: the caller
 * then runs the module's own code, which traps where the spec says. */
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "twasm_abi.h"

/* Bit i set where byte i of the 16 at a and b differ, or (when nul) where
 * a's byte is 0. */
static inline uint32_t stop_mask16(const uint8_t *a, const uint8_t *b, int nul) {
#if defined(__SSE2__)
  __m128i x = _mm_loadu_si128((const __m128i *)a), y = _mm_loadu_si128((const __m128i *)b);
  uint32_t eq = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, y));
  uint32_t zero = nul ? (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_setzero_si128())) : 0;
  return (~eq & 0xffffu) | zero;
#else
  uint32_t m = 0;
  for (int i = 0; i < 16; i++) m |= (uint32_t)(a[i] != b[i] || (nul && a[i] == 0)) << i;
  return m;
#endif
}

static inline uint64_t load64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

static inline uint32_t load32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

static inline int32_t byte_diff(const uint8_t *a, const uint8_t *b, size_t k) {
  return (int32_t)a[k] - (int32_t)b[k];
}

/* Chunks of 16, then one chunk overlapping the previous, ending at n (the
 * bytes before its first difference were found equal already, so its
 * lowest differing index is the first of all; little-endian: lowest byte
 * first, hence ctz).  Below 16 bytes the same with two overlapping words
 * of 8 or 4.  Every read lies inside [0, n): B-tree keys often share a
 * long prefix, and a wide read beyond the range may touch a cache line the
 * comparison does not need (measured: slower than the byte loop on
 * kvstore's keys).  The overlapping last chunk replaced a loop of 8-byte
 * words and a last word (kvstore: 46 instructions a call before, see
 * docs/PERFORMANCE.md, issue 22). */
int32_t twasm_rt_memcmp(const uint8_t *base, uint32_t l, uint32_t r, uint32_t n) {
  const uint8_t *a = base + l, *b = base + r;
  if (n >= 16) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
      uint32_t m = stop_mask16(a + i, b + i, 0);
      if (m) return byte_diff(a, b, i + (size_t)__builtin_ctz(m));
    }
    if (i == n) return 0;
    size_t j = n - 16;
    uint32_t m = stop_mask16(a + j, b + j, 0);
    return m ? byte_diff(a, b, j + (size_t)__builtin_ctz(m)) : 0;
  }
  if (n >= 8) {
    uint64_t x = load64(a) ^ load64(b);
    if (x) return byte_diff(a, b, (size_t)__builtin_ctzll(x) / 8);
    x = load64(a + n - 8) ^ load64(b + n - 8);
    return x ? byte_diff(a, b, n - 8 + (size_t)__builtin_ctzll(x) / 8) : 0;
  }
  if (n >= 4) {
    uint32_t x = load32(a) ^ load32(b);
    if (x) return byte_diff(a, b, (size_t)__builtin_ctz(x) / 8);
    x = load32(a + n - 4) ^ load32(b + n - 4);
    return x ? byte_diff(a, b, n - 4 + (size_t)__builtin_ctz(x) / 8) : 0;
  }
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return byte_diff(a, b, i);
  return 0;
}

int64_t twasm_rt_strcmp(const uint8_t *base, uint64_t size, uint32_t l, uint32_t r) {
  const uint8_t *a = base + l, *b = base + r;
  /* Bytes readable at both: the Wasm code would trap at index lim. */
  uint32_t far = l > r ? l : r;
  uint64_t lim = far < size ? size - far : 0, i = 0;
  for (; i + 16 <= lim; i += 16) {
    uint32_t m = stop_mask16(a + i, b + i, 1);
    if (m) return byte_diff(a, b, i + (uint64_t)__builtin_ctz(m));
  }
  for (; i < lim; i++)
    if (a[i] != b[i] || a[i] == 0) return byte_diff(a, b, i);
  return TWASM_RT_LIBC_FALLBACK;
}

int64_t twasm_rt_strlen(const uint8_t *base, uint64_t size, uint32_t s) {
  uint64_t i = s;
#if defined(__SSE2__)
  /* The 16 bytes at s when they lie in memory (most strings end there:
   * strsort's words, mujs's names), then aligned chunks from the next
   * boundary (the bytes between were in the first).  This replaced a
   * byte loop up to the boundary: 6.4 M calls in strsort, ~20 fewer
   * instructions each (docs/PERFORMANCE.md, issue 22 round 3). */
  if (i + 16 <= size) {
    __m128i x = _mm_loadu_si128((const __m128i *)(base + i));
    uint32_t zero = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_setzero_si128()));
    if (zero) return (int64_t)__builtin_ctz(zero);
    i = (i + 16) & ~(uint64_t)15;
  }
#endif
  /* Bytes up to 16-byte alignment, then aligned chunks: memory's size is a
   * multiple of 16, so a chunk holding an in-bounds byte lies inside it. */
  for (; i % 16; i++) {
    if (i >= size) return TWASM_RT_LIBC_FALLBACK;
    if (!base[i]) return (int64_t)(i - s);
  }
  for (; i < size; i += 16) {
#if defined(__SSE2__)
    __m128i x = _mm_loadu_si128((const __m128i *)(base + i));
    uint32_t zero = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_setzero_si128()));
#else
    uint32_t zero = 0;
    for (int k = 0; k < 16; k++) zero |= (uint32_t)(base[i + k] == 0) << k;
#endif
    if (zero) return (int64_t)(i + (uint64_t)__builtin_ctz(zero) - s);
  }
  return TWASM_RT_LIBC_FALLBACK;
}
