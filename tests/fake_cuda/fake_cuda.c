/* fake_cuda.c: a stand-in libcuda.so.1 for tests on machines without a
 * GPU, so that compiled programs meet the driver states the runtime must
 * survive.  FAKE_CUDA selects one:
 *   nodevice  cuInit fails with CUDA_ERROR_NO_DEVICE (a driver, no GPU);
 *   old       a CUDA 9.0 driver (PTX ISA 6.0 at most) with an sm_75 device:
 *             everything up to managed memory works (host memory stands in
 *             for it), no PTX module of a program ever loads (the
 *             runtime's empty timing kernel does);
 *   any       a CUDA 13.0 driver with an sm_90 device that loads every
 *             module and launches every kernel as a no-op: a program's
 *             launch path runs whole on the host (profiles of the
 *             runtime's host time, e.g. under callgrind; the results are
 *             not the program's).
 * Every entry point the runtime resolves exists; unknown modes fail cuInit.
 * FAKE_CUDA_INIT_MS=N makes cuInit take N ms (the real one's start cost);
 * FAKE_CUDA_PAGEABLE=0 takes pageable memory access away from the device;
 * FAKE_CUDA_LOG=FILE appends the name of each call that starts the driver
 * or pins memory (cuInit, cuDevicePrimaryCtxRetain, cuMemHostRegister,
 * cuMemHostUnregister) or compiles a PTX (cuLinkComplete) to FILE;
 * FAKE_CUDA_JIT_MS=N makes each such compile take N ms.
 * Device memory (cuMemAlloc_v2) is host memory too, and the copies to and
 * from it are plain memcpy (refused, as by the real driver, where their
 * host bytes cross the end of a registered range: pinned pieces), so the runtime's device copy of linear memory
 * (rt_resident.c) can be checked byte for byte.  Graphs of the empty
 * kernel can be made and launched (cu_graph.c); FAKE_CUDA_LOG also gets
 * cuGraphInstantiateWithFlags and cuGraphLaunch, and with
 * FAKE_CUDA_LOG_WAITS=1 each wait (cuCtxSynchronize, cuStreamSynchronize)
 * as "synchronise". */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>

enum { OK = 0, ERR_INVALID_VALUE = 1, ERR_NO_DEVICE = 100, ERR_INVALID_PTX = 218, ERR_NOT_SUPPORTED = 801 };

static int mode_any(void) {
  const char *m = getenv("FAKE_CUDA");
  return m && strcmp(m, "any") == 0;
}

static int mode_old(void) {
  const char *m = getenv("FAKE_CUDA");
  return (m && strcmp(m, "old") == 0) || mode_any();
}

static void log_call(const char *name) {
  const char *path = getenv("FAKE_CUDA_LOG");
  FILE *f = path ? fopen(path, "a") : NULL;
  if (!f) return;
  fprintf(f, "%s\n", name);
  fclose(f);
}

int cuInit(unsigned flags) {
  (void)flags;
  log_call("cuInit");
  const char *ms = getenv("FAKE_CUDA_INIT_MS");
  long wait = ms ? atol(ms) : 0;
  struct timespec t = {wait / 1000, wait % 1000 * 1000000};
  if (wait > 0) nanosleep(&t, NULL);
  return mode_old() ? OK : ERR_NO_DEVICE;
}

int cuDriverGetVersion(int *v) {
  *v = mode_any() ? 13000 : 9000;
  return OK;
}

int cuDeviceGet(int *dev, int ordinal) {
  *dev = ordinal;
  return ordinal == 0 ? OK : ERR_INVALID_VALUE;
}

int cuDeviceGetAttribute(int *value, int attribute, int dev) {
  (void)dev;
  switch (attribute) {
  case 75: *value = mode_any() ? 9 : 7; break; /* compute capability major */
  case 76: *value = mode_any() ? 0 : 5; break; /* minor */
  case 88: /* pageable memory access */
    *value = !(getenv("FAKE_CUDA_PAGEABLE") && !strcmp(getenv("FAKE_CUDA_PAGEABLE"), "0"));
    break;
  default: *value = 1; break;  /* managed memory, concurrent access, ... */
  }
  return OK;
}

int cuDeviceGetName(char *name, int len, int dev) {
  (void)dev;
  strncpy(name, "fake sm_75 behind a CUDA 9.0 driver", (size_t)len - 1);
  name[len - 1] = 0;
  return OK;
}

static int ctx_token;
int cuDevicePrimaryCtxRetain(void **ctx, int dev) {
  (void)dev;
  log_call("cuDevicePrimaryCtxRetain");
  *ctx = &ctx_token;
  return OK;
}
int cuDevicePrimaryCtxRelease_v2(int dev) { (void)dev; return OK; }
int cuCtxSetCurrent(void *ctx) { (void)ctx; return OK; }
/* With FAKE_CUDA_LOG_WAITS=1 both waits are logged (FAKE_CUDA_LOG), as
 * "synchronise": tests of launches not waited for (rt_defer.c) count
 * them. */
static void log_wait(void) {
  const char *v = getenv("FAKE_CUDA_LOG_WAITS");
  if (v && strcmp(v, "1") == 0) log_call("synchronise");
}
int cuCtxSynchronize(void) {
  log_wait();
  return OK;
}
int cuStreamSynchronize(void *stream) {
  (void)stream;
  log_wait();
  return OK;
}

int cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes) {
  *free_bytes = (size_t)14 << 30;
  *total_bytes = (size_t)16 << 30;
  return OK;
}

/* Host memory stands in for managed memory; sizes are remembered for free. */
#define SLOTS 64
static struct { void *p; size_t n; } blocks[SLOTS];

int cuMemAllocManaged(uint64_t *ptr, size_t size, unsigned flags) {
  (void)flags;
  /* "any": device memory faulted in now, so that its first copies run
   * at memcpy's rate and a launch is timed as the runtime's host work */
  int populate = mode_any() && size <= ((size_t)4 << 30) ? MAP_POPULATE : 0;
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | populate, -1, 0);
  if (p == MAP_FAILED) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  for (int i = 0; i < SLOTS; i++)
    if (!blocks[i].p) {
      blocks[i].p = p, blocks[i].n = size;
      *ptr = (uint64_t)(uintptr_t)p;
      return OK;
    }
  munmap(p, size);
  return 2;
}

int cuMemAlloc_v2(uint64_t *ptr, size_t size) { return cuMemAllocManaged(ptr, size, 0); }

/* Registered host memory (cuMemHostRegister_v2), as the real driver
 * checks it: an engine copy whose host bytes meet a registration must lie
 * inside that one registration (not across two pinned pieces). */
#define PINS 128
static struct {
  const char *p;
  size_t n;
} pins[PINS];

static int check_pinned(const void *host, size_t len) {
  const char *lo = host, *hi = lo + len;
  for (int i = 0; i < PINS; i++) {
    if (!pins[i].p || hi <= pins[i].p || lo >= pins[i].p + pins[i].n) continue;
    if (lo < pins[i].p || hi > pins[i].p + pins[i].n) return ERR_INVALID_VALUE;
  }
  return OK;
}

int cuMemcpyHtoDAsync_v2(uint64_t dst, const void *src, size_t len, void *stream) {
  (void)stream;
  if (check_pinned(src, len) != OK) return ERR_INVALID_VALUE;
  memcpy((void *)(uintptr_t)dst, src, len);
  return OK;
}
int cuMemcpyDtoHAsync_v2(void *dst, uint64_t src, size_t len, void *stream) {
  (void)stream;
  if (check_pinned(dst, len) != OK) return ERR_INVALID_VALUE;
  memcpy(dst, (const void *)(uintptr_t)src, len);
  return OK;
}
int cuMemcpyDtoD_v2(uint64_t dst, uint64_t src, size_t len) {
  memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, len);
  return OK;
}

int cuMemFree_v2(uint64_t ptr) {
  for (int i = 0; i < SLOTS; i++)
    if (blocks[i].p == (void *)(uintptr_t)ptr) {
      munmap(blocks[i].p, blocks[i].n);
      blocks[i].p = NULL;
      return OK;
    }
  return ERR_INVALID_VALUE;
}

int cuMemHostRegister_v2(void *p, size_t size, unsigned flags) {
  (void)flags;
  log_call("cuMemHostRegister");
  for (int i = 0; i < PINS; i++)
    if (!pins[i].p) {
      pins[i].p = p, pins[i].n = size;
      break;
    }
  return OK;
}
int cuMemHostUnregister(void *p) {
  log_call("cuMemHostUnregister");
  for (int i = 0; i < PINS; i++)
    if (pins[i].p == p) pins[i].p = NULL;
  return OK;
}

/* A driver this old takes no PTX the runtime would offer, but the
 * runtime's own empty kernel (sm_50, for timing a launch) loads and
 * launches: it has no effect to fake. */
static int empty_module, empty_function;
int cuModuleLoadDataEx(void **module, const void *image, unsigned n, int *opts, void **values) {
  (void)n, (void)opts, (void)values;
  if (mode_any()) {
    *module = &empty_module;
    return OK;
  }
  if (!strstr(image, ".entry twasm_empty()") || !strstr(image, ".target sm_50")) return ERR_INVALID_PTX;
  *module = &empty_module;
  return OK;
}
/* The linker: a "cubin" is the PTX's text behind a tag, which
 * cuModuleLoadData checks as cuModuleLoadDataEx does the PTX.
 * FAKE_CUDA_JIT_MS=N makes each cuLinkComplete take N ms (a real
 * compile's time); FAKE_CUDA_LOG gets cuLinkComplete. */
typedef struct {
  char tag[8];
  const char *ptx;
} fake_cubin;
int cuLinkCreate_v2(unsigned n, int *opts, void **values, void **state) {
  (void)n, (void)opts, (void)values;
  fake_cubin *c = calloc(1, sizeof *c);
  if (!c) return ERR_INVALID_VALUE;
  memcpy(c->tag, "fakebin", 8);
  *state = c;
  return OK;
}
int cuLinkAddData_v2(void *state, int type, void *data, size_t size, const char *name, unsigned n, int *opts,
                     void **values) {
  (void)size, (void)name, (void)n, (void)opts, (void)values;
  if (type != 1 || ((fake_cubin *)state)->ptx) return ERR_INVALID_VALUE;
  ((fake_cubin *)state)->ptx = data;
  return OK;
}
int cuLinkComplete(void *state, void **cubin, size_t *size) {
  log_call("cuLinkComplete");
  const char *ms = getenv("FAKE_CUDA_JIT_MS");
  long wait = ms ? atol(ms) : 0;
  if (wait > 0) nanosleep(&(struct timespec){wait / 1000, wait % 1000 * 1000000}, NULL);
  const char *ptx = ((fake_cubin *)state)->ptx;
  if (!ptx) return ERR_INVALID_VALUE;
  /* the old driver compiles only the runtime's empty kernel */
  if (!mode_any() && (!strstr(ptx, ".entry twasm_empty()") || !strstr(ptx, ".target sm_50"))) return ERR_INVALID_PTX;
  *cubin = state;
  *size = sizeof(fake_cubin);
  return OK;
}
int cuLinkDestroy(void *state) {
  free(state);
  return OK;
}
int cuModuleLoadData(void **module, const void *image) {
  const fake_cubin *c = image;
  if (memcmp(c->tag, "fakebin", 8) != 0) return ERR_INVALID_PTX;
  return cuModuleLoadDataEx(module, c->ptx, 0, NULL, NULL);
}
int cuModuleGetFunction(void **f, void *m, const char *name) {
  if (m != &empty_module || (strcmp(name, "twasm_empty") != 0 && !mode_any())) return ERR_INVALID_VALUE;
  *f = &empty_function;
  return OK;
}
int cuModuleUnload(void *m) { (void)m; return OK; }
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shared, void *stream, void **params, void **extra) {
  (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared;
  (void)stream, (void)params, (void)extra;
  return f == &empty_function ? OK : ERR_NOT_SUPPORTED;
}

int cuGetErrorName(int code, const char **out) {
  *out = code == ERR_NO_DEVICE ? "CUDA_ERROR_NO_DEVICE"
         : code == ERR_INVALID_PTX ? "CUDA_ERROR_INVALID_PTX" : "CUDA_ERROR_FAKE";
  return OK;
}
int cuGetErrorString(int code, const char **out) {
  (void)code;
  *out = "from the fake driver";
  return OK;
}

/* Graphs (runtime/cu_graph.c): a graph is the kernel nodes' functions;
 * launching it checks them as cuLaunchKernel would.  cuGraphInstantiate-
 * WithFlags and cuGraphLaunch are logged (FAKE_CUDA_LOG). */
typedef struct {
  void *func;
  unsigned dims[7];
  void **params, **extra;
  void *kern, *ctx;
} fake_kernel_node;
typedef struct {
  int nodes;
  void *funcs[16];
  long long first[16]; /* each node's first parameter, logged at a launch */
} fake_graph;
int cuGraphCreate(void **graph, unsigned flags) {
  (void)flags;
  *graph = calloc(1, sizeof(fake_graph));
  return *graph ? OK : ERR_INVALID_VALUE;
}
int cuGraphAddKernelNode_v2(void **node, void *graph, void *const *deps, size_t ndeps, const void *params) {
  (void)deps, (void)ndeps;
  fake_graph *g = graph;
  const fake_kernel_node *p = params;
  if (g->nodes == 16) return ERR_INVALID_VALUE;
  g->funcs[g->nodes] = p->func;
  g->first[g->nodes] = 0;
  if (p->params && p->params[0]) memcpy(&g->first[g->nodes], p->params[0], 8);
  *node = (void *)(uintptr_t)++g->nodes; /* its index + 1 */
  return OK;
}
/* Logged; the node's new first parameter is what later launches log. */
int cuGraphExecKernelNodeSetParams_v2(void *exec, void *node, const void *params) {
  log_call("cuGraphExecKernelNodeSetParams");
  fake_graph *e = exec;
  const fake_kernel_node *p = params;
  uintptr_t i = (uintptr_t)node;
  if (i < 1 || (int)i > e->nodes || p->func != e->funcs[i - 1]) return ERR_INVALID_VALUE;
  if (p->params && p->params[0]) memcpy(&e->first[i - 1], p->params[0], 8);
  return OK;
}
int cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags) {
  (void)flags;
  log_call("cuGraphInstantiateWithFlags");
  fake_graph *e = malloc(sizeof *e);
  if (!e) return ERR_INVALID_VALUE;
  *e = *(fake_graph *)graph;
  *exec = e;
  return OK;
}
int cuGraphLaunch(void *exec, void *stream) {
  (void)stream;
  log_call("cuGraphLaunch");
  const fake_graph *g = exec;
  for (int i = 0; i < g->nodes; i++)
    if (g->funcs[i] != &empty_function) return ERR_NOT_SUPPORTED;
  char line[64];
  for (int i = 0; i < g->nodes; i++) {
    snprintf(line, sizeof line, "graph node param %lld", g->first[i]);
    log_call(line);
  }
  return OK;
}
int cuGraphDestroy(void *graph) {
  free(graph);
  return OK;
}
int cuGraphExecDestroy(void *exec) {
  free(exec);
  return OK;
}
