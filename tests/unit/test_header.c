/* test_header.c: the C header of `twasmc -c` compiles as C11 and as C++17
 * whatever the export names: C and C++ keywords, the header's own names,
 * macros of the headers it includes, names that sanitise alike, random
 * UTF-8 names. */
#include "cli_util.h"

/* g++, else clang++-19 (NULL when neither is installed). */
static const char *cxx(void) {
  if (system("g++ --version >/dev/null 2>&1") == 0) return "g++";
  if (system("clang++-19 --version >/dev/null 2>&1") == 0) return "clang++-19";
  return NULL;
}

/* A module exporting a function (i32 i64 f32 f64 -> i32) under each name,
 * the first two names as a memory and a global instead; names given as
 * raw bytes (written with \xx escapes). */
static void write_module(const char **names, const unsigned *lens, unsigned n) {
  static char wat[1 << 16];
  size_t at = 0;
  at += (size_t)snprintf(wat + at, sizeof wat - at,
                         "(module\n (func $f (param i32 i64 f32 f64) (result i32) (i32.const 1))\n"
                         " (func $g (result f64 i64) (f64.const 1) (i64.const 2))\n"
                         " (memory 1) (global i32 (i32.const 0))\n");
  for (unsigned i = 0; i < n; i++) {
    at += (size_t)snprintf(wat + at, sizeof wat - at, " (export \"");
    for (unsigned k = 0; k < lens[i]; k++)
      at += (size_t)snprintf(wat + at, sizeof wat - at, "\\%02x", (unsigned char)names[i][k]);
    const char *what = i == 0 ? "memory 0" : i == 1 ? "global 0" : i % 3 ? "func $f" : "func $g";
    at += (size_t)snprintf(wat + at, sizeof wat - at, "\" (%s))\n", what);
  }
  at += (size_t)snprintf(wat + at, sizeof wat - at, ")\n");
  write_file("mod.wat", wat, at);
}

/* -c, then a C and a C++ translation unit including the header, with
 * every warning an error. */
static void header_compiles(void) {
  char cmd[2048], out[8192];
  snprintf(cmd, sizeof cmd, "wat2wasm %s/mod.wat -o %s/mod.wasm", tmpdir, tmpdir);
  ck_assert_msg(run_shell(cmd, out, sizeof out) == 0, "%s", out);
  snprintf(cmd, sizeof cmd, "-c %s/mod.wasm -o %s/mod.o", tmpdir, tmpdir);
  ck_assert_msg(run(cmd, out, sizeof out) == 0, "%s", out);
  static const char use[] =
      "#include \"mod.h\"\nint main(void) {\n  mod_instance m;\n  twasm_trap t;\n"
      "  if (mod_instantiate(&m, 0, &t)) return 1;\n  mod_delete(&m);\n  return 0;\n}\n";
  write_file("use.c", use, sizeof use - 1);
  write_file("use.cc", use, sizeof use - 1);
  snprintf(cmd, sizeof cmd, "cd %s && gcc -std=c11 -Wall -Wextra -Werror -I%s/include -c use.c -o use_c.o",
           tmpdir, getenv("PWD") ? getenv("PWD") : ".");
  ck_assert_msg(run_shell(cmd, out, sizeof out) == 0, "C11: %s", out);
  const char *cc = cxx();
  if (!cc) {
    printf("skipped: no C++ compiler (g++, clang++-19) for the C++17 half\n");
    return;
  }
  snprintf(cmd, sizeof cmd, "cd %s && %s -std=c++17 -Wall -Wextra -Werror -I%s/include -c use.cc -o use_cc.o",
           tmpdir, cc, getenv("PWD") ? getenv("PWD") : ".");
  ck_assert_msg(run_shell(cmd, out, sizeof out) == 0, "C++17: %s", out);
}

static bool have_wat2wasm(void) {
  if (system("wat2wasm --version >/dev/null 2>&1") == 0) return true;
  printf("skipped: wat2wasm not installed\n");
  return false;
}

START_TEST(awkward_names) {
  static const char *names[] = {
      "memory", "instance", "int", "while", "instantiate", "delete", "a-b", "a_b", "a_b_1",
      "", "0x", "NULL", "INT32_MAX", "UINT_FAST16_MAX", "SIZE_MAX", "bool", "true", "class",
      "new", "template", "*/", "/*", "\\", "TWASM_VERSION", "TWASM_H", "MOD_IMPORT_COUNT",
      "MOD_TWASMC_MODULE_H", "IMPORT_COUNT", "int_", "int__1", "\xcf\x80", "\xcf\x81", "self",
      "args", "res", "code", "trap", "e", "p0", "r0", "errno", "assert", "main", "twasm_call",
      "__x", "_Bool", "and", "xor_eq", "co_await", "char8_t",
  };
  unsigned lens[sizeof names / sizeof names[0]];
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) lens[i] = (unsigned)strlen(names[i]);
  if (!have_wat2wasm()) return;
  make_tmpdir();
  write_module(names, lens, sizeof names / sizeof names[0]);
  header_compiles();
}
END_TEST

/* Random names: printable ASCII and two-byte UTF-8, lengths 0..12,
 * different as byte strings (as Wasm requires). */
START_TEST(random_names) {
  if (!have_wat2wasm()) return;
  enum { N = 60 };
  static char store[N][32];
  const char *names[N];
  unsigned lens[N];
  unsigned seed = 0x9e3779b9u * (unsigned)(_i + 1);
  for (unsigned i = 0; i < N; i++) {
    for (;;) {
      seed = seed * 1103515245u + 12345u;
      unsigned len = (seed >> 16) % 13, n = 0;
      for (unsigned k = 0; k < len; k++) {
        seed = seed * 1103515245u + 12345u;
        unsigned r = (seed >> 8) % 100;
        if (r < 80) store[i][n++] = (char)(0x21 + (seed >> 16) % 94);
        else if (r < 90) store[i][n++] = "_-*/\\"[(seed >> 16) % 5];
        else store[i][n++] = (char)0xc3, store[i][n++] = (char)(0x80 + (seed >> 16) % 64);
      }
      bool dup = false;
      for (unsigned k = 0; k < i && !dup; k++) dup = lens[k] == n && !memcmp(store[k], store[i], n);
      if (dup) continue;
      names[i] = store[i], lens[i] = n;
      break;
    }
  }
  make_tmpdir();
  write_module(names, lens, N);
  header_compiles();
}
END_TEST

static Suite *header_suite(void) {
  Suite *s = suite_create("header");
  TCase *tc = tcase_create("header");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, awkward_names);
  tcase_add_loop_test(tc, random_names, 0, 8);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return cli_main(header_suite(), "header"); }
