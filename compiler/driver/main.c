/* main.c: the twasmc command line: options, messages, exit statuses. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver.h"
#include "header.h"
#include "twasm_abi.h"

enum { EXIT_BAD_INPUT = 1, EXIT_USAGE = 2 };

static const char usage_text[] =
    "usage: twasmc [options] INPUT.wasm|INPUT.wat [-o OUTPUT]\n"
    "\n"
    "Compiles a WebAssembly module ahead of time, through LLVM, to a native\n"
    "executable (default) or object file.\n"
    "\n"
    "options:\n"
    "  -o FILE                 output file (default: INPUT without .wasm, or .o with -c)\n"
    "  -c                      write an object file and a C header (link with libtwasm-rt)\n"
    "  -O0, -O1, -O2, -O3      optimisation level (default -O2)\n"
    "  --emit-llvm             write the optimised LLVM IR as text instead\n"
    "  --bounds-checks=MODE    guard (default): guard pages catch out-of-bounds\n"
    "                          accesses; explicit: every access is compared\n"
    "                          against the memory size\n"
    "  --offload-report        print, for every loop nest, whether it became a GPU\n"
    "                          kernel (and for which archs) or why not\n"
    "  --no-offload            do not look for tensor loops (no PTX embedded)\n"
    "  --gpu-arch=LIST         archs to generate PTX for (default sm_75,sm_80,sm_90)\n"
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
    "  --dir HOST[::GUEST]     preopen directory HOST for the program, seen as\n"
    "                          GUEST (default HOST); repeatable; TWASM_DIRS\n"
    "                          replaces the list at run time\n"
    "  --help                  show this help and exit\n"
    "  --version               show the version and exit\n"
    "\n"
    "exit status: 0 success, 1 bad input (malformed or invalid module, I/O),\n"
    "2 bad usage.\n";

typedef struct {
  const char *input, *output;
  bool object, emit_llvm, offload_report;
  const char *extract;
  drv_options drv;
  char *dirs; /* "HOST::GUEST\n..." */
  char prefix[128], desc_symbol[160];
} cli;

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

/* --dump-after=list: the pipeline, one pass a line. */
static int list_passes(void) {
  const char *what;
  for (unsigned i = 0; drv_pass_name(i, &what); i++) printf("%-10s %s\n", drv_pass_name(i, NULL), what);
  return 0;
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(cli *c, int argc, char **argv) {
  drv_options_default(&c->drv);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(usage_text, stdout);
      return 0;
    } else if (!strcmp(a, "--version")) {
      printf("twasmc %s (LLVM 19)\n", TWASM_VERSION);
      return 0;
    } else if (!strcmp(a, "-o")) {
      if (++i == argc) return usage_error("%s needs a file name", a);
      c->output = argv[i];
    } else if (!strcmp(a, "-c")) {
      c->object = true;
    } else if (a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && !a[3]) {
      c->drv.opt_level = a[2] - '0';
    } else if (!strcmp(a, "--emit-llvm")) {
      c->emit_llvm = true;
    } else if (!strncmp(a, "--bounds-checks=", 16)) {
      if (!strcmp(a + 16, "guard")) c->drv.bounds_mode = TWASM_BOUNDS_GUARD;
      else if (!strcmp(a + 16, "explicit")) c->drv.bounds_mode = TWASM_BOUNDS_EXPLICIT;
      else return usage_error("unknown bounds-check mode '%s' (guard or explicit)", a + 16);
    } else if (!strcmp(a, "--offload-report")) {
      c->offload_report = true;
    } else if (!strcmp(a, "--no-offload")) {
      c->drv.offload.enabled = false;
    } else if (!strcmp(a, "--fp-reassociate")) {
      c->drv.offload.fp_reassociate = true;
    } else if (!strncmp(a, "--gpu-arch=", 11)) {
      if (!off_parse_archs(&c->drv.offload, a + 11))
        return usage_error("bad --gpu-arch list '%s' (e.g. sm_75,sm_80,sm_90)", a + 11);
    } else if (!strncmp(a, "--tensor-cores=", 15)) {
      if (!strcmp(a + 15, "tf32")) c->drv.offload.tf32 = true;
      else if (!strcmp(a + 15, "exact")) c->drv.offload.tf32 = false;
      else return usage_error("unknown tensor-core mode '%s' (exact or tf32)", a + 15);
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
  c->drv.emit_main = !c->object && !c->emit_llvm;
  c->drv.baked_dirs = c->dirs;
  return -1;
}

static void report_error(const char *file, const tw_diag *d) {
  if (d->offset != TW_DIAG_NO_OFFSET)
    fprintf(stderr, "%s:0x%x: error: %s\n", file, d->offset, d->msg);
  else
    fprintf(stderr, "%s: error: %s\n", file, d->msg);
}

static char *default_output(const cli *c) {
  const char *base = strrchr(c->input, '/');
  base = base ? base + 1 : c->input;
  size_t n = strlen(base);
  const char *dot = strrchr(base, '.');
  if (dot && dot != base) n = (size_t)(dot - base);
  const char *ext = c->emit_llvm ? ".ll" : c->object ? ".o" : "";
  char *out = malloc(n + 8);
  snprintf(out, n + 8, "%.*s%s", (int)n, base, ext);
  if (!strcmp(out, base)) strcat(out, ".out"); /* never overwrite the input */
  return out;
}

/* Writes data to a temporary next to path and renames it into place, so no
 * partial output is ever left behind. */
static bool write_atomically(const char *path, const void *data, size_t size, tw_diag *d) {
  size_t n = strlen(path);
  char *tmp = malloc(n + 16);
  snprintf(tmp, n + 16, "%s.tmpXXXXXX", path);
  int fd = mkstemp(tmp);
  bool ok = fd >= 0;
  if (!ok) tw_fail(d, TW_DIAG_NO_OFFSET, "cannot write %s: %s", path, strerror(errno));
  for (size_t done = 0; ok && done < size;) {
    ssize_t w = write(fd, (const char *)data + done, size - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) ok = tw_fail(d, TW_DIAG_NO_OFFSET, "cannot write %s: %s", path, strerror(errno));
    else done += (size_t)w;
  }
  if (fd >= 0) {
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask); /* mkstemp made it private */
  }
  if (fd >= 0 && close(fd) != 0 && ok) ok = tw_fail(d, TW_DIAG_NO_OFFSET, "cannot write %s", path);
  if (ok && rename(tmp, path) != 0)
    ok = tw_fail(d, TW_DIAG_NO_OFFSET, "cannot write %s: %s", path, strerror(errno));
  if (!ok && fd >= 0) unlink(tmp);
  free(tmp);
  return ok;
}

/* The runtime library sits in ../lib relative to this binary, both in the
 * build tree and in an installed prefix; TWASM_RT_LIB_DIR overrides. */
static void runtime_dir(char *buf, size_t cap) {
  char exe[PATH_MAX];
  const char *env = getenv("TWASM_RT_LIB_DIR");
  if (env && *env) {
    snprintf(buf, cap, "%s", env);
    return;
  }
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = 0;
  char *slash = strrchr(exe, '/');
  if (slash) *slash = 0;
  if (n <= 0) strcpy(exe, ".");
  snprintf(buf, cap, "%.*s/../lib", (int)(cap > 16 ? cap - 16 : 0), exe);
}

static bool link_executable(const void *obj, size_t size, const char *out, tw_diag *d) {
  char objpath[] = "/tmp/twasmc-objXXXXXX.o";
  int fd = mkstemps(objpath, 2);
  if (fd < 0) return tw_fail(d, TW_DIAG_NO_OFFSET, "cannot create a temporary file: %s", strerror(errno));
  bool ok = write(fd, obj, size) == (ssize_t)size;
  close(fd);
  if (!ok) {
    unlink(objpath);
    return tw_fail(d, TW_DIAG_NO_OFFSET, "cannot write a temporary file");
  }
  size_t n = strlen(out);
  char *tmp = malloc(n + 16), rtdir[PATH_MAX + 16];
  snprintf(tmp, n + 16, "%s.tmpXXXXXX", out);
  int tfd = mkstemp(tmp);
  if (tfd >= 0) close(tfd);
  runtime_dir(rtdir, sizeof rtdir);
  ok = tfd >= 0 && drv_link_executable(objpath, tmp, rtdir, d);
  if (tfd < 0) tw_fail(d, TW_DIAG_NO_OFFSET, "cannot write %s: %s", out, strerror(errno));
  if (ok && rename(tmp, out) != 0) ok = tw_fail(d, TW_DIAG_NO_OFFSET, "cannot write %s: %s", out, strerror(errno));
  if (!ok && tfd >= 0) unlink(tmp);
  unlink(objpath);
  free(tmp);
  return ok;
}

/* -c: the descriptor is twasm_module_<stem of the output>, so several
 * modules can be linked into one program. */
static void name_object(cli *c, const char *out) {
  const char *base = strrchr(out, '/');
  base = base ? base + 1 : out;
  size_t n = strlen(base);
  const char *dot = strrchr(base, '.');
  if (dot && dot != base) n = (size_t)(dot - base);
  hdr_ident(base, (unsigned)n, c->prefix, sizeof c->prefix);
  snprintf(c->desc_symbol, sizeof c->desc_symbol, "twasm_module_%s", c->prefix);
  c->drv.desc_symbol = c->desc_symbol;
}

/* mod.o -> mod.h beside it. */
static bool write_header(const cli *c, const uint8_t *bytes, size_t size, const char *out, tw_diag *d) {
  char *text = NULL;
  if (drv_emit_header(bytes, size, c->input, c->prefix, c->desc_symbol, &text, d) != DRV_OK) return false;
  size_t n = strlen(out);
  char *path = malloc(n + 3);
  memcpy(path, out, n + 1);
  char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
  if (dot && (!slash || dot > slash)) strcpy(dot, ".h");
  else strcat(path, ".h");
  bool ok = write_atomically(path, text, strlen(text), d);
  free(path);
  free(text);
  return ok;
}

static int extract_ptx(const cli *c, tw_diag *d) {
  unsigned n = 0;
  if (!off_extract(c->extract, c->output ? c->output : ".", &n, d)) {
    report_error(c->extract, d);
    return EXIT_BAD_INPUT;
  }
  printf("%u PTX files written to %s\n", n, c->output ? c->output : ".");
  return 0;
}

int main(int argc, char **argv) {
  cli c = {0};
  int rc = parse_args(&c, argc, argv);
  if (rc >= 0) return rc;
  tw_diag d = {.offset = TW_DIAG_NO_OFFSET};
  if (c.extract) return extract_ptx(&c, &d);
  char *report = NULL, *dump = NULL;
  if (c.offload_report) c.drv.offload_report = &report;
  if (c.drv.dump_after) c.drv.dump = &dump;
  uint8_t *bytes = NULL;
  size_t size = 0;
  if (drv_read_input(c.input, &bytes, &size, &d) != DRV_OK) {
    report_error(c.input, &d);
    return EXIT_BAD_INPUT;
  }
  char *out = c.output ? strdup(c.output) : default_output(&c);
  if (c.object) name_object(&c, out);
  bool ok;
  if (c.emit_llvm) {
    char *ir = NULL;
    ok = drv_emit_llvm(bytes, size, c.input, &c.drv, &ir, &d) == DRV_OK;
    if (ok) ok = !strcmp(out, "-") ? fputs(ir, stdout) >= 0 : write_atomically(out, ir, strlen(ir), &d);
    free(ir);
  } else {
    uint8_t *obj = NULL;
    size_t obj_size = 0;
    ok = drv_compile(bytes, size, c.input, &c.drv, &obj, &obj_size, &d) == DRV_OK;
    if (ok) ok = c.object ? write_atomically(out, obj, obj_size, &d) : link_executable(obj, obj_size, out, &d);
    if (ok && c.object) ok = write_header(&c, bytes, size, out, &d);
    free(obj);
  }
  if (dump) fputs(dump, stderr);
  free(dump);
  if (report) fputs(report, stderr);
  free(report);
  if (!ok) report_error(c.input, &d);
  free(out);
  free(bytes);
  free(c.dirs);
  return ok ? 0 : EXIT_BAD_INPUT;
}
