/* drv_output.h: where the CLI may write, how (atomically, or to standard
 * output), and the temporaries removed when a signal ends the process. */
#ifndef TW_DRV_OUTPUT_H
#define TW_DRV_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "diag.h"
#include "driver.h"

/* "-" as an output name: standard output. */
bool drv_is_stdout(const char *path);

/* False (a message in d) when path may not be an output: it exists and
 * is not a regular file (a device, fifo, directory or socket), or it is
 * the input file itself (same inode).  input may be NULL (stdin). */
bool drv_output_allowed(const char *path, const char *input, tw_diag *d);

/* Writes data to path through a temporary beside it, renamed into place
 * (mode 0666 less the umask), or to standard output for "-". */
bool drv_write_output(const char *path, const void *data, size_t size, tw_diag *d);

/* Links objects (in memory: a module's parts) with the runtime in
 * rt_lib_dir into the executable out, through temporaries; mode 0777 less
 * the umask, as a linker gives.  o->progress (o may be NULL) hears the
 * link command. */
bool drv_write_executable(const drv_objects *objs, const char *out, const char *rt_lib_dir,
                          const drv_options *o, tw_diag *d);

/* mkstemps(templ, suffix_len) with the name recorded for removal by
 * drv_remove_temps_on_signals' handler; -1 with errno on failure. */
int drv_temp_create(char *templ, int suffix_len);
/* The same in $TMPDIR (default /tmp): buf gets "DIR/" pattern, whose
 * XXXXXX (followed by suffix_len bytes) mkstemps fills in. */
int drv_temp_in_tmpdir(char *buf, size_t cap, const char *pattern, int suffix_len);
/* Unlinks a temporary (when unlink_it) and forgets it. */
void drv_temp_release(const char *path, bool unlink_it);

/* A private directory in $TMPDIR for one tool run (the tool gets it as
 * its TMPDIR, so whatever cc, collect2 or the linker plugin leave there,
 * even when killed, goes with it): buf gets its path; false (nothing
 * made) when it cannot be made.  drv_tool_dir_remove empties and removes
 * it; the signal handler does the same after stopping the tool. */
bool drv_tool_dir_make(char *buf, size_t cap);
void drv_tool_dir_remove(void);

/* A tool's process group, killed by the handler before it removes the
 * temporaries (so a linker cannot recreate one after); 0 when done. */
void drv_child_running(pid_t pgid);

/* Installs handlers for SIGINT, SIGTERM, SIGHUP and SIGQUIT that stop
 * the running tool, remove the recorded temporaries and re-raise the
 * signal.  For the command line; the library itself installs nothing. */
void drv_remove_temps_on_signals(void);

/* Blocks (true) or restores (false) those signals around a step that
 * must not be cut in two, such as creating and recording a temporary. */
void drv_hold_signals(bool hold);

#endif
