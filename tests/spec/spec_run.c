/* spec_run.c: the commands of a script: modules, registrations, actions
 * and every kind of assertion. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"

/* What an action produced: results, a trap, or why it could not run. */
typedef struct {
  twasm_val *results;
  uint32_t nresults;
  twasm_trap trap;
} sr_result;

static const char *const sr_drv_names[] = {"ok", "malformed", "invalid", "I/O error", "internal error"};

static const char *sr_drv_name(drv_status st) {
  return (unsigned)st < sizeof sr_drv_names / sizeof sr_drv_names[0] ? sr_drv_names[st] : "?";
}

static sr_outcome sr_fail(char *detail, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static sr_outcome sr_fail(char *detail, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, cap, fmt, ap);
  va_end(ap);
  return SR_FAIL;
}

/* The spec's text must occur in ours; ours may also be a prefix of the
 * spec's ("uninitialized element" for "uninitialized element 2"). */
static bool sr_message_matches(const char *ours, const char *spec) {
  if (!spec || strstr(ours, spec)) return true;
  size_t n = strlen(ours);
  return n && strncmp(spec, ours, n) == 0;
}

static void sr_module_path(const sr_file *f, const sj_value *cmd, char *path, size_t cap) {
  const char *name = sj_str(cmd, "filename");
  snprintf(path, cap, "%s/%s", f->dir, name ? name : "");
}

/* Compiles and loads the module of cmd. */
static sr_outcome sr_load(sr_file *f, const sj_value *cmd, const twasm_module **m, char *detail,
                          size_t cap) {
  char path[4200];
  drv_status st;
  sr_module_path(f, cmd, path, sizeof path);
  char err[512];
  sm_result r = sm_load(&f->modules, path, m, &st, err, sizeof err);
  if (r == SM_OK) return SR_PASS;
  if (r == SM_COMPILE_FAILED) snprintf(detail, cap, "compiling failed (%s): %s", sr_drv_name(st), err);
  else snprintf(detail, cap, "loading failed: %s", err);
  return SR_FAIL;
}

static sr_outcome sr_cmd_module(sr_file *f, const sj_value *cmd, char *detail, size_t cap) {
  const twasm_module *m;
  const char *name = sj_str(cmd, "name");
  const sj_value *line = sj_get(cmd, "line");
  f->current = NULL;
  f->current_line = line && line->kind == SJ_NUMBER ? (int)line->number : 0;
  sr_outcome o = sr_load(f, cmd, &m, detail, cap);
  if (o != SR_PASS) return o;
  char err[512];
  twasm_instance *inst;
  sm_result r = sm_instantiate(&f->modules, m, &inst, err, sizeof err);
  if (r != SM_OK)
    return sr_fail(detail, cap, "instantiation failed: %s%s", err, r == SM_TRAPPED ? " (trap)" : "");
  f->current = inst;
  if (name) sm_name(&f->modules.named, &f->modules.nnamed, &f->modules.cap_named, name, inst);
  return SR_PASS;
}

/* The instance an action or register names, or the current one. */
static sr_outcome sr_target(sr_file *f, const char *name, twasm_instance **out, char *detail,
                            size_t cap) {
  if (name) {
    const sm_named *named = sm_find(f->modules.named, f->modules.nnamed, name);
    if (named) {
      *out = named->inst;
      return SR_PASS;
    }
    return sr_fail(detail, cap, "no module named %s", name);
  }
  *out = f->current;
  if (*out) return SR_PASS;
  return sr_fail(detail, cap, "no current module (the module of line %d failed)", f->current_line);
}

static sr_outcome sr_cmd_register(sr_file *f, const sj_value *cmd, char *detail, size_t cap) {
  twasm_instance *inst;
  const char *as = sj_str(cmd, "as");
  sr_outcome o = sr_target(f, sj_str(cmd, "name"), &inst, detail, cap);
  if (o != SR_PASS) return o;
  if (!as) return sr_fail(detail, cap, "register without \"as\"");
  sm_name(&f->modules.registered, &f->modules.nregistered, &f->modules.cap_registered, as, inst);
  return SR_PASS;
}

static sr_outcome sr_args(const sj_value *args, twasm_val **out, uint32_t *n, char *detail, size_t cap) {
  *n = args && args->kind == SJ_ARRAY ? (uint32_t)args->len : 0;
  *out = calloc(*n ? *n : 1, sizeof **out);
  if (!*out) abort();
  for (uint32_t i = 0; i < *n; i++) {
    char err[256];
    sv_status st = sv_parse_arg(&args->items[i], &(*out)[i], err, sizeof err);
    if (st == SV_UNSUPPORTED) {
      snprintf(detail, cap, "%s", err);
      return SR_SKIP;
    }
    if (st != SV_OK) return sr_fail(detail, cap, "argument: %s", err);
  }
  return SR_PASS;
}

static bool sr_kinds_match(const twasm_functype *t, const twasm_val *args, uint32_t nargs) {
  if (t->nparams != nargs) return false;
  for (uint32_t i = 0; i < nargs; i++)
    if (t->params[i] != args[i].kind) return false;
  return true;
}

static sr_outcome sr_invoke(twasm_instance *inst, const sj_value *action, sr_result *res, char *detail,
                            size_t cap) {
  const sj_value *field = sj_get(action, "field");
  twasm_extern ex;
  if (!field || field->kind != SJ_STRING || !twasm_instance_export(inst, field->str, (uint32_t)field->len, &ex) ||
      ex.kind != TWASM_EXTERN_FUNC)
    return sr_fail(detail, cap, "no exported function \"%s\"", field ? field->str : "");
  twasm_val *args;
  uint32_t nargs;
  sr_outcome o = sr_args(sj_get(action, "args"), &args, &nargs, detail, cap);
  twasm_functype type;
  twasm_func_type(ex.of.func, &type);
  if (o == SR_PASS && !sr_kinds_match(&type, args, nargs))
    o = sr_fail(detail, cap, "arguments do not match the type of \"%s\"", field->str);
  if (o == SR_PASS) {
    res->nresults = type.nresults;
    res->results = calloc(type.nresults ? type.nresults : 1, sizeof *res->results);
    if (!res->results) abort();
    twasm_call(ex.of.func, args, nargs, res->results, type.nresults, &res->trap);
  }
  free(args);
  return o;
}

static sr_outcome sr_get(twasm_instance *inst, const sj_value *action, sr_result *res, char *detail,
                         size_t cap) {
  const sj_value *field = sj_get(action, "field");
  twasm_extern ex;
  if (!field || field->kind != SJ_STRING || !twasm_instance_export(inst, field->str, (uint32_t)field->len, &ex) ||
      ex.kind != TWASM_EXTERN_GLOBAL)
    return sr_fail(detail, cap, "no exported global \"%s\"", field ? field->str : "");
  res->results = malloc(sizeof *res->results);
  if (!res->results) abort();
  res->results[0] = twasm_global_get(ex.of.global);
  res->nresults = 1;
  return SR_PASS;
}

/* Runs the action of cmd.  SR_PASS means it ran: res->trap.code says
 * whether it trapped.  The caller frees res->results. */
static sr_outcome sr_action(sr_file *f, const sj_value *cmd, sr_result *res, char *detail, size_t cap) {
  memset(res, 0, sizeof *res);
  const sj_value *action = sj_get(cmd, "action");
  const char *type = sj_str(action, "type");
  twasm_instance *inst;
  sr_outcome o = sr_target(f, sj_str(action, "module"), &inst, detail, cap);
  if (o != SR_PASS) return o;
  if (type && strcmp(type, "invoke") == 0) return sr_invoke(inst, action, res, detail, cap);
  if (type && strcmp(type, "get") == 0) return sr_get(inst, action, res, detail, cap);
  return sr_fail(detail, cap, "unknown action type %s", type ? type : "(none)");
}

static sr_outcome sr_cmd_action(sr_file *f, const sj_value *cmd, char *detail, size_t cap) {
  sr_result res;
  sr_outcome o = sr_action(f, cmd, &res, detail, cap);
  if (o == SR_PASS && res.trap.code)
    o = sr_fail(detail, cap, "trapped: %s", res.trap.message);
  free(res.results);
  return o;
}

/* Compares results with the expectations, saying where they differ. */
static sr_outcome sr_compare(const sj_value *expected, const sr_result *res, char *detail, size_t cap) {
  size_t n = expected && expected->kind == SJ_ARRAY ? expected->len : 0;
  if (n != res->nresults) {
    snprintf(detail, cap, "expected %zu results, got %u", n, res->nresults);
    return SR_FAIL;
  }
  for (size_t i = 0; i < n; i++) {
    sv_expect e;
    char err[256], want[128], got[128];
    sv_status st = sv_parse_expect(&expected->items[i], &e, err, sizeof err);
    if (st == SV_UNSUPPORTED) {
      snprintf(detail, cap, "%s", err);
      return SR_SKIP;
    }
    if (st != SV_OK) return sr_fail(detail, cap, "expected value: %s", err);
    if (sv_matches(&e, &res->results[i])) continue;
    sv_format_expect(&e, want, sizeof want);
    sv_format(&res->results[i], got, sizeof got);
    snprintf(detail, cap, "result %zu: expected %s, got %s", i, want, got);
    return SR_FAIL;
  }
  return SR_PASS;
}

/* Expectations are checked for kinds twasm cannot express before running. */
static sr_outcome sr_check_expected(const sj_value *expected, char *detail, size_t cap) {
  for (size_t i = 0; expected && expected->kind == SJ_ARRAY && i < expected->len; i++) {
    sv_expect e;
    char err[256];
    if (sv_parse_expect(&expected->items[i], &e, err, sizeof err) == SV_UNSUPPORTED) {
      snprintf(detail, cap, "%s", err);
      return SR_SKIP;
    }
  }
  return SR_PASS;
}

/* (either A B ...) of the relaxed SIMD tests: a single result that
 * matches one of the alternatives (wast2json lists them under "either"). */
static sr_outcome sr_compare_either(const sj_value *either, const sr_result *res, char *detail,
                                    size_t cap) {
  sr_outcome o = sr_fail(detail, cap, "either without alternatives");
  for (size_t i = 0; either->kind == SJ_ARRAY && i < either->len; i++) {
    sj_value one = {.kind = SJ_ARRAY, .len = 1, .items = &either->items[i]};
    o = sr_compare(&one, res, detail, cap);
    if (o == SR_PASS) {
      detail[0] = '\0'; /* an earlier alternative's mismatch is no news on a pass */
      return o;
    }
  }
  if (o == SR_FAIL) {
    size_t n = strlen(detail);
    snprintf(detail + n, cap - n, " (nor any other of %zu alternatives)", either->len);
  }
  return o;
}

static sr_outcome sr_cmd_assert_return(sr_file *f, const sj_value *cmd, char *detail, size_t cap) {
  const sj_value *expected = sj_get(cmd, "expected"), *either = sj_get(cmd, "either");
  sr_outcome o = sr_check_expected(either ? either : expected, detail, cap);
  if (o != SR_PASS) return o;
  sr_result res;
  o = sr_action(f, cmd, &res, detail, cap);
  if (o == SR_PASS && res.trap.code)
    o = sr_fail(detail, cap, "expected results, got trap: %s", res.trap.message);
  else if (o == SR_PASS)
    o = either ? sr_compare_either(either, &res, detail, cap) : sr_compare(expected, &res, detail, cap);
  free(res.results);
  return o;
}

/* assert_trap / assert_uninstantiable with a module (want SM_TRAPPED) and
 * assert_unlinkable (want SM_LINK_FAILED): instantiation must fail so. */
static sr_outcome sr_instantiation_fails(sr_file *f, const sj_value *cmd, sm_result want,
                                         char *detail, size_t cap) {
  const char *text = sj_str(cmd, "text");
  const char *what = want == SM_TRAPPED ? "trap" : "link error";
  const char *other = want == SM_TRAPPED ? "link error" : "trap";
  const twasm_module *m;
  sr_outcome o = sr_load(f, cmd, &m, detail, cap);
  if (o != SR_PASS) return o;
  char err[512];
  twasm_instance *inst;
  sm_result r = sm_instantiate(&f->modules, m, &inst, err, sizeof err);
  if (r == SM_OK) return sr_fail(detail, cap, "expected %s \"%s\", instantiation succeeded", what, text ? text : "");
  if (r != want) return sr_fail(detail, cap, "expected %s \"%s\", got %s: %s", what, text ? text : "", other, err);
  if (!sr_message_matches(err, text)) return sr_fail(detail, cap, "expected %s \"%s\", got \"%s\"", what, text, err);
  return SR_PASS;
}

/* An action that must trap with text (for exhaustion: the trap code is
 * enough). */
static sr_outcome sr_action_traps(sr_file *f, const sj_value *cmd, uint32_t code, char *detail, size_t cap) {
  const char *text = sj_str(cmd, "text");
  sr_result res;
  sr_outcome o = sr_action(f, cmd, &res, detail, cap);
  free(res.results);
  if (o != SR_PASS) return o;
  if (!res.trap.code) return sr_fail(detail, cap, "expected trap \"%s\", returned normally", text ? text : "");
  if (res.trap.code != code && !sr_message_matches(res.trap.message, text))
    return sr_fail(detail, cap, "expected trap \"%s\", got \"%s\"", text ? text : "", res.trap.message);
  return SR_PASS;
}

static sr_outcome sr_cmd_assert_trap(sr_file *f, const sj_value *cmd, char *detail, size_t cap) {
  if (sj_get(cmd, "filename")) return sr_instantiation_fails(f, cmd, SM_TRAPPED, detail, cap);
  return sr_action_traps(f, cmd, TWASM_TRAP_COUNT, detail, cap);
}

static sr_outcome sr_cmd_assert_exhaustion(sr_file *f, const sj_value *cmd, char *detail, size_t cap) {
  return sr_action_traps(f, cmd, TWASM_TRAP_STACK_EXHAUSTED, detail, cap);
}

static sr_outcome sr_cmd_assert_unlinkable(sr_file *f, const sj_value *cmd, char *detail, size_t cap) {
  return sr_instantiation_fails(f, cmd, SM_LINK_FAILED, detail, cap);
}

static sr_outcome sr_cmd_assert_uninstantiable(sr_file *f, const sj_value *cmd, char *detail, size_t cap) {
  return sr_instantiation_fails(f, cmd, SM_TRAPPED, detail, cap);
}

/* Decode + validate only; the statuses that count as rejection differ. */
static sr_outcome sr_check_rejects(sr_file *f, const sj_value *cmd, bool malformed, char *detail, size_t cap) {
  char path[4200];
  sr_module_path(f, cmd, path, sizeof path);
  const char *text = sj_str(cmd, "text");
  uint8_t *bytes = NULL;
  size_t size = 0;
  tw_diag d = {0};
  drv_status st = drv_read_input(path, &bytes, &size, &d);
  if (st == DRV_OK) st = drv_check(bytes, size, path, &d);
  free(bytes);
  if (st == DRV_MALFORMED || st == DRV_INVALID) return SR_PASS;
  if (st == DRV_OK)
    return sr_fail(detail, cap, "expected %s \"%s\", the module was accepted",
                   malformed ? "malformed" : "invalid", text ? text : "");
  return sr_fail(detail, cap, "%s: %s", sr_drv_name(st), d.msg);
}

static sr_outcome sr_cmd_assert_invalid(sr_file *f, const sj_value *cmd, char *detail, size_t cap) {
  return sr_check_rejects(f, cmd, false, detail, cap);
}

/* Text modules go through wabt's wat2wasm (drv_read_input), which must
 * refuse them; binary ones must fail to decode or validate. */
static sr_outcome sr_cmd_assert_malformed(sr_file *f, const sj_value *cmd, char *detail, size_t cap) {
  return sr_check_rejects(f, cmd, true, detail, cap);
}

void sr_describe(const sj_value *cmd, char *buf, size_t cap) {
  const sj_value *action = sj_get(cmd, "action");
  const char *field = sj_str(action, "field");
  const char *type = sj_str(action, "type");
  buf[0] = 0;
  if (!field || !type) return;
  int n = snprintf(buf, cap, strcmp(type, "get") == 0 ? " get \"%s\"" : " \"%s\"(", field);
  const sj_value *args = sj_get(action, "args");
  for (size_t i = 0; args && args->kind == SJ_ARRAY && i < args->len && n > 0 && (size_t)n < cap; i++) {
    twasm_val v;
    char err[128], text[96];
    if (sv_parse_arg(&args->items[i], &v, err, sizeof err) == SV_OK) sv_format(&v, text, sizeof text);
    else snprintf(text, sizeof text, "?");
    n += snprintf(buf + n, cap - (size_t)n, "%s%s", i ? ", " : "", text);
  }
  if (strcmp(type, "get") != 0 && n > 0 && (size_t)n < cap) snprintf(buf + n, cap - (size_t)n, ")");
}

static const struct {
  const char *type;
  sr_outcome (*run)(sr_file *f, const sj_value *cmd, char *detail, size_t cap);
} sr_commands[] = {
    {"module", sr_cmd_module},
    {"register", sr_cmd_register},
    {"action", sr_cmd_action},
    {"assert_return", sr_cmd_assert_return},
    {"assert_trap", sr_cmd_assert_trap},
    {"assert_exhaustion", sr_cmd_assert_exhaustion},
    {"assert_invalid", sr_cmd_assert_invalid},
    {"assert_malformed", sr_cmd_assert_malformed},
    {"assert_unlinkable", sr_cmd_assert_unlinkable},
    {"assert_uninstantiable", sr_cmd_assert_uninstantiable},
};

sr_outcome sr_command(sr_file *f, const sj_value *cmd, char *detail, size_t cap) {
  const char *type = sj_str(cmd, "type");
  detail[0] = 0;
  for (size_t i = 0; type && i < sizeof sr_commands / sizeof sr_commands[0]; i++)
    if (strcmp(type, sr_commands[i].type) == 0) return sr_commands[i].run(f, cmd, detail, cap);
  return sr_fail(detail, cap, "unknown command type %s", type ? type : "(none)");
}
