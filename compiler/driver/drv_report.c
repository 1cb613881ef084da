/* drv_report.c: the driver's progress events and the clock that times
 * its phases. */
#include <time.h>

#include "driver.h"

void drv_report(const drv_options *o, drv_event e) {
  if (o && o->progress) o->progress(o->progress_arg, &e);
}

double drv_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
