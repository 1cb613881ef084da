/* lower.h: validated wasm_module -> LLVM IR module for the host (stage 3). */
#ifndef TW_LOWER_H
#define TW_LOWER_H

#include <llvm-c/Core.h>

#include "diag.h"
#include "wasm.h"

typedef struct {
  int bounds_mode;        /* TWASM_BOUNDS_GUARD or TWASM_BOUNDS_EXPLICIT */
  const char *desc_symbol; /* name of the exported twasm_module_abi constant */
  const char *module_name; /* for messages: the file stem */
  bool emit_main;         /* also emit main() calling twasm_main(&desc, ...) */
  const char *baked_dirs; /* for main(): "HOST::GUEST\n..." preopens, or NULL */
  LLVMValueRef *funcs_out; /* when set: [m->nfuncs] receives the LLVM function
                            * of each defined function, NULL for imports */
} low_options;

/* Builds a new LLVM module in ctx holding every function of m, the
 * per-type invokers and host trampolines, and the descriptor. */
bool low_module(LLVMContextRef ctx, const wasm_module *m,
                const low_options *opt, LLVMModuleRef *out, tw_diag *d);

#endif
