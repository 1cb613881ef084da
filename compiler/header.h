/* header.h: the C header written beside an object by `twasmc -c`. */
#ifndef TW_HEADER_H
#define TW_HEADER_H

#include <stdbool.h>

#include "wasm.h"

/* Returns (malloc'd) the text of a C header for module m compiled with
 * descriptor symbol desc_symbol: typed wrappers of every exported function
 * and an instantiate function, all prefixed with `prefix`. */
char *hdr_emit(const wasm_module *m, const char *prefix, const char *desc_symbol);

/* A C identifier made from any name (letters, digits, '_'). */
void hdr_ident(const char *name, unsigned len, char *out, unsigned cap);

#endif
