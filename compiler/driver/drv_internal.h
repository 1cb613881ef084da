/* drv_internal.h: shared by the driver's own files (compiler/driver/drv_*.c
 * and driver.c): the host target machine, external tools, and code
 * generation in parts. */
#ifndef TW_DRV_INTERNAL_H
#define TW_DRV_INTERNAL_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "driver.h"

/* The x86-64 target machine for opt_level and cpu (drv_options.cpu),
 * static code for an executable's objects (exe: linked non-PIE by
 * drv_link_objects), else PIC; NULL with d set when LLVM has none.  Safe on any thread once one call
 * has returned (the first initialises LLVM's x86 target). */
LLVMTargetMachineRef drv_host_machine(int opt_level, const char *cpu, bool exe, tw_diag *d);

/* Switches with a dense jump table from a small k > 0 rewritten as a range
 * test and a switch on the value's zero extension from case 0, so that
 * the dispatch subtracts nothing (drv_tables.c); how many. */
unsigned drv_zero_based_tables(LLVMModuleRef mod);

/* Runs argv (argv[0] looked up in PATH), its first line of stderr into
 * errbuf; the exit status, 127 when it cannot be started (drv_tools.c). */
int drv_run_tool(char *const argv[], char *errbuf, size_t errcap);

/* The parts as one relocatable object (cc -r), in a malloc'd buffer;
 * o->progress hears the command. */
bool drv_combine_objects(const drv_objects *objs, uint8_t **obj, size_t *size,
                         const drv_options *o, tw_diag *d);

/* Writes each part to a temporary file recorded for removal on signals;
 * paths[i] receive their names (malloc'd; drv_temps_remove frees them). */
bool drv_temps_write(const drv_objects *objs, char **paths, tw_diag *d);
void drv_temps_remove(char **paths, unsigned n);

/* ---- code generation in parts (drv_split.c, drv_codegen.c) ---------------- */

/* The most parts a module is cut into. */
#define DRV_MAX_PARTS 32

/* How a module is cut: part i holds the defined functions first[i] to
 * first[i+1]-1 in module order, the last part also the global variables. */
typedef struct {
  unsigned nparts;
  unsigned first[DRV_MAX_PARTS + 1];
  unsigned long instructions; /* in the defined functions */
} drv_split_plan;

/* The plan for mod: one part unless it is large enough that code
 * generation pays for the split; depends on the module alone. */
void drv_split_plan_for(LLVMModuleRef mod, drv_split_plan *plan);

/* Makes mod's internal symbols hidden and external, named
 * PREFIX.NAME, so that code in one part reaches what another defines and
 * no two modules' symbols clash; then writes its bitcode. */
LLVMMemoryBufferRef drv_split_prepare(LLVMModuleRef mod, const char *prefix);

/* Part `part` of the prepared module's bitcode, read into ctx (one per
 * thread): the other parts' functions as declarations, and but in the last
 * part the global variables as declarations (constants keep their value as
 * available_externally, so that folding sees it).  NULL with d set on
 * failure. */
LLVMModuleRef drv_split_part(const char *bitcode, size_t size, const drv_split_plan *plan,
                             unsigned part, LLVMContextRef ctx, tw_diag *d);

/* What runs on each part before its code is emitted (the pipeline's
 * function passes after the split point), on the part's thread. */
typedef bool (*drv_part_passes)(void *arg, LLVMModuleRef mod, LLVMTargetMachineRef tm,
                                tw_diag *d);

typedef struct {
  const drv_options *o;     /* opt_level, cpu, jobs, progress */
  drv_part_passes passes;   /* or NULL */
  void *passes_arg;
} drv_codegen_job;

/* Emits *mod as objs: whole on this thread when its plan has one part,
 * else in parts on up to o->jobs threads, and then *mod is disposed (and
 * set NULL) once its bitcode is written.  Reports the phase "codegen" and
 * the count of functions done. */
drv_status drv_codegen(LLVMModuleRef *mod, LLVMTargetMachineRef tm, const drv_codegen_job *job,
                       const drv_split_plan *plan, drv_objects *objs, tw_diag *d);

#endif
