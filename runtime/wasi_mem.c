/* wasi_mem.c: bounds-checked access to the calling instance's memory. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"
#include "wasi_internal.h"

bool wasi_mem_range(const wasi_call *c, uint32_t ptr, uint64_t len, uint8_t **out) {
  if ((uint64_t)ptr > c->mem_size || len > c->mem_size - ptr) return false;
  *out = c->mem + ptr;
  /* System calls fail on write-protected pages instead of faulting. */
  rt_resident_touch(*out, len);
  return true;
}

/* WASI is little-endian whatever the host is. */
void wasi_put_u16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}

void wasi_put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

void wasi_put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

bool wasi_store_u8(const wasi_call *c, uint32_t ptr, uint8_t v) {
  uint8_t *p;
  if (!wasi_mem_range(c, ptr, 1, &p)) return false;
  *p = v;
  return true;
}

bool wasi_store_u16(const wasi_call *c, uint32_t ptr, uint16_t v) {
  uint8_t *p;
  if (!wasi_mem_range(c, ptr, 2, &p)) return false;
  wasi_put_u16(p, v);
  return true;
}

bool wasi_store_u32(const wasi_call *c, uint32_t ptr, uint32_t v) {
  uint8_t *p;
  if (!wasi_mem_range(c, ptr, 4, &p)) return false;
  wasi_put_u32(p, v);
  return true;
}

bool wasi_store_u64(const wasi_call *c, uint32_t ptr, uint64_t v) {
  uint8_t *p;
  if (!wasi_mem_range(c, ptr, 8, &p)) return false;
  wasi_put_u64(p, v);
  return true;
}

bool wasi_load_u32(const wasi_call *c, uint32_t ptr, uint32_t *v) {
  uint8_t *p;
  if (!wasi_mem_range(c, ptr, 4, &p)) return false;
  *v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  return true;
}

bool wasi_load_u64(const wasi_call *c, uint32_t ptr, uint64_t *v) {
  uint32_t lo, hi;
  if (ptr > UINT32_MAX - 4 || !wasi_load_u32(c, ptr, &lo) || !wasi_load_u32(c, ptr + 4, &hi))
    return false;
  *v = (uint64_t)hi << 32 | lo;
  return true;
}

uint32_t wasi_mem_iovecs(const wasi_call *c, uint32_t iovs, uint32_t n, struct iovec **out) {
  uint8_t *raw;
  if (n > IOV_MAX) return WASI_EINVAL;
  if (!wasi_mem_range(c, iovs, (uint64_t)n * 8u, &raw)) return WASI_EFAULT;
  struct iovec *v = malloc((n ? n : 1) * sizeof *v);
  if (!v) return WASI_ENOMEM;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t ptr, len;
    uint8_t *base;
    wasi_load_u32(c, iovs + 8 * i, &ptr);
    wasi_load_u32(c, iovs + 8 * i + 4, &len);
    if (!wasi_mem_range(c, ptr, len, &base)) {
      free(v);
      return WASI_EFAULT;
    }
    v[i] = (struct iovec){.iov_base = base, .iov_len = len};
  }
  *out = v;
  return WASI_ESUCCESS;
}

uint32_t wasi_mem_path(const wasi_call *c, uint32_t ptr, uint32_t len, char **out) {
  uint8_t *src;
  if (!wasi_mem_range(c, ptr, len, &src)) return WASI_EFAULT;
  /* A NUL inside would silently cut the path the guest asked for. */
  if (memchr(src, 0, len)) return WASI_EILSEQ;
  char *s = malloc((size_t)len + 1);
  if (!s) return WASI_ENOMEM;
  memcpy(s, src, len);
  s[len] = 0;
  *out = s;
  return WASI_ESUCCESS;
}
