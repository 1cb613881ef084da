/* test_start.c: when the GPU starts in auto mode (runtime/rt_start.c) and
 * how linear memory made before it started is exposed to kernels, through
 * compiled programs and the stand-in libcuda.so.1 of tests/fake_cuda: a
 * program that never launches never touches the driver, launches before
 * the start run on the CPU, and every run prints what --no-offload does. */
#include <check.h>
#include <time.h>

#include "cli_util.h"
#include "rt_offload.h"

static char dir[64];

/* Two maps: `small` is a memset-sized loop no launch pays for; `big` is
 * worth a launch from a million elements on. */
static const char program[] =
    "#include <stdio.h>\n#include <stdlib.h>\n"
    "void small(int n, int *p) { for (int i = 0; i < n; i++) p[i] = i * 3; }\n"
    "void big(int n, const float *x, float *o) { for (int i = 0; i < n; i++) o[i] = x[i] * 0.5f + 1.0f; }\n"
    "int main(int argc, char **argv) {\n"
    "  int n = atoi(argv[1]), reps = argc > 2 ? atoi(argv[2]) : 1;\n"
    "  int *p = malloc(4 * 64); float *x = malloc(4 * (size_t)n), *o = malloc(4 * (size_t)n);\n"
    "  for (int i = 0; i < n; i++) x[i] = i * 0.25f;\n"
    "  double s = 0;\n"
    "  for (int r = 0; r < reps; r++) { small(64, p); big(n, x, o); s += o[n - 1] + p[63]; }\n"
    "  printf(\"%.3f\\n\", s); return 0; }\n";

static const char *fake_dir(void) { return getenv("FAKE_CUDA_DIR"); }

static void setup(void) {
  strcpy(dir, "/tmp/twasm-startXXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char path[128], cmd[1024], out[8192];
  snprintf(path, sizeof path, "%s/p.c", dir);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(program, f);
  fclose(f);
  snprintf(cmd, sizeof cmd,
           "clang-19 --target=wasm32-wasi --sysroot=/usr -O1 %s -o %s/p.wasm && %s %s/p.wasm -o %s/on && "
           "%s --no-offload %s/p.wasm -o %s/off",
           path, dir, twasmc(), dir, dir, twasmc(), dir, dir);
  ck_assert_msg(run_shell(cmd, out, sizeof out) == 0, "%s", out);
}

static void teardown(void) {
  char cmd[128], out[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  run_shell(cmd, out, sizeof out);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Runs PROG ARGS under the fake driver with env; stdout into out (trace
 * lines on stderr into trace, when asked); the calls the driver logged
 * into calls; the wall time in ms. */
static double run_fake(const char *env, const char *prog, const char *args, char *out, size_t cap,
                       char *trace, size_t tcap, char *calls, size_t ccap) {
  char cmd[2048], log[96];
  snprintf(log, sizeof log, "%s/calls.log", dir);
  unlink(log);
  snprintf(cmd, sizeof cmd,
           "{ env -u TWASM_TRACE -u TWASM_DEVICE LD_LIBRARY_PATH=%s FAKE_CUDA=old FAKE_CUDA_LOG=%s %s "
           "%s/%s %s 2>%s/err; }",
           fake_dir(), log, env, dir, prog, args, dir);
  double start = now_ms();
  ck_assert_int_eq(run_shell(cmd, out, cap), 0);
  double ms = now_ms() - start;
  /* Each distinct line once, in the order first seen: the nests of long
   * runs repeat theirs. */
  snprintf(cmd, sizeof cmd, "sed -E 's/\\([0-9]+ ms so far\\)//' %s/err | grep -v ' params:' | awk '!seen[$0]++'",
           dir);
  if (trace) run_shell(cmd, trace, tcap);
  snprintf(cmd, sizeof cmd, "cat %s 2>/dev/null; true", log);
  run_shell(cmd, calls, ccap);
  return ms;
}

static void want_output(const char *args, const char *got) {
  char cmd[256], want[256];
  snprintf(cmd, sizeof cmd, "%s/off %s", dir, args);
  ck_assert_int_eq(run_shell(cmd, want, sizeof want), 0);
  ck_assert_str_eq(got, want);
}

#define SKIP_WITHOUT_FAKE()                                                                  \
  do {                                                                                       \
    if (!fake_dir()) {                                                                       \
      printf("start: skipped %s: FAKE_CUDA_DIR not set (run through make unit)\n", __func__); \
      return;                                                                                \
    }                                                                                        \
  } while (0)

/* A cuInit that takes 3 s: a run whose nests never pay for a launch ends
 * long before it, having never called it. */
START_TEST(no_launch_no_driver_start) {
  SKIP_WITHOUT_FAKE();
  char out[256], calls[1024];
  double ms = run_fake("TWASM_DEVICE=auto FAKE_CUDA_INIT_MS=3000", "on", "1000", out, sizeof out, NULL, 0,
                       calls, sizeof calls);
  want_output("1000", out);
  ck_assert_msg(!strstr(calls, "cuInit"), "calls: %s", calls);
  ck_assert_msg(ms < 2500, "took %.0f ms", ms);
  /* the same under the default mode (TWASM_DEVICE unset) */
  run_fake("FAKE_CUDA_INIT_MS=3000", "on", "1000", out, sizeof out, NULL, 0, calls, sizeof calls);
  ck_assert_msg(!strstr(calls, "cuInit"), "calls: %s", calls);
}
END_TEST

/* Nests worth a launch run on the CPU while their work adds up to less
 * than the start's price, and the driver is not touched. */
START_TEST(launches_before_the_start_run_on_the_cpu) {
  SKIP_WITHOUT_FAKE();
  char out[256], trace[16384], calls[1024];
  run_fake("TWASM_DEVICE=auto TWASM_TRACE=1", "on", "1000000", out, sizeof out, trace, sizeof trace, calls,
           sizeof calls);
  want_output("1000000", out);
  ck_assert_msg(!strstr(calls, "cuInit"), "calls: %s", calls);
  ck_assert_msg(strstr(trace, "(map): cpu: the GPU is not started: ") &&
                    strstr(trace, "starting it costs 1000 ms"), "%s", trace);
  ck_assert_msg(strstr(trace, "(map): cpu: cost model: too little work for a launch"), "%s", trace);
}
END_TEST

/* Once the work passes the price (here 1 ms: four runs of the big map),
 * the driver starts once, in the background; the host memory made before
 * it is exposed (pageable memory access) before the device is said ready,
 * the nest's kernel is loaded on the helper thread, and the old driver's
 * refusal of the PTX keeps the nest on the CPU with the same output.  The
 * run is long (2000 maps) so that the start ends inside it. */
START_TEST(work_past_the_price_starts_the_driver) {
  SKIP_WITHOUT_FAKE();
  char out[256], trace[32768], calls[1024];
  run_fake("TWASM_DEVICE=auto TWASM_TRACE=1 TWASM_GPU_START_MS=1", "on", "1000000 2000", out, sizeof out, trace,
           sizeof trace, calls, sizeof calls);
  want_output("1000000 2000", out);
  /* the driver started once, nothing pinned; then PTX compiled */
  const char *start = "cuInit\ncuDevicePrimaryCtxRetain\n";
  ck_assert_msg(!strncmp(calls, start, strlen(start)), "calls: %s", calls);
  for (const char *c = calls + strlen(start); *c; c += strlen("cuLinkComplete\n"))
    ck_assert_msg(!strncmp(c, "cuLinkComplete\n", strlen("cuLinkComplete\n")), "calls: %s", calls);
  const char *started = strstr(trace, "twasm: gpu: starting the driver in the background");
  ck_assert_msg(started, "%s", trace);
  ck_assert_msg(strstr(trace, "(map): cpu: the GPU is not started") < started, "%s", trace);
  const char *ready = strstr(started, "twasm: gpu: driver ready after ");
  ck_assert_msg(ready, "%s", trace);
  const char *exposed = strstr(started, "reachable by kernels (pageable memory access");
  ck_assert_msg(exposed && exposed < ready, "%s", trace);
  ck_assert_msg(strstr(ready, "kernel not loaded, the nest stays on the CPU"), "%s", trace);
  ck_assert_msg(strstr(ready, "(map): cpu: kernel not loaded"), "%s", trace);
  ck_assert_msg(!strstr(trace, "gpu: managed"), "linear memory went to managed memory: %s", trace);
}
END_TEST

/* Only finished work counts towards the price (6 ms here): the filling
 * of x and one big map are worth 4 ms each, so the big map passes the
 * price, but runs on the CPU whatever starts then, and starts nothing;
 * later big maps begin the start (each counted at its measured time where
 * that is less than its 4 ms: 199 of them pass 6 ms on any machine). */
START_TEST(the_nest_that_passes_the_price_buys_nothing) {
  SKIP_WITHOUT_FAKE();
  char out[256], trace[32768], calls[1024];
  run_fake("TWASM_DEVICE=auto TWASM_TRACE=1 TWASM_GPU_START_MS=6", "on", "1000000 1", out, sizeof out, trace,
           sizeof trace, calls, sizeof calls);
  want_output("1000000 1", out);
  ck_assert_msg(!strstr(trace, "starting the driver"), "%s", trace);
  ck_assert_msg(!strstr(calls, "cuInit"), "calls: %s", calls);
  ck_assert_msg(strstr(trace, "(map): cpu: the GPU is not started: "), "%s", trace);
  run_fake("TWASM_DEVICE=auto TWASM_TRACE=1 TWASM_GPU_START_MS=6", "on", "1000000 200", out, sizeof out, trace,
           sizeof trace, calls, sizeof calls);
  want_output("1000000 200", out);
  ck_assert_msg(strstr(trace, "starting the driver in the background"), "%s", trace);
}
END_TEST

/* The thread that runs the Wasm code never waits for the start: with a
 * cuInit of 6 s, a run past the price ends long before it, every nest on
 * the CPU ("the GPU is starting"), and leaves without waiting (_exit);
 * the plain exit (TWASM_TEST_START_EXIT=exit) does not wait either.  The
 * run is 200 maps (0.2-1 s) so that the helper thread is inside cuInit
 * before it ends even where the scheduler is slow to run it: CI once saw
 * no cuInit after 40 maps (stop 38). */
START_TEST(the_wasm_thread_never_waits_for_the_start) {
  SKIP_WITHOUT_FAKE();
  char out[256], trace[32768], calls[1024];
  double ms = run_fake("TWASM_DEVICE=auto TWASM_TRACE=1 TWASM_GPU_START_MS=1 FAKE_CUDA_INIT_MS=6000", "on",
                       "1000000 200", out, sizeof out, trace, sizeof trace, calls, sizeof calls);
  want_output("1000000 200", out);
  ck_assert_msg(ms < 5000, "took %.0f ms", ms);
  ck_assert_msg(strstr(calls, "cuInit"), "calls: %s\ntrace: %s", calls, trace);
  const char *started = strstr(trace, "twasm: gpu: starting the driver in the background");
  ck_assert_msg(started, "%s", trace);
  ck_assert_msg(strstr(started, "(map): cpu: the GPU is starting"), "%s", trace);
  ck_assert_msg(!strstr(trace, "driver ready"), "%s", trace);
  ck_assert_msg(strstr(trace, "twasm: gpu: exiting ") && strstr(trace, "into the driver's start: not waited for"),
                "%s", trace);
  ms = run_fake("TWASM_DEVICE=auto TWASM_GPU_START_MS=1 FAKE_CUDA_INIT_MS=6000 TWASM_TEST_START_EXIT=exit", "on",
                "1000000 200", out, sizeof out, NULL, 0, calls, sizeof calls);
  want_output("1000000 200", out);
  ck_assert_msg(ms < 5000, "took %.0f ms with the plain exit", ms);
}
END_TEST

/* A start that fails (no device behind the driver) leaves every nest on
 * the CPU, said once, and the output unchanged. */
START_TEST(a_failed_start_keeps_the_cpu) {
  SKIP_WITHOUT_FAKE();
  char cmd[1024], out[256], trace[32768];
  snprintf(cmd, sizeof cmd,
           "{ env -u TWASM_DEVICE LD_LIBRARY_PATH=%s FAKE_CUDA=nodevice TWASM_TRACE=1 TWASM_GPU_START_MS=1 "
           "%s/on 1000000 2000 2>%s/err; }", fake_dir(), dir, dir);
  ck_assert_int_eq(run_shell(cmd, out, sizeof out), 0);
  want_output("1000000 2000", out);
  snprintf(cmd, sizeof cmd, "grep -v ' params:' %s/err | awk '!seen[$0]++'", dir);
  run_shell(cmd, trace, sizeof trace);
  const char *failed = strstr(trace, "twasm: gpu: start failed after ");
  ck_assert_msg(failed && strstr(failed, "CUDA_ERROR_NO_DEVICE"), "%s", trace);
  ck_assert_msg(!strstr(trace, "driver ready"), "%s", trace);
}
END_TEST

/* Without pageable memory access the open part is pinned instead. */
START_TEST(without_pageable_access_memory_is_pinned) {
  SKIP_WITHOUT_FAKE();
  char out[256], trace[32768], calls[1024];
  run_fake("TWASM_DEVICE=auto TWASM_TRACE=1 TWASM_GPU_START_MS=0 FAKE_CUDA_PAGEABLE=0", "on", "1000000 2000",
           out, sizeof out, trace, sizeof trace, calls, sizeof calls);
  want_output("1000000 2000", out);
  ck_assert_msg(strstr(calls, "cuMemHostRegister"), "calls: %s", calls);
  ck_assert_msg(strstr(trace, "reachable by kernels (pinned, over the bus"), "%s", trace);
}
END_TEST

/* TWASM_DEVICE=gpu starts the driver at instantiation, as before, and
 * linear memory is managed memory. */
START_TEST(gpu_mode_starts_at_once) {
  SKIP_WITHOUT_FAKE();
  char out[256], trace[32768], calls[1024];
  run_fake("TWASM_DEVICE=gpu TWASM_TRACE=1", "on", "1000", out, sizeof out, trace, sizeof trace, calls,
           sizeof calls);
  want_output("1000", out);
  ck_assert_msg(strstr(calls, "cuInit"), "calls: %s", calls);
  ck_assert_msg(strstr(trace, "gpu: managed "), "%s", trace);
}
END_TEST

/* No driver at all: the first nest worth a launch looks for the library
 * and says so; the run prints the same. */
START_TEST(no_driver_found_once) {
  char cmd[512], out[16384];
  snprintf(cmd, sizeof cmd, "{ env -u LD_LIBRARY_PATH TWASM_DEVICE=auto TWASM_TRACE=1 %s/on 1000000 2>&1 >/dev/null; }",
           dir);
  ck_assert_int_eq(run_shell(cmd, out, sizeof out), 0);
  if (!strstr(out, "libcuda.so.1 not found")) {
    printf("start: skipped no_driver_found_once: a libcuda.so.1 is installed here\n");
    return;
  }
  ck_assert_msg(strstr(out, "(map): cpu: no CUDA driver here"), "%s", out);
  snprintf(cmd, sizeof cmd, "env -u LD_LIBRARY_PATH -u TWASM_TRACE TWASM_DEVICE=auto %s/on 1000000", dir);
  ck_assert_int_eq(run_shell(cmd, out, sizeof out), 0);
  want_output("1000000", out);
}
END_TEST

/* A finished CPU run counts towards the price at the cost model's
 * estimate or at its measured time, whichever is less (a run not timed:
 * the estimate); in process, the price out of reach. */
START_TEST(finished_runs_count_at_most_their_measured_time) {
  setenv("TWASM_GPU_START_MS", "1000000", 1);
  setenv("TWASM_DEVICE", "auto", 1);
  rt_start_cpu_ran(NULL, 4000, 100);  /* the model overstates: 0.1 ms */
  rt_start_cpu_ran(NULL, 300, 5000);  /* measured past the next call: 0.3 ms */
  rt_start_cpu_ran(NULL, 500, -1);    /* not timed: 0.5 ms */
  const char *why = NULL;
  char buf[200];
  ck_assert_int_eq(rt_start_decide(1e12, NULL, &why, buf, sizeof buf), RT_START_LATER);
  ck_assert_msg(strstr(why, "not started: 0.9 ms of work"), "%s", why);
}
END_TEST

/* One nest run RT_START_REPEATS (64) times pays the lower price
 * (TWASM_GPU_START_REPEAT_MS), many nests run fewer times each the
 * price; in process, with no driver the passed price says so. */
START_TEST(a_nest_run_again_and_again_pays_less) {
  setenv("TWASM_GPU_START_MS", "1000000", 1);
  setenv("TWASM_GPU_START_REPEAT_MS", "1", 1);
  setenv("TWASM_DEVICE", "auto", 1);
  static const char nests[40];
  const char *why = NULL;
  char buf[200];
  for (int i = 0; i < 40; i++) /* 40 nests once each, 2 ms */
    rt_start_cpu_ran(&nests[i], 50, 50);
  for (int i = 0; i < 62; i++) rt_start_cpu_ran(&nests[1], 50, 50);
  ck_assert_int_eq(rt_start_decide(1e12, NULL, &why, buf, sizeof buf), RT_START_LATER);
  ck_assert_msg(strstr(why, "not started: 5.1 ms of work") && strstr(why, "costs 1000000 ms"), "%s", why);
  rt_start_cpu_ran(&nests[1], 50, 50); /* its 64th run */
  rt_start s = rt_start_decide(1e12, NULL, &why, buf, sizeof buf);
  if (s == RT_START_NEVER) {
    ck_assert_msg(strstr(why, "no CUDA driver here"), "%s", why);
  } else {
    ck_assert_int_eq(s, RT_START_STARTING);
    printf("start: a_nest_run_again_and_again_pays_less: a driver is installed here, its start begun\n");
  }
}
END_TEST

/* A product run TWASM_GPU_START_REPEATS times counts from then on at
 * its measured time, up to twice the model's estimate (the measure runs
 * to the next dispatch call); TWASM_GPU_START_COUNT=model: at the
 * estimate, as before. */
static void count_repeated(const char *count, const char *want) {
  setenv("TWASM_GPU_START_MS", "1000000", 1);
  setenv("TWASM_GPU_START_REPEAT_MS", "1000000", 1);
  setenv("TWASM_GPU_START_REPEATS", "4", 1);
  setenv("TWASM_DEVICE", "auto", 1);
  if (count) setenv("TWASM_GPU_START_COUNT", count, 1);
  static const char nest;
  for (int i = 0; i < 3; i++) rt_start_cpu_ran(&nest, 100, 300); /* the model's 0.1 ms each */
  rt_start_cpu_ran(&nest, 100, 160); /* the 4th run: measured, 0.16 ms */
  rt_start_cpu_ran(&nest, 100, 900); /* at most twice the model: 0.2 ms */
  const char *why = NULL;
  char buf[200];
  ck_assert_int_eq(rt_start_decide(1e12, NULL, &why, buf, sizeof buf), RT_START_LATER);
  ck_assert_msg(strstr(why, want), "%s", why);
}

START_TEST(a_repeated_product_counts_its_measured_time) { count_repeated(NULL, "not started: 0.7 ms of work"); }
END_TEST

START_TEST(a_repeated_product_counts_the_model_when_asked) {
  count_repeated("model", "not started: 0.5 ms of work");
}
END_TEST

/* Products run 12 times each, 64 runs together, make the program's
 * products repeated (8 nests a token, as the LLM's): the lower price
 * after 12 tokens' worth, not after one nest's 64th run; with
 * TWASM_GPU_START_COUNT=model, not. */
static void several_repeated(const char *count) {
  setenv("TWASM_GPU_START_MS", "1000000", 1);
  setenv("TWASM_GPU_START_REPEAT_MS", "1", 1);
  setenv("TWASM_DEVICE", "auto", 1);
  if (count) setenv("TWASM_GPU_START_COUNT", count, 1);
  static const char nests[8];
  const char *why = NULL;
  char buf[200];
  for (int token = 0; token < 11; token++)
    for (int i = 0; i < 8; i++) rt_start_cpu_ran(&nests[i], 50, 50);
  ck_assert_int_eq(rt_start_decide(1e12, NULL, &why, buf, sizeof buf), RT_START_LATER);
  ck_assert_msg(strstr(why, "costs 1000000 ms"), "%s", why);
  for (int i = 0; i < 8; i++) rt_start_cpu_ran(&nests[i], 50, 50);
  rt_start s = rt_start_decide(1e12, NULL, &why, buf, sizeof buf);
  if (count) {
    ck_assert_int_eq(s, RT_START_LATER);
    ck_assert_msg(strstr(why, "costs 1000000 ms"), "%s", why);
  } else {
    ck_assert_msg(s == RT_START_NEVER || s == RT_START_STARTING, "%d %s", (int)s, why);
  }
}

START_TEST(several_products_run_again_and_again_pay_less) { several_repeated(NULL); }
END_TEST

START_TEST(several_products_pay_the_price_when_counted_by_the_model) { several_repeated("model"); }
END_TEST

int main(void) {
  Suite *s = suite_create("start");
  TCase *t = tcase_create("programs");
  tcase_add_unchecked_fixture(t, setup, teardown);
  tcase_set_timeout(t, 120);
  tcase_add_test(t, no_launch_no_driver_start);
  tcase_add_test(t, launches_before_the_start_run_on_the_cpu);
  tcase_add_test(t, work_past_the_price_starts_the_driver);
  tcase_add_test(t, the_nest_that_passes_the_price_buys_nothing);
  tcase_add_test(t, the_wasm_thread_never_waits_for_the_start);
  tcase_add_test(t, a_failed_start_keeps_the_cpu);
  tcase_add_test(t, without_pageable_access_memory_is_pinned);
  tcase_add_test(t, gpu_mode_starts_at_once);
  tcase_add_test(t, no_driver_found_once);
  tcase_add_test(t, finished_runs_count_at_most_their_measured_time);
  tcase_add_test(t, a_nest_run_again_and_again_pays_less);
  tcase_add_test(t, a_repeated_product_counts_its_measured_time);
  tcase_add_test(t, a_repeated_product_counts_the_model_when_asked);
  tcase_add_test(t, several_products_run_again_and_again_pay_less);
  tcase_add_test(t, several_products_pay_the_price_when_counted_by_the_model);
  suite_add_tcase(s, t);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? 1 : 0;
}
