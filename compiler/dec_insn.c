/* dec_insn.c: instruction sequences (bodies, constant expressions) -> wasm_insn. */
#include "dec_internal.h"
#include "wasm_simd.h"

#include <stdlib.h>
#include <string.h>

/* How an opcode's immediates are encoded. */
enum {
  IM_ILLEGAL, IM_NONE, IM_BLOCK, IM_INDEX, IM_BR_TABLE, IM_PAIR, IM_SELECT_T,
  IM_MEM, IM_ZERO, IM_ZERO2, IM_I32, IM_I64, IM_F32, IM_F64, IM_REF_NULL,
  IM_DATA_INDEX, IM_MEMORY_INIT, IM_PREFIX_FC, IM_PREFIX_FD, IM_MEM_LANE, IM_LANE,
  IM_BYTES16,
};

static int imm_of_byte(uint8_t op) {
  if (op >= OP_I32_LOAD && op <= OP_I64_STORE32) return IM_MEM;
  if (op >= OP_I32_EQZ && op <= OP_I64_EXTEND32_S) return IM_NONE;
  switch (op) {
  case OP_UNREACHABLE: case OP_NOP: case OP_ELSE: case OP_END: case OP_RETURN:
  case OP_DROP: case OP_SELECT: case OP_REF_IS_NULL:
    return IM_NONE;
  case OP_BLOCK: case OP_LOOP: case OP_IF:
    return IM_BLOCK;
  case OP_BR: case OP_BR_IF: case OP_CALL: case OP_LOCAL_GET: case OP_LOCAL_SET:
  case OP_LOCAL_TEE: case OP_GLOBAL_GET: case OP_GLOBAL_SET: case OP_TABLE_GET:
  case OP_TABLE_SET: case OP_REF_FUNC:
    return IM_INDEX;
  case OP_BR_TABLE: return IM_BR_TABLE;
  case OP_CALL_INDIRECT: return IM_PAIR;
  case OP_SELECT_T: return IM_SELECT_T;
  case OP_MEMORY_SIZE: case OP_MEMORY_GROW: return IM_ZERO;
  case OP_I32_CONST: return IM_I32;
  case OP_I64_CONST: return IM_I64;
  case OP_F32_CONST: return IM_F32;
  case OP_F64_CONST: return IM_F64;
  case OP_REF_NULL: return IM_REF_NULL;
  case OP_PREFIX_FC: return IM_PREFIX_FC;
  case OP_PREFIX_FD: return IM_PREFIX_FD;
  default: return IM_ILLEGAL;
  }
}

/* 0xFC sub-opcodes 0..17, by sub-opcode. */
static const uint8_t fc_imm[] = {
  IM_NONE, IM_NONE, IM_NONE, IM_NONE, IM_NONE, IM_NONE, IM_NONE, IM_NONE,
  IM_MEMORY_INIT, IM_DATA_INDEX, IM_ZERO2, IM_ZERO, IM_PAIR, IM_INDEX,
  IM_PAIR, IM_INDEX, IM_INDEX, IM_INDEX,
};

static bool zero_byte(dec_reader *r) {
  size_t at = r->pos;
  uint8_t b;
  if (!dec_byte(r, &b)) return false;
  if (b != 0) return tw_fail(r->d, (uint32_t)at, "zero byte expected");
  return true;
}

static bool sleb(dec_reader *r, unsigned bits, uint64_t *out) {
  const char *msg = r->in_section ? "unexpected end of section or function" : "unexpected end";
  return dec_leb(r->bytes, r->end, &r->pos, bits, true, out, msg, r->d);
}

static bool fixed_bytes(dec_reader *r, unsigned n, uint64_t *out) {
  if (r->end - r->pos < n) {
    r->pos = r->end;
    return dec_fail_eof(r);
  }
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++) v |= (uint64_t)r->bytes[r->pos + i] << (8 * i);
  r->pos += n;
  *out = v;
  return true;
}

/* 0x40, a value type, or a non-negative s33 type index. */
static bool block_type(dec_reader *r, wasm_insn *in) {
  size_t at = r->pos;
  if (r->pos < r->end) {
    uint8_t b = r->bytes[r->pos];
    if (b == 0x40 || dec_is_valtype(b)) {
      r->pos++;
      in->u.block.kind = b == 0x40 ? BT_EMPTY : BT_VALTYPE;
      in->valtype = b == 0x40 ? 0 : b;
      return true;
    }
  }
  /* a one-byte negative s33 is a value type, never a type index */
  if (r->pos < r->end && dec_type_feature(r->bytes[r->pos]))
    return dec_unsupported(r, at, dec_type_feature(r->bytes[r->pos]));
  uint64_t v;
  if (!sleb(r, 33, &v)) return false;
  if ((int64_t)v < 0) return tw_fail(r->d, (uint32_t)at, "malformed value type");
  in->u.block.kind = BT_TYPEIDX;
  in->u.block.type_index = (uint32_t)v;
  return true;
}

static bool br_table(dec_reader *r, wasm_insn *in) {
  uint32_t count;
  if (!dec_count(r, &count)) return false;
  uint32_t *labels = tw_arena_alloc(r->arena, ((size_t)count + 1) * sizeof *labels);
  for (uint32_t i = 0; i <= count; i++)
    if (!dec_u32r(r, &labels[i])) return false;
  in->u.br_table.labels = labels;
  in->u.br_table.count = count;
  return true;
}

/* The validator rejects any arity but one, seen here as valtype 0. */
static bool select_types(dec_reader *r, wasm_insn *in) {
  uint32_t count;
  uint8_t t = 0;
  if (!dec_count(r, &count)) return false;
  for (uint32_t i = 0; i < count; i++)
    if (!dec_valtype(r, &t)) return false;
  in->valtype = count == 1 ? t : 0;
  return true;
}

static bool fc_opcode(dec_reader *r, wasm_insn *in, int *imm) {
  uint32_t sub;
  size_t at = r->pos;
  if (!dec_u32r(r, &sub)) return false;
  if (sub >= sizeof fc_imm) return tw_fail(r->d, (uint32_t)at, "illegal opcode");
  in->op = (uint16_t)(0xFC00 | sub);
  *imm = fc_imm[sub];
  if ((*imm == IM_MEMORY_INIT || *imm == IM_DATA_INDEX) && !r->uses_data) {
    r->uses_data = true;
    r->first_data_use = in->offset;
  }
  return true;
}

/* wasm_simd_imm -> the decoder's immediate kinds. */
static const uint8_t simd_imm[] = {
  [SIMD_IM_NONE] = IM_NONE, [SIMD_IM_MEM] = IM_MEM, [SIMD_IM_MEM_LANE] = IM_MEM_LANE,
  [SIMD_IM_LANE] = IM_LANE, [SIMD_IM_BYTES] = IM_BYTES16,
};

static bool fd_opcode(dec_reader *r, wasm_insn *in, int *imm) {
  uint32_t sub;
  size_t at = r->pos;
  if (!dec_u32r(r, &sub)) return false;
  const wasm_simd_op *info = wasm_simd_info(sub);
  if (!info) return tw_fail(r->d, (uint32_t)at, "illegal opcode");
  in->op = (uint16_t)(OP_SIMD + sub);
  *imm = simd_imm[info->imm];
  return true;
}

static bool memarg(dec_reader *r, wasm_insn *in) {
  uint32_t offset;
  if (!dec_u32r(r, &in->u.mem.align) || !dec_u32r(r, &offset)) return false;
  in->u.mem.offset = offset;
  return true;
}

/* v128.const and i8x16.shuffle: 16 raw bytes, kept where they are. */
static bool bytes16(dec_reader *r, wasm_insn *in) {
  if (r->end - r->pos < 16) {
    r->pos = r->end;
    return dec_fail_eof(r);
  }
  in->u.bytes = r->bytes + r->pos;
  r->pos += 16;
  return true;
}

static bool immediates(dec_reader *r, wasm_insn *in, int imm) {
  uint64_t v;
  switch (imm) {
  case IM_NONE: return true;
  case IM_BLOCK: return block_type(r, in);
  case IM_INDEX: case IM_DATA_INDEX: return dec_u32r(r, &in->u.index);
  case IM_MEMORY_INIT: return dec_u32r(r, &in->u.index) && zero_byte(r);
  case IM_BR_TABLE: return br_table(r, in);
  case IM_PAIR: return dec_u32r(r, &in->u.pair.a) && dec_u32r(r, &in->u.pair.b);
  case IM_SELECT_T: return select_types(r, in);
  case IM_ZERO: return zero_byte(r);
  case IM_ZERO2: return zero_byte(r) && zero_byte(r);
  case IM_REF_NULL: return dec_reftype(r, &in->valtype);
  case IM_MEM: return memarg(r, in);
  case IM_MEM_LANE: return memarg(r, in) && dec_byte(r, &in->u.mem.lane);
  case IM_LANE: return dec_byte(r, &in->u.lane);
  case IM_BYTES16: return bytes16(r, in);
  case IM_I32: if (!sleb(r, 32, &v)) return false; in->u.i32 = (int32_t)v; return true;
  case IM_I64: if (!sleb(r, 64, &v)) return false; in->u.i64 = (int64_t)v; return true;
  case IM_F32: if (!fixed_bytes(r, 4, &v)) return false; in->u.f32 = (uint32_t)v; return true;
  case IM_F64: return fixed_bytes(r, 8, &in->u.f64);
  default: {
    const char *feature = dec_opcode_feature((uint8_t)in->op);
    if (feature) return dec_unsupported(r, in->offset, feature);
    return tw_fail(r->d, in->offset, "illegal opcode");
  }
  }
}

/* Grows a scratch array to hold index n; the bound is the input size, so
 * failure means the host is out of memory, reported rather than aborted. */
static bool reserve(dec_reader *r, void **buf, size_t *cap, size_t elem, size_t n) {
  if (n < *cap) return true;
  size_t want = *cap ? *cap * 2 : 64;
  void *p = realloc(*buf, want * elem);
  if (!p) return tw_fail(r->d, (uint32_t)r->pos, "out of memory");
  *buf = p;
  *cap = want;
  return true;
}

/* Opens, splits and closes blocks; returns true in *done at the end that
 * closes depth 0. */
static bool nest(dec_reader *r, uint32_t at, size_t *depth, bool *done) {
  wasm_insn *in = &r->insns[at];
  if (in->op == OP_BLOCK || in->op == OP_LOOP || in->op == OP_IF) {
    if (!reserve(r, (void **)&r->blocks, &r->blocks_cap, sizeof *r->blocks, *depth))
      return false;
    r->blocks[(*depth)++] = at;
  } else if (in->op == OP_ELSE) {
    wasm_insn *open = *depth ? &r->insns[r->blocks[*depth - 1]] : NULL;
    if (!open || open->op != OP_IF || open->u.block.else_at)
      return tw_fail(r->d, in->offset, "END opcode expected");
    open->u.block.else_at = at;
  } else if (in->op == OP_END) {
    if (*depth == 0) *done = true;
    else r->insns[r->blocks[--*depth]].u.block.end_at = at;
  }
  return true;
}

/* A body that stops before its final end: at the end of the input the spec
 * calls it an unexpected end, elsewhere the next bytes are not an end. */
static bool ran_out(dec_reader *r, bool is_body) {
  if (!is_body || r->pos >= r->size) return dec_fail_eof(r);
  return tw_fail(r->d, (uint32_t)r->pos, "END opcode expected");
}

bool dec_insns(dec_reader *r, bool is_body, const wasm_insn **code, uint32_t *ncode) {
  size_t n = 0, depth = 0;
  bool done = false;
  while (!done) {
    if (r->pos >= r->end) return ran_out(r, is_body);
    if (!reserve(r, (void **)&r->insns, &r->insns_cap, sizeof *r->insns, n)) return false;
    wasm_insn *in = &r->insns[n];
    memset(in, 0, sizeof *in);
    in->offset = (uint32_t)r->pos;
    in->op = r->bytes[r->pos++];
    int imm = imm_of_byte((uint8_t)in->op);
    if (imm == IM_PREFIX_FC && !fc_opcode(r, in, &imm)) return false;
    if (imm == IM_PREFIX_FD && !fd_opcode(r, in, &imm)) return false;
    if (!immediates(r, in, imm) || !nest(r, (uint32_t)n, &depth, &done)) return false;
    n++;
  }
  *code = tw_arena_dup(r->arena, r->insns, n * sizeof *r->insns);
  *ncode = (uint32_t)n;
  return true;
}

bool dec_constexpr(dec_reader *r, wasm_constexpr *out) {
  out->offset = (uint32_t)r->pos;
  if (!dec_insns(r, false, &out->code, &out->ncode)) return false;
  out->ncode--;
  return true;
}
