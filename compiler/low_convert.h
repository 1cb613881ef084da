/* low_convert.h: what low_numeric.c and low_convert.c share. */
#ifndef TW_LOW_CONVERT_H
#define TW_LOW_CONVERT_H

#include "low_internal.h"

/* Calls the LLVM intrinsic `name` overloaded on the nover types in over. */
LLVMValueRef low_intrinsic(low_fn *f, const char *name, LLVMTypeRef *over, unsigned nover,
                           LLVMValueRef *args, unsigned nargs);

/* Conversions 0xA7..0xC4 and the saturating truncations 0xFC00..0xFC07;
 * false for any other opcode. */
bool low_emit_convert(low_fn *f, const wasm_insn *insn);

#endif
