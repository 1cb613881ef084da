/* diag.h: diagnostics returned by every compiler stage (offset + message). */
#ifndef TW_DIAG_H
#define TW_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#define TW_DIAG_NO_OFFSET UINT32_MAX

typedef struct {
  uint32_t offset;   /* byte offset in the input, or TW_DIAG_NO_OFFSET */
  char msg[512];
} tw_diag;

/* Fills d (when it is not NULL) and returns false, so callers can write
 * `return tw_fail(d, off, "...")`. */
bool tw_fail(tw_diag *d, uint32_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
