/* rt_main.c: twasm_main, what a compiled executable's main() runs: WASI
 * setup, instantiation, _start, and the exit status. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"
#include "rt_offload.h"
#include "twasm_abi.h"
#include "twasm_wasi.h"

#define STATUS_TRAP 134
#define STATUS_NO_START 1

static const char *prog_name(int argc, char **argv) {
  if (argc < 1 || !argv[0]) return "twasm";
  const char *slash = strrchr(argv[0], '/');
  return slash ? slash + 1 : argv[0];
}

/* One "HOST[::GUEST]" entry of length len. */
static bool preopen_entry(twasm_wasi *w, const char *prog, const char *entry, size_t len) {
  char *spec = strndup(entry, len);
  if (!spec) return false;
  char *sep = strstr(spec, "::");
  const char *guest = spec;
  if (sep) {
    *sep = 0;
    guest = sep + 2;
  }
  bool ok = twasm_wasi_add_preopen(w, spec, guest);
  if (!ok) fprintf(stderr, "%s: cannot open directory %s: %s\n", prog, spec, strerror(errno));
  free(spec);
  return ok;
}

static bool preopen_all(twasm_wasi *w, const char *prog, const char *baked_dirs) {
  const char *env = getenv("TWASM_DIRS");
  const char *list = env ? env : baked_dirs;
  char sep = env ? ';' : '\n';
  while (list && *list) {
    const char *end = strchr(list, sep);
    size_t len = end ? (size_t)(end - list) : strlen(list);
    if (len && !preopen_entry(w, prog, list, len)) return false;
    list = end ? end + 1 : list + len;
  }
  return true;
}

/* Where a trap happened: the instruction's offset, or failing that the
 * start of the function's body. */
static uint32_t trap_offset(const twasm_module *m, const twasm_trap *t) {
  if (t->offset || t->func_index == UINT32_MAX || !m->func_offsets) return t->offset;
  uint32_t nimported = 0;
  for (uint32_t i = 0; i < m->nimports; i++)
    if (m->imports[i].kind == TWASM_EXTERN_FUNC) nimported++;
  if (t->func_index < nimported || t->func_index - nimported >= m->nfuncs) return 0;
  return m->func_offsets[t->func_index - nimported];
}

static void frame_name(const twasm_module *m, uint32_t idx, char *buf, size_t cap) {
  const char *name = m->func_names && idx < m->nfuncs_total ? m->func_names[idx] : NULL;
  if (name) snprintf(buf, cap, "%s", name);
  else snprintf(buf, cap, "func[%u]", idx);
}

/* The backtrace, a run of three or more frames of one function (deep
 * recursion) told as one line. */
static void print_frames(const twasm_module *m, const twasm_trap *t) {
  char name[256];
  for (uint32_t i = 0; i < t->nframes;) {
    uint32_t run = 1;
    while (i + run < t->nframes && t->frames[i + run] == t->frames[i]) run++;
    frame_name(m, t->frames[i], name, sizeof name);
    fprintf(stderr, "    at %s\n", name);
    if (run >= 3) fprintf(stderr, "    ... %u more frames of %s\n", run - 1, name);
    else if (run == 2) fprintf(stderr, "    at %s\n", name);
    i += run;
  }
  if (t->frames_truncated)
    fprintf(stderr, "    ... more frames not shown (the backtrace keeps the innermost %d)\n",
            TWASM_TRAP_MAX_FRAMES);
}

static int report_trap(const twasm_module *m, const char *prog, const twasm_trap *t) {
  char func[32];
  const char *name = t->func_name;
  if (!name) {
    snprintf(func, sizeof func, "func[%u]", t->func_index);
    name = t->func_index == UINT32_MAX ? "?" : func;
  }
  const char *file = m->filename ? m->filename : m->name ? m->name : "module";
  fprintf(stderr, "%s: trap: %s in %s (%s:0x%x)\n", prog, t->message, name, file,
          trap_offset(m, t));
  print_frames(m, t);
  return STATUS_TRAP;
}

/* The status for a trap value: proc_exit is not an error. */
static int trap_status(const twasm_module *m, const char *prog, const twasm_trap *t) {
  if (t->code == TWASM_TRAP_EXIT) return t->exit_status;
  return report_trap(m, prog, t);
}

static int run_entry(twasm_instance *inst, const twasm_module *m, const char *prog) {
  static const char *const entries[] = {"_start", "_initialize"};
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
    twasm_extern ex;
    twasm_trap trap;
    if (!twasm_instance_export(inst, entries[i], (uint32_t)strlen(entries[i]), &ex)) continue;
    if (ex.kind != TWASM_EXTERN_FUNC) break;
    if (twasm_call(ex.of.func, NULL, 0, NULL, 0, &trap)) return trap_status(m, prog, &trap);
    return 0;
  }
  return 0;
}

/* An executable has nothing but WASI to offer. */
static bool all_provided(const twasm_module *m, const twasm_extern *imports, twasm_trap *err) {
  uint32_t n = twasm_module_import_count(m);
  for (uint32_t i = 0; i < n; i++) {
    if (imports[i].of.func) continue;
    twasm_import_info info;
    twasm_module_import(m, i, &info);
    snprintf(err->message, sizeof err->message, "unknown import %.*s::%.*s (executables get only WASI)",
             (int)info.module_len, info.module, (int)info.name_len, info.name);
    return false;
  }
  return true;
}

static int instantiate_and_run(twasm_wasi *w, const twasm_module *m, const char *prog) {
  twasm_trap err;
  uint32_t n = twasm_module_import_count(m);
  twasm_extern *imports = calloc(n ? n : 1, sizeof *imports);
  if (!imports) {
    fprintf(stderr, "%s: out of memory\n", prog);
    return STATUS_NO_START;
  }
  int status = STATUS_NO_START;
  twasm_instance *inst = NULL;
  if (!twasm_wasi_imports(w, m, imports, &err) || !all_provided(m, imports, &err)) {
    fprintf(stderr, "%s: error: %s\n", prog, err.message);
  } else if (!(inst = twasm_instance_new(m, imports, n, &err))) {
    /* A trap in the start function, or a failure to link. */
    if (err.code != TWASM_TRAP_NONE) status = trap_status(m, prog, &err);
    else fprintf(stderr, "%s: error: %s\n", prog, err.message);
  } else {
    status = run_entry(inst, m, prog);
  }
  twasm_instance_delete(inst);
  free(imports);
  return status;
}

int twasm_main(const twasm_module *m, int argc, char **argv, const char *baked_dirs,
               const char *baked_env, unsigned flags) {
  const char *prog = prog_name(argc, argv);
  /* Every writer of linear memory here is Wasm code, the runtime or WASI. */
  rt_resident_enable();
  char **env = rt_guest_environ(baked_env, flags & TWASM_MAIN_INHERIT_ENV);
  twasm_wasi *w = env ? twasm_wasi_new(argc, argv, env) : NULL;
  rt_free_environ(env);
  if (!w) {
    fprintf(stderr, "%s: out of memory\n", prog);
    return STATUS_NO_START;
  }
  int status = preopen_all(w, prog, baked_dirs) ? instantiate_and_run(w, m, prog) : STATUS_NO_START;
  twasm_wasi_delete(w);
  rt_start_leave(status);
  return status;
}
