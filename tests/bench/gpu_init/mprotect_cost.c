/* mprotect_cost.c: what the page protection of launches not waited for
 * (runtime/rt_defer.c) costs and whether it behaves as the runtime
 * assumes, through the raw driver API (issue 20):
 * - mprotect of one page (PROT_NONE, then read-write) and a fault round
 *   trip (PROT_NONE, a read, the SIGSEGV handler reopens), in a process
 *   without the driver and again after cuInit and the primary context
 *   (the driver's threads: a narrowing mprotect shoots down their TLBs);
 * - on host memory registered with CU_MEMHOSTREGISTER_DEVICEMAP (linear
 *   memory on a device without pageable access) and on managed memory
 *   (the result cell): whether mprotect succeeds there, whether a kernel
 *   storing into a PROT_NONE page succeeds, and whether the CPU sees the
 *   kernel's value after its fault reopened the page;
 * - a launch and its wait, against two launches and one wait (what a
 *   launch not waited for saves at most).
 * Prints "skipped: reason" without a driver.  Built without CUDA headers:
 *   cc -std=c11 -D_GNU_SOURCE -O2 mprotect_cost.c -ldl -o mprotect_cost */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define N 2000

typedef int (*fn_i)(unsigned);
typedef int (*fn_get)(int *, int);
typedef int (*fn_retain)(void **, int);
typedef int (*fn_ctx)(void *);
typedef int (*fn_alloc)(uint64_t *, size_t, unsigned);
typedef int (*fn_reg)(void *, size_t, unsigned);
typedef int (*fn_load)(void **, const void *);
typedef int (*fn_func)(void **, void *, const char *);
typedef int (*fn_launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                         void **, void **);
typedef int (*fn_sync)(void);

static double us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static uint8_t *volatile fault_page;
static volatile int faults;

static void on_segv(int sig, siginfo_t *si, void *ctx) {
  (void)sig, (void)ctx;
  uint8_t *a = si->si_addr;
  if (fault_page && a >= fault_page && a < fault_page + PAGE) {
    faults++;
    mprotect(fault_page, PAGE, PROT_READ | PROT_WRITE);
    return;
  }
  signal(SIGSEGV, SIG_DFL);
}

/* mprotect pairs and fault round trips on page p, us each. */
static void costs(const char *what, uint8_t *p) {
  double t0 = us();
  int bad = 0;
  for (int i = 0; i < N; i++) {
    bad |= mprotect(p, PAGE, PROT_NONE);
    bad |= mprotect(p, PAGE, PROT_READ | PROT_WRITE);
  }
  double t1 = us();
  fault_page = p;
  faults = 0;
  unsigned sum = 0;
  for (int i = 0; i < N; i++) {
    bad |= mprotect(p, PAGE, PROT_NONE);
    sum += *(volatile uint8_t *)p;
  }
  double t2 = us();
  fault_page = NULL;
  printf("%s: mprotect %.2f us a call (PROT_NONE, then read-write: %.2f a pair)%s; "
         "protect + fault + reopen %.2f us (%d faults of %d)\n",
         what, (t1 - t0) / (2.0 * N), (t1 - t0) / N, bad ? ", a call FAILED" : "", (t2 - t1) / N, faults, N);
  (void)sum;
}

static const char ptx[] = ".version 6.3\n.target sm_75\n.address_size 64\n"
                          ".visible .entry st(.param .u64 a, .param .u32 v)\n{\n"
                          "\t.reg .b64 %rd<2>;\n\t.reg .b32 %r<2>;\n"
                          "\tld.param.u64 %rd1, [a];\n\tld.param.u32 %r1, [v];\n"
                          "\tst.u32 [%rd1], %r1;\n\tret;\n}\n";

static fn_launch launch;
static fn_sync sync_ctx;
static void *fn_st;

static int store(void *at, uint32_t v) {
  uint64_t a = (uint64_t)(uintptr_t)at;
  void *args[] = {&a, &v};
  return launch(fn_st, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL);
}

/* A kernel stores into a PROT_NONE page of p; the CPU's read faults. */
static void gpu_into_protected(const char *what, uint8_t *p) {
  memset(p, 0, PAGE);
  int rp = mprotect(p, PAGE, PROT_NONE);
  int rl = store(p + 64, 0x1234abcdu);
  int rs = sync_ctx();
  fault_page = p;
  faults = 0;
  uint32_t seen = *(volatile uint32_t *)(p + 64);
  fault_page = NULL;
  printf("%s: mprotect PROT_NONE rc %d; kernel store into it: launch rc %d, synchronise rc %d; "
         "CPU read faulted %d time(s), saw 0x%08x (%s)\n",
         what, rp, rl, rs, faults, seen, seen == 0x1234abcdu ? "the kernel's value" : "NOT the kernel's value");
  mprotect(p, PAGE, PROT_READ | PROT_WRITE);
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, NULL);
  uint8_t *plain = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  memset(plain, 1, 1 << 20);
  costs("plain page, no driver", plain);

  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    printf("skipped: %s\n", dlerror());
    return 0;
  }
  fn_i init = (fn_i)dlsym(lib, "cuInit");
  fn_get dev_get = (fn_get)dlsym(lib, "cuDeviceGet");
  fn_retain retain = (fn_retain)dlsym(lib, "cuDevicePrimaryCtxRetain");
  fn_ctx set = (fn_ctx)dlsym(lib, "cuCtxSetCurrent");
  fn_alloc alloc = (fn_alloc)dlsym(lib, "cuMemAllocManaged");
  fn_reg reg = (fn_reg)dlsym(lib, "cuMemHostRegister_v2");
  fn_load load = (fn_load)dlsym(lib, "cuModuleLoadData");
  fn_func func = (fn_func)dlsym(lib, "cuModuleGetFunction");
  launch = (fn_launch)dlsym(lib, "cuLaunchKernel");
  sync_ctx = (fn_sync)dlsym(lib, "cuCtxSynchronize");
  if (!init || !dev_get || !retain || !set || !alloc || !reg || !load || !func || !launch || !sync_ctx) {
    printf("skipped: driver lacks an entry point\n");
    return 0;
  }
  int dev = 0;
  void *ctx = NULL, *mod = NULL;
  if (init(0) || dev_get(&dev, 0) || retain(&ctx, dev) || set(ctx) || load(&mod, ptx) || func(&fn_st, mod, "st")) {
    printf("skipped: the driver did not start or load the kernel\n");
    return 0;
  }
  costs("plain page, driver started", plain);

  uint8_t *pinned = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  memset(pinned, 1, 1 << 20);
  int rr = reg(pinned, 1 << 20, 2 /* CU_MEMHOSTREGISTER_DEVICEMAP */);
  printf("registered host memory: cuMemHostRegister rc %d\n", rr);
  if (rr == 0) {
    costs("registered page", pinned + 8 * PAGE);
    gpu_into_protected("registered page", pinned + 16 * PAGE);
  }
  uint64_t m = 0;
  int ra = alloc(&m, 1 << 20, 1 /* CU_MEM_ATTACH_GLOBAL */);
  printf("managed memory: cuMemAllocManaged rc %d\n", ra);
  if (ra == 0) {
    uint8_t *mp = (uint8_t *)(uintptr_t)m;
    memset(mp, 1, 1 << 20);
    costs("managed page", mp + 8 * PAGE);
    gpu_into_protected("managed page", mp + 16 * PAGE);
  }

  /* launch + wait, against two launches + one wait */
  uint8_t *dst = rr == 0 ? pinned : (uint8_t *)(uintptr_t)m;
  for (int i = 0; i < 200; i++) store(dst, (uint32_t)i), sync_ctx();
  double t0 = us();
  for (int i = 0; i < N; i++) store(dst, (uint32_t)i), sync_ctx();
  double t1 = us();
  for (int i = 0; i < N; i++) store(dst, (uint32_t)i), store(dst + 4, (uint32_t)i), sync_ctx();
  double t2 = us();
  for (int i = 0; i < N; i++) store(dst, (uint32_t)i), store(dst + 4, (uint32_t)i), store(dst + 8, (uint32_t)i),
                                    sync_ctx();
  double t3 = us();
  printf("launch + wait %.2f us; 2 launches + 1 wait %.2f us; 3 launches + 1 wait %.2f us "
         "(a wait saved: %.2f us, %.2f us a launch of 3)\n",
         (t1 - t0) / N, (t2 - t1) / N, (t3 - t2) / N, 2 * (t1 - t0) / N - (t2 - t1) / N,
         (3 * (t1 - t0) / N - (t3 - t2) / N) / 2);
  return 0;
}
