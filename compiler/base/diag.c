/* diag.c: filling diagnostics. */
#include "diag.h"

#include <stdio.h>

bool tw_fail(tw_diag *d, uint32_t offset, const char *fmt, ...) {
  if (!d) return false;
  d->offset = offset;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->msg, sizeof d->msg, fmt, ap);
  va_end(ap);
  return false;
}
