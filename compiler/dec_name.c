/* dec_name.c: the "name" custom section (module and function names). */
#include "dec_internal.h"

enum { NAME_MODULE = 0, NAME_FUNCTION = 1 };

static bool function_names(dec_reader *r) {
  uint32_t n, index;
  wasm_name name;
  if (!dec_count(r, &n)) return false;
  for (uint32_t i = 0; i < n; i++) {
    if (!dec_u32r(r, &index) || !dec_name(r, &name)) return false;
    if (index < r->m->nfuncs) r->m->funcs[index].name = name.bytes;
  }
  return true;
}

static bool subsection(dec_reader *r) {
  uint8_t id;
  uint32_t size;
  wasm_name name;
  if (!dec_byte(r, &id) || !dec_bytes_len(r, &size)) return false;
  size_t outer_end = r->end;
  r->end = r->pos + size;
  bool ok = true;
  if (id == NAME_MODULE && (ok = dec_name(r, &name))) r->m->module_name = name.bytes;
  else if (id == NAME_FUNCTION) ok = function_names(r);
  r->pos = r->end;
  r->end = outer_end;
  return ok;
}

/* Custom sections never make a module malformed: a bad name section just
 * stops being read, keeping the names found before the problem. */
void dec_name_section(dec_reader *r, size_t start, size_t end) {
  tw_diag ignored;
  dec_reader nr = *r;
  nr.pos = start;
  nr.end = end;
  nr.d = &ignored;
  while (nr.pos < nr.end && subsection(&nr)) {
  }
}
