/* simd_loops.c: numeric loops that clang vectorises with -msimd128 (maps,
 * reductions, widening and narrowing, conversions, rounding, compares and
 * selects) over sizes that leave remainders; prints a hash of each result. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define N 4099

static float fa[N], fb[N], fc[N];
static double da[N], db[N], dc[N];
static int32_t ia[N], ib[N], ic[N];
static int16_t sa[N], sb[N], sc[N];
static uint8_t ua[N], ub[N], uc[N];
static int64_t la[N];

static uint32_t seed = 12345;
static uint32_t next(void) {
  seed = seed * 1664525u + 1013904223u;
  return seed >> 8;
}

/* FNV-1a over the bytes of an array. */
static uint32_t hash(const void *p, size_t n) {
  const uint8_t *b = p;
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 16777619u;
  return h;
}

static void fill(void) {
  for (int i = 0; i < N; i++) {
    fa[i] = (float)((int)(next() % 20001) - 10000) / 64.0f;
    fb[i] = (float)((int)(next() % 20001) - 10000) / 128.0f;
    da[i] = (double)(next() % 1000003) / 7.0;
    db[i] = (double)(next() % 999983) / 3.0;
    ia[i] = (int32_t)(next() * 2654435761u);
    ib[i] = (int32_t)(next() % 200001) - 100000;
    sa[i] = (int16_t)next();
    sb[i] = (int16_t)(next() % 2001 - 1000);
    ua[i] = (uint8_t)next();
    ub[i] = (uint8_t)(next() >> 3);
  }
}

static void float_maps(void) {
  for (int i = 0; i < N; i++) fc[i] = 2.5f * fa[i] + fb[i];
  printf("saxpy %08x\n", hash(fc, sizeof fc));
  for (int i = 0; i < N; i++) fc[i] = fa[i] > fb[i] ? fa[i] : fb[i];
  printf("select max %08x\n", hash(fc, sizeof fc));
  for (int i = 0; i < N; i++) fc[i] = floorf(fa[i]) + ceilf(fb[i]) - truncf(fa[i] * 0.3f) + rintf(fb[i] * 1.7f);
  printf("rounding %08x\n", hash(fc, sizeof fc));
  for (int i = 0; i < N; i++) fc[i] = sqrtf(fabsf(fa[i])) / (fabsf(fb[i]) + 1.0f);
  printf("sqrt div %08x\n", hash(fc, sizeof fc));
  for (int i = 0; i < N; i++) dc[i] = sqrt(db[i]) + da[i] * db[i] - floor(da[i]);
  printf("double %08x\n", hash(dc, sizeof dc));
  for (int i = 0; i < N; i++) dc[i] = (double)fa[i] * 3.0;
  printf("promote %08x\n", hash(dc, sizeof dc));
  for (int i = 0; i < N; i++) fc[i] = (float)(da[i] / 3.0);
  printf("demote %08x\n", hash(fc, sizeof fc));
}

static void int_maps(void) {
  for (int i = 0; i < N; i++) ic[i] = ia[i] * ib[i] + (ia[i] >> 3) - (ib[i] << 2);
  printf("int mix %08x\n", hash(ic, sizeof ic));
  for (int i = 0; i < N; i++) ic[i] = (int32_t)((uint32_t)ia[i] >> 7) ^ ib[i];
  printf("int shifts %08x\n", hash(ic, sizeof ic));
  for (int i = 0; i < N; i++) {
    int32_t v = ia[i] < 0 ? -ia[i] : ia[i];
    ic[i] = v > 1000000 ? 1000000 : v;
  }
  printf("abs clamp %08x\n", hash(ic, sizeof ic));
  for (int i = 0; i < N; i++) la[i] = (int64_t)ia[i] * ib[i];
  printf("widening mul %08x\n", hash(la, sizeof la));
  for (int i = 0; i < N; i++) {
    int32_t v = ib[i] * 3;
    sc[i] = (int16_t)(v > 32767 ? 32767 : v < -32768 ? -32768 : v);
  }
  printf("narrow %08x\n", hash(sc, sizeof sc));
  for (int i = 0; i < N; i++) sc[i] = (int16_t)(sa[i] * sb[i]) + (sa[i] >> 2);
  printf("i16 mul %08x\n", hash(sc, sizeof sc));
}

static void byte_maps(void) {
  for (int i = 0; i < N; i++) {
    unsigned v = ua[i] + ub[i];
    uc[i] = (uint8_t)(v > 255 ? 255 : v);
  }
  printf("u8 saturating add %08x\n", hash(uc, sizeof uc));
  for (int i = 0; i < N; i++) uc[i] = (uint8_t)((ua[i] + ub[i] + 1) >> 1);
  printf("u8 average %08x\n", hash(uc, sizeof uc));
  for (int i = 0; i < N; i++) uc[i] = ua[i] > ub[i] ? ua[i] - ub[i] : ub[i] - ua[i];
  printf("u8 abs diff %08x\n", hash(uc, sizeof uc));
  for (int i = 0; i < N; i++) uc[i] = (uint8_t)__builtin_popcount(ua[i]);
  printf("popcount %08x\n", hash(uc, sizeof uc));
}

static void conversions(void) {
  for (int i = 0; i < N; i++) ic[i] = (int32_t)(fa[i] * 100.0f);
  printf("float to int %08x\n", hash(ic, sizeof ic));
  for (int i = 0; i < N; i++) fc[i] = (float)ia[i] * 0.5f;
  printf("int to float %08x\n", hash(fc, sizeof fc));
  for (int i = 0; i < N; i++) fc[i] = (float)(uint32_t)ia[i];
  printf("uint to float %08x\n", hash(fc, sizeof fc));
  for (int i = 0; i < N; i++) dc[i] = (double)ib[i] / 8.0;
  printf("int to double %08x\n", hash(dc, sizeof dc));
  for (int i = 0; i < N; i++) ic[i] = sa[i] + ua[i];
  printf("extend %08x\n", hash(ic, sizeof ic));
}

static void reductions(void) {
  int32_t sum = 0, mn = INT32_MAX, mx = INT32_MIN;
  int64_t dot = 0;
  uint32_t bytes = 0;
  for (int i = 0; i < N; i++) sum += ia[i];
  for (int i = 0; i < N; i++) mn = ia[i] < mn ? ia[i] : mn;
  for (int i = 0; i < N; i++) mx = ib[i] > mx ? ib[i] : mx;
  for (int i = 0; i < N; i++) dot += sa[i] * sb[i];
  for (int i = 0; i < N; i++) bytes += ua[i];
  float fsum = 0;
  for (int i = 0; i < N; i++) fsum += fa[i] * fb[i];
  printf("sum %d min %d max %d dot %lld bytes %u fdot %.9g\n", sum, mn, mx, (long long)dot, bytes, fsum);
}

/* A 48 x 48 float product, the inner loop over columns. */
static void matmul(void) {
  enum { M = 48 };
  static float x[M][M], y[M][M], z[M][M];
  for (int i = 0; i < M; i++)
    for (int j = 0; j < M; j++) {
      x[i][j] = fa[i * M + j];
      y[i][j] = fb[i * M + j];
      z[i][j] = 0;
    }
  for (int i = 0; i < M; i++)
    for (int k = 0; k < M; k++)
      for (int j = 0; j < M; j++) z[i][j] += x[i][k] * y[k][j];
  printf("matmul %08x\n", hash(z, sizeof z));
}

int main(void) {
  fill();
  float_maps();
  int_maps();
  byte_maps();
  conversions();
  reductions();
  matmul();
  return 0;
}
