/* twasm_wasi.h: WASI preview 1 (wasi_snapshot_preview1) for modules run
 * with libtwasm-rt, and twasm_main, the entry point of compiled
 * executables. */
#ifndef TWASM_WASI_H
#define TWASM_WASI_H

#include <stdbool.h>

#include "twasm.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* A WASI context: arguments, environment, and the guest's file
 * descriptors (0-2: the host's standard streams, 3..: the preopened
 * directories in the order they were added, then whatever the guest opens).
 * One context may serve several instances; it must outlive them. */
typedef struct twasm_wasi twasm_wasi;

/* Copies argv[0..argc) and the NULL-terminated envp ("NAME=value", may be
 * NULL for none).  NULL when out of memory. */
twasm_wasi *twasm_wasi_new(int argc, char *const *argv, char *const *envp);

/* Gives the guest the host directory host_dir under the name guest_dir
 * (the next free descriptor).  Everything the guest reaches through it
 * stays beneath host_dir: no "..", absolute path or symlink leads out.
 * False, with errno set, when host_dir cannot be opened as a directory. */
bool twasm_wasi_add_preopen(twasm_wasi *w, const char *host_dir, const char *guest_dir);

/* Closes every descriptor the context opened and frees it. */
void twasm_wasi_delete(twasm_wasi *w);

/* Fills imports[i] for each wasi_snapshot_preview1 import of m (in the
 * module's import order; twasm_module_import_count(m) entries) and leaves
 * the other entries as they are, for the embedder's own imports.  A name
 * wasi_snapshot_preview1 does not have: false with err->message
 * "unknown import MODULE::NAME". */
bool twasm_wasi_imports(twasm_wasi *w, const twasm_module *m,
                        twasm_extern *imports, twasm_trap *err);

/* What a compiled executable's main() calls: instantiates m with WASI
 * (arguments, environment and preopens as below), runs `_start` (or a
 * reactor's `_initialize`), and returns the exit status: proc_exit's
 * value, 0 after a normal return, 134 after a trap (reported on stderr),
 * 1 when the module cannot start.
 * baked_dirs: NULL or "HOST::GUEST\n..." entries (GUEST defaults to
 * HOST); $TWASM_DIRS, when set, replaces them (entries separated by ';').
 * The guest's environment holds no host variable unless asked for:
 * baked_env is NULL or a list of entries, each ending in a NUL byte and
 * the list in an empty entry: "NAME=VALUE" sets NAME, "NAME" passes the
 * host's NAME when it is set.  With TWASM_MAIN_INHERIT_ENV (twasm_abi.h)
 * in flags, or $TWASM_INHERIT_ENV=1 (=0 turns a baked inherit off), the
 * host's whole environment comes first, less the runtime's own TWASM_*
 * variables, and the baked entries override it. */
int twasm_main(const twasm_module *m, int argc, char **argv, const char *baked_dirs,
               const char *baked_env, unsigned flags);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
