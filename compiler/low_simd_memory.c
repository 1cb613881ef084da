/* low_simd_memory.c: v128 loads and stores: whole, extending, splatting,
 * zero-filling and single-lane.  Every access goes through low_access_ptr
 * with its full size, so both bounds-check modes trap on any byte of it
 * past the end of memory. */
#include "low_simd.h"

typedef enum {
  SM_LOAD, SM_STORE, SM_EXTEND_S, SM_EXTEND_U, SM_SPLAT, SM_ZERO, SM_LOAD_LANE, SM_STORE_LANE,
} simd_mem_kind;

/* kind, and the shape of the lanes read or written (extends: the shape of
 * the result); is_memory is false in the table's holes. */
typedef struct {
  uint8_t kind;  /* simd_mem_kind */
  uint8_t shape; /* low_shape */
  bool is_memory;
} simd_mem_op;

#define M(k, s) {k, s, true}
static const simd_mem_op mem_ops[] = {
    [0x00] = M(SM_LOAD, SH_I64),
    [0x01] = M(SM_EXTEND_S, SH_I16), [0x02] = M(SM_EXTEND_U, SH_I16),
    [0x03] = M(SM_EXTEND_S, SH_I32), [0x04] = M(SM_EXTEND_U, SH_I32),
    [0x05] = M(SM_EXTEND_S, SH_I64), [0x06] = M(SM_EXTEND_U, SH_I64),
    [0x07] = M(SM_SPLAT, SH_I8),     [0x08] = M(SM_SPLAT, SH_I16),
    [0x09] = M(SM_SPLAT, SH_I32),    [0x0A] = M(SM_SPLAT, SH_I64),
    [0x0B] = M(SM_STORE, SH_I64),
    [0x54] = M(SM_LOAD_LANE, SH_I8), [0x55] = M(SM_LOAD_LANE, SH_I16),
    [0x56] = M(SM_LOAD_LANE, SH_I32), [0x57] = M(SM_LOAD_LANE, SH_I64),
    [0x58] = M(SM_STORE_LANE, SH_I8), [0x59] = M(SM_STORE_LANE, SH_I16),
    [0x5A] = M(SM_STORE_LANE, SH_I32), [0x5B] = M(SM_STORE_LANE, SH_I64),
    [0x5C] = M(SM_ZERO, SH_I32),     [0x5D] = M(SM_ZERO, SH_I64),
};

/* Wasm alignment is only a hint, so every access says align 1. */
static LLVMValueRef load(low_fn *f, LLVMTypeRef ty, LLVMValueRef ptr) {
  LLVMValueRef v = LLVMBuildLoad2(f->b, ty, ptr, "");
  LLVMSetAlignment(v, 1);
  low_tbaa(f->mc, v, f->mc->tbaa_memory);
  return v;
}

static void store(low_fn *f, LLVMValueRef v, LLVMValueRef ptr) {
  LLVMValueRef st = LLVMBuildStore(f->b, v, ptr);
  LLVMSetAlignment(st, 1);
  low_tbaa(f->mc, st, f->mc->tbaa_memory);
}

static LLVMValueRef lane_index(low_fn *f, unsigned lane) {
  return LLVMConstInt(f->mc->t_i32, lane, false);
}

/* load8x8, load16x4, load32x2: half as many lanes of half the width. */
static LLVMValueRef extend(low_fn *f, const wasm_insn *insn, LLVMValueRef addr, low_shape to,
                           bool is_signed) {
  unsigned lanes = low_simd_lanes(to);
  unsigned bits = LLVMGetIntTypeWidth(low_simd_lane_type(f->mc, to)) / 2;
  LLVMTypeRef narrow = LLVMVectorType(LLVMIntTypeInContext(f->mc->ctx, bits), lanes);
  LLVMValueRef v = load(f, narrow, low_access_ptr(f, insn, addr, 8));
  return low_simd_resize(f, v, bits * 2, is_signed);
}

/* One lane's worth from memory, placed by kind. */
static LLVMValueRef load_lanes(low_fn *f, const wasm_insn *insn, const simd_mem_op *op,
                               LLVMValueRef addr, LLVMValueRef into) {
  low_module_ctx *mc = f->mc;
  LLVMTypeRef lane_ty = low_simd_lane_type(mc, op->shape);
  unsigned bytes = LLVMGetIntTypeWidth(lane_ty) / 8, lanes = low_simd_lanes(op->shape);
  LLVMValueRef x = load(f, lane_ty, low_access_ptr(f, insn, addr, bytes));
  switch (op->kind) {
  case SM_SPLAT: return low_simd_splat(f, x, lanes);
  case SM_ZERO:
    return LLVMBuildInsertElement(f->b, LLVMConstNull(low_simd_type(mc, op->shape)), x,
                                  lane_index(f, 0), "");
  default: return LLVMBuildInsertElement(f->b, into, x, lane_index(f, insn->u.mem.lane), "");
  }
}

static void emit(low_fn *f, const wasm_insn *insn, const simd_mem_op *op) {
  low_module_ctx *mc = f->mc;
  switch (op->kind) {
  case SM_LOAD:
    low_simd_push(f, load(f, mc->t_v128, low_access_ptr(f, insn, low_pop(f), 16)));
    return;
  case SM_STORE: {
    LLVMValueRef v = low_pop(f);
    store(f, v, low_access_ptr(f, insn, low_pop(f), 16));
    return;
  }
  case SM_EXTEND_S: case SM_EXTEND_U:
    low_simd_push(f, extend(f, insn, low_pop(f), op->shape, op->kind == SM_EXTEND_S));
    return;
  case SM_STORE_LANE: {
    LLVMValueRef v = low_simd_pop(f, op->shape);
    LLVMValueRef x = LLVMBuildExtractElement(f->b, v, lane_index(f, insn->u.mem.lane), "");
    unsigned bytes = LLVMGetIntTypeWidth(LLVMTypeOf(x)) / 8;
    store(f, x, low_access_ptr(f, insn, low_pop(f), bytes));
    return;
  }
  default: {
    LLVMValueRef into = op->kind == SM_LOAD_LANE ? low_simd_pop(f, op->shape) : NULL;
    low_simd_push(f, load_lanes(f, insn, op, low_pop(f), into));
    return;
  }
  }
}

bool low_simd_memory(low_fn *f, const wasm_insn *insn, uint32_t sub) {
  if (sub >= sizeof mem_ops / sizeof mem_ops[0] || !mem_ops[sub].is_memory) return false;
  emit(f, insn, &mem_ops[sub]);
  return true;
}
