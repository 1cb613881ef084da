// matvec_bw.cu: the exact matrix-vector kernels of ptx/ptx_matvec.c on a
// real GPU, through the driver API: each output bit-identical to a CPU
// loop that adds the products in k order (one rounding per multiply and
// per add) for odd sizes, every body (16-byte vectors, aligned elements,
// bytes), both orientations and f32, f64, i32; then the time of one
// product at transformer shapes against the device-to-device copy
// bandwidth measured in the same process.  Loads the PTX that matvec_gen
// wrote into the folder argv[1] (`--time`: timings only; `--sweep`: K swept too; `--rows N`: PTX
// of a variant with N outputs per block; `--floor`: the fixed cost split, an empty kernel
// launched the same way and the kernel at K 0, 4 and 64; `--pdl`: every launch with
// programmatic stream serialization, for a variant built with PTX_MV_PDL; `--graph`: the
// back-to-back figures of a chain of 64 launches as one CUDA graph, as the runtime replays
// repeated launches (runtime/cu_graph.c), instantiated once and launched several times, and a
// chain of 8 dependent products through such a graph checked; `--graph --pdl`: the chain's
// edges programmatic, CUDA 12.3 and later).  Built on the GPU machine:
//   nvcc -O2 -Xcompiler -ffp-contract=off -o matvec_bw tests/gpu/matvec/matvec_bw.cu -lcuda
// Prints "FAIL ..." lines and exits 1 on a wrong result; timings as
//   matvec f32 OUTxK (form): T us, G GB/s, P% of copy
// where bytes are those of W (4 OUT K) and copy counts read plus written,
// as tests/bench/gpu/copy_bw.cu does.
#include <cuda.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POOL_BYTES (1536ull << 20)
static int64_t rows = 16;  // outputs per block: the kernel's launch rule (--rows N: a variant's)
static bool pdl;           // --pdl: launches may overlap the previous one's tail
static bool graph;         // --graph: chains of launches as one CUDA graph
static uint64_t grid_cap;  // at most this many blocks (0: the launch rule's), so blocks stride
#define THREADS 256

static int failures;
static bool quiet;      // check() counts a wrong product without printing (the chain's line says)
static char *host;      // mirror of the device pool
static CUdeviceptr pool;
static const char *ptx_dir;

#define CK(x)                                                        \
  do {                                                               \
    CUresult e_ = (x);                                               \
    if (e_ != CUDA_SUCCESS) {                                        \
      const char *n_ = "?";                                          \
      cuGetErrorName(e_, &n_);                                       \
      printf("%s:%d: %s: %s\n", __FILE__, __LINE__, #x, n_);         \
      exit(1);                                                       \
    }                                                                \
  } while (0)

typedef enum { T_F32, T_F64, T_I32 } elem_type;
static const unsigned esize[] = {4, 8, 4};
typedef enum { ONE_COLUMN, ONE_COLUMN_T, ONE_ROW } form;

typedef struct {
  const char *kernel;
  elem_type type;
  form f;
} kernel_kind;

static const kernel_kind kinds[] = {
  {"mv_f32", T_F32, ONE_COLUMN}, {"mvt_f32", T_F32, ONE_COLUMN_T}, {"vm_f32", T_F32, ONE_ROW},
  {"mv_f64", T_F64, ONE_COLUMN}, {"mv_i32", T_I32, ONE_COLUMN},
};

static CUfunction fns[sizeof kinds / sizeof kinds[0]];

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

static void load_kernels(void) {
  for (unsigned i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    char path[1024], log[8192] = "";
    snprintf(path, sizeof path, "%s/%s.ptx", ptx_dir, kinds[i].kernel);
    char *text = read_file(path);
    if (!text) {
      printf("FAIL cannot read %s\n", path);
      exit(1);
    }
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log, (void *)(uintptr_t)sizeof log};
    CUmodule m;
    CUresult r = cuModuleLoadDataEx(&m, text, 2, opts, vals);
    if (r != CUDA_SUCCESS) {
      printf("FAIL %s: JIT: %s\n", path, log);
      exit(1);
    }
    CK(cuModuleGetFunction(&fns[i], m, kinds[i].kernel));
  }
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

// One product: OUT outputs over K, W at w_off with `stride` elements
// between its rows (ONE_COLUMN: rows are outputs; else rows are k), v at
// v_off, out at o_off (all byte offsets into the pool).
typedef struct {
  unsigned kind;
  int64_t out, k, w_off, stride, v_off, o_off;
} mv_run;

static int64_t w_index(const mv_run *r, int64_t o, int64_t k) {
  return kinds[r->kind].f == ONE_COLUMN ? o * r->stride + k : k * r->stride + o;
}

static void fill(const mv_run *r) {
  unsigned s = esize[kinds[r->kind].type];
  elem_type t = kinds[r->kind].type;
  // every element of W the product reads, and v, random; -0 and
  // denormals included for floats
  for (int64_t o = 0; o < r->out; o++)
    for (int64_t k = 0; k < r->k; k++) {
      char *p = host + r->w_off + w_index(r, o, k) * s;
      uint64_t x = next_rand();
      if (t == T_F32) {
        float f = (float)((int64_t)(x >> 40) - (1 << 23)) / (float)(1 << 23);
        if ((x & 1023) == 7) f = -0.0f;
        if ((x & 1023) == 9) f = 1e-40f;
        memcpy(p, &f, 4);
      } else if (t == T_F64) {
        double f = (double)((int64_t)(x >> 11) - (1ll << 52)) / (double)(1ll << 52);
        memcpy(p, &f, 8);
      } else {
        int32_t v = (int32_t)x;
        memcpy(p, &v, 4);
      }
    }
  for (int64_t k = 0; k < r->k; k++) {
    uint64_t x = next_rand();
    char *p = host + r->v_off + k * s;
    if (t == T_F32) {
      float f = (float)((int64_t)(x >> 40) - (1 << 23)) / (float)(1 << 19);
      memcpy(p, &f, 4);
    } else if (t == T_F64) {
      double f = (double)((int64_t)(x >> 11) - (1ll << 52)) / (double)(1ll << 48);
      memcpy(p, &f, 8);
    } else {
      int32_t v = (int32_t)(x >> 7);
      memcpy(p, &v, 4);
    }
  }
}

// The CPU loop: source order, separate rounding (built with
// -ffp-contract=off), i32 wrapping.
static bool check(const mv_run *r, const char *out_dev) {
  elem_type t = kinds[r->kind].type;
  unsigned s = esize[t];
  bool row = kinds[r->kind].f == ONE_ROW;
  int bad = 0;
  for (int64_t o = 0; o < r->out; o++) {
    const char *wp = host + r->w_off, *vp = host + r->v_off;
    char want[8];
    if (t == T_F32) {
      float sum = 0.0f;
      for (int64_t k = 0; k < r->k; k++) {
        float w, v;
        memcpy(&w, wp + w_index(r, o, k) * s, 4);
        memcpy(&v, vp + k * s, 4);
        volatile float p = row ? v * w : w * v;
        sum = sum + p;
      }
      memcpy(want, &sum, 4);
    } else if (t == T_F64) {
      double sum = 0.0;
      for (int64_t k = 0; k < r->k; k++) {
        double w, v;
        memcpy(&w, wp + w_index(r, o, k) * s, 8);
        memcpy(&v, vp + k * s, 8);
        volatile double p = w * v;
        sum = sum + p;
      }
      memcpy(want, &sum, 8);
    } else {
      uint32_t sum = 0;
      for (int64_t k = 0; k < r->k; k++) {
        int32_t w, v;
        memcpy(&w, wp + w_index(r, o, k) * s, 4);
        memcpy(&v, vp + k * s, 4);
        sum += (uint32_t)w * (uint32_t)v;
      }
      memcpy(want, &sum, 4);
    }
    if (memcmp(want, out_dev + o * s, s) && bad++ < 3 && !quiet)
      printf("FAIL %s %lldx%lld (w at %lld, stride %lld%s): output %lld differs\n", kinds[r->kind].kernel,
             (long long)r->out, (long long)r->k, (long long)r->w_off, (long long)r->stride,
             grid_cap ? ", 7 blocks" : "", (long long)o);
  }
  if (bad) failures++;
  return !bad;
}

// One launch of f on `blocks` blocks of THREADS; with --pdl through
// cuLaunchKernelEx and the programmatic-serialization attribute (CUDA 12).
static void launch_fn(CUfunction f, unsigned blocks, void **args, CUstream st) {
#if CUDA_VERSION >= 12000
  if (pdl) {
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = blocks, cfg.gridDimY = 1, cfg.gridDimZ = 1;
    cfg.blockDimX = THREADS, cfg.blockDimY = 1, cfg.blockDimZ = 1;
    cfg.hStream = st;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    CK(cuLaunchKernelEx(&cfg, f, args, NULL));
    return;
  }
#endif
  CK(cuLaunchKernel(f, blocks, 1, 1, THREADS, 1, 1, 0, st, args, NULL));
}

static void launch(const mv_run *r, CUstream st) {
  void *mem = (void *)pool;
  int64_t p[6] = {r->out, r->k, r->w_off, r->stride, r->v_off, r->o_off};
  // the last: the outputs' base (ABI 12, TWASM_ENTRY_HOST_OUT), here the pool too
  void *args[8] = {&mem, &p[0], &p[1], &p[2], &p[3], &p[4], &p[5], &mem};
  uint64_t blocks = (uint64_t)(r->out + rows - 1) / rows;
  if (blocks > 65535) blocks = 65535;
  if (grid_cap && blocks > grid_cap) blocks = grid_cap;
  if (blocks == 0) blocks = 1;
  launch_fn(fns[r->kind], (unsigned)blocks, args, st);
}

// One launch of a chain: the function, its grid and the six size and
// offset parameters (the memory arguments are the pool).
typedef struct {
  CUfunction f;
  unsigned blocks;
  int64_t p[6];
} chain_item;

static unsigned blocks_of(int64_t out) {
  uint64_t blocks = (uint64_t)(out + rows - 1) / rows;
  if (blocks > 65535) blocks = 65535;
  return blocks ? (unsigned)blocks : 1;
}

// The n launches as one graph, each kernel node after the previous one
// (with --pdl a programmatic edge: the next may start once every block of
// the previous has issued griddepcontrol.launch_dependents or ended),
// instantiated.  False, with a line saying why (the first time), where
// the driver or this CUDA has no such graph.
static bool graph_refused;
static bool chain_graph(const chain_item *items, int n, CUgraphExec *exec) {
  if (graph_refused) return false;
  graph_refused = true;  // until this one is made
#if CUDA_VERSION >= 12000
  CUgraph gr;
  CK(cuGraphCreate(&gr, 0));
  CUgraphNode prev = NULL;
  void *mem = (void *)pool;
  for (int i = 0; i < n; i++) {
    int64_t p[6];
    memcpy(p, items[i].p, sizeof p);
    void *args[8] = {&mem, &p[0], &p[1], &p[2], &p[3], &p[4], &p[5], &mem};
    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof kp);
    kp.func = items[i].f;
    kp.gridDimX = items[i].blocks, kp.gridDimY = 1, kp.gridDimZ = 1;
    kp.blockDimX = THREADS, kp.blockDimY = 1, kp.blockDimZ = 1;
    kp.kernelParams = args;
    CUgraphNode node;
    CK(cuGraphAddKernelNode(&node, gr, prev && !pdl ? &prev : NULL, prev && !pdl ? 1 : 0, &kp));
    if (prev && pdl) {
#if CUDA_VERSION >= 12030
      CUgraphEdgeData edge;
      memset(&edge, 0, sizeof edge);
      edge.from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC;
      edge.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
      CUresult r = cuGraphAddDependencies_v2(gr, &prev, &node, &edge, 1);
      if (r != CUDA_SUCCESS) {
        const char *name = "?";
        cuGetErrorName(r, &name);
        printf("graph pdl: a programmatic edge refused (%s): skipped\n", name);
        CK(cuGraphDestroy(gr));
        return false;
      }
#else
      printf("graph pdl: not built (CUDA %d < 12.3: no graph edge data): skipped\n", CUDA_VERSION);
      CK(cuGraphDestroy(gr));
      return false;
#endif
    }
    prev = node;
  }
  CUresult r = cuGraphInstantiate(exec, gr, 0);
  CK(cuGraphDestroy(gr));
  if (r != CUDA_SUCCESS) {
    const char *name = "?";
    cuGetErrorName(r, &name);
    printf("graph%s: not instantiated (%s): skipped\n", pdl ? " pdl" : "", name);
    return false;
  }
  graph_refused = false;
  return true;
#else
  (void)items, (void)n, (void)exec;
  printf("graph: not built (CUDA %d < 12.0): skipped\n", CUDA_VERSION);
  return false;
#endif
}

// Per launch, us, of the n launches as one graph: the graph launched
// twice between two events, best of 5 (after one launch to warm up);
// a negative time where there is no such graph.
static float graph_us(const chain_item *items, int n) {
  CUgraphExec exec;
  if (!chain_graph(items, n, &exec)) return -1.0f;
  CUevent e0, e1;
  CK(cuEventCreate(&e0, 0));
  CK(cuEventCreate(&e1, 0));
  CK(cuGraphLaunch(exec, 0));
  CK(cuCtxSynchronize());
  float best = 1e30f;
  for (int rep = 0; rep < 5; rep++) {
    CK(cuEventRecord(e0, 0));
    CK(cuGraphLaunch(exec, 0));
    CK(cuGraphLaunch(exec, 0));
    CK(cuEventRecord(e1, 0));
    CK(cuEventSynchronize(e1));
    float ms;
    CK(cuEventElapsedTime(&ms, e0, e1));
    if (ms * 1e3f / (2 * n) < best) best = ms * 1e3f / (2 * n);
  }
  CK(cuEventDestroy(e0));
  CK(cuEventDestroy(e1));
  CK(cuGraphExecDestroy(exec));
  return best;
}

// --graph: 8 products of 768x768 f32 (mv_f32) in one graph, each one's v
// the previous one's outputs, the later vectors zeroed before each of 3
// launches; then every product's outputs checked against the CPU loop on
// the inputs it should have read (a product that read its v before the
// previous one wrote it differs).  A line, not a failure: a kernel built
// without PTX_MV_PDL has no griddepcontrol.wait, so under --pdl it may.
static void chain_check(void) {
  enum { N = 8, OUT = 768 };
  int64_t w_bytes = (int64_t)OUT * OUT * 4, x0 = N * w_bytes + 4096;
  mv_run runs[N];
  chain_item items[N];
  for (int i = 0; i < N; i++) {
    runs[i] = (mv_run){0, OUT, OUT, i * w_bytes, OUT, x0 + i * OUT * 4, x0 + (i + 1) * OUT * 4};
    fill(&runs[i]);  // W_i and v (x_i; the later ones overwritten by the GPU)
    items[i] = (chain_item){fns[0], blocks_of(OUT), {OUT, OUT, runs[i].w_off, OUT, runs[i].v_off, runs[i].o_off}};
  }
  size_t bytes = (size_t)(x0 + (N + 1) * OUT * 4);
  CK(cuMemcpyHtoD(pool, host, bytes));
  CUgraphExec exec;
  if (!chain_graph(items, N, &exec)) return;
  int bad = 0;
  for (int rep = 0; rep < 3; rep++) {
    CK(cuMemsetD8(pool + x0 + OUT * 4, 0, (size_t)N * OUT * 4));
    CK(cuGraphLaunch(exec, 0));
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH(host + x0, pool + x0, (size_t)(N + 1) * OUT * 4));
    int f0 = failures;
    quiet = true;
    for (int i = 0; i < N; i++) check(&runs[i], host + runs[i].o_off);
    quiet = false;
    bad += failures - f0;
    failures = f0;
  }
  CK(cuGraphExecDestroy(exec));
  if (bad)
    printf("chain: %d dependent 768x768 products in one graph%s, 3 launches: %d of %d products differ\n", N,
           pdl ? " (programmatic edges)" : "", bad, 3 * N);
  else
    printf("chain: %d dependent 768x768 products in one graph%s, 3 launches: every output bit-identical\n", N,
           pdl ? " (programmatic edges)" : "");
}

static void correctness(void) {
  // out, k, w byte misalignment, row padding (elements), v misalignment
  static const struct {
    int64_t out, k, w_shift, pad, v_shift;
  } shapes[] = {
    {1000, 999, 0, 0, 0}, {77, 1031, 0, 1, 0}, {5, 3, 0, 0, 0}, {768, 768, 0, 0, 0},
    {129, 2048, 0, 0, 0}, {300, 1024, 4, 0, 0}, {33, 515, 1, 3, 2}, {9, 0, 0, 0, 0},
    {1, 1, 0, 0, 0}, {2000, 70, 0, 5, 0}, {1031, 1025, 0, 4, 0},
    // the vector body with K past a chunk, inside one, a short first chunk
    {1000, 1000, 0, 0, 0}, {17, 68, 0, 0, 0}, {2112, 8, 0, 0, 0}, {64, 4100, 0, 0, 0}, {3, 260, 0, 0, 0},
  };
  // the second pass: the one-column f32 kernel on 7 blocks, so each
  // block sums several groups of outputs (any grid is correct)
  for (unsigned pass = 0; pass < 2; pass++) {
    for (unsigned kd = 0; kd < (pass ? 1u : sizeof kinds / sizeof kinds[0]); kd++)
      for (unsigned i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        grid_cap = pass ? 7 : 0;
        unsigned s = esize[kinds[kd].type];
        mv_run r = {kd, shapes[i].out, shapes[i].k, 4096 + shapes[i].w_shift, 0, 0, 0};
        bool row = kinds[kd].f == ONE_COLUMN;
        r.stride = (row ? r.k : r.out) + shapes[i].pad;
        int64_t w_bytes = (row ? r.out : (r.k ? r.k : 1)) * r.stride * s + 64;
        r.v_off = (r.w_off + w_bytes + 63) / 64 * 64 + shapes[i].v_shift;
        r.o_off = r.v_off + r.k * s + 64 + 16;
        fill(&r);
        // a marker after the last output: never written
        memset(host + r.o_off, 0x5a, (size_t)(r.out + 4) * s);
        CK(cuMemcpyHtoD(pool, host, (size_t)(r.o_off + (r.out + 4) * s)));
        launch(&r, 0);
        CK(cuCtxSynchronize());
        char *got = (char *)malloc((size_t)(r.out + 4) * s);
        CK(cuMemcpyDtoH(got, pool + r.o_off, (size_t)(r.out + 4) * s));
        check(&r, got);
        for (unsigned b = 0; b < 4 * s; b++)
          if ((unsigned char)got[r.out * s + b] != 0x5a) {
            printf("FAIL %s %lldx%lld: wrote past the last output\n", kinds[kd].kernel, (long long)r.out,
                   (long long)r.k);
            failures++;
            break;
          }
        free(got);
      }
  }
  grid_cap = 0;
  printf("correctness: %s (%u kernels x %u shapes, mv_f32 again on 7 blocks)\n",
         failures ? "FAILED" : "every output bit-identical", (unsigned)(sizeof kinds / sizeof kinds[0]),
         (unsigned)(sizeof shapes / sizeof shapes[0]));
}

static double copy_gbs(void) {
  size_t bytes = 512ull << 20;
  CUdeviceptr a = pool, b = pool + bytes;
  CK(cuMemsetD8(a, 1, bytes));
  CK(cuMemcpyDtoD(b, a, bytes));
  CK(cuCtxSynchronize());
  CUevent e0, e1;
  CK(cuEventCreate(&e0, 0));
  CK(cuEventCreate(&e1, 0));
  float best = 1e30f;
  for (int r = 0; r < 10; r++) {
    CK(cuEventRecord(e0, 0));
    CK(cuMemcpyDtoD(b, a, bytes));
    CK(cuEventRecord(e1, 0));
    CK(cuEventSynchronize(e1));
    float ms;
    CK(cuEventElapsedTime(&ms, e0, e1));
    if (ms < best) best = ms;
  }
  double gbs = 2.0 * bytes / (best * 1e-3) / 1e9;
  printf("copy 512 MiB device to device: %.3f ms, %.1f GB/s (read + written)\n", best, gbs);
  return gbs;
}

// Time of one product: W in `copies` places (more than L2 holds in all),
// a launch per copy back to back between two events (per launch: the
// stream's average), and single launches between events (best).
static void timing(unsigned kd, int64_t out, int64_t k, const char *what, double copy) {
  unsigned s = esize[kinds[kd].type];
  int64_t w_bytes = out * k * s;
  int copies = (int)((600ll << 20) / w_bytes);
  if (copies < 2) copies = 2;
  if (copies > 64) copies = 64;
  int64_t v_off = copies * w_bytes, o_off = v_off + k * s + 256;
  CK(cuMemsetD8(pool, 0, (size_t)(o_off + out * s)));
  mv_run runs[64];
  for (int c = 0; c < copies; c++)
    runs[c] = (mv_run){kd, out, k, c * w_bytes, kinds[kd].f == ONE_COLUMN ? k : out, v_off, o_off};
  CUevent e0, e1;
  CK(cuEventCreate(&e0, 0));
  CK(cuEventCreate(&e1, 0));
  for (int c = 0; c < copies; c++) launch(&runs[c], 0);
  CK(cuCtxSynchronize());
  float best_stream = 1e30f, best_one = 1e30f;
  for (int rep = 0; rep < 5; rep++) {
    CK(cuEventRecord(e0, 0));
    for (int c = 0; c < copies; c++) launch(&runs[c], 0);
    CK(cuEventRecord(e1, 0));
    CK(cuEventSynchronize(e1));
    float ms;
    CK(cuEventElapsedTime(&ms, e0, e1));
    if (ms / copies < best_stream) best_stream = ms / copies;
  }
  for (int rep = 0; rep < 3 * copies && rep < 60; rep++) {
    CK(cuEventRecord(e0, 0));
    launch(&runs[rep % copies], 0);
    CK(cuEventRecord(e1, 0));
    CK(cuEventSynchronize(e1));
    float ms;
    CK(cuEventElapsedTime(&ms, e0, e1));
    if (ms < best_one) best_one = ms;
  }
  const char *how = "back to back";
  if (graph) {  // a chain of 64 launches cycling over the copies of W
    chain_item items[64];
    for (int i = 0; i < 64; i++) {
      const mv_run *r = &runs[i % copies];
      items[i] = (chain_item){fns[kd], blocks_of(out), {r->out, r->k, r->w_off, r->stride, r->v_off, r->o_off}};
    }
    float us = graph_us(items, 64);
    if (us < 0) return;
    best_stream = us * 1e-3f;
    how = "a graph of 64 launches";
  }
  double gb_stream = w_bytes / (best_stream * 1e-3) / 1e9, gb_one = w_bytes / (best_one * 1e-3) / 1e9;
  printf("matvec %s %lldx%lld (%s, %s): %.2f us, %.1f GB/s, %.0f%% of copy (%s, %d copies of W); "
         "alone %.2f us, %.1f GB/s, %.0f%% of copy\n",
         kinds[kd].type == T_F32 ? "f32" : kinds[kd].type == T_F64 ? "f64" : "i32", (long long)out,
         (long long)k, kinds[kd].kernel, what, best_stream * 1e3, gb_stream, 100.0 * gb_stream / copy, how, copies,
         best_one * 1e3, gb_one, 100.0 * gb_one / copy);
}

// An empty kernel with the matrix-vector kernels' parameters (JIT from
// this PTX), for the launch floor.
static const char empty_ptx[] =
  ".version 7.0\n.target sm_70\n.address_size 64\n"
  ".visible .entry mv_empty(.param .u64 a0, .param .u64 a1, .param .u64 a2, .param .u64 a3,\n"
  "  .param .u64 a4, .param .u64 a5, .param .u64 a6, .param .u64 a7)\n{\n  ret;\n}\n";

// Per launch, us: the average of 64 launches back to back between two
// events (best of 5; with --graph, 64 launches as one graph) and the best
// single launch between events.
static void time_launches(CUfunction f, unsigned blocks, void **args, float *stream_us, float *alone_us) {
  CUevent e0, e1;
  CK(cuEventCreate(&e0, 0));
  CK(cuEventCreate(&e1, 0));
  for (int i = 0; i < 8; i++) launch_fn(f, blocks, args, 0);
  CK(cuCtxSynchronize());
  *stream_us = *alone_us = 1e30f;
  if (graph) {  // the parameters: args[1..6]
    chain_item items[64];
    for (int i = 0; i < 64; i++) {
      items[i] = (chain_item){f, blocks, {0}};
      for (int j = 0; j < 6; j++) items[i].p[j] = *(int64_t *)args[1 + j];
    }
    *stream_us = graph_us(items, 64);
  }
  for (int rep = 0; rep < 5 && !graph; rep++) {
    CK(cuEventRecord(e0, 0));
    for (int i = 0; i < 64; i++) launch_fn(f, blocks, args, 0);
    CK(cuEventRecord(e1, 0));
    CK(cuEventSynchronize(e1));
    float ms;
    CK(cuEventElapsedTime(&ms, e0, e1));
    if (ms * 1e3f / 64 < *stream_us) *stream_us = ms * 1e3f / 64;
  }
  for (int rep = 0; rep < 30; rep++) {
    CK(cuEventRecord(e0, 0));
    launch_fn(f, blocks, args, 0);
    CK(cuEventRecord(e1, 0));
    CK(cuEventSynchronize(e1));
    float ms;
    CK(cuEventElapsedTime(&ms, e0, e1));
    if (ms * 1e3f < *alone_us) *alone_us = ms * 1e3f;
  }
  CK(cuEventDestroy(e0));
  CK(cuEventDestroy(e1));
}

// --floor: what a launch costs with no W to read.  The empty kernel on
// the grid the kernel gets (the launch floor), then mv_f32 at K 0 (the
// kernel's own fixed part: parameters, tests, the stores), 4 and 64 (the
// first chunk's load and the path to the first add); W and v in L2.
static void floor_costs(void) {
  CUmodule m;
  CUfunction empty;
  CK(cuModuleLoadData(&m, empty_ptx));
  CK(cuModuleGetFunction(&empty, m, "mv_empty"));
  static const int64_t outs[] = {768, 2112}, ks[] = {0, 4, 64};
  for (unsigned o = 0; o < 2; o++) {
    unsigned blocks = (unsigned)((outs[o] + rows - 1) / rows);
    mv_run r = {0, outs[o], 0, 0, 0, 0, 0};
    void *mem = (void *)pool;
    int64_t p[6] = {r.out, 0, 0, 0, 0, 0};
    void *args[8] = {&mem, &p[0], &p[1], &p[2], &p[3], &p[4], &p[5], &mem};
    float st, al;
    time_launches(empty, blocks, args, &st, &al);
    printf("floor %lld outputs (%u blocks): empty kernel %.2f us %s, %.2f alone", (long long)outs[o], blocks, st,
           graph ? "in a graph of 64" : "back to back", al);
    for (unsigned k = 0; k < 3; k++) {
      r.k = ks[k], r.stride = ks[k], r.w_off = 0;
      r.v_off = outs[o] * 64 * 4 + 256, r.o_off = r.v_off + 4096;
      p[0] = r.out, p[1] = r.k, p[2] = r.w_off, p[3] = r.stride, p[4] = r.v_off, p[5] = r.o_off;
      time_launches(fns[0], blocks, args, &st, &al);
      printf("; K %lld %.2f, %.2f", (long long)ks[k], st, al);
    }
    printf(" (us)\n");
  }
  CK(cuModuleUnload(m));
}

int main(int argc, char **argv) {
  ptx_dir = argc > 1 ? argv[1] : ".";
  bool time_only = false, sweep = false, floor = false;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--time")) time_only = true;
    else if (!strcmp(argv[i], "--sweep")) sweep = true;
    else if (!strcmp(argv[i], "--floor")) floor = true;
    else if (!strcmp(argv[i], "--pdl")) pdl = true;
    else if (!strcmp(argv[i], "--graph")) graph = true;
    else if (!strcmp(argv[i], "--rows") && i + 1 < argc) rows = atoi(argv[++i]);
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
  CK(cuDeviceGetName(name, sizeof name, dev));
  printf("device: %s\n", name);
  CK(cuMemAlloc(&pool, POOL_BYTES));
  host = (char *)calloc(1, 64ull << 20);
  load_kernels();
  if (!time_only) correctness();
  double copy = copy_gbs();
#if CUDA_VERSION < 12000
  if (pdl) printf("pdl: not built (CUDA %d < 12.0): plain launches\n", CUDA_VERSION);
#endif
  if (pdl) printf("pdl: every launch with programmatic stream serialization%s\n",
                  graph ? "; graphs with programmatic edges" : "");
  if (graph) printf("graph: back-to-back figures are of 64 launches as one CUDA graph, launched twice\n");
  if (graph && !time_only) chain_check();
  if (floor) floor_costs();
  timing(0, 2048, 768, "W 2048x768, as w1 and w3", copy);
  timing(0, 768, 2048, "W 768x2048, as w2", copy);
  timing(0, 768, 768, "W 768x768, as wq", copy);
  timing(0, 32000, 768, "W 32000x768, the classifier", copy);
  timing(2, 2048, 768, "v times W 768x2048", copy);
  timing(1, 2048, 768, "W 768x2048 read along the outputs", copy);
  // `--sweep`: K at a fixed number of outputs (so of blocks), whose
  // slope is the time a term of one output's chain of adds costs, and
  // whose intercept the fixed cost (docs/PERFORMANCE.md, "The add chain").
  static const int64_t sweep_out[] = {768, 2112}, sweep_k[] = {256, 512, 1024, 2048, 4096, 8192};
  for (unsigned o = 0; sweep && o < 2; o++)
    for (unsigned k = 0; k < sizeof sweep_k / sizeof sweep_k[0]; k++)
      timing(0, sweep_out[o], sweep_k[k], "sweep", copy);
  return failures ? 1 : 0;
}
