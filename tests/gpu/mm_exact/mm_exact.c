/* mm_exact.c: the exact matmul kernel of ptx/ptx_matmul.c on a real GPU:
 * every checked element bit-identical to a CPU loop that adds the products
 * in source order, one rounding per multiply and per add (f32, f64) or
 * wrapping (i32, i8 -> i32), for odd sizes, non-unit leading dimensions,
 * column-major and misaligned matrices, accumulation into C (with a -0
 * that a padded 0*0 would turn into +0), a grid smaller than the tiles,
 * N = 1024 fully and N = 4096 on sampled rows; then timings, best of 5
 * (wall clock around the synchronising launch; `--time` after the folder:
 * timings only).  Loads the PTX that mm_exact_gen wrote into the folder
 * argv[1].  Without a GPU it prints "skipped: <reason>".  Built here (no
 * CUDA headers):
 *   gcc -std=c11 -D_GNU_SOURCE -O2 -ffp-contract=off -Iinclude -Iruntime \
 *       tests/gpu/mm_exact/mm_exact.c runtime/cu_*.c -ldl -lpthread -lm -o mm_exact */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cu.h"

#define POOL_BYTES (640ull << 20)
#define TILE 128                 /* C per block, as the generator's launch says */

static int failures;
static unsigned char *pool;      /* managed memory: kernels get offsets into it */
static const char *ptx_dir;

#define EXPECT(cond, ...)                                     \
  do {                                                        \
    if (!(cond)) {                                            \
      failures++;                                             \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      printf(__VA_ARGS__);                                    \
      printf("\n");                                           \
    }                                                         \
  } while (0)

typedef enum { T_F32, T_F64, T_I32, T_S8, T_U8 } elem_type;
static const unsigned ab_bytes[] = {4, 8, 4, 1, 1}, c_bytes[] = {4, 8, 4, 4, 4};

/* Element (r, c) at byte off + (r * rs + c * cs) * size. */
typedef struct {
  int64_t off, rs, cs;
} layout;

typedef struct {
  const char *kernel;            /* NAME of NAME.ptx */
  elem_type type;
  bool general;                  /* kernel takes row and column strides */
  bool accumulate;
  int64_t m, n, k;
  layout a, b, c;
  uint32_t grid_x, grid_y;       /* 0: one block per tile */
} mm_run;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* ---- kernels ------------------------------------------------------------ */

typedef struct {
  const char *name;
  cu_kernel k;
  bool loaded;
} kernel_slot;

static kernel_slot kernels[32];

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = calloc(1, (size_t)len + 1);
  size_t got = fread(text, 1, (size_t)len, f);
  fclose(f);
  text[got] = '\0';
  return text;
}

/* The kernel NAME from NAME.ptx, loaded once; NULL (a failure) when it
 * cannot be. */
static const cu_kernel *kernel(const char *name) {
  unsigned i = 0;
  for (; i < 32 && kernels[i].name; i++)
    if (!strcmp(kernels[i].name, name)) return kernels[i].loaded ? &kernels[i].k : NULL;
  if (i == 32) return NULL;
  kernels[i].name = name;
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.ptx", ptx_dir, name);
  char *text = read_file(path);
  if (!text) {
    EXPECT(false, "cannot read %s", path);
    return NULL;
  }
  int sm = 0, major = 0, minor = 0;
  const char *t = strstr(text, "\n.target sm_"), *v = strstr(text, "\n.version ");
  if (!t || !v || sscanf(t, "\n.target sm_%d", &sm) != 1 ||
      sscanf(v, "\n.version %d.%d", &major, &minor) != 2) {
    EXPECT(false, "%s: no .target or .version", path);
    return NULL;
  }
  cu_ptx set[] = {{sm, major * 10 + minor, text}};
  cu_module *m = NULL;
  cu_error err;
  kernels[i].loaded = cu_module_load(set, 1, &m, &err) && cu_module_kernel(m, name, &kernels[i].k, &err);
  EXPECT(kernels[i].loaded, "%s: %s", name, err.message);
  return kernels[i].loaded ? &kernels[i].k : NULL;
}

static bool launch(const mm_run *r) {
  const cu_kernel *k = kernel(r->kernel);
  if (!k) return false;
  void *mem = pool;
  int64_t v[12] = {r->m, r->n, r->k, r->a.off, r->b.off, r->c.off};
  unsigned n = 6;
  if (r->general) {
    const layout *ls[3] = {&r->a, &r->b, &r->c};
    for (unsigned i = 0; i < 3; i++) {
      v[n++] = ls[i]->rs;
      v[n++] = ls[i]->cs;
    }
  } else {
    v[n++] = r->a.rs;
    v[n++] = r->b.rs;
    v[n++] = r->c.rs;
  }
  void *params[13] = {&mem};
  for (unsigned i = 0; i < n; i++) params[1 + i] = &v[i];
  cu_range ranges[] = {{pool, POOL_BYTES}};
  cu_args args = {.params = params, .ranges = ranges, .nranges = 1};
  cu_dim3 grid = {r->grid_x ? r->grid_x : (uint32_t)((r->n + TILE - 1) / TILE),
                  r->grid_y ? r->grid_y : (uint32_t)((r->m + TILE - 1) / TILE), 1};
  if (!grid.x) grid.x = 1;
  if (!grid.y) grid.y = 1;
  cu_error err;
  bool ok = cu_launch(k, grid, (cu_dim3){16, 16, 1}, 0, &args, &err);
  EXPECT(ok, "%s: %s", r->kernel, err.message);
  return ok;
}

/* ---- data and the CPU reference ----------------------------------------- */

/* f32/f64: random sign, mantissa and exponent in [-8, 8], 1 in 16 a zero
 * of either sign: sums cancel and round, so any change of order shows. */
static void fill_element(elem_type t, unsigned char *p) {
  uint64_t r = next_rand();
  bool zero = (r & 15) == 0;
  double mag = ldexp(1.0 + (double)(r >> 12 & 0xffffff) / 16777216.0, (int)(r >> 40 & 15) - 8);
  double x = zero ? 0.0 : mag;
  if (r >> 63) x = -x;
  switch (t) {
  case T_F32: { float f = (float)x; memcpy(p, &f, 4); break; }
  case T_F64: { double d = x * (1.0 + (double)(next_rand() >> 40) * 0x1p-30); memcpy(p, &d, 8); break; }
  case T_I32: { uint32_t u = (uint32_t)(r >> 20); memcpy(p, &u, 4); break; }
  case T_S8: case T_U8: *p = (unsigned char)(r >> 24); break;
  }
}

static unsigned char *at(const layout *l, unsigned size, int64_t r, int64_t c) {
  return pool + l->off + (r * l->rs + c * l->cs) * size;
}

static void fill(const mm_run *r) {
  unsigned s = ab_bytes[r->type];
  for (int64_t i = 0; i < r->m; i++)
    for (int64_t k = 0; k < r->k; k++) fill_element(r->type, at(&r->a, s, i, k));
  for (int64_t k = 0; k < r->k; k++)
    for (int64_t j = 0; j < r->n; j++) fill_element(r->type, at(&r->b, s, k, j));
  elem_type ct = r->type == T_S8 || r->type == T_U8 ? T_I32 : r->type;
  for (int64_t i = 0; i < r->m; i++)
    for (int64_t j = 0; j < r->n; j++) {
      if (r->accumulate) fill_element(ct, at(&r->c, c_bytes[r->type], i, j));
      else memset(at(&r->c, c_bytes[r->type], i, j), 0xAB, c_bytes[r->type]);
    }
}

/* Row 0 of A all -0, column 0 of B positive, C[0][0] -0 (accumulating
 * runs): every product of C[0][0] is -0, so it must stay -0; one extra
 * padded 0*0 (+0) would make it +0. */
static void plant_negative_zeros(const mm_run *r) {
  unsigned s = ab_bytes[r->type];
  for (int64_t k = 0; k < r->k; k++) {
    unsigned char *a = at(&r->a, s, 0, k), *b = at(&r->b, s, k, 0);
    b[s - 1] &= 0x7f;            /* little-endian: the sign bit is in the last byte */
    if (r->type == T_F32) memcpy(a, &(float){-0.0f}, 4);
    else memcpy(a, &(double){-0.0}, 8);
  }
  if (r->type == T_F32) memcpy(at(&r->c, s, 0, 0), &(float){-0.0f}, 4);
  else memcpy(at(&r->c, s, 0, 0), &(double){-0.0}, 8);
}

/* The float loop of the source for element type T (float, double), one
 * rounding per multiply and per add (built with -ffp-contract=off); the
 * result's bits in the low bytes of a uint64_t. */
#define SOURCE_LOOP(T)                                \
  do {                                                \
    T acc = 0, a, b;                                  \
    if (r->accumulate) memcpy(&acc, &old, sizeof acc); \
    for (int64_t k = 0; k < r->k; k++) {              \
      memcpy(&a, at(&r->a, s, i, k), sizeof a);       \
      memcpy(&b, at(&r->b, s, k, j), sizeof b);       \
      T p = a * b;                                    \
      acc = acc + p;                                  \
    }                                                 \
    uint64_t bits = 0;                                \
    memcpy(&bits, &acc, sizeof acc);                  \
    return bits;                                      \
  } while (0)

/* C[i][j] as the source loop computes it, as bits; `old` is the C value
 * before the launch (accumulate). */
static uint64_t reference(const mm_run *r, int64_t i, int64_t j, uint64_t old) {
  unsigned s = ab_bytes[r->type];
  switch (r->type) {
  case T_F32: SOURCE_LOOP(float);
  case T_F64: SOURCE_LOOP(double);
  default: {
    uint32_t acc = r->accumulate ? (uint32_t)old : 0, a, b;
    for (int64_t k = 0; k < r->k; k++) {
      if (r->type == T_I32) {
        memcpy(&a, at(&r->a, s, i, k), 4);
        memcpy(&b, at(&r->b, s, k, j), 4);
      } else if (r->type == T_S8) {
        a = (uint32_t)(int32_t)(int8_t)*at(&r->a, s, i, k);
        b = (uint32_t)(int32_t)(int8_t)*at(&r->b, s, k, j);
      } else {
        a = *at(&r->a, s, i, k);
        b = *at(&r->b, s, k, j);
      }
      acc += a * b;
    }
    return acc;
  }
  }
}

/* C[i][j] as bits, from a copy of C that starts at its element (0, 0). */
static uint64_t read_c(const mm_run *r, const unsigned char *c00, int64_t i, int64_t j) {
  uint64_t v = 0;
  memcpy(&v, c00 + (i * r->c.rs + j * r->c.cs) * c_bytes[r->type], c_bytes[r->type]);
  return v;
}

static const char *type_name(elem_type t) {
  static const char *names[] = {"f32", "f64", "i32", "s8", "u8"};
  return names[t];
}

/* Fills, launches and compares rows (all when rows == 0, else `rows`
 * random ones); prints one line. */
static void check(const char *what, mm_run r, int64_t rows, bool negative_zeros) {
  fill(&r);
  if (negative_zeros) plant_negative_zeros(&r);
  /* The C before the launch, for accumulating references. */
  uint64_t span = (uint64_t)(((r.m - 1) * r.c.rs + (r.n - 1) * r.c.cs + 1) * c_bytes[r.type]);
  unsigned char *old = malloc(span);
  memcpy(old, pool + r.c.off, span);
  cu_error err;
  EXPECT(cu_prefetch(pool, POOL_BYTES, &err), "%s", err.message);
  if (!launch(&r)) {
    free(old);
    return;
  }
  int64_t wrong = 0, checked = 0, nrows = rows ? rows : r.m;
  for (int64_t s = 0; s < nrows; s++) {
    int64_t i = rows ? (int64_t)(next_rand() % (uint64_t)r.m) : s;
    if (negative_zeros && s == 0) i = 0;
    for (int64_t j = 0; j < r.n; j++, checked++) {
      uint64_t want = reference(&r, i, j, read_c(&r, old, i, j));
      uint64_t got = read_c(&r, pool + r.c.off, i, j);
      if (got != want && wrong++ < 3)
        printf("  %s C[%lld][%lld] = 0x%llx, want 0x%llx\n", what, (long long)i, (long long)j,
               (unsigned long long)got, (unsigned long long)want);
    }
  }
  if (negative_zeros) {
    uint64_t sign = r.type == T_F32 ? 0x80000000ull : 0x8000000000000000ull;
    EXPECT(read_c(&r, pool + r.c.off, 0, 0) == sign, "%s: C[0][0] is not -0", what);
  }
  free(old);
  EXPECT(wrong == 0, "%s: %lld of %lld elements differ", what, (long long)wrong, (long long)checked);
  printf("%-34s %-4s %5lldx%5lldx%5lld: %s (%lld elements, %s)\n", what, type_name(r.type),
         (long long)r.m, (long long)r.n, (long long)r.k, wrong ? "WRONG" : "bit-identical",
         (long long)checked, rows ? "sampled rows" : "all");
}

/* Row-major A, B, C with leading dimensions m..+pad, packed one after the
 * other at 256-byte boundaries plus `skew` bytes for A. */
static mm_run row_major(const char *kernel, elem_type t, int64_t m, int64_t n, int64_t k,
                        int64_t pad, int64_t skew) {
  mm_run r = {kernel, t, false, false, m, n, k, {0}, {0}, {0}, 0, 0};
  r.a = (layout){256 + skew, k + pad, 1};
  int64_t end = r.a.off + m * r.a.rs * ab_bytes[t];
  r.b = (layout){(end + 255) / 256 * 256, n + pad, 1};
  end = r.b.off + k * r.b.rs * ab_bytes[t];
  r.c = (layout){(end + 255) / 256 * 256, n + pad, 1};
  return r;
}

/* Column-major everything: element (r, c) at r + c * ld. */
static mm_run col_major(const char *kernel, elem_type t, int64_t m, int64_t n, int64_t k) {
  mm_run r = {kernel, t, true, true, m, n, k, {0}, {0}, {0}, 0, 0};
  r.a = (layout){256, 1, m + 3};
  int64_t end = r.a.off + k * r.a.cs * ab_bytes[t];
  r.b = (layout){(end + 255) / 256 * 256, 1, k + 5};
  end = r.b.off + n * r.b.cs * ab_bytes[t];
  r.c = (layout){(end + 255) / 256 * 256, 1, m + 1};
  return r;
}

static mm_run acc(mm_run r, const char *kernel) {
  r.kernel = kernel;
  r.accumulate = true;
  return r;
}

/* ---- timing --------------------------------------------------------------- */

/* Accumulating kernels are timed only: C grows at every launch. */
static void bench(const char *kernel, elem_type t, bool accumulate, int64_t n, int reps) {
  mm_run r = row_major(kernel, t, n, n, n, 0, 0);
  r.accumulate = accumulate;
  fill(&r);
  cu_error err;
  EXPECT(cu_prefetch(pool, POOL_BYTES, &err), "%s", err.message);
  double best = INFINITY;
  launch(&r);
  for (int i = 0; i < reps; i++) {
    double t0 = now_s();
    if (!launch(&r)) return;
    double dt = now_s() - t0;
    if (dt < best) best = dt;
  }
  /* One sampled row checked, so a fast wrong variant cannot pass. */
  int64_t wrong = 0, i = (int64_t)(next_rand() % (uint64_t)n);
  for (int64_t j = 0; j < n && !accumulate; j += 7)
    wrong += read_c(&r, pool + r.c.off, i, j) != reference(&r, i, j, 0);
  EXPECT(wrong == 0, "%s %lld: %lld sampled elements differ", kernel, (long long)n, (long long)wrong);
  printf("%-14s %-4s N=%5lld: %8.3f ms  %6.2f %s%s\n", kernel, type_name(t), (long long)n,
         best * 1e3, 2.0 * (double)n * (double)n * (double)n / best / 1e12,
         t == T_F32 || t == T_F64 ? "TFLOP/s" : "TOPS", wrong ? "  WRONG" : "");
}

/* ---- main ----------------------------------------------------------------- */

static void correctness(void) {
  check("row-major, ld+3", row_major("mm_f32", T_F32, 1000, 999, 1037, 3, 0), 0, false);
  check("accumulate, -0 kept", acc(row_major("mm_f32", T_F32, 17, 33, 65, 0, 0), "mm_f32_acc"), 0, true);
  check("accumulate, ld+1", acc(row_major("mm_f32", T_F32, 1000, 999, 1037, 1, 0), "mm_f32_acc"), 0, false);
  check("column-major, general strides", col_major("mm_f32_gen", T_F32, 333, 517, 1001), 0, false);
  check("A misaligned by 2 bytes", row_major("mm_f32", T_F32, 129, 130, 131, 0, 2), 0, false);
  mm_run small_grid = row_major("mm_f32", T_F32, 1000, 999, 1037, 0, 0);
  small_grid.grid_x = 3;
  small_grid.grid_y = 2;
  check("grid 3x2 strides over 8x8 tiles", small_grid, 64, false);
  check("K = 0", row_major("mm_f32", T_F32, 5, 7, 0, 0, 0), 0, false);
  check("1x1x1", row_major("mm_f32", T_F32, 1, 1, 1, 0, 0), 0, false);
  check("1x300x9", row_major("mm_f32", T_F32, 1, 300, 9, 2, 0), 0, false);
  check("sm_80 PTX", row_major("mm_f32_sm80", T_F32, 1000, 999, 1037, 3, 0), 64, false);
  check("sm_75 PTX", row_major("mm_f32_sm75", T_F32, 1000, 999, 1037, 3, 0), 64, false);
  check("N = 1024", row_major("mm_f32", T_F32, 1024, 1024, 1024, 0, 0), 0, false);
  check("N = 4096", row_major("mm_f32", T_F32, 4096, 4096, 4096, 0, 0), 8, false);

  check("row-major, ld+3", row_major("mm_f64", T_F64, 1000, 999, 1037, 3, 0), 0, false);
  check("accumulate, -0 kept", acc(row_major("mm_f64", T_F64, 17, 33, 65, 0, 0), "mm_f64_acc"), 0, true);
  check("N = 1024", row_major("mm_f64", T_F64, 1024, 1024, 1024, 0, 0), 0, false);
  check("N = 4096", row_major("mm_f64", T_F64, 4096, 4096, 4096, 0, 0), 8, false);

  check("row-major, ld+3, wrapping", row_major("mm_i32", T_I32, 1000, 999, 1037, 3, 0), 0, false);
  check("column-major, accumulate", col_major("mm_i32_gen", T_I32, 333, 517, 1001), 0, false);
  check("N = 1024", row_major("mm_i32", T_I32, 1024, 1024, 1024, 0, 0), 0, false);
  check("N = 4096", row_major("mm_i32", T_I32, 4096, 4096, 4096, 0, 0), 8, false);

  check("A off by 1 byte", row_major("mm_s8", T_S8, 1000, 999, 1037, 0, 1), 0, false);
  check("accumulate, A off by 3", acc(row_major("mm_u8_acc", T_U8, 333, 1001, 517, 1, 3), "mm_u8_acc"), 0, false);
  check("N = 4096", row_major("mm_s8", T_S8, 4096, 4096, 4096, 0, 0), 8, false);
}

static void timings(void) {
  for (int64_t n = 1024; n <= 4096; n *= 2) bench("mm_f32", T_F32, false, n, 5);
  bench("mm_f32_acc", T_F32, true, 4096, 5);
  bench("mm_f64", T_F64, false, 4096, 3);
  bench("mm_i32", T_I32, false, 4096, 3);
  bench("mm_s8", T_S8, false, 4096, 3);
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  setenv("TWASM_GPU_MEM_CAP", "1G", 0);
  ptx_dir = argc > 1 ? argv[1] : ".";
  bool only_time = argc > 2 && !strcmp(argv[2], "--time");
  if (!cu_available()) {
    printf("skipped: %s\n", cu_unavailable_reason());
    return 0;
  }
  const cu_device_info *d = cu_device();
  printf("device: %s sm_%d, driver %d\n", d->name, d->cc, d->driver_version);
  cu_error err;
  if (!cu_alloc_managed(POOL_BYTES, (void **)&pool, &err)) {
    printf("FAIL: managed memory: %s\n", err.message);
    return 1;
  }
  if (!only_time) correctness();
  timings();
  if (failures) {
    printf("FAILED: %d checks\n", failures);
    return 1;
  }
  printf("passed\n");
  return 0;
}
