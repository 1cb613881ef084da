/* spec.h: the pieces of twasm-spec, the .wast runner: JSON (sj_), values
 * (sv_), the spectest host module (sh_), modules of one file (sm_) and the
 * commands of one file (sr_). */
#ifndef TW_SPEC_H
#define TW_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "driver.h"
#include "twasm.h"

/* ---- JSON (spec_json.c): the subset wast2json writes, fully parsed ---- */

typedef enum { SJ_NULL, SJ_BOOL, SJ_NUMBER, SJ_STRING, SJ_ARRAY, SJ_OBJECT } sj_kind;

typedef struct sj_value {
  sj_kind kind;
  bool boolean;
  double number;
  const char *str;          /* SJ_STRING: NUL-terminated, may hold NULs */
  size_t len;               /* SJ_STRING: bytes; SJ_ARRAY/OBJECT: members */
  struct sj_value *items;   /* SJ_ARRAY/OBJECT members */
  const char **keys;        /* SJ_OBJECT: key of each member */
} sj_value;

/* Parses text into a tree allocated in a; on failure err says where. */
bool sj_parse(tw_arena *a, const char *text, size_t len, sj_value *out, char *err,
              size_t errcap);
/* The member named key of an object, or NULL. */
const sj_value *sj_get(const sj_value *obj, const char *key);
/* The string member named key, or NULL when absent or not a string. */
const char *sj_str(const sj_value *obj, const char *key);

/* ---- values (spec_values.c) ------------------------------------------- */

typedef enum { SV_OK, SV_UNSUPPORTED, SV_BAD } sv_status;

/* How a result is compared with an expectation. */
typedef enum {
  SV_EXACT,          /* same kind and bits (NULL == NULL for references) */
  SV_NAN_CANONICAL,  /* the canonical NaN of either sign */
  SV_NAN_ARITHMETIC, /* any NaN with the quiet bit set */
  SV_ANY_NONNULL,    /* a reference of the kind that is not null */
} sv_match;

typedef struct {
  sv_match match;
  twasm_val val;     /* kind always set */
  /* v128: lanes of lane_bits bits (floats when lane_float), each matched
   * by lanes[i] (SV_EXACT: against val's bytes of that lane) */
  uint8_t lane_bits;
  bool lane_float;
  sv_match lanes[16];
} sv_expect;

/* Externref N of the scripts as a host pointer, and back (N+1, so that
 * 0 stays distinct from null). */
void *sv_extern_ref(uint64_t n);

/* {"type":..,"value":..} as an argument or an expectation; err says why
 * not (SV_UNSUPPORTED: a value kind twasm has no counterpart for). */
sv_status sv_parse_arg(const sj_value *v, twasm_val *out, char *err, size_t cap);
sv_status sv_parse_expect(const sj_value *v, sv_expect *out, char *err, size_t cap);

bool sv_matches(const sv_expect *e, const twasm_val *got);
void sv_format(const twasm_val *v, char *buf, size_t cap);
void sv_format_expect(const sv_expect *e, char *buf, size_t cap);

/* ---- the spectest host module (spec_host.c) ---------------------------- */

typedef struct sh_spectest sh_spectest;

/* Fresh objects per .wast file: modules grow the memory and fill the
 * table, and host functions remember the trampolines of their importers. */
sh_spectest *sh_new(bool verbose);
void sh_delete(sh_spectest *h);
bool sh_lookup(sh_spectest *h, const char *name, size_t len, twasm_extern *out);

/* ---- modules of one file (spec_module.c) ------------------------------- */

typedef struct sm_named {
  char *name;
  twasm_instance *inst;
} sm_named;

typedef struct {
  const char *dir;          /* temporary folder of the file */
  drv_options opts;
  sh_spectest *host;
  unsigned counter;         /* names N.o / N.so */
  void **handles;           /* dlopen handles, closed at the end */
  size_t nhandles, cap_handles;
  twasm_instance **insts;   /* every instance made, deleted at the end */
  size_t ninsts, cap_insts;
  sm_named *named;          /* "$name" of module commands */
  size_t nnamed, cap_named;
  sm_named *registered;     /* "as" of register commands */
  size_t nregistered, cap_registered;
} sm_state;

typedef enum {
  SM_OK,
  SM_COMPILE_FAILED,        /* *status tells decode, validate or internal */
  SM_LOAD_FAILED,           /* writing, linking or dlopen */
  SM_LINK_FAILED,           /* unknown or incompatible import */
  SM_TRAPPED,               /* a trap while initialising or in start */
} sm_result;

/* s takes host over. */
void sm_init(sm_state *s, const char *dir, const drv_options *opts, sh_spectest *host);
/* Deletes the instances and the host objects, then unloads the code. */
void sm_finish(sm_state *s);
sm_result sm_load(sm_state *s, const char *wasm_path, const twasm_module **out,
                  drv_status *status, char *err, size_t cap);
sm_result sm_instantiate(sm_state *s, const twasm_module *m, twasm_instance **out,
                         char *err, size_t cap);
void sm_name(sm_named **list, size_t *n, size_t *cap, const char *name, twasm_instance *inst);
/* The newest entry called name, or NULL. */
const sm_named *sm_find(const sm_named *list, size_t n, const char *name);

/* ---- one file (spec_file.c) and its commands (spec_run.c) ------------- */

typedef struct {
  bool verbose;
  drv_options opts;
} sr_config;

/* Where results go, one record at a time: 'D' the temporary folder (for
 * cleaning up after a crash), 'T' the number of commands (text: decimal),
 * 'P' pass, 'F' fail, 'S' skip (text: the report line). */
typedef void (*sr_emit_fn)(void *ctx, char tag, const char *text);

typedef enum { SR_PASS, SR_FAIL, SR_SKIP } sr_outcome;

typedef struct {
  const char *wast_path;
  const sr_config *cfg;
  char dir[64];             /* mkdtemp folder: wast2json output, objects */
  sm_state modules;
  twasm_instance *current;
  int current_line;         /* where the current module was defined */
} sr_file;

/* Removes a temporary folder of sr_run_file and the files in it. */
void sr_remove_dir(const char *dir);
/* Runs every command of one .wast file. */
void sr_run_file(const char *wast_path, const sr_config *cfg, sr_emit_fn emit, void *ctx);
/* The action of cmd for messages: ` "name"(i32:1, f32:...)` or ` get "name"`. */
void sr_describe(const sj_value *cmd, char *buf, size_t cap);
/* Runs one command of f; detail says why it failed or was skipped. */
sr_outcome sr_command(sr_file *f, const sj_value *cmd, char *detail, size_t cap);

#endif
