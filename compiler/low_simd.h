/* low_simd.h: what the SIMD lowering files (low_simd*.c) share. */
#ifndef TW_LOW_SIMD_H
#define TW_LOW_SIMD_H

#include "low_convert.h"
#include "wasm_simd.h"

/* The lane interpretations of a v128: i8x16, i16x8, i32x4, i64x2, f32x4,
 * f64x2.  Values travel as mc->t_v128 (<2 x i64>) and are bitcast to a
 * shape's vector type where an instruction reads them (free on x86). */
typedef enum { SH_I8, SH_I16, SH_I32, SH_I64, SH_F32, SH_F64 } low_shape;

unsigned low_simd_lanes(low_shape s);
LLVMTypeRef low_simd_lane_type(low_module_ctx *mc, low_shape s);
LLVMTypeRef low_simd_type(low_module_ctx *mc, low_shape s);

/* Pops the top v128 as shape s; pushes any 128-bit vector as a v128. */
LLVMValueRef low_simd_pop(low_fn *f, low_shape s);
void low_simd_push(low_fn *f, LLVMValueRef v);

/* Every lane set to scalar (a value of the lane type). */
LLVMValueRef low_simd_splat(low_fn *f, LLVMValueRef scalar, unsigned lanes);
/* A vector of type ty with every lane the integer or float constant c. */
LLVMValueRef low_simd_const_int(LLVMTypeRef ty, uint64_t c);
/* shufflevector a, b with a constant mask of n lane indices. */
LLVMValueRef low_simd_shuffle(low_fn *f, LLVMValueRef a, LLVMValueRef b, const unsigned *mask,
                              unsigned n);
/* The low or high half of v's lanes, as a vector of half as many. */
LLVMValueRef low_simd_half(low_fn *f, LLVMValueRef v, bool high);
/* The even (odd = false) or odd lanes of v, as a vector of half as many. */
LLVMValueRef low_simd_pick(low_fn *f, LLVMValueRef v, bool odd);
/* a and b side by side, a's lanes first: twice as many lanes. */
LLVMValueRef low_simd_concat(low_fn *f, LLVMValueRef a, LLVMValueRef b);
/* The same lanes with an integer type of bits bits (sign- or zero-extended
 * or truncated). */
LLVMValueRef low_simd_resize(low_fn *f, LLVMValueRef v, unsigned bits, bool is_signed);
/* A lane-wise i1 vector as all-ones / all-zeros lanes of width bits. */
LLVMValueRef low_simd_mask(low_fn *f, LLVMValueRef cond, unsigned bits);

/* Families; each returns false for a sub-opcode outside it. */
bool low_simd_memory(low_fn *f, const wasm_insn *insn, uint32_t sub);  /* loads, stores */
bool low_simd_lane(low_fn *f, const wasm_insn *insn, uint32_t sub);    /* const, shuffle, swizzle, splat, lanes */
bool low_simd_logic(low_fn *f, const wasm_insn *insn, uint32_t sub);   /* bitwise, any/all_true, bitmask */
bool low_simd_int(low_fn *f, const wasm_insn *insn, uint32_t sub);     /* integer arithmetic, compares, shifts */
bool low_simd_float(low_fn *f, const wasm_insn *insn, uint32_t sub);   /* float arithmetic, compares, rounding */
bool low_simd_widen(low_fn *f, const wasm_insn *insn, uint32_t sub);   /* extend, extmul, extadd, dot, narrow */
bool low_simd_convert(low_fn *f, const wasm_insn *insn, uint32_t sub); /* int <-> float, f32 <-> f64 */
bool low_simd_relaxed(low_fn *f, const wasm_insn *insn, uint32_t sub); /* relaxed SIMD */

/* Shared by low_simd_logic.c and low_simd_relaxed.c: bits of v1 where c
 * is set, of v2 elsewhere (v128.bitselect). */
LLVMValueRef low_simd_bitselect(low_fn *f, LLVMValueRef v1, LLVMValueRef v2, LLVMValueRef c);
/* Shared by low_simd_int.c and low_simd_relaxed.c: i16x8.q15mulr_sat_s. */
LLVMValueRef low_simd_q15mulr(low_fn *f, LLVMValueRef a, LLVMValueRef b);
/* Shared by low_simd_lane.c and low_simd_relaxed.c: i8x16.swizzle. */
LLVMValueRef low_simd_swizzle(low_fn *f, LLVMValueRef a, LLVMValueRef s);
/* Shared by low_simd_float.c and low_simd_relaxed.c: Wasm's min/max. */
LLVMValueRef low_simd_fminmax(low_fn *f, LLVMValueRef a, LLVMValueRef b, bool is_max);
/* low_simd_round.c: ceil (kind 0), floor, trunc, nearest (3) in SSE2. */
LLVMValueRef low_simd_round_sse2(low_fn *f, LLVMValueRef x, unsigned kind);
/* Shared by low_simd_convert.c and low_simd_relaxed.c: trunc_sat. */
LLVMValueRef low_simd_trunc_sat(low_fn *f, LLVMValueRef x, bool is_signed);

#endif
