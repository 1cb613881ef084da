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
} low_options;

/* Builds a new LLVM module in ctx holding every function of m, the
 * per-type invokers and host trampolines, and the descriptor. */
bool low_module(LLVMContextRef ctx, const wasm_module *m,
                const low_options *opt, LLVMModuleRef *out, tw_diag *d);

/* After mem2reg, before the optimisation pipeline: rewrites memory
 * addresses zext(x + c) to zext(x) + c where an earlier access proves that
 * x + c does not wrap (low_address.c).  Returns how many it rewrote. */
unsigned low_fold_address_adds(LLVMModuleRef mod, const wasm_module *m);

/* The TBAA access tag of that name (linear memory, global cells, and the
 * memory size that bounds checks load: LOW_TBAA_SIZE). */
LLVMValueRef low_tbaa_tag(LLVMContextRef c, const char *name);
#define LOW_TBAA_SIZE "wasm memory size"

/* Metadata kind on every branch back to a Wasm loop's header: !{i32 file
 * offset of the loop instruction}.  off_hold.c carries it into the loop's
 * llvm.loop node, where it survives LLVM's loop passes. */
#define LOW_MD_LOOP "twasm.loop"

/* The C API cannot change a phi's incoming block: each phi of bb is
 * rebuilt with incoming block `from` replaced by `to`, or dropped when to
 * is NULL (low_reroll.c; loop versioning uses it too). */
void low_retarget_phis(LLVMBasicBlockRef bb, LLVMBasicBlockRef from, LLVMBasicBlockRef to);

/* After mem2reg, before low_fold_address_adds: rewrites loops that clang
 * unrolled by two (two copies of one iteration per trip, with a run-time
 * count and the odd iteration after the loop, or a constant count) into
 * one loop of single iterations, where it proves the result exact
 * (low_reroll.c).  Returns how many it rewrote. */
unsigned low_reroll_loops(LLVMModuleRef mod);

#endif
