/* bnd.c: the bounds stage of guard mode, run by driver.c before LLVM's
 * pipeline: every access gets its exact check (bnd_insert.c), then at -O2
 * and above loop nests whose checks a test before the nest can prove run
 * a copy without them (bnd_loop.c). */
#include "bnd.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Transforms/PassBuilder.h>

/* The form bnd_loop.c reads: Wasm's i1 -> i32 -> i1 round trips of
 * br_if folded, loops with preheaders and dedicated exits, values used
 * after a loop through phis at its exits (LCSSA), and invariant values
 * hoisted out of loops (LICM): an outer loop whose bound is computed in
 * its body (clang's `n - 1` of `i < n - 1`) has no trip count, so only
 * its inner loop could be versioned, and the offload stage, which sees
 * that outer loop holding two copies of the inner one, would not take the
 * nest as one 2-D kernel.  Safe to run once the checks are in: they are
 * control flow LLVM keeps. */
static bool run(LLVMModuleRef mod, LLVMTargetMachineRef tm, const char *passes, tw_diag *d) {
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(mod, passes, tm, po);
  LLVMDisposePassBuilderOptions(po);
  if (!err) return true;
  char *msg = LLVMGetErrorMessage(err);
  tw_fail(d, TW_DIAG_NO_OFFSET, "LLVM optimisation failed: %s", msg);
  LLVMDisposeErrorMessage(msg);
  return false;
}

bool bnd_module(LLVMModuleRef mod, LLVMTargetMachineRef tm, const wasm_module *m, int opt_level,
                tw_diag *d) {
  /* LLVM's inliner decides on code size, which the checks would inflate
   * (a compare and a branch each, cheap to run); it decides first, on the
   * module as guard pages alone would leave it.  The calls the driver's
   * `inline` pass marked (inlined on a trial without the re-roll's
   * checked copies, ir_inline.c) are inlined whatever those copies add. */
  if (opt_level >= 2) {
    ir_calls_obey(mod, true);
    bool ok = run(mod, tm, "cgscc(inline)", d);
    ir_calls_obey(mod, false);
    if (!ok) return false;
  }
  if (!bnd_insert_checks(mod, m))
    return tw_fail(d, TW_DIAG_NO_OFFSET, "internal error: out of memory adding bounds checks");
  if (opt_level < 2 || m->nmems == 0) return true;
  if (!run(mod, tm, "function(instcombine<no-verify-fixpoint>,loop-simplify,lcssa,loop-mssa(licm))", d)) return false;
  bnd_scalar_lanes(mod);
  if (bnd_version_loops(mod) == 0) return true;
  /* versioning edits IR: a slip there must be an error, not a miscompilation */
  char *msg = NULL;
  bool broken = LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg);
  if (broken) tw_fail(d, TW_DIAG_NO_OFFSET, "internal error: bounds-versioned module is invalid: %.300s", msg ? msg : "");
  LLVMDisposeMessage(msg);
  return !broken;
}
