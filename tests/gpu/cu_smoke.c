/* cu_smoke.c: the CUDA driver layer on a real GPU: managed memory under a
 * cap, a hand-written vector-add PTX checked element by element, refused
 * host pointers, a JIT error log, a launch from a second thread, the launch
 * cost, and last the sticky-error path.  Without a GPU it prints
 * "skipped: <reason>" and exits 0.  Built without CUDA headers:
 *   gcc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Iruntime tests/gpu/cu_smoke.c \
 *       runtime/cu_*.c -ldl -lpthread -lm -o cu_smoke */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"

/* sm_75, PTX ISA 6.3: every driver since CUDA 10.0 JITs it for newer GPUs. */
static const char smoke_ptx[] =
    ".version 6.3\n"
    ".target sm_75\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry vadd(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)\n"
    "{\n"
    "\t.reg .pred %p<2>;\n"
    "\t.reg .b32 %r<6>;\n"
    "\t.reg .f32 %f<4>;\n"
    "\t.reg .b64 %rd<11>;\n"
    "\tld.param.u64 %rd1, [a];\n"
    "\tld.param.u64 %rd2, [b];\n"
    "\tld.param.u64 %rd3, [c];\n"
    "\tld.param.u32 %r1, [n];\n"
    "\tmov.u32 %r2, %ctaid.x;\n"
    "\tmov.u32 %r3, %ntid.x;\n"
    "\tmov.u32 %r4, %tid.x;\n"
    "\tmad.lo.s32 %r5, %r2, %r3, %r4;\n"
    "\tsetp.ge.u32 %p1, %r5, %r1;\n"
    "\t@%p1 bra DONE;\n"
    "\tcvta.to.global.u64 %rd4, %rd1;\n"
    "\tcvta.to.global.u64 %rd5, %rd2;\n"
    "\tcvta.to.global.u64 %rd6, %rd3;\n"
    "\tmul.wide.u32 %rd7, %r5, 4;\n"
    "\tadd.s64 %rd8, %rd4, %rd7;\n"
    "\tadd.s64 %rd9, %rd5, %rd7;\n"
    "\tadd.s64 %rd10, %rd6, %rd7;\n"
    "\tld.global.f32 %f1, [%rd8];\n"
    "\tld.global.f32 %f2, [%rd9];\n"
    "\tadd.rn.f32 %f3, %f1, %f2;\n"
    "\tst.global.f32 [%rd10], %f3;\n"
    "DONE:\n"
    "\tret;\n"
    "}\n"
    "\n"
    "// Stores 42 through p: given 0, it faults on the device.\n"
    ".visible .entry store_through(.param .u64 p)\n"
    "{\n"
    "\t.reg .b32 %r<2>;\n"
    "\t.reg .b64 %rd<3>;\n"
    "\tld.param.u64 %rd1, [p];\n"
    "\tcvta.to.global.u64 %rd2, %rd1;\n"
    "\tmov.u32 %r1, 42;\n"
    "\tst.global.u32 [%rd2], %r1;\n"
    "\tret;\n"
    "}\n";

static const char bad_ptx[] =
    ".version 6.3\n.target sm_75\n.address_size 64\n\n"
    ".visible .entry bad()\n{\n\tfrobnicate.u32 %r1;\n\tret;\n}\n";

#define BLOCK_BYTES (64u << 20)
#define VECTOR_LEN (4u << 20) /* floats per vector: three fit in the block */

static int failures;

#define EXPECT(cond, ...)                                     \
  do {                                                        \
    if (!(cond)) {                                            \
      failures++;                                             \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      printf(__VA_ARGS__);                                    \
      printf("\n");                                           \
    }                                                         \
  } while (0)

typedef struct vectors {
  float *a, *b, *c;
  uint32_t n;
} vectors;

static bool launch_vadd(const cu_kernel *k, vectors *v, cu_error *err) {
  uint64_t bytes = (uint64_t)v->n * sizeof(float);
  void *params[] = {&v->a, &v->b, &v->c, &v->n};
  cu_range ranges[] = {{v->a, bytes}, {v->b, bytes}, {v->c, bytes}};
  cu_args args = {.params = params, .ranges = ranges, .nranges = 3};
  cu_dim3 grid = {(v->n + 255) / 256, 1, 1}, block = {256, 1, 1};
  return cu_launch(k, grid, block, 0, &args, err);
}

static void fill(vectors *v) {
  for (uint32_t i = 0; i < v->n; i++) {
    v->a[i] = (float)i;
    v->b[i] = 2.0f * (float)i + 0.5f;
    v->c[i] = -1.0f;
  }
}

static uint32_t wrong_elements(const vectors *v) {
  uint32_t wrong = 0;
  for (uint32_t i = 0; i < v->n; i++)
    if (v->c[i] != v->a[i] + v->b[i]) wrong++;
  return wrong;
}

static void test_vadd(const cu_kernel *k, vectors *v) {
  cu_error err;
  fill(v);
  EXPECT(cu_prefetch(v->a, 3ull * v->n * sizeof(float), &err), "%s", err.message);
  EXPECT(launch_vadd(k, v, &err), "%s", err.message);
  uint32_t wrong = wrong_elements(v);
  EXPECT(wrong == 0, "%u of %u elements wrong", wrong, v->n);
}

/* A host pointer must be refused before the launch, and harmlessly. */
static void test_host_pointer_refused(const cu_kernel *k, vectors *v) {
  vectors host = *v;
  host.n = 1024;
  host.c = malloc(host.n * sizeof(float));
  cu_error err;
  EXPECT(!launch_vadd(k, &host, &err), "a host pointer was launched");
  EXPECT(strstr(err.message, "not inside memory the device reaches"), "%s", err.message);
  EXPECT(cu_available(), "GPU lost after a refused launch: %s", cu_unavailable_reason());
  free(host.c);
}

static void test_jit_error_log(void) {
  cu_ptx set[] = {{75, 63, bad_ptx}};
  cu_module *m = NULL;
  cu_error err;
  EXPECT(!cu_module_load(set, 1, &m, &err), "bad PTX loaded");
  printf("expected JIT failure: %s\n", err.message);
  EXPECT(strstr(err.message, "JIT error log"), "no log in: %s", err.message);
  EXPECT(cu_available(), "GPU lost after a JIT error: %s", cu_unavailable_reason());
}

typedef struct thread_job {
  const cu_kernel *k;
  vectors v;
  bool launched;
  cu_error err;
} thread_job;

/* The primary context must be made current on this thread by the layer. */
static void *thread_main(void *arg) {
  thread_job *job = arg;
  job->launched = launch_vadd(job->k, &job->v, &job->err);
  return NULL;
}

static void test_other_thread(const cu_kernel *k, vectors *v) {
  thread_job job = {.k = k, .v = *v};
  job.v.n = 65536;
  fill(&job.v);
  pthread_t t;
  EXPECT(pthread_create(&t, NULL, thread_main, &job) == 0, "pthread_create");
  pthread_join(t, NULL);
  EXPECT(job.launched, "%s", job.err.message);
  EXPECT(wrong_elements(&job.v) == 0, "wrong results from the second thread");
}

/* Last: after this the GPU is gone for the process. */
static void test_sticky_error(const cu_kernel *store) {
  uint64_t null_ptr = 0;
  void *params[] = {&null_ptr};
  cu_args args = {.params = params};
  cu_dim3 one = {1, 1, 1};
  cu_error err;
  EXPECT(!cu_launch(store, one, one, 0, &args, &err), "a store through NULL succeeded");
  printf("expected sticky error: %s\n", err.message);
  EXPECT(strstr(err.message, "GPU disabled"), "%s", err.message);
  EXPECT(!cu_available(), "GPU still available after a sticky error");
  EXPECT(strstr(cu_unavailable_reason(), "disabled after"), "%s", cu_unavailable_reason());
  void *ptr = NULL;
  EXPECT(!cu_alloc_managed(1 << 20, &ptr, &err), "allocation after a sticky error");
  EXPECT(strstr(err.message, "GPU unavailable"), "%s", err.message);
  EXPECT(isinf(cu_launch_cost_us()), "launch cost after a sticky error");
  printf("after the sticky error: %s\n", err.message);
}

static void run(vectors *v) {
  cu_ptx set[] = {{75, 63, smoke_ptx}};
  cu_module *m = NULL;
  cu_kernel vadd, store;
  cu_error err;
  if (!cu_module_load(set, 1, &m, &err) || !cu_module_kernel(m, "vadd", &vadd, &err) ||
      !cu_module_kernel(m, "store_through", &store, &err)) {
    EXPECT(false, "%s", err.message);
    return;
  }
  test_vadd(&vadd, v);
  test_host_pointer_refused(&vadd, v);
  test_jit_error_log();
  test_other_thread(&vadd, v);
  double cost = cu_launch_cost_us();
  EXPECT(isfinite(cost) && cost > 0, "launch cost %f", cost);
  printf("empty launch + synchronise: %.1f us\n", cost);
  void *base = v->a;
  cu_free_managed(base);
  EXPECT(!cu_reachable(base, 1), "freed block still registered");
  test_sticky_error(&store);
  cu_module_unload(m);
}

int main(void) {
  /* Line by line, so the log interleaves with the trace on stderr. */
  setvbuf(stdout, NULL, _IOLBF, 0);
  setenv("TWASM_TRACE", "1", 0);
  setenv("TWASM_GPU_MEM_CAP", "96M", 0);
  if (!cu_available()) {
    printf("skipped: %s\n", cu_unavailable_reason());
    return 0;
  }
  const cu_device_info *d = cu_device();
  printf("device: %s sm_%d, driver %d, %llu MiB free, cap %llu\n", d->name, d->cc,
         d->driver_version, (unsigned long long)(d->free_bytes >> 20),
         (unsigned long long)d->mem_cap);
  void *block = NULL;
  cu_error err;
  if (!cu_alloc_managed(BLOCK_BYTES, &block, &err)) {
    printf("FAIL: 64 MiB managed: %s\n", err.message);
    return 1;
  }
  void *second = NULL;
  if (d->mem_cap == 96u << 20) {
    EXPECT(!cu_alloc_managed(BLOCK_BYTES, &second, &err), "cap not enforced");
    EXPECT(strstr(err.message, "TWASM_GPU_MEM_CAP"), "%s", err.message);
  }
  float *f = block;
  vectors v = {f, f + VECTOR_LEN, f + 2 * VECTOR_LEN, VECTOR_LEN};
  run(&v);
  if (failures) {
    printf("FAILED: %d checks\n", failures);
    return 1;
  }
  printf("passed\n");
  return 0;
}
