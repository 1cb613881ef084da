/* test_graph.c: launches replayed as CUDA graphs (runtime/cu_graph.c),
 * through the stand-in libcuda.so.1 of tests/fake_cuda, which logs each
 * graph instantiated and each graph launch: a launch becomes a graph at
 * its second sight and is replayed from then on, a launch that differs in
 * a parameter or a copy is a new one, a launch without param_words never
 * becomes one, and the table stays usable past its size; a launch not
 * waited for (no_wait) queues without a synchronise. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cu.h"
#include "unit_fake.h"

static cu_kernel empty;

static const char empty_ptx[] =
    ".version 6.0\n.target sm_50\n.address_size 64\n\n"
    ".visible .entry twasm_empty()\n{\n\tret;\n}\n";

/* The fake driver up, the empty kernel loaded; false without the fake. */
static bool fake_up(void) {
  if (!unit_fake_up("graph")) return false;
  const cu_ptx set[] = {{50, 60, empty_ptx}};
  cu_module *m;
  cu_error err;
  return cu_module_load(set, 1, &m, &err) && cu_module_kernel(m, "twasm_empty", &empty, &err);
}

static void log_clear(void) {
  FILE *f = fopen(unit_fake_log(), "w");
  if (f) fclose(f);
}

/* One launch of the empty kernel with one 8-byte parameter. */
static bool launch_waiting(int64_t value, uint32_t words, bool wait) {
  void *params[] = {&value};
  cu_args a = {.params = params, .param_words = words, .no_wait = !wait};
  cu_dim3 one = {1, 1, 1};
  cu_error err;
  bool ok = cu_launch(&empty, one, one, 0, &a, &err);
  if (!ok) fprintf(stderr, "launch: %s\n", err.message);
  return ok;
}

static bool launch(int64_t value, uint32_t words) { return launch_waiting(value, words, true); }

START_TEST(graph_made_at_second_sight_and_replayed) {
  if (!fake_up()) {
    fprintf(stderr, "SKIP graph tests: FAKE_CUDA_DIR not set or the fake driver did not come up\n");
    return;
  }
  log_clear();
  ck_assert(launch(5, 1));
  ck_assert_int_eq(unit_fake_logged("cuGraphInstantiateWithFlags"), 0);
  ck_assert_int_eq(unit_fake_logged("cuGraphLaunch"), 0);
  ck_assert(launch(5, 1));
  ck_assert_int_eq(unit_fake_logged("cuGraphInstantiateWithFlags"), 1);
  ck_assert_int_eq(unit_fake_logged("cuGraphLaunch"), 1);
  ck_assert(launch(5, 1));
  ck_assert(launch(5, 1));
  ck_assert_int_eq(unit_fake_logged("cuGraphInstantiateWithFlags"), 1);
  ck_assert_int_eq(unit_fake_logged("cuGraphLaunch"), 3);
  /* another parameter value is another launch: direct, then a graph */
  log_clear();
  ck_assert(launch(6, 1));
  ck_assert_int_eq(unit_fake_logged("cuGraphLaunch"), 0);
  ck_assert(launch(6, 1));
  ck_assert_int_eq(unit_fake_logged("cuGraphInstantiateWithFlags"), 1);
  ck_assert_int_eq(unit_fake_logged("cuGraphLaunch"), 1);
  /* without param_words, never */
  log_clear();
  for (int i = 0; i < 3; i++) ck_assert(launch(7, 0));
  ck_assert_int_eq(unit_fake_logged("cuGraphLaunch"), 0);
}
END_TEST

START_TEST(graph_table_survives_many_launches_seen_once) {
  if (!fake_up()) {
    fprintf(stderr, "SKIP graph tests: FAKE_CUDA_DIR not set or the fake driver did not come up\n");
    return;
  }
  ck_assert(launch(100, 1));
  ck_assert(launch(100, 1));
  log_clear();
  /* a parameter that changes every time (a position): far more launches
   * seen once than the table holds */
  for (int64_t i = 0; i < 2000; i++) ck_assert(launch(1000 + i, 1));
  ck_assert_int_eq(unit_fake_logged("cuGraphLaunch"), 0);
  /* the repeated launch's graph is still there, and new ones still come */
  ck_assert(launch(100, 1));
  ck_assert_int_eq(unit_fake_logged("cuGraphLaunch"), 1);
  log_clear();
  ck_assert(launch(200, 1));
  ck_assert(launch(200, 1));
  ck_assert_int_eq(unit_fake_logged("cuGraphInstantiateWithFlags"), 1);
}
END_TEST

/* A launch not waited for (cu_args.no_wait, rt_defer.c) queues without a
 * synchronise, direct or as a graph; a waited one synchronises once. */
START_TEST(launch_without_wait_does_not_synchronise) {
  if (!fake_up()) {
    fprintf(stderr, "SKIP graph tests: FAKE_CUDA_DIR not set or the fake driver did not come up\n");
    return;
  }
  log_clear();
  ck_assert(launch_waiting(300, 1, false)); /* direct */
  ck_assert(launch_waiting(300, 1, false)); /* made a graph */
  ck_assert(launch_waiting(300, 1, false)); /* replayed */
  ck_assert(launch_waiting(301, 0, false)); /* never a graph */
  ck_assert_int_eq(unit_fake_logged("cuGraphLaunch"), 2);
  ck_assert_int_eq(unit_fake_logged("synchronise"), 0);
  ck_assert(launch_waiting(300, 1, true));
  ck_assert(launch_waiting(301, 0, true));
  ck_assert_int_eq(unit_fake_logged("cuGraphLaunch"), 3);
  ck_assert_int_eq(unit_fake_logged("synchronise"), 2);
  cu_error err;
  ck_assert(cu_sync("test", &err));
  ck_assert_int_eq(unit_fake_logged("synchronise"), 3);
}
END_TEST

/* TWASM_GPU_GRAPH_UPDATE=1: launches whose parameter changes every time
 * (an LLM's k product writing row pos) are replayed by their shape: the
 * second of them makes the shape's graph with its own parameter, each
 * later one sets the kernel node's parameter (once per change) and
 * launches it, and the graph runs with that launch's value. */
START_TEST(graph_by_shape_sets_the_changed_parameters) {
  setenv("TWASM_GPU_GRAPH_UPDATE", "1", 1);
  if (!fake_up()) {
    fprintf(stderr, "SKIP graph tests: FAKE_CUDA_DIR not set or the fake driver did not come up\n");
    return;
  }
  log_clear();
  ck_assert(launch(1000, 1));
  ck_assert_int_eq(unit_fake_logged("cuGraphLaunch"), 0);
  ck_assert(launch(1001, 1));
  ck_assert_int_eq(unit_fake_logged("cuGraphInstantiateWithFlags"), 1);
  ck_assert_int_eq(unit_fake_logged("cuGraphLaunch"), 1);
  ck_assert_int_eq(unit_fake_logged("graph node param 1001"), 1);
  ck_assert_int_eq(unit_fake_logged("cuGraphExecKernelNodeSetParams"), 0);
  ck_assert(launch(1002, 1));
  ck_assert(launch(1003, 1));
  ck_assert_int_eq(unit_fake_logged("cuGraphInstantiateWithFlags"), 1);
  ck_assert_int_eq(unit_fake_logged("cuGraphExecKernelNodeSetParams"), 2);
  ck_assert_int_eq(unit_fake_logged("graph node param 1002"), 1);
  ck_assert_int_eq(unit_fake_logged("graph node param 1003"), 1);
  ck_assert_int_eq(unit_fake_logged("cuGraphLaunch"), 3);
  /* another shape (no parameter words) is never replayed */
  for (int i = 0; i < 3; i++) ck_assert(launch(2000 + i, 0));
  ck_assert_int_eq(unit_fake_logged("cuGraphLaunch"), 3);
}
END_TEST

static Suite *graph_suite(void) {
  Suite *s = suite_create("graph");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, graph_made_at_second_sight_and_replayed);
  tcase_add_test(tc, graph_table_survives_many_launches_seen_once);
  tcase_add_test(tc, launch_without_wait_does_not_synchronise);
  tcase_add_test(tc, graph_by_shape_sets_the_changed_parameters);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(graph_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  unlink(unit_fake_log());
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
