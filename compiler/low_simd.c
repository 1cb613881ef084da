/* low_simd.c: the SIMD lowering's entry point: shapes, the helpers every
 * family uses, and the dispatch of a 0xFD instruction to its family. */
#include "low_simd.h"

static const struct {
  uint8_t lanes, bits;
  bool is_float;
} shapes[] = {
    [SH_I8] = {16, 8, false},  [SH_I16] = {8, 16, false}, [SH_I32] = {4, 32, false},
    [SH_I64] = {2, 64, false}, [SH_F32] = {4, 32, true},  [SH_F64] = {2, 64, true},
};

unsigned low_simd_lanes(low_shape s) { return shapes[s].lanes; }

LLVMTypeRef low_simd_lane_type(low_module_ctx *mc, low_shape s) {
  if (s == SH_F32) return mc->t_f32;
  if (s == SH_F64) return mc->t_f64;
  return LLVMIntTypeInContext(mc->ctx, shapes[s].bits);
}

LLVMTypeRef low_simd_type(low_module_ctx *mc, low_shape s) {
  return LLVMVectorType(low_simd_lane_type(mc, s), shapes[s].lanes);
}

LLVMValueRef low_simd_pop(low_fn *f, low_shape s) {
  return LLVMBuildBitCast(f->b, low_pop(f), low_simd_type(f->mc, s), "");
}

void low_simd_push(low_fn *f, LLVMValueRef v) {
  low_push(f, LLVMBuildBitCast(f->b, v, f->mc->t_v128, ""));
}

LLVMValueRef low_simd_splat(low_fn *f, LLVMValueRef scalar, unsigned lanes) {
  LLVMTypeRef ty = LLVMVectorType(LLVMTypeOf(scalar), lanes);
  LLVMValueRef zero = LLVMConstInt(f->mc->t_i32, 0, false);
  LLVMValueRef one = LLVMBuildInsertElement(f->b, LLVMGetPoison(ty), scalar, zero, "");
  return LLVMBuildShuffleVector(f->b, one, LLVMGetPoison(ty),
                                LLVMConstNull(LLVMVectorType(f->mc->t_i32, lanes)), "splat");
}

LLVMValueRef low_simd_const_int(LLVMTypeRef ty, uint64_t c) {
  LLVMTypeRef lane = LLVMGetElementType(ty);
  unsigned n = LLVMGetVectorSize(ty);
  LLVMValueRef lanes[16];
  for (unsigned i = 0; i < n; i++) lanes[i] = LLVMConstInt(lane, c, false);
  return LLVMConstVector(lanes, n);
}

LLVMValueRef low_simd_shuffle(low_fn *f, LLVMValueRef a, LLVMValueRef b, const unsigned *mask,
                              unsigned n) {
  LLVMValueRef lanes[32];
  for (unsigned i = 0; i < n; i++) lanes[i] = LLVMConstInt(f->mc->t_i32, mask[i], false);
  if (!b) b = LLVMGetPoison(LLVMTypeOf(a));
  return LLVMBuildShuffleVector(f->b, a, b, LLVMConstVector(lanes, n), "");
}

LLVMValueRef low_simd_half(low_fn *f, LLVMValueRef v, bool high) {
  unsigned n = LLVMGetVectorSize(LLVMTypeOf(v)) / 2, mask[16];
  for (unsigned i = 0; i < n; i++) mask[i] = i + (high ? n : 0);
  return low_simd_shuffle(f, v, NULL, mask, n);
}

LLVMValueRef low_simd_pick(low_fn *f, LLVMValueRef v, bool odd) {
  unsigned n = LLVMGetVectorSize(LLVMTypeOf(v)) / 2, mask[16];
  for (unsigned i = 0; i < n; i++) mask[i] = 2 * i + odd;
  return low_simd_shuffle(f, v, NULL, mask, n);
}

LLVMValueRef low_simd_concat(low_fn *f, LLVMValueRef a, LLVMValueRef b) {
  unsigned n = 2 * LLVMGetVectorSize(LLVMTypeOf(a)), mask[32];
  for (unsigned i = 0; i < n; i++) mask[i] = i;
  return low_simd_shuffle(f, a, b, mask, n);
}

LLVMValueRef low_simd_resize(low_fn *f, LLVMValueRef v, unsigned bits, bool is_signed) {
  LLVMTypeRef ty = LLVMTypeOf(v);
  unsigned have = LLVMGetIntTypeWidth(LLVMGetElementType(ty));
  LLVMTypeRef to = LLVMVectorType(LLVMIntTypeInContext(f->mc->ctx, bits), LLVMGetVectorSize(ty));
  if (bits < have) return LLVMBuildTrunc(f->b, v, to, "");
  if (bits == have) return v;
  return is_signed ? LLVMBuildSExt(f->b, v, to, "") : LLVMBuildZExt(f->b, v, to, "");
}

LLVMValueRef low_simd_mask(low_fn *f, LLVMValueRef cond, unsigned bits) {
  return low_simd_resize(f, cond, bits, true);
}

/* Families, tried in order; each declines sub-opcodes outside it. */
static bool (*const families[])(low_fn *, const wasm_insn *, uint32_t) = {
    low_simd_memory, low_simd_lane,  low_simd_logic,   low_simd_int,
    low_simd_float,  low_simd_widen, low_simd_convert, low_simd_relaxed,
};

bool low_emit_simd(low_fn *f, const wasm_insn *insn) {
  if (!wasm_is_simd(insn->op)) return false;
  uint32_t sub = wasm_simd_sub(insn);
  for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
    if (families[i](f, insn, sub)) return true;
  return false;
}
