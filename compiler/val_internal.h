/* val_internal.h: the validator's context and stacks, shared by the val_*.c files. */
#ifndef TW_VAL_INTERNAL_H
#define TW_VAL_INTERNAL_H

#include "validate.h"

/* The spec's "Unknown" operand type of unreachable (polymorphic) code;
 * 0 is no value type's encoding. */
#define VT_UNKNOWN 0

/* A control frame of the spec's validation algorithm.  op is the opening
 * instruction (block, loop, if, else), or OP_END for the function itself. */
typedef struct {
  uint16_t op;
  const uint8_t *start; /* start (parameter) types */
  uint32_t nstart;
  const uint8_t *end;   /* end (result) types */
  uint32_t nend;
  uint32_t height;      /* operand stack height at entry */
  bool unreachable;
} val_frame;

typedef struct {
  const wasm_module *m;
  tw_diag *d;
  const bool *declared;   /* per function: may ref.func in a body name it */
  uint32_t offset;        /* the instruction or entry being checked */
  /* the function being checked */
  const wasm_functype *func_type;
  uint8_t *locals;        /* parameters, then declared locals */
  uint32_t nlocals, locals_cap;
  /* operand and control stacks, reused by every function */
  uint8_t *vals;
  uint32_t nvals, vals_cap;
  val_frame *ctrls;
  uint32_t nctrls, ctrls_cap;
} val_ctx;

/* Diagnostics at c->offset; both return false. */
bool val_fail(val_ctx *c, const char *msg);
bool val_unknown(val_ctx *c, const char *what, uint32_t index);

/* val_stack.c: the operand and control stacks of the spec's algorithm. */
bool val_push(val_ctx *c, uint8_t t);
bool val_pop(val_ctx *c, uint8_t *out);
bool val_pop_expect(val_ctx *c, uint8_t expect);
bool val_push_n(val_ctx *c, const uint8_t *ts, uint32_t n);
bool val_pop_n(val_ctx *c, const uint8_t *ts, uint32_t n);
bool val_peek_n(val_ctx *c, const uint8_t *ts, uint32_t n);
bool val_pop_i32s(val_ctx *c, int n);
bool val_push_ctrl(val_ctx *c, uint16_t op, const uint8_t *start, uint32_t nstart,
                   const uint8_t *end, uint32_t nend);
bool val_pop_ctrl(val_ctx *c, val_frame *out);
void val_set_unreachable(val_ctx *c);
/* A static one-element array holding t, for single-result block types. */
const uint8_t *val_single_type(uint8_t t);
bool val_is_reftype(uint8_t t);

/* val_code.c: one function body. */
bool val_func(val_ctx *c, uint32_t func_index);

/* Instruction families; each checks one instruction at c->offset. */
bool val_control(val_ctx *c, const wasm_insn *in);
bool val_numeric(val_ctx *c, const wasm_insn *in);
bool val_memory(val_ctx *c, const wasm_insn *in);
bool val_table(val_ctx *c, const wasm_insn *in);
bool val_variable(val_ctx *c, const wasm_insn *in);
bool val_call(val_ctx *c, const wasm_insn *in);
bool val_simd(val_ctx *c, const wasm_insn *in);

/* val_const.c: a constant expression producing one value of type t. */
bool val_const_expr(val_ctx *c, const wasm_constexpr *e, uint8_t t);

/* val_segment.c: declared function references (declared has nfuncs
 * entries, all false on entry), defined globals' inits, segments. */
void val_declared_refs(const wasm_module *m, bool *declared);
bool val_globals(val_ctx *c);
bool val_elems(val_ctx *c);
bool val_datas(val_ctx *c);

#endif
