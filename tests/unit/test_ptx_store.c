/* test_ptx_store.c: Check suite "ptx_store": a module's PTX store
 * (compiler/off/off_store.c) round-trips.  The texts ptx_generate made for
 * three kernels go through off_store_add/off_store_finish into an x86-64
 * object; `--extract-ptx` (off_extract) gives back exactly those bytes,
 * and in the loaded object rt_ptx_inflate fills the kernel texts' buffer
 * with them (zeroes until then).  A section damaged in the frame, its
 * header or its length is reported and nothing is written. */
#include <check.h>
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include "driver.h"
#include "off.h"
#include "off_internal.h"
#include "rt_offload.h"

#define NONE .a = -1, .b = -1, .c = -1
#define P(i) {true, i}
#define C(v) {false, v}
#define ARRAY(b, size) {.iv_coeff = {size}, .nparam_terms = 1, .param_index = {b}, \
                        .param_coeff = {1}, .align = size}
#define ROW_MAJOR(base, ld) {base, ld, C(1)}

/* y[i] = x[i] * a + y[i]; p0 n, p1 a, p2 &x, p3 &y. */
static const kn_expr saxpy_nodes[] = {
  {.op = KN_E_PARAM, .type = KN_F32, NONE, .param = 1},
  {.op = KN_E_LOAD, .type = KN_F32, NONE, .load = {.mem = KN_F32, .addr = ARRAY(2, 4)}},
  {.op = KN_E_MUL, .type = KN_F32, .a = 0, .b = 1, .c = -1},
  {.op = KN_E_LOAD, .type = KN_F32, NONE, .load = {.mem = KN_F32, .addr = ARRAY(3, 4)}},
  {.op = KN_E_ADD, .type = KN_F32, .a = 2, .b = 3, .c = -1},
};

static const struct {
  const char *name;
  kn_desc desc;
} kernels[] = {
  {"saxpy", {.kind = KN_MAP, .nparams = 4, .nodes = saxpy_nodes, .nnodes = 5,
             .map = {.ndims = 1, .trip = {P(0)}, .out_type = KN_F32, .out_addr = ARRAY(3, 4), .value = 4}}},
  {"mm_f32", {.kind = KN_MATMUL, .nparams = 6,
              .matmul = {.m = P(0), .n = P(1), .k = P(2), .type = KN_MM_F32, .a = ROW_MAJOR(P(3), P(2)),
                         .b = ROW_MAJOR(P(4), P(1)), .c = ROW_MAJOR(P(5), P(1)), .align = 4}}},
  {"mm_i32", {.kind = KN_MATMUL, .nparams = 3,
              .matmul = {.m = C(64), .n = C(64), .k = C(64), .type = KN_MM_I32, .a = ROW_MAJOR(P(0), C(64)),
                         .b = ROW_MAJOR(P(1), C(64)), .c = ROW_MAJOR(P(2), C(64)), .align = 4}}},
};
enum { NKERNELS = sizeof kernels / sizeof kernels[0] };

static char tmpdir[64];
static tw_arena arena;
static ptx_out outs[NKERNELS];
static size_t plain_bytes; /* all texts together */

static void setup(void) {
  strcpy(tmpdir, "/tmp/twasm-storeXXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
  memset(&arena, 0, sizeof arena);
  plain_bytes = 0;
  for (int i = 0; i < NKERNELS; i++) {
    tw_diag d = {.offset = TW_DIAG_NO_OFFSET};
    ck_assert_msg(ptx_generate(&kernels[i].desc, kernels[i].name, NULL, 0, &arena, &outs[i], &d), "%s: %s",
                  kernels[i].name, d.msg);
    ck_assert_uint_ge(outs[i].ncodes, 3);
    for (unsigned c = 0; c < outs[i].ncodes; c++) plain_bytes += strlen(outs[i].codes[c].text);
  }
}

static void teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
  ck_assert_int_eq(system(cmd), 0);
  tw_arena_free(&arena);
}

/* The store of every kernel in a module, and an exported array
 * {&store, text of kernel 0 code 0, ...} for the loaded object; written
 * as an x86-64 object to tmpdir/store.o.  Returns the section's size. */
static unsigned long long build_object(void) {
  LLVMInitializeX86TargetInfo();
  LLVMInitializeX86Target();
  LLVMInitializeX86TargetMC();
  LLVMInitializeX86AsmPrinter();
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("store", ctx);
  char *triple = LLVMGetDefaultTargetTriple();
  LLVMTargetRef target;
  char *err = NULL;
  ck_assert_msg(!LLVMGetTargetFromTriple(triple, &target, &err), "%s", err);
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, triple, "x86-64", "", LLVMCodeGenLevelNone,
                                                    LLVMRelocPIC, LLVMCodeModelDefault);
  LLVMSetTarget(mod, triple);
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
  char *layout = LLVMCopyStringRepOfTargetData(td);
  LLVMSetDataLayout(mod, layout);
  off_store s = {.mod = mod};
  LLVMValueRef ptrs[1 + NKERNELS * OFF_MAX_ARCHS];
  unsigned n = 1;
  for (int i = 0; i < NKERNELS; i++) {
    off_store_add(&s, &outs[i], ptrs + n);
    n += outs[i].ncodes;
  }
  ptrs[0] = s.store;
  tw_diag d = {.offset = TW_DIAG_NO_OFFSET};
  LLVMValueRef section = off_store_finish(&s, &d);
  ck_assert_msg(section != NULL, "%s", d.msg);
  free(s.buf);
  unsigned long long size = LLVMABISizeOfType(td, LLVMGlobalGetValueType(section));
  LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0);
  LLVMValueRef table = LLVMAddGlobal(mod, LLVMArrayType2(ptr, n), "store_test_ptrs");
  LLVMSetInitializer(table, LLVMConstArray2(ptr, ptrs, n));
  LLVMSetGlobalConstant(table, true);
  char path[128];
  snprintf(path, sizeof path, "%s/store.o", tmpdir);
  ck_assert_msg(!LLVMTargetMachineEmitToFile(tm, mod, path, LLVMObjectFile, &err), "%s", err);
  LLVMDisposeMessage(layout);
  LLVMDisposeTargetData(td);
  LLVMDisposeTargetMachine(tm);
  LLVMDisposeMessage(triple);
  LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  return size;
}

/* The file's bytes (malloc'd, NUL after them). */
static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "missing %s", path);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)size + 1);
  ck_assert(fread(buf, 1, (size_t)size, f) == (size_t)size);
  buf[size] = 0;
  fclose(f);
  *n = (size_t)size;
  return buf;
}

static void spill(const char *path, const char *data, size_t n) {
  FILE *f = fopen(path, "wb");
  ck_assert(f && fwrite(data, 1, n, f) == n);
  fclose(f);
}

static unsigned files_in(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  unsigned n = 0;
  for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

/* Extracted, each file is byte for byte what the generator made. */
START_TEST(extract_gives_the_generated_text) {
  unsigned long long section = build_object();
  ck_assert_msg(section * 8 < plain_bytes, ".twasm_ptx: %llu bytes for %zu of PTX", section, plain_bytes);
  char obj[128], dir[128], path[512];
  snprintf(obj, sizeof obj, "%s/store.o", tmpdir);
  snprintf(dir, sizeof dir, "%s/ptx", tmpdir);
  unsigned count = 0, want = 0;
  tw_diag d = {.offset = TW_DIAG_NO_OFFSET};
  ck_assert_msg(off_extract(obj, dir, &count, &d), "%s", d.msg);
  for (int i = 0; i < NKERNELS; i++)
    for (unsigned c = 0; c < outs[i].ncodes; c++, want++) {
      const ptx_code *code = &outs[i].codes[c];
      snprintf(path, sizeof path, "%s/%s.sm_%u%s.ptx", dir, outs[i].name, code->sm, code->specific ? "a" : "");
      size_t n;
      char *got = slurp(path, &n);
      ck_assert_msg(n == strlen(code->text) && !memcmp(got, code->text, n), "%s differs from the generator's", path);
      free(got);
    }
  ck_assert_uint_eq(count, want);
  ck_assert_uint_eq(files_in(dir), want);
}
END_TEST

/* Loaded, the texts are zeroes until the store is inflated, then the
 * generator's; inflating again changes nothing. */
START_TEST(runtime_inflates_the_generated_text) {
  build_object();
  char obj[128], so[128];
  snprintf(obj, sizeof obj, "%s/store.o", tmpdir);
  snprintf(so, sizeof so, "%s/store.so", tmpdir);
  tw_diag d = {.offset = TW_DIAG_NO_OFFSET};
  ck_assert_msg(drv_link_shared(obj, so, &d), "%s", d.msg);
  void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  ck_assert_msg(h != NULL, "%s", dlerror());
  void *const *ptrs = dlsym(h, "store_test_ptrs");
  ck_assert_ptr_nonnull(ptrs);
  twasm_ptx_store_abi *s = ptrs[0];
  ck_assert_uint_eq(s->state, 0);
  unsigned at = 1;
  for (int i = 0; i < NKERNELS; i++)
    for (unsigned c = 0; c < outs[i].ncodes; c++) ck_assert(((const char *)ptrs[at++])[0] == 0);
  char why[256] = "";
  for (int twice = 0; twice < 2; twice++) {
    ck_assert_msg(rt_ptx_inflate(s, why, sizeof why), "%s", why);
    ck_assert_uint_eq(s->state, 1);
    at = 1;
    for (int i = 0; i < NKERNELS; i++)
      for (unsigned c = 0; c < outs[i].ncodes; c++)
        ck_assert_msg(!strcmp(ptrs[at++], outs[i].codes[c].text), "%s code %u differs", outs[i].name, c);
  }
  dlclose(h);
}
END_TEST

/* A header line "twasm-ptz SIZE ZSIZE" rewritten, keeping its length:
 * fmt of SIZE / div + add and ZSIZE + zadd. */
typedef struct {
  const char *fmt;
  long div, add, zadd;
} header_patch;

/* The object with its store damaged, then extracted: false, `says` in
 * the message, no file, no folder.  With no patch, a byte of the frame
 * flipped (from its end when flip is negative). */
static void damaged(long flip, const header_patch *patch, const char *says) {
  build_object();
  char obj[128], dir[128];
  snprintf(obj, sizeof obj, "%s/store.o", tmpdir);
  size_t n;
  char *bytes = slurp(obj, &n);
  char *head = memmem(bytes, n, "twasm-ptz ", 10);
  ck_assert_ptr_nonnull(head);
  long raw, packed;
  ck_assert(sscanf(head, "twasm-ptz %ld %ld", &raw, &packed) == 2);
  char *frame = strchr(head, '\n') + 1;
  if (patch) {
    char line[64];
    int len = snprintf(line, sizeof line, patch->fmt, raw / patch->div + patch->add, packed + patch->zadd);
    ck_assert_int_eq(len, frame - head);
    memcpy(head, line, (size_t)len);
  } else {
    frame[flip < 0 ? packed + flip : flip] ^= 0x21;
  }
  spill(obj, bytes, n);
  free(bytes);
  snprintf(dir, sizeof dir, "%s/out", tmpdir);
  unsigned count = 0;
  tw_diag d = {.offset = TW_DIAG_NO_OFFSET};
  ck_assert(!off_extract(obj, dir, &count, &d));
  ck_assert_msg(strstr(d.msg, "corrupt .twasm_ptx section") && strstr(d.msg, says), "%s", d.msg);
  ck_assert_uint_eq(count, 0);
  ck_assert_msg(access(dir, F_OK) != 0, "%s made for a damaged section", dir);
}

START_TEST(damaged_frame_is_reported) { damaged(40, NULL, "does not inflate"); }
END_TEST
/* the frame's last bytes: its checksum */
START_TEST(damaged_checksum_is_reported) { damaged(-2, NULL, "does not inflate"); }
END_TEST
START_TEST(wrong_size_is_reported) {
  damaged(0, &(header_patch){"twasm-ptz %ld %ld\n", 1, -1, 0}, "does not inflate");
}
END_TEST
START_TEST(damaged_header_is_reported) {
  damaged(0, &(header_patch){"twasm-ptz x%ld %ld\n", 10, 0, 0}, "malformed PTX store");
}
END_TEST
START_TEST(negative_size_is_reported) {
  damaged(0, &(header_patch){"twasm-ptz -%ld %ld\n", 10, 0, 0}, "malformed PTX store");
}
END_TEST
/* ZSIZE one past the section's end */
START_TEST(overlong_frame_is_reported) {
  damaged(0, &(header_patch){"twasm-ptz %ld %ld\n", 1, 0, 1}, "malformed PTX store");
}
END_TEST

/* kernels[which] generated as NAME, as the runtime sees it: its texts
 * in a kernel ABI's PTX array (ptx: at least 8 slots). */
static twasm_kernel_abi as_kernel(int which, const char *name, twasm_kernel_ptx_abi *ptx) {
  ptx_out out;
  tw_diag d = {.offset = TW_DIAG_NO_OFFSET};
  ck_assert_msg(ptx_generate(&kernels[which].desc, name, NULL, 0, &arena, &out, &d), "%s: %s", name, d.msg);
  ck_assert_uint_le(out.ncodes, 8);
  for (unsigned c = 0; c < out.ncodes; c++)
    ptx[c] = (twasm_kernel_ptx_abi){out.codes[c].sm, out.codes[c].ptx_isa, out.codes[c].text, 0, 0};
  return (twasm_kernel_abi){.name = name, .nptx = out.ncodes, .ptx = ptx};
}

/* The runtime compiles one of two kernels that differ only in their names
 * (one nest inlined into several callers): rt_ptx_twins says so, for
 * names of different lengths too, and for nothing else: another kernel,
 * the same one with one byte changed, or with an arch fewer. */
START_TEST(twins_differ_only_in_their_names) {
  twasm_kernel_ptx_abi pa[8], pb[8], pc[8], pd[8];
  twasm_kernel_abi a = as_kernel(0, "f1_nest0", pa), b = as_kernel(0, "f123_nest45", pb);
  twasm_kernel_abi mm = as_kernel(1, "f1_nest1", pc);
  ck_assert(strstr(pa[0].text, "f1_nest0") && !strstr(pa[0].text, "f123_nest45"));
  ck_assert(rt_ptx_twins(&a, &b));
  ck_assert(rt_ptx_twins(&b, &a));
  ck_assert(!rt_ptx_twins(&a, &mm));
  /* one byte of the last text changed: a register number in the body */
  twasm_kernel_abi d = as_kernel(0, "f2_nest0", pd);
  char *copy = strdup(pd[d.nptx - 1].text);
  char *reg = strstr(copy, "%r1");
  ck_assert_ptr_nonnull(reg);
  reg[2] = '9';
  pd[d.nptx - 1].text = copy;
  ck_assert(!rt_ptx_twins(&a, &d));
  pd[d.nptx - 1].text = pb[d.nptx - 1].text;
  d.nptx--;
  ck_assert(!rt_ptx_twins(&a, &d));
  free(copy);
}
END_TEST

static Suite *store_suite(void) {
  Suite *s = suite_create("ptx_store");
  TCase *tc = tcase_create("store");
  tcase_set_timeout(tc, 60);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, extract_gives_the_generated_text);
  tcase_add_test(tc, runtime_inflates_the_generated_text);
  tcase_add_test(tc, damaged_frame_is_reported);
  tcase_add_test(tc, damaged_checksum_is_reported);
  tcase_add_test(tc, wrong_size_is_reported);
  tcase_add_test(tc, damaged_header_is_reported);
  tcase_add_test(tc, negative_size_is_reported);
  tcase_add_test(tc, overlong_frame_is_reported);
  tcase_add_test(tc, twins_differ_only_in_their_names);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(store_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
