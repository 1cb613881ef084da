/* ir_noreturn.c: blocks that never return: every path from them ends in
 * `unreachable` (a trap, or Wasm's `call $abort; unreachable`), the guard
 * exits of asserts and bounds checks in the source (C's __assert_fail,
 * AssemblyScript's abort, Rust's panic_bounds_check). */
#include <string.h>

#include "ir.h"
#include "ir_pass.h"

#define NORETURN_MAX_BLOCKS 64

/* The blocks reached from b into seen[], b first; the count, or 0 when
 * some path may return: a terminator other than `unreachable` or a
 * branch, an edge back (a cycle, which may return), or too many blocks. */
static int noreturn_blocks(const ir_cfg *cfg, int b, int seen[NORETURN_MAX_BLOCKS]) {
  int n = 0;
  seen[n++] = b;
  for (int k = 0; k < n; k++) {
    const ir_block *x = &cfg->blocks[seen[k]];
    LLVMValueRef term = LLVMGetBasicBlockTerminator(x->bb);
    if (!term || (!LLVMIsAUnreachableInst(term) && !LLVMIsABranchInst(term))) return 0;
    for (int s = 0; s < x->nsuccs; s++) {
      /* blocks are numbered in reverse post-order: an edge to a block not
       * after this one closes a cycle (a loop around, which may return) */
      if (x->succs[s] <= seen[k]) return 0;
      bool dup = false;
      for (int m = 0; m < n; m++) dup |= seen[m] == x->succs[s];
      if (dup) continue;
      if (n == NORETURN_MAX_BLOCKS) return 0;
      seen[n++] = x->succs[s];
    }
  }
  return n;
}

bool ir_noreturn_call(const ir_cfg *cfg, int b) {
  int seen[NORETURN_MAX_BLOCKS], n = noreturn_blocks(cfg, b, seen);
  for (int k = 0; k < n; k++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(cfg->blocks[seen[k]].bb); i; i = LLVMGetNextInstruction(i)) {
      if (!LLVMIsACallInst(i)) continue;
      /* direct, or through an import's funcref (no name) */
      const char *name = ir_callee_name(i);
      if (strcmp(name, "twasm_rt_trap") != 0 && strncmp(name, "llvm.", 5) != 0) return true;
    }
  return false;
}
