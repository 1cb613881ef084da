/* cli_progress.c: what the twasmc command shows while it compiles.  With
 * -v, a line per phase with its wall time (parts of a phase indented
 * below it) and the link command; on a terminal, the phase running now,
 * and how far a long one has come, on one line redrawn in place and
 * removed at the end.  Nothing of this goes to standard output. */
#include "cli_progress.h"

#include <stdio.h>
#include <unistd.h>

void cli_progress_init(cli_progress *p, bool verbose) {
  *p = (cli_progress){.verbose = verbose, .live = isatty(STDERR_FILENO) == 1, .start = drv_now()};
}

void cli_progress_clear(cli_progress *p) {
  if (!p->shown) return;
  fputs("\r\033[K", stderr);
  fflush(stderr);
  p->shown = false;
}

static void live_line(cli_progress *p, const drv_event *e) {
  if (!p->live) return;
  fputs("\r\033[K", stderr);
  if (e->kind == DRV_EV_COUNT)
    fprintf(stderr, "twasmc: %s: %lu/%lu %s", e->name, e->done, e->total, e->unit ? e->unit : "");
  else
    fprintf(stderr, "twasmc: %s ...", e->name);
  fflush(stderr);
  p->shown = true;
}

static void phase_line(cli_progress *p, const drv_event *e) {
  cli_progress_clear(p);
  int indent = (int)e->depth * 2;
  fprintf(stderr, "twasmc: %*s%-*s %8.3f s", indent, "", 18 - indent, e->name, e->seconds);
  if (e->detail) fprintf(stderr, "  (%s)", e->detail);
  fputc('\n', stderr);
}

void cli_progress_event(void *arg, const drv_event *e) {
  cli_progress *p = arg;
  switch (e->kind) {
  case DRV_EV_BEGIN:
  case DRV_EV_COUNT:
    live_line(p, e);
    break;
  case DRV_EV_END:
    if (p->verbose) phase_line(p, e);
    break;
  case DRV_EV_COMMAND:
    if (p->verbose) {
      cli_progress_clear(p);
      fprintf(stderr, "twasmc: run: %s\n", e->name);
    }
    break;
  }
}

void cli_progress_total(cli_progress *p) {
  cli_progress_clear(p);
  if (p->verbose) fprintf(stderr, "twasmc: %-18s %8.3f s\n", "total", drv_now() - p->start);
}
