/* validate.h: the Wasm 2.0 validation algorithm over a decoded module (stage 2). */
#ifndef TW_VALIDATE_H
#define TW_VALIDATE_H

#include "diag.h"
#include "wasm.h"

/* True when the module is valid.  Otherwise d->offset is the offending
 * instruction (or section entry) and d->msg the spec's wording ("type
 * mismatch", "unknown function", ...).  Later stages trust only modules that
 * passed this. */
bool val_module(const wasm_module *m, tw_diag *d);

#endif
