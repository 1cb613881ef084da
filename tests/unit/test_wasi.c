/* test_wasi.c: Check suite "wasi": path resolution beneath a preopen, errno
 * mapping, argument/environment layout, clocks and descriptors, rights,
 * and an executable's environment, driven at C level through the WASI
 * implementation functions. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt_internal.h"
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
    {"file.txt/", true, WASI_ENOTDIR},
    {"file.txt/", false, WASI_ENOTDIR},
    {"sub/", false, WASI_ESUCCESS},
    {"updir/", false, WASI_ENOTCAPABLE},
    {"out/", false, WASI_ENOTCAPABLE},
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
      {"sub/", WASI_ESUCCESS, "sub/"},         {"sub/..", WASI_ESUCCESS, "."},
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
  uint64_t rw = WASI_RIGHT_FD_READ | WASI_RIGHT_FD_WRITE | WASI_RIGHT_FD_SEEK;
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

/* ---- rights, directories, trailing slashes, modes ---------------------- */

#define RIGHT(name) WASI_RIGHT(WASI_R_##name)

/* A context with root_dir preopened as fd 3 and path at mem+64. */
static twasm_wasi *preopened(wasi_call *c) {
  twasm_wasi *w = twasm_wasi_new(0, NULL, NULL);
  ck_assert(twasm_wasi_add_preopen(w, root_dir, "."));
  *c = call_on(w);
  return w;
}

/* path_open(dirfd, path, oflags, base, inheriting); the new fd in *fd. */
static uint32_t open_at(wasi_call *c, uint32_t dirfd, const char *path, uint32_t lookup,
                        uint32_t oflags, uint64_t base, uint64_t inheriting, uint32_t *fd) {
  size_t n = strlen(path);
  memcpy(mem + 64, path, n);
  uint32_t err = wasi_path_open(c, (twasm_val[]){i32(dirfd), i32(lookup), i32(64), i32((uint32_t)n),
                                                 i32(oflags), i64(base), i64(inheriting), i32(0),
                                                 i32(0)});
  *fd = u32_at(0);
  return err;
}

static uint64_t base_rights(wasi_call *c, uint32_t fd) {
  ck_assert_uint_eq(wasi_fd_fdstat_get(c, (twasm_val[]){i32(fd), i32(512)}), 0);
  return u64_at(512 + 8);
}

/* What every Rust program does first: reopen its preopen with the rights
 * the preopen reports (which include datasync, a "write" right). */
START_TEST(directory_opens_read_only) {
  wasi_call c;
  twasm_wasi *w = preopened(&c);
  uint64_t base = base_rights(&c, 3), inheriting = u64_at(512 + 16);
  ck_assert(base & RIGHT(PATH_OPEN));
  ck_assert(!(base & (RIGHT(FD_SEEK) | RIGHT(FD_READ) | RIGHT(FD_WRITE) | RIGHT(FD_FILESTAT_SET_SIZE))));
  ck_assert(inheriting & RIGHT(FD_WRITE));
  uint32_t fd;
  ck_assert_uint_eq(open_at(&c, 3, ".", 0, WASI_OFLAG_DIRECTORY, base, inheriting, &fd), 0);
  ck_assert_uint_eq(open_at(&c, 3, "sub", 0, 0, base | RIGHT(FD_SEEK), inheriting, &fd), 0);
  ck_assert(!(base_rights(&c, fd) & RIGHT(FD_SEEK)));
  ck_assert_uint_eq(wasi_fd_seek(&c, (twasm_val[]){i32(fd), i64(0), i32(1), i32(32)}), WASI_EISDIR);
  ck_assert_uint_eq(wasi_fd_tell(&c, (twasm_val[]){i32(fd), i32(32)}), WASI_EISDIR);
  /* Asking to write a directory is refused as natively. */
  ck_assert_uint_eq(open_at(&c, 3, ".", 0, WASI_OFLAG_DIRECTORY, RIGHT(FD_READ) | RIGHT(FD_WRITE), 0, &fd),
                    WASI_EISDIR);
  twasm_wasi_delete(w);
}
END_TEST

START_TEST(dropped_rights_stay_dropped) {
  wasi_call c;
  twasm_wasi *w = preopened(&c);
  uint64_t rw = RIGHT(FD_READ) | RIGHT(FD_WRITE) | RIGHT(FD_SEEK);
  uint32_t fd;
  ck_assert_uint_eq(open_at(&c, 3, "file.txt", 0, 0, rw, 0, &fd), 0);
  ck_assert_uint_eq(base_rights(&c, fd), rw);
  ck_assert_uint_eq(wasi_fd_fdstat_set_rights(&c, (twasm_val[]){i32(fd), i64(RIGHT(FD_SEEK)), i64(0)}), 0);
  wasi_put_u32(mem + 16, 256);
  wasi_put_u32(mem + 20, 4);
  ck_assert_uint_eq(wasi_fd_read(&c, (twasm_val[]){i32(fd), i32(16), i32(1), i32(24)}), WASI_ENOTCAPABLE);
  ck_assert_uint_eq(wasi_fd_write(&c, (twasm_val[]){i32(fd), i32(16), i32(1), i32(24)}), WASI_ENOTCAPABLE);
  ck_assert_uint_eq(wasi_fd_fdstat_set_rights(&c, (twasm_val[]){i32(fd), i64(rw), i64(0)}), WASI_ENOTCAPABLE);
  ck_assert_uint_eq(base_rights(&c, fd), RIGHT(FD_SEEK));
  ck_assert_uint_eq(wasi_fd_seek(&c, (twasm_val[]){i32(fd), i64(1), i32(0), i32(32)}), 0);
  /* A file never holds directory rights, whatever it asked for. */
  ck_assert_uint_eq(open_at(&c, 3, "file.txt", 0, 0, WASI_RIGHTS_ALL, 0, &fd), 0);
  ck_assert(!(base_rights(&c, fd) & (RIGHT(PATH_OPEN) | RIGHT(FD_READDIR))));
  twasm_wasi_delete(w);
}
END_TEST

/* Truncating needs path_filestat_set_size on the directory; creating
 * needs path_create_file. */
START_TEST(truncate_and_create_need_rights) {
  wasi_call c;
  twasm_wasi *w = preopened(&c);
  uint32_t dir, fd;
  uint64_t base = base_rights(&c, 3) & ~RIGHT(PATH_FILESTAT_SET_SIZE) & ~RIGHT(PATH_CREATE_FILE);
  ck_assert_uint_eq(open_at(&c, 3, ".", 0, WASI_OFLAG_DIRECTORY, base, RIGHT(FD_READ), &dir), 0);
  ck_assert_uint_eq(open_at(&c, dir, "file.txt", 0, WASI_OFLAG_TRUNC, 0, 0, &fd), WASI_ENOTCAPABLE);
  ck_assert_uint_eq(open_at(&c, dir, "new.txt", 0, WASI_OFLAG_CREAT, 0, 0, &fd), WASI_ENOTCAPABLE);
  ck_assert_uint_eq(open_at(&c, dir, "file.txt", 0, 0, RIGHT(FD_READ), 0, &fd), 0);
  char path[256];
  snprintf(path, sizeof path, "%s/file.txt", root_dir);
  struct stat st;
  ck_assert_int_eq(stat(path, &st), 0);
  ck_assert_int_eq(st.st_size, 3); /* "in\n", not truncated */
  ck_assert_uint_eq(open_at(&c, 3, "file.txt", 0, WASI_OFLAG_TRUNC, 0, 0, &fd), 0);
  ck_assert_int_eq(stat(path, &st), 0);
  ck_assert_int_eq(st.st_size, 0);
  twasm_wasi_delete(w);
}
END_TEST

static uint32_t path_call(wasi_call *c, wasi_impl impl, uint32_t dirfd, const char *path) {
  size_t n = strlen(path);
  memcpy(mem + 64, path, n);
  return impl(c, (twasm_val[]){i32(dirfd), i32(64), i32((uint32_t)n)});
}

/* The kernel's answers for names with trailing slashes, as a native
 * program gets them. */
START_TEST(trailing_slashes) {
  wasi_call c;
  twasm_wasi *w = preopened(&c);
  ck_assert_uint_eq(path_call(&c, wasi_path_unlink_file, 3, "file.txt/"), WASI_ENOTDIR);
  ck_assert_uint_eq(path_call(&c, wasi_path_remove_directory, 3, "file.txt/"), WASI_ENOTDIR);
  ck_assert_uint_eq(path_call(&c, wasi_path_unlink_file, 3, "sub/"), WASI_EISDIR);
  ck_assert_uint_eq(path_call(&c, wasi_path_create_directory, 3, "made/"), 0);
  ck_assert_uint_eq(path_call(&c, wasi_path_remove_directory, 3, "made/"), 0);
  /* path_link(3, 0, "file.txt", 3, "link/") */
  memcpy(mem + 64, "file.txt", 8);
  memcpy(mem + 96, "link/", 5);
  ck_assert_uint_eq(wasi_path_link(&c, (twasm_val[]){i32(3), i32(0), i32(64), i32(8), i32(3), i32(96), i32(5)}),
                    WASI_ENOENT);
  /* path_symlink("file.txt", 3, "sl/") */
  memcpy(mem + 96, "sl/", 3);
  ck_assert_uint_eq(wasi_path_symlink(&c, (twasm_val[]){i32(64), i32(8), i32(3), i32(96), i32(3)}),
                    WASI_ENOENT);
  ck_assert_uint_eq(path_call(&c, wasi_path_unlink_file, 3, "file.txt"), 0);
  twasm_wasi_delete(w);
}
END_TEST

/* readlink of "link/" is the directory the link leads to, resolved
 * beneath the preopen: no answer about what lies outside. */
START_TEST(readlink_trailing_slash_stays_inside) {
  wasi_call c;
  twasm_wasi *w = preopened(&c);
  memcpy(mem + 64, "updir/", 6);
  ck_assert_uint_eq(wasi_path_readlink(&c, (twasm_val[]){i32(3), i32(64), i32(6), i32(128), i32(64), i32(0)}),
                    WASI_ENOTCAPABLE);
  memcpy(mem + 64, "updir", 5);
  ck_assert_uint_eq(wasi_path_readlink(&c, (twasm_val[]){i32(3), i32(64), i32(5), i32(128), i32(64), i32(0)}), 0);
  ck_assert_uint_eq(u32_at(0), 2);
  ck_assert_mem_eq(mem + 128, "..", 2);
  twasm_wasi_delete(w);
}
END_TEST

/* Files and directories the guest makes get the modes a native program's
 * would: 0666 and 0777 less the umask. */
START_TEST(created_modes_follow_umask) {
  wasi_call c;
  twasm_wasi *w = preopened(&c);
  mode_t old = umask(027);
  uint32_t fd;
  ck_assert_uint_eq(open_at(&c, 3, "made.txt", 0, WASI_OFLAG_CREAT, RIGHT(FD_WRITE), 0, &fd), 0);
  ck_assert_uint_eq(path_call(&c, wasi_path_create_directory, 3, "madedir"), 0);
  umask(old);
  char path[256];
  struct stat st;
  snprintf(path, sizeof path, "%s/made.txt", root_dir);
  ck_assert_int_eq(stat(path, &st), 0);
  ck_assert_uint_eq(st.st_mode & 07777, 0640);
  snprintf(path, sizeof path, "%s/madedir", root_dir);
  ck_assert_int_eq(stat(path, &st), 0);
  ck_assert_uint_eq(st.st_mode & 07777, 0750);
  twasm_wasi_delete(w);
}
END_TEST

/* Standard streams that are not files have no position: wasi-libc's
 * isatty() needs that to take a character device for a terminal. */
START_TEST(stream_rights) {
  ck_assert(!(wasi_rights_of_type(WASI_FILETYPE_CHARACTER_DEVICE) & (RIGHT(FD_SEEK) | RIGHT(FD_TELL))));
  ck_assert(wasi_rights_of_type(WASI_FILETYPE_CHARACTER_DEVICE) & RIGHT(FD_WRITE));
  ck_assert(wasi_rights_of_type(WASI_FILETYPE_REGULAR_FILE) & RIGHT(FD_SEEK));
  ck_assert(!(wasi_rights_of_type(WASI_FILETYPE_DIRECTORY) & RIGHT(FD_READ)));
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

/* Symlinks opened without following, and loops, as the official suite's
 * nofollow_errors, dangling_symlink and symlink_loop expect. */
START_TEST(nofollow_errors) {
  wasi_call c;
  twasm_wasi *w = preopened(&c);
  uint32_t fd;
  /* "in" -> a file, "updir" -> "..", "loop" -> itself */
  ck_assert_uint_eq(open_at(&c, 3, "in", 0, 0, 0, 0, &fd), WASI_ELOOP);
  uint32_t err = open_at(&c, 3, "in", 0, WASI_OFLAG_DIRECTORY, 0, 0, &fd);
  ck_assert_msg(err == WASI_ELOOP || err == WASI_ENOTDIR, "got %u", err);
  ck_assert_uint_eq(open_at(&c, 3, "in", WASI_LOOKUP_SYMLINK_FOLLOW, WASI_OFLAG_DIRECTORY, 0, 0, &fd),
                    WASI_ENOTDIR);
  ck_assert_uint_eq(open_at(&c, 3, "loop", WASI_LOOKUP_SYMLINK_FOLLOW, 0, 0, 0, &fd), WASI_ELOOP);
  ck_assert_uint_eq(open_at(&c, 3, "loop", 0, 0, 0, 0, &fd), WASI_ELOOP);
  ck_assert_uint_eq(open_at(&c, 3, "sub/../../file.txt", 0, 0, 0, 0, &fd), WASI_ENOTCAPABLE);
  ck_assert_uint_eq(open_at(&c, 3, "sub///", 0, 0, 0, 0, &fd), 0);
  ck_assert_uint_eq(open_at(&c, 3, "file.txt///", 0, 0, 0, 0, &fd), WASI_ENOTDIR);
  memcpy(mem + 64, "file.txt\0", 9);
  ck_assert_uint_eq(wasi_path_open(&c, (twasm_val[]){i32(3), i32(0), i32(64), i32(9), i32(0), i64(0),
                                                     i64(0), i32(0), i32(0)}),
                    WASI_EILSEQ);
  twasm_wasi_delete(w);
}
END_TEST

/* path_rename(3, from, 3, to). */
static uint32_t rename_in(wasi_call *c, const char *from, const char *to) {
  size_t nf = strlen(from), nt = strlen(to);
  memcpy(mem + 64, from, nf);
  memcpy(mem + 128, to, nt);
  return wasi_path_rename(c, (twasm_val[]){i32(3), i32(64), i32((uint32_t)nf), i32(3), i32(128),
                                           i32((uint32_t)nt)});
}

START_TEST(rename_cases) {
  wasi_call c;
  twasm_wasi *w = preopened(&c);
  ck_assert_uint_eq(path_call(&c, wasi_path_create_directory, 3, "d1"), 0);
  ck_assert_uint_eq(rename_in(&c, "d1/", "d2/"), 0);
  ck_assert_uint_eq(rename_in(&c, "file.txt", "d2"), WASI_EISDIR);
  ck_assert_uint_eq(rename_in(&c, "file.txt", "f2/"), WASI_ENOTDIR);
  ck_assert_uint_eq(rename_in(&c, "d2", "sub"), WASI_ENOTEMPTY);
  ck_assert_uint_eq(path_call(&c, wasi_path_create_directory, 3, "empty"), 0);
  ck_assert_uint_eq(rename_in(&c, "d2", "empty"), 0);
  ck_assert_uint_eq(path_call(&c, wasi_path_create_directory, 3, "d3"), 0);
  ck_assert_uint_eq(rename_in(&c, "d3", "file.txt"), WASI_ENOTDIR);
  ck_assert_uint_eq(rename_in(&c, "d3", ".."), WASI_ENOTCAPABLE);
  twasm_wasi_delete(w);
}
END_TEST

/* "." is listed with the directory's own inode; a cookie taken before a
 * file was added still resumes at the next entry. */
START_TEST(readdir_dot_and_resume) {
  wasi_call c;
  twasm_wasi *w = preopened(&c);
  struct stat st;
  ck_assert_int_eq(stat(root_dir, &st), 0);
  bool saw_dot = false;
  uint64_t cookie = 0;
  for (int round = 0; round < 64; round++) {
    ck_assert_uint_eq(wasi_fd_readdir(&c, (twasm_val[]){i32(3), i32(512), i32(40), i64(cookie), i32(0)}), 0);
    if (u32_at(0) < 24) break;
    if (u32_at(512 + 16) == 1 && mem[512 + 24] == '.') {
      saw_dot = true;
      ck_assert_uint_eq(u64_at(512 + 8), st.st_ino);
      ck_assert_uint_eq(mem[512 + 20], WASI_FILETYPE_DIRECTORY);
    }
    cookie = u64_at(512);
  }
  ck_assert(saw_dot);
  /* A directory descriptor without the readdir right cannot list. */
  uint32_t fd;
  ck_assert_uint_eq(open_at(&c, 3, "sub", 0, WASI_OFLAG_DIRECTORY, RIGHT(PATH_OPEN), 0, &fd), 0);
  ck_assert_uint_eq(wasi_fd_readdir(&c, (twasm_val[]){i32(fd), i32(512), i32(40), i64(0), i32(0)}),
                    WASI_ENOTCAPABLE);
  twasm_wasi_delete(w);
}
END_TEST

/* A socket's calls need its rights too: send the write right, shutdown
 * its own. */
START_TEST(socket_rights) {
  int sv[2];
  ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  twasm_wasi *w = twasm_wasi_new(0, NULL, NULL);
  wasi_call c = call_on(w);
  uint64_t rights = wasi_rights_of_type(WASI_FILETYPE_SOCKET_STREAM);
  uint32_t fd;
  ck_assert(wasi_fd_add(w, sv[0], WASI_FILETYPE_SOCKET_STREAM, rights, rights, &fd));
  memcpy(mem + 128, "ping", 4);
  wasi_put_u32(mem + 16, 128);
  wasi_put_u32(mem + 20, 4);
  twasm_val send[] = {i32(fd), i32(16), i32(1), i32(0), i32(24)};
  ck_assert_uint_eq(wasi_sock_send(&c, send), 0);
  ck_assert_uint_eq(u32_at(24), 4);
  ck_assert_uint_eq(wasi_fd_fdstat_set_rights(&c, (twasm_val[]){i32(fd), i64(rights & ~RIGHT(FD_WRITE)), i64(0)}), 0);
  ck_assert_uint_eq(wasi_sock_send(&c, send), WASI_ENOTCAPABLE);
  ck_assert_uint_eq(wasi_sock_shutdown(&c, (twasm_val[]){i32(fd), i32(3)}), 0);
  ck_assert_uint_eq(wasi_fd_fdstat_set_rights(&c, (twasm_val[]){i32(fd), i64(0), i64(0)}), 0);
  ck_assert_uint_eq(wasi_sock_shutdown(&c, (twasm_val[]){i32(fd), i32(3)}), WASI_ENOTCAPABLE);
  uint32_t dev;
  ck_assert(wasi_fd_add(w, open("/dev/null", O_RDWR), WASI_FILETYPE_CHARACTER_DEVICE, rights, 0, &dev));
  ck_assert_uint_eq(wasi_sock_shutdown(&c, (twasm_val[]){i32(dev), i32(3)}), WASI_ENOTSOCK);
  twasm_wasi_delete(w);
  close(sv[1]);
}
END_TEST

/* ---- an executable's environment (rt_env.c) ------------------------------ */

static bool has_entry(char **env, const char *entry) {
  for (char **e = env; e && *e; e++)
    if (!strcmp(*e, entry)) return true;
  return false;
}

static bool has_name(char **env, const char *name) {
  size_t n = strlen(name);
  for (char **e = env; e && *e; e++)
    if (!strncmp(*e, name, n) && (*e)[n] == '=') return true;
  return false;
}

static size_t count(char **env) {
  size_t n = 0;
  while (env && env[n]) n++;
  return n;
}

static void env_setup(void) {
  setenv("WASI_T_HOST", "host value", 1);
  setenv("TWASM_DIRS", "/tmp::x", 1);
  unsetenv("TWASM_INHERIT_ENV");
}

static void env_teardown(void) {
  unsetenv("WASI_T_HOST");
  unsetenv("TWASM_DIRS");
  unsetenv("TWASM_INHERIT_ENV");
}

/* Nothing from the host unless named; a named variable the host lacks is
 * left out; a baked value, newlines and all, is kept as given. */
START_TEST(env_only_what_was_asked) {
  static const char baked[] = "A=1\0B=new\nline\0WASI_T_HOST\0WASI_T_MISSING\0";
  char **env = rt_guest_environ(baked, false);
  ck_assert_uint_eq(count(env), 3);
  ck_assert(has_entry(env, "A=1"));
  ck_assert(has_entry(env, "B=new\nline"));
  ck_assert(has_entry(env, "WASI_T_HOST=host value"));
  rt_free_environ(env);
  env = rt_guest_environ(NULL, false);
  ck_assert_uint_eq(count(env), 0);
  rt_free_environ(env);
}
END_TEST

/* Inheriting takes the host's variables but the runtime's own; baked
 * values override inherited ones. */
START_TEST(env_inherit_hides_control_variables) {
  static const char baked[] = "WASI_T_HOST=baked\0";
  char **env = rt_guest_environ(baked, true);
  ck_assert(has_entry(env, "WASI_T_HOST=baked"));
  ck_assert(!has_name(env, "TWASM_DIRS"));
  ck_assert(has_name(env, "PATH") == (getenv("PATH") != NULL));
  rt_free_environ(env);
}
END_TEST

START_TEST(env_run_time_override) {
  setenv("TWASM_INHERIT_ENV", "1", 1);
  char **env = rt_guest_environ(NULL, false);
  ck_assert(has_entry(env, "WASI_T_HOST=host value"));
  ck_assert(!has_name(env, "TWASM_INHERIT_ENV"));
  rt_free_environ(env);
  setenv("TWASM_INHERIT_ENV", "0", 1);
  env = rt_guest_environ(NULL, true);
  ck_assert_uint_eq(count(env), 0);
  rt_free_environ(env);
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
  tcase_add_test(paths, directory_opens_read_only);
  tcase_add_test(paths, dropped_rights_stay_dropped);
  tcase_add_test(paths, truncate_and_create_need_rights);
  tcase_add_test(paths, trailing_slashes);
  tcase_add_test(paths, readlink_trailing_slash_stays_inside);
  tcase_add_test(paths, created_modes_follow_umask);
  tcase_add_test(paths, nofollow_errors);
  tcase_add_test(paths, rename_cases);
  tcase_add_test(paths, readdir_dot_and_resume);
  suite_add_tcase(s, paths);
  TCase *calls = tcase_create("calls");
  tcase_add_test(calls, errno_mapping);
  tcase_add_test(calls, args_layout);
  tcase_add_test(calls, environ_layout);
  tcase_add_test(calls, clock_ids);
  tcase_add_test(calls, proc_exit_unwinds);
  tcase_add_test(calls, imports_reject_unknown);
  tcase_add_test(calls, stream_rights);
  tcase_add_test(calls, socket_rights);
  suite_add_tcase(s, calls);
  TCase *env = tcase_create("environment");
  tcase_add_checked_fixture(env, env_setup, env_teardown);
  tcase_add_test(env, env_only_what_was_asked);
  tcase_add_test(env, env_inherit_hides_control_variables);
  tcase_add_test(env, env_run_time_override);
  suite_add_tcase(s, env);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(wasi_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
