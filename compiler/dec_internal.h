/* dec_internal.h: the decoder's cursor and helpers shared by the dec_*.c files. */
#ifndef TW_DEC_INTERNAL_H
#define TW_DEC_INTERNAL_H

#include "decode.h"

/* The decoder's cursor over the input, bounded by the region being read
 * (a section, a function body, a name subsection), plus scratch buffers
 * reused by every function body. */
typedef struct {
  const uint8_t *bytes;
  size_t size;          /* the whole input */
  size_t pos, end;      /* end: limit of the current region */
  bool in_section;      /* picks the wording of "unexpected end" */
  tw_arena *arena;
  tw_diag *d;
  wasm_module *m;
  uint32_t ndefined_funcs; /* function section count, for the code section */
  uint64_t module_locals;  /* locals of all bodies so far */
  bool has_code_section, has_data_section;
  bool uses_data;          /* memory.init or data.drop seen ... */
  uint32_t first_data_use; /* ... first at this offset */
  wasm_insn *insns;     /* scratch: instructions of the expression at hand */
  size_t insns_cap;
  uint32_t *blocks;     /* scratch: indices of the open blocks */
  size_t blocks_cap;
} dec_reader;

/* LEB128 of at most `bits` bits; eof_msg words a truncation. */
bool dec_leb(const uint8_t *bytes, size_t end, size_t *pos, unsigned bits,
             bool is_signed, uint64_t *out, const char *eof_msg, tw_diag *d);

/* Primitives over the cursor: each fails with the position of the problem. */
bool dec_fail_eof(dec_reader *r);
bool dec_byte(dec_reader *r, uint8_t *out);
bool dec_u32r(dec_reader *r, uint32_t *out);
bool dec_flag(dec_reader *r, uint32_t *out);
bool dec_count(dec_reader *r, uint32_t *out);
bool dec_bytes_len(dec_reader *r, uint32_t *out);
bool dec_name(dec_reader *r, wasm_name *out);
bool dec_valtype(dec_reader *r, uint8_t *out);
bool dec_reftype(dec_reader *r, uint8_t *out);
bool dec_limits(dec_reader *r, wasm_limits *out);
bool dec_is_valtype(uint8_t b);
bool dec_utf8_valid(const uint8_t *s, size_t len);

/* Instructions: a sequence up to the `end` closing depth 0, end included. */
bool dec_insns(dec_reader *r, bool is_body, const wasm_insn **code, uint32_t *ncode);
bool dec_constexpr(dec_reader *r, wasm_constexpr *out);

/* Sections, by id; each reads the whole region [pos, end). */
bool dec_type_section(dec_reader *r);
bool dec_import_section(dec_reader *r);
bool dec_function_section(dec_reader *r);
bool dec_table_section(dec_reader *r);
bool dec_memory_section(dec_reader *r);
bool dec_global_section(dec_reader *r);
bool dec_export_section(dec_reader *r);
bool dec_start_section(dec_reader *r);
bool dec_elem_section(dec_reader *r);
bool dec_datacount_section(dec_reader *r);
bool dec_code_section(dec_reader *r);
bool dec_data_section(dec_reader *r);

/* dec_feature.c: proposals twasmc does not implement, named where their
 * encodings show.  Each *_feature returns "<feature> (<proposal>)" or NULL;
 * dec_unsupported fails with "<that> is not supported" at at. */
bool dec_unsupported(dec_reader *r, size_t at, const char *feature);
const char *dec_opcode_feature(uint8_t op);
const char *dec_type_feature(uint8_t b);
const char *dec_form_feature(int64_t form);
const char *dec_limits_feature(dec_reader *r);
const char *dec_table_feature(dec_reader *r);
const char *dec_tag_feature(void);
const char *dec_multi_memory_feature(void);

/* The "name" custom section: fills names, never fails the module. */
void dec_name_section(dec_reader *r, size_t start, size_t end);

/* Where the DWARF custom sections are (file offsets; end 0: absent). */
typedef struct {
  size_t start, end;
} dec_range;
typedef struct {
  dec_range info, abbrev, str, line_str, str_offsets, addr;
  size_t code_start; /* file offset of the code section's contents, 0: none */
} dec_dwarf;

/* Names the functions still unnamed after the name section from DWARF's
 * subprograms (dec_dwarf.c); never fails the module. */
void dec_dwarf_names(dec_reader *r, const dec_dwarf *dw);

#endif
