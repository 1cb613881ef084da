/* twasm.h: the public API of libtwasm-rt.  Instantiate modules compiled by
 * twasmc, link them with host functions and with each other, call their
 * exports and get traps back as values. */
#ifndef TWASM_H
#define TWASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libtwasm-rt exports what its public headers declare and nothing else
 * (it is built with hidden visibility). */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define TWASM_VERSION "0.1.0"

/* Trap codes (twasm_trap.code; 0 = no trap). */
enum {
  TWASM_TRAP_NONE = 0,
  TWASM_TRAP_UNREACHABLE = 1,
  TWASM_TRAP_INT_DIV_ZERO = 2,
  TWASM_TRAP_INT_OVERFLOW = 3,
  TWASM_TRAP_INVALID_CONVERSION = 4,
  TWASM_TRAP_MEMORY_OOB = 5,
  TWASM_TRAP_TABLE_OOB = 6,           /* table.get/set/fill/copy/init out of bounds */
  TWASM_TRAP_UNDEFINED_ELEMENT = 7,   /* call_indirect index >= table size */
  TWASM_TRAP_UNINITIALIZED_ELEMENT = 8, /* call_indirect on a null entry */
  TWASM_TRAP_INDIRECT_TYPE_MISMATCH = 9,
  TWASM_TRAP_STACK_EXHAUSTED = 10,
  TWASM_TRAP_HOST = 11,               /* raised by a host function */
  TWASM_TRAP_EXIT = 12,               /* WASI proc_exit unwinding (not an error) */
  TWASM_TRAP_COUNT
};

/* Value kinds, numerically the Wasm binary encodings. */
typedef enum {
  TWASM_I32 = 0x7f,
  TWASM_I64 = 0x7e,
  TWASM_F32 = 0x7d,
  TWASM_F64 = 0x7c,
  TWASM_V128 = 0x7b,
  TWASM_FUNCREF = 0x70,
  TWASM_EXTERNREF = 0x6f,
} twasm_valkind;

/* A v128 value: 16 bytes in Wasm's order, lane i of an N-lane
 * shape at bytes [16 / N * i, 16 / N * (i + 1)), little-endian.  On a
 * little-endian host (x86-64) the arrays below read the lanes directly:
 * i32[2] is lane 2 of an i32x4.  Aligned like uint64_t. */
typedef union twasm_v128 {
  uint8_t u8[16];
  int8_t i8[16];
  uint16_t u16[8];
  int16_t i16[8];
  uint32_t u32[4];
  int32_t i32[4];
  uint64_t u64[2];
  int64_t i64[2];
  float f32[4];
  double f64[2];
} twasm_v128;

typedef struct twasm_val {
  twasm_valkind kind;
  union {
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
    twasm_v128 v128; /* lanes as twasm_v128 describes */
    void *ref; /* funcref: twasm_func *; externref: host pointer; NULL = null */
  } of;
} twasm_val;

typedef enum {
  TWASM_EXTERN_FUNC = 0,
  TWASM_EXTERN_TABLE = 1,
  TWASM_EXTERN_MEMORY = 2,
  TWASM_EXTERN_GLOBAL = 3,
} twasm_externkind;

typedef struct twasm_func twasm_func;
typedef struct twasm_table twasm_table;
typedef struct twasm_memory twasm_memory;
typedef struct twasm_global twasm_global;
typedef struct twasm_instance twasm_instance;
typedef struct twasm_module_abi twasm_module; /* emitted by twasmc */

typedef struct twasm_extern {
  twasm_externkind kind;
  union {
    twasm_func *func;
    twasm_table *table;
    twasm_memory *memory;
    twasm_global *global;
  } of;
} twasm_extern;

#define TWASM_TRAP_MAX_FRAMES 16

/* A trap (or an error while linking/instantiating), as a value. */
typedef struct twasm_trap {
  uint32_t code;          /* TWASM_TRAP_*, 0 when none */
  char message[256];      /* e.g. "integer divide by zero" */
  const char *func_name;  /* Wasm function name, or NULL */
  uint32_t func_index;    /* UINT32_MAX when unknown */
  uint32_t offset;        /* file offset of the trapping instruction, 0 if unknown */
  int exit_status;        /* for TWASM_TRAP_EXIT */
  /* Backtrace: function indices (in the trapping instance's module) of
   * the Wasm frames, innermost (the trapping function) first. */
  uint32_t nframes;
  uint32_t frames[TWASM_TRAP_MAX_FRAMES];
  bool frames_truncated;  /* more Wasm frames lay beyond the last one kept */
} twasm_trap;

/* Spec wording of a trap code ("integer divide by zero", ...). */
const char *twasm_trap_message(uint32_t code);

/* ---- function types --------------------------------------------------- */

typedef struct twasm_functype {
  uint32_t nparams, nresults;
  const twasm_valkind *params;
  const twasm_valkind *results;
} twasm_functype;

/* ---- host functions --------------------------------------------------- */

/* A host function: reads args, writes results (kinds preset), returns 0,
 * or fills trap (message) and returns non-zero to trap. */
typedef int (*twasm_host_fn)(void *env, twasm_instance *caller,
                             const twasm_val *args, twasm_val *results,
                             twasm_trap *trap);

twasm_func *twasm_func_new_host(const twasm_functype *type, twasm_host_fn fn,
                                void *env);
void twasm_func_delete(twasm_func *f); /* host functions only */
void twasm_func_type(const twasm_func *f, twasm_functype *out);

/* ---- memories, tables, globals created by the host --------------------- */

twasm_memory *twasm_memory_new(uint32_t min_pages, uint32_t max_pages, bool has_max);
void twasm_memory_delete(twasm_memory *m);
uint8_t *twasm_memory_data(twasm_memory *m);
uint64_t twasm_memory_size(const twasm_memory *m); /* bytes */
int32_t twasm_memory_grow(twasm_memory *m, uint32_t delta_pages);

twasm_table *twasm_table_new(twasm_valkind elem, uint32_t min, uint32_t max, bool has_max, void *init);
void twasm_table_delete(twasm_table *t);
uint32_t twasm_table_size(const twasm_table *t);
bool twasm_table_get(const twasm_table *t, uint32_t i, void **out);
bool twasm_table_set(twasm_table *t, uint32_t i, void *ref);

twasm_global *twasm_global_new(twasm_valkind kind, bool mutable_, twasm_val init);
void twasm_global_delete(twasm_global *g);
twasm_val twasm_global_get(const twasm_global *g);
void twasm_global_set(twasm_global *g, twasm_val v);

/* ---- modules and instances -------------------------------------------- */

/* Introspection of a compiled module's imports and exports. */
typedef struct twasm_import_info {
  const char *module;
  const char *name;
  uint32_t module_len, name_len;
  twasm_externkind kind;
} twasm_import_info;

uint32_t twasm_module_import_count(const twasm_module *m);
void twasm_module_import(const twasm_module *m, uint32_t i, twasm_import_info *out);
uint32_t twasm_module_export_count(const twasm_module *m);
const char *twasm_module_export_name(const twasm_module *m, uint32_t i, uint32_t *len);

/* Instantiates m with imports[i] for the module's i-th import.  On failure
 * returns NULL and fills err: an unknown/incompatible import ("incompatible
 * import type"), a trap while initialising segments ("out of bounds memory
 * access"), or a trap in the start function. */
twasm_instance *twasm_instance_new(const twasm_module *m,
                                   const twasm_extern *imports,
                                   uint32_t nimports, twasm_trap *err);
void twasm_instance_delete(twasm_instance *inst);

/* Looks an export up by name; false when there is none. */
bool twasm_instance_export(twasm_instance *inst, const char *name,
                           uint32_t name_len, twasm_extern *out);
twasm_memory *twasm_instance_memory(twasm_instance *inst, uint32_t index);
const twasm_module *twasm_instance_module(const twasm_instance *inst);

/* Embedder data carried by an instance (e.g. the WASI context). */
void twasm_instance_set_user(twasm_instance *inst, void *user);
void *twasm_instance_user(const twasm_instance *inst);

/* Calls any function (compiled or host).  Arg kinds must match the type;
 * results get their kinds set.  Returns 0, or the trap code with *trap
 * filled (trap may be NULL). */
uint32_t twasm_call(twasm_func *f, const twasm_val *args, uint32_t nargs,
                    twasm_val *results, uint32_t nresults, twasm_trap *trap);

/* Native stack budget for Wasm code, in bytes (default 4 MiB, bounded by
 * the thread's actual stack); deeper recursion traps "call stack exhausted". */
void twasm_set_stack_budget(size_t bytes);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
