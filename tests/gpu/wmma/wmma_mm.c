/* wmma_mm.c: the tensor-core matmul kernels of ptx/ptx_wmma.c on a real
 * GPU: int8 results bit-identical to a wrapping CPU reference (lone and
 * batched 16x16x16, odd sizes through the element-copy and the cp.async
 * bodies, 4096^3 sampled, i32 overflow), tf32 within its documented bound
 * of an f64 reference (odd sizes through both bodies, 4096^3 sampled), and
 * timings (wall clock around the synchronising launch).
 * Loads the PTX files that ptx_generate wrote into the directory given as
 * argv[1] by wmma_gen.c (mm_s8.ptx, mm_u8.ptx, mm_tf32.ptx: sm_90;
 * mm_s8_exact.ptx: the exact kernel); with argv[2] "bench", only the
 * 4096^3 timings (for comparing variants of the generator); with "wgmma"
 * the sm_90a kernels (mm_*_90a.ptx) tested and timed next to the sm_90
 * ones ("wgmma-bench": timings only); with "tc" the packed products
 * (NAME_pack + NAME_tc of the same files, launched by runtime/rt_tc.c)
 * tested at aligned, odd, unaligned and overflowing shapes and timed next
 * to the sm_90a main entry ("tc-bench": timings only).  Without a
 * GPU it prints "skipped: <reason>".  Built here:
 *   gcc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Iruntime tests/gpu/wmma/wmma_mm.c \
 *       runtime/cu_*.c runtime/rt_tc.c -ldl -lpthread -lm -o wmma_mm */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cu.h"
#include "rt_tc.h"

#define POOL_BYTES (448ull << 20)
#define TILE 128

static int failures;
static unsigned char *pool;  /* managed memory: kernels get offsets into it */

#define EXPECT(cond, ...)                                     \
  do {                                                        \
    if (!(cond)) {                                            \
      failures++;                                             \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      printf(__VA_ARGS__);                                    \
      printf("\n");                                           \
    }                                                         \
  } while (0)

typedef struct {
  int64_t m, n, k, a, b, c;  /* the kernel's params: sizes, byte offsets */
  int64_t bias;              /* mm_s8_bias: the bias row's offset (7th param) */
} mm_args;

/* Set by the tests of mm_s8u8 (B read unsigned) and mm_s8_bias. */
static bool b_unsigned, with_bias, with_acc;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

/* Set by run_tc: launches go to the packed product of this module pair
 * (the kernel argument then only names the case). */
static const rt_tc *use_tc;
static unsigned tc_elem_bytes;

static bool launch(const cu_kernel *k, const mm_args *p) {
  void *mem = pool;
  mm_args v = *p;
  void *params[] = {&mem, &v.m, &v.n, &v.k, &v.a, &v.b, &v.c, &v.bias};
  cu_range ranges[] = {{pool, POOL_BYTES}};
  cu_args args = {.params = params, .ranges = ranges, .nranges = 1};
  if (use_tc) {
    cu_error err;
    bool ok = rt_tc_launch(use_tc, p->m, p->n, p->k, tc_elem_bytes, params, with_bias ? 7 : 6, &args, &err);
    EXPECT(ok, "%s", err.message);
    return ok;
  }
  cu_dim3 grid = {(uint32_t)((p->n + TILE - 1) / TILE), (uint32_t)((p->m + TILE - 1) / TILE), 1};
  cu_dim3 block = {16, 16, 1};
  cu_error err;
  bool ok = cu_launch(k, grid, block, 0, &args, &err);
  EXPECT(ok, "%s", err.message);
  return ok;
}

/* Seconds per launch, best of reps (after one warm-up launch). */
static double time_launch(const cu_kernel *k, const mm_args *p, int reps) {
  double best = INFINITY;
  launch(k, p);
  for (int r = 0; r < reps; r++) {
    double t0 = now_s();
    if (!launch(k, p)) return NAN;
    double t = now_s() - t0;
    if (t < best) best = t;
  }
  return best;
}

/* C[i][j] of an int8 matmul in wrapping uint32 arithmetic, as Wasm does. */
static uint32_t ref_i8(const mm_args *p, bool sgn, int64_t i, int64_t j) {
  const unsigned char *a = pool + p->a + i * p->k, *b = pool + p->b + j;
  uint32_t acc = with_bias ? ((const uint32_t *)(pool + p->bias))[j] : with_acc ? 0xABABABABu : 0;
  for (int64_t k = 0; k < p->k; k++) {
    uint32_t x = sgn ? (uint32_t)(int32_t)(int8_t)a[k] : a[k];
    uint32_t y = sgn && !b_unsigned ? (uint32_t)(int32_t)(int8_t)b[k * p->n] : b[k * p->n];
    acc += x * y;
  }
  return acc;
}

/* Checks all elements, or `samples` random ones; returns wrong ones. */
static int64_t check_i8(const mm_args *p, bool sgn, int64_t samples) {
  const uint32_t *c = (const uint32_t *)(pool + p->c);
  int64_t wrong = 0, total = samples ? samples : p->m * p->n;
  for (int64_t s = 0; s < total; s++) {
    int64_t i = samples ? next_rand() % p->m : s / p->n, j = samples ? next_rand() % p->n : s % p->n;
    uint32_t want = ref_i8(p, sgn, i, j);
    if (c[i * p->n + j] != want && wrong++ < 3)
      printf("  C[%lld][%lld] = %u, want %u\n", (long long)i, (long long)j, c[i * p->n + j], want);
  }
  return wrong;
}

typedef enum { FILL_RANDOM, FILL_EXTREME } fill_kind;

/* A at a, B after it, C after that; `skew` bytes shift A off 16-byte
 * alignment to force the element-by-element path.  FILL_EXTREME makes 7 of
 * 8 bytes `extreme` so that sums overflow i32. */
static mm_args layout_i8(int64_t m, int64_t n, int64_t k, int64_t skew, fill_kind fill,
                         unsigned char extreme) {
  mm_args p = {m, n, k, 256 + skew, 0, 0, 0};
  p.b = (p.a + m * k + 255) / 256 * 256;
  p.c = (p.b + k * n + 255) / 256 * 256;
  p.bias = (p.c + m * n * 4 + 255) / 256 * 256;
  for (int64_t j = 0; j < n; j++) ((uint32_t *)(pool + p.bias))[j] = next_rand() * 2654435761u;
  for (int64_t x = 0; x < m * k + k * n; x++) {
    int64_t at = x < m * k ? p.a + x : p.b + x - m * k;
    uint32_t r = next_rand();
    pool[at] = fill == FILL_RANDOM ? (unsigned char)r : (r & 7) ? extreme : (unsigned char)r;
  }
  memset(pool + p.c, 0xAB, (size_t)(m * n * 4));
  return p;
}

static void prefetch_all(void) {
  cu_error err;
  EXPECT(cu_prefetch(pool, POOL_BYTES, &err), "%s", err.message);
}

static void test_i8(const char *what, const cu_kernel *k, bool sgn, int64_t m, int64_t n, int64_t kk,
                    int64_t skew, fill_kind fill, int64_t samples) {
  mm_args p = layout_i8(m, n, kk, skew, fill, sgn ? 0x80 : 0xff);
  prefetch_all();
  if (!launch(k, &p)) return;
  if (fill == FILL_EXTREME) {
    int64_t sum = 0;
    for (int64_t q = 0; q < kk; q++)
      sum += sgn ? (int8_t)pool[p.a + q] * (int8_t)pool[p.b + q * n] : pool[p.a + q] * pool[p.b + q * n];
    printf("overflow: exact C[0][0] = %lld, wraps to %d\n", (long long)sum, (int32_t)(uint32_t)sum);
  }
  int64_t wrong = check_i8(&p, sgn, samples);
  EXPECT(wrong == 0, "%s: %lld wrong", what, (long long)wrong);
  printf("%s %s %lldx%lldx%lld: %s (%s)\n", what, sgn ? "s8" : "u8", (long long)m, (long long)n,
         (long long)kk, wrong ? "WRONG" : "bit-identical", samples ? "sampled" : "every element");
}

/* 256 lone 16x16x16 matmuls, one launch each, every result checked. */
static void test_batch16(const cu_kernel *k) {
  int64_t wrong = 0;
  double t0 = now_s();
  for (int b = 0; b < 256; b++) {
    mm_args p = {16, 16, 16, 256 + b * 4096, 512 + b * 4096, 768 + b * 4096, 0};
    for (int64_t x = 0; x < 256; x++) {
      pool[p.a + x] = (unsigned char)next_rand();
      pool[p.b + x] = (unsigned char)next_rand();
    }
    if (!launch(k, &p)) return;
    wrong += check_i8(&p, true, 0);
  }
  double t = now_s() - t0;
  EXPECT(wrong == 0, "batch: %lld wrong", (long long)wrong);
  printf("batch of 256 lone 16x16x16 s8: %s, %.1f us per launch incl. host fill+check\n",
         wrong ? "WRONG" : "bit-identical", t / 256 * 1e6);
}

static void bench_i8(const char *what, const cu_kernel *k, int64_t n, int reps) {
  mm_args p = layout_i8(n, n, n, 0, FILL_RANDOM, 0);
  prefetch_all();
  double t = time_launch(k, &p, reps);
  if (with_acc) {  /* C += A B ran reps + 1 times: once more from the start */
    memset(pool + p.c, 0xAB, (size_t)(n * n * 4));
    prefetch_all();
    launch(k, &p);
  }
  int64_t wrong = check_i8(&p, true, 4096);
  EXPECT(wrong == 0, "%s: %lld of 4096 sampled wrong", what, (long long)wrong);
  printf("%s s8 %lld^3: %.3f ms, %.1f TOPS, 4096 sampled elements %s\n", what, (long long)n, t * 1e3,
         2.0 * (double)n * (double)n * (double)n / t / 1e12, wrong ? "WRONG" : "bit-identical");
}

/* Timing only: C += A B with C at 1 GiB into the pool, pages the CPU
 * never touched, first made by a prefetch (prefetch) or by the kernel's
 * own faults; needs WMMA_POOL_RESERVE=1. */
static void bench_i8_fresh_c(const char *what, int64_t n, bool prefetch) {
  mm_args p = layout_i8(n, n, n, 0, FILL_RANDOM, 0);
  p.c = (1ll << 30) + (prefetch ? 0 : (256ll << 20));
  prefetch_all();
  cu_error err;
  if (prefetch) EXPECT(cu_prefetch(pool + p.c, (uint64_t)(n * n * 4), &err), "%s", err.message);
  double t = time_launch(NULL, &p, 10);
  printf("%s s8 %lld^3: %.3f ms, %.1f TOPS (timing only)\n", what, (long long)n, t * 1e3,
         2.0 * (double)n * (double)n * (double)n / t / 1e12);
}

/* tf32 m x n x kk (reps 0: one launch, untimed), `samples` elements (0:
 * all) against |C - exact| <= (2^-10 + K 2^-24) sum_k |a b| (ptx.h). */
static void bench_tf32(const char *what, const cu_kernel *k, int64_t m, int64_t n, int64_t kk,
                       int reps, int64_t samples) {
  mm_args p = {m, n, kk, 256, 0, 0, 0};
  p.b = (p.a + m * kk * 4 + 255) / 256 * 256;
  p.c = (p.b + kk * n * 4 + 255) / 256 * 256;
  float *a = (float *)(pool + p.a), *b = (float *)(pool + p.b), *c = (float *)(pool + p.c);
  for (int64_t x = 0; x < m * kk; x++) a[x] = (float)((int32_t)(next_rand() % 2000001) - 1000000) / 1e6f;
  for (int64_t x = 0; x < kk * n; x++) b[x] = (float)((int32_t)(next_rand() % 2000001) - 1000000) / 1e6f;
  prefetch_all();
  double t = reps ? time_launch(k, &p, reps) : (launch(k, &p), NAN);
  double worst = 0;
  int64_t wrong = 0, total = samples ? samples : m * n;
  for (int64_t s = 0; s < total; s++) {
    int64_t i = samples ? next_rand() % m : s / n, j = samples ? next_rand() % n : s % n;
    double exact = 0, mag = 0;
    for (int64_t q = 0; q < kk; q++) {
      exact += (double)a[i * kk + q] * (double)b[q * n + j];
      mag += fabs((double)a[i * kk + q] * (double)b[q * n + j]);
    }
    double err = fabs((double)c[i * n + j] - exact), bound = (ldexp(1, -10) + (double)kk * ldexp(1, -24)) * mag;
    if (err / mag > worst) worst = err / mag;
    if (!(err <= bound)) wrong++;
  }
  EXPECT(wrong == 0, "tf32 %s: %lld elements beyond the bound", what, (long long)wrong);
  printf("%s tf32 %lldx%lldx%lld: %.3f ms, %.1f TFLOP/s, worst |err|/sum|ab| %.3g (bound %.3g), %s\n",
         what, (long long)m, (long long)n, (long long)kk, t * 1e3,
         2.0 * (double)m * (double)n * (double)kk / t / 1e12, worst,
         ldexp(1, -10) + (double)kk * ldexp(1, -24), samples ? "sampled" : "every element");
}

static char *read_file(const char *dir, const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
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

/* The module of DIR/FILE for arch sm (its PTX ISA read from the text's
 * .version) and its entry name, FILE less ".ptx" (and less "_90a");
 * NULL, counted as a failure, when it does not load. */
static cu_module *load_module(const char *dir, const char *file, int sm, char name[64]) {
  char *text = read_file(dir, file);
  if (!text) {
    EXPECT(false, "cannot read %s/%s", dir, file);
    return NULL;
  }
  unsigned major = 0, minor = 0;
  const char *v = strstr(text, ".version ");
  if (v) sscanf(v, ".version %u.%u", &major, &minor);
  cu_ptx set[] = {{sm, (int)(major * 10 + minor), text}};
  size_t len = strlen(file) - 4;
  if (len > 4 && strncmp(file + len - 4, "_90a", 4) == 0) len -= 4;
  snprintf(name, 64, "%.*s", (int)len, file);
  cu_module *m = NULL;
  cu_error err;
  bool ok = cu_module_load(set, 1, &m, &err);
  EXPECT(ok, "%s: %s", file, err.message);
  return ok ? m : NULL;
}

static bool load_kernel(const char *dir, const char *file, int sm, cu_kernel *k) {
  char name[64];
  cu_module *m = load_module(dir, file, sm, name);
  cu_error err;
  bool ok = m && cu_module_kernel(m, strdup(name), k, &err);
  EXPECT(!m || ok, "%s: %s", file, err.message);
  return ok;
}

static int verdict(void) {
  if (failures) {
    printf("FAILED: %d checks\n", failures);
    return 1;
  }
  printf("passed\n");
  return 0;
}

/* The sm_90a kernels (wgmma; the wmma body inside for other shapes) from
 * DIR/mm_{s8,u8,tf32}_90a.ptx, against the sm_90 kernels of the same run
 * (DIR/mm_s8.ptx, mm_tf32.ptx). */
static int run_wgmma(const char *dir, bool bench_only) {
  const cu_device_info *d = cu_device();
  if (d->cc != 90) {
    printf("skipped: sm_90a kernels need compute capability 9.0, this is sm_%d\n", d->cc);
    return 0;
  }
  cu_kernel s8, u8, tf32, s8_90, tf32_90;
  int spec = 90 | CU_ARCH_SPECIFIC;
  if (!load_kernel(dir, "mm_s8_90a.ptx", spec, &s8) || !load_kernel(dir, "mm_u8_90a.ptx", spec, &u8) ||
      !load_kernel(dir, "mm_tf32_90a.ptx", spec, &tf32) || !load_kernel(dir, "mm_s8.ptx", 90, &s8_90) ||
      !load_kernel(dir, "mm_tf32.ptx", 90, &tf32_90)) {
    printf("FAILED: kernels did not load\n");
    return 1;
  }
  if (!bench_only) {
    test_i8("wgmma 128^3", &s8, true, 128, 128, 128, 0, FILL_RANDOM, 0);
    test_i8("wgmma", &s8, true, 256, 384, 192, 0, FILL_RANDOM, 0);
    test_i8("wgmma", &u8, false, 384, 256, 320, 0, FILL_RANDOM, 0);
    test_i8("wgmma", &s8, true, 1024, 1024, 1024, 0, FILL_RANDOM, 0);
    test_i8("wgmma overflow", &s8, true, 128, 128, 262144, 0, FILL_EXTREME, 2048);
    test_i8("wgmma overflow", &u8, false, 128, 256, 65536, 0, FILL_EXTREME, 2048);
    test_i8("fallback lone", &s8, true, 16, 16, 16, 0, FILL_RANDOM, 0);
    test_i8("fallback odd, unaligned", &s8, true, 1000, 999, 1037, 1, FILL_RANDOM, 0);
    test_i8("fallback odd, aligned", &u8, false, 129, 272, 80, 0, FILL_RANDOM, 0);
    test_i8("fallback K%64", &s8, true, 256, 256, 96, 0, FILL_RANDOM, 0);
    test_i8("fallback skewed A", &s8, true, 256, 256, 256, 4, FILL_RANDOM, 0);
    bench_tf32("wgmma", &tf32, 256, 384, 208, 0, 0);
    bench_tf32("wgmma", &tf32, 1024, 1024, 1024, 0, 0);
    bench_tf32("fallback odd", &tf32, 1000, 1008, 1036, 0, 0);
    bench_tf32("fallback K%16", &tf32, 256, 256, 200, 0, 0);
  }
  bench_i8("sm_90 wmma", &s8_90, 4096, 10);
  bench_i8("sm_90a wgmma", &s8, 4096, 10);
  bench_tf32("sm_90 wmma", &tf32_90, 4096, 4096, 4096, 10, 1024);
  bench_tf32("sm_90a wgmma", &tf32, 4096, 4096, 4096, 10, 1024);
  return verdict();
}

static bool load_tc(const char *dir, const char *file, rt_tc *tc) {
  char name[64];
  cu_module *m = load_module(dir, file, 90 | CU_ARCH_SPECIFIC, name);
  cu_error err;
  bool ok = m && rt_tc_load(m, name, tc, &err);
  EXPECT(!m || ok, "%s: %s", file, err.message);
  return ok;
}

/* The pack entry alone at n^3 (rt_tc.c's first step), best of 10. */
static void time_pack(const rt_tc *tc, unsigned es, int64_t n) {
  void *mem = pool;
  mm_args v = {n, n, n, 256, 256, 256, 0};
  uint64_t bytes = rt_tc_scratch_bytes(n, n, n, es);
  void *scratch = NULL;
  cu_error err;
  if (!cu_alloc_device(bytes, &scratch, &err)) {
    EXPECT(false, "%s", err.message);
    return;
  }
  uint64_t sp = (uint64_t)(uintptr_t)scratch;
  void *params[] = {&mem, &v.m, &v.n, &v.k, &v.a, &v.b, &v.c, &sp};
  cu_range ranges[] = {{pool, POOL_BYTES}};
  cu_args args = {.params = params, .ranges = ranges, .nranges = 1};
  cu_step steps[2];
  rt_tc_steps(tc, n, n, n, es, params, steps);
  double best = INFINITY;
  for (int r = 0; r < 11; r++) {
    double t0 = now_s();
    bool ok = cu_launch_steps(&steps[0], 1, &args, &err);
    EXPECT(ok, "%s", err.message);
    if (r && now_s() - t0 < best) best = now_s() - t0;
  }
  printf("pack alone, %u-byte elements, %lld^3: %.3f ms (%.0f GB/s read+write)\n", es, (long long)n,
         best * 1e3, 2.0 * (double)bytes / best / 1e9);
  cu_free_device(scratch, bytes);
}

/* The packed products of DIR/mm_{s8,u8,tf32}_90a.ptx, against the main
 * sm_90a entries of the same files for the timings. */
static int run_tc(const char *dir, bool bench_only) {
  const cu_device_info *d = cu_device();
  if (d->cc != 90) {
    printf("skipped: sm_90a kernels need compute capability 9.0, this is sm_%d\n", d->cc);
    return 0;
  }
  static rt_tc s8, u8, tf32, s8u8, bias, acc;
  cu_kernel s8_main, tf32_main;
  int spec = 90 | CU_ARCH_SPECIFIC;
  if (!load_tc(dir, "mm_s8_90a.ptx", &s8) || !load_tc(dir, "mm_u8_90a.ptx", &u8) ||
      !load_tc(dir, "mm_tf32_90a.ptx", &tf32) ||
      !load_tc(dir, "mm_s8u8_90a.ptx", &s8u8) || !load_tc(dir, "mm_s8_bias_90a.ptx", &bias) ||
      !load_tc(dir, "mm_s8_acc_90a.ptx", &acc) ||
      !load_kernel(dir, "mm_s8_90a.ptx", spec, &s8_main) ||
      !load_kernel(dir, "mm_tf32_90a.ptx", spec, &tf32_main)) {
    printf("FAILED: kernels did not load\n");
    return 1;
  }
  cu_kernel *none = NULL;
  if (!bench_only) {
    use_tc = &s8, tc_elem_bytes = 1;
    test_i8("tc 128x256x128", none, true, 128, 256, 128, 0, FILL_RANDOM, 0);
    test_i8("tc", none, true, 256, 512, 384, 0, FILL_RANDOM, 0);
    test_i8("tc", none, true, 1024, 1024, 1024, 0, FILL_RANDOM, 0);
    test_i8("tc lone", none, true, 16, 16, 16, 0, FILL_RANDOM, 0);
    test_i8("tc odd, unaligned", none, true, 1000, 999, 1037, 1, FILL_RANDOM, 0);
    test_i8("tc odd, aligned", none, true, 129, 272, 80, 0, FILL_RANDOM, 0);
    test_i8("tc skewed A", none, true, 256, 256, 256, 4, FILL_RANDOM, 0);
    test_i8("tc overflow", none, true, 128, 256, 262144, 0, FILL_EXTREME, 2048);
    use_tc = &u8;
    test_i8("tc", none, false, 384, 512, 320, 0, FILL_RANDOM, 0);
    test_i8("tc odd, unaligned", none, false, 333, 1001, 517, 3, FILL_RANDOM, 0);
    test_i8("tc overflow", none, false, 128, 256, 65536, 0, FILL_EXTREME, 2048);
    use_tc = &s8u8, b_unsigned = true;
    test_i8("tc s8 x u8", none, true, 384, 512, 320, 0, FILL_RANDOM, 0);
    test_i8("tc s8 x u8 odd, unaligned", none, true, 333, 1001, 517, 3, FILL_RANDOM, 0);
    test_i8("tc s8 x u8 overflow", none, true, 128, 256, 65536, 0, FILL_EXTREME, 2048);
    use_tc = &bias, b_unsigned = false, with_bias = true;
    test_i8("tc bias", none, true, 256, 512, 384, 0, FILL_RANDOM, 0);
    test_i8("tc bias odd, unaligned", none, true, 1000, 999, 1037, 1, FILL_RANDOM, 0);
    use_tc = &acc, with_bias = false, with_acc = true;
    test_i8("tc C +=", none, true, 256, 512, 384, 0, FILL_RANDOM, 0);
    test_i8("tc C += odd, unaligned", none, true, 1000, 999, 1037, 1, FILL_RANDOM, 0);
    with_acc = false;
    use_tc = &tf32, tc_elem_bytes = 4;
    bench_tf32("tc", none, 256, 512, 208, 0, 0);
    bench_tf32("tc", none, 1024, 1024, 1024, 0, 0);
    bench_tf32("tc odd", none, 1000, 1008, 1036, 0, 0);
    bench_tf32("tc K%32", none, 256, 256, 200, 0, 0);
  }
  use_tc = NULL;
  bench_i8("sm_90a wgmma", &s8_main, 4096, 10);
  use_tc = &s8, tc_elem_bytes = 1;
  bench_i8("sm_90a packed tc (pack included)", none, 4096, 10);
  use_tc = &acc, with_acc = true;
  bench_i8("sm_90a packed tc, C += (pack included)", none, 4096, 10);
  if (getenv("WMMA_POOL_RESERVE")) {
    bench_i8_fresh_c("C += into fresh C, prefetched", 4096, true);
    bench_i8_fresh_c("C += into fresh C, faulted in", 4096, false);
  }
  with_acc = false;
  use_tc = NULL;
  bench_tf32("sm_90a wgmma", &tf32_main, 4096, 4096, 4096, 10, 1024);
  use_tc = &tf32, tc_elem_bytes = 4;
  bench_tf32("sm_90a packed tc (pack included)", none, 4096, 4096, 4096, 10, 1024);
  use_tc = NULL;
  time_pack(&s8, 1, 4096);
  time_pack(&tf32, 4, 4096);
  return verdict();
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  setenv("TWASM_GPU_MEM_CAP", "1G", 0);
  const char *dir = argc > 1 ? argv[1] : ".";
  if (!cu_available()) {
    printf("skipped: %s\n", cu_unavailable_reason());
    return 0;
  }
  const cu_device_info *d = cu_device();
  printf("device: %s sm_%d, driver %d\n", d->name, d->cc, d->driver_version);
  cu_error err;
  /* WMMA_POOL_RESERVE=1: the pool is the start of an 8 GiB + 64 KiB
   * managed reservation, as a compiled program's linear memory is */
  const char *reserve = getenv("WMMA_POOL_RESERVE");
  bool ok = reserve && strcmp(reserve, "1") == 0
                ? cu_reserve_managed((8ull << 30) + 65536, 2 * POOL_BYTES, (void **)&pool, &err)
                : cu_alloc_managed(POOL_BYTES, (void **)&pool, &err);
  if (!ok) {
    printf("FAIL: managed memory: %s\n", err.message);
    return 1;
  }
  if (argc > 2 && strncmp(argv[2], "tc", 2) == 0) return run_tc(dir, strcmp(argv[2], "tc-bench") == 0);
  if (argc > 2 && strncmp(argv[2], "wgmma", 5) == 0) return run_wgmma(dir, strcmp(argv[2], "wgmma-bench") == 0);
  cu_kernel s8, u8, tf32, exact;
  if (!load_kernel(dir, "mm_s8.ptx", 90, &s8) || !load_kernel(dir, "mm_u8.ptx", 90, &u8) ||
      !load_kernel(dir, "mm_tf32.ptx", 90, &tf32) ||
      !load_kernel(dir, "mm_s8_exact.ptx", 75, &exact)) {
    printf("FAILED: kernels did not load\n");
    return 1;
  }
  if (argc > 2 && strcmp(argv[2], "bench") == 0) {  /* timings only: a variant */
    bench_i8(dir, &s8, 4096, 10);
    bench_tf32(dir, &tf32, 4096, 4096, 4096, 10, 256);
    return failures ? 1 : 0;
  }
  test_i8("lone", &s8, true, 16, 16, 16, 0, FILL_RANDOM, 0);
  test_batch16(&s8);
  test_i8("odd, unaligned", &s8, true, 1000, 999, 1037, 1, FILL_RANDOM, 0);
  test_i8("odd, unaligned", &u8, false, 333, 1001, 517, 3, FILL_RANDOM, 0);
  test_i8("odd, aligned", &s8, true, 1000, 1008, 1040, 0, FILL_RANDOM, 0);
  test_i8("odd, aligned", &u8, false, 129, 272, 80, 0, FILL_RANDOM, 0);
  test_i8("overflow", &s8, true, 64, 48, 300000, 0, FILL_EXTREME, 0);
  test_i8("overflow", &u8, false, 48, 64, 140000, 0, FILL_EXTREME, 0);
  bench_i8("wmma", &s8, 4096, 10);
  bench_i8("exact scalar", &exact, 4096, 1);
  bench_tf32("odd, aligned", &tf32, 1000, 1008, 1036, 0, 0);
  bench_tf32("odd, unaligned", &tf32, 333, 1001, 517, 0, 0);
  bench_tf32("wmma", &tf32, 4096, 4096, 4096, 10, 4096);
  return verdict();
}
