/* val_module.c: module-level validation: types of functions, limits, start, exports, then every body. */
#include "val_internal.h"

#include <stdlib.h>
#include <string.h>

#include "twasm_abi.h"

#define MAX_MEMORY_PAGES 65536u
#define MAX_TABLE_SIZE UINT32_MAX

/* Imported functions are located by their import entry. */
static uint32_t import_offset(const wasm_module *m, bool imported, uint32_t import_index) {
  return imported && import_index < m->nimports ? m->imports[import_index].offset
                                                : TW_DIAG_NO_OFFSET;
}

static bool func_types(val_ctx *c) {
  const wasm_module *m = c->m;
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    const wasm_func *f = &m->funcs[i];
    c->offset = f->imported ? import_offset(m, true, f->import_index) : f->body_offset;
    if (f->type_index >= m->ntypes) return val_unknown(c, "type", f->type_index);
  }
  return true;
}

/* As the reference interpreter: the range first, then min <= max.  Errors
 * point at the limits themselves. */
static bool limits(val_ctx *c, const wasm_limits *l, uint64_t range, const char *range_msg) {
  c->offset = l->offset;
  if (l->min > range || (l->has_max && l->max > range)) return val_fail(c, range_msg);
  if (l->has_max && l->min > l->max)
    return val_fail(c, "size minimum must not be greater than maximum");
  return true;
}

static bool tables_memories(val_ctx *c) {
  const wasm_module *m = c->m;
  for (uint32_t i = 0; i < m->ntables; i++)
    if (!limits(c, &m->tables[i].limits, MAX_TABLE_SIZE, "table size must be at most 2^32-1"))
      return false;
  for (uint32_t i = 0; i < m->nmems; i++) {
    if (!limits(c, &m->mems[i].limits, MAX_MEMORY_PAGES,
                "memory size must be at most 65536 pages (4GiB)"))
      return false;
    /* Valid Wasm, but more than twasmc's memories can hold: they stop one
     * page short of 4 GiB, so that the end of memory stays below 2^32
     * (docs/ARCHITECTURE.md, "Memory and bounds checks").  A larger
     * maximum only caps memory.grow, which fails there as the spec
     * allows. */
    if (m->mems[i].limits.min > TWASM_MAX_PAGES)
      return val_fail(c, "memory of 65536 pages (4 GiB) at start: twasmc supports at most 65535 "
                         "pages, 4 GiB less one page (implementation limit)");
  }
  return true;
}

static bool bodies(val_ctx *c) {
  for (uint32_t i = 0; i < c->m->nfuncs; i++)
    if (!c->m->funcs[i].imported && !val_func(c, i)) return false;
  return true;
}

static bool start(val_ctx *c) {
  const wasm_module *m = c->m;
  if (!m->has_start) return true;
  c->offset = TW_DIAG_NO_OFFSET;
  if (m->start >= m->nfuncs) return val_unknown(c, "function", m->start);
  const wasm_functype *ft = &m->types[m->funcs[m->start].type_index];
  if (ft->nparams != 0 || ft->nresults != 0) return val_fail(c, "start function");
  return true;
}

static int name_cmp(const void *a, const void *b) {
  const wasm_name *x = &(*(const wasm_export *const *)a)->name;
  const wasm_name *y = &(*(const wasm_export *const *)b)->name;
  uint32_t n = x->len < y->len ? x->len : y->len;
  int r = memcmp(x->bytes, y->bytes, n);
  if (r) return r;
  return (x->len > y->len) - (x->len < y->len);
}

/* Sorted by name, duplicates are neighbours; the reported one is the
 * earliest export whose name was already taken. */
static bool unique_names(val_ctx *c) {
  const wasm_module *m = c->m;
  if (m->nexports < 2) return true;
  const wasm_export **sorted = malloc(m->nexports * sizeof *sorted);
  if (!sorted) return val_fail(c, "out of memory");
  for (uint32_t i = 0; i < m->nexports; i++) sorted[i] = &m->exports[i];
  qsort(sorted, m->nexports, sizeof *sorted, name_cmp);
  uint32_t first_dup = UINT32_MAX;
  for (uint32_t i = 1; i < m->nexports; i++) {
    if (name_cmp(&sorted[i - 1], &sorted[i]) != 0) continue;
    uint32_t later = sorted[i]->offset > sorted[i - 1]->offset ? sorted[i]->offset
                                                                : sorted[i - 1]->offset;
    if (later < first_dup) first_dup = later;
  }
  free(sorted);
  if (first_dup == UINT32_MAX) return true;
  c->offset = first_dup;
  return val_fail(c, "duplicate export name");
}

static bool exports(val_ctx *c) {
  static const char *const kind_names[] = {"function", "table", "memory", "global"};
  const wasm_module *m = c->m;
  for (uint32_t i = 0; i < m->nexports; i++) {
    const wasm_export *e = &m->exports[i];
    const uint32_t counts[] = {m->nfuncs, m->ntables, m->nmems, m->nglobals};
    c->offset = e->offset;
    if (e->kind > EXT_GLOBAL) return val_fail(c, "malformed export kind");
    if (e->index >= counts[e->kind]) return val_unknown(c, kind_names[e->kind], e->index);
  }
  return unique_names(c);
}

static bool check_all(val_ctx *c) {
  if (!func_types(c) || !val_globals(c) || !tables_memories(c) || !val_elems(c) ||
      !val_datas(c) || !bodies(c) || !start(c) || !exports(c))
    return false;
  if (c->m->nmems > 1) {
    c->offset = import_offset(c->m, c->m->mems[1].imported, c->m->mems[1].import_index);
    return val_fail(c, "multiple memories");
  }
  return true;
}

bool val_module(const wasm_module *m, tw_diag *d) {
  val_ctx c = {.m = m, .d = d};
  bool *declared = calloc(m->nfuncs ? m->nfuncs : 1, sizeof *declared);
  if (!declared) return tw_fail(d, TW_DIAG_NO_OFFSET, "out of memory");
  val_declared_refs(m, declared);
  c.declared = declared;
  bool ok = check_all(&c);
  free(declared);
  free(c.locals);
  free(c.vals);
  free(c.ctrls);
  return ok;
}
