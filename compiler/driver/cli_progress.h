/* cli_progress.h: what the twasmc command shows while it compiles (the
 * driver's progress events, driver.h); command-line code, not library. */
#ifndef TW_CLI_PROGRESS_H
#define TW_CLI_PROGRESS_H

#include <stdbool.h>

#include "driver.h"

typedef struct {
  bool verbose; /* -v: each phase with its time, and the link command */
  bool live;    /* standard error is a terminal: the running phase on one line */
  bool shown;   /* the live line is on the screen now */
  double start;
} cli_progress;

void cli_progress_init(cli_progress *p, bool verbose);
/* A drv_progress_fn; arg is the cli_progress. */
void cli_progress_event(void *arg, const drv_event *e);
/* Removes the live line: before anything else goes to standard error. */
void cli_progress_clear(cli_progress *p);
/* -v: the whole compile's time. */
void cli_progress_total(cli_progress *p);

#endif
