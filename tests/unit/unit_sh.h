/* unit_sh.h: for the unit tests that run the driver or other tools as a
 * user would, through the shell.  Failures abort the running Check test. */
#ifndef TW_UNIT_SH_H
#define TW_UNIT_SH_H

#include <stddef.h>

/* The twasmc under test: $TWASMC, else build/bin/twasmc. */
const char *unit_twasmc(void);
/* Runs cmd through the shell with stderr joined to stdout, which goes to
 * out (cut at cap - 1 bytes, NUL-terminated); the exit status, 128 + the
 * signal's number when a signal ended it. */
int unit_sh(const char *cmd, char *out, size_t cap);

#endif
