/* test_simd.c: Check suite "simd": the 0xFD instruction table against
 * wabt's encoding, and the decoding and validation of SIMD immediates
 * (lane indices, alignment, constants) and of v128 in types, locals and
 * globals. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode.h"
#include "validate.h"
#include "wasm_simd.h"

#define BYTES(...) (const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__})
#define ZERO16 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
#define V128_0 0xfd, 0x0c, ZERO16
#define I32_0 0x41, 0x00
#define DROP 0x1a
#define SIMD(sub) 0xfd, (sub)
/* A 2-byte LEB sub-opcode (0x80 and above). */
#define SIMD2(sub) 0xfd, (0x80 | ((sub) & 0x7f)), ((sub) >> 7)

/* ---- a module around one body -------------------------------------------- */

enum { WITH_MEMORY = 1, V128_TYPE = 2 };

typedef struct {
  uint8_t bytes[512];
  size_t len;
} module_buf;

static void put(module_buf *b, const void *p, size_t n) {
  ck_assert_uint_le(b->len + n, sizeof b->bytes);
  memcpy(b->bytes + b->len, p, n);
  b->len += n;
}

static void put_byte(module_buf *b, uint8_t v) { put(b, &v, 1); }

/* A section of at most 127 bytes. */
static void section(module_buf *b, uint8_t id, const uint8_t *content, size_t n) {
  ck_assert_uint_lt(n, 128);
  put_byte(b, id);
  put_byte(b, (uint8_t)n);
  put(b, content, n);
}

/* Type 0: [] -> [], or [v128 v128] -> [v128 v128] with V128_TYPE; one
 * function of it with the given locals declaration and body (without its
 * end); memory 0 with WITH_MEMORY. */
static void build(module_buf *b, int flags, const uint8_t *locals, size_t nlocals,
                  const uint8_t *body, size_t nbody) {
  static const uint8_t header[] = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00};
  static const uint8_t void_type[] = {0x01, 0x60, 0x00, 0x00};
  static const uint8_t v128_type[] = {0x01, 0x60, 0x02, 0x7b, 0x7b, 0x02, 0x7b, 0x7b};
  static const uint8_t funcs[] = {0x01, 0x00}, memory[] = {0x01, 0x00, 0x01};
  b->len = 0;
  put(b, header, sizeof header);
  if (flags & V128_TYPE) section(b, 1, v128_type, sizeof v128_type);
  else section(b, 1, void_type, sizeof void_type);
  section(b, 3, funcs, sizeof funcs);
  if (flags & WITH_MEMORY) section(b, 5, memory, sizeof memory);
  uint8_t code[128];
  size_t body_size = nlocals + nbody + 1;
  ck_assert_uint_lt(body_size + 2, sizeof code);
  code[0] = 1;
  code[1] = (uint8_t)body_size;
  memcpy(code + 2, locals, nlocals);
  memcpy(code + 2 + nlocals, body, nbody);
  code[2 + nlocals + nbody] = 0x0b;
  section(b, 10, code, body_size + 2);
}

/* Decodes and validates b; returns the message of the first failure or
 * NULL, and in *stage 'd' (decode), 'v' (validate) or 0. */
static const char *check_module(const module_buf *b, char *stage, tw_diag *d) {
  tw_arena arena = {0};
  wasm_module m;
  *stage = 0;
  if (!dec_module(&arena, b->bytes, b->len, "t.wasm", &m, d)) *stage = 'd';
  else if (!val_module(&m, d)) *stage = 'v';
  tw_arena_free(&arena);
  return *stage ? d->msg : NULL;
}

/* ---- bodies: immediates, lane indices, alignment, operand types ------------ */

static const struct {
  const char *name;
  int flags;
  const uint8_t *body;
  size_t nbody;
  char stage;      /* 0 valid, 'd' malformed, 'v' invalid */
  const char *msg; /* expected diagnostic (stage != 0) */
} bodies[] = {
  {"v128.const, drop", 0, BYTES(V128_0, DROP), 0, NULL},
  {"v128.const truncated", 0, BYTES(0xfd, 0x0c, 1, 2, 3), 'd', "unexpected end"},
  {"sub-opcode as a padded LEB", 0, BYTES(0xfd, 0x8c, 0x80, 0x00, ZERO16, DROP), 0, NULL},
  {"relaxed sub-opcode (2-byte LEB)", 0, BYTES(V128_0, V128_0, SIMD2(0x100), DROP), 0, NULL},
  {"sub-opcode 0x9a unassigned", 0, BYTES(V128_0, SIMD2(0x9a), DROP), 'd', "illegal opcode"},
  {"sub-opcode 0x114 past the table", 0, BYTES(V128_0, SIMD2(0x114), DROP), 'd', "illegal opcode"},
  {"i8x16.extract_lane_s lane 15", 0, BYTES(V128_0, SIMD(0x15), 15, DROP), 0, NULL},
  {"i8x16.extract_lane_s lane 16", 0, BYTES(V128_0, SIMD(0x15), 16, DROP), 'v', "invalid lane index"},
  {"i16x8.extract_lane_u lane 7", 0, BYTES(V128_0, SIMD(0x19), 7, DROP), 0, NULL},
  {"i16x8.extract_lane_u lane 8", 0, BYTES(V128_0, SIMD(0x19), 8, DROP), 'v', "invalid lane index"},
  {"i32x4.replace_lane lane 3", 0, BYTES(V128_0, I32_0, SIMD(0x1c), 3, DROP), 0, NULL},
  {"i32x4.replace_lane lane 4", 0, BYTES(V128_0, I32_0, SIMD(0x1c), 4, DROP), 'v', "invalid lane index"},
  {"i64x2.extract_lane lane 2", 0, BYTES(V128_0, SIMD(0x1d), 2, DROP), 'v', "invalid lane index"},
  {"f64x2.replace_lane of an f64", 0, BYTES(V128_0, 0x44, 0, 0, 0, 0, 0, 0, 0, 0, SIMD(0x22), 1, DROP), 0, NULL},
  {"f64x2.replace_lane of an i32", 0, BYTES(V128_0, I32_0, SIMD(0x22), 1, DROP), 'v', "type mismatch"},
  {"lane index byte missing", 0, BYTES(V128_0, SIMD(0x15)), 'd', "unexpected end"},
  {"shuffle lane 31", 0, BYTES(V128_0, V128_0, SIMD(0x0d), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 31, DROP), 0, NULL},
  {"shuffle lane 32", 0, BYTES(V128_0, V128_0, SIMD(0x0d), 32, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, DROP),
   'v', "invalid lane index"},
  {"shuffle of one operand", 0, BYTES(V128_0, SIMD(0x0d), ZERO16, DROP), 'v', "type mismatch"},
  {"v128.load align 4", WITH_MEMORY, BYTES(I32_0, SIMD(0x00), 4, 0, DROP), 0, NULL},
  {"v128.load align 5", WITH_MEMORY, BYTES(I32_0, SIMD(0x00), 5, 0, DROP), 'v', "alignment must not be larger than natural"},
  {"v128.load8x8_s align 3", WITH_MEMORY, BYTES(I32_0, SIMD(0x01), 3, 0, DROP), 0, NULL},
  {"v128.load8x8_s align 4", WITH_MEMORY, BYTES(I32_0, SIMD(0x01), 4, 0, DROP), 'v', "alignment must not be larger than natural"},
  {"v128.load8_splat align 1", WITH_MEMORY, BYTES(I32_0, SIMD(0x07), 1, 0, DROP), 'v', "alignment must not be larger than natural"},
  {"v128.load16_splat align 1", WITH_MEMORY, BYTES(I32_0, SIMD(0x08), 1, 0, DROP), 0, NULL},
  {"v128.load32_zero align 3", WITH_MEMORY, BYTES(I32_0, SIMD(0x5c), 3, 0, DROP), 'v', "alignment must not be larger than natural"},
  {"v128.load64_zero align 3", WITH_MEMORY, BYTES(I32_0, SIMD(0x5d), 3, 0, DROP), 0, NULL},
  {"v128.store align 4", WITH_MEMORY, BYTES(I32_0, V128_0, SIMD(0x0b), 4, 0), 0, NULL},
  {"v128.store align 5", WITH_MEMORY, BYTES(I32_0, V128_0, SIMD(0x0b), 5, 0), 'v', "alignment must not be larger than natural"},
  {"v128.store operands swapped", WITH_MEMORY, BYTES(V128_0, I32_0, SIMD(0x0b), 4, 0), 'v', "type mismatch"},
  {"v128.load without memory", 0, BYTES(I32_0, SIMD(0x00), 4, 0, DROP), 'v', "unknown memory 0"},
  {"v128.load8_lane lane 15", WITH_MEMORY, BYTES(I32_0, V128_0, SIMD(0x54), 0, 0, 15, DROP), 0, NULL},
  {"v128.load8_lane lane 16", WITH_MEMORY, BYTES(I32_0, V128_0, SIMD(0x54), 0, 0, 16, DROP), 'v', "invalid lane index"},
  {"v128.load16_lane align 2", WITH_MEMORY, BYTES(I32_0, V128_0, SIMD(0x55), 2, 0, 0, DROP), 'v',
   "alignment must not be larger than natural"},
  {"v128.load64_lane lane 1", WITH_MEMORY, BYTES(I32_0, V128_0, SIMD(0x57), 3, 0, 1, DROP), 0, NULL},
  {"v128.store32_lane lane 4", WITH_MEMORY, BYTES(I32_0, V128_0, SIMD(0x5a), 2, 0, 4), 'v', "invalid lane index"},
  {"v128.store64_lane lane 1", WITH_MEMORY, BYTES(I32_0, V128_0, SIMD(0x5b), 3, 0, 1), 0, NULL},
  {"i32x4.add of an i32", 0, BYTES(V128_0, I32_0, SIMD2(0xae), DROP), 'v', "type mismatch"},
  {"i8x16.shl by an i32", 0, BYTES(V128_0, I32_0, SIMD(0x6b), DROP), 0, NULL},
  {"i8x16.shl by a v128", 0, BYTES(V128_0, V128_0, SIMD(0x6b), DROP), 'v', "type mismatch"},
  {"v128.any_true gives an i32", 0, BYTES(V128_0, SIMD(0x53), I32_0, 0x6a, DROP), 0, NULL},
  {"v128.bitselect of two", 0, BYTES(V128_0, V128_0, SIMD(0x52), DROP), 'v', "type mismatch"},
  {"i64x2.splat of an i32", 0, BYTES(I32_0, SIMD(0x12), DROP), 'v', "type mismatch"},
  {"select of v128", 0, BYTES(V128_0, V128_0, I32_0, 0x1b, DROP), 0, NULL},
};

START_TEST(body_case) {
  module_buf b;
  tw_diag d = {0};
  char stage;
  build(&b, bodies[_i].flags, BYTES(0x00), bodies[_i].body, bodies[_i].nbody);
  const char *msg = check_module(&b, &stage, &d);
  ck_assert_msg(stage == bodies[_i].stage, "%s: stage %c: %s", bodies[_i].name, stage ? stage : '0',
                msg ? msg : "ok");
  if (bodies[_i].msg)
    ck_assert_msg(strncmp(msg, bodies[_i].msg, strlen(bodies[_i].msg)) == 0, "%s: got \"%s\"",
                  bodies[_i].name, msg);
}
END_TEST

/* ---- v128 in signatures, locals and globals ---------------------------------- */

START_TEST(v128_params_results_locals) {
  module_buf b;
  tw_diag d = {0};
  char stage;
  /* [v128 v128] -> [v128 v128] with a v128 local: swap through it */
  build(&b, V128_TYPE, BYTES(0x01, 0x01, 0x7b),
        BYTES(0x20, 0x00, 0x21, 0x02, 0x20, 0x01, 0x20, 0x02));
  ck_assert_msg(check_module(&b, &stage, &d) == NULL, "%s", d.msg);
  /* a v128 local is not an i32 */
  build(&b, V128_TYPE, BYTES(0x01, 0x01, 0x7b),
        BYTES(0x20, 0x02, 0x41, 0x01, 0x6a, 0x1a, 0x20, 0x00, 0x20, 0x01));
  ck_assert_str_eq(check_module(&b, &stage, &d), "type mismatch");
}
END_TEST

/* (global v128 (v128.const ...)) and one initialised by an i32. */
START_TEST(v128_global_init) {
  static const uint8_t v128_global[] = {
      0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x06, 0x16, 0x01, 0x7b, 0x00,
      0xfd, 0x0c, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0x0b};
  static const uint8_t i32_init[] = {
      0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x06, 0x06, 0x01, 0x7b, 0x00, 0x41, 0x00, 0x0b};
  tw_arena arena = {0};
  wasm_module m;
  tw_diag d = {0};
  ck_assert_msg(dec_module(&arena, v128_global, sizeof v128_global, "g.wasm", &m, &d), "%s", d.msg);
  ck_assert(val_module(&m, &d));
  ck_assert_uint_eq(m.globals[0].valtype, VT_V128);
  ck_assert_uint_eq(m.globals[0].init.code[0].op, OP_SIMD + SIMD_V128_CONST);
  ck_assert_ptr_eq(m.globals[0].init.code[0].u.bytes, v128_global + 15);
  tw_arena_free(&arena);
  ck_assert(dec_module(&arena, i32_init, sizeof i32_init, "g.wasm", &m, &d));
  ck_assert(!val_module(&m, &d));
  ck_assert_str_eq(d.msg, "type mismatch");
  tw_arena_free(&arena);
}
END_TEST

/* Where the immediates land in wasm_insn: bytes point into the input,
 * memargs and lane indices are kept as encoded. */
START_TEST(immediates_in_insn) {
  module_buf b;
  tw_diag d = {0};
  tw_arena arena = {0};
  wasm_module m;
  build(&b, WITH_MEMORY, BYTES(0x00),
        BYTES(0x41, 0x08, V128_0, SIMD(0x56), 0x01, 0x90, 0x03, 0x03, /* load32_lane align 1 offset 400 lane 3 */
              V128_0, SIMD(0x0d), 0, 17, 2, 19, 4, 21, 6, 23, 8, 25, 10, 27, 12, 29, 14, 31,
              SIMD(0x18), 7, DROP));
  ck_assert_msg(dec_module(&arena, b.bytes, b.len, "t.wasm", &m, &d), "%s", d.msg);
  const wasm_insn *code = m.funcs[0].code;
  ck_assert_uint_eq(code[2].op, OP_SIMD + 0x56);
  ck_assert_uint_eq(code[2].u.mem.align, 1);
  ck_assert_uint_eq(code[2].u.mem.offset, 400);
  ck_assert_uint_eq(code[2].u.mem.lane, 3);
  ck_assert_uint_eq(code[4].op, OP_SIMD + SIMD_I8X16_SHUFFLE);
  ck_assert_ptr_eq(code[4].u.bytes, b.bytes + code[4].offset + 2);
  ck_assert_uint_eq(code[4].u.bytes[15], 31);
  ck_assert_uint_eq(code[5].op, OP_SIMD + 0x18);
  ck_assert_uint_eq(code[5].u.lane, 7);
  ck_assert(val_module(&m, &d));
  tw_arena_free(&arena);
}
END_TEST

/* ---- the table against wabt ------------------------------------------------- */

START_TEST(table_counts) {
  unsigned simd = 0, relaxed = 0;
  for (uint32_t sub = 0; sub <= WASM_SIMD_LAST; sub++)
    if (wasm_simd_info(sub)) *(sub < WASM_SIMD_RELAXED ? &simd : &relaxed) += 1;
  ck_assert_uint_eq(simd, 236);   /* Wasm 2.0's fixed-width SIMD */
  ck_assert_uint_eq(relaxed, 20); /* relaxed SIMD */
  ck_assert_ptr_null(wasm_simd_info(WASM_SIMD_LAST + 1));
}
END_TEST

static const char *type_name(uint8_t t) {
  switch (t) {
  case VT_I32: return "i32";
  case VT_I64: return "i64";
  case VT_F32: return "f32";
  case VT_F64: return "f64";
  default: return "v128";
  }
}

/* wabt 1.0.32 still spells two relaxed SIMD names as the proposal first
 * did; with old_names, those spellings. */
static const char *wabt_name(const char *name, bool old_names) {
  static const char *const renamed[][2] = {
      {"i16x8.relaxed_dot_i8x16_i7x16_s", "i16x8.dot_i8x16_i7x16_s"},
      {"i32x4.relaxed_dot_i8x16_i7x16_add_s", "i32x4.dot_i8x16_i7x16_add_s"},
  };
  for (size_t i = 0; old_names && i < sizeof renamed / sizeof renamed[0]; i++)
    if (strcmp(name, renamed[i][0]) == 0) return renamed[i][1];
  return name;
}

/* One function per instruction: its params as the instruction's operands,
 * its result the instruction's, and the immediates it needs. */
static void write_op_func(FILE *w, const wasm_simd_op *op, bool old_names) {
  fprintf(w, "  (func");
  unsigned n = 0;
  for (; n < 3 && op->params[n]; n++) fprintf(w, " (param %s)", type_name(op->params[n]));
  if (op->result) fprintf(w, " (result %s)", type_name(op->result));
  for (unsigned i = 0; i < n; i++) fprintf(w, " local.get %u", i);
  fprintf(w, " %s", wabt_name(op->name, old_names));
  if (op->imm == SIMD_IM_MEM_LANE) fprintf(w, " offset=0 %u", op->lanes - 1u);
  if (op->imm == SIMD_IM_LANE) fprintf(w, " %u", op->lanes - 1u);
  if (op->imm == SIMD_IM_BYTES && op->lanes)
    fprintf(w, " 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 31");
  else if (op->imm == SIMD_IM_BYTES)
    fprintf(w, " i32x4 1 2 3 4");
  fprintf(w, ")\n");
}

/* Assembles a module of one function per row (subs[] their sub-opcodes)
 * into wasm; the wat2wasm status. */
static int assemble_table(const char *wasm, bool old_names, uint32_t *subs, uint32_t *nfuncs) {
  char wat[] = "/tmp/twasm-simd-XXXXXX.wat";
  int fd = mkstemps(wat, 4);
  ck_assert_int_ge(fd, 0);
  FILE *w = fdopen(fd, "w");
  fprintf(w, "(module (memory 1)\n");
  *nfuncs = 0;
  for (uint32_t sub = 0; sub <= WASM_SIMD_LAST; sub++) {
    const wasm_simd_op *op = wasm_simd_info(sub);
    if (!op) continue;
    subs[(*nfuncs)++] = sub;
    write_op_func(w, op, old_names);
  }
  fprintf(w, ")\n");
  fclose(w);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "wat2wasm --enable-relaxed-simd %s -o %s 2>/dev/null", wat, wasm);
  int rc = system(cmd);
  unlink(wat);
  return rc;
}

/* Every row's name, assembled by wat2wasm, decodes to that row's
 * sub-opcode, and the function typed by the row validates. */
START_TEST(table_matches_wabt) {
  if (system("wat2wasm --version >/dev/null 2>&1") != 0) {
    printf("simd: table_matches_wabt skipped: wat2wasm is not installed\n");
    return;
  }
  char wasm[] = "/tmp/twasm-simd-XXXXXX.wasm";
  close(mkstemps(wasm, 5));
  uint32_t subs[WASM_SIMD_LAST + 1], nfuncs;
  int rc = assemble_table(wasm, false, subs, &nfuncs);
  if (rc != 0) rc = assemble_table(wasm, true, subs, &nfuncs);
  ck_assert_int_eq(rc, 0);
  FILE *in = fopen(wasm, "rb");
  static uint8_t bytes[1 << 16];
  size_t len = fread(bytes, 1, sizeof bytes, in);
  fclose(in);
  unlink(wasm);
  tw_arena arena = {0};
  wasm_module m;
  tw_diag d = {0};
  ck_assert_msg(dec_module(&arena, bytes, len, "ops.wasm", &m, &d), "%s", d.msg);
  ck_assert_msg(val_module(&m, &d), "%s at 0x%x", d.msg, d.offset);
  ck_assert_uint_eq(m.nfuncs, nfuncs);
  for (uint32_t i = 0; i < nfuncs; i++) {
    const wasm_func *fn = &m.funcs[i];
    const wasm_insn *op = &fn->code[fn->ncode - 2]; /* the last before end */
    ck_assert_msg(op->op == OP_SIMD + subs[i], "%s: wabt encodes 0x%x", wasm_simd_info(subs[i])->name,
                  op->op - OP_SIMD);
  }
  tw_arena_free(&arena);
}
END_TEST

static Suite *simd_suite(void) {
  Suite *s = suite_create("simd");
  TCase *t = tcase_create("table");
  tcase_add_test(t, table_counts);
  tcase_add_test(t, table_matches_wabt);
  suite_add_tcase(s, t);
  t = tcase_create("body");
  tcase_add_loop_test(t, body_case, 0, sizeof bodies / sizeof bodies[0]);
  tcase_add_test(t, immediates_in_insn);
  suite_add_tcase(s, t);
  t = tcase_create("types");
  tcase_add_test(t, v128_params_results_locals);
  tcase_add_test(t, v128_global_init);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(simd_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
