/* driver.h: the whole pipeline behind one call, used by the CLI (main.c)
 * and, in-process, by the spec runner and tests. */
#ifndef TW_DRIVER_H
#define TW_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "off.h"

typedef enum {
  DRV_OK = 0,
  DRV_MALFORMED,   /* decode failed */
  DRV_INVALID,     /* validation failed */
  DRV_IO,          /* file could not be read/written, tool missing */
  DRV_INTERNAL,    /* LLVM or linker failure */
} drv_status;

/* What the pipeline says while it runs, through drv_options.progress
 * (library code prints nothing: the command line decides what to show).
 * A phase begins and ends (with its wall time); a long phase counts its
 * work; an external tool's command line is shown before it runs. */
typedef enum { DRV_EV_BEGIN, DRV_EV_END, DRV_EV_COUNT, DRV_EV_COMMAND } drv_event_kind;

typedef struct {
  drv_event_kind kind;
  const char *name;         /* the phase ("decode", "optimise", "ptx sm_80"), or the command */
  unsigned depth;           /* 0: a phase; 1: a part of the phase that ends next */
  double seconds;           /* END: wall time of the phase */
  const char *detail;       /* END: what it did ("2 kernels"), or NULL */
  unsigned long done, total; /* COUNT: units of work done, of total */
  const char *unit;         /* COUNT: what is counted ("functions") */
} drv_event;

/* Called on the thread that called the driver, in pipeline order. */
typedef void (*drv_progress_fn)(void *arg, const drv_event *e);

typedef struct {
  int opt_level;            /* 0..3, default 2 */
  int bounds_mode;          /* TWASM_BOUNDS_GUARD (default) or _EXPLICIT */
  const char *desc_symbol;  /* descriptor symbol, default "twasm_module" */
  const char *module_name;  /* for messages, default: file stem */
  bool emit_main;           /* executables: main() calls twasm_main() */
  bool emit_asm;            /* drv_compile: native assembly text, not an object */
  const char *baked_dirs;   /* executables: "HOST::GUEST\n..." preopens */
  const char *baked_env;    /* executables: the guest's NAME[=VALUE] entries,
                             * each NUL-ended, then an empty one; or NULL */
  size_t baked_env_len;     /* bytes of baked_env, the final NUL included */
  bool inherit_env;         /* executables: the guest sees the host's environment */
  off_options offload;      /* tensor loops -> embedded PTX (enabled by default) */
  char **offload_report;    /* when set: receives the report text (malloc'd) */
  bool stop_before_offload; /* tests: drv_emit_llvm returns the IR the offload
                             * stage would recognise in (not for codegen) */
  bool no_reroll;           /* tests: keep clang's loops unrolled by two as
                             * they are (the reroll pass off) */
  const char *cpu;          /* target CPU: NULL for portable x86-64 (default),
                             * "native" (this machine's CPU and features), or
                             * an LLVM x86 CPU name (drv_cpu_known) */
  const char *dump_after;   /* a pass's name (drv_pass_name) or "all": the */
  char **dump;              /* module's IR after it, appended here (malloc'd) */
  drv_progress_fn progress; /* phases, times, counts, commands; or NULL */
  void *progress_arg;
  unsigned jobs;            /* threads for code generation (0, 1: this one alone);
                             * the output does not depend on it */
} drv_options;

/* Object code: a large module is generated in parts (drv_compile_parts),
 * each its own object, linked together. */
typedef struct {
  uint8_t *data;
  size_t size;
} drv_object;

typedef struct {
  drv_object *parts;
  unsigned n;
} drv_objects;

void drv_objects_free(drv_objects *objs);

void drv_options_default(drv_options *o);

/* True for "native" and the x86-64 CPU names LLVM knows (drv_cpu.c). */
bool drv_cpu_known(const char *name);

/* The pipeline's passes in order (driver.c): the name of pass i and what
 * it does, NULL past the last; whether a name is a pass's or "all". */
const char *drv_pass_name(unsigned i, const char **what);
bool drv_pass_known(const char *name);

/* Reads a module from path: binary as is; .wat/.wast text through wabt's
 * wat2wasm (DRV_IO with a clear message if it is not installed, DRV_MALFORMED
 * if wat2wasm rejects it).  *bytes is malloc'd. */
drv_status drv_read_input(const char *path, uint8_t **bytes, size_t *size, tw_diag *d);

/* A module from standard input: binary as is, anything else as text
 * through wat2wasm (*was_text says which). */
drv_status drv_read_stdin(uint8_t **bytes, size_t *size, bool *was_text, tw_diag *d);

/* Whether drv_read_input takes path for a text module (.wat, .wast). */
bool drv_is_text_input(const char *path);

/* Decode + validate only. */
drv_status drv_check(const uint8_t *bytes, size_t size, const char *filename, tw_diag *d);

/* Decode, validate, lower, optimise and emit a host object file into a
 * malloc'd buffer (a large module's parts combined into one with cc -r). */
drv_status drv_compile(const uint8_t *bytes, size_t size, const char *filename,
                       const drv_options *o, uint8_t **obj, size_t *obj_size,
                       tw_diag *d);

/* Same, as the parts that code generation split the module into (one,
 * unless the module is large); linked together by drv_link_objects.  A
 * large module's parts are generated on o->jobs threads. */
drv_status drv_compile_parts(const uint8_t *bytes, size_t size, const char *filename,
                             const drv_options *o, drv_objects *objs, tw_diag *d);

/* Same, but stops after optimisation and returns textual LLVM IR. */
drv_status drv_emit_llvm(const uint8_t *bytes, size_t size, const char *filename,
                         const drv_options *o, char **ir, tw_diag *d);

/* The C header of `twasmc -c`: typed wrappers of the exports (header.h). */
drv_status drv_emit_header(const uint8_t *bytes, size_t size, const char *filename,
                           const char *prefix, const char *desc_symbol, char **text,
                           tw_diag *d);

/* Links an object into a shared object (for dlopen by the spec runner)
 * or an executable against libtwasm-rt.a found in rt_lib_dir. */
bool drv_link_shared(const char *obj_path, const char *so_path, tw_diag *d);
bool drv_link_executable(const char *obj_path, const char *exe_path,
                         const char *rt_lib_dir, tw_diag *d);

/* The same for objs[0..nobjs-1], with the command and the link's time
 * reported through o->progress (o may be NULL). */
bool drv_link_objects(const char *const *objs, unsigned nobjs, const char *exe_path,
                      const char *rt_lib_dir, const drv_options *o, tw_diag *d);

/* Reports one event through o->progress, when set (drv_report.c). */
void drv_report(const drv_options *o, drv_event e);
/* Monotonic seconds, for phase times. */
double drv_now(void);

#endif
