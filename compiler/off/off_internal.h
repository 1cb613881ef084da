/* off_internal.h: shared by compiler/off*.c only: the kernel table that the
 * offload stage adds to the module descriptor (twasm_kernel_abi). */
#ifndef TW_OFF_INTERNAL_H
#define TW_OFF_INTERNAL_H

#include <llvm-c/Core.h>

#include "kn_recog.h"
#include "ptx.h"

/* One twasm_kernel_abi constant for nest n compiled to px; the PTX texts
 * are text_at[i] (pointers into the store's text), store the module's
 * twasm_ptx_store_abi (off_store.c). */
LLVMValueRef off_kernel_const(LLVMModuleRef mod, const kn_recog_nest *n, const ptx_out *px,
                              LLVMValueRef *text_at, LLVMValueRef store);

/* The module's PTX store (off_store.c): records gathered, then compressed
 * into section .twasm_ptx. */
typedef struct {
  LLVMModuleRef mod;
  char *buf;               /* the records so far */
  size_t len, cap;
  LLVMValueRef text;       /* the buffer the runtime inflates into */
  LLVMValueRef store;      /* twasm_ptx_store: NULL until a kernel is added */
} off_store;

/* Appends px's records; text_at[i]: where code i's text will lie once the
 * runtime has inflated the store. */
void off_store_add(off_store *s, const ptx_out *px, LLVMValueRef *text_at);
/* Compresses the records into the section global it returns (NULL with d
 * set on failure, or when no kernel was added) and completes the store. */
LLVMValueRef off_store_finish(off_store *s, tw_diag *d);

/* Points the descriptor desc_symbol's nkernels/kernels fields at kernels. */
bool off_attach_table(LLVMModuleRef mod, const char *desc_symbol, LLVMValueRef *kernels,
                      unsigned nkernels);

/* Whether nest n can be versioned (off_version.c): a preheader, one exit,
 * and no value of the nest used after it except the reduction's result. */
bool off_version_check(const kn_recog_nest *n, const char **reason);
/* off_guard.c: an i1, true when no guard exit of n (kn_guard) fires
 * anywhere in the box, built at b's position from params (the i64 value
 * of each of n's params) and host(ctx, v), v as the host computes it
 * before the launch; NULL when n has no guard. */
typedef LLVMValueRef (*off_host_fn)(void *ctx, LLVMValueRef v);
/* x and y, either of them NULL for true (NULL when both are). */
LLVMValueRef off_and(LLVMBuilderRef b, LLVMValueRef x, LLVMValueRef y);
LLVMValueRef off_guard_ok(LLVMBuilderRef b, const kn_recog_nest *n, LLVMValueRef const *params,
                          off_host_fn host, void *ctx);
/* LLVM bitcode of a module holding the nest's pure callees and the Wasm
 * functions they call (off_calls.c), in arena: kn_desc's calls_bc. */
bool off_calls_bitcode(LLVMValueRef *callees, int ncallees, tw_arena *arena, const void **bc, size_t *len);
/* Inserts the call to twasm_rt_offload and the branch around the nest;
 * unwaitable: the call is marked OFF_MD_UNWAITED (its kernel writes into
 * the host's pages, so its launch may go unwaited: off_wait.c). */
void off_version_apply(LLVMValueRef fn, const kn_recog_nest *n, uint32_t kernel_id, bool unwaitable);

#endif
