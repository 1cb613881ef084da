/* map_align.c: maps called on arrays placed so that each copy of the map
 * kernel runs: 16-byte vectors (arrays on a 16-byte boundary), accesses
 * aligned to the element (arrays one element off), bytes (one byte off),
 * mixed, with lengths that leave elements after the whole vectors (n
 * default 1000003, from argv) and lengths below one vector.  Each output
 * array sits inside a buffer of guard bytes, and the hash covers the whole
 * buffer: a store outside the array would show. */
/* expect-gpu-launches: 30 */
#include "e2e.h"

/* Wasm leaves alignment to the run time; these let C say so. */
typedef float f32u __attribute__((aligned(1)));
typedef double f64u __attribute__((aligned(1)));
typedef short i16u __attribute__((aligned(1)));

__attribute__((noinline)) void k_axpb(int n, float a, float b, const f32u *x, f32u *y) {
  for (int i = 0; i < n; i++) y[i] = a * x[i] + b;
}

/* Reads the element it writes. */
__attribute__((noinline)) void k_inplace(int n, float a, f32u *y) {
  for (int i = 0; i < n; i++) y[i] = y[i] * a - 0.75f;
}

/* Two lanes per vector; reads its output. */
__attribute__((noinline)) void k_f64(int n, double c, const f64u *d, f64u *out) {
  for (int i = 0; i < n; i++) out[i] = d[i] * c + out[i];
}

/* u8 loads four to a word next to 16-byte f32 accesses. */
__attribute__((noinline)) void k_u8_f32(int n, const unsigned char *g, const f32u *f, f32u *h) {
  for (int i = 0; i < n; i++) h[i] = (float)g[i] * (1.0f / 255.0f) + f[i];
}

/* A load every element reads (y may alias it, so it stays in the loop). */
__attribute__((noinline)) void k_scale(int n, const f32u *scale, const f32u *x, f32u *y) {
  for (int i = 0; i < n; i++) y[i] = x[i] * scale[0];
}

/* u8 and i16 loads (a word and two words per vector of four). */
__attribute__((noinline)) void k_narrow(int n, const unsigned char *p, const i16u *h, int *q) {
  for (int i = 0; i < n; i++) q[i] = p[i] * 3 + h[i];
}

/* 2-D with a run-time row stride (elements). */
__attribute__((noinline)) void k_2d(int rows, int cols, int stride, const f32u *a, f32u *b) {
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) b[i * stride + j] = a[i * stride + j] * 0.5f + 1.0f;
}

enum { GUARD = 64 };

/* A buffer for n elements of size bytes plus guards; *at is its first
 * 16-byte boundary after the front guard.  Every byte is 0x30-0x4f or
 * 0xb0-0xcf, so floats read at any byte offset are finite and normal
 * (2^-31 to 2^32 in magnitude, f64 2^-255 to 2^256): no NaN payloads,
 * which Wasm leaves to the machine. */
static unsigned char *buffer(size_t n, size_t size, unsigned char **at, uint32_t *s) {
  size_t bytes = n * size + 2 * GUARD + 16;
  unsigned char *raw = e2e_alloc(bytes);
  for (size_t i = 0; i < bytes; i++) {
    uint32_t r = e2e_next(s);
    raw[i] = (unsigned char)(0x30 + (r & 0x1f) + ((r >> 5) & 1) * 0x80);
  }
  *at = (unsigned char *)(((uintptr_t)raw + GUARD + 15) & ~(uintptr_t)15);
  return raw;
}

static size_t buffer_bytes(size_t n, size_t size) { return n * size + 2 * GUARD + 16; }

/* Placements: byte offsets of (input, output) from 16-byte boundaries,
 * for elements of size bytes: both aligned, both one element off, one of
 * each, one byte off. */
static void offsets(size_t size, size_t in[4], size_t out[4]) {
  size_t i[4] = {0, size, 0, 1}, o[4] = {0, size, size, 0};
  for (int k = 0; k < 4; k++) in[k] = i[k], out[k] = o[k];
}

int main(int argc, char **argv) {
  int n = e2e_arg(argc, argv, 1, 1000003);
  int lengths[] = {n, n - 1, 17, 3};
  uint32_t s = 2024;
  unsigned char *xa, *ya, *da, *oa, *ga, *fa, *ha;
  unsigned char *xraw = buffer((size_t)n, 4, &xa, &s), *yraw = buffer((size_t)n, 4, &ya, &s);
  unsigned char *draw = buffer((size_t)n, 8, &da, &s), *oraw = buffer((size_t)n, 8, &oa, &s);
  unsigned char *graw = buffer((size_t)n, 1, &ga, &s), *fraw = buffer((size_t)n, 4, &fa, &s);
  unsigned char *hraw = buffer((size_t)n, 4, &ha, &s);
  size_t in[4], out[4];
  char name[64];
  for (int p = 0; p < 4; p++) {
    int len = lengths[p];
    offsets(4, in, out);
    k_axpb(len, 1.75f, -0.125f, (const f32u *)(xa + in[p]), (f32u *)(ya + out[p]));
    snprintf(name, sizeof name, "axpb len %d at +%zu/+%zu", len, in[p], out[p]);
    e2e_print_bytes(name, yraw, buffer_bytes((size_t)n, 4));
    k_inplace(len, 0.5f, (f32u *)(ya + out[p]));
    snprintf(name, sizeof name, "inplace len %d at +%zu", len, out[p]);
    e2e_print_bytes(name, yraw, buffer_bytes((size_t)n, 4));
    offsets(8, in, out);
    k_f64(len, 3.0e-3, (const f64u *)(da + in[p]), (f64u *)(oa + out[p]));
    snprintf(name, sizeof name, "f64 len %d at +%zu/+%zu", len, in[p], out[p]);
    e2e_print_bytes(name, oraw, buffer_bytes((size_t)n, 8));
    offsets(4, in, out);
    k_u8_f32(len, ga + in[p], (const f32u *)(fa + in[p]), (f32u *)(ha + out[p]));
    snprintf(name, sizeof name, "u8_f32 len %d at +%zu/+%zu", len, in[p], out[p]);
    e2e_print_bytes(name, hraw, buffer_bytes((size_t)n, 4));
    const f32u *scale = (const f32u *)(fa + out[p] + 12);
    k_scale(len, scale, (const f32u *)(xa + in[p]), (f32u *)(ha + out[p]));
    snprintf(name, sizeof name, "scale len %d at +%zu/+%zu", len, in[p], out[p]);
    e2e_print_bytes(name, hraw, buffer_bytes((size_t)n, 4));
    k_narrow(len, ga + in[p], (const i16u *)(xa + in[p]), (int *)(ha + out[p]));
    snprintf(name, sizeof name, "narrow len %d at +%zu/+%zu", len, in[p], out[p]);
    e2e_print_bytes(name, hraw, buffer_bytes((size_t)n, 4));
  }
  /* 2-D: rows of cols elements stride apart; an even stride keeps rows on
   * the boundary the first one has. */
  int cols = n / 1000 > 4 ? n / 1000 : 4, rows = 997;
  if (rows * (cols + 3) > n) rows = n / (cols + 3);
  int strides[] = {cols, cols + 3};
  size_t off2[] = {0, 4, 1};
  for (int t = 0; t < 2; t++)
    for (int o = 0; o < 3; o++) {
      k_2d(rows, cols, strides[t], (const f32u *)(xa + off2[o]), (f32u *)(ya + off2[o]));
      snprintf(name, sizeof name, "2d %dx%d stride %d at +%zu", rows, cols, strides[t], off2[o]);
      e2e_print_bytes(name, yraw, buffer_bytes((size_t)n, 4));
    }
  free(xraw), free(yraw), free(draw), free(oraw), free(graw), free(fraw), free(hraw);
  return 0;
}
