/* off.h: the offload stage: tensor loops of the optimised host module ->
 * kernel descriptors (kernels/) -> PTX per arch (ptx/) -> embedded in the
 * object, with a report of every loop nest considered. */
#ifndef TW_OFF_H
#define TW_OFF_H

#include <llvm-c/Core.h>
#include <stdbool.h>
#include <stdint.h>

#include "diag.h"

#define OFF_MAX_ARCHS 8

/* Where off_module's time went (twasmc -v): PTX generation summed per
 * arch, in the order the archs first appear (sm_90a after the others). */
typedef struct {
  unsigned narchs;
  unsigned sm[OFF_MAX_ARCHS + 1];
  bool specific[OFF_MAX_ARCHS + 1];
  double seconds[OFF_MAX_ARCHS + 1];
} off_times;

typedef struct {
  bool enabled;
  bool fp_reassociate;      /* float add reductions (changes results) */
  bool tf32;                /* f32 matmuls on tf32 tensor cores (changes results) */
  unsigned archs[OFF_MAX_ARCHS]; /* sm numbers; 0 archs: sm_75, sm_80, sm_90 */
  unsigned narchs;
  off_times *times;         /* when set: receives PTX time per arch */
} off_options;

/* One Wasm function as lowering handed it over. */
typedef struct {
  LLVMValueRef fn;          /* its LLVM function; NULL for an import */
  const char *name;         /* from the name section, or NULL */
  uint32_t body_offset;     /* file offset of its body */
} off_func;

/* Recognises the loop nests of every defined function of mod (lowered,
 * funcs[i] being Wasm function i, then optimised), generates PTX for each
 * recognised one, embeds it in the section .twasm_ptx and lists it in the
 * kernel table of the descriptor desc_symbol.  *report (malloc'd; report
 * may be NULL) receives one line per nest.  *nkernels: kernels embedded. */
bool off_module(LLVMModuleRef mod, const off_func *funcs, uint32_t nfuncs, const char *file,
                const char *desc_symbol, const off_options *o, char **report,
                unsigned *nkernels, tw_diag *d);

/* Metadata kind on a call of twasm_rt_offload whose launch may go
 * unwaited (off_version.c): !{}. */
#define OFF_MD_UNWAITED "twasm.unwaited"

/* The waits pass (off_wait.c), after loop versioning: the calls marked
 * OFF_MD_UNWAITED become calls of twasm_rt_offload_unwaited, and the code
 * waits where the CPU may touch linear memory while their launches run.
 * reach[i] (i below nfuncs): who else may call Wasm function i, a set of
 * OFF_REACH_*.  Returns how many calls it changed (0: none, nothing
 * placed). */
enum {
  OFF_REACH_HOST = 1,  /* exported, or the start function */
  OFF_REACH_TABLE = 2, /* named by a segment or a global: call_indirect, or the host through a funcref */
};
unsigned off_place_waits(LLVMModuleRef mod, const uint8_t *reach, uint32_t nfuncs);

/* Writes the PTX embedded in a compiled object or executable to
 * DIR/KERNEL.sm_XX.ptx; *count: files written. */
bool off_extract(const char *app, const char *dir, unsigned *count, tw_diag *d);

/* Parses "sm_75,sm_80" (or "75,80") into o->archs: false for a list
 * that is malformed, too long, or names an arch off_supported_archs()
 * ("sm_50,sm_52,...") does not hold. */
bool off_parse_archs(off_options *o, const char *list);
const char *off_supported_archs(void);

#endif
