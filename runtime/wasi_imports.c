/* wasi_imports.c: the table of wasi_snapshot_preview1 functions (name,
 * signature, implementation) and the host functions that serve them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wasi_internal.h"

#define WASI_MODULE "wasi_snapshot_preview1"

/* params: one letter per parameter, 'i' i32, 'I' i64; every function
 * returns an i32 errno except proc_exit, which returns nothing. */
typedef struct wasi_entry {
  const char *name;
  const char *params;
  wasi_impl impl;
} wasi_entry;

#define E(name, params) {#name, params, wasi_##name}
static const wasi_entry wasi_entries[] = {
    E(args_get, "ii"), E(args_sizes_get, "ii"), E(environ_get, "ii"),
    E(environ_sizes_get, "ii"), E(clock_res_get, "ii"), E(clock_time_get, "iIi"),
    E(fd_advise, "iIIi"), E(fd_allocate, "iII"), E(fd_close, "i"), E(fd_datasync, "i"),
    E(fd_fdstat_get, "ii"), E(fd_fdstat_set_flags, "ii"), E(fd_fdstat_set_rights, "iII"),
    E(fd_filestat_get, "ii"), E(fd_filestat_set_size, "iI"),
    E(fd_filestat_set_times, "iIIi"), E(fd_pread, "iiiIi"), E(fd_prestat_get, "ii"),
    E(fd_prestat_dir_name, "iii"), E(fd_pwrite, "iiiIi"), E(fd_read, "iiii"),
    E(fd_readdir, "iiiIi"), E(fd_renumber, "ii"), E(fd_seek, "iIii"), E(fd_sync, "i"),
    E(fd_tell, "ii"), E(fd_write, "iiii"), E(path_create_directory, "iii"),
    E(path_filestat_get, "iiiii"), E(path_filestat_set_times, "iiiiIIi"),
    E(path_link, "iiiiiii"), E(path_open, "iiiiiIIii"), E(path_readlink, "iiiiii"),
    E(path_remove_directory, "iii"), E(path_rename, "iiiiii"), E(path_symlink, "iiiii"),
    E(path_unlink_file, "iii"), E(poll_oneoff, "iiii"), E(proc_exit, "i"),
    E(proc_raise, "i"), E(sched_yield, ""), E(random_get, "ii"), E(sock_accept, "iii"),
    E(sock_recv, "iiiiii"), E(sock_send, "iiiii"), E(sock_shutdown, "ii"),
};
#undef E
#define WASI_NFUNCS (sizeof wasi_entries / sizeof wasi_entries[0])
#define WASI_MAX_PARAMS 9

/* The environment of one host function. */
struct wasi_binding {
  twasm_wasi *w;
  const wasi_entry *entry;
};

static int wasi_host_call(void *env, twasm_instance *caller, const twasm_val *args,
                          twasm_val *results, twasm_trap *trap) {
  const struct wasi_binding *b = env;
  wasi_call c = {.w = b->w, .trap = trap};
  twasm_memory *mem = caller ? twasm_instance_memory(caller, 0) : NULL;
  if (mem) {
    c.mem = twasm_memory_data(mem);
    c.mem_size = twasm_memory_size(mem);
  }
  uint32_t err = b->entry->impl(&c, args);
  if (err == WASI_UNWIND) return 1;
  if (b->entry->impl != wasi_proc_exit) results[0].of.i32 = (int32_t)err;
  return 0;
}

static twasm_func *make_func(twasm_wasi *w, size_t i) {
  const wasi_entry *e = &wasi_entries[i];
  twasm_valkind params[WASI_MAX_PARAMS];
  static const twasm_valkind result = TWASM_I32;
  uint32_t n = (uint32_t)strlen(e->params);
  for (uint32_t p = 0; p < n; p++) params[p] = e->params[p] == 'I' ? TWASM_I64 : TWASM_I32;
  bool returns = e->impl != wasi_proc_exit;
  twasm_functype type = {.nparams = n, .nresults = returns ? 1 : 0, .params = params,
                         .results = &result};
  w->bindings[i] = (struct wasi_binding){.w = w, .entry = e};
  return twasm_func_new_host(&type, wasi_host_call, &w->bindings[i]);
}

/* Host functions are made on first use and shared by every instance. */
static twasm_func *wasi_func(twasm_wasi *w, size_t i) {
  if (!w->funcs) {
    w->funcs = calloc(WASI_NFUNCS, sizeof *w->funcs);
    w->bindings = calloc(WASI_NFUNCS, sizeof *w->bindings);
    if (!w->funcs || !w->bindings) {
      wasi_funcs_free(w);
      return NULL;
    }
  }
  if (!w->funcs[i]) w->funcs[i] = make_func(w, i);
  return w->funcs[i];
}

void wasi_funcs_free(twasm_wasi *w) {
  for (size_t i = 0; w->funcs && i < WASI_NFUNCS; i++) twasm_func_delete(w->funcs[i]);
  free(w->funcs);
  free(w->bindings);
  w->funcs = NULL;
  w->bindings = NULL;
}

static void import_error(twasm_trap *err, const twasm_import_info *info, const char *what) {
  if (!err) return;
  memset(err, 0, sizeof *err);
  err->func_index = UINT32_MAX;
  snprintf(err->message, sizeof err->message, "%s %.*s::%.*s", what, (int)info->module_len,
           info->module, (int)info->name_len, info->name);
}

static bool is_wasi_func(const twasm_import_info *info, size_t *index) {
  if (info->kind != TWASM_EXTERN_FUNC || info->module_len != strlen(WASI_MODULE) ||
      memcmp(info->module, WASI_MODULE, info->module_len))
    return false;
  for (size_t i = 0; i < WASI_NFUNCS; i++) {
    if (strlen(wasi_entries[i].name) == info->name_len &&
        !memcmp(wasi_entries[i].name, info->name, info->name_len)) {
      *index = i;
      return true;
    }
  }
  return false;
}

bool twasm_wasi_imports(twasm_wasi *w, const twasm_module *m, twasm_extern *imports,
                        twasm_trap *err) {
  uint32_t n = twasm_module_import_count(m);
  for (uint32_t i = 0; i < n; i++) {
    twasm_import_info info;
    size_t index;
    twasm_module_import(m, i, &info);
    bool wasi_module = info.module_len == strlen(WASI_MODULE) &&
                       !memcmp(info.module, WASI_MODULE, info.module_len);
    if (!wasi_module) continue; /* the embedder's own imports */
    if (!is_wasi_func(&info, &index)) {
      import_error(err, &info, "unknown import");
      return false;
    }
    twasm_func *f = wasi_func(w, index);
    if (!f) {
      import_error(err, &info, "out of memory making");
      return false;
    }
    imports[i] = (twasm_extern){.kind = TWASM_EXTERN_FUNC, .of.func = f};
  }
  return true;
}
