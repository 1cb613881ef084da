/* off_internal.h: shared by compiler/off*.c only: the kernel table that the
 * offload stage adds to the module descriptor (twasm_kernel_abi). */
#ifndef TW_OFF_INTERNAL_H
#define TW_OFF_INTERNAL_H

#include <llvm-c/Core.h>

#include "kn_recog.h"
#include "ptx.h"

/* One twasm_kernel_abi constant for nest n compiled to px; the PTX texts
 * are text_at[i] (pointers into the .twasm_ptx section). */
LLVMValueRef off_kernel_const(LLVMModuleRef mod, const kn_recog_nest *n, const ptx_out *px,
                              LLVMValueRef *text_at);

/* Points the descriptor desc_symbol's nkernels/kernels fields at kernels. */
bool off_attach_table(LLVMModuleRef mod, const char *desc_symbol, LLVMValueRef *kernels,
                      unsigned nkernels);

/* Whether nest n can be versioned (off_version.c): a preheader, one exit,
 * and no value of the nest used after it except the reduction's result. */
bool off_version_check(const kn_recog_nest *n, const char **reason);
/* Inserts the call to twasm_rt_offload and the branch around the nest. */
void off_version_apply(LLVMValueRef fn, const kn_recog_nest *n, uint32_t kernel_id);

#endif
