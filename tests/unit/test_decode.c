/* test_decode.c: Check suite "decode": LEB128 limits, a full module, and
 * each malformation the binary format names. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"

#define HDR 0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00
#define BYTES(...) (const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__})

/* ---- LEB128 ------------------------------------------------------------ */

enum { U32, S32, U64, S64, S33 };

static const struct {
  const char *name;
  int kind;
  const uint8_t *bytes;
  size_t len;
  uint64_t value;  /* as the reader's type, widened */
  const char *msg; /* NULL when the read must succeed */
} leb_cases[] = {
  {"u32 zero", U32, BYTES(0x00), 0, NULL},
  {"u32 max", U32, BYTES(0xff, 0xff, 0xff, 0xff, 0x0f), 0xffffffffu, NULL},
  {"u32 padded zero", U32, BYTES(0x80, 0x80, 0x80, 0x80, 0x00), 0, NULL},
  {"u32 six bytes", U32, BYTES(0x80, 0x80, 0x80, 0x80, 0x80, 0x00), 0, "integer representation too long"},
  {"u32 high bits", U32, BYTES(0xff, 0xff, 0xff, 0xff, 0x1f), 0, "integer too large"},
  {"u32 truncated", U32, BYTES(0x80, 0x80), 0, "unexpected end"},
  {"s32 min", S32, BYTES(0x80, 0x80, 0x80, 0x80, 0x78), (uint64_t)(int64_t)INT32_MIN, NULL},
  {"s32 max", S32, BYTES(0xff, 0xff, 0xff, 0xff, 0x07), INT32_MAX, NULL},
  {"s32 minus one", S32, BYTES(0x7f), (uint64_t)-1, NULL},
  {"s32 padded minus one", S32, BYTES(0xff, 0xff, 0xff, 0xff, 0x7f), (uint64_t)-1, NULL},
  {"s32 unused bits set", S32, BYTES(0x80, 0x80, 0x80, 0x80, 0x70), 0, "integer too large"},
  {"s32 unused bits unset", S32, BYTES(0xff, 0xff, 0xff, 0xff, 0x0f), 0, "integer too large"},
  {"s32 six bytes", S32, BYTES(0xff, 0xff, 0xff, 0xff, 0xff, 0x7f), 0, "integer representation too long"},
  {"u64 max", U64, BYTES(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), UINT64_MAX, NULL},
  {"u64 high bits", U64, BYTES(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x03), 0, "integer too large"},
  {"u64 eleven bytes", U64, BYTES(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00), 0, "integer representation too long"},
  {"s64 min", S64, BYTES(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f), (uint64_t)INT64_MIN, NULL},
  {"s64 max", S64, BYTES(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00), INT64_MAX, NULL},
  {"s64 unused bits", S64, BYTES(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x41), 0, "integer too large"},
  {"s64 truncated", S64, BYTES(0xff), 0, "unexpected end"},
  {"s33 max type index", S33, BYTES(0xff, 0xff, 0xff, 0xff, 0x0f), 0xffffffffu, NULL},
  {"s33 minus one", S33, BYTES(0x7f), (uint64_t)-1, NULL},
  {"s33 unused bits", S33, BYTES(0xff, 0xff, 0xff, 0xff, 0x1f), 0, "integer too large"},
  {"s33 six bytes", S33, BYTES(0x80, 0x80, 0x80, 0x80, 0x80, 0x00), 0, "integer representation too long"},
};

static bool read_leb(int kind, const uint8_t *b, size_t len, size_t *pos, uint64_t *v, tw_diag *d) {
  uint32_t u32; int32_t s32; int64_t s64;
  bool ok;
  switch (kind) {
  case U32: ok = dec_u32(b, len, pos, &u32, d); *v = u32; return ok;
  case S32: ok = dec_s32(b, len, pos, &s32, d); *v = (uint64_t)(int64_t)s32; return ok;
  case U64: return dec_u64(b, len, pos, v, d);
  case S64: ok = dec_s64(b, len, pos, &s64, d); *v = (uint64_t)s64; return ok;
  default: ok = dec_s33(b, len, pos, &s64, d); *v = (uint64_t)s64; return ok;
  }
}

START_TEST(leb128_case) {
  size_t pos = 0;
  uint64_t v = 0;
  tw_diag d = {0};
  bool ok = read_leb(leb_cases[_i].kind, leb_cases[_i].bytes, leb_cases[_i].len, &pos, &v, &d);
  if (!leb_cases[_i].msg) {
    ck_assert_msg(ok, "%s: %s", leb_cases[_i].name, d.msg);
    ck_assert_uint_eq(v, leb_cases[_i].value);
    ck_assert_uint_eq(pos, leb_cases[_i].len);
  } else {
    ck_assert_msg(!ok, "%s decoded", leb_cases[_i].name);
    ck_assert_str_eq(d.msg, leb_cases[_i].msg);
  }
}
END_TEST

/* ---- a well-formed module using every section -------------------------- */

static const uint8_t full_module[] = {
  HDR,
  0x01, 0x09, 0x02, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60, 0x00, 0x00, /* types */
  0x02, 0x07, 0x01, 0x01, 'm', 0x01, 'f', 0x00, 0x01,  /* import m.f: type 1 */
  0x03, 0x03, 0x02, 0x00, 0x01,                        /* funcs: types 0, 1 */
  0x04, 0x04, 0x01, 0x70, 0x00, 0x01,                  /* table funcref 1 */
  0x05, 0x04, 0x01, 0x01, 0x01, 0x02,                  /* memory 1..2 */
  0x06, 0x06, 0x01, 0x7f, 0x01, 0x41, 0x2a, 0x0b,      /* mut i32 = 42 */
  0x07, 0x05, 0x01, 0x01, 'g', 0x00, 0x01,             /* export "g" func 1 */
  0x08, 0x01, 0x02,                                    /* start func 2 */
  0x09, 0x07, 0x01, 0x00, 0x41, 0x00, 0x0b, 0x01, 0x01,/* elem: func 1 at 0 */
  0x0c, 0x01, 0x01,                                    /* data count 1 */
  0x0a, 0x26, 0x02,                                    /* code */
  0x21, 0x01, 0x02, 0x7e,                              /* 2 x i64 locals */
  0x20, 0x00, 0x04, 0x7f, 0x41, 0x01, 0x05, 0x41, 0x7f, 0x0b, /* if/else */
  0x02, 0x40, 0x20, 0x00, 0x0e, 0x02, 0x00, 0x00, 0x00, 0x0b, /* br_table */
  0x41, 0x00, 0x28, 0x02, 0x04, 0x1a, 0xfc, 0x09, 0x00, 0x0b, /* load, data.drop */
  0x02, 0x00, 0x0b,                                    /* empty body */
  0x0b, 0x08, 0x01, 0x00, 0x41, 0x08, 0x0b, 0x02, 'h', 'i', /* data "hi" at 8 */
  0x00, 0x12, 0x04, 'n', 'a', 'm', 'e',                /* name section */
  0x00, 0x04, 0x03, 'm', 'o', 'd',
  0x01, 0x05, 0x01, 0x01, 0x02, 'f', 'n',
};

static tw_arena arena;
static wasm_module mod;
static tw_diag diag;

static bool decode(const uint8_t *b, size_t len) {
  tw_arena_free(&arena);
  memset(&diag, 0, sizeof diag);
  return dec_module(&arena, b, len, "t.wasm", &mod, &diag);
}

START_TEST(full_module_index_spaces) {
  ck_assert_msg(decode(full_module, sizeof full_module), "%s at %u", diag.msg, diag.offset);
  ck_assert_uint_eq(mod.ntypes, 2);
  ck_assert_uint_eq(mod.types[0].nparams, 1);
  ck_assert_uint_eq(mod.types[0].results[0], VT_I32);
  ck_assert_uint_eq(mod.nimports, 1);
  ck_assert_uint_eq(mod.nfuncs, 3);
  ck_assert_uint_eq(mod.nfunc_imports, 1);
  ck_assert(mod.funcs[0].imported);
  ck_assert_uint_eq(mod.funcs[0].type_index, 1);
  ck_assert_uint_eq(mod.imports[0].index, 0);
  ck_assert_uint_eq(mod.funcs[2].type_index, 1);
  ck_assert_uint_eq(mod.tables[0].limits.min, 1);
  ck_assert(mod.mems[0].limits.has_max);
  ck_assert_uint_eq(mod.mems[0].limits.max, 2);
  ck_assert(mod.globals[0].mutable_);
  ck_assert_uint_eq(mod.globals[0].init.ncode, 1);
  ck_assert_int_eq(mod.globals[0].init.code[0].u.i32, 42);
  ck_assert_str_eq(mod.exports[0].name.bytes, "g");
  ck_assert(mod.has_start);
  ck_assert_uint_eq(mod.start, 2);
  ck_assert_uint_eq(mod.elems[0].mode, SEG_ACTIVE);
  ck_assert_uint_eq(mod.elems[0].items[0].code[0].op, OP_REF_FUNC);
  ck_assert_uint_eq(mod.elems[0].items[0].code[0].u.index, 1);
  ck_assert_uint_eq(mod.datacount, 1);
  ck_assert_uint_eq(mod.datas[0].size, 2);
  ck_assert(memcmp(mod.datas[0].bytes, "hi", 2) == 0);
  ck_assert_str_eq(mod.module_name, "mod");
  ck_assert_str_eq(mod.funcs[1].name, "fn");
  ck_assert_ptr_null(mod.funcs[2].name);
}
END_TEST

START_TEST(full_module_code) {
  ck_assert(decode(full_module, sizeof full_module));
  const wasm_func *f = &mod.funcs[1];
  ck_assert_uint_eq(f->nlocals, 2);
  ck_assert_uint_eq(f->locals[1], VT_I64);
  ck_assert_uint_eq(full_module[f->body_offset], 0x21);
  ck_assert_uint_eq(f->body_size, 0x21);
  ck_assert_uint_eq(f->ncode, 15);
  ck_assert_uint_eq(f->code[0].offset, f->body_offset + 4);
  ck_assert_uint_eq(f->code[1].op, OP_IF);
  ck_assert_uint_eq(f->code[1].u.block.kind, BT_VALTYPE);
  ck_assert_uint_eq(f->code[1].u.block.else_at, 3);
  ck_assert_uint_eq(f->code[1].u.block.end_at, 5);
  ck_assert_int_eq(f->code[4].u.i32, -1);
  ck_assert_uint_eq(f->code[6].u.block.kind, BT_EMPTY);
  ck_assert_uint_eq(f->code[6].u.block.end_at, 9);
  ck_assert_uint_eq(f->code[8].u.br_table.count, 2);
  ck_assert_uint_eq(f->code[11].u.mem.align, 2);
  ck_assert_uint_eq(f->code[11].u.mem.offset, 4);
  ck_assert_uint_eq(f->code[13].op, OP_DATA_DROP);
  ck_assert_uint_eq(f->code[14].op, OP_END);
  ck_assert_uint_eq(mod.funcs[2].ncode, 1);
}
END_TEST

/* Element segments in all eight encodings, each with one item. */
static const struct {
  const uint8_t *bytes;
  size_t len;
  uint8_t mode, elem_type;
  uint32_t table;
} elem_forms[] = {
  {BYTES(0x00, 0x41, 0x00, 0x0b, 0x01, 0x00), SEG_ACTIVE, VT_FUNCREF, 0},
  {BYTES(0x01, 0x00, 0x01, 0x00), SEG_PASSIVE, VT_FUNCREF, 0},
  {BYTES(0x02, 0x01, 0x41, 0x00, 0x0b, 0x00, 0x01, 0x00), SEG_ACTIVE, VT_FUNCREF, 1},
  {BYTES(0x03, 0x00, 0x01, 0x00), SEG_DECLARATIVE, VT_FUNCREF, 0},
  {BYTES(0x04, 0x41, 0x00, 0x0b, 0x01, 0xd2, 0x00, 0x0b), SEG_ACTIVE, VT_FUNCREF, 0},
  {BYTES(0x05, 0x6f, 0x01, 0xd0, 0x6f, 0x0b), SEG_PASSIVE, VT_EXTERNREF, 0},
  {BYTES(0x06, 0x01, 0x41, 0x00, 0x0b, 0x70, 0x01, 0xd2, 0x00, 0x0b), SEG_ACTIVE, VT_FUNCREF, 1},
  {BYTES(0x07, 0x70, 0x01, 0xd2, 0x00, 0x0b), SEG_DECLARATIVE, VT_FUNCREF, 0},
};

START_TEST(elem_form) {
  uint8_t b[64] = {HDR, 0x09, 0, 0x01};
  size_t n = elem_forms[_i].len;
  b[9] = (uint8_t)(n + 1);
  memcpy(b + 11, elem_forms[_i].bytes, n);
  ck_assert_msg(decode(b, 11 + n), "form %d: %s", _i, diag.msg);
  ck_assert_uint_eq(mod.elems[0].mode, elem_forms[_i].mode);
  ck_assert_uint_eq(mod.elems[0].elem_type, elem_forms[_i].elem_type);
  ck_assert_uint_eq(mod.elems[0].table_index, elem_forms[_i].table);
  ck_assert_uint_eq(mod.elems[0].nitems, 1);
  ck_assert_uint_gt(mod.elems[0].items[0].offset, 0);
}
END_TEST

START_TEST(bad_name_section_is_ignored) {
  ck_assert(decode(BYTES(HDR, 0x00, 0x08, 0x04, 'n', 'a', 'm', 'e', 0x00, 0x09, 0xff)));
  ck_assert_ptr_null(mod.module_name);
}
END_TEST

#define TYPE0 0x01, 0x04, 0x01, 0x60, 0x00, 0x00
#define FUNC0 0x03, 0x02, 0x01, 0x00

/* Without any data section the index cannot be valid: the validator says
 * "unknown data segment", as the spec's text-format tests expect. */
START_TEST(data_drop_without_data_left_to_validation) {
  ck_assert_msg(decode(BYTES(HDR, TYPE0, FUNC0, 0x0a, 0x07, 0x01, 0x05, 0x00, 0xfc, 0x09, 0x00, 0x0b)),
                "%s", diag.msg);
  ck_assert_uint_eq(mod.funcs[0].code[0].op, OP_DATA_DROP);
}
END_TEST

START_TEST(select_t_arity_kept_for_validation) {
  ck_assert(decode(BYTES(HDR, TYPE0, FUNC0, 0x0a, 0x0b, 0x01, 0x09, 0x00,
                         0x1c, 0x01, 0x7e, 0x1c, 0x02, 0x7f, 0x7f, 0x0b)));
  ck_assert_uint_eq(mod.funcs[0].code[0].valtype, VT_I64);
  ck_assert_uint_eq(mod.funcs[0].code[1].valtype, 0);
}
END_TEST

/* ---- malformed modules ------------------------------------------------- */

static const struct {
  const char *name;
  const uint8_t *bytes;
  size_t len;
  const char *msg;
  uint32_t offset;
} malformed[] = {
  {"one byte", BYTES(0), "unexpected end", 1},
  {"wrong magic", BYTES(0x00, 'a', 's', 'n', 0x01, 0, 0, 0), "magic header not detected", 0},
  {"bad version", BYTES(0x00, 'a', 's', 'm', 0x02, 0, 0, 0), "unknown binary version", 4},
  {"truncated version", BYTES(0x00, 'a', 's', 'm', 0x01, 0), "unexpected end", 6},
  {"section past end", BYTES(HDR, 0x01, 0x05, 0x01, 0x60, 0x00), "length out of bounds", 9},
  {"truncated section", BYTES(HDR, 0x01, 0x03, 0x02, 0x60, 0x00), "unexpected end of section or function", 13},
  {"section size mismatch", BYTES(HDR, 0x01, 0x05, 0x01, 0x60, 0x00, 0x00, 0x00), "section size mismatch", 14},
  {"malformed section id", BYTES(HDR, 0x0e, 0x00), "malformed section id", 8},
  {"sections out of order", BYTES(HDR, 0x03, 0x01, 0x00, 0x01, 0x01, 0x00), "unexpected content after last section", 11},
  {"duplicate section", BYTES(HDR, 0x01, 0x01, 0x00, 0x01, 0x01, 0x00), "unexpected content after last section", 11},
  {"memory limits flag 8", BYTES(HDR, 0x05, 0x03, 0x01, 0x08, 0x00), "integer too large", 11},
  {"import kind", BYTES(HDR, 0x02, 0x04, 0x01, 0x00, 0x00, 0x05), "malformed import kind", 13},
  {"mutability", BYTES(HDR, 0x06, 0x06, 0x01, 0x7f, 0x02, 0x41, 0x00, 0x0b), "malformed mutability", 12},
  {"ref.null type", BYTES(HDR, 0x06, 0x06, 0x01, 0x70, 0x00, 0xd0, 0x7f, 0x0b), "malformed reference type", 14},
  {"bad UTF-8 name", BYTES(HDR, 0x07, 0x05, 0x01, 0x01, 0xff, 0x00, 0x00), "malformed UTF-8 encoding", 12},
  {"bad UTF-8 custom name", BYTES(HDR, 0x00, 0x02, 0x01, 0xc0), "malformed UTF-8 encoding", 11},
  {"too many locals", BYTES(HDR, TYPE0, FUNC0, 0x0a, 0x08, 0x01, 0x06, 0x01, 0xd1, 0x86, 0x03, 0x7f, 0x0b),
   "too many locals", 23},
  {"function without code", BYTES(HDR, TYPE0, FUNC0), "function and code section have inconsistent lengths", 18},
  {"code without function", BYTES(HDR, TYPE0, 0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b),
   "function and code section have inconsistent lengths", 16},
  {"data count mismatch", BYTES(HDR, 0x0c, 0x01, 0x02), "data count and data section have inconsistent lengths", 11},
  {"data count required", BYTES(HDR, TYPE0, FUNC0, 0x05, 0x03, 0x01, 0x00, 0x00,
                                0x0a, 0x07, 0x01, 0x05, 0x00, 0xfc, 0x09, 0x00, 0x0b,
                                0x0b, 0x03, 0x01, 0x01, 0x00),
   "data count section required", 28},
  {"illegal opcode", BYTES(HDR, TYPE0, FUNC0, 0x0a, 0x05, 0x01, 0x03, 0x00, 0xc5, 0x0b), "illegal opcode", 23},
  {"zero byte", BYTES(HDR, TYPE0, FUNC0, 0x0a, 0x07, 0x01, 0x05, 0x00, 0x3f, 0x01, 0x1a, 0x0b), "zero byte expected", 24},
  {"bytes after end", BYTES(HDR, TYPE0, FUNC0, 0x0a, 0x05, 0x01, 0x03, 0x00, 0x0b, 0x01), "END opcode expected", 24},
  {"missing end", BYTES(HDR, TYPE0, FUNC0, 0x0a, 0x04, 0x01, 0x02, 0x00, 0x01),
   "unexpected end of section or function", 24},
  {"else outside if", BYTES(HDR, TYPE0, FUNC0, 0x0a, 0x05, 0x01, 0x03, 0x00, 0x05, 0x0b), "END opcode expected", 23},
  {"elem flags 8", BYTES(HDR, 0x09, 0x02, 0x01, 0x08), "malformed elements segment kind", 11},
};

START_TEST(malformed_case) {
  ck_assert_msg(!decode(malformed[_i].bytes, malformed[_i].len), "%s decoded", malformed[_i].name);
  ck_assert_msg(strcmp(diag.msg, malformed[_i].msg) == 0, "%s: got \"%s\"", malformed[_i].name, diag.msg);
  ck_assert_msg(diag.offset == malformed[_i].offset, "%s: offset %u", malformed[_i].name, diag.offset);
}
END_TEST

static void teardown(void) { tw_arena_free(&arena); }

static Suite *decode_suite(void) {
  Suite *s = suite_create("decode");
  TCase *t = tcase_create("leb128");
  tcase_add_loop_test(t, leb128_case, 0, sizeof leb_cases / sizeof leb_cases[0]);
  suite_add_tcase(s, t);
  t = tcase_create("module");
  tcase_add_checked_fixture(t, NULL, teardown);
  tcase_add_test(t, full_module_index_spaces);
  tcase_add_test(t, full_module_code);
  tcase_add_loop_test(t, elem_form, 0, sizeof elem_forms / sizeof elem_forms[0]);
  tcase_add_test(t, bad_name_section_is_ignored);
  tcase_add_test(t, data_drop_without_data_left_to_validation);
  tcase_add_test(t, select_t_arity_kept_for_validation);
  suite_add_tcase(s, t);
  t = tcase_create("malformed");
  tcase_add_checked_fixture(t, NULL, teardown);
  tcase_add_loop_test(t, malformed_case, 0, sizeof malformed / sizeof malformed[0]);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(decode_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
