/* low_numeric.c: constants, comparisons and integer/float arithmetic (0x41..0xA6). */
#include <string.h>

#include "low_convert.h"

LLVMValueRef low_intrinsic(low_fn *f, const char *name, LLVMTypeRef *over, unsigned nover,
                           LLVMValueRef *args, unsigned nargs) {
  low_module_ctx *mc = f->mc;
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef decl = LLVMGetIntrinsicDeclaration(mc->mod, id, over, nover);
  LLVMTypeRef ty = LLVMIntrinsicGetType(mc->ctx, id, over, nover);
  return LLVMBuildCall2(f->b, ty, decl, args, nargs, "");
}

/* Float constants go through their bit patterns so NaN payloads survive. */
static void emit_const(low_fn *f, const wasm_insn *insn, unsigned index) {
  low_module_ctx *mc = f->mc;
  switch (index) {
  case 0: low_push(f, LLVMConstInt(mc->t_i32, (uint32_t)insn->u.i32, false)); break;
  case 1: low_push(f, LLVMConstInt(mc->t_i64, (uint64_t)insn->u.i64, false)); break;
  case 2: low_push(f, LLVMBuildBitCast(f->b, LLVMConstInt(mc->t_i32, insn->u.f32, false), mc->t_f32, "")); break;
  default: low_push(f, LLVMBuildBitCast(f->b, LLVMConstInt(mc->t_i64, insn->u.f64, false), mc->t_f64, "")); break;
  }
}

static void push_bool(low_fn *f, LLVMValueRef cond) {
  low_push(f, LLVMBuildZExt(f->b, cond, f->mc->t_i32, ""));
}

static void emit_eqz(low_fn *f, const wasm_insn *insn, unsigned index) {
  (void)insn, (void)index;
  LLVMValueRef x = low_pop(f);
  push_bool(f, LLVMBuildICmp(f->b, LLVMIntEQ, x, LLVMConstNull(LLVMTypeOf(x)), ""));
}

/* eq ne lt_s lt_u gt_s gt_u le_s le_u ge_s ge_u */
static const LLVMIntPredicate int_predicates[] = {
    LLVMIntEQ, LLVMIntNE, LLVMIntSLT, LLVMIntULT, LLVMIntSGT,
    LLVMIntUGT, LLVMIntSLE, LLVMIntULE, LLVMIntSGE, LLVMIntUGE,
};

static void emit_int_cmp(low_fn *f, const wasm_insn *insn, unsigned index) {
  (void)insn;
  LLVMValueRef rhs = low_pop(f), lhs = low_pop(f);
  push_bool(f, LLVMBuildICmp(f->b, int_predicates[index], lhs, rhs, ""));
}

/* eq ne lt gt le ge: only ne is true on NaN operands. */
static const LLVMRealPredicate float_predicates[] = {
    LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT, LLVMRealOGT, LLVMRealOLE, LLVMRealOGE,
};

static void emit_float_cmp(low_fn *f, const wasm_insn *insn, unsigned index) {
  (void)insn;
  LLVMValueRef rhs = low_pop(f), lhs = low_pop(f);
  push_bool(f, LLVMBuildFCmp(f->b, float_predicates[index], lhs, rhs, ""));
}

/* Integer operations in spec order within each width's group. */
enum {
  INT_CLZ, INT_CTZ, INT_POPCNT, INT_ADD, INT_SUB, INT_MUL, INT_DIV_S, INT_DIV_U, INT_REM_S,
  INT_REM_U, INT_AND, INT_OR, INT_XOR, INT_SHL, INT_SHR_S, INT_SHR_U, INT_ROTL, INT_ROTR,
};

/* Plain LLVM opcodes of the binary ones that cannot trap; 0 marks the rest. */
static const LLVMOpcode int_binops[] = {
    [INT_ADD] = LLVMAdd, [INT_SUB] = LLVMSub, [INT_MUL] = LLVMMul, [INT_AND] = LLVMAnd,
    [INT_OR] = LLVMOr, [INT_XOR] = LLVMXor, [INT_SHL] = LLVMShl, [INT_SHR_S] = LLVMAShr,
    [INT_SHR_U] = LLVMLShr,
};

static const char *const int_intrinsics[] = {
    [INT_CLZ] = "llvm.ctlz", [INT_CTZ] = "llvm.cttz", [INT_POPCNT] = "llvm.ctpop",
    [INT_ROTL] = "llvm.fshl", [INT_ROTR] = "llvm.fshr",
};

static LLVMValueRef emit_bit_count(low_fn *f, unsigned index, LLVMValueRef x) {
  LLVMTypeRef ty = LLVMTypeOf(x);
  /* is_zero_poison = false: clz/ctz of 0 is the width. */
  LLVMValueRef args[] = {x, LLVMConstInt(f->mc->t_i1, 0, false)};
  return low_intrinsic(f, int_intrinsics[index], &ty, 1, args, index == INT_POPCNT ? 1 : 2);
}

/* Traps as Wasm requires, and never lets LLVM see a division it may treat
 * as undefined (x / 0, INT_MIN / -1, INT_MIN % -1 all fault in idiv). */
static LLVMValueRef emit_division(low_fn *f, unsigned index, LLVMValueRef lhs, LLVMValueRef rhs,
                                  uint32_t offset) {
  LLVMBuilderRef b = f->b;
  LLVMTypeRef ty = LLVMTypeOf(lhs);
  LLVMValueRef minus_one = LLVMConstAllOnes(ty);
  low_trap_if(f, LLVMBuildICmp(b, LLVMIntEQ, rhs, LLVMConstNull(ty), ""), TWASM_TRAP_INT_DIV_ZERO,
              offset);
  switch (index) {
  case INT_DIV_U: return LLVMBuildUDiv(b, lhs, rhs, "");
  case INT_REM_U: return LLVMBuildURem(b, lhs, rhs, "");
  case INT_DIV_S: {
    unsigned width = LLVMGetIntTypeWidth(ty);
    LLVMValueRef int_min = LLVMConstInt(ty, 1ull << (width - 1), false);
    LLVMValueRef overflow = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, lhs, int_min, ""),
                                         LLVMBuildICmp(b, LLVMIntEQ, rhs, minus_one, ""), "");
    low_trap_if(f, overflow, TWASM_TRAP_INT_OVERFLOW, offset);
    return LLVMBuildSDiv(b, lhs, rhs, "");
  }
  default: {
    /* x % -1 is 0 for every x, and so is x % 1. */
    LLVMValueRef is_minus_one = LLVMBuildICmp(b, LLVMIntEQ, rhs, minus_one, "");
    LLVMValueRef divisor = LLVMBuildSelect(b, is_minus_one, LLVMConstInt(ty, 1, false), rhs, "");
    return LLVMBuildSRem(b, lhs, divisor, "");
  }
  }
}

static LLVMValueRef emit_int_binary(low_fn *f, unsigned index, LLVMValueRef lhs, LLVMValueRef rhs,
                                    uint32_t offset) {
  LLVMTypeRef ty = LLVMTypeOf(lhs);
  switch (index) {
  case INT_DIV_S: case INT_DIV_U: case INT_REM_S: case INT_REM_U:
    return emit_division(f, index, lhs, rhs, offset);
  case INT_ROTL: case INT_ROTR: {
    /* Funnel shifts take the count modulo the width themselves. */
    LLVMValueRef args[] = {lhs, lhs, rhs};
    return low_intrinsic(f, int_intrinsics[index], &ty, 1, args, 3);
  }
  case INT_SHL: case INT_SHR_S: case INT_SHR_U: {
    /* LLVM shifts by >= the width are poison; Wasm takes the count mod width. */
    LLVMValueRef mask = LLVMConstInt(ty, LLVMGetIntTypeWidth(ty) - 1, false);
    return LLVMBuildBinOp(f->b, int_binops[index], lhs, LLVMBuildAnd(f->b, rhs, mask, ""), "");
  }
  default: return LLVMBuildBinOp(f->b, int_binops[index], lhs, rhs, "");
  }
}

static void emit_int_op(low_fn *f, const wasm_insn *insn, unsigned index) {
  if (index <= INT_POPCNT) {
    low_push(f, emit_bit_count(f, index, low_pop(f)));
    return;
  }
  LLVMValueRef rhs = low_pop(f), lhs = low_pop(f);
  low_push(f, emit_int_binary(f, index, lhs, rhs, insn->offset));
}

/* Float operations in spec order within each width's group: an intrinsic,
 * or a plain IEEE instruction (never with fast-math flags). */
typedef struct {
  const char *intrinsic;
  LLVMOpcode opcode;
  uint8_t arity;
} float_op;

static const float_op float_ops[] = {
    {"llvm.fabs", 0, 1},      {NULL, LLVMFNeg, 1},      {"llvm.ceil", 0, 1},
    {"llvm.floor", 0, 1},     {"llvm.trunc", 0, 1},     {"llvm.roundeven", 0, 1},
    {"llvm.sqrt", 0, 1},      {NULL, LLVMFAdd, 2},      {NULL, LLVMFSub, 2},
    {NULL, LLVMFMul, 2},      {NULL, LLVMFDiv, 2},      {"llvm.minimum", 0, 2},
    {"llvm.maximum", 0, 2},   {"llvm.copysign", 0, 2},
};

enum { FLOAT_MIN = 11, FLOAT_MAX = 12 };

/* llvm.minimum/maximum on x86 hand a signalling NaN operand through
 * unchanged, but Wasm wants a quiet one: with a NaN operand the result is
 * lhs + rhs, which the hardware quiets (llvm.canonicalize would say it
 * better, but the x86 backend of LLVM 19 cannot select it). */
static LLVMValueRef quiet_nan_operands(low_fn *f, LLVMValueRef result, LLVMValueRef *args) {
  LLVMValueRef any_nan = LLVMBuildFCmp(f->b, LLVMRealUNO, args[0], args[1], "");
  LLVMValueRef quiet = LLVMBuildFAdd(f->b, args[0], args[1], "");
  return LLVMBuildSelect(f->b, any_nan, quiet, result, "");
}

/* LLVM folds x * 1, x / 1, x - 0, x + -0 to x and x * -1, x / -1, -0 - x
 * to -x, which lets a signalling NaN x through; Wasm wants it quiet.  So
 * with such a constant operand, a NaN x gives x + x instead. */
static LLVMValueRef quiet_identity_nan(low_fn *f, LLVMValueRef result, LLVMValueRef *args) {
  for (unsigned i = 0; i < 2; i++) {
    LLVMBool loses_info;
    if (!LLVMIsAConstantFP(args[i]) || LLVMIsAConstantFP(args[1 - i])) continue;
    double c = LLVMConstRealGetDouble(args[i], &loses_info);
    if (c != 0.0 && c != 1.0 && c != -1.0) continue;
    LLVMValueRef x = args[1 - i];
    LLVMValueRef is_nan = LLVMBuildFCmp(f->b, LLVMRealUNO, x, x, "");
    return LLVMBuildSelect(f->b, is_nan, LLVMBuildFAdd(f->b, x, x, ""), result, "");
  }
  return result;
}

static void emit_float_op(low_fn *f, const wasm_insn *insn, unsigned index) {
  (void)insn;
  const float_op *op = &float_ops[index];
  LLVMValueRef args[2];
  for (unsigned i = op->arity; i-- > 0;) args[i] = low_pop(f);
  LLVMTypeRef ty = LLVMTypeOf(args[0]);
  LLVMValueRef result;
  if (op->intrinsic)
    result = low_intrinsic(f, op->intrinsic, &ty, 1, args, op->arity);
  else if (op->opcode == LLVMFNeg)
    result = LLVMBuildFNeg(f->b, args[0], "");
  else
    result = quiet_identity_nan(f, LLVMBuildBinOp(f->b, op->opcode, args[0], args[1], ""), args);
  if (index == FLOAT_MIN || index == FLOAT_MAX) result = quiet_nan_operands(f, result, args);
  low_push(f, result);
}

/* Opcode ranges whose members differ only by an index into a table; the
 * operand types (i32 or i64, f32 or f64) come from the LLVM values. */
typedef struct {
  uint16_t first, last;
  void (*emit)(low_fn *f, const wasm_insn *insn, unsigned index);
} op_group;

static const op_group op_groups[] = {
    {OP_I32_CONST, OP_F64_CONST, emit_const},
    {OP_I32_EQZ, OP_I32_EQZ, emit_eqz},         {OP_I32_EQZ + 1, OP_I64_EQZ - 1, emit_int_cmp},
    {OP_I64_EQZ, OP_I64_EQZ, emit_eqz},         {OP_I64_EQZ + 1, OP_F32_EQ - 1, emit_int_cmp},
    {OP_F32_EQ, OP_F64_EQ - 1, emit_float_cmp}, {OP_F64_EQ, OP_I32_CLZ - 1, emit_float_cmp},
    {OP_I32_CLZ, OP_I64_CLZ - 1, emit_int_op},  {OP_I64_CLZ, OP_F32_ABS - 1, emit_int_op},
    {OP_F32_ABS, OP_F64_ABS - 1, emit_float_op}, {OP_F64_ABS, OP_I32_WRAP_I64 - 1, emit_float_op},
};

bool low_emit_numeric(low_fn *f, const wasm_insn *insn) {
  for (size_t i = 0; i < sizeof op_groups / sizeof op_groups[0]; i++) {
    const op_group *g = &op_groups[i];
    if (insn->op >= g->first && insn->op <= g->last) {
      g->emit(f, insn, insn->op - g->first);
      return true;
    }
  }
  return low_emit_convert(f, insn);
}
