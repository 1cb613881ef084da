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
  const char *baked_env;  /* for main(): NUL-ended NAME[=VALUE] entries, then an
                           * empty one (twasm_main), or NULL */
  size_t baked_env_len;   /* bytes of baked_env, the final NUL included */
  bool inherit_env;       /* for main(): the guest sees the host's environment */
  bool portable_cpu;      /* the default x86-64 target (SSE2 only): SIMD rounding
                           * is computed with adds, not libm calls per lane */
  bool devirt;            /* call_indirect through sealed tables: small callees
                           * as switch cases to inline (low_devirt.c; -O1 up) */
  LLVMValueRef *funcs_out; /* when set: [m->nfuncs] receives the LLVM function
                            * of each defined function, NULL for imports */
} low_options;

/* Builds a new LLVM module in ctx holding every function of m, the
 * per-type invokers and host trampolines, and the descriptor. */
bool low_module(LLVMContextRef ctx, const wasm_module *m,
                const low_options *opt, LLVMModuleRef *out, tw_diag *d);

/* The TBAA access tag of that name (linear memory, global cells, and the
 * memory size that bounds checks load: LOW_TBAA_SIZE). */
LLVMValueRef low_tbaa_tag(LLVMContextRef c, const char *name);
#define LOW_TBAA_SIZE "wasm memory size"

#endif
