/* val_numeric.c: constants and numeric instructions, typed by a table of opcode ranges. */
#include "val_internal.h"

/* Opcodes first..last pop nargs values of type arg and push one result. */
typedef struct {
  uint16_t first, last;
  uint8_t nargs, arg, result;
} val_numop;

static const val_numop numops[] = {
  {0x41, 0x41, 0, 0, VT_I32}, {0x42, 0x42, 0, 0, VT_I64},      /* consts */
  {0x43, 0x43, 0, 0, VT_F32}, {0x44, 0x44, 0, 0, VT_F64},
  {0x45, 0x45, 1, VT_I32, VT_I32}, {0x46, 0x4F, 2, VT_I32, VT_I32}, /* i32 eqz, compare */
  {0x50, 0x50, 1, VT_I64, VT_I32}, {0x51, 0x5A, 2, VT_I64, VT_I32}, /* i64 eqz, compare */
  {0x5B, 0x60, 2, VT_F32, VT_I32}, {0x61, 0x66, 2, VT_F64, VT_I32}, /* float compare */
  {0x67, 0x69, 1, VT_I32, VT_I32}, {0x6A, 0x78, 2, VT_I32, VT_I32}, /* i32 arithmetic */
  {0x79, 0x7B, 1, VT_I64, VT_I64}, {0x7C, 0x8A, 2, VT_I64, VT_I64}, /* i64 arithmetic */
  {0x8B, 0x91, 1, VT_F32, VT_F32}, {0x92, 0x98, 2, VT_F32, VT_F32}, /* f32 arithmetic */
  {0x99, 0x9F, 1, VT_F64, VT_F64}, {0xA0, 0xA6, 2, VT_F64, VT_F64}, /* f64 arithmetic */
  {0xA7, 0xA7, 1, VT_I64, VT_I32},                                 /* i32.wrap_i64 */
  {0xA8, 0xA9, 1, VT_F32, VT_I32}, {0xAA, 0xAB, 1, VT_F64, VT_I32}, /* i32.trunc */
  {0xAC, 0xAD, 1, VT_I32, VT_I64},                                 /* i64.extend_i32 */
  {0xAE, 0xAF, 1, VT_F32, VT_I64}, {0xB0, 0xB1, 1, VT_F64, VT_I64}, /* i64.trunc */
  {0xB2, 0xB3, 1, VT_I32, VT_F32}, {0xB4, 0xB5, 1, VT_I64, VT_F32}, /* f32.convert */
  {0xB6, 0xB6, 1, VT_F64, VT_F32},                                 /* f32.demote */
  {0xB7, 0xB8, 1, VT_I32, VT_F64}, {0xB9, 0xBA, 1, VT_I64, VT_F64}, /* f64.convert */
  {0xBB, 0xBB, 1, VT_F32, VT_F64},                                 /* f64.promote */
  {0xBC, 0xBC, 1, VT_F32, VT_I32}, {0xBD, 0xBD, 1, VT_F64, VT_I64}, /* reinterpret */
  {0xBE, 0xBE, 1, VT_I32, VT_F32}, {0xBF, 0xBF, 1, VT_I64, VT_F64},
  {0xC0, 0xC1, 1, VT_I32, VT_I32}, {0xC2, 0xC4, 1, VT_I64, VT_I64}, /* sign extension */
  {0xFC00, 0xFC01, 1, VT_F32, VT_I32}, {0xFC02, 0xFC03, 1, VT_F64, VT_I32}, /* trunc_sat */
  {0xFC04, 0xFC05, 1, VT_F32, VT_I64}, {0xFC06, 0xFC07, 1, VT_F64, VT_I64},
};

bool val_numeric(val_ctx *c, const wasm_insn *in) {
  for (size_t i = 0; i < sizeof numops / sizeof numops[0]; i++) {
    const val_numop *n = &numops[i];
    if (in->op < n->first || in->op > n->last) continue;
    for (uint8_t k = 0; k < n->nargs; k++)
      if (!val_pop_expect(c, n->arg)) return false;
    return val_push(c, n->result);
  }
  return val_fail(c, "illegal opcode");
}
