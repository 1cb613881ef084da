/* fd_main.c: twasm-fuzz-diff: compiles one binaryen -ttf module with
 * twasmc in each configuration asked for (in-process, linked as a shared
 * object and loaded with dlopen), instantiates it through the runtime API
 * with the fuzzing-support imports, calls every export as harness.mjs does
 * for V8 and prints the same lines: the calls, the values logged, the
 * results or the trap's kind, a hash of memory after each call.
 *
 * usage: twasm-fuzz-diff MODULE.wasm... CONFIG...   (CONFIG: O0g O0e O2g O2e,
 *        ...: the level, then g for guard or e for explicit bounds checks)
 * Each configuration's lines follow a line "== CONFIG"; one module's go to
 * stdout, several modules' each to MODULE.tw (see main). */
#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "drv_internal.h"
#include "twasm.h"
#include "twasm_abi.h"

/* ---- values as harness.mjs prints them ----------------------------------- */

static void show(FILE *out, const twasm_val *v) {
  switch (v->kind) {
  case TWASM_I32: fprintf(out, "%" PRId32, v->of.i32); break;
  case TWASM_I64: fprintf(out, "%" PRId64, v->of.i64); break;
  case TWASM_F32: {
    uint32_t bits;
    memcpy(&bits, &v->of.f32, 4);
    if (isnan(v->of.f32)) fputs("nan", out);
    else fprintf(out, "%08" PRIx32, bits);
    break;
  }
  case TWASM_F64: {
    uint64_t bits;
    memcpy(&bits, &v->of.f64, 8);
    if (isnan(v->of.f64)) fputs("nan", out);
    else fprintf(out, "%016" PRIx64, bits);
    break;
  }
  case TWASM_FUNCREF: case TWASM_EXTERNREF: fputs(v->of.ref ? "nonnull" : "null", out); break;
  default: fputs("v128", out); break;
  }
}

static const char *kind_name(twasm_valkind k) {
  switch (k) {
  case TWASM_I32: return "i32";
  case TWASM_I64: return "i64";
  case TWASM_F32: return "f32";
  case TWASM_F64: return "f64";
  default: return "ref";
  }
}

/* Trap kinds as harness.mjs reads V8's messages.  V8 says "float
 * unrepresentable in integer range" for every failed truncation, where the
 * spec says "integer overflow" for a value out of range: such traps are
 * told from a division's overflow by the opcode at the trap's offset. */
static const uint8_t *fd_bytes;
static size_t fd_size;

static const char *trap_kind_at(uint32_t code, uint32_t offset) {
  bool truncation = offset < fd_size && fd_bytes[offset] >= 0xa8 && fd_bytes[offset] <= 0xb1;
  if (code == TWASM_TRAP_INT_OVERFLOW && truncation) return "conv";
  static const char *const kinds[TWASM_TRAP_COUNT] = {
      [TWASM_TRAP_UNREACHABLE] = "unreachable",     [TWASM_TRAP_INT_DIV_ZERO] = "div0",
      [TWASM_TRAP_INT_OVERFLOW] = "overflow",       [TWASM_TRAP_INVALID_CONVERSION] = "conv",
      [TWASM_TRAP_MEMORY_OOB] = "mem",              [TWASM_TRAP_TABLE_OOB] = "table",
      [TWASM_TRAP_UNDEFINED_ELEMENT] = "table",     [TWASM_TRAP_UNINITIALIZED_ELEMENT] = "indirect",
      [TWASM_TRAP_INDIRECT_TYPE_MISMATCH] = "indirect", [TWASM_TRAP_STACK_EXHAUSTED] = "stack",
      [TWASM_TRAP_HOST] = "js",
  };
  return code < TWASM_TRAP_COUNT && kinds[code] ? kinds[code] : "other";
}

static const char *trap_kind(const twasm_trap *t) { return trap_kind_at(t->code, t->offset); }

/* ---- the fuzzing-support imports ----------------------------------------- */

/* JavaScript has no v128: V8 throws a TypeError where JS would see one (a
 * call of log-v128, an export with v128 in its type), which harness.mjs
 * prints as the trap kind "js"; log-v128 here traps as a host function. */
static int log_v128(void *env, twasm_instance *caller, const twasm_val *args, twasm_val *results,
                    twasm_trap *trap) {
  (void)env, (void)caller, (void)args, (void)results;
  trap->code = TWASM_TRAP_HOST;
  snprintf(trap->message, sizeof trap->message, "v128 to JS");
  return 1;
}

static int log_value(void *env, twasm_instance *caller, const twasm_val *args, twasm_val *results,
                     twasm_trap *trap) {
  (void)caller, (void)results, (void)trap;
  fprintf(env, "log %s ", kind_name(args[0].kind));
  show(env, &args[0]);
  fputc('\n', env);
  return 0;
}

typedef struct {
  const char *name;
  twasm_valkind kind;
  twasm_host_fn fn;
} fd_import;

static const fd_import fd_imports[] = {
    {"log-i32", TWASM_I32, log_value}, {"log-i64", TWASM_I64, log_value},
    {"log-f32", TWASM_F32, log_value}, {"log-f64", TWASM_F64, log_value},
    {"log-v128", TWASM_V128, log_v128},
};

/* The imports in the module's order; NULL (and a line) for one we lack. */
static twasm_extern *make_imports(const twasm_module *m, FILE *out, twasm_func **made) {
  uint32_t n = twasm_module_import_count(m);
  twasm_extern *ext = calloc(n + 1, sizeof *ext);
  for (uint32_t i = 0; i < n; i++) {
    twasm_import_info im;
    twasm_module_import(m, i, &im);
    const fd_import *found = NULL;
    for (size_t k = 0; k < sizeof fd_imports / sizeof fd_imports[0]; k++)
      if (im.kind == TWASM_EXTERN_FUNC && im.name_len == strlen(fd_imports[k].name) &&
          !memcmp(im.name, fd_imports[k].name, im.name_len))
        found = &fd_imports[k];
    if (!found) {
      fprintf(out, "unknown import %.*s %.*s\n", (int)im.module_len, im.module, (int)im.name_len, im.name);
      for (uint32_t j = 0; j < i; j++) twasm_func_delete(made[j]);
      free(ext);
      return NULL;
    }
    twasm_functype ft = {.nparams = 1, .params = &found->kind};
    made[i] = twasm_func_new_host(&ft, found->fn, out);
    ext[i] = (twasm_extern){.kind = TWASM_EXTERN_FUNC, .of.func = made[i]};
  }
  return ext;
}

/* ---- running the exports ----------------------------------------------- */

/* FNV-1a over memory's 32-bit words (little-endian, as harness.mjs reads
 * them; sizes are whole pages).  Most calls leave memory as it was: a copy
 * of the memory last hashed tells so with one memcmp. */
static struct {
  uint8_t *copy;
  uint64_t size;
  uint32_t hash;
} fd_last;

static void mem_hash(twasm_instance *inst, FILE *out) {
  twasm_memory *mem = twasm_instance_memory(inst, 0);
  if (!mem) {
    fputs("mem none\n", out);
    return;
  }
  const uint8_t *p = twasm_memory_data(mem);
  uint64_t size = twasm_memory_size(mem);
  if (!fd_last.copy || fd_last.size != size || memcmp(fd_last.copy, p, size)) {
    uint32_t h = 0x811c9dc5u;
    for (uint64_t i = 0; i + 4 <= size; i += 4) {
      uint32_t w;
      memcpy(&w, p + i, 4);
      h = (h ^ w) * 16777619u;
    }
    free(fd_last.copy);
    fd_last.copy = malloc(size ? size : 1); /* none: no copy, hashed again next time */
    if (fd_last.copy) memcpy(fd_last.copy, p, size);
    fd_last.size = size, fd_last.hash = h;
  }
  fprintf(out, "mem %" PRIu64 " %08" PRIx32 "\n", size >> 16, fd_last.hash);
}

/* For reducing a difference: memory after the call of export i to
 * $TWASM_FUZZ_MEMDUMP.i (harness.mjs does the same). */
static void mem_dump(twasm_instance *inst, uint32_t i) {
  const char *dump = getenv("TWASM_FUZZ_MEMDUMP");
  twasm_memory *mem = dump ? twasm_instance_memory(inst, 0) : NULL;
  char path[600];
  snprintf(path, sizeof path, "%s.%" PRIu32, dump ? dump : "", i);
  FILE *df = mem ? fopen(path, "wb") : NULL;
  if (df) fwrite(twasm_memory_data(mem), 1, twasm_memory_size(mem), df), fclose(df);
}

static twasm_func *export_func(twasm_instance *inst, const char *name, uint32_t len) {
  twasm_extern e;
  return twasm_instance_export(inst, name, len, &e) && e.kind == TWASM_EXTERN_FUNC ? e.of.func : NULL;
}

static void call_export(twasm_instance *inst, twasm_func *f, twasm_func *reset, FILE *out) {
  twasm_functype ft;
  twasm_func_type(f, &ft);
  twasm_val args[64] = {{0}}, results[64];
  if (ft.nparams > 64 || ft.nresults > 64) {
    fputs("too many params\n", out);
    return;
  }
  bool v128 = false;
  for (uint32_t i = 0; i < ft.nparams; i++) args[i].kind = ft.params[i], v128 |= ft.params[i] == TWASM_V128;
  for (uint32_t i = 0; i < ft.nresults; i++) v128 |= ft.results[i] == TWASM_V128;
  twasm_trap trap = {0};
  if (reset) twasm_call(reset, NULL, 0, NULL, 0, &trap);
  if (v128) {
    fputs("trap js\n", out); /* V8 throws before the call */
  } else if (twasm_call(f, args, ft.nparams, results, ft.nresults, &trap)) {
    fprintf(out, "trap %s\n", trap_kind(&trap));
  } else {
    fputs("result", out);
    for (uint32_t i = 0; i < ft.nresults; i++) {
      fputc(' ', out);
      show(out, &results[i]);
    }
    fputc('\n', out);
  }
  mem_hash(inst, out);
}

static void run_exports(const twasm_module *m, FILE *out) {
  uint32_t nimports = twasm_module_import_count(m);
  twasm_func **made = calloc(nimports + 1, sizeof *made);
  twasm_extern *imports = make_imports(m, out, made);
  if (!imports) {
    free(made);
    return;
  }
  twasm_trap trap = {0};
  twasm_instance *inst = twasm_instance_new(m, imports, nimports, &trap);
  if (!inst) {
    if (trap.code) fprintf(out, "instantiate trap %s\n", trap_kind(&trap));
    else fprintf(out, "instantiate error\n");
  } else {
    twasm_func *reset = export_func(inst, "hangLimitInitializer", 20);
    for (uint32_t i = 0; i < twasm_module_export_count(m); i++) {
      uint32_t len;
      const char *name = twasm_module_export_name(m, i, &len);
      twasm_func *f = export_func(inst, name, len);
      if (!f || f == reset) continue;
      fprintf(out, "call %.*s\n", (int)len, name);
      call_export(inst, f, reset, out);
      mem_dump(inst, i);
    }
    twasm_instance_delete(inst);
  }
  for (uint32_t i = 0; i < nimports; i++) twasm_func_delete(made[i]);
  free(made);
  free(imports);
}

/* ---- compiling and loading ----------------------------------------------- */

static bool parse_config(const char *c, drv_options *o) {
  drv_options_default(o);
  o->offload.enabled = false;
  if (c[0] != 'O' || c[1] < '0' || c[1] > '3' || (c[2] != 'g' && c[2] != 'e') || c[3]) return false;
  o->opt_level = c[1] - '0';
  o->bounds_mode = c[2] == 'g' ? TWASM_BOUNDS_GUARD : TWASM_BOUNDS_EXPLICIT;
  return true;
}

/* The link: ld -shared (gold where installed) with libgcc (for the helpers
 * LLVM may call), three times cheaper than cc -shared (gcc, collect2, ld)
 * on every configuration of every module; cc -shared otherwise. */
static char fd_libgcc[512];

static bool link_shared(const char *o_path, const char *so_path, tw_diag *d) {
  if (!fd_libgcc[0]) {
    FILE *p = popen("cc -print-libgcc-file-name 2>/dev/null", "r");
    if (!p || !fgets(fd_libgcc, sizeof fd_libgcc, p)) fd_libgcc[0] = 0;
    if (p) pclose(p);
    fd_libgcc[strcspn(fd_libgcc, "\n")] = 0;
    if (!fd_libgcc[0] || access(fd_libgcc, R_OK)) strcpy(fd_libgcc, "-");
  }
  if (strcmp(fd_libgcc, "-")) {
    static char *ld = NULL;
    if (!ld) ld = system("ld.gold --version >/dev/null 2>&1") == 0 ? "ld.gold" : "ld";
    char *argv[] = {ld, "-shared", "-o", (char *)so_path, (char *)o_path, fd_libgcc, NULL};
    if (drv_run_tool(argv, NULL, 0) == 0) return true;
  }
  return drv_link_shared(o_path, so_path, d);
}

/* Compiles, links and loads the module; its descriptor, or NULL with a line. */
static const twasm_module *load(const char *path, const uint8_t *bytes, size_t size,
                                const drv_options *o, const char *dir, void **handle, FILE *out) {
  uint8_t *obj = NULL;
  size_t obj_size = 0;
  tw_diag d = {0};
  if (drv_compile(bytes, size, path, o, &obj, &obj_size, &d) != DRV_OK) {
    fprintf(out, "compile error %s\n", d.msg);
    return NULL;
  }
  /* a name of its own per load: dlopen hands back an object already
   * loaded under the same name, which would run the first one's code */
  static unsigned loads;
  char o_path[512], so_path[512];
  snprintf(o_path, sizeof o_path, "%s/m%u.o", dir, loads);
  snprintf(so_path, sizeof so_path, "%s/m%u.so", dir, loads++);
  FILE *f = fopen(o_path, "wb");
  bool ok = f && fwrite(obj, 1, obj_size, f) == obj_size;
  if (f && fclose(f)) ok = false;
  free(obj);
  ok = ok && link_shared(o_path, so_path, &d);
  unlink(o_path);
  *handle = ok ? dlopen(so_path, RTLD_NOW | RTLD_LOCAL) : NULL;
  unlink(so_path);
  const twasm_module *m = *handle ? dlsym(*handle, "twasm_module") : NULL;
  if (!m) fprintf(out, "load error %s\n", ok ? dlerror() : d.msg);
  return m;
}

/* One module in every configuration, its lines on out.  0, or 1 when the
 * module cannot be read. */
static int run_module(const char *path, char *const *configs, int nconfigs, const char *dir,
                      FILE *out) {
  uint8_t *bytes;
  size_t size;
  tw_diag d = {0};
  if (drv_read_input(path, &bytes, &size, &d) != DRV_OK) {
    fprintf(stderr, "twasm-fuzz-diff: %s\n", d.msg);
    return 1;
  }
  fd_bytes = bytes, fd_size = size;
  for (int i = 0; i < nconfigs; i++) {
    drv_options o;
    parse_config(configs[i], &o);
    fprintf(out, "== %s\n", configs[i]);
    fflush(out);
    void *handle = NULL;
    const twasm_module *m = load(path, bytes, size, &o, dir, &handle, out);
    if (m) run_exports(m, out);
    fflush(out);
    /* the code stays mapped: traps unwind through it, nothing is freed */
    (void)handle;
  }
  fd_bytes = NULL, fd_size = 0;
  free(bytes);
  return 0;
}

static bool is_module(const char *a) {
  size_t n = strlen(a);
  return n > 5 && !strcmp(a + n - 5, ".wasm");
}

/* With one module its lines go to stdout; with several (one process for a
 * batch: LLVM and the runtime start once) each module's go to its path
 * with .tw for .wasm, ending in a line "== end" once all ran. */
int main(int argc, char **argv) {
  char *mods[argc], *configs[argc];
  int nmods = 0, nconfigs = 0;
  for (int i = 1; i < argc; i++) {
    drv_options o;
    if (is_module(argv[i])) mods[nmods++] = argv[i];
    else if (parse_config(argv[i], &o)) configs[nconfigs++] = argv[i];
    else {
      fprintf(stderr, "twasm-fuzz-diff: bad config %s\n", argv[i]);
      return 2;
    }
  }
  if (!nmods || !nconfigs) {
    fputs("usage: twasm-fuzz-diff MODULE.wasm... CONFIG... (O0g, O0e, O2g, O2e, ...)\n", stderr);
    return 2;
  }
  char dir[] = "/tmp/twasm-fdXXXXXX";
  if (!mkdtemp(dir)) return 1;
  int status = 0;
  if (nmods == 1) status = run_module(mods[0], configs, nconfigs, dir, stdout);
  for (int k = 0; nmods > 1 && k < nmods; k++) {
    size_t n = strlen(mods[k]);
    char tw[n + 1];
    memcpy(tw, mods[k], n - 5);
    strcpy(tw + n - 5, ".tw");
    FILE *out = fopen(tw, "w");
    if (!out) {
      perror(tw);
      status = 1;
      continue;
    }
    if (run_module(mods[k], configs, nconfigs, dir, out)) status = 1;
    else fputs("== end\n", out);
    fclose(out);
  }
  rmdir(dir);
  return status;
}
