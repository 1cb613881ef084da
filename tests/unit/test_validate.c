/* test_validate.c: Check suite "validate": hand-built modules, one rule per case. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "validate.h"

/* ---- instruction and type shorthands ------------------------------------ */

#define CODE(...) (const wasm_insn[]){__VA_ARGS__}, \
                  sizeof((const wasm_insn[]){__VA_ARGS__}) / sizeof(wasm_insn)
#define OP(o) {.op = (o)}
#define IX(o, x) {.op = (o), .u.index = (x)}
#define PAIR(o, a_, b_) {.op = (o), .u.pair = {(a_), (b_)}}
#define MEM(o, al) {.op = (o), .u.mem = {.align = (al)}}
#define VT(o, t) {.op = (o), .valtype = (t)}
#define I32(v) {.op = OP_I32_CONST, .u.i32 = (v)}
#define I64(v) {.op = OP_I64_CONST, .u.i64 = (v)}
#define F32(v) {.op = OP_F32_CONST, .u.f32 = (v)}
#define F64(v) {.op = OP_F64_CONST, .u.f64 = (v)}
#define BLOCK_EMPTY(o) {.op = (o), .u.block = {.kind = BT_EMPTY}}
#define BLOCK_VT(o, t) {.op = (o), .valtype = (t), .u.block = {.kind = BT_VALTYPE}}
#define BLOCK_TX(o, x) {.op = (o), .u.block = {.kind = BT_TYPEIDX, .type_index = (x)}}
/* labels: the targets, then the default */
#define BR_TABLE(n, ...) {.op = OP_BR_TABLE, .u.br_table = {(const uint32_t[]){__VA_ARGS__}, (n)}}
#define END OP(OP_END)

static const uint8_t t_i32[] = {VT_I32}, t_i32_i32[] = {VT_I32, VT_I32};

/* Type indices of the fixture. */
enum { T_VOID, T_TO_I32, T_I32_TO_I32, T_TO_I32_I32, T_I32_TO_I32_I32, NTYPES };

static const wasm_functype fixture_types[NTYPES] = {
  [T_VOID] = {0, 0, NULL, NULL},
  [T_TO_I32] = {0, 1, NULL, t_i32},
  [T_I32_TO_I32] = {1, 1, t_i32, t_i32},
  [T_TO_I32_I32] = {0, 2, NULL, t_i32_i32},
  [T_I32_TO_I32_I32] = {1, 2, t_i32, t_i32_i32},
};

/* ---- the fixture module --------------------------------------------------
 * funcs:   0 the body under test, 1 declared by elem 0, 2 undeclared,
 *          3 returns an i32 (a bad start function)
 * tables:  0 funcref, 1 externref;  memory 0 (1 page)
 * globals: 0 imported immutable i32, 1 defined mutable i32
 * elems:   0 passive funcref [ref.func 1], 1 passive externref [ref.null]
 * datas:   0 passive */

static const wasm_insn end_only[] = {END}, const_i32[] = {I32(0), END};
static const wasm_insn ref_func_1[] = {IX(OP_REF_FUNC, 1)};
static const wasm_insn ref_null_extern[] = {VT(OP_REF_NULL, VT_EXTERNREF)};
static const wasm_insn zero_i32[] = {I32(0)};
static const wasm_constexpr elem0_items[] = {{ref_func_1, 1, 0}};
static const wasm_constexpr elem1_items[] = {{ref_null_extern, 1, 0}};

typedef struct {
  wasm_module m;
  wasm_import imports[1];
  wasm_func funcs[4];
  wasm_table tables[2];
  wasm_memory mems[2];
  wasm_global globals[2];
  wasm_export exports[2];
  wasm_elem elems[2];
  wasm_data datas[1];
  uint8_t locals[4];
} fixture;

static void fixture_init(fixture *f) {
  memset(f, 0, sizeof *f);
  f->imports[0] = (wasm_import){.kind = EXT_GLOBAL, .index = 0, .offset = 10};
  f->funcs[0] = (wasm_func){.type_index = T_VOID, .code = end_only, .ncode = 1, .locals = f->locals};
  f->funcs[1] = (wasm_func){.type_index = T_VOID, .code = end_only, .ncode = 1};
  f->funcs[2] = (wasm_func){.type_index = T_VOID, .code = end_only, .ncode = 1};
  f->funcs[3] = (wasm_func){.type_index = T_TO_I32, .code = const_i32, .ncode = 2};
  f->tables[0] = (wasm_table){.elem_type = VT_FUNCREF, .limits = {1, 0, false}};
  f->tables[1] = (wasm_table){.elem_type = VT_EXTERNREF, .limits = {1, 0, false}};
  f->mems[0] = (wasm_memory){.limits = {1, 0, false}};
  f->globals[0] = (wasm_global){.valtype = VT_I32, .imported = true};
  f->globals[1] = (wasm_global){.valtype = VT_I32, .mutable_ = true, .init = {zero_i32, 1, 20}};
  f->elems[0] = (wasm_elem){.mode = SEG_PASSIVE, .elem_type = VT_FUNCREF, .nitems = 1, .items = elem0_items};
  f->elems[1] = (wasm_elem){.mode = SEG_PASSIVE, .elem_type = VT_EXTERNREF, .nitems = 1, .items = elem1_items};
  f->datas[0] = (wasm_data){.mode = SEG_PASSIVE};
  f->m = (wasm_module){
    .types = (wasm_functype *)fixture_types, .ntypes = NTYPES,
    .imports = f->imports, .nimports = 1,
    .funcs = f->funcs, .nfuncs = 4,
    .tables = f->tables, .ntables = 2,
    .mems = f->mems, .nmems = 1,
    .globals = f->globals, .nglobals = 2, .nglobal_imports = 1,
    .exports = f->exports, .nexports = 0,
    .elems = f->elems, .nelems = 2,
    .datas = f->datas, .ndatas = 1,
  };
}

/* Valid when msg is NULL, else invalid with exactly msg. */
static void expect_result(const wasm_module *m, const char *name, const char *msg) {
  tw_diag d = {0};
  bool ok = val_module(m, &d);
  if (!msg) {
    ck_assert_msg(ok, "%s: %s", name, d.msg);
  } else {
    ck_assert_msg(!ok, "%s: validated", name);
    ck_assert_msg(strcmp(d.msg, msg) == 0, "%s: got \"%s\"", name, d.msg);
  }
}

/* ---- function bodies ----------------------------------------------------- */

static const struct {
  const char *name;
  uint32_t type_index;
  const char *locals;        /* declared locals' types, as a string of bytes */
  const wasm_insn *code;
  uint32_t ncode;
  const char *msg;           /* NULL when valid */
} bodies[] = {
  {"empty body", T_VOID, "", CODE(END), NULL},
  {"i32.add", T_TO_I32, "", CODE(I32(1), I32(2), OP(0x6A), END), NULL},
  {"i32.add of an f32", T_TO_I32, "", CODE(I32(1), F32(0), OP(0x6A), END), "type mismatch"},
  {"i32.add of one operand", T_TO_I32, "", CODE(I32(1), OP(0x6A), END), "type mismatch"},
  {"conversion typed by table", T_VOID, "", CODE(I64(1), OP(OP_I32_WRAP_I64), OP(OP_DROP), END), NULL},
  {"conversion of the wrong type", T_VOID, "", CODE(I32(1), OP(OP_I32_WRAP_I64), OP(OP_DROP), END), "type mismatch"},
  {"trunc_sat f64 to i64", T_VOID, "", CODE(F64(0), OP(0xFC06), OP(OP_DROP), END), NULL},
  {"missing result", T_TO_I32, "", CODE(END), "type mismatch"},
  {"extra value at end", T_VOID, "", CODE(I32(1), END), "type mismatch"},
  {"unreachable then i32.add", T_TO_I32, "", CODE(OP(OP_UNREACHABLE), OP(0x6A), END), NULL},
  {"unreachable still checks known operands", T_TO_I32, "",
   CODE(OP(OP_UNREACHABLE), F32(0), OP(0x6A), END), "type mismatch"},
  {"return then anything", T_TO_I32, "",
   CODE(I32(1), OP(OP_RETURN), OP(0x7C), OP(OP_DROP), END), NULL},
  {"return without its value", T_TO_I32, "", CODE(OP(OP_RETURN), END), "type mismatch"},
  {"local.get of a parameter", T_I32_TO_I32, "", CODE(IX(OP_LOCAL_GET, 0), END), NULL},
  {"local.tee of a declared local", T_TO_I32, "\x7d", CODE(F32(0), IX(OP_LOCAL_TEE, 0), OP(OP_DROP), I32(0), END), NULL},
  {"local.set of the wrong type", T_VOID, "\x7d", CODE(I32(0), IX(OP_LOCAL_SET, 0), END), "type mismatch"},
  {"unknown local", T_VOID, "", CODE(IX(OP_LOCAL_GET, 0), OP(OP_DROP), END), "unknown local 0"},
  {"global.set of a mutable global", T_VOID, "", CODE(I32(1), IX(OP_GLOBAL_SET, 1), END), NULL},
  {"global.set of an immutable global", T_VOID, "", CODE(I32(1), IX(OP_GLOBAL_SET, 0), END), "global is immutable"},
  {"unknown global", T_VOID, "", CODE(IX(OP_GLOBAL_GET, 2), OP(OP_DROP), END), "unknown global 2"},
  {"multi-value block", T_TO_I32, "",
   CODE(BLOCK_TX(OP_BLOCK, T_TO_I32_I32), I32(1), I32(2), END, OP(0x6A), END), NULL},
  {"block with a parameter", T_TO_I32, "",
   CODE(I32(1), BLOCK_TX(OP_BLOCK, T_I32_TO_I32_I32), I32(2), END, OP(0x6A), END), NULL},
  {"block parameter missing", T_TO_I32, "",
   CODE(BLOCK_TX(OP_BLOCK, T_I32_TO_I32_I32), I32(2), END, OP(0x6A), END), "type mismatch"},
  {"block leaves an extra value", T_VOID, "", CODE(BLOCK_EMPTY(OP_BLOCK), I32(1), END, END), "type mismatch"},
  {"block sees no outer operand", T_VOID, "",
   CODE(I32(1), BLOCK_EMPTY(OP_BLOCK), OP(OP_DROP), END, END), "type mismatch"},
  {"unknown block type", T_VOID, "", CODE(BLOCK_TX(OP_BLOCK, 99), END, END), "unknown type 99"},
  {"loop label takes the parameters", T_TO_I32, "",
   CODE(I32(1), BLOCK_TX(OP_LOOP, T_I32_TO_I32), IX(OP_BR, 0), END, END), NULL},
  {"if else with results", T_TO_I32, "",
   CODE(I32(1), BLOCK_VT(OP_IF, VT_I32), I32(2), OP(OP_ELSE), I32(3), END, END), NULL},
  {"if without condition", T_VOID, "", CODE(BLOCK_EMPTY(OP_IF), END, END), "type mismatch"},
  {"if without else needs params == results", T_VOID, "",
   CODE(I32(1), BLOCK_VT(OP_IF, VT_I32), I32(2), END, OP(OP_DROP), END), "type mismatch"},
  {"if without else passing its parameter", T_TO_I32, "",
   CODE(I32(7), I32(1), BLOCK_TX(OP_IF, T_I32_TO_I32), END, END), NULL},
  {"else branch of the wrong type", T_TO_I32, "",
   CODE(I32(1), BLOCK_VT(OP_IF, VT_I32), I32(2), OP(OP_ELSE), F32(3), END, END), "type mismatch"},
  {"br to the function", T_VOID, "", CODE(IX(OP_BR, 0), END), NULL},
  {"br depth too deep", T_VOID, "", CODE(IX(OP_BR, 1), END), "unknown label 1"},
  {"br without the label's value", T_VOID, "",
   CODE(BLOCK_VT(OP_BLOCK, VT_I32), IX(OP_BR, 0), END, OP(OP_DROP), END), "type mismatch"},
  {"br with the wrong value", T_VOID, "",
   CODE(BLOCK_VT(OP_BLOCK, VT_I32), F32(0), IX(OP_BR, 0), END, OP(OP_DROP), END), "type mismatch"},
  {"br_if keeps its value", T_TO_I32, "",
   CODE(BLOCK_VT(OP_BLOCK, VT_I32), I32(1), I32(0), IX(OP_BR_IF, 0), END, END), NULL},
  {"br_table targets of one arity", T_TO_I32, "",
   CODE(BLOCK_VT(OP_BLOCK, VT_I32), I32(7), I32(0), BR_TABLE(1, 0, 1), END, END), NULL},
  {"br_table arity mismatch", T_VOID, "",
   CODE(BLOCK_VT(OP_BLOCK, VT_I32), I32(7), I32(0), BR_TABLE(1, 0, 1), END, OP(OP_DROP), END),
   "type mismatch"},
  {"br_table unknown label", T_VOID, "", CODE(I32(0), BR_TABLE(1, 0, 5), END), "unknown label 5"},
  {"br_table in unreachable code checks per type", T_VOID, "",
   CODE(BLOCK_VT(OP_BLOCK, VT_F64), BLOCK_VT(OP_BLOCK, VT_I32), OP(OP_UNREACHABLE),
        BR_TABLE(1, 0, 1), END, OP(OP_DROP), F64(0), END, OP(OP_DROP), END), NULL},
  {"br_table one value for two types", T_VOID, "",
   CODE(BLOCK_VT(OP_BLOCK, VT_F64), BLOCK_VT(OP_BLOCK, VT_I32), OP(OP_UNREACHABLE), I32(1), I32(0),
        BR_TABLE(1, 0, 1), END, OP(OP_DROP), F64(0), END, OP(OP_DROP), END), "type mismatch"},
  {"drop of nothing", T_VOID, "", CODE(OP(OP_DROP), END), "type mismatch"},
  {"select of numbers", T_VOID, "", CODE(I64(1), I64(2), I32(0), OP(OP_SELECT), OP(OP_DROP), END), NULL},
  {"select of two types", T_VOID, "", CODE(I64(1), F64(2), I32(0), OP(OP_SELECT), OP(OP_DROP), END), "type mismatch"},
  {"select of references", T_VOID, "",
   CODE(VT(OP_REF_NULL, VT_FUNCREF), VT(OP_REF_NULL, VT_FUNCREF), I32(0), OP(OP_SELECT), OP(OP_DROP), END),
   "type mismatch"},
  {"typed select of references", T_VOID, "",
   CODE(VT(OP_REF_NULL, VT_FUNCREF), VT(OP_REF_NULL, VT_FUNCREF), I32(0), VT(OP_SELECT_T, VT_FUNCREF),
        OP(OP_DROP), END), NULL},
  {"typed select of two types", T_VOID, "",
   CODE(I32(1), I32(1), I32(0), VT(OP_SELECT_T, VT_I64), OP(OP_DROP), END), "type mismatch"},
  {"typed select arity", T_VOID, "",
   CODE(I32(1), I32(1), I32(0), VT(OP_SELECT_T, 0), OP(OP_DROP), END), "invalid result arity"},
  {"select in unreachable code", T_TO_I32, "", CODE(OP(OP_UNREACHABLE), OP(OP_SELECT), END), NULL},
  {"call with arguments", T_TO_I32, "", CODE(I32(1), IX(OP_CALL, 3), OP(0x6A), END), NULL},
  {"unknown function", T_VOID, "", CODE(IX(OP_CALL, 9), END), "unknown function 9"},
  {"call_indirect", T_VOID, "", CODE(I32(0), PAIR(OP_CALL_INDIRECT, T_VOID, 0), END), NULL},
  {"call_indirect on an externref table", T_VOID, "",
   CODE(I32(0), PAIR(OP_CALL_INDIRECT, T_VOID, 1), END), "type mismatch"},
  {"call_indirect unknown table", T_VOID, "", CODE(I32(0), PAIR(OP_CALL_INDIRECT, T_VOID, 2), END), "unknown table 2"},
  {"call_indirect unknown type", T_VOID, "", CODE(I32(0), PAIR(OP_CALL_INDIRECT, 50, 0), END), "unknown type 50"},
  {"load and store", T_VOID, "",
   CODE(I32(0), I32(0), MEM(OP_I64_LOAD32_U, 2), MEM(OP_I64_STORE, 3), END), NULL},
  {"alignment too large", T_VOID, "", CODE(I32(0), MEM(OP_I32_LOAD, 3), OP(OP_DROP), END),
   "alignment must not be larger than natural"},
  {"narrow store alignment too large", T_VOID, "", CODE(I32(0), I32(0), MEM(OP_I32_STORE8, 1), END),
   "alignment must not be larger than natural"},
  {"store of the wrong type", T_VOID, "", CODE(I32(0), F32(0), MEM(OP_F64_STORE, 3), END), "type mismatch"},
  {"memory.grow", T_TO_I32, "", CODE(I32(1), OP(OP_MEMORY_GROW), END), NULL},
  {"memory.init", T_VOID, "", CODE(I32(0), I32(0), I32(0), IX(OP_MEMORY_INIT, 0), END), NULL},
  {"memory.init unknown data", T_VOID, "", CODE(I32(0), I32(0), I32(0), IX(OP_MEMORY_INIT, 1), END),
   "unknown data segment 1"},
  {"data.drop unknown data", T_VOID, "", CODE(IX(OP_DATA_DROP, 1), END), "unknown data segment 1"},
  {"memory.fill of an i64", T_VOID, "", CODE(I32(0), I64(0), I32(0), OP(OP_MEMORY_FILL), END), "type mismatch"},
  {"table.get and set", T_VOID, "",
   CODE(I32(0), I32(0), IX(OP_TABLE_GET, 1), IX(OP_TABLE_SET, 1), END), NULL},
  {"table.set of the wrong reference", T_VOID, "",
   CODE(I32(0), VT(OP_REF_NULL, VT_FUNCREF), IX(OP_TABLE_SET, 1), END), "type mismatch"},
  {"table.grow", T_TO_I32, "", CODE(VT(OP_REF_NULL, VT_EXTERNREF), I32(1), IX(OP_TABLE_GROW, 1), END), NULL},
  {"table.size unknown table", T_TO_I32, "", CODE(IX(OP_TABLE_SIZE, 5), END), "unknown table 5"},
  {"table.copy of equal types", T_VOID, "", CODE(I32(0), I32(0), I32(0), PAIR(OP_TABLE_COPY, 0, 0), END), NULL},
  {"table.copy of differing types", T_VOID, "",
   CODE(I32(0), I32(0), I32(0), PAIR(OP_TABLE_COPY, 0, 1), END), "type mismatch"},
  {"table.init", T_VOID, "", CODE(I32(0), I32(0), I32(0), PAIR(OP_TABLE_INIT, 1, 1), END), NULL},
  {"table.init of the wrong type", T_VOID, "",
   CODE(I32(0), I32(0), I32(0), PAIR(OP_TABLE_INIT, 1, 0), END), "type mismatch"},
  {"elem.drop unknown segment", T_VOID, "", CODE(IX(OP_ELEM_DROP, 2), END), "unknown elem segment 2"},
  {"ref.is_null of an i32", T_VOID, "", CODE(I32(0), OP(OP_REF_IS_NULL), OP(OP_DROP), END), "type mismatch"},
  {"ref.func declared", T_VOID, "", CODE(IX(OP_REF_FUNC, 1), OP(OP_DROP), END), NULL},
  {"ref.func undeclared", T_VOID, "", CODE(IX(OP_REF_FUNC, 2), OP(OP_DROP), END),
   "undeclared function reference"},
};

START_TEST(body_case) {
  fixture f;
  fixture_init(&f);
  f.funcs[0].type_index = bodies[_i].type_index;
  f.funcs[0].nlocals = (uint32_t)strlen(bodies[_i].locals);
  memcpy(f.locals, bodies[_i].locals, f.funcs[0].nlocals);
  f.funcs[0].code = bodies[_i].code;
  f.funcs[0].ncode = bodies[_i].ncode;
  expect_result(&f.m, bodies[_i].name, bodies[_i].msg);
}
END_TEST

/* Diagnostics name the offending instruction, not the body. */
START_TEST(error_at_instruction_offset) {
  static const wasm_insn code[] = {{.op = OP_I32_CONST, .offset = 40}, {.op = OP_F32_CONST, .offset = 42},
                                   {.op = 0x6A, .offset = 47}, {.op = OP_END, .offset = 48}};
  fixture f;
  tw_diag d = {0};
  fixture_init(&f);
  f.funcs[0].type_index = T_TO_I32;
  f.funcs[0].code = code;
  f.funcs[0].ncode = 4;
  ck_assert(!val_module(&f.m, &d));
  ck_assert_uint_eq(d.offset, 47);
}
END_TEST

/* ---- module level ------------------------------------------------------- */

static const wasm_insn nop_expr[] = {OP(OP_NOP)}, i64_expr[] = {I64(0)};
static const wasm_insn two_i32_expr[] = {I32(0), I32(1)};
static const wasm_insn get_defined_global[] = {IX(OP_GLOBAL_GET, 1)};
static const wasm_insn get_imported_global[] = {IX(OP_GLOBAL_GET, 0)};
static const wasm_insn ref_func_2[] = {IX(OP_REF_FUNC, 2), OP(OP_DROP), END};

static void valid_as_is(fixture *f) { (void)f; }
static void two_memories(fixture *f) { f->m.nmems = 2; f->mems[1] = f->mems[0]; }
static void memory_too_large(fixture *f) { f->mems[0].limits = (wasm_limits){.min = 65537}; }
static void memory_max_too_large(fixture *f) { f->mems[0].limits = (wasm_limits){.min = 1, .max = 65537, .has_max = true}; }
static void memory_max_4gib(fixture *f) { f->mems[0].limits = (wasm_limits){.max = 65536, .has_max = true}; }
/* Valid Wasm, but a memory twasmc cannot hold (one page short of 4 GiB). */
static void memory_min_4gib(fixture *f) { f->mems[0].limits = (wasm_limits){.min = 65536, .offset = 11}; }
static void memory_min_over_max(fixture *f) { f->mems[0].limits = (wasm_limits){.min = 2, .max = 1, .has_max = true}; }
static void table_min_over_max(fixture *f) { f->tables[1].limits = (wasm_limits){.min = 2, .max = 1, .has_max = true}; }
static void start_returning(fixture *f) { f->m.has_start = true; f->m.start = 3; }
static void start_void(fixture *f) { f->m.has_start = true; f->m.start = 1; }
static void start_unknown(fixture *f) { f->m.has_start = true; f->m.start = 8; }
static void func_unknown_type(fixture *f) { f->funcs[2].type_index = 40; }

static void two_exports(fixture *f, const char *a, const char *b) {
  f->exports[0] = (wasm_export){{a, (uint32_t)strlen(a)}, EXT_FUNC, 1, 100};
  f->exports[1] = (wasm_export){{b, (uint32_t)strlen(b)}, EXT_GLOBAL, 1, 110};
  f->m.nexports = 2;
}
static void exports_distinct(fixture *f) { two_exports(f, "a", "ab"); }
static void exports_duplicate(fixture *f) { two_exports(f, "a", "a"); }
static void export_unknown_global(fixture *f) { two_exports(f, "a", "b"); f->exports[1].index = 2; }

static void global_init(fixture *f, const wasm_insn *code, uint32_t n) {
  f->globals[1].init = (wasm_constexpr){code, n, 20};
}
static void global_nop(fixture *f) { global_init(f, nop_expr, 1); }
static void global_wrong_type(fixture *f) { global_init(f, i64_expr, 1); }
static void global_two_values(fixture *f) { global_init(f, two_i32_expr, 2); }
static void global_empty(fixture *f) { global_init(f, NULL, 0); }
static void global_reads_defined(fixture *f) { global_init(f, get_defined_global, 1); }
static void global_reads_import(fixture *f) { global_init(f, get_imported_global, 1); }
static void global_reads_mutable_import(fixture *f) {
  f->globals[0].mutable_ = true;
  global_init(f, get_imported_global, 1);
}

static void active_elem(fixture *f, uint32_t seg, uint32_t table, const wasm_insn *offset) {
  f->elems[seg].mode = SEG_ACTIVE;
  f->elems[seg].table_index = table;
  f->elems[seg].offset_expr = (wasm_constexpr){offset, 1, 30};
}
static void elem_active(fixture *f) { active_elem(f, 0, 0, zero_i32); }
static void elem_offset_i64(fixture *f) { active_elem(f, 0, 0, i64_expr); }
static void elem_into_other_type(fixture *f) { active_elem(f, 1, 0, zero_i32); }
static void elem_unknown_table(fixture *f) { active_elem(f, 0, 7, zero_i32); }
static void elem_item_wrong_type(fixture *f) { f->elems[1].items = elem0_items; }

static void data_active(fixture *f) {
  f->datas[0].mode = SEG_ACTIVE;
  f->datas[0].offset_expr = (wasm_constexpr){zero_i32, 1, 50};
}
static void data_without_memory(fixture *f) { data_active(f); f->m.nmems = 0; }

/* Function 2 is declared by an export, so a body may reference it. */
static void ref_declared_by_export(fixture *f) {
  two_exports(f, "a", "b");
  f->exports[0].index = 2;
  f->funcs[0].code = ref_func_2;
  f->funcs[0].ncode = 3;
}

static const struct {
  const char *name;
  void (*mutate)(fixture *);
  const char *msg;
} modules[] = {
  {"fixture", valid_as_is, NULL},
  {"multiple memories", two_memories, "multiple memories"},
  {"memory minimum over 4GiB", memory_too_large, "memory size must be at most 65536 pages (4GiB)"},
  {"memory maximum over 4GiB", memory_max_too_large, "memory size must be at most 65536 pages (4GiB)"},
  {"memory maximum of exactly 4GiB", memory_max_4gib, NULL},
  {"memory minimum of exactly 4GiB", memory_min_4gib,
   "memory of 65536 pages (4 GiB) at start: twasmc supports at most 65535 pages, 4 GiB less one "
   "page (implementation limit)"},
  {"memory minimum over maximum", memory_min_over_max, "size minimum must not be greater than maximum"},
  {"table minimum over maximum", table_min_over_max, "size minimum must not be greater than maximum"},
  {"start function returning a value", start_returning, "start function"},
  {"start function of type [] -> []", start_void, NULL},
  {"unknown start function", start_unknown, "unknown function 8"},
  {"function of unknown type", func_unknown_type, "unknown type 40"},
  {"distinct export names", exports_distinct, NULL},
  {"duplicate export name", exports_duplicate, "duplicate export name"},
  {"export of an unknown global", export_unknown_global, "unknown global 2"},
  {"global init not constant", global_nop, "constant expression required"},
  {"global init of the wrong type", global_wrong_type, "type mismatch"},
  {"global init of two values", global_two_values, "type mismatch"},
  {"global init of no value", global_empty, "type mismatch"},
  {"global init reading a defined global", global_reads_defined, "unknown global 1"},
  {"global init reading an imported global", global_reads_import, NULL},
  {"global init reading a mutable import", global_reads_mutable_import, "constant expression required"},
  {"active elem segment", elem_active, NULL},
  {"elem offset of type i64", elem_offset_i64, "type mismatch"},
  {"elem segment into a table of another type", elem_into_other_type, "type mismatch"},
  {"elem segment into an unknown table", elem_unknown_table, "unknown table 7"},
  {"elem item of the wrong type", elem_item_wrong_type, "type mismatch"},
  {"active data segment", data_active, NULL},
  {"data segment without memory", data_without_memory, "unknown memory 0"},
  {"ref.func declared by an export", ref_declared_by_export, NULL},
};

START_TEST(module_case) {
  fixture f;
  fixture_init(&f);
  modules[_i].mutate(&f);
  expect_result(&f.m, modules[_i].name, modules[_i].msg);
}
END_TEST

/* Limits errors point at the limits, defined or imported. */
START_TEST(limits_error_at_offset) {
  fixture f;
  tw_diag d = {0};
  fixture_init(&f);
  memory_min_4gib(&f);
  ck_assert(!val_module(&f.m, &d));
  ck_assert_uint_eq(d.offset, 11);
  fixture_init(&f);
  f.tables[1].limits = (wasm_limits){.min = 2, .max = 1, .has_max = true, .offset = 23};
  ck_assert(!val_module(&f.m, &d));
  ck_assert_uint_eq(d.offset, 23);
}
END_TEST

static Suite *validate_suite(void) {
  Suite *s = suite_create("validate");
  TCase *t = tcase_create("body");
  tcase_add_loop_test(t, body_case, 0, sizeof bodies / sizeof bodies[0]);
  tcase_add_test(t, error_at_instruction_offset);
  tcase_add_test(t, limits_error_at_offset);
  suite_add_tcase(s, t);
  t = tcase_create("module");
  tcase_add_loop_test(t, module_case, 0, sizeof modules / sizeof modules[0]);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(validate_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
