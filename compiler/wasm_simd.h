/* wasm_simd.h: the 0xFD-prefixed (SIMD and relaxed SIMD) instructions: their
 * immediates and types, shared by decode, validate and lower. */
#ifndef TW_WASM_SIMD_H
#define TW_WASM_SIMD_H

#include "wasm.h"

/* The highest sub-opcode: i32x4.relaxed_dot_i8x16_i7x16_add_s. */
#define WASM_SIMD_LAST 0x113u
/* Relaxed SIMD (Wasm 3.0) is sub-opcodes 0x100 .. WASM_SIMD_LAST. */
#define WASM_SIMD_RELAXED 0x100u

/* How an instruction's immediates are encoded (wasm_insn says where they go). */
typedef enum {
  SIMD_IM_NONE,
  SIMD_IM_MEM,      /* memarg */
  SIMD_IM_MEM_LANE, /* memarg, then a lane index byte */
  SIMD_IM_LANE,     /* a lane index byte */
  SIMD_IM_BYTES,    /* 16 bytes: v128.const's value or shuffle's lane indices */
} wasm_simd_imm;

/* One instruction: it pops params (first operand first; 0 ends the list)
 * and pushes result (0: nothing).  lanes bounds a lane index immediate
 * (32 for shuffle: both operands' lanes); align is the natural alignment
 * (log2 of the bytes accessed) of a memory instruction. */
typedef struct {
  const char *name;
  uint8_t imm;       /* wasm_simd_imm */
  uint8_t params[3];
  uint8_t result;
  uint8_t lanes;
  uint8_t align;
} wasm_simd_op;

/* The instruction of sub-opcode sub, or NULL when there is none. */
const wasm_simd_op *wasm_simd_info(uint32_t sub);

/* The sub-opcode of a decoded SIMD instruction. */
static inline uint32_t wasm_simd_sub(const wasm_insn *in) { return (uint32_t)in->op - OP_SIMD; }

static inline bool wasm_is_simd(uint16_t op) {
  return op >= OP_SIMD && op <= OP_SIMD + WASM_SIMD_LAST;
}

/* Sub-opcodes named outside the table (decode, constant expressions). */
enum {
  SIMD_V128_LOAD = 0x00, SIMD_V128_STORE = 0x0B, SIMD_V128_CONST = 0x0C,
  SIMD_I8X16_SHUFFLE = 0x0D,
};

#endif
