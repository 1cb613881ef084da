/* rt_start.c: when and how the GPU starts in auto mode.  Starting the
 * driver (cuInit and the primary context) costs 220-350 ms on the H100 and
 * H200, far more than most programs run, and nearly every C program holds
 * a kernel (its allocator's memset loops).  So nothing touches the driver
 * until the nests that would have launched have done, on the CPU, as much
 * work as the start costs (each finished run counted at the cost model's
 * estimate, or at its measured time where that is less: rt_start_cpu_ran;
 * the start begins at the next such nest): a program that never launches
 * never pays for it
 * (rent or buy).  TWASM_GPU_START_MS sets the price (default 1000; 0
 * starts at the first nest worth a launch).  A program whose same
 * product has run on the CPU again and again (RT_START_REPEATS times: a
 * loop around it, as a token loop around an LLM's products) pays a lower
 * price, TWASM_GPU_START_REPEAT_MS (default 250): such a program is
 * likely to go on, and its products to gain (rt_start_cpu_ran counts the
 * runs of the nests rt_offload.c names: products only, since qlayer_i8's
 * strided reduction, called a thousand times, gains nothing from a GPU
 * over the bus).
 *
 * The start then runs on a helper thread (rt_start_worker): driver and
 * context, the timing of an empty launch, the linear memory made reachable
 * (pinned), and afterwards jobs: each kernel's PTX as nests ask for it,
 * the unpinning of memories whose instance ended.  The thread running Wasm
 * code never waits for any of it: until the device is ready every nest
 * runs on the CPU, and while the helper is inside the driver too.  A process
 * that exits while the start is in flight leaves at once without running
 * the driver's teardown under a thread still inside it (rt_start_leave). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cu.h"
#include "rt_internal.h"
#include "rt_offload.h"

/* The driver's start (cuInit and context, 200-350 ms on the H200) and
 * each kernel's PTX JIT (0.4-2 s uncached) run on the helper thread and
 * do not slow the Wasm thread measurably (tests/bench/gpu_init/
 * interfere.c on the H200: products beside cuInit, the pinning and a JIT
 * at 0.99-1.05 times the same process's before them, within this VM's
 * own spread of 80-158 ms for the same product).  What a start that
 * buys nothing costs is the exit's teardown of a started driver (about
 * 90 ms, the kernel closing the device) and short programs' wall time
 * beside it (mm_exact, four 0.1 s products: 1.1-2.5 times its cpu time
 * started at 250 ms of work).  So the price stays 1000 ms of would-be
 * GPU work, and 250 ms once one nest has run RT_START_REPEATS times. */
#define RT_START_DEFAULT_MS 1000.0
#define RT_START_REPEAT_DEFAULT_MS 250.0
#define RT_START_REPEATS 64
#define RT_START_NESTS 16
#define RT_START_MEASURED_MAX 2.0
#define RT_START_REPEAT_EACH 12

enum { START_IDLE, START_RUNNING, START_READY, START_FAILED };

static pthread_mutex_t rt_start_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t rt_start_once = PTHREAD_ONCE_INIT;
static double rt_start_price_us, rt_start_repeat_price_us;
static uint32_t rt_start_repeats = RT_START_REPEATS;
/* TWASM_GPU_START_COUNT=model: repeated products count at the model's
 * estimate or less, as every other nest, and only one product's 64 runs
 * make the program's products repeated (rt_start_cpu_ran). */
static bool rt_start_count_measured = true;
static double rt_start_pending_us; /* CPU work of nests that would have launched */
/* Finished CPU runs per nest (the first RT_START_NESTS nests), and the
 * most runs of one, under rt_start_lock. */
static struct {
  const void *nest;
  uint32_t runs;
} rt_start_nests[RT_START_NESTS];
static uint32_t rt_start_most_runs;
/* Runs of the products run at least RT_START_REPEAT_EACH times, together. */
static uint32_t rt_start_each_runs;
static atomic_int rt_start_state;  /* START_* */
static double rt_start_began_ms;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The milliseconds of the variable NAME, in us; fallback_ms when unset or
 * not a number (said under TWASM_TRACE). */
static double env_ms(const char *name, double fallback_ms) {
  const char *v = getenv(name);
  char *end;
  double ms = v && *v ? strtod(v, &end) : -1;
  if (v && *v && *end == 0 && ms >= 0) return ms * 1000;
  if (v && *v) cu_trace("%s=%s is not a number of milliseconds: %.0f used", name, v, fallback_ms);
  return fallback_ms * 1000;
}

static void rt_start_read_env(void) {
  rt_start_price_us = env_ms("TWASM_GPU_START_MS", RT_START_DEFAULT_MS);
  rt_start_repeat_price_us = env_ms("TWASM_GPU_START_REPEAT_MS", RT_START_REPEAT_DEFAULT_MS);
  /* never above the price itself */
  if (rt_start_repeat_price_us > rt_start_price_us) rt_start_repeat_price_us = rt_start_price_us;
  /* TWASM_GPU_START_REPEATS: how many CPU runs of one nest make it
   * repeated (default RT_START_REPEATS; 1 to 1000000) */
  const char *c = getenv("TWASM_GPU_START_COUNT");
  rt_start_count_measured = !(c && strcmp(c, "model") == 0);
  const char *v = getenv("TWASM_GPU_START_REPEATS");
  if (v && *v) {
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    if (*end == 0 && n >= 1 && n <= 1000000)
      rt_start_repeats = (uint32_t)n;
    else
      cu_trace("TWASM_GPU_START_REPEATS=%s is not a count from 1 to 1000000: %d used", v, RT_START_REPEATS);
  }
}

/* The helper's jobs after the start (kernels to load, memories to
 * release), in order; rt_start_driver is held around each, so that the
 * Wasm thread, which only ever tries it, never waits behind one: a JIT
 * holds the driver's context lock for up to 2 s on the H200, and a
 * launch or unpinning on another thread would wait for it. */
typedef struct rt_start_job {
  void (*run)(void *);
  void *arg;
  struct rt_start_job *next;
} rt_start_job;
static pthread_cond_t rt_start_posted = PTHREAD_COND_INITIALIZER;
static rt_start_job *rt_start_jobs, **rt_start_jobs_end = &rt_start_jobs;
static pthread_mutex_t rt_start_driver = PTHREAD_MUTEX_INITIALIZER;

bool rt_start_post(void (*run)(void *), void *arg) {
  int state = atomic_load(&rt_start_state);
  if (state != START_RUNNING && state != START_READY) return false;
  rt_start_job *j = malloc(sizeof *j);
  if (!j) return false;
  *j = (rt_start_job){run, arg, NULL};
  pthread_mutex_lock(&rt_start_lock);
  *rt_start_jobs_end = j;
  rt_start_jobs_end = &j->next;
  pthread_cond_signal(&rt_start_posted);
  pthread_mutex_unlock(&rt_start_lock);
  return true;
}

bool rt_start_driver_try(void) { return pthread_mutex_trylock(&rt_start_driver) == 0; }

void rt_start_driver_done(void) { pthread_mutex_unlock(&rt_start_driver); }

static void rt_start_serve(void) {
  for (;;) {
    pthread_mutex_lock(&rt_start_lock);
    while (!rt_start_jobs) pthread_cond_wait(&rt_start_posted, &rt_start_lock);
    rt_start_job *j = rt_start_jobs;
    rt_start_jobs = j->next;
    if (!rt_start_jobs) rt_start_jobs_end = &rt_start_jobs;
    pthread_mutex_unlock(&rt_start_lock);
    /* At exit rt_start_leave keeps it: the helper then waits here. */
    pthread_mutex_lock(&rt_start_driver);
    j->run(j->arg);
    pthread_mutex_unlock(&rt_start_driver);
    free(j);
  }
}

/* The compilers: up to RT_START_COMPILERS threads (fewer on a machine of
 * fewer cores: one core stays the Wasm thread's) that run
 * rt_start_post_parallel's jobs, several at once once the start is ready,
 * made as jobs find none idle.  A job takes rt_start_driver itself for what must not run beside
 * a launch.  rt_start_leave closes them: no job starts after, and one
 * running makes the exit leave without the driver's teardown. */
#define RT_START_COMPILERS 8
static rt_start_job *rt_compile_jobs, **rt_compile_jobs_end = &rt_compile_jobs;
static pthread_cond_t rt_compile_posted = PTHREAD_COND_INITIALIZER;
static int rt_compilers, rt_compilers_idle, rt_compile_running; /* under rt_start_lock */
static bool rt_start_closed;                                     /* under rt_start_lock */

static void *rt_compiler(void *arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&rt_start_lock);
    rt_compilers_idle++;
    while (!rt_compile_jobs || rt_start_closed || atomic_load(&rt_start_state) != START_READY)
      pthread_cond_wait(&rt_compile_posted, &rt_start_lock);
    rt_compilers_idle--;
    rt_start_job *j = rt_compile_jobs;
    rt_compile_jobs = j->next;
    if (!rt_compile_jobs) rt_compile_jobs_end = &rt_compile_jobs;
    rt_compile_running++;
    pthread_mutex_unlock(&rt_start_lock);
    j->run(j->arg);
    free(j);
    pthread_mutex_lock(&rt_start_lock);
    rt_compile_running--;
    pthread_mutex_unlock(&rt_start_lock);
  }
  return NULL;
}

static int rt_compilers_max(void) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores - 1 < 1 ? 1 : cores - 1 > RT_START_COMPILERS ? RT_START_COMPILERS : (int)cores - 1;
}

static bool rt_spawn(void *(*run)(void *)) {
  pthread_attr_t attr;
  pthread_t t;
  if (pthread_attr_init(&attr) != 0) return false;
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  bool ok = pthread_create(&t, &attr, run, NULL) == 0;
  pthread_attr_destroy(&attr);
  return ok;
}

bool rt_start_post_parallel(void (*run)(void *), void *arg) {
  int state = atomic_load(&rt_start_state);
  if (state != START_RUNNING && state != START_READY) return false;
  rt_start_job *j = malloc(sizeof *j);
  if (!j) return false;
  *j = (rt_start_job){run, arg, NULL};
  pthread_mutex_lock(&rt_start_lock);
  bool ok = !rt_start_closed;
  /* a thread more while the jobs waiting outnumber the idle ones (who
   * wait for the start to be ready, or are about to take one) */
  int waiting = 1;
  for (rt_start_job *w = rt_compile_jobs; w; w = w->next) waiting++;
  if (ok && waiting > rt_compilers_idle && rt_compilers < rt_compilers_max() && rt_spawn(rt_compiler))
    rt_compilers++;
  ok = ok && rt_compilers > 0;
  if (ok) {
    *rt_compile_jobs_end = j;
    rt_compile_jobs_end = &j->next;
    pthread_cond_signal(&rt_compile_posted);
  }
  pthread_mutex_unlock(&rt_start_lock);
  if (!ok) free(j);
  return ok;
}

void rt_start_driver_take(void) { pthread_mutex_lock(&rt_start_driver); }

/* The helper thread: never joined; it ends when the start fails, else it
 * stays to run jobs until the process ends. */
static void *rt_start_worker(void *arg) {
  (void)arg;
  double began = rt_start_began_ms;
  pthread_mutex_lock(&rt_start_driver);
  bool up = cu_available() && !__builtin_isinf(cu_launch_cost_us());
  double driver_ms = now_ms() - began;
  if (!up) {
    pthread_mutex_unlock(&rt_start_driver);
    cu_trace("gpu: start failed after %.0f ms, every nest stays on the CPU: %s", driver_ms,
             *cu_unavailable_reason() ? cu_unavailable_reason() : "no launch could be timed");
    atomic_store(&rt_start_state, START_FAILED);
    return NULL;
  }
  const char *mem = rt_memory_expose_pending();
  pthread_mutex_unlock(&rt_start_driver);
  pthread_mutex_lock(&rt_start_lock);
  atomic_store(&rt_start_state, START_READY);
  pthread_cond_broadcast(&rt_compile_posted); /* the kernels asked for during the start */
  pthread_mutex_unlock(&rt_start_lock);
  cu_trace("gpu: driver ready after %.0f ms (driver, context and launch timing %.0f ms; linear memory %s); "
           "nests worth a launch go to the GPU once their kernel is loaded",
           now_ms() - began, driver_ms, mem);
  rt_start_serve();
  return NULL;
}

rt_start rt_start_decide(double ops, rt_memory *mem, const char **why, char *buf, size_t cap) {
  int state = atomic_load(&rt_start_state);
  if (state == START_READY) return RT_START_READY;
  if (state == START_FAILED) {
    *why = "the GPU's start failed";
    return RT_START_NEVER;
  }
  pthread_once(&rt_start_once, rt_start_read_env);
  if (!twasm_cost_worth_it(ops, RT_START_LAUNCH_US)) {
    *why = "cost model: too little work for a launch";
    return RT_START_LATER;
  }
  if (state == START_RUNNING) {
    snprintf(buf, cap, "the GPU is starting (%.0f ms so far)", now_ms() - rt_start_began_ms);
    *why = buf;
    return RT_START_STARTING;
  }
  /* Rent or buy on the work already done: this call runs on the CPU
   * whatever starts now, so its own work buys nothing (a program whose
   * one product is worth seconds never paid for a start it could not
   * use: on the H200 such a start slowed `mm 2048 1` 1.47 times). */
  pthread_mutex_lock(&rt_start_lock);
  double pending = rt_start_pending_us;
  bool repeated = rt_start_most_runs >= rt_start_repeats;
  double price = repeated ? rt_start_repeat_price_us : rt_start_price_us;
  bool begin = pending >= price && atomic_load(&rt_start_state) == START_IDLE;
  /* Looked for only now: loading the library costs 1.1-1.7 ms (H200), 3 %
   * of a 40 ms program that never starts the GPU. */
  if (begin && !cu_driver_present()) {
    pthread_mutex_unlock(&rt_start_lock);
    *why = "no CUDA driver here";
    return RT_START_NEVER;
  }
  if (begin) {
    cu_trace("gpu: starting the driver in the background: %.1f ms of work would have run on it so far%s",
             pending / 1000, repeated ? " (a nest run again and again: the lower price)" : "");
    rt_start_began_ms = now_ms();
    rt_memory_expose_later(mem);
    atomic_store(&rt_start_state, START_RUNNING);
    if (!rt_spawn(rt_start_worker)) {
      cu_trace("gpu: no thread to start the driver on: every nest stays on the CPU");
      atomic_store(&rt_start_state, START_FAILED);
    }
  }
  pthread_mutex_unlock(&rt_start_lock);
  *why = buf;
  if (begin) {
    snprintf(buf, cap, "the GPU is starting");
    return RT_START_STARTING;
  }
  snprintf(buf, cap, "the GPU is not started: %.1f ms of work would have run on it so far, "
           "starting it costs %.0f ms", pending / 1000, price / 1000);
  return RT_START_LATER;
}

/* What a finished CPU run of a nest worth a launch adds towards the price:
 * the cost model's estimate, but no more than the run measured (an upper
 * bound: until the thread's next dispatch call).  The estimate alone
 * overstates some nests several times (on the H200 `mm_i8 1024 1`'s first
 * int8 product: 1074 ms estimated, about 200 ms run), and such a program
 * began the start for a second product it then ran beside the helper
 * thread, 1.28-1.75 times its cpu time. */
void rt_start_cpu_ran(const void *nest, double model_us, double measured_us) {
  if (atomic_load(&rt_start_state) != START_IDLE || !(model_us > 0)) return;
  pthread_once(&rt_start_once, rt_start_read_env);
  double us = measured_us >= 0 && measured_us < model_us ? measured_us : model_us;
  pthread_mutex_lock(&rt_start_lock);
  uint32_t runs = 0;
  for (int i = 0; nest && i < RT_START_NESTS; i++) {
    if (rt_start_nests[i].nest && rt_start_nests[i].nest != nest) continue;
    rt_start_nests[i].nest = nest;
    runs = ++rt_start_nests[i].runs;
    if (runs > rt_start_most_runs) rt_start_most_runs = runs;
    break;
  }
  /* Or several products run RT_START_REPEAT_EACH times each, RT_START_REPEATS
   * runs together: an LLM's products are 8 inlined nests run 12 times a
   * token, one of which came to 64 runs only in the sixth token. */
  uint32_t each = RT_START_REPEAT_EACH < rt_start_repeats ? RT_START_REPEAT_EACH : rt_start_repeats;
  if (rt_start_count_measured && runs >= each && rt_start_most_runs < rt_start_repeats) {
    rt_start_each_runs += runs == each ? runs : 1;
    if (rt_start_each_runs >= rt_start_repeats) rt_start_most_runs = rt_start_repeats;
  }
  /* A product run again and again counts at its measured time, up to
   * RT_START_MEASURED_MAX times the model's (the measure runs to the next
   * dispatch call, so it holds the CPU work between the calls too): a
   * product run again and again is timed often enough for its measure to
   * be the better estimate where the model's 0.5 ns an operation is low;
   * for the LLM's products the two were close (H200: 514 ms counted by
   * the model in 561 ms of their runs). */
  if (runs >= each && rt_start_most_runs >= rt_start_repeats && rt_start_count_measured &&
      measured_us > us)
    us = measured_us < RT_START_MEASURED_MAX * model_us ? measured_us : RT_START_MEASURED_MAX * model_us;
  rt_start_pending_us += us;
  pthread_mutex_unlock(&rt_start_lock);
}

bool rt_start_ready(void) { return atomic_load(&rt_start_state) == START_READY; }

/* The driver's teardown at exit (library destructors) would run while the
 * helper thread is inside cuInit, the context's creation or a PTX load: a
 * case the driver documents nothing for (on the H200, driver 580, the
 * plain exit was clean in every run of tests/gpu/start_exit.sh), and the
 * teardown's cost saved.  TWASM_TEST_START_EXIT=exit takes the plain exit
 * anyway, to see what the driver does. */
void rt_start_leave(int status) {
  int state = atomic_load(&rt_start_state);
  /* Held from here on: the helper takes no other job into the driver. */
  if (state == START_IDLE || state == START_FAILED) return;
  pthread_mutex_lock(&rt_start_lock);
  rt_start_closed = true;
  bool compiling = rt_compile_running > 0;
  pthread_mutex_unlock(&rt_start_lock);
  if (state == START_READY && !compiling && rt_start_driver_try()) {
    cu_trace("gpu: exiting with the driver started: its teardown follows");
    return;
  }
  const char *test = getenv("TWASM_TEST_START_EXIT");
  if (test && strcmp(test, "exit") == 0) return;
  if (state == START_RUNNING)
    cu_trace("gpu: exiting %.0f ms into the driver's start: not waited for", now_ms() - rt_start_began_ms);
  else
    cu_trace("gpu: exiting while a helper thread is inside the driver (a PTX load): not waited for");
  rt_offload_write_calls();
  fflush(NULL);
  _exit(status);
}
