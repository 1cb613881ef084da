/* ir_abi.h: LLVM constants of the C structs of twasm_abi.h, laid out from
 * their fields' offsets and sizes (offsetof, sizeof), never by position:
 * lowering builds the module descriptor with them, the offload stage the
 * kernel table. */
#ifndef TW_IR_ABI_H
#define TW_IR_ABI_H

#include <stdbool.h>
#include <stddef.h>

#include <llvm-c/Core.h>

#include "twasm_abi.h"

/* One field of a struct constant: where the C struct has it and how big
 * it is there, and its value, whose LLVM type must have that size. */
typedef struct {
  size_t offset, size;
  LLVMValueRef value;
} ir_abi_field;

#define IR_ABI_FIELD(T, field, v) {offsetof(T, field), sizeof(((T *)0)->field), (v)}

/* The constant of a C struct of `size` bytes from its fields in offset
 * order: every gap (padding, or a field left out, which is then zero)
 * becomes an explicit [N x i8] zero.  NULL when a value's size is not its
 * field's, or fields overlap (an internal error). */
LLVMValueRef ir_abi_struct(LLVMContextRef ctx, size_t size, const ir_abi_field *f, unsigned n);

/* In the struct constant initialising global g (built by ir_abi_struct),
 * replaces the field at `offset` with value (of the same LLVM type);
 * false when no field starts there. */
bool ir_abi_set_field(LLVMValueRef g, size_t offset, LLVMValueRef value);

/* The private global the module descriptor's `kernels` points at: left
 * empty by lowering (nkernels 0); the offload stage defines the kernel
 * table in its place. */
#define IR_KERNEL_TABLE "twasm_kernels"

/* Bytes a value of type t takes in the 64-bit ABI (natural alignment). */
size_t ir_abi_size(LLVMTypeRef t);

#endif
