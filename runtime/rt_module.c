/* rt_module.c: introspection of a compiled module's imports and exports. */
#include "rt_internal.h"

uint32_t twasm_module_import_count(const twasm_module *m) { return m->nimports; }

void twasm_module_import(const twasm_module *m, uint32_t i, twasm_import_info *out) {
  const twasm_import_abi *im = &m->imports[i];
  out->module = im->module;
  out->name = im->name;
  out->module_len = im->module_len;
  out->name_len = im->name_len;
  out->kind = (twasm_externkind)im->kind;
}

uint32_t twasm_module_export_count(const twasm_module *m) { return m->nexports; }

const char *twasm_module_export_name(const twasm_module *m, uint32_t i, uint32_t *len) {
  if (len) *len = m->exports[i].name_len;
  return m->exports[i].name;
}
