/* test_features.c: Check suite "features": a module using a proposal
 * twasmc does not implement is refused with "<feature> (<proposal>) is not
 * supported" at the byte where it shows, never a generic "malformed"
 * message: hand-written bytes for each, the same through wat2wasm's
 * --enable-* encodings, and the CLI's FILE:0xOFF: error: line. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#include "decode.h"
#include "validate.h"
#include "unit_sh.h"

#define HDR 0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00
#define BYTES(...) (const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__})
#define TYPE0 0x01, 0x04, 0x01, 0x60, 0x00, 0x00 /* type 0: [] -> [] */
#define FUNC0 0x03, 0x02, 0x01, 0x00             /* one function of type 0 */
/* A code section of one body: no locals, the two instruction bytes, end;
 * the first instruction byte is at offset 23. */
#define BODY2(a, b) 0x0a, 0x06, 0x01, 0x04, 0x00, (a), (b), 0x0b

#define THREADS_SHARED "shared memory (threads) is not supported"
#define THREADS_ATOMICS "atomic memory instructions (threads) is not supported"
#define EXCEPTIONS "exception handling (exception-handling) is not supported"
#define TAIL_CALLS "tail calls (tail-call) is not supported"
#define MEMORY64 "64-bit memories and tables (memory64) is not supported"
#define MULTI_MEMORY "multiple memories (multi-memory) is not supported"
#define GC "garbage collection types and instructions (gc) is not supported"
#define FUNC_REFS "typed function references (function-references) is not supported"

static const struct {
  const char *name;
  const uint8_t *bytes;
  size_t len;
  const char *msg;
  uint32_t offset;
} cases[] = {
  {"shared memory", BYTES(HDR, 0x05, 0x04, 0x01, 0x03, 0x01, 0x01), THREADS_SHARED, 11},
  {"shared memory without maximum", BYTES(HDR, 0x05, 0x03, 0x01, 0x02, 0x01), THREADS_SHARED, 11},
  {"imported shared memory",
   BYTES(HDR, 0x02, 0x09, 0x01, 0x01, 'm', 0x01, 'n', 0x02, 0x03, 0x01, 0x01), THREADS_SHARED, 16},
  {"atomic.fence", BYTES(HDR, TYPE0, FUNC0, BODY2(0xfe, 0x03)), THREADS_ATOMICS, 23},
  {"throw", BYTES(HDR, TYPE0, FUNC0, BODY2(0x08, 0x00)), EXCEPTIONS, 23},
  {"try (legacy)", BYTES(HDR, TYPE0, FUNC0, BODY2(0x06, 0x40)), EXCEPTIONS, 23},
  {"try_table", BYTES(HDR, TYPE0, FUNC0, BODY2(0x1f, 0x40)), EXCEPTIONS, 23},
  {"tag section", BYTES(HDR, 0x0d, 0x03, 0x01, 0x00, 0x00), EXCEPTIONS, 8},
  {"tag import", BYTES(HDR, 0x02, 0x07, 0x01, 0x01, 'm', 0x01, 't', 0x04, 0x00), EXCEPTIONS, 15},
  {"exnref parameter", BYTES(HDR, 0x01, 0x05, 0x01, 0x60, 0x01, 0x69, 0x00), EXCEPTIONS, 13},
  {"return_call", BYTES(HDR, TYPE0, FUNC0, BODY2(0x12, 0x00)), TAIL_CALLS, 23},
  {"return_call_indirect", BYTES(HDR, TYPE0, FUNC0, BODY2(0x13, 0x00)), TAIL_CALLS, 23},
  {"64-bit memory", BYTES(HDR, 0x05, 0x03, 0x01, 0x04, 0x01), MEMORY64, 11},
  {"64-bit shared memory", BYTES(HDR, 0x05, 0x04, 0x01, 0x07, 0x01, 0x02), MEMORY64, 11},
  {"64-bit table", BYTES(HDR, 0x04, 0x04, 0x01, 0x70, 0x04, 0x01), MEMORY64, 12},
  {"two memories", BYTES(HDR, 0x05, 0x05, 0x02, 0x00, 0x01, 0x00, 0x01), MULTI_MEMORY, 13},
  {"two imported memories",
   BYTES(HDR, 0x02, 0x0f, 0x02, 0x01, 'm', 0x01, 'a', 0x02, 0x00, 0x01, 0x01, 'm', 0x01, 'b', 0x02,
         0x00, 0x01), MULTI_MEMORY, 22},
  {"imported and defined memory",
   BYTES(HDR, 0x02, 0x08, 0x01, 0x01, 'm', 0x01, 'a', 0x02, 0x00, 0x01, 0x05, 0x03, 0x01, 0x00, 0x01),
   MULTI_MEMORY, 21},
  {"struct type", BYTES(HDR, 0x01, 0x03, 0x01, 0x5f, 0x00), GC, 11},
  {"rec group", BYTES(HDR, 0x01, 0x03, 0x01, 0x4e, 0x00), GC, 11},
  {"anyref parameter", BYTES(HDR, 0x01, 0x05, 0x01, 0x60, 0x01, 0x6e, 0x00), GC, 13},
  {"i31ref table", BYTES(HDR, 0x04, 0x04, 0x01, 0x6c, 0x00, 0x01), GC, 11},
  {"0xFB prefix", BYTES(HDR, TYPE0, FUNC0, BODY2(0xfb, 0x1c)), GC, 23},
  {"ref.eq", BYTES(HDR, TYPE0, FUNC0, BODY2(0xd3, 0x1a)), GC, 23},
  {"(ref null 0) result", BYTES(HDR, 0x01, 0x06, 0x01, 0x60, 0x00, 0x01, 0x63, 0x00), FUNC_REFS, 14},
  {"(ref 0) local",
   BYTES(HDR, TYPE0, FUNC0, 0x0a, 0x07, 0x01, 0x05, 0x01, 0x01, 0x64, 0x00, 0x0b), FUNC_REFS, 24},
  {"(ref null func) block type", BYTES(HDR, TYPE0, FUNC0, BODY2(0x02, 0x63)), FUNC_REFS, 24},
  {"call_ref", BYTES(HDR, TYPE0, FUNC0, BODY2(0x14, 0x00)), FUNC_REFS, 23},
  {"br_on_null", BYTES(HDR, TYPE0, FUNC0, BODY2(0xd5, 0x00)), FUNC_REFS, 23},
  {"table with an initialiser", BYTES(HDR, 0x04, 0x07, 0x01, 0x40, 0x00, 0x70, 0x00, 0x01, 0x0b),
   FUNC_REFS, 11},
};

START_TEST(named_error) {
  tw_arena arena = {0};
  wasm_module m;
  tw_diag d = {0};
  bool ok = dec_module(&arena, cases[_i].bytes, cases[_i].len, "f.wasm", &m, &d) && val_module(&m, &d);
  tw_arena_free(&arena);
  ck_assert_msg(!ok, "%s: accepted", cases[_i].name);
  ck_assert_msg(strcmp(d.msg, cases[_i].msg) == 0, "%s: got \"%s\"", cases[_i].name, d.msg);
  ck_assert_msg(d.offset == cases[_i].offset, "%s: at 0x%x, want 0x%x", cases[_i].name, d.offset,
                cases[_i].offset);
}
END_TEST

/* ---- through wat2wasm and the command line ---------------------------------- */

static const struct {
  const char *flag, *wat, *msg;
} wat_cases[] = {
  {"--enable-threads", "(module (memory 1 1 shared))", THREADS_SHARED},
  {"--enable-threads", "(module (func (atomic.fence)))", THREADS_ATOMICS},
  {"--enable-exceptions", "(module (tag $e) (func (throw $e)))", EXCEPTIONS},
  {"--enable-tail-call", "(module (func $f) (func (return_call $f)))", TAIL_CALLS},
  {"--enable-memory64", "(module (memory i64 1))", MEMORY64},
  {"--enable-multi-memory", "(module (memory 1) (memory 1))", MULTI_MEMORY},
  /* wabt 1.0.32 writes typed reference types in an older encoding (0x6b,
   * the final GC one's structref), but call_ref as the final 0x14 */
  {"--no-check --enable-function-references", "(module (func (param funcref) (call_ref (local.get 0))))",
   FUNC_REFS},
  /* Wasm 3.0's extended constant expressions: refused as Wasm 2.0 does
   * (its elem.wast asserts this message), documented in README and man */
  {"--enable-extended-const", "(module (global i32 (i32.add (i32.const 1) (i32.const 2))))",
   "constant expression required"},
};

/* twasmc on the binary wat2wasm made: status 1 and FILE:0xOFF: error: MSG. */
START_TEST(cli_names_feature) {
  if (system("wat2wasm --version >/dev/null 2>&1") != 0) {
    printf("features: cli_names_feature skipped: wat2wasm is not installed\n");
    return;
  }
  char twasmc[4096];
  ck_assert_ptr_nonnull(realpath(getenv("TWASMC") ? getenv("TWASMC") : "build/bin/twasmc", twasmc));
  char dir[] = "/tmp/twasm-featXXXXXX", cmd[8192], out[2048], want[512];
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(cmd, sizeof cmd, "echo '%s' > %s/m.wat && wat2wasm %s %s/m.wat -o %s/m.wasm 2>&1",
           wat_cases[_i].wat, dir, wat_cases[_i].flag, dir, dir);
  int made = unit_sh(cmd, out, sizeof out);
  ck_assert_msg(made == 0, "wat2wasm %s: %s", wat_cases[_i].flag, out);
  snprintf(cmd, sizeof cmd, "cd %s && %s m.wasm -o m 2>&1; echo \"status $?\"; ls", dir, twasmc);
  unit_sh(cmd, out, sizeof out);
  snprintf(want, sizeof want, ": error: %s\nstatus 1\nm.wasm\nm.wat\n", wat_cases[_i].msg);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
  ck_assert_msg(strncmp(out, "m.wasm:0x", 9) == 0, "%s: %s", wat_cases[_i].flag, out);
  ck_assert_msg(strstr(out, want) != NULL, "%s: want \"%s\" in \"%s\"", wat_cases[_i].flag, want, out);
}
END_TEST

int main(void) {
  Suite *s = suite_create("features");
  TCase *t = tcase_create("bytes");
  tcase_add_loop_test(t, named_error, 0, sizeof cases / sizeof cases[0]);
  suite_add_tcase(s, t);
  t = tcase_create("cli");
  tcase_set_timeout(t, 60);
  tcase_add_loop_test(t, cli_names_feature, 0, sizeof wat_cases / sizeof wat_cases[0]);
  suite_add_tcase(s, t);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
