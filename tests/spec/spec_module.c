/* spec_module.c: the modules of one .wast file: compiling them in-process,
 * loading them with dlopen, resolving imports, naming and registering. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spec.h"

/* Grows a malloc'd array of elem-sized items to hold one more; aborts when
 * host memory runs out, like the arena does. */
static void *sm_reserve(void *items, size_t n, size_t *cap, size_t elem) {
  if (n < *cap) return items;
  *cap = *cap ? *cap * 2 : 16;
  items = realloc(items, *cap * elem);
  if (!items) abort();
  return items;
}

void sm_init(sm_state *s, const char *dir, const drv_options *opts, sh_spectest *host) {
  memset(s, 0, sizeof *s);
  s->dir = dir;
  s->opts = *opts;
  s->host = host;
}

static void sm_free_names(sm_named *list, size_t n) {
  for (size_t i = 0; i < n; i++) free(list[i].name);
  free(list);
}

/* Instances go first, newest first, then the spectest objects, whose
 * table may keep a failed instance alive; all code must stay mapped until
 * the last of them is gone. */
void sm_finish(sm_state *s) {
  for (size_t i = s->ninsts; i-- > 0;) twasm_instance_delete(s->insts[i]);
  sh_delete(s->host);
  for (size_t i = s->nhandles; i-- > 0;) dlclose(s->handles[i]);
  free(s->insts);
  free(s->handles);
  sm_free_names(s->named, s->nnamed);
  sm_free_names(s->registered, s->nregistered);
  memset(s, 0, sizeof *s);
}

/* Object -> shared object -> dlopen; the files go as soon as they are
 * mapped. */
static sm_result sm_load_object(sm_state *s, const uint8_t *obj, size_t obj_size,
                                const twasm_module **out, char *err, size_t cap) {
  char o_path[4096], so_path[4096];
  unsigned n = s->counter++;
  snprintf(o_path, sizeof o_path, "%s/%u.o", s->dir, n);
  snprintf(so_path, sizeof so_path, "%s/%u.so", s->dir, n);
  FILE *f = fopen(o_path, "wb");
  bool written = f && fwrite(obj, 1, obj_size, f) == obj_size;
  if (f && fclose(f) != 0) written = false;
  if (!written) {
    unlink(o_path);
    snprintf(err, cap, "cannot write %s", o_path);
    return SM_LOAD_FAILED;
  }
  tw_diag d = {0};
  bool linked = drv_link_shared(o_path, so_path, &d);
  unlink(o_path);
  if (!linked) {
    snprintf(err, cap, "%s", d.msg);
    return SM_LOAD_FAILED;
  }
  void *h = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
  unlink(so_path);
  if (!h) {
    snprintf(err, cap, "dlopen: %s", dlerror());
    return SM_LOAD_FAILED;
  }
  s->handles = sm_reserve(s->handles, s->nhandles, &s->cap_handles, sizeof *s->handles);
  s->handles[s->nhandles++] = h;
  const char *sym = s->opts.desc_symbol ? s->opts.desc_symbol : "twasm_module";
  *out = dlsym(h, sym);
  if (!*out) {
    snprintf(err, cap, "no symbol %s in the compiled module", sym);
    return SM_LOAD_FAILED;
  }
  return SM_OK;
}

sm_result sm_load(sm_state *s, const char *wasm_path, const twasm_module **out,
                  drv_status *status, char *err, size_t cap) {
  uint8_t *bytes = NULL, *obj = NULL;
  size_t size = 0, obj_size = 0;
  tw_diag d = {0};
  *status = drv_read_input(wasm_path, &bytes, &size, &d);
  if (*status == DRV_OK) *status = drv_compile(bytes, size, wasm_path, &s->opts, &obj, &obj_size, &d);
  free(bytes);
  if (*status != DRV_OK) {
    if (d.offset != TW_DIAG_NO_OFFSET) snprintf(err, cap, "0x%x: %s", (unsigned)d.offset, d.msg);
    else snprintf(err, cap, "%s", d.msg);
    return SM_COMPILE_FAILED;
  }
  sm_result r = sm_load_object(s, obj, obj_size, out, err, cap);
  free(obj);
  return r;
}

/* One import by (module, name): spectest, or an export of a registered
 * instance; NULL kind pointer when there is none. */
static bool sm_resolve(sm_state *s, const twasm_import_info *im, twasm_extern *out) {
  static const char spectest[] = "spectest";
  if (im->module_len == sizeof spectest - 1 && memcmp(im->module, spectest, im->module_len) == 0)
    return sh_lookup(s->host, im->name, im->name_len, out);
  for (size_t i = s->nregistered; i-- > 0;) {
    const sm_named *r = &s->registered[i];
    if (strlen(r->name) != im->module_len || memcmp(r->name, im->module, im->module_len) != 0)
      continue;
    return twasm_instance_export(r->inst, im->name, im->name_len, out);
  }
  return false;
}

sm_result sm_instantiate(sm_state *s, const twasm_module *m, twasm_instance **out, char *err,
                         size_t cap) {
  uint32_t n = twasm_module_import_count(m);
  twasm_extern *imports = calloc(n ? n : 1, sizeof *imports);
  if (!imports) abort();
  for (uint32_t i = 0; i < n; i++) {
    twasm_import_info im;
    twasm_module_import(m, i, &im);
    if (!sm_resolve(s, &im, &imports[i])) {
      snprintf(err, cap, "unknown import \"%.*s\" \"%.*s\"", (int)im.module_len, im.module,
               (int)im.name_len, im.name);
      free(imports);
      return SM_LINK_FAILED;
    }
  }
  twasm_trap trap = {0};
  *out = twasm_instance_new(m, imports, n, &trap);
  free(imports);
  if (!*out) {
    snprintf(err, cap, "%s", trap.message);
    return trap.code == TWASM_TRAP_NONE ? SM_LINK_FAILED : SM_TRAPPED;
  }
  s->insts = sm_reserve(s->insts, s->ninsts, &s->cap_insts, sizeof *s->insts);
  s->insts[s->ninsts++] = *out;
  return SM_OK;
}

/* Names are looked up newest first, so a later module takes a name over. */
void sm_name(sm_named **list, size_t *n, size_t *cap, const char *name, twasm_instance *inst) {
  *list = sm_reserve(*list, *n, cap, sizeof **list);
  char *copy = strdup(name);
  if (!copy) abort();
  (*list)[(*n)++] = (sm_named){copy, inst};
}

const sm_named *sm_find(const sm_named *list, size_t n, const char *name) {
  for (size_t i = n; i-- > 0;)
    if (strcmp(list[i].name, name) == 0) return &list[i];
  return NULL;
}
