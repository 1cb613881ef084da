/* unit_ir.h: for the unit tests that read twasmc's optimised IR: a module
 * written to a temporary file (from text, or the first module of a .wast
 * file), compiled by the driver as `twasmc --emit-llvm` would, parsed back
 * into its own LLVM context.  Failures abort the running Check test. */
#ifndef TW_UNIT_IR_H
#define TW_UNIT_IR_H

#include <stdbool.h>
#include <stddef.h>

#include <llvm-c/Core.h>

#include "driver.h"

typedef struct {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
} unit_ir;

/* Writes text to /tmp/<tag>-<pid>.wat; its path in out. */
void unit_wat_file(const char *tag, const char *text, char *out, size_t size);
/* Writes the first module of the .wast file at wast (from "\n(module" to
 * the first "\n)\n") to /tmp/<tag>-<pid>.wat; its path in out. */
void unit_wast_module(const char *tag, const char *wast, char *out, size_t size);
/* The IR of the module at path (.wat or .wasm) compiled with o; the file
 * is removed when remove_after. */
unit_ir unit_ir_of_file(const char *path, const drv_options *o, bool remove_after);
/* The IR of text (a .wat module) compiled with o. */
unit_ir unit_ir_of_wat(const char *tag, const char *text, const drv_options *o);
/* The IR of the first module of wast compiled with o. */
unit_ir unit_ir_of_wast(const char *tag, const char *wast, const drv_options *o);
/* The module of the LLVM IR text, named name, parsed in ctx (aborts the
 * test on bad text). */
LLVMModuleRef unit_ir_parse(LLVMContextRef ctx, const char *text, const char *name);
/* The branches to a block named bounds_trap left in @f after guard mode's
 * late stage (bnd_late) of the IR text `ir` with its first `hole` replaced
 * by `fill` (parsed in a context of its own, as module `name`). */
int unit_late_checks_left(const char *ir, const char *hole, const char *fill, const char *name);
/* Defined function index: @wasm_f<index>, maybe followed by `_<name>`. */
LLVMValueRef unit_ir_func(const unit_ir *m, unsigned index);
void unit_ir_dispose(unit_ir *m);
/* Whether bb can reach itself again (it lies in a loop; at most 512
 * blocks are walked). */
bool unit_in_cycle(LLVMBasicBlockRef bb);
/* The function the module exports as `name`: @wasm_f<index>, followed by
 * `_<name>` when the module has a name section (aborts the test when
 * there is none). */
LLVMValueRef unit_ir_exported(LLVMModuleRef mod, const char *name);

#endif
