/* dec_module.c: the module header, the section sequence and the checks that
 * span sections (stage 1 entry point). */
#include "dec_internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { SEC_CUSTOM = 0, SEC_CODE = 10, SEC_DATACOUNT = 12, SEC_LAST = 12, SEC_TAG = 13 };

typedef bool (*section_fn)(dec_reader *r);

/* Known sections by id, with their rank in the required order (data count
 * comes between element and code). */
static const struct {
  section_fn decode;
  uint8_t rank;
} sections[SEC_LAST + 1] = {
  [1] = {dec_type_section, 1},      [2] = {dec_import_section, 2},
  [3] = {dec_function_section, 3},  [4] = {dec_table_section, 4},
  [5] = {dec_memory_section, 5},    [6] = {dec_global_section, 6},
  [7] = {dec_export_section, 7},    [8] = {dec_start_section, 8},
  [9] = {dec_elem_section, 9},      [12] = {dec_datacount_section, 10},
  [10] = {dec_code_section, 11},    [11] = {dec_data_section, 12},
};

static bool header(dec_reader *r) {
  static const uint8_t magic[4] = {0x00, 0x61, 0x73, 0x6d};
  static const uint8_t version[4] = {0x01, 0x00, 0x00, 0x00};
  if (r->size < 4) return tw_fail(r->d, (uint32_t)r->size, "unexpected end");
  if (memcmp(r->bytes, magic, 4) != 0) return tw_fail(r->d, 0, "magic header not detected");
  if (r->size < 8) return tw_fail(r->d, (uint32_t)r->size, "unexpected end");
  if (memcmp(r->bytes + 4, version, 4) != 0) return tw_fail(r->d, 4, "unknown binary version");
  r->pos = 8;
  return true;
}

/* The custom sections read once the module is decoded: "name", and the
 * DWARF ones that name functions it leaves unnamed. */
typedef struct {
  dec_range name;
  dec_dwarf dwarf;
} customs;

/* A custom section: its name must be UTF-8; only those above are kept. */
static bool custom_section(dec_reader *r, customs *cs) {
  static const struct { const char *name; size_t field; } kept[] = {
      {"name", offsetof(customs, name)},
      {".debug_info", offsetof(customs, dwarf.info)},
      {".debug_abbrev", offsetof(customs, dwarf.abbrev)},
      {".debug_str", offsetof(customs, dwarf.str)},
      {".debug_line_str", offsetof(customs, dwarf.line_str)},
      {".debug_str_offsets", offsetof(customs, dwarf.str_offsets)},
      {".debug_addr", offsetof(customs, dwarf.addr)},
  };
  wasm_name name;
  if (!dec_name(r, &name)) return false;
  for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
    if (name.len == strlen(kept[i].name) && !memcmp(name.bytes, kept[i].name, name.len)) {
      dec_range *range = (dec_range *)((char *)cs + kept[i].field);
      *range = (dec_range){r->pos, r->end};
    }
  }
  r->pos = r->end;
  return true;
}

static bool section_sequence(dec_reader *r, customs *cs) {
  unsigned last_rank = 0;
  while (r->pos < r->size) {
    size_t id_at = r->pos;
    uint8_t id = r->bytes[r->pos++];
    uint32_t size;
    if (id == SEC_TAG) return dec_unsupported(r, id_at, dec_tag_feature());
    if (id > SEC_LAST) return tw_fail(r->d, (uint32_t)id_at, "malformed section id");
    r->end = r->size;
    r->in_section = false;
    if (!dec_bytes_len(r, &size)) return false;
    r->end = r->pos + size;
    r->in_section = true;
    bool ok;
    if (id == SEC_CUSTOM) {
      ok = custom_section(r, cs);
    } else {
      if (sections[id].rank <= last_rank)
        return tw_fail(r->d, (uint32_t)id_at, "unexpected content after last section");
      last_rank = sections[id].rank;
      if (id == SEC_CODE) cs->dwarf.code_start = r->pos;
      ok = sections[id].decode(r);
    }
    if (!ok) return false;
    if (r->pos != r->end) return tw_fail(r->d, (uint32_t)r->pos, "section size mismatch");
  }
  return true;
}

/* Counts that two sections must agree on, checked once all are read.
 * Data indices in code need the data count section; without any data
 * section too, the index cannot be valid, and the validator's "unknown data
 * segment" is the better message (text-format tools omit both). */
static bool cross_checks(dec_reader *r) {
  wasm_module *m = r->m;
  uint32_t at = (uint32_t)r->size;
  if (r->ndefined_funcs && !r->has_code_section)
    return tw_fail(r->d, at, "function and code section have inconsistent lengths");
  if (m->has_datacount && m->datacount != m->ndatas)
    return tw_fail(r->d, at, "data count and data section have inconsistent lengths");
  if (r->uses_data && !m->has_datacount && r->has_data_section)
    return tw_fail(r->d, r->first_data_use, "data count section required");
  return true;
}

bool dec_module(tw_arena *arena, const uint8_t *bytes, size_t size,
                const char *filename, wasm_module *out, tw_diag *d) {
  memset(out, 0, sizeof *out);
  out->filename = filename;
  out->bytes = bytes;
  out->size = size;
  dec_reader r = {.bytes = bytes, .size = size, .end = size, .arena = arena, .d = d, .m = out};
  customs cs = {0};
  bool ok = header(&r) && section_sequence(&r, &cs) && cross_checks(&r);
  if (ok && cs.name.end) dec_name_section(&r, cs.name.start, cs.name.end);
  if (ok && cs.dwarf.info.end) dec_dwarf_names(&r, &cs.dwarf);
  free(r.insns);
  free(r.blocks);
  return ok;
}
