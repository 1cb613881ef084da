/* rt_internal.h: private types and helpers shared by the runtime's files. */
#ifndef RT_INTERNAL_H
#define RT_INTERNAL_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twasm.h"
#include "twasm_abi.h"

/* Address space reserved per linear memory: 4 GiB of i32 addresses plus a
 * 4 GiB static offset plus room for the widest access, so guard-mode code
 * never needs a bounds check. */
#define RT_MEMORY_RESERVE ((8ull << 30) + 65536ull)
#define RT_MAX_PAGES TWASM_MAX_PAGES
#define RT_MAX_TABLE_ELEMS 10000000u

/* ---- huge pages of linear memories (rt_huge.c) -------------------------- */

/* A PROT_NONE reservation of `bytes` at a 2 MiB boundary, advised for
 * transparent huge pages; NULL when mmap fails. */
void *rt_huge_reserve(size_t bytes);
/* After [old_bytes, new_bytes) of the memory at `base` became read-write:
 * collapses the 2 MiB range the old end cut, now wholly read-write, into a
 * huge page (best effort: MADV_COLLAPSE, Linux 6.1). */
void rt_huge_grown(uint8_t *base, uint64_t old_bytes, uint64_t new_bytes);

/* ---- arena (rt_arena.c) -------------------------------------------------- */

typedef struct rt_arena_block rt_arena_block;
typedef struct {
  rt_arena_block *head;
} rt_arena;

/* Zeroed, 16-aligned; NULL when the host is out of memory. */
void *rt_arena_alloc(rt_arena *a, size_t size);
void rt_arena_free(rt_arena *a);

/* ---- canonical signatures (rt_sig.c) ------------------------------------- */

/* One per distinct (params, results) tuple in the process; never freed, so
 * pointers to it stay valid everywhere. */
typedef struct rt_sig {
  uint32_t id;
  uint32_t nparams, nresults;
  twasm_valkind *kinds; /* params, then results */
  struct rt_sig *next;  /* hash chain */
} rt_sig;

const rt_sig *rt_sig_intern(uint32_t nparams, uint32_t nresults, const uint8_t *types);

/* ---- objects ------------------------------------------------------------- */

typedef struct twasm_instance rt_instance;

typedef enum { RT_FUNC_WASM, RT_FUNC_HOST, RT_FUNC_BINDING } rt_func_kind;

/* A function record: the ABI part generated code reads, then ours. */
typedef struct rt_func {
  twasm_func_abi abi;
  rt_func_kind kind;
  uint32_t type_index;   /* WASM: type index in the owner's module */
  const rt_sig *sig;
  twasm_host_fn host_fn; /* HOST */
  void *env;             /* HOST */
  struct rt_func *host;  /* BINDING: the host function it calls */
  rt_instance *owner;    /* WASM: defining instance; BINDING: the importer */
} rt_func;

typedef struct rt_memory {
  twasm_memory_abi abi;
  uint64_t max_pages;    /* as declared; meaningful when has_max */
  bool has_max;
  bool managed;          /* CUDA managed memory: kernels may touch it */
  bool gpu;              /* the module has kernels: may be exposed later */
  int exposed;           /* host memory exposed to kernels: 0 not yet, -1
                            refused, else its cu_host_kind */
  uint64_t usable;       /* bytes it may ever grow to */
  bool exposing;         /* the start's helper thread is exposing it now */
  bool abandoned;        /* destroyed meanwhile: that thread frees it */
  rt_instance *owner;    /* NULL when the host created it */
  struct rt_resident *resident; /* device copy for kernels (rt_resident.c) */
} rt_memory;

typedef struct rt_table {
  twasm_table_abi abi;
  uint32_t max;
  bool has_max;
  rt_instance *owner;
  /* Instances whose instantiation failed after writing their functions
   * into this table: the spec keeps them alive as long as the table. */
  rt_instance **kept;
  uint32_t nkept;
} rt_table;

struct twasm_global {
  twasm_global_cell cell; /* first: generated code sees a cell pointer */
  twasm_valkind kind;
  bool mutable_;
  rt_instance *owner;
};

/* A code address and the file offset of the access there (rt_pcmap.c). */
typedef struct {
  uintptr_t pc;
  uint32_t offset;
} rt_pc;

/* An instance: the vmctx generated code reads, then ours. */
struct twasm_instance {
  twasm_vmctx vm;
  const twasm_module_abi *module;
  rt_arena arena;
  uint32_t refs;           /* the embedder's, plus one per importer */
  void *user;
  uint32_t nmems, ntables, nglobals;  /* imports included */
  uint32_t nfunc_imports, ntable_imports, nmem_imports, nglobal_imports;
  rt_memory **mems;
  const rt_sig **sigs;     /* per module type index */
  rt_instance **import_owners; /* [nimports], NULL for host objects */
  void ***elem_refs;       /* evaluated element segment items */
  uint32_t *elem_len;      /* 0 once dropped */
  uint64_t *data_len;      /* 0 once dropped */
  const twasm_pcmap_abi *pcmap; /* the module's table, when in code order */
  rt_pc *pcmap_sorted;     /* else its sorted copy */
  size_t npcmap;
};

static inline rt_instance *rt_inst(void *vmctx) { return (rt_instance *)vmctx; }

/* The module's own globals lie in the instance's allocation, where
 * generated code finds them from the vmctx (twasm_abi.h, ABI 13). */
_Static_assert(sizeof(rt_instance) <= TWASM_OWN_GLOBALS_AT, "rt_instance grew past TWASM_OWN_GLOBALS_AT");
_Static_assert(sizeof(twasm_global) == TWASM_OWN_GLOBAL_STRIDE, "twasm_global is not TWASM_OWN_GLOBAL_STRIDE long");
_Static_assert(offsetof(twasm_global, cell) == 0, "a global's cell must come first");
static inline twasm_global *rt_own_global(rt_instance *inst, uint32_t i) {
  return (twasm_global *)((char *)inst + TWASM_OWN_GLOBALS_AT + (size_t)i * TWASM_OWN_GLOBAL_STRIDE);
}

/* rt_memory.c */
/* gpu: the module has kernels; its memory then goes into CUDA managed
 * memory when the GPU is up (same reservation, same guard region): under
 * TWASM_DEVICE=gpu it is started here, in auto mode only used if already
 * started.  Otherwise it is host memory, which rt_memory_reachable may
 * expose to kernels once the GPU starts. */
rt_memory *rt_memory_create(uint64_t min_pages, uint64_t max_pages, bool has_max, bool gpu);
void rt_memory_destroy(rt_memory *m);
/* Whether kernels may touch m's open part now (the GPU being up): managed
 * memory, or host memory exposed (once) to the device; *over_bus when
 * they reach it over the bus (pinned host memory).  NULL, or why not. */
const char *rt_memory_reachable(rt_memory *m, bool *over_bus);
/* The memory the background start makes reachable (rt_start.c): named by
 * rt_memory_expose_later (NULL, or a memory that needs none: nothing),
 * then exposed on the helper thread by rt_memory_expose_pending (the part
 * open then; what it grows by is pinned at the next launch), which says
 * how, for the trace.  Destroyed before that: forgotten; while it is
 * being exposed: the helper thread frees it afterwards, nobody waits. */
void rt_memory_expose_later(rt_memory *m);
const char *rt_memory_expose_pending(void);
bool rt_memory_owns(uintptr_t addr); /* async-signal-safe */
/* Device copies of linear memory (rt_resident.c): a write fault on a
 * page kept there opens it again and is handled (true; async-signal-
 * safe); rt_resident_touch opens the kept pages of a range a system call
 * will write; executables enable the copies. */
bool rt_resident_fault(uintptr_t addr);
void rt_resident_touch(const void *ptr, uint64_t len);
void rt_resident_enable(void);

/* rt_table.c */
rt_table *rt_table_create(uint32_t elem_type, uint64_t min, uint64_t max, bool has_max, void *init);
void rt_table_destroy(rt_table *t);
bool rt_table_keep(rt_table *t, rt_instance *inst);

/* rt_func.c */
rt_func *rt_func_bind_host(rt_instance *importer, rt_func *host, uint32_t type_index);
/* Slots n values of these kinds take (a v128 takes two). */
uint32_t rt_slot_count(const twasm_valkind *kinds, uint32_t n);
void rt_slots_from_vals(const twasm_val *vals, uint32_t n, twasm_slot *out);
void rt_vals_from_slots(const twasm_valkind *kinds, const twasm_slot *slots, uint32_t n, twasm_val *out);

/* rt_link.c: resolves imports; on failure err says why. */
bool rt_link_imports(rt_instance *inst, const twasm_extern *imports, uint32_t nimports, twasm_trap *err);

/* rt_instance.c */
void rt_instance_acquire(rt_instance *inst);
void rt_instance_release(rt_instance *inst);

/* ---- traps (rt_trap.c) --------------------------------------------------- */

/* One per active twasm_call on a thread, innermost first. */
typedef struct rt_frame {
  sigjmp_buf env;
  twasm_trap trap;
  rt_instance *inst;        /* the callee's instance, to name faulting code */
  uintptr_t saved_limit;
  struct rt_frame *prev;
} rt_frame;

/* Pushes/pops a frame; the outermost one on a thread also sets the stack
 * limit, installs the fault handler and the alternate signal stack. */
void rt_frame_push(rt_frame *f, rt_instance *inst);
void rt_frame_pop(rt_frame *f);

void rt_trap_fill(twasm_trap *t, uint32_t code, const twasm_module_abi *m,
                  uint32_t func_index, uint32_t offset);
/* The index of inst's defined function whose code holds pc, UINT32_MAX when
 * pc is not in the module's code.  Async-signal-safe. */
uint32_t rt_func_at(const rt_instance *inst, uintptr_t pc);
/* rt_pcmap.c: the module's table of accesses left to the guard pages put
 * in code order (false: out of memory); then, async-signal-safe, the
 * access whose label is the nearest at or before pc in the same native
 * function: its function (inlined ones included) and file offset. */
bool rt_pcmap_init(rt_instance *inst);
bool rt_pcmap_find(const rt_instance *inst, uintptr_t pc, uint32_t *func_index, uint32_t *offset);
/* Fills t's frames with the Wasm functions of inst on the calling thread's
 * stack, innermost first (rt_backtrace.c).  From the fault handler too. */
void rt_backtrace(twasm_trap *t, const rt_instance *inst);
__attribute__((noreturn)) void rt_trap_raise(const twasm_trap *t);
/* For failures that are not traps (linking): code 0 and a message. */
void rt_error(twasm_trap *t, const char *message);

/* ---- an executable's guest environment (rt_env.c) ------------------------ */

/* The NULL-ended "NAME=VALUE" list twasm_main gives the guest: the
 * host's variables but TWASM_* when inherit_env (or $TWASM_INHERIT_ENV,
 * 1 or 0, which overrides it), then the baked entries (twasm_main).
 * NULL when out of memory; rt_free_environ frees it. */
char **rt_guest_environ(const char *baked, bool inherit_env);
void rt_free_environ(char **env);

#endif
