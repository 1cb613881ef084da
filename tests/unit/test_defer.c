/* test_defer.c: launches not waited for (runtime/rt_defer.c) on the device
 * copy of linear memory, through the stand-in libcuda.so.1 of
 * tests/fake_cuda, which logs each wait ("synchronise"): after a deferred
 * launch nothing waits until the CPU touches its output (read) or input
 * (write) pages, a system call's buffers, or a launch whose spans meet its
 * output; the fault waits once and lets the access through; a launch that
 * faulted before the next came is waited for on its next 2 launches;
 * without TWASM_GPU_DEFER=1 nothing is deferred (the default). */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cu.h"
#include "rt_internal.h"
#include "rt_offload.h"
#include "unit_fake.h"

#define PAGE 4096u
#define MEM (1u << 20)

static uint8_t *host;
static rt_resident *res;
static const int kernel_a = 1, kernel_b = 2; /* stand-ins for two kernels */

static bool fake_up(void) {
  if (!getenv("TWASM_GPU_DEFER")) setenv("TWASM_GPU_DEFER", "1", 1);
  return unit_fake_up("defer");
}

static void setup(void) { res = unit_resident_up(&host, MEM); }

static void teardown(void) {
  unit_resident_down(res, host, MEM);
  unlink(unit_fake_log());
}

/* A matrix-vector launch: W (128 KiB at w, read), x (1 KiB at 200 KiB,
 * read), y (256 bytes at y, written into the host pages). */
static rt_offload_plan plan_of(uint64_t w, uint64_t y) {
  rt_offload_plan p;
  memset(&p, 0, sizeof p);
  p.spans[0] = (rt_offload_span){w, w + 128 * 1024, false, false, false};
  p.spans[1] = (rt_offload_span){200 * 1024, 201 * 1024, false, false, false};
  p.spans[2] = (rt_offload_span){y + 100, y + 356, true, false, false};
  p.nspans = 3;
  return p;
}

/* Prepares p (host out), "queues" it, and defers it (by_code: the code
 * waits, twasm_rt_offload_unwaited's way): its slot. */
static int deferred_launch_how(const void *kernel, const rt_offload_plan *p, bool by_code) {
  static rt_resident_launch L;
  cu_error err;
  ck_assert_msg(rt_resident_prepare(res, MEM, p, true, &L, &err), "%s", err.message);
  for (size_t i = 0; i < L.nin; i++) memcpy(L.in[i].dev, L.in[i].host, L.in[i].len);
  int slot = rt_defer_choose(kernel, p, by_code);
  if (slot >= 0) ck_assert(rt_defer_add(res, host, p, slot, by_code));
  return slot;
}

static int deferred_launch(const void *kernel, const rt_offload_plan *p) {
  return deferred_launch_how(kernel, p, false);
}

START_TEST(defer_waits_where_the_output_is_read) {
  if (!fake_up()) {
    fprintf(stderr, "test_defer: SKIP (no fake driver)\n");
    return;
  }
  rt_offload_plan p = plan_of(0, 300 * 1024);
  ck_assert_int_ge(deferred_launch(&kernel_a, &p), 0);
  ck_assert(rt_defer_pending());
  ck_assert_int_eq(unit_fake_logged("synchronise"), 0);
  /* other pages: no fault, no wait */
  host[400 * 1024] = 1;
  ck_assert_uint_eq(host[250 * 1024], (uint8_t)(250 * 1024 * 7 + 3));
  ck_assert_int_eq(unit_resident_faults(), 0);
  /* reading the output waits once, then reads */
  ck_assert_uint_eq(host[300 * 1024 + 4000], (uint8_t)((300 * 1024 + 4000) * 7 + 3));
  ck_assert_int_eq(unit_resident_faults(), 1);
  ck_assert_int_eq(unit_fake_logged("synchronise"), 1);
  ck_assert(!rt_defer_pending());
  host[300 * 1024 + 100] = 9; /* open again */
  host[200 * 1024] = 9;
  ck_assert_int_eq(unit_resident_faults(), 1);
}
END_TEST

START_TEST(defer_waits_where_an_input_is_written) {
  if (!fake_up()) {
    fprintf(stderr, "test_defer: SKIP (no fake driver)\n");
    return;
  }
  rt_offload_plan p = plan_of(0, 300 * 1024);
  ck_assert_int_ge(deferred_launch(&kernel_a, &p), 0);
  /* x may be read (its copy in reads it too) */
  ck_assert_uint_eq(host[200 * 1024 + 5], (uint8_t)((200 * 1024 + 5) * 7 + 3));
  ck_assert_int_eq(unit_resident_faults(), 0);
  /* but not written before its copy in ran */
  host[200 * 1024 + 5] = 42;
  ck_assert_int_eq(unit_resident_faults(), 1);
  ck_assert_int_eq(unit_fake_logged("synchronise"), 1);
  ck_assert_uint_eq(host[200 * 1024 + 5], 42);
  /* W stays kept: a write to it faults once more and opens it */
  host[3 * PAGE] = 1;
  ck_assert_int_eq(unit_resident_faults(), 2);
  ck_assert_int_eq(unit_fake_logged("synchronise"), 1);
}
END_TEST

/* Two launches in a row (wq then wk on one x): the second queues behind
 * the first, no wait between; a waited launch after them reopens all. */
START_TEST(defer_chains_launches_and_a_waited_one_settles_them) {
  if (!fake_up()) {
    fprintf(stderr, "test_defer: SKIP (no fake driver)\n");
    return;
  }
  rt_offload_plan a = plan_of(0, 300 * 1024), b = plan_of(512 * 1024, 310 * 1024);
  ck_assert_int_ge(deferred_launch(&kernel_a, &a), 0);
  ck_assert(!rt_defer_conflicts(&b, host));
  ck_assert_int_ge(deferred_launch(&kernel_a, &b), 0);
  ck_assert_int_eq(unit_fake_logged("synchronise"), 0);
  /* a launch reading a's output waits first */
  rt_offload_plan c = plan_of(0, 320 * 1024);
  c.spans[1] = (rt_offload_span){300 * 1024, 300 * 1024 + 400, false, false, false};
  ck_assert(rt_defer_conflicts(&c, host));
  /* a waited launch covers both: pages open, no extra wait */
  rt_defer_synced();
  ck_assert(!rt_defer_pending());
  ck_assert_int_eq(unit_fake_logged("synchronise"), 0);
  host[300 * 1024 + 100] = 1;
  host[310 * 1024 + 100] = 1;
  host[200 * 1024] = 1;
  ck_assert_int_eq(unit_resident_faults(), 0);
  /* both stay deferred next time (followed by a launch) */
  ck_assert_int_ge(rt_defer_choose(&kernel_a, &a, false), 0);
}
END_TEST

/* A launch whose output the CPU read before any launch came is waited for
 * on its next 2 launches, then tried again; others are not affected. */
START_TEST(defer_learns_which_launches_fault) {
  if (!fake_up()) {
    fprintf(stderr, "test_defer: SKIP (no fake driver)\n");
    return;
  }
  rt_offload_plan p = plan_of(0, 300 * 1024), q = plan_of(128 * 1024, 300 * 1024);
  ck_assert_int_ge(deferred_launch(&kernel_b, &p), 0);
  ck_assert_uint_eq(host[300 * 1024 + 100], (uint8_t)((300 * 1024 + 100) * 7 + 3));
  ck_assert_int_eq(unit_resident_faults(), 1);
  ck_assert_int_lt(rt_defer_choose(&kernel_b, &p, false), 0);
  ck_assert_int_lt(rt_defer_choose(&kernel_b, &p, false), 0);
  ck_assert_int_ge(rt_defer_choose(&kernel_b, &q, false), 0); /* another W */
  ck_assert_int_ge(rt_defer_choose(&kernel_a, &p, false), 0); /* another kernel */
  ck_assert_int_ge(deferred_launch(&kernel_b, &p), 0);
  host[300 * 1024 + 100] = 0;
  ck_assert_int_eq(unit_resident_faults(), 2);
  /* twice in a row: four launches waited */
  for (int i = 0; i < 4; i++) ck_assert_int_lt(rt_defer_choose(&kernel_b, &p, false), 0);
  ck_assert_int_ge(rt_defer_choose(&kernel_b, &p, false), 0);
}
END_TEST

/* A system call's buffer (rt_resident_touch) waits first: the kernel
 * would fail with EFAULT on the unreadable page instead of faulting. */
START_TEST(defer_waits_before_a_system_call) {
  if (!fake_up()) {
    fprintf(stderr, "test_defer: SKIP (no fake driver)\n");
    return;
  }
  rt_offload_plan p = plan_of(0, 300 * 1024);
  ck_assert_int_ge(deferred_launch(&kernel_a, &p), 0);
  rt_resident_touch(host + 300 * 1024, 512);
  ck_assert_int_eq(unit_fake_logged("synchronise"), 1);
  ck_assert(!rt_defer_pending());
  int fd[2];
  ck_assert_int_eq(pipe(fd), 0);
  ck_assert_int_eq(write(fd[1], host + 300 * 1024, 512), 512);
  close(fd[0]);
  close(fd[1]);
  ck_assert_int_eq(unit_resident_faults(), 0);
}
END_TEST

START_TEST(defer_off_by_default) {
  unsetenv("TWASM_GPU_DEFER");
  setenv("TWASM_GPU_DEFER", "", 1);
  if (!fake_up()) {
    fprintf(stderr, "test_defer: SKIP (no fake driver)\n");
    return;
  }
  ck_assert(!rt_defer_wanted());
  rt_offload_plan p = plan_of(0, 300 * 1024);
  ck_assert_int_lt(deferred_launch(&kernel_a, &p), 0);
  ck_assert(!rt_defer_pending());
  host[300 * 1024 + 100] = 1;
  ck_assert_int_eq(unit_resident_faults(), 0);
}
END_TEST

/* wq then wk on one x, their outputs on neighbouring pages (q, then k):
 * x is made read-only once, not once a launch, and the wait reopens x and
 * the two output pages as one range: 3 mprotects and 2 reopens, where
 * each launch protecting its own spans and each range reopened alone made
 * 4 and 4.  The CPU then reads both outputs and writes x without a fault. */
START_TEST(defer_protects_a_shared_input_once_and_reopens_neighbours_together) {
  if (!fake_up()) {
    fprintf(stderr, "test_defer: SKIP (no fake driver)\n");
    return;
  }
  rt_offload_plan a = plan_of(0, 300 * 1024), b = plan_of(512 * 1024, 304 * 1024);
  int before = rt_defer_mprotect_calls();
  ck_assert_int_ge(deferred_launch(&kernel_a, &a), 0);
  ck_assert_int_ge(deferred_launch(&kernel_a, &b), 0);
  ck_assert_int_eq(rt_defer_mprotect_calls() - before, 3);
  ck_assert_int_eq(unit_fake_logged("synchronise"), 0);
  rt_defer_synced();
  ck_assert(!rt_defer_pending());
  ck_assert_int_eq(rt_defer_mprotect_calls() - before, 5);
  ck_assert_uint_eq(host[300 * 1024 + 100], (uint8_t)((300 * 1024 + 100) * 7 + 3));
  ck_assert_uint_eq(host[304 * 1024 + 100], (uint8_t)((304 * 1024 + 100) * 7 + 3));
  host[200 * 1024] = 9;
  ck_assert_int_eq(unit_resident_faults(), 0);
}
END_TEST

/* Waits placed by the code (twasm_rt_offload_unwaited): no page is
 * protected, so nothing faults; twasm_rt_offload_pending says a launch
 * runs; twasm_rt_offload_wait_for waits only for bytes the launches
 * write (a load) or touch (a store); two launches in a row are waited for
 * once.  Without page protection (TWASM_GPU_DEFER unset) this is on. */
START_TEST(defer_by_code_waits_only_for_the_bytes_launches_touch) {
  setenv("TWASM_GPU_DEFER", "", 1);
  if (!fake_up()) {
    fprintf(stderr, "test_defer: SKIP (no fake driver)\n");
    return;
  }
  rt_offload_plan a = plan_of(0, 300 * 1024), b = plan_of(512 * 1024, 310 * 1024);
  int before = rt_defer_mprotect_calls();
  ck_assert_int_lt(rt_defer_choose(&kernel_a, &a, false), 0);
  ck_assert_int_ge(deferred_launch_how(&kernel_a, &a, true), 0);
  ck_assert_int_ge(deferred_launch_how(&kernel_a, &b, true), 0);
  ck_assert_uint_eq(twasm_rt_offload_pending, 1);
  ck_assert_int_eq(rt_defer_mprotect_calls(), before);
  /* a load elsewhere, a load of x (an input), a store elsewhere: no wait */
  twasm_rt_offload_wait_for(host + 400 * 1024, 4, 0);
  twasm_rt_offload_wait_for(host + 200 * 1024 + 8, 4, 0);
  twasm_rt_offload_wait_for(host + 400 * 1024, 16, 1);
  ck_assert_int_eq(unit_fake_logged("synchronise"), 0);
  ck_assert_uint_eq(twasm_rt_offload_pending, 1);
  /* a load of b's output: one wait for both */
  twasm_rt_offload_wait_for(host + 310 * 1024 + 96, 8, 0);
  ck_assert_int_eq(unit_fake_logged("synchronise"), 1);
  ck_assert_uint_eq(twasm_rt_offload_pending, 0);
  ck_assert(!rt_defer_pending());
  host[300 * 1024 + 100] = 1;
  ck_assert_int_eq(unit_resident_faults(), 0);
  /* a store into x waits; a full wait with nothing pending does not */
  ck_assert_int_ge(deferred_launch_how(&kernel_a, &a, true), 0);
  twasm_rt_offload_wait_for(host + 200 * 1024 + 8, 4, 1);
  ck_assert_int_eq(unit_fake_logged("synchronise"), 2);
  twasm_rt_offload_wait();
  ck_assert_int_eq(unit_fake_logged("synchronise"), 2);
  ck_assert_int_eq(rt_defer_mprotect_calls(), before);
}
END_TEST

/* TWASM_GPU_DEFER=0: no launch goes unwaited, by the code or not. */
START_TEST(defer_by_code_off_with_zero) {
  setenv("TWASM_GPU_DEFER", "0", 1);
  if (!fake_up()) {
    fprintf(stderr, "test_defer: SKIP (no fake driver)\n");
    return;
  }
  rt_offload_plan p = plan_of(0, 300 * 1024);
  ck_assert_int_lt(deferred_launch_how(&kernel_a, &p, true), 0);
  ck_assert_int_lt(deferred_launch_how(&kernel_a, &p, false), 0);
  ck_assert_uint_eq(twasm_rt_offload_pending, 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("defer");
  TCase *c = tcase_create("defer");
  tcase_add_checked_fixture(c, setup, teardown);
  tcase_add_test(c, defer_waits_where_the_output_is_read);
  tcase_add_test(c, defer_waits_where_an_input_is_written);
  tcase_add_test(c, defer_chains_launches_and_a_waited_one_settles_them);
  tcase_add_test(c, defer_learns_which_launches_fault);
  tcase_add_test(c, defer_waits_before_a_system_call);
  tcase_add_test(c, defer_off_by_default);
  tcase_add_test(c, defer_protects_a_shared_input_once_and_reopens_neighbours_together);
  tcase_add_test(c, defer_by_code_waits_only_for_the_bytes_launches_touch);
  tcase_add_test(c, defer_by_code_off_with_zero);
  suite_add_tcase(s, c);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_FORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
