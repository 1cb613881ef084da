/* wasm.h: the decoded module, shared by decode, validate and lower. */
#ifndef TW_WASM_H
#define TW_WASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Value types, by their binary encoding. */
enum {
  VT_I32 = 0x7f,
  VT_I64 = 0x7e,
  VT_F32 = 0x7d,
  VT_F64 = 0x7c,
  VT_V128 = 0x7b,
  VT_FUNCREF = 0x70,
  VT_EXTERNREF = 0x6f,
};

/* External kinds, by their binary encoding. */
enum { EXT_FUNC = 0, EXT_TABLE = 1, EXT_MEMORY = 2, EXT_GLOBAL = 3 };

/* A name: UTF-8 (checked by decode), NUL-terminated for convenience, but may
 * hold NUL bytes, so the length is authoritative. */
typedef struct {
  const char *bytes;
  uint32_t len;
} wasm_name;

typedef struct {
  uint32_t nparams, nresults;
  const uint8_t *params;  /* nparams value types */
  const uint8_t *results; /* nresults value types */
} wasm_functype;

typedef struct {
  uint64_t min, max; /* max valid only when has_max */
  bool has_max;
  uint32_t offset;   /* file offset of the limits (their flags byte) */
} wasm_limits;

/* Block types: empty, one value type, or a type index (multi-value). */
enum { BT_EMPTY = 0, BT_VALTYPE = 1, BT_TYPEIDX = 2 };

/* Opcodes: single-byte ones are their byte; the 0xFC-prefixed ones are
 * 0xFC00 | sub-opcode (e.g. memory.copy = 0xFC0A); the 0xFD-prefixed (SIMD)
 * ones are OP_SIMD + sub-opcode (sub-opcodes run to 0x113, past a byte, so
 * 0xFD00 + sub would reach into a later 0xFE prefix's numbers); their
 * immediates and types are in wasm_simd.h. */
enum {
  OP_UNREACHABLE = 0x00, OP_NOP = 0x01, OP_BLOCK = 0x02, OP_LOOP = 0x03,
  OP_IF = 0x04, OP_ELSE = 0x05, OP_END = 0x0B, OP_BR = 0x0C, OP_BR_IF = 0x0D,
  OP_BR_TABLE = 0x0E, OP_RETURN = 0x0F, OP_CALL = 0x10,
  OP_CALL_INDIRECT = 0x11, OP_DROP = 0x1A, OP_SELECT = 0x1B,
  OP_SELECT_T = 0x1C, OP_LOCAL_GET = 0x20, OP_LOCAL_SET = 0x21,
  OP_LOCAL_TEE = 0x22, OP_GLOBAL_GET = 0x23, OP_GLOBAL_SET = 0x24,
  OP_TABLE_GET = 0x25, OP_TABLE_SET = 0x26,
  /* 0x28..0x3E loads and stores, in spec order */
  OP_I32_LOAD = 0x28, OP_I64_LOAD = 0x29, OP_F32_LOAD = 0x2A,
  OP_F64_LOAD = 0x2B, OP_I32_LOAD8_S = 0x2C, OP_I32_LOAD8_U = 0x2D,
  OP_I32_LOAD16_S = 0x2E, OP_I32_LOAD16_U = 0x2F, OP_I64_LOAD8_S = 0x30,
  OP_I64_LOAD8_U = 0x31, OP_I64_LOAD16_S = 0x32, OP_I64_LOAD16_U = 0x33,
  OP_I64_LOAD32_S = 0x34, OP_I64_LOAD32_U = 0x35, OP_I32_STORE = 0x36,
  OP_I64_STORE = 0x37, OP_F32_STORE = 0x38, OP_F64_STORE = 0x39,
  OP_I32_STORE8 = 0x3A, OP_I32_STORE16 = 0x3B, OP_I64_STORE8 = 0x3C,
  OP_I64_STORE16 = 0x3D, OP_I64_STORE32 = 0x3E,
  OP_MEMORY_SIZE = 0x3F, OP_MEMORY_GROW = 0x40,
  OP_I32_CONST = 0x41, OP_I64_CONST = 0x42, OP_F32_CONST = 0x43,
  OP_F64_CONST = 0x44,
  /* 0x45..0xC4: numeric instructions, in spec order (i32.eqz .. i64.extend32_s) */
  OP_I32_EQZ = 0x45, OP_I64_EQZ = 0x50, OP_F32_EQ = 0x5B, OP_F64_EQ = 0x61,
  OP_I32_CLZ = 0x67, OP_I64_CLZ = 0x79, OP_F32_ABS = 0x8B, OP_F64_ABS = 0x99,
  OP_I32_WRAP_I64 = 0xA7, OP_I64_EXTEND32_S = 0xC4,
  OP_REF_NULL = 0xD0, OP_REF_IS_NULL = 0xD1, OP_REF_FUNC = 0xD2,
  OP_PREFIX_FC = 0xFC,
  OP_I32_TRUNC_SAT_F32_S = 0xFC00, /* .. 0xFC07 i64.trunc_sat_f64_u */
  OP_MEMORY_INIT = 0xFC08, OP_DATA_DROP = 0xFC09, OP_MEMORY_COPY = 0xFC0A,
  OP_MEMORY_FILL = 0xFC0B, OP_TABLE_INIT = 0xFC0C, OP_ELEM_DROP = 0xFC0D,
  OP_TABLE_COPY = 0xFC0E, OP_TABLE_GROW = 0xFC0F, OP_TABLE_SIZE = 0xFC10,
  OP_TABLE_FILL = 0xFC11,
  OP_PREFIX_FD = 0xFD,
  OP_SIMD = 0xD000, /* .. OP_SIMD + WASM_SIMD_LAST */
};

/* One decoded instruction.  Which immediate is valid depends on op:
 *   block/loop/if:   block (else_at/end_at are indices into the function's
 *                    code array, filled by decode; else_at = 0 when no else)
 *   br, br_if, call, local.*, global.*, table.get/set/size/grow/fill,
 *   ref.func, elem.drop, data.drop, memory.init: index
 *   br_table:        br_table (labels[count] is the default label)
 *   call_indirect:   pair (a = type index, b = table index)
 *   table.copy:      pair (a = dst table, b = src table)
 *   table.init:      pair (a = elem segment, b = table)
 *   loads, stores:   mem (align is the log2 exponent as encoded)
 *   consts:          i32 / i64 / f32 bits / f64 bits
 *   select t, ref.null: valtype
 *   SIMD (wasm_simd.h says which): mem; mem with mem.lane (lane loads and
 *                    stores); lane (extract/replace_lane); bytes
 *                    (v128.const: the 16 bytes of the value, little-endian;
 *                    i8x16.shuffle: the 16 lane indices), pointing into the
 *                    module's bytes, which outlive the decoded module
 */
typedef struct wasm_insn {
  uint16_t op;
  uint8_t valtype;
  uint32_t offset; /* file offset of the opcode byte */
  union {
    uint32_t index;
    struct { uint32_t a, b; } pair;
    struct { uint32_t align; uint8_t lane; uint64_t offset; } mem;
    uint8_t lane;
    const uint8_t *bytes;
    int32_t i32;
    int64_t i64;
    uint32_t f32;
    uint64_t f64;
    struct { const uint32_t *labels; uint32_t count; } br_table;
    struct { uint8_t kind; uint32_t type_index; uint32_t else_at, end_at; } block;
  } u;
} wasm_insn;
/* Every function body is an array of these: keep them small. */
_Static_assert(sizeof(wasm_insn) <= 24, "wasm_insn must stay compact");

/* A constant expression: its instructions without the final end. */
typedef struct {
  const wasm_insn *code;
  uint32_t ncode;
  uint32_t offset; /* file offset of the expression */
} wasm_constexpr;

/* Function index space: imports first, then the code section's. */
typedef struct {
  uint32_t type_index;
  bool imported;
  uint32_t import_index;   /* when imported */
  /* defined functions only: */
  uint32_t nlocals;        /* declared locals, parameters excluded */
  const uint8_t *locals;   /* nlocals value types */
  const wasm_insn *code;   /* body, including the final end */
  uint32_t ncode;
  uint32_t body_offset;    /* file offset of the body (its size field) */
  uint32_t body_size;
  const char *name;        /* from the name section, or NULL */
} wasm_func;

typedef struct {
  uint8_t elem_type; /* VT_FUNCREF or VT_EXTERNREF */
  wasm_limits limits;
  bool imported;
  uint32_t import_index;
} wasm_table;

typedef struct {
  wasm_limits limits; /* in 64 KiB pages */
  bool imported;
  uint32_t import_index;
} wasm_memory;

typedef struct {
  uint8_t valtype;
  bool mutable_;
  bool imported;
  uint32_t import_index;
  wasm_constexpr init; /* defined globals only */
} wasm_global;

typedef struct {
  wasm_name module, name;
  uint8_t kind;  /* EXT_* */
  uint32_t index; /* index in the kind's index space it occupies */
  uint32_t offset;
} wasm_import;

typedef struct {
  wasm_name name;
  uint8_t kind;
  uint32_t index;
  uint32_t offset;
} wasm_export;

enum { SEG_ACTIVE = 0, SEG_PASSIVE = 1, SEG_DECLARATIVE = 2 };

typedef struct {
  uint8_t mode;        /* SEG_* */
  uint8_t elem_type;   /* VT_FUNCREF or VT_EXTERNREF */
  uint32_t table_index;
  wasm_constexpr offset_expr; /* active only */
  uint32_t nitems;
  const wasm_constexpr *items; /* each a ref.func, ref.null or global.get */
  uint32_t offset;
} wasm_elem;

typedef struct {
  uint8_t mode; /* SEG_ACTIVE or SEG_PASSIVE */
  uint32_t mem_index;
  wasm_constexpr offset_expr;
  const uint8_t *bytes;
  uint32_t size;
  uint32_t offset;
} wasm_data;

typedef struct wasm_module {
  const char *filename;
  const uint8_t *bytes;
  size_t size;

  wasm_functype *types;  uint32_t ntypes;
  wasm_import *imports;  uint32_t nimports;
  wasm_func *funcs;      uint32_t nfuncs;    /* imports included */
  wasm_table *tables;    uint32_t ntables;   /* imports included */
  wasm_memory *mems;     uint32_t nmems;     /* imports included */
  wasm_global *globals;  uint32_t nglobals;  /* imports included */
  wasm_export *exports;  uint32_t nexports;
  wasm_elem *elems;      uint32_t nelems;
  wasm_data *datas;      uint32_t ndatas;
  uint32_t nfunc_imports, ntable_imports, nmem_imports, nglobal_imports;
  bool has_start;        uint32_t start;
  bool has_datacount;    uint32_t datacount;
  const char *module_name; /* from the name section, or NULL */
} wasm_module;

#endif
