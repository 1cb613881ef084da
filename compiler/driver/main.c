/* main.c: the twasmc command line: options, messages, exit statuses. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <llvm-c/Core.h>

#include "cli_progress.h"
#include "cli_report.h"
#include "driver.h"
#include "drv_output.h"
#include "header.h"
#include "twasm_abi.h"

enum { EXIT_BAD_INPUT = 1, EXIT_USAGE = 2 };

static const char usage_text[] =
    "usage: twasmc [options] INPUT.wasm|INPUT.wat|- [-o OUTPUT|-]\n"
    "\n"
    "Compiles a WebAssembly module ahead of time, through LLVM, to a native\n"
    "executable (default) or object file.  INPUT - reads the module (binary\n"
    "or text) from standard input, and then needs -o.\n"
    "\n"
    "Supported: Wasm 2.0 (MVP, mutable globals, sign extension, saturating\n"
    "float-to-int, multi-value, bulk memory, reference types, fixed-width SIMD)\n"
    "and relaxed SIMD (one fixed result per instruction, see man twasmc).\n"
    "Not supported (refused with a named error): threads, exception handling,\n"
    "tail calls, memory64, multi-memory, GC, typed function references.\n"
    "Extended constant expressions (Wasm 3.0) get Wasm 2.0's \"constant\n"
    "expression required\".\n"
    "\n"
    "options:\n"
    "  -o FILE                 output file (default: INPUT without .wasm, or .o with -c);\n"
    "                          a regular file, never the input; - is standard output\n"
    "                          (with -c, -S or --emit-llvm; -c then writes no header)\n"
    "  -c                      write an object file and a C header (link with libtwasm-rt)\n"
    "  -O0, -O1, -O2, -O3      optimisation level (default -O2)\n"
    "  -S                      write native assembly text instead\n"
    "  --emit-llvm             write the optimised LLVM IR as text instead\n"
    "  --cpu=NAME              generate code for CPU NAME (an LLVM x86-64 name such\n"
    "                          as x86-64-v3, skylake, znver4) or native (this\n"
    "                          machine); the output may then not run on older\n"
    "                          CPUs (default: x86-64, runs on any)\n"
    "  --bounds-checks=MODE    guard (default): every access is checked, a loop\n"
    "                          nest's checks once before it where they are\n"
    "                          affine, guard pages behind; explicit: every\n"
    "                          access is compared against the memory size\n"
    "  --offload-report[=all]  print, for every loop nest, whether it became a GPU\n"
    "                          kernel (and for which archs) or why not; the nests\n"
    "                          of C-library functions (malloc, printf, memset...),\n"
    "                          and where functions have no names the refused nests\n"
    "                          of large ones, as summary lines unless =all\n"
    "  --no-offload            do not look for tensor loops (no PTX embedded)\n"
    "  --gpu-arch=LIST         archs to generate PTX for (default sm_75,sm_80,sm_90;\n"
    "                          up to 7 of sm_50 ... sm_90, the archs of LLVM 19's NVPTX)\n"
    "  --fp-reassociate        allow float reductions on the GPU (changes results)\n"
    "  --tensor-cores=MODE     exact (default): int8 matmuls on tensor cores\n"
    "                          (wmma on sm_80+; wgmma on sm_90a, for products\n"
    "                          of at least 128x256 packed into device scratch,\n"
    "                          when sm_90 is asked for), bit-identical; f32\n"
    "                          exact; tf32: also f32 matmuls on tf32 tensor\n"
    "                          cores (changes results)\n"
    "  --extract-ptx APP       write the PTX embedded in APP to the folder given\n"
    "                          with -o (default .)\n"
    "  --dump-after=PASS       write the LLVM IR after the pipeline's pass PASS\n"
    "                          (or after each one: all) to standard error;\n"
    "                          --dump-after=list lists the passes\n"
    "  --skip-pass=PASS        run the pipeline without PASS (calls, waits,\n"
    "                          inline, reroll, addresses, bounds, vunroll,\n"
    "                          lanes, masks, guard, sinkaddr or remat), to\n"
    "                          measure what it does;\n"
    "                          without bounds, guard mode traps only where the\n"
    "                          guard pages catch an access (not exact)\n"
    "  --dir HOST[::GUEST]     preopen directory HOST for the program, seen as\n"
    "                          GUEST (default HOST); repeatable; TWASM_DIRS\n"
    "                          replaces the list at run time\n"
    "  --env NAME[=VALUE]      give the program the variable NAME: VALUE, or\n"
    "                          without one the host's NAME when it runs;\n"
    "                          repeatable; no other host variable reaches it\n"
    "  --inherit-env           give the program the whole host environment\n"
    "                          (but TWASM_* variables); TWASM_INHERIT_ENV=1 or\n"
    "                          0 at run time turns this on or off\n"
    "  -j N, --jobs=N          generate the code of a large module on N threads\n"
    "                          (default: the number of online CPUs); the output\n"
    "                          is the same for every N\n"
    "  -v, --verbose           print each phase of the compile (decode, validate,\n"
    "                          lower, every pass, PTX per arch, codegen, link)\n"
    "                          with its time, and the link command\n"
    "  --help                  show this help and exit\n"
    "  --version               show the version and exit\n"
    "\n"
    "exit status: 0 success, 1 bad input (malformed or invalid module, I/O),\n"
    "2 bad usage.\n";

/* What --version lists: the WebAssembly features twasmc compiles. */
static const char features_text[] =
    "WebAssembly 2.0: multi-value, reference types, bulk memory, sign\n"
    "extension, non-trapping float-to-int, mutable globals, multiple tables,\n"
    "fixed-width SIMD (v128); relaxed SIMD (Wasm 3.0); not supported: threads,\n"
    "exception handling, tail calls, memory64, multi-memory, GC, typed\n"
    "function references; executables get WASI preview 1 (wasi_snapshot_preview1)\n"
    "GPU offload: PTX for sm_50 to sm_90 (and sm_90a) through LLVM's NVPTX\n";

typedef struct {
  const char *input, *output;
  bool object, emit_llvm, emit_asm, offload_report, offload_report_all, verbose;
  const char *extract;
  drv_options drv;
  char *dirs; /* "HOST::GUEST\n..." */
  char *env;  /* "NAME[=VALUE]\0...", then "\0" (twasm_main) */
  size_t env_len;
  bool text_input; /* the module was text, converted by wat2wasm */
  char prefix[128], desc_symbol[160];
} cli;

/* What this build is: the LLVM it was built with and the WebAssembly it
 * compiles. */
static void print_version(void) {
  unsigned major, minor, patch;
  LLVMGetVersion(&major, &minor, &patch);
  printf("twasmc %s (LLVM %u.%u.%u)\n%s", TWASM_VERSION, major, minor, patch, features_text);
}

static int usage_error(const char *fmt, const char *arg) {
  fputs("twasmc: error: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\n(see twasmc --help)\n", stderr);
  return EXIT_USAGE;
}

static void add_dir(cli *c, const char *spec) {
  size_t old = c->dirs ? strlen(c->dirs) : 0, add = strlen(spec);
  c->dirs = realloc(c->dirs, old + add + 2);
  memcpy(c->dirs + old, spec, add);
  c->dirs[old + add] = '\n';
  c->dirs[old + add + 1] = 0;
}

/* One --env entry, NUL-ended, before the list's final empty entry. */
static void add_env(cli *c, const char *spec) {
  size_t add = strlen(spec) + 1;
  c->env = realloc(c->env, c->env_len + add + 1);
  memcpy(c->env + c->env_len, spec, add);
  c->env_len += add;
  c->env[c->env_len] = 0;
}

/* --dump-after=list: the pipeline, one pass a line. */
static int list_passes(void) {
  const char *what;
  for (unsigned i = 0; drv_pass_name(i, &what); i++) printf("%-10s %s\n", drv_pass_name(i, NULL), what);
  return 0;
}

static bool parse_jobs(const char *text, unsigned *jobs) {
  char *end;
  if (!text || *text < '0' || *text > '9') return false;
  unsigned long n = strtoul(text, &end, 10);
  if (*end || n < 1 || n > 1024) return false;
  *jobs = (unsigned)n;
  return true;
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(cli *c, int argc, char **argv) {
  drv_options_default(&c->drv);
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  c->drv.jobs = cpus > 0 ? (unsigned)cpus : 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(usage_text, stdout);
      return 0;
    } else if (!strcmp(a, "--version")) {
      print_version();
      return 0;
    } else if (!strcmp(a, "-o")) {
      if (++i == argc) return usage_error("%s needs a file name", a);
      c->output = argv[i];
    } else if (!strcmp(a, "-c")) {
      c->object = true;
    } else if (!strcmp(a, "-j") || !strncmp(a, "--jobs=", 7) || (a[1] == 'j' && a[0] == '-')) {
      const char *n = !strcmp(a, "-j") ? (++i < argc ? argv[i] : NULL) : a[1] == 'j' ? a + 2 : a + 7;
      if (!parse_jobs(n, &c->drv.jobs)) return usage_error("-j/--jobs needs a number of threads from 1 to 1024, not '%s'", n ? n : "");
    } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
      c->verbose = true;
    } else if (a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && !a[3]) {
      c->drv.opt_level = a[2] - '0';
    } else if (!strcmp(a, "--emit-llvm")) {
      c->emit_llvm = true;
    } else if (!strcmp(a, "-S")) {
      c->emit_asm = c->drv.emit_asm = true;
    } else if (!strncmp(a, "--bounds-checks=", 16)) {
      if (!strcmp(a + 16, "guard")) c->drv.bounds_mode = TWASM_BOUNDS_GUARD;
      else if (!strcmp(a + 16, "explicit")) c->drv.bounds_mode = TWASM_BOUNDS_EXPLICIT;
      else return usage_error("unknown bounds-check mode '%s' (guard or explicit)", a + 16);
    } else if (!strncmp(a, "--cpu=", 6)) {
      if (!drv_cpu_known(a + 6)) return usage_error("unknown CPU '%s' (see llc-19 -march=x86-64 -mcpu=help)", a + 6);
      c->drv.cpu = a + 6;
    } else if (!strcmp(a, "--offload-report") || !strcmp(a, "--offload-report=all")) {
      c->offload_report = true;
      c->offload_report_all = a[16] == '=';
    } else if (!strcmp(a, "--no-offload")) {
      c->drv.offload.enabled = false;
    } else if (!strcmp(a, "--fp-reassociate")) {
      c->drv.offload.fp_reassociate = true;
    } else if (!strncmp(a, "--gpu-arch=", 11)) {
      if (!off_parse_archs(&c->drv.offload, a + 11)) {
        char msg[512];
        snprintf(msg, sizeof msg, "bad --gpu-arch list '%.200s': up to %d of %s", a + 11,
                 OFF_MAX_ARCHS - 1, off_supported_archs());
        return usage_error("%s", msg);
      }
    } else if (!strncmp(a, "--tensor-cores=", 15)) {
      if (!strcmp(a + 15, "tf32")) c->drv.offload.tf32 = true;
      else if (!strcmp(a + 15, "exact")) c->drv.offload.tf32 = false;
      else return usage_error("unknown tensor-core mode '%s' (exact or tf32)", a + 15);
    } else if (!strncmp(a, "--skip-pass=", 12)) {
      if (!drv_pass_skippable(a + 12))
        return usage_error("pass '%s' cannot be skipped (calls, reroll, addresses, bounds, vunroll, lanes, masks, guard, sinkaddr or remat)", a + 12);
      c->drv.skip_pass = a + 12;
    } else if (!strncmp(a, "--dump-after=", 13)) {
      if (!strcmp(a + 13, "list")) return list_passes();
      if (!drv_pass_known(a + 13))
        return usage_error("unknown pass '%s' (--dump-after=list lists them)", a + 13);
      c->drv.dump_after = a + 13;
    } else if (!strcmp(a, "--extract-ptx")) {
      if (++i == argc) return usage_error("%s needs an executable or object", a);
      c->extract = argv[i];
    } else if (!strcmp(a, "--dir") || !strncmp(a, "--dir=", 6)) {
      const char *spec = a[5] == '=' ? a + 6 : (++i < argc ? argv[i] : NULL);
      if (!spec || !*spec) return usage_error("%s needs HOST[::GUEST]", "--dir");
      add_dir(c, spec);
    } else if (!strcmp(a, "--env") || !strncmp(a, "--env=", 6)) {
      const char *spec = a[5] == '=' ? a + 6 : (++i < argc ? argv[i] : NULL);
      if (!spec || !*spec || *spec == '=') return usage_error("%s needs NAME or NAME=VALUE", "--env");
      add_env(c, spec);
    } else if (!strcmp(a, "--inherit-env")) {
      c->drv.inherit_env = true;
    } else if (a[0] == '-' && a[1]) {
      return usage_error("unknown option '%s'", a);
    } else if (c->input) {
      return usage_error("more than one input file ('%s')", a);
    } else {
      c->input = a;
    }
  }
  if (c->extract && c->input) return usage_error("--extract-ptx takes no other input ('%s')", c->input);
  if (c->extract) return -1;
  if (!c->input) return usage_error("%s", "no input file");
  if (!strcmp(c->input, "-") && !c->output)
    return usage_error("%s", "reading the module from standard input (-) needs -o FILE (or -o -)");
  c->drv.emit_main = !c->object && !c->emit_llvm && !c->emit_asm;
  if (c->drv.emit_main && c->output && drv_is_stdout(c->output))
    return usage_error("%s", "an executable cannot go to standard output (-o -): name a file, "
                             "or use -c, -S or --emit-llvm");
  c->drv.baked_dirs = c->dirs;
  c->drv.baked_env = c->env;
  c->drv.baked_env_len = c->env ? c->env_len + 1 : 0;
  return -1;
}

/* Errors with an offset name the bytes it points into: for text input
 * those are wat2wasm's binary, not the .wat file. */
/* The offload report on standard error; the C library's nests folded
 * into one line unless --offload-report=all. */
static void print_report(const cli *c, const char *report) {
  char *folded = c->offload_report_all ? NULL : cli_report_fold(report);
  fputs(folded ? folded : report, stderr);
  free(folded);
}

static void report_error(const cli *c, const tw_diag *d) {
  const char *file = !strcmp(c->input, "-") ? "<stdin>" : c->input;
  if (d->offset == TW_DIAG_NO_OFFSET)
    fprintf(stderr, "%s: error: %s\n", file, d->msg);
  else if (c->text_input)
    fprintf(stderr, "%s (converted by wat2wasm):0x%x: error: %s\n", file, d->offset, d->msg);
  else
    fprintf(stderr, "%s:0x%x: error: %s\n", file, d->offset, d->msg);
}

static char *default_output(const cli *c) {
  const char *base = strrchr(c->input, '/');
  base = base ? base + 1 : c->input;
  size_t n = strlen(base);
  const char *dot = strrchr(base, '.');
  if (dot && dot != base) n = (size_t)(dot - base);
  const char *ext = c->emit_llvm ? ".ll" : c->emit_asm ? ".s" : c->object ? ".o" : "";
  char *out = malloc(n + 8);
  snprintf(out, n + 8, "%.*s%s", (int)n, base, ext);
  if (!strcmp(out, base)) strcat(out, ".out"); /* never overwrite the input */
  return out;
}

/* The folder of libtwasm-rt.a: $TWASM_RT_LIB_DIR; else, relative to this
 * binary, where share/twasm/libdir says (an install with its own LIBDIR),
 * then ../lib (the build tree, a plain install). */
static void runtime_dir(char *buf, size_t cap) {
  const char *env = getenv("TWASM_RT_LIB_DIR");
  if (env && *env) {
    snprintf(buf, cap, "%s", env);
    return;
  }
  char exe[PATH_MAX], path[PATH_MAX + 64], rel[PATH_MAX] = "";
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = 0;
  char *slash = strrchr(exe, '/');
  if (slash) *slash = 0;
  if (n <= 0) strcpy(exe, ".");
  snprintf(path, sizeof path, "%s/../share/twasm/libdir", exe);
  FILE *f = fopen(path, "r");
  if (f) {
    if (fgets(rel, sizeof rel, f)) rel[strcspn(rel, "\n")] = 0;
    fclose(f);
  }
  if (rel[0] && rel[0] != '/') {
    snprintf(path, sizeof path, "%s/%s/libtwasm-rt.a", exe, rel);
    if (access(path, R_OK) == 0) {
      snprintf(buf, cap, "%s/%s", exe, rel);
      return;
    }
  }
  snprintf(buf, cap, "%s/../lib", exe);
}

/* -c: the descriptor is twasm_module_<stem of the output>, so several
 * modules can be linked into one program. */
static void name_object(cli *c, const char *out) {
  const char *base = drv_is_stdout(out) ? (strcmp(c->input, "-") ? c->input : "stdin") : out;
  const char *slash = strrchr(base, '/');
  base = slash ? slash + 1 : base;
  size_t n = strlen(base);
  const char *dot = strrchr(base, '.');
  if (dot && dot != base) n = (size_t)(dot - base);
  hdr_ident(base, (unsigned)n, c->prefix, sizeof c->prefix);
  snprintf(c->desc_symbol, sizeof c->desc_symbol, "twasm_module_%s", c->prefix);
  c->drv.desc_symbol = c->desc_symbol;
}

/* mod.o -> mod.h beside it (malloc'd). */
static char *header_path(const char *out) {
  size_t n = strlen(out);
  char *path = malloc(n + 3);
  memcpy(path, out, n + 1);
  char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
  if (dot && dot > path && (!slash || dot > slash + 1)) strcpy(dot, ".h");
  else strcat(path, ".h");
  return path;
}

/* Outputs that would destroy something are refused before any work:
 * devices and other non-regular files, the input, a header over its own
 * object.  Returns -1 to go on, else the exit status. */
static int check_outputs(const cli *c, const char *out) {
  tw_diag d = {.offset = TW_DIAG_NO_OFFSET};
  const char *input = strcmp(c->input, "-") ? c->input : NULL;
  bool ok = drv_output_allowed(out, input, &d);
  if (ok && c->object && !c->emit_llvm && !c->emit_asm && !drv_is_stdout(out)) {
    char *header = header_path(out);
    if (!strcmp(header, out)) {
      usage_error("-c writes the header %s beside the object: -o would make them one file "
                  "(name the object FILE.o)", header);
      free(header);
      return EXIT_USAGE;
    }
    ok = drv_output_allowed(header, input, &d);
    free(header);
  }
  if (ok) return -1;
  fprintf(stderr, "twasmc: error: %s\n", d.msg);
  return EXIT_USAGE;
}

/* The header is written after the object; with -o - it is not written
 * (standard output holds the object alone). */
static bool write_header(const cli *c, const uint8_t *bytes, size_t size, const char *out, tw_diag *d) {
  if (drv_is_stdout(out)) return true;
  char *text = NULL;
  const char *name = strcmp(c->input, "-") ? c->input : "<stdin>";
  if (drv_emit_header(bytes, size, name, c->prefix, c->desc_symbol, &text, d) != DRV_OK) return false;
  char *path = header_path(out);
  bool ok = drv_write_output(path, text, strlen(text), d);
  free(path);
  free(text);
  return ok;
}

static int extract_ptx(const cli *c, tw_diag *d) {
  unsigned n = 0;
  if (!off_extract(c->extract, c->output ? c->output : ".", &n, d)) {
    fprintf(stderr, "%s: error: %s\n", c->extract, d->msg);
    return EXIT_BAD_INPUT;
  }
  printf("%u PTX files written to %s\n", n, c->output ? c->output : ".");
  return 0;
}

static bool read_module(cli *c, uint8_t **bytes, size_t *size, tw_diag *d) {
  if (strcmp(c->input, "-")) {
    c->text_input = drv_is_text_input(c->input);
    return drv_read_input(c->input, bytes, size, d) == DRV_OK;
  }
  c->drv.module_name = "stdin";
  return drv_read_stdin(bytes, size, &c->text_input, d) == DRV_OK;
}

/* Compiles and writes what was asked for: IR, assembly, object + header,
 * or an executable. */
static bool compile(cli *c, const uint8_t *bytes, size_t size, const char *out, tw_diag *d) {
  const char *name = strcmp(c->input, "-") ? c->input : "<stdin>";
  if (c->emit_llvm) {
    char *ir = NULL;
    bool ok = drv_emit_llvm(bytes, size, name, &c->drv, &ir, d) == DRV_OK &&
              drv_write_output(out, ir, strlen(ir), d);
    free(ir);
    return ok;
  }
  char rtdir[PATH_MAX + 16];
  if (c->drv.emit_main) {
    drv_objects objs;
    bool ok = drv_compile_parts(bytes, size, name, &c->drv, &objs, d) == DRV_OK;
    if (ok) {
      runtime_dir(rtdir, sizeof rtdir);
      ok = drv_write_executable(&objs, out, rtdir, &c->drv, d);
    }
    drv_objects_free(&objs);
    return ok;
  }
  uint8_t *obj = NULL;
  size_t obj_size = 0;
  bool ok = drv_compile(bytes, size, name, &c->drv, &obj, &obj_size, d) == DRV_OK &&
            drv_write_output(out, obj, obj_size, d);
  if (ok && c->object && !c->emit_asm) ok = write_header(c, bytes, size, out, d);
  free(obj);
  return ok;
}

int main(int argc, char **argv) {
  cli c = {0};
  int rc = parse_args(&c, argc, argv);
  if (rc >= 0) return rc;
  drv_remove_temps_on_signals();
  tw_diag d = {.offset = TW_DIAG_NO_OFFSET};
  if (c.extract) return extract_ptx(&c, &d);
  char *out = c.output ? strdup(c.output) : default_output(&c);
  if ((rc = check_outputs(&c, out)) >= 0) {
    free(out);
    return rc;
  }
  char *report = NULL, *dump = NULL;
  if (c.offload_report) c.drv.offload_report = &report;
  if (c.drv.dump_after) c.drv.dump = &dump;
  cli_progress progress;
  cli_progress_init(&progress, c.verbose);
  c.drv.progress = cli_progress_event;
  c.drv.progress_arg = &progress;
  uint8_t *bytes = NULL;
  size_t size = 0;
  bool ok = read_module(&c, &bytes, &size, &d);
  if (ok && c.object) name_object(&c, out);
  if (ok) ok = compile(&c, bytes, size, out, &d);
  cli_progress_total(&progress);
  if (dump) fputs(dump, stderr);
  free(dump);
  if (report) print_report(&c, report);
  free(report);
  if (!ok) report_error(&c, &d);
  free(out);
  free(bytes);
  free(c.dirs);
  free(c.env);
  return ok ? 0 : EXIT_BAD_INPUT;
}
