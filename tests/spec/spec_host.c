/* spec_host.c: the "spectest" host module the scripts import from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"

enum { SH_NFUNCS = 7, SH_NGLOBALS = 4 };

/* A host function's environment: the arguments' number is not passed. */
typedef struct {
  const sh_spectest *host;
  uint32_t nparams;
} sh_env;

struct sh_spectest {
  bool verbose;
  sh_env envs[SH_NFUNCS];
  twasm_func *funcs[SH_NFUNCS];
  twasm_global *globals[SH_NGLOBALS];
  twasm_table *table;
  twasm_memory *memory;
};

static const struct {
  const char *name;
  uint32_t nparams;
  twasm_valkind params[2];
} sh_func_defs[SH_NFUNCS] = {
    {"print", 0, {0}},
    {"print_i32", 1, {TWASM_I32}},
    {"print_i64", 1, {TWASM_I64}},
    {"print_f32", 1, {TWASM_F32}},
    {"print_f64", 1, {TWASM_F64}},
    {"print_i32_f32", 2, {TWASM_I32, TWASM_F32}},
    {"print_f64_f64", 2, {TWASM_F64, TWASM_F64}},
};

static const char *const sh_global_names[SH_NGLOBALS] = {
    "global_i32", "global_i64", "global_f32", "global_f64",
};

/* Prints its arguments as the reference interpreter does, under -v only. */
static int sh_print(void *env, twasm_instance *caller, const twasm_val *args,
                    twasm_val *results, twasm_trap *trap) {
  (void)caller, (void)results, (void)trap;
  const sh_env *e = env;
  if (!e->host->verbose) return 0;
  if (e->nparams == 0) printf("spectest: print\n");
  for (uint32_t i = 0; i < e->nparams; i++) {
    char buf[96];
    sv_format(&args[i], buf, sizeof buf);
    printf("spectest: %s\n", buf);
  }
  fflush(stdout);
  return 0;
}

sh_spectest *sh_new(bool verbose) {
  sh_spectest *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  h->verbose = verbose;
  for (int i = 0; i < SH_NFUNCS; i++) {
    twasm_functype type = {sh_func_defs[i].nparams, 0, sh_func_defs[i].params, NULL};
    h->envs[i] = (sh_env){h, sh_func_defs[i].nparams};
    h->funcs[i] = twasm_func_new_host(&type, sh_print, &h->envs[i]);
  }
  twasm_val v[SH_NGLOBALS] = {{.kind = TWASM_I32, .of.i32 = 666},
                              {.kind = TWASM_I64, .of.i64 = 666},
                              {.kind = TWASM_F32, .of.f32 = 666.6f},
                              {.kind = TWASM_F64, .of.f64 = 666.6}};
  for (int i = 0; i < SH_NGLOBALS; i++) h->globals[i] = twasm_global_new(v[i].kind, false, v[i]);
  h->table = twasm_table_new(TWASM_FUNCREF, 10, 20, true, NULL);
  h->memory = twasm_memory_new(1, 2, true);
  bool ok = h->table && h->memory;
  for (int i = 0; i < SH_NFUNCS; i++) ok = ok && h->funcs[i];
  for (int i = 0; i < SH_NGLOBALS; i++) ok = ok && h->globals[i];
  if (!ok) {
    sh_delete(h);
    return NULL;
  }
  return h;
}

void sh_delete(sh_spectest *h) {
  if (!h) return;
  for (int i = 0; i < SH_NFUNCS; i++) twasm_func_delete(h->funcs[i]);
  for (int i = 0; i < SH_NGLOBALS; i++) twasm_global_delete(h->globals[i]);
  if (h->table) twasm_table_delete(h->table);
  if (h->memory) twasm_memory_delete(h->memory);
  free(h);
}

static bool sh_is(const char *want, const char *name, size_t len) {
  return strlen(want) == len && memcmp(want, name, len) == 0;
}

bool sh_lookup(sh_spectest *h, const char *name, size_t len, twasm_extern *out) {
  for (int i = 0; i < SH_NFUNCS; i++) {
    if (!sh_is(sh_func_defs[i].name, name, len)) continue;
    out->kind = TWASM_EXTERN_FUNC;
    out->of.func = h->funcs[i];
    return true;
  }
  for (int i = 0; i < SH_NGLOBALS; i++) {
    if (!sh_is(sh_global_names[i], name, len)) continue;
    out->kind = TWASM_EXTERN_GLOBAL;
    out->of.global = h->globals[i];
    return true;
  }
  if (sh_is("table", name, len)) {
    out->kind = TWASM_EXTERN_TABLE;
    out->of.table = h->table;
    return true;
  }
  if (sh_is("memory", name, len)) {
    out->kind = TWASM_EXTERN_MEMORY;
    out->of.memory = h->memory;
    return true;
  }
  return false;
}
