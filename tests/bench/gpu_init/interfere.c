/* interfere.c: why the driver's start on a helper thread slows the thread
 * that runs the program (issue 20: a 600x400x500 product took 115 ms
 * before the start, 175-198 ms during cuInit, 219-224 ms during a JIT, on
 * the H200).  The main thread repeats that product (f32, in k order) while
 * a helper does one thing, then prints the products' times during the
 * helper's work against the same process's products before it, and the
 * TLB-shootdown and function-call interrupts (/proc/interrupts, all CPUs)
 * during them:
 *
 *   interfere MODE [PTX_FILE]
 *     none     no helper
 *     spin     a thread in a busy loop (a shared core?)
 *     mmap     a thread mapping, touching and unmapping 64 KiB (shootdowns)
 *     cuinit   a thread: cuInit, primary context
 *     jit      a thread: cuInit, context, then cuModuleLoadData(PTX_FILE)
 *     child    the jit work in a child process (posix_spawn of this
 *              program in mode jit): another address space
 *     exit     no products: the wall time of child processes (spawn to
 *              reaping) against their own time from main to _exit, for a
 *              child that touches no driver, one that starts it (cuInit,
 *              context), one that also loads PTX_FILE, and one that leaves
 *              50 ms into cuInit on another thread: what a started driver
 *              costs at the exit
 *   INTERFERE_NICE=1 lowers the helper thread's priority (nice 19);
 *   INTERFERE_CPUS=A,B pins the main thread to CPU A and the helper to B.
 *
 * Figures, not a test; "skipped: reason" without a driver.  Built without
 * CUDA headers: cc -std=c11 -D_GNU_SOURCE -O2 interfere.c -ldl -lpthread */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { M = 600, K = 400, N = 500 };
/* In one 64 MiB mapping, as in a linear memory that the start pins. */
enum { REGION = 64 << 20 };
static char *region;
static float *A, *B, *C;

static double ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void product(void) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      float s = 0;
      for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}

static long irq_count(const char *tag) {
  FILE *f = fopen("/proc/interrupts", "r");
  if (!f) return -1;
  char line[8192];
  long sum = -1;
  while (fgets(line, sizeof line, f)) {
    char *p = line;
    while (*p == ' ') p++;
    if (strncmp(p, tag, 4) != 0) continue;
    sum = 0;
    for (p += 4;;) {
      char *end;
      long v = strtol(p, &end, 10);
      if (end == p) break;
      sum += v;
      p = end;
    }
  }
  fclose(f);
  return sum;
}

static const char *mode, *ptx_path;
static atomic_int helper_busy = 0, helper_done = 0;
/* The helper's phase: 1 cuInit and context, 2 pinning the region, 3 JIT. */
static atomic_int phase = 0;
static const char *phase_name[4] = {"other", "cuInit+ctx", "pin 64 MiB", "JIT"};
static int helper_cpu = -1;
static char result[256];

typedef int (*fn_i)(unsigned);
typedef int (*fn_get)(int *, int);
typedef int (*fn_retain)(void **, int);
typedef int (*fn_ctx)(void *);
typedef int (*fn_load)(void **, const void *);
typedef int (*fn_reg)(void *, size_t, unsigned);

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) b = NULL;
  if (b) b[n] = 0;
  fclose(f);
  return b;
}

/* cuInit and the context, then the PTX's JIT when jit: the helper's work. */
static void driver_work(int jit) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(result, sizeof result, "skipped: %s", dlerror());
    return;
  }
  fn_i init = (fn_i)dlsym(lib, "cuInit");
  fn_get dev_get = (fn_get)dlsym(lib, "cuDeviceGet");
  fn_retain retain = (fn_retain)dlsym(lib, "cuDevicePrimaryCtxRetain");
  fn_ctx set = (fn_ctx)dlsym(lib, "cuCtxSetCurrent");
  fn_load load = (fn_load)dlsym(lib, "cuModuleLoadData");
  fn_reg reg = (fn_reg)dlsym(lib, "cuMemHostRegister_v2");
  atomic_store(&phase, 1);
  double t0 = ms();
  int dev = 0, r;
  void *ctx = NULL, *mod = NULL;
  if ((r = init(0)) || (r = dev_get(&dev, 0)) || (r = retain(&ctx, dev)) || (r = set(ctx))) {
    snprintf(result, sizeof result, "driver failed: %d", r);
    return;
  }
  double t1 = ms();
  if (!jit) {
    snprintf(result, sizeof result, "cuInit+context %.1f ms", t1 - t0);
    return;
  }
  atomic_store(&phase, 2);
  int rr = region && reg ? reg(region, REGION, 0) : -1;
  double t2 = ms();
  char *ptx = ptx_path ? read_file(ptx_path) : NULL;
  if (!ptx) {
    snprintf(result, sizeof result, "no PTX file");
    return;
  }
  atomic_store(&phase, 3);
  r = load(&mod, ptx);
  atomic_store(&phase, 0);
  snprintf(result, sizeof result, "cuInit+context %.1f ms, pin %.1f ms (%d), JIT %.1f ms (%d)", t1 - t0, t2 - t1,
           rr, ms() - t2, r);
}

static void *helper(void *arg) {
  (void)arg;
  if (helper_cpu >= 0) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(helper_cpu, &s);
    sched_setaffinity(0, sizeof s, &s);
  }
  if (getenv("INTERFERE_NICE")) setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
  atomic_store(&helper_busy, 1);
  double t0 = ms();
  if (!strcmp(mode, "spin")) {
    volatile unsigned long x = 0;
    while (ms() - t0 < 1000) x++;
    snprintf(result, sizeof result, "spun 1000 ms");
  } else if (!strcmp(mode, "mmap")) {
    long n = 0;
    while (ms() - t0 < 1000) {
      char *p = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) break;
      for (int i = 0; i < 65536; i += 4096) p[i] = 1;
      munmap(p, 65536);
      n++;
    }
    snprintf(result, sizeof result, "%ld map/unmap in 1000 ms", n);
  } else if (!strcmp(mode, "cuinit")) {
    driver_work(0);
  } else if (!strcmp(mode, "jit")) {
    driver_work(1);
  } else if (!strcmp(mode, "child")) {
    pid_t pid;
    char *argv[] = {"/proc/self/exe", "jit-alone", (char *)ptx_path, NULL};
    if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ) == 0) {
      int st;
      waitpid(pid, &st, 0);
      snprintf(result, sizeof result, "child exited %d after %.1f ms", st, ms() - t0);
    } else snprintf(result, sizeof result, "posix_spawn failed");
  }
  atomic_store(&helper_done, 1);
  return NULL;
}

static void *init_thread(void *arg) {
  (void)arg;
  driver_work(0);
  return NULL;
}

/* A child of exit mode: its work, then its own time on stdout, _exit. */
static int exit_child(const char *what) {
  double t0 = ms();
  if (!strcmp(what, "driver")) driver_work(0);
  else if (!strcmp(what, "jit")) driver_work(1);
  else if (!strcmp(what, "midstart")) {
    pthread_t t;
    pthread_create(&t, NULL, init_thread, NULL);
    while (ms() - t0 < 50) {
    }
  }
  printf("%.3f\n", ms() - t0);
  fflush(stdout);
  _exit(0);
}

static void exit_costs(void) {
  const char *whats[] = {"nothing", "driver", "jit", "midstart"};
  for (int i = 0; i < 4; i++)
    for (int r = 0; r < 3; r++) {
      int fd[2];
      if (pipe(fd) != 0) return;
      posix_spawn_file_actions_t fa;
      posix_spawn_file_actions_init(&fa);
      posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
      posix_spawn_file_actions_addclose(&fa, fd[0]);
      char *argv[] = {"/proc/self/exe", "exit-child", (char *)whats[i], (char *)ptx_path, NULL};
      pid_t pid;
      double t0 = ms();
      if (posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ) != 0) return;
      close(fd[1]);
      int st;
      waitpid(pid, &st, 0);
      double wall = ms() - t0;
      char buf[64] = {0};
      ssize_t n = read(fd[0], buf, sizeof buf - 1);
      close(fd[0]);
      posix_spawn_file_actions_destroy(&fa);
      double inside = n > 0 ? atof(buf) : -1;
      printf("exit   : child %-8s wall %.1f ms, inside %.1f ms, spawn and exit %.1f ms\n", whats[i], wall, inside,
             wall - inside);
    }
}

int main(int argc, char **argv) {
  mode = argc > 1 ? argv[1] : "none";
  ptx_path = argc > 2 ? argv[2] : NULL;
  if (!strcmp(mode, "jit-alone")) {
    driver_work(1);
    fprintf(stderr, "child: %s\n", result);
    return 0;
  }
  if (!strcmp(mode, "exit-child")) {
    ptx_path = argc > 3 ? argv[3] : NULL;
    return exit_child(argc > 2 ? argv[2] : "nothing");
  }
  if (!strcmp(mode, "exit")) {
    exit_costs();
    return 0;
  }
  const char *cpus = getenv("INTERFERE_CPUS");
  if (cpus) {
    int a = atoi(cpus);
    const char *c = strchr(cpus, ',');
    helper_cpu = c ? atoi(c + 1) : -1;
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(a, &s);
    sched_setaffinity(0, sizeof s, &s);
  }
  region = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) return 1;
  A = (float *)region;
  B = A + M * K;
  C = B + K * N;
  for (int i = 0; i < M * K; i++) A[i] = (float)(i % 17) * 0.25f;
  for (int i = 0; i < K * N; i++) B[i] = (float)(i % 13) * 0.5f;
  double before[3];
  for (int r = 0; r < 3; r++) {
    double t = ms();
    product();
    before[r] = ms() - t;
  }
  long tlb0 = irq_count("TLB:"), cal0 = irq_count("CAL:");
  pthread_t h;
  if (strcmp(mode, "none") && pthread_create(&h, NULL, helper, NULL) != 0) return 1;
  double during = 0, in_phase[4] = {0};
  int n = 0, n_phase[4] = {0};
  double t0 = ms();
  /* Products that overlap the helper's work (or 600 ms of them alone). */
  while (!strcmp(mode, "none") ? ms() - t0 < 600 : !atomic_load(&helper_done)) {
    int p0 = atomic_load(&phase);
    double t = ms();
    product();
    double d = ms() - t;
    during += d;
    n++;
    if (atomic_load(&phase) == p0) {
      in_phase[p0] += d;
      n_phase[p0]++;
    }
  }
  long tlb1 = irq_count("TLB:"), cal1 = irq_count("CAL:");
  double b = before[0] < before[1] ? before[0] : before[1];
  if (before[2] < b) b = before[2];
  double d = n ? during / n : 0;
  printf("%-7s%s%s: before %.1f ms, during %.1f ms (x%.2f, %d products), TLB shootdowns %ld, function-call IPIs %ld; %s; C[7] %g\n",
         mode, getenv("INTERFERE_NICE") ? " nice" : "", cpus ? " pinned" : "", b, d, b > 0 ? d / b : 0, n,
         tlb0 >= 0 ? tlb1 - tlb0 : -1, cal0 >= 0 ? cal1 - cal0 : -1, result, (double)C[7]);
  for (int p = 1; p < 4; p++)
    if (n_phase[p]) printf("    within %s: %.1f ms a product (x%.2f, %d)\n", phase_name[p], in_phase[p] / n_phase[p],
                           b > 0 ? in_phase[p] / n_phase[p] / b : 0, n_phase[p]);
  if (strcmp(mode, "none")) pthread_join(h, NULL);
  return 0;
}
