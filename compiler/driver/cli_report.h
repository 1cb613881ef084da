/* cli_report.h: how the twasmc command prints the offload report
 * (--offload-report folds the loops of the module's own C library into one
 * line; --offload-report=all lists every nest); command-line code. */
#ifndef TW_CLI_REPORT_H
#define TW_CLI_REPORT_H

#include <stdbool.h>

/* True for the name of a C-library function: a reserved name (`__x`,
 * `_X`) or one of wasi-libc's functions (cli_libc_names.c). */
bool cli_libc_name(const char *name);

/* The report text with every line of a C-library function replaced by one
 * summary line at the end, and every refused nest of an unnamed function
 * (`func[N]`: a module without a name section) that refuses four or more
 * by another; malloc'd, NULL when out of memory. */
char *cli_report_fold(const char *report);

#endif
