/* ir_address.h: what the address fold's two files share (ir_address.c,
 * per block; ir_address_loop.c, per loop). */
#ifndef TW_IR_ADDRESS_H
#define TW_IR_ADDRESS_H

#include <stdbool.h>
#include <stdint.h>

#include <llvm-c/Core.h>

/* An access of linear memory: base (memory 0's base, an invariant load of
 * the vmctx's first field), i32 address value, constant offset, width. */
typedef struct {
  LLVMValueRef inst, base, value;
  unsigned ptr_operand;
  uint64_t offset, width;
} ir_mem_access;

/* inst is a load or store of the form access_ptr (low_memory.c) builds:
 * gep i8, base, zext(value) [+ offset]; i8 is the context's i8 type,
 * invariant_kind the "invariant.load" metadata kind. */
bool ir_match_access(LLVMValueRef fn, LLVMValueRef inst, LLVMTypeRef i8, unsigned invariant_kind,
                     ir_mem_access *a);

#endif
