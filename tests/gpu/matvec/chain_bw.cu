// chain_bw.cu: the matrix-vector kernel's summing chain alone, and this
// part's add and multiply latencies (matrix-vector round 13,
// docs/PERFORMANCE.md).  Loads DIR/chain.ptx (tests/gpu/matvec/chain_gen.py:
// chain_f32 holds mv_f32's whole chunk, its PTX text unchanged, summed
// REPS times from shared memory filled once, with no staging and, unless
// asked, no barrier in the loop; chain_f32_st the same with the committed
// kernel's staging, its global loads from L2; chain_fadd, chain_fmuladd,
// chain_muladd are register-only chains).  One block an SM (as many blocks as SMs),
// 1 to 16 warps a block; each run is timed by clock64 inside the kernel
// (each summing thread's loop) and by events around the launch, best of 3
// after a warm-up.  Every summing thread's result is checked against a CPU
// loop in the same order (one rounding per multiply and per add).
// Built on the GPU machine:
//   nvcc -O2 -Xcompiler -ffp-contract=off -o chain_bw tests/gpu/matvec/chain_bw.cu -lcuda
// Run: chain_bw DIR [REPS [pipe]]; "pipe": round 14's runs (chain_pipe.py's
// variants, W and/or v in registers loaded ahead) instead of round 13's.
// Prints, a run:
//   KERNEL warps W (S summing) lanes L mode M: clock64 MIN / MEDIAN / MAX cycles a term ...
//   row | KERNEL | W | S | L | M | clock64 median | events at 1980 MHz | ok |
// (mode bit 0: a barrier of the block after each chunk; bit 1, chain_f32_st:
// the staging before it).
// and "FAIL ..." lines (exit 1) on a wrong sum.
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                \
  do {                                                       \
    CUresult e_ = (x);                                       \
    if (e_ != CUDA_SUCCESS) {                                \
      const char *n_ = "?";                                  \
      cuGetErrorName(e_, &n_);                               \
      printf("%s:%d: %s: %s\n", __FILE__, __LINE__, #x, n_); \
      exit(1);                                               \
    }                                                        \
  } while (0)

#define BOOST_MHZ 1980.0  // the SM clock measured busy in round 11
#define MAX_THREADS 512
#define REG_OPERANDS 35   // b, c, e, x_0..15, y_0..15

typedef struct {  // chain.ptx's first line
  int terms, w_row, w_buffer, v_buffer, w_bytes, v_bytes;
} chunk_layout;

static chunk_layout layout;
static float *src_chunk, reg_ops[REG_OPERANDS];
static int failures;

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = (char *)calloc(1, (size_t)len + 1);
  size_t got = fread(text, 1, (size_t)len, f);
  fclose(f);
  text[got] = '\0';
  return text;
}

// What summing thread `lane` of chain_f32 should hold after `reps` chunks.
static float expect_chunk(int lane, int reps) {
  const float *w = src_chunk, *v = src_chunk + layout.w_bytes / 4;
  float sum = 0.0f;
  for (int i = 0; i < reps; i++) {
    int p = i & 1;
    for (int k = 0; k < layout.terms; k++) {
      float prod = w[p * layout.w_buffer + lane * layout.w_row + k] * v[p * layout.v_buffer + k];
      sum = sum + prod;
    }
  }
  return sum;
}

// What a register chain should hold after `reps` iterations (as chain_gen.py).
static float expect_regs(const char *kernel, int reps) {
  float b = reg_ops[0], c = reg_ops[1], e = reg_ops[2], x[16], sum = 0.0f;
  memcpy(x, reg_ops + 3, sizeof x);
  const float *y = reg_ops + 19;
  for (int it = 0; it < reps; it++) {
    if (!strcmp(kernel, "chain_fadd")) {
      for (int t = 0; t < 256; t++) sum = sum + b;
    } else if (!strcmp(kernel, "chain_fmuladd")) {
      for (int t = 0; t < 256; t++) {
        float prod = sum * c;
        sum = prod + b;
      }
    } else {
      for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
          float prod = x[i] * y[j];
          sum = sum + prod;
        }
      for (int i = 0; i < 16; i++) x[i] = x[i] + e;
    }
  }
  return sum;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

typedef struct {
  const char *kernel;
  unsigned warps, summing, lanes, mode;
} chain_run;

static void run(CUmodule m, const chain_run *r, int sms, int reps, CUdeviceptr src, CUdeviceptr out,
                CUdeviceptr cycles, CUdeviceptr smid) {
  CUfunction fn;
  CK(cuModuleGetFunction(&fn, m, r->kernel));
  unsigned threads = 32 * r->warps, lanes = r->lanes, summing = r->summing, mode = r->mode;
  unsigned ureps = (unsigned)reps;
  void *args[] = {&src, &out, &cycles, &smid, &ureps, &lanes, &summing, &mode};
  CUevent t0, t1;
  CK(cuEventCreate(&t0, CU_EVENT_DEFAULT));
  CK(cuEventCreate(&t1, CU_EVENT_DEFAULT));
  float best = 1e30f;
  for (int i = 0; i < 4; i++) {  // a warm-up, then best of 3
    CK(cuEventRecord(t0, 0));
    CK(cuLaunchKernel(fn, (unsigned)sms, 1, 1, threads, 1, 1, 0, 0, args, NULL));
    CK(cuEventRecord(t1, 0));
    CK(cuEventSynchronize(t1));
    float ms;
    CK(cuEventElapsedTime(&ms, t0, t1));
    if (i > 0 && ms < best) best = ms;
  }
  size_t n = (size_t)sms * threads;
  float *sums = (float *)malloc(n * sizeof *sums);
  uint64_t *cyc = (uint64_t *)malloc(n * sizeof *cyc), *warp_cyc = (uint64_t *)malloc(n * sizeof *cyc);
  unsigned *sm = (unsigned *)malloc((size_t)sms * sizeof *sm);
  CK(cuMemcpyDtoH(sums, out, n * sizeof *sums));
  CK(cuMemcpyDtoH(cyc, cycles, n * sizeof *cyc));
  CK(cuMemcpyDtoH(sm, smid, (size_t)sms * sizeof *sm));
  bool chunk = !strncmp(r->kernel, "chain_f32", 9);
  float want_lane[32];  // what each lane should hold: every summing warp's lane L alike
  for (unsigned lane = 0; lane < 32 && lane < lanes; lane++)
    want_lane[lane] = chunk ? expect_chunk((int)lane, reps) : lane ? want_lane[0] : expect_regs(r->kernel, reps);
  int wrong = 0, nwarps = 0;
  for (size_t t = 0; t < n; t++) {
    unsigned lane = (unsigned)(t % threads) % 32, warp = (unsigned)(t % threads) / 32;
    if (lane >= lanes || warp >= summing) continue;
    float want = want_lane[lane];
    if (memcmp(&want, &sums[t], sizeof want)) {
      if (wrong++ < 3) printf("FAIL %s: thread %zu: %a, expected %a\n", r->kernel, t, sums[t], want);
    }
    if (lane == 0) warp_cyc[nwarps++] = cyc[t];
  }
  failures += wrong != 0;
  qsort(warp_cyc, (size_t)nwarps, sizeof *warp_cyc, cmp_u64);
  int distinct = 0;
  for (int b = 0; b < sms; b++) {
    bool seen = false;
    for (int c = 0; c < b; c++) seen |= sm[c] == sm[b];
    distinct += !seen;
  }
  double terms = (double)reps * layout.terms, med = (double)warp_cyc[nwarps / 2];
  double ev_cycles = best * 1e3 * BOOST_MHZ / terms;
  printf("%s warps %u (%u summing) lanes %u mode %u: clock64 %.2f / %.2f / %.2f cycles a term (min / median / max "
         "over %d warps); events %.3f ms, %.2f cycles a term at %.0f MHz; clock64 / events %.0f MHz; %d blocks on "
         "%d SMs; %s\n",
         r->kernel, r->warps, summing, lanes, mode, warp_cyc[0] / terms, med / terms, warp_cyc[nwarps - 1] / terms,
         nwarps, best, ev_cycles, BOOST_MHZ, med / (best * 1e3), sms, distinct,
         wrong ? "sums WRONG" : "every sum bit-identical");
  printf("row | %s | %u | %u | %u | %u | %.2f | %.2f | %s |\n", r->kernel, r->warps, summing, lanes, mode, med / terms,
         ev_cycles, wrong ? "WRONG" : "yes");
  free(sums), free(cyc), free(warp_cyc), free(sm);
  CK(cuEventDestroy(t0));
  CK(cuEventDestroy(t1));
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  int reps = argc > 2 ? atoi(argv[2]) : 2048;
  char path[1024], log[8192] = "";
  snprintf(path, sizeof path, "%s/chain.ptx", dir);
  char *text = read_file(path);
  if (!text) {
    printf("FAIL cannot read %s\n", path);
    return 1;
  }
  if (sscanf(text, "// chain: terms %d w_row %d w_buffer %d v_buffer %d w_bytes %d v_bytes %d", &layout.terms,
             &layout.w_row, &layout.w_buffer, &layout.v_buffer, &layout.w_bytes, &layout.v_bytes) != 6) {
    printf("FAIL %s: no layout line\n", path);
    return 1;
  }
  if (cuInit(0) != CUDA_SUCCESS) {
    printf("skipped: no GPU (cuInit failed)\n");
    return 0;
  }
  CUdevice dev;
  CUcontext ctx;
  CK(cuDeviceGet(&dev, 0));
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  char name[256];
  int sms;
  CK(cuDeviceGetName(name, sizeof name, dev));
  CK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  printf("device: %s, %d SMs; %d chunks of %d terms a run\n", name, sms, reps, layout.terms);
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {log, (void *)(uintptr_t)sizeof log};
  CUmodule m;
  if (cuModuleLoadDataEx(&m, text, 2, opts, vals) != CUDA_SUCCESS) {
    printf("FAIL %s: JIT: %s\n", path, log);
    return 1;
  }
  // Exact small values: W in sixteenths up to 1/2, v in eighths up to 1/2.
  size_t chunk_floats = (size_t)(layout.w_bytes + layout.v_bytes) / 4;
  src_chunk = (float *)malloc(chunk_floats * sizeof(float));
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < chunk_floats; i++) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    src_chunk[i] = i < (size_t)layout.w_bytes / 4 ? (float)((int)(rng % 17) - 8) / 16.0f
                                                  : (float)((int)(rng % 9) - 4) / 8.0f;
  }
  reg_ops[0] = 0.5f, reg_ops[1] = 0.5f, reg_ops[2] = 1.0f / 1024;
  for (int i = 0; i < 16; i++) reg_ops[3 + i] = (float)(i + 1) / 64, reg_ops[19 + i] = (float)(i - 8) / 32;
  CUdeviceptr src_c, src_r, out, cycles, smid;
  CK(cuMemAlloc(&src_c, chunk_floats * sizeof(float)));
  CK(cuMemAlloc(&src_r, sizeof reg_ops));
  CK(cuMemAlloc(&out, (size_t)sms * MAX_THREADS * sizeof(float)));
  CK(cuMemAlloc(&cycles, (size_t)sms * MAX_THREADS * sizeof(uint64_t)));
  CK(cuMemAlloc(&smid, (size_t)sms * sizeof(unsigned)));
  CK(cuMemcpyHtoD(src_c, src_chunk, chunk_floats * sizeof(float)));
  CK(cuMemcpyHtoD(src_r, reg_ops, sizeof reg_ops));
  static const chain_run runs[] = {
    // the chunk: W warps an SM, each summing in lanes 0-15 (as the committed kernel's warp 0)
    {"chain_f32", 1, 1, 16, 0}, {"chain_f32", 2, 2, 16, 0}, {"chain_f32", 4, 4, 16, 0},
    {"chain_f32", 8, 8, 16, 0}, {"chain_f32", 16, 16, 16, 0},
    // the committed block's shape: 8 warps, warp 0 sums; then a barrier of all 8 after each
    // chunk; then the staging too (chain_f32_st: global loads before the chunk, from L2, shared
    // stores after it)
    {"chain_f32", 8, 1, 16, 0}, {"chain_f32", 8, 1, 16, 1}, {"chain_f32_st", 8, 1, 16, 3},
    // register-only chains: the latencies
    {"chain_fadd", 1, 1, 32, 0}, {"chain_fadd", 4, 4, 32, 0}, {"chain_fadd", 16, 16, 32, 0},
    {"chain_fmuladd", 1, 1, 32, 0}, {"chain_fmuladd", 4, 4, 32, 0}, {"chain_fmuladd", 16, 16, 32, 0},
    {"chain_muladd", 1, 1, 32, 0}, {"chain_muladd", 4, 4, 32, 0}, {"chain_muladd", 16, 16, 32, 0},
  };
  // Round 14 (argument "pipe", chain.ptx from chain_pipe.py): the chunk with W and/or v in
  // registers loaded ahead, 1 warp (no staging) and 8 warps, warp 0 summing, with the staging and
  // the barrier; the round-13 kernels they compare with first.
  static const char *const pipe_kernels[] = {"chain_f32_w", "chain_f32_wg", "chain_f32_wg4",
                                             "chain_f32_v", "chain_f32_wv", "chain_f32_wgv"};
  chain_run pipe_runs[5 + 2 * sizeof pipe_kernels / sizeof pipe_kernels[0]] = {
    {"chain_fadd", 1, 1, 32, 0}, {"chain_muladd", 1, 1, 32, 0}, {"chain_f32", 1, 1, 16, 0},
    {"chain_f32", 8, 1, 16, 1}, {"chain_f32_st", 8, 1, 16, 3},
  };
  for (unsigned i = 0; i < sizeof pipe_kernels / sizeof pipe_kernels[0]; i++) {
    pipe_runs[5 + 2 * i] = (chain_run){pipe_kernels[i], 1, 1, 16, 0};
    pipe_runs[6 + 2 * i] = (chain_run){pipe_kernels[i], 8, 1, 16, 3};
  }
  bool pipe = argc > 3 && !strcmp(argv[3], "pipe");
  const chain_run *list = pipe ? pipe_runs : runs;
  unsigned count = pipe ? sizeof pipe_runs / sizeof pipe_runs[0] : sizeof runs / sizeof runs[0];
  for (unsigned i = 0; i < count; i++)
    run(m, &list[i], sms, reps, !strncmp(list[i].kernel, "chain_f32", 9) ? src_c : src_r, out, cycles, smid);
  return failures ? 1 : 0;
}
