/* low_simd_lane.c: v128.const, shuffle, swizzle, splat, extract_lane and
 * replace_lane. */
#include "low_simd.h"

typedef enum { SL_CONST = 1, SL_SHUFFLE, SL_SWIZZLE, SL_SPLAT, SL_EXTRACT_S, SL_EXTRACT_U, SL_REPLACE } lane_kind;

typedef struct {
  uint8_t kind;  /* lane_kind, 0 in the table's holes */
  uint8_t shape; /* low_shape */
} lane_op;

static const lane_op lane_ops[] = {
    [0x0C] = {SL_CONST, SH_I8},      [0x0D] = {SL_SHUFFLE, SH_I8},    [0x0E] = {SL_SWIZZLE, SH_I8},
    [0x0F] = {SL_SPLAT, SH_I8},      [0x10] = {SL_SPLAT, SH_I16},     [0x11] = {SL_SPLAT, SH_I32},
    [0x12] = {SL_SPLAT, SH_I64},     [0x13] = {SL_SPLAT, SH_F32},     [0x14] = {SL_SPLAT, SH_F64},
    [0x15] = {SL_EXTRACT_S, SH_I8},  [0x16] = {SL_EXTRACT_U, SH_I8},  [0x17] = {SL_REPLACE, SH_I8},
    [0x18] = {SL_EXTRACT_S, SH_I16}, [0x19] = {SL_EXTRACT_U, SH_I16}, [0x1A] = {SL_REPLACE, SH_I16},
    [0x1B] = {SL_EXTRACT_S, SH_I32}, [0x1C] = {SL_REPLACE, SH_I32},
    [0x1D] = {SL_EXTRACT_S, SH_I64}, [0x1E] = {SL_REPLACE, SH_I64},
    [0x1F] = {SL_EXTRACT_S, SH_F32}, [0x20] = {SL_REPLACE, SH_F32},
    [0x21] = {SL_EXTRACT_S, SH_F64}, [0x22] = {SL_REPLACE, SH_F64},
};

/* The 16 bytes, little-endian, as the two i64 lanes of a v128. */
static LLVMValueRef v128_const(low_fn *f, const uint8_t *bytes) {
  LLVMValueRef halves[2];
  for (unsigned h = 0; h < 2; h++) {
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i++) v |= (uint64_t)bytes[8 * h + i] << (8 * i);
    halves[h] = LLVMConstInt(f->mc->t_i64, v, false);
  }
  return LLVMConstVector(halves, 2);
}

/* Lanes of s below 16 pick a's lane, others give 0.  Built as extracts at
 * the lane indices under a select, the shape LLVM's x86 backend turns
 * into pshufb where the target has SSSE3 (an index past 15 there gives an
 * unused lane, which the select drops). */
LLVMValueRef low_simd_swizzle(low_fn *f, LLVMValueRef a, LLVMValueRef s) {
  LLVMValueRef picked = LLVMGetPoison(LLVMTypeOf(a));
  for (unsigned i = 0; i < 16; i++) {
    LLVMValueRef at = LLVMConstInt(f->mc->t_i32, i, false);
    LLVMValueRef index = LLVMBuildExtractElement(f->b, s, at, "");
    LLVMValueRef lane = LLVMBuildExtractElement(f->b, a, index, "");
    picked = LLVMBuildInsertElement(f->b, picked, lane, at, "");
  }
  LLVMValueRef in_range =
      LLVMBuildICmp(f->b, LLVMIntULT, s, low_simd_const_int(LLVMTypeOf(s), 16), "");
  return LLVMBuildSelect(f->b, in_range, picked, LLVMConstNull(LLVMTypeOf(a)), "swizzle");
}

static LLVMValueRef shuffle(low_fn *f, const uint8_t *lanes) {
  LLVMValueRef b = low_simd_pop(f, SH_I8), a = low_simd_pop(f, SH_I8);
  unsigned mask[16];
  for (unsigned i = 0; i < 16; i++) mask[i] = lanes[i];
  return low_simd_shuffle(f, a, b, mask, 16);
}

/* i8 and i16 lanes travel as i32 on the operand stack. */
static LLVMValueRef lane_scalar(low_fn *f, low_shape s, LLVMValueRef x) {
  LLVMTypeRef lane_ty = low_simd_lane_type(f->mc, s);
  return s == SH_I8 || s == SH_I16 ? LLVMBuildTrunc(f->b, x, lane_ty, "") : x;
}

static LLVMValueRef extract(low_fn *f, low_shape s, unsigned lane, bool is_signed) {
  LLVMValueRef v = low_simd_pop(f, s);
  LLVMValueRef x = LLVMBuildExtractElement(f->b, v, LLVMConstInt(f->mc->t_i32, lane, false), "");
  if (s != SH_I8 && s != SH_I16) return x;
  return is_signed ? LLVMBuildSExt(f->b, x, f->mc->t_i32, "") : LLVMBuildZExt(f->b, x, f->mc->t_i32, "");
}

static LLVMValueRef replace(low_fn *f, low_shape s, unsigned lane) {
  LLVMValueRef x = lane_scalar(f, s, low_pop(f));
  LLVMValueRef v = low_simd_pop(f, s);
  return LLVMBuildInsertElement(f->b, v, x, LLVMConstInt(f->mc->t_i32, lane, false), "");
}

bool low_simd_lane(low_fn *f, const wasm_insn *insn, uint32_t sub) {
  if (sub >= sizeof lane_ops / sizeof lane_ops[0] || !lane_ops[sub].kind) return false;
  low_shape s = (low_shape)lane_ops[sub].shape;
  switch ((lane_kind)lane_ops[sub].kind) {
  case SL_CONST: low_push(f, v128_const(f, insn->u.bytes)); break;
  case SL_SHUFFLE: low_simd_push(f, shuffle(f, insn->u.bytes)); break;
  case SL_SWIZZLE: {
    LLVMValueRef sel = low_simd_pop(f, SH_I8), a = low_simd_pop(f, SH_I8);
    low_simd_push(f, low_simd_swizzle(f, a, sel));
    break;
  }
  case SL_SPLAT:
    low_simd_push(f, low_simd_splat(f, lane_scalar(f, s, low_pop(f)), low_simd_lanes(s)));
    break;
  case SL_EXTRACT_S: case SL_EXTRACT_U:
    low_push(f, extract(f, s, insn->u.lane, lane_ops[sub].kind == SL_EXTRACT_S));
    break;
  case SL_REPLACE: low_simd_push(f, replace(f, s, insn->u.lane)); break;
  }
  return true;
}
