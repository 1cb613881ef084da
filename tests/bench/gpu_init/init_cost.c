/* init_cost.c: what a process pays before its first kernel runs, step by
 * step, through the raw driver API (dlopen, cuInit, primary context,
 * managed reservation of a 4 GiB memory, a small PTX load): the fixed
 * part of every end-to-end GPU time.  Prints "skipped: reason" without a
 * driver.  Built without CUDA headers:
 *   cc -std=c11 -D_GNU_SOURCE -O2 init_cost.c -ldl -o init_cost */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

typedef int (*fn_i)(unsigned);
typedef int (*fn_get)(int *, int);
typedef int (*fn_retain)(void **, int);
typedef int (*fn_ctx)(void *);
typedef int (*fn_alloc)(uint64_t *, size_t, unsigned);
typedef int (*fn_load)(void **, const void *);
typedef int (*fn_sync)(void);

static double ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static const char ptx[] =
    ".version 6.3\n.target sm_75\n.address_size 64\n"
    ".visible .entry nop(.param .u64 a)\n{\n\tret;\n}\n";

int main(void) {
  double t0 = ms();
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    printf("skipped: %s\n", dlerror());
    return 0;
  }
  double t1 = ms();
  fn_i init = (fn_i)dlsym(lib, "cuInit");
  fn_get dev_get = (fn_get)dlsym(lib, "cuDeviceGet");
  fn_retain retain = (fn_retain)dlsym(lib, "cuDevicePrimaryCtxRetain");
  fn_ctx set = (fn_ctx)dlsym(lib, "cuCtxSetCurrent");
  fn_alloc alloc = (fn_alloc)dlsym(lib, "cuMemAllocManaged");
  fn_load load = (fn_load)dlsym(lib, "cuModuleLoadData");
  fn_sync sync = (fn_sync)dlsym(lib, "cuCtxSynchronize");
  if (!init || !dev_get || !retain || !set || !alloc || !load || !sync) {
    printf("skipped: driver lacks an entry point\n");
    return 0;
  }
  int r = init(0);
  double t2 = ms();
  if (r) {
    printf("skipped: cuInit %d\n", r);
    return 0;
  }
  int dev = 0;
  void *ctx = NULL, *mod = NULL;
  uint64_t mem = 0;
  if ((r = dev_get(&dev, 0)) || (r = retain(&ctx, dev))) {
    printf("skipped: no device (%d)\n", r);
    return 0;
  }
  double t3 = ms();
  set(ctx);
  r = alloc(&mem, (4ull << 30) + 65536, 1);
  double t4 = ms();
  int r2 = load(&mod, ptx);
  double t5 = ms();
  sync();
  printf("init cost: dlopen %.1f ms, cuInit %.1f ms, primary context %.1f ms, "
         "managed 4 GiB %.1f ms (%d), PTX load %.1f ms (%d); total %.1f ms\n",
         t1 - t0, t2 - t1, t3 - t2, t4 - t3, r, t5 - t4, r2, t5 - t0);
  return 0;
}
