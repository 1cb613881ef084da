/* test_wasi.c: Check suite "wasi": path resolution beneath a preopen, errno
 * mapping, argument/environment layout, clocks and descriptors, driven at
 * C level through the WASI implementation functions. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "twasm_abi.h"
#include "wasi_internal.h"

#define MEM_SIZE 4096u

static char tmp_dir[64];
static char root_dir[128];
static int root_fd = -1;
static uint8_t mem[MEM_SIZE];

static void run(const char *cmd) { ck_assert_int_eq(system(cmd), 0); }

/* T/secret.txt outside; T/root the preopen, with links in and out. */
static void tree_setup(void) {
  char cmd[1024];
  strcpy(tmp_dir, "/tmp/twasm-wasi-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmp_dir));
  snprintf(root_dir, sizeof root_dir, "%s/root", tmp_dir);
  snprintf(cmd, sizeof cmd,
           "cd %s && mkdir -p root/sub && echo secret > secret.txt && echo in > root/file.txt"
           " && ln -s ../secret.txt root/out && ln -s %s/secret.txt root/abs"
           " && ln -s .. root/updir && ln -s sub/../file.txt root/in"
           " && ln -s ../file.txt root/sub/up && ln -s loop root/loop",
           tmp_dir, tmp_dir);
  run(cmd);
  root_fd = open(root_dir, O_RDONLY | O_DIRECTORY);
  ck_assert_int_ge(root_fd, 0);
}

static void tree_teardown(void) {
  char cmd[256];
  close(root_fd);
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmp_dir);
  run(cmd);
  wasi_resolve = WASI_RESOLVE_AUTO;
}

static const struct open_case {
  const char *path;
  bool follow;
  uint32_t err;
} open_cases[] = {
    {"file.txt", true, WASI_ESUCCESS},
    {"sub/../file.txt", true, WASI_ESUCCESS},
    {"./sub/./../file.txt", true, WASI_ESUCCESS},
    {"in", true, WASI_ESUCCESS},
    {"sub/up", true, WASI_ESUCCESS},
    {"../secret.txt", true, WASI_ENOTCAPABLE},
    {"sub/../../secret.txt", true, WASI_ENOTCAPABLE},
    {"/etc/passwd", true, WASI_ENOTCAPABLE},
    {"out", true, WASI_ENOTCAPABLE},
    {"abs", true, WASI_ENOTCAPABLE},
    {"updir/secret.txt", true, WASI_ENOTCAPABLE},
    {"out", false, WASI_ELOOP},
    {"loop", true, WASI_ELOOP},
    {"missing", true, WASI_ENOENT},
    {"file.txt/x", true, WASI_ENOTDIR},
};
#define NOPEN_CASES (int)(sizeof open_cases / sizeof open_cases[0])

/* _i: case index; even runs use openat2, odd ones the component walk. */
static void check_open(int i, wasi_resolve_mode mode) {
  const struct open_case *k = &open_cases[i];
  int fd = -1;
  wasi_resolve = mode;
  uint32_t err = wasi_resolve_open(root_fd, k->path, O_RDONLY, 0, k->follow, &fd);
  ck_assert_msg(err == k->err, "%s (%s): got %u, want %u", k->path,
                mode == WASI_RESOLVE_WALK ? "walk" : "openat2", err, k->err);
  if (!err) close(fd);
}

START_TEST(resolve_open_openat2) { check_open(_i, WASI_RESOLVE_AUTO); }
END_TEST

START_TEST(resolve_open_walk) { check_open(_i, WASI_RESOLVE_WALK); }
END_TEST

/* A file created through a link that points outside must not appear
 * there; one created inside lands in the right directory. */
static void check_create(wasi_resolve_mode mode) {
  char outside[256], inside[256];
  int fd;
  wasi_resolve = mode;
  ck_assert_uint_eq(wasi_resolve_open(root_fd, "updir/new.txt", O_CREAT | O_WRONLY, 0644, true, &fd),
                    WASI_ENOTCAPABLE);
  snprintf(outside, sizeof outside, "%s/new.txt", tmp_dir);
  ck_assert_int_ne(access(outside, F_OK), 0);
  ck_assert_uint_eq(wasi_resolve_open(root_fd, "sub/new.txt", O_CREAT | O_WRONLY, 0644, true, &fd),
                    WASI_ESUCCESS);
  close(fd);
  snprintf(inside, sizeof inside, "%s/sub/new.txt", root_dir);
  ck_assert_int_eq(access(inside, F_OK), 0);
}

START_TEST(resolve_create_stays_inside_openat2) { check_create(WASI_RESOLVE_AUTO); }
END_TEST

START_TEST(resolve_create_stays_inside_walk) { check_create(WASI_RESOLVE_WALK); }
END_TEST

START_TEST(resolve_parent_cases) {
  static const struct { const char *path; uint32_t err; const char *leaf; } cases[] = {
      {"file.txt", WASI_ESUCCESS, "file.txt"}, {"sub/x", WASI_ESUCCESS, "x"},
      {"sub/", WASI_ESUCCESS, "sub"},         {"sub/..", WASI_ESUCCESS, "."},
      {"../x", WASI_ENOTCAPABLE, NULL},       {"/x", WASI_ENOTCAPABLE, NULL},
      {"..", WASI_ENOTCAPABLE, NULL},         {"updir/x", WASI_ENOTCAPABLE, NULL},
      {"", WASI_ENOENT, NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char path[64];
    int parent;
    const char *leaf;
    strcpy(path, cases[i].path);
    uint32_t err = wasi_resolve_parent(root_fd, path, &parent, &leaf);
    ck_assert_msg(err == cases[i].err, "%s: got %u", cases[i].path, err);
    if (err) continue;
    ck_assert_str_eq(leaf, cases[i].leaf);
    close(parent);
  }
}
END_TEST

START_TEST(errno_mapping) {
  static const struct { int host; uint32_t wasi; } cases[] = {
      {0, 0}, {E2BIG, 1}, {EACCES, 2}, {EAGAIN, 6}, {EBADF, 8}, {EEXIST, 20},
      {EINVAL, 28}, {EISDIR, 31}, {ENOENT, 44}, {ENOSYS, 52}, {ENOTDIR, 54},
      {ENOTEMPTY, 55}, {ENOTSUP, 58}, {EPERM, 63}, {ESPIPE, 70}, {EXDEV, 75},
      {EHWPOISON, WASI_EIO},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    ck_assert_uint_eq(wasi_errno_from_host(cases[i].host), cases[i].wasi);
}
END_TEST

/* ---- calls through the implementation functions ------------------------ */

static twasm_trap call_trap;

static wasi_call call_on(twasm_wasi *w) {
  memset(mem, 0, sizeof mem);
  return (wasi_call){.w = w, .mem = mem, .mem_size = MEM_SIZE, .trap = &call_trap};
}

static twasm_val i32(uint32_t v) { return (twasm_val){.kind = TWASM_I32, .of.i32 = (int32_t)v}; }
static twasm_val i64(uint64_t v) { return (twasm_val){.kind = TWASM_I64, .of.i64 = (int64_t)v}; }

static uint32_t u32_at(uint32_t p) {
  return (uint32_t)mem[p] | (uint32_t)mem[p + 1] << 8 | (uint32_t)mem[p + 2] << 16 |
         (uint32_t)mem[p + 3] << 24;
}

static uint64_t u64_at(uint32_t p) { return (uint64_t)u32_at(p + 4) << 32 | u32_at(p); }

START_TEST(args_layout) {
  char *argv[] = {"prog", "a b", ""};
  twasm_wasi *w = twasm_wasi_new(3, argv, NULL);
  wasi_call c = call_on(w);
  ck_assert_uint_eq(wasi_args_sizes_get(&c, (twasm_val[]){i32(0), i32(4)}), 0);
  ck_assert_uint_eq(u32_at(0), 3);
  ck_assert_uint_eq(u32_at(4), 5 + 4 + 1);
  ck_assert_uint_eq(wasi_args_get(&c, (twasm_val[]){i32(100), i32(200)}), 0);
  ck_assert_uint_eq(u32_at(100), 200);
  ck_assert_uint_eq(u32_at(104), 205);
  ck_assert_uint_eq(u32_at(108), 209);
  ck_assert_mem_eq(mem + 200, "prog\0a b\0\0", 10);
  ck_assert_uint_eq(wasi_args_get(&c, (twasm_val[]){i32(100), i32(MEM_SIZE - 4)}), WASI_EFAULT);
  twasm_wasi_delete(w);
}
END_TEST

START_TEST(environ_layout) {
  char *envp[] = {"A=1", "PATH=/x", NULL};
  twasm_wasi *w = twasm_wasi_new(0, NULL, envp);
  wasi_call c = call_on(w);
  ck_assert_uint_eq(wasi_environ_sizes_get(&c, (twasm_val[]){i32(0), i32(4)}), 0);
  ck_assert_uint_eq(u32_at(0), 2);
  ck_assert_uint_eq(u32_at(4), 12);
  ck_assert_uint_eq(wasi_environ_get(&c, (twasm_val[]){i32(16), i32(32)}), 0);
  ck_assert_uint_eq(u32_at(16), 32);
  ck_assert_uint_eq(u32_at(20), 36);
  ck_assert_str_eq((char *)mem + 36, "PATH=/x");
  ck_assert_uint_eq(wasi_environ_sizes_get(&c, (twasm_val[]){i32(MEM_SIZE - 2), i32(4)}), WASI_EFAULT);
  twasm_wasi_delete(w);
}
END_TEST

START_TEST(clock_ids) {
  twasm_wasi *w = twasm_wasi_new(0, NULL, NULL);
  wasi_call c = call_on(w);
  for (uint32_t id = 0; id < 4; id++) {
    ck_assert_uint_eq(wasi_clock_res_get(&c, (twasm_val[]){i32(id), i32(0)}), 0);
    ck_assert_uint_gt(u64_at(0), 0);
    ck_assert_uint_eq(wasi_clock_time_get(&c, (twasm_val[]){i32(id), i64(1), i32(8)}), 0);
  }
  ck_assert_uint_eq(wasi_clock_res_get(&c, (twasm_val[]){i32(4), i32(0)}), WASI_EINVAL);
  ck_assert_uint_eq(wasi_clock_time_get(&c, (twasm_val[]){i32(0), i64(1), i32(8)}), 0);
  uint64_t secs = u64_at(8) / 1000000000u, now = (uint64_t)time(NULL);
  ck_assert(secs + 1 >= now && secs <= now + 1);
  ck_assert_uint_eq(wasi_clock_time_get(&c, (twasm_val[]){i32(1), i64(1), i32(MEM_SIZE)}),
                    WASI_EFAULT);
  twasm_wasi_delete(w);
}
END_TEST

START_TEST(proc_exit_unwinds) {
  twasm_wasi *w = twasm_wasi_new(0, NULL, NULL);
  wasi_call c = call_on(w);
  ck_assert_uint_eq(wasi_proc_exit(&c, (twasm_val[]){i32(7)}), WASI_UNWIND);
  ck_assert_uint_eq(call_trap.code, TWASM_TRAP_EXIT);
  ck_assert_int_eq(call_trap.exit_status, 7);
  ck_assert_uint_eq(wasi_proc_raise(&c, (twasm_val[]){i32(9)}), WASI_ENOSYS);
  twasm_wasi_delete(w);
}
END_TEST

START_TEST(preopen_prestat) {
  twasm_wasi *w = twasm_wasi_new(0, NULL, NULL);
  ck_assert(twasm_wasi_add_preopen(w, root_dir, "/data"));
  wasi_call c = call_on(w);
  ck_assert_uint_eq(wasi_fd_prestat_get(&c, (twasm_val[]){i32(3), i32(0)}), 0);
  ck_assert_uint_eq(mem[0], 0);
  ck_assert_uint_eq(u32_at(4), 5);
  ck_assert_uint_eq(wasi_fd_prestat_dir_name(&c, (twasm_val[]){i32(3), i32(16), i32(5)}), 0);
  ck_assert_mem_eq(mem + 16, "/data", 5);
  ck_assert_uint_eq(wasi_fd_prestat_get(&c, (twasm_val[]){i32(4), i32(0)}), WASI_EBADF);
  ck_assert_uint_eq(wasi_fd_prestat_get(&c, (twasm_val[]){i32(1), i32(0)}), WASI_EBADF);
  twasm_wasi_delete(w);
}
END_TEST

/* path_open, fd_write, fd_seek, fd_read round trip in the preopen. */
START_TEST(file_round_trip) {
  twasm_wasi *w = twasm_wasi_new(0, NULL, NULL);
  ck_assert(twasm_wasi_add_preopen(w, root_dir, "."));
  wasi_call c = call_on(w);
  memcpy(mem + 64, "sub/rt.txt", 10);
  memcpy(mem + 128, "hello", 5);
  uint64_t rw = WASI_RIGHT_FD_READ | WASI_RIGHT_FD_WRITE;
  ck_assert_uint_eq(wasi_path_open(&c, (twasm_val[]){i32(3), i32(1), i32(64), i32(10),
                                                     i32(WASI_OFLAG_CREAT), i64(rw), i64(rw),
                                                     i32(0), i32(0)}), 0);
  uint32_t fd = u32_at(0);
  ck_assert_uint_eq(fd, 4);
  wasi_put_u32(mem + 16, 128);
  wasi_put_u32(mem + 20, 5);
  ck_assert_uint_eq(wasi_fd_write(&c, (twasm_val[]){i32(fd), i32(16), i32(1), i32(24)}), 0);
  ck_assert_uint_eq(u32_at(24), 5);
  ck_assert_uint_eq(wasi_fd_seek(&c, (twasm_val[]){i32(fd), i64(1), i32(0), i32(32)}), 0);
  ck_assert_uint_eq(u64_at(32), 1);
  wasi_put_u32(mem + 16, 256);
  ck_assert_uint_eq(wasi_fd_read(&c, (twasm_val[]){i32(fd), i32(16), i32(1), i32(24)}), 0);
  ck_assert_uint_eq(u32_at(24), 4);
  ck_assert_mem_eq(mem + 256, "ello", 4);
  wasi_put_u32(mem + 16, MEM_SIZE - 2);
  ck_assert_uint_eq(wasi_fd_read(&c, (twasm_val[]){i32(fd), i32(16), i32(1), i32(24)}), WASI_EFAULT);
  ck_assert_uint_eq(wasi_fd_close(&c, (twasm_val[]){i32(fd)}), 0);
  ck_assert_uint_eq(wasi_fd_close(&c, (twasm_val[]){i32(fd)}), WASI_EBADF);
  memcpy(mem + 64, "../secret.txt", 13);
  ck_assert_uint_eq(wasi_path_open(&c, (twasm_val[]){i32(3), i32(1), i32(64), i32(13), i32(0),
                                                     i64(rw), i64(rw), i32(0), i32(0)}),
                    WASI_ENOTCAPABLE);
  twasm_wasi_delete(w);
}
END_TEST

/* Every entry once, across calls that resume from the last cookie. */
START_TEST(readdir_cookies) {
  twasm_wasi *w = twasm_wasi_new(0, NULL, NULL);
  ck_assert(twasm_wasi_add_preopen(w, root_dir, "."));
  wasi_call c = call_on(w);
  uint64_t cookie = 0;
  int entries = 0, saw_file = 0;
  for (int round = 0; round < 64; round++) {
    /* Room for one full entry and part of the next. */
    ck_assert_uint_eq(wasi_fd_readdir(&c, (twasm_val[]){i32(3), i32(512), i32(40), i64(cookie), i32(0)}), 0);
    uint32_t used = u32_at(0);
    if (used < 24) break;
    uint32_t namlen = u32_at(512 + 16);
    if (namlen == 8 && !memcmp(mem + 512 + 24, "file.txt", 8)) {
      saw_file++;
      ck_assert_uint_eq(mem[512 + 20], WASI_FILETYPE_REGULAR_FILE);
    }
    cookie = u64_at(512);
    entries++;
  }
  /* ".", "..", file.txt, sub, out, abs, updir, in, loop */
  ck_assert_int_eq(entries, 9);
  ck_assert_int_eq(saw_file, 1);
  twasm_wasi_delete(w);
}
END_TEST

START_TEST(imports_reject_unknown) {
  static const twasm_import_abi imports[] = {
      {.module = "wasi_snapshot_preview1", .name = "fd_write", .module_len = 22, .name_len = 8},
      {.module = "env", .name = "foo", .module_len = 3, .name_len = 3},
      {.module = "wasi_snapshot_preview1", .name = "fd_frob", .module_len = 22, .name_len = 7},
  };
  twasm_module_abi m = {.abi_version = TWASM_ABI_VERSION, .nimports = 3, .imports = imports};
  twasm_extern ex[3] = {{0}};
  twasm_trap err;
  twasm_wasi *w = twasm_wasi_new(0, NULL, NULL);
  ck_assert(!twasm_wasi_imports(w, &m, ex, &err));
  ck_assert_str_eq(err.message, "unknown import wasi_snapshot_preview1::fd_frob");
  ck_assert_ptr_null(ex[1].of.func); /* the embedder's import is left alone */
  ck_assert_int_eq(ex[0].kind, TWASM_EXTERN_FUNC);
  twasm_functype t;
  twasm_func_type(ex[0].of.func, &t);
  ck_assert_uint_eq(t.nparams, 4);
  ck_assert_uint_eq(t.nresults, 1);
  twasm_wasi_delete(w);
}
END_TEST

static Suite *wasi_suite(void) {
  Suite *s = suite_create("wasi");
  TCase *paths = tcase_create("paths");
  tcase_add_checked_fixture(paths, tree_setup, tree_teardown);
  tcase_add_loop_test(paths, resolve_open_openat2, 0, NOPEN_CASES);
  tcase_add_loop_test(paths, resolve_open_walk, 0, NOPEN_CASES);
  tcase_add_test(paths, resolve_create_stays_inside_openat2);
  tcase_add_test(paths, resolve_create_stays_inside_walk);
  tcase_add_test(paths, resolve_parent_cases);
  tcase_add_test(paths, preopen_prestat);
  tcase_add_test(paths, file_round_trip);
  tcase_add_test(paths, readdir_cookies);
  suite_add_tcase(s, paths);
  TCase *calls = tcase_create("calls");
  tcase_add_test(calls, errno_mapping);
  tcase_add_test(calls, args_layout);
  tcase_add_test(calls, environ_layout);
  tcase_add_test(calls, clock_ids);
  tcase_add_test(calls, proc_exit_unwinds);
  tcase_add_test(calls, imports_reject_unknown);
  suite_add_tcase(s, calls);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(wasi_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
