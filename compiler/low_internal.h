/* low_internal.h: state shared by the lowering files (low_*.c) only. */
#ifndef TW_LOW_INTERNAL_H
#define TW_LOW_INTERNAL_H

#include <llvm-c/Core.h>

#include "arena.h"
#include "diag.h"
#include "lower.h"
#include "twasm_abi.h"
#include "wasm.h"

/* Per-module lowering state (low_module.c owns it). */
typedef struct low_module_ctx {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  const wasm_module *m;
  const low_options *opt;
  tw_arena arena;

  LLVMTypeRef t_void, t_i1, t_i8, t_i16, t_i32, t_i64, t_f32, t_f64, t_ptr;
  LLVMTypeRef t_v128;      /* <2 x i64>: how v128 values travel (low_simd.h) */
  LLVMTypeRef *fn_types;   /* [m->ntypes] typed native signature, see twasm_abi.h */
  LLVMValueRef *funcs;     /* [m->nfuncs] LLVM function of each defined
                              function, NULL for imported ones */
  LLVMValueRef *callees;   /* [m->nfuncs] what call and sealed tables call:
                              funcs[i], or its native fast path (low_libc.c) */

  /* runtime entry points (declared once, see twasm_abi.h) */
  LLVMTypeRef trap_ty;       LLVMValueRef trap_fn;
  LLVMTypeRef mem_grow_ty;   LLVMValueRef mem_grow_fn;
  LLVMTypeRef table_grow_ty; LLVMValueRef table_grow_fn;
  LLVMTypeRef mem_init_ty;   LLVMValueRef mem_init_fn;
  LLVMTypeRef mem_copy_ty;   LLVMValueRef mem_copy_fn;
  LLVMTypeRef mem_fill_ty;   LLVMValueRef mem_fill_fn;
  LLVMTypeRef data_drop_ty;  LLVMValueRef data_drop_fn;
  LLVMTypeRef table_init_ty; LLVMValueRef table_init_fn;
  LLVMTypeRef table_copy_ty; LLVMValueRef table_copy_fn;
  LLVMTypeRef table_fill_ty; LLVMValueRef table_fill_fn;
  LLVMTypeRef elem_drop_ty;  LLVMValueRef elem_drop_fn;
  LLVMValueRef stack_limit;  /* @twasm_rt_stack_limit */
  /* TBAA access tags: linear memory and global cells never alias, so a
   * store to memory need not reload a global (e.g. __stack_pointer). */
  LLVMValueRef tbaa_memory, tbaa_global;
  LLVMValueRef *sealed;      /* [m->ntables] constant code pointers of a sealed table, or NULL (low_sealed.c) */
  LLVMValueRef *sealed_keys; /* [m->ntables] its constant type keys, beside (low_sealed.c) */
  uint32_t **sealed_funcs;   /* [m->ntables] a sealed table's function index + 1 per entry (0: null) */
  bool *table_fixed;         /* [m->ntables] size and element array never change (low_sealed.c) */
  struct low_devirt_set **devirt; /* [m->ntables * m->ntypes] filled lazily (low_devirt.c) */
  bool *small_leaf;          /* [m->nfuncs] a callee worth a switch case (low_devirt.c) */
  uint64_t devirt_budget;    /* instructions the switches may still copy (low_devirt.c) */
  LLVMValueRef tbaa_size;    /* the memory's size_bytes, read by bounds checks */
  LLVMValueRef tbaa_base;    /* the vmctx's mem_base, loaded where an access needs it */
  bool abi_broken;           /* a descriptor constant disagreed with twasm_abi.h */
  uint32_t *stack_scc;       /* [m->nfuncs] component of the direct call graph (low_stack.c) */
  int8_t *stack_depth;       /* [m->nfuncs] frames a call to it may add before the next check; -1: unbounded */
  bool *stack_reach_indirect; /* [m->nfuncs] it, or a function its unchecked calls reach, has a call_indirect */
  uint8_t *stack_indirect;   /* [m->ntables * m->ntypes] 0 unknown, 1 checked, 2 not (low_stack.c) */
  bool *tail_jumper;         /* [m->nfuncs] it may make sibling calls (low_tail.c) */
} low_module_ctx;

/* The Wasm function ABI: the vmctx (parameter 0) travels as swiftself,
 * in a callee-saved register (r13 on x86-64), on every function with a
 * Wasm signature (defined functions, libc wrappers, host trampolines) and
 * every call to one (low_module.c). */
void low_wasm_abi_fn(low_module_ctx *mc, LLVMValueRef fn);
void low_wasm_abi_call(low_module_ctx *mc, LLVMValueRef call);

/* LLVM's `memory` attribute value (MemoryEffects: two bits per location,
 * argument, inaccessible and other memory, Ref the lower) of code that
 * reads every location and writes only inaccessible memory: the runtime's
 * trap record, when it traps.  Alias analysis leaves inaccessible memory
 * out of every question about a location, so a caller's loads stay across
 * such a call; code generation still counts it as writing (a call that
 * only reads and whose result nobody uses is not selected at -O0). */
#define LOW_MEMORY_READ_MAY_TRAP 0x1d
/* Tags a load or store with one of mc's TBAA access tags. */
void low_tbaa(low_module_ctx *mc, LLVMValueRef access, LLVMValueRef tag);
/* A private constant holding len bytes and a NUL (low_desc.c). */
/* A private constant global holding init (low_desc.c); returns its address. */
LLVMValueRef low_private_const(low_module_ctx *mc, LLVMValueRef init, const char *name);
LLVMValueRef low_bytes_const(low_module_ctx *mc, const void *bytes, size_t len, const char *name);

/* LLVM type of a Wasm value type (refs are ptr). */
LLVMTypeRef low_valtype(low_module_ctx *mc, uint8_t valtype);

/* One control frame (block, loop, if, or the function body). */
typedef struct low_frame {
  uint16_t op;              /* OP_BLOCK, OP_LOOP, OP_IF, or 0 for the body */
  const wasm_functype *type; /* block type as a function type */
  LLVMBasicBlockRef br_target; /* loop: header; others: the join block */
  LLVMBasicBlockRef else_bb;   /* if: the else block */
  LLVMValueRef *phis;          /* phis at br_target for the branch arity */
  uint32_t height;             /* operand stack height at entry (params excluded) */
  uint32_t offset;             /* file offset of the block/loop/if instruction */
  uint32_t end_at;             /* index of its end in the function's code (block/loop/if) */
  bool unreachable_rest;       /* code after an unconditional branch */
  bool stack_checked;          /* f->stack_checked at entry, restored at else and end */
  bool reachable_end;          /* some edge reaches the join */
} low_frame;

/* Per-function lowering state (low_func.c owns it). */
typedef struct low_fn {
  low_module_ctx *mc;
  LLVMBuilderRef b;
  uint32_t func_index;
  const wasm_func *func;
  const wasm_functype *type;
  LLVMValueRef fn;
  LLVMValueRef vmctx;          /* first parameter */
  LLVMValueRef mem_base;       /* memory 0 base, loaded in the entry block (NULL without
                                  memory, or when loaded at each use: low_mem_base) */
  LLVMValueRef mem_obj;        /* struct twasm_memory * (for size_bytes) */
  uint32_t nlocals;            /* params + declared locals */
  LLVMValueRef *locals;        /* allocas */
  uint8_t *local_types;
  LLVMValueRef *stack;         /* compile-time operand stack */
  uint32_t sp, stack_cap;
  low_frame *frames;
  uint32_t nframes, frames_cap;
  bool stack_check_at_calls;   /* small frame: check before each call, not at entry */
  bool stack_checked;          /* a stack check dominates the current point: calls
                                  need none (the stack pointer is the same) */
} low_fn;

/* Operand stack. */
void low_push(low_fn *f, LLVMValueRef v);
LLVMValueRef low_pop(low_fn *f);

/* Branches to a trap call (code, this instruction's offset) when cond is
 * true, and continues in a fresh block otherwise. */
void low_trap_if(low_fn *f, LLVMValueRef cond, uint32_t trap_code, uint32_t offset);
/* Weights condbr's true edge (or its false one) as almost never taken. */
void low_mark_unlikely(low_module_ctx *mc, LLVMValueRef condbr, bool true_edge);
/* Unconditional trap (ends the current block with unreachable). */
void low_trap(low_fn *f, uint32_t trap_code, uint32_t offset);

/* Traps unless the current frame lies above the runtime's stack limit. */
void low_stack_check(low_fn *f);

/* Memory 0's base for an access at the current point (low_func.c). */
LLVMValueRef low_mem_base(low_fn *f);

/* Marks a load as reading memory that never changes (invariant.load). */
LLVMValueRef low_mark_invariant(low_module_ctx *mc, LLVMValueRef load);

/* Loads a field of the vmctx (byte offset from twasm_abi.h) as type ty. */
LLVMValueRef low_vmctx_load(low_fn *f, uint32_t field_offset, LLVMTypeRef ty, const char *name);

/* Loads a field of type ty at byte_offset from the struct at obj. */
LLVMValueRef low_load_at(low_fn *f, LLVMTypeRef ty, LLVMValueRef obj, uint32_t byte_offset,
                         const char *name);
/* Entry index of the pointer array at vmctx field_offset (globals, tables, funcs). */
LLVMValueRef low_vmctx_entry(low_fn *f, uint32_t field_offset, uint32_t index, const char *name);
/* The same for the u32 array at vmctx field_offset (sig_ids). */
LLVMValueRef low_vmctx_entry_u32(low_fn *f, uint32_t field_offset, uint32_t index, const char *name);
/* Sets up the function body's frame (low_control.c). */
void low_control_begin(low_fn *f);
/* call and call_indirect (low_call.c). */
bool low_emit_call(low_fn *f, const wasm_insn *insn);
/* The pieces of a call (low_call.c): the arguments of type_index popped,
 * the callee's vmctx first; the stack check before it (none when the
 * callee's stack use is bounded, or a check dominates); the call itself
 * (never a tail call, unless low_call_allow_tail says so); its results pushed. */
LLVMValueRef *low_call_pop_args(low_fn *f, uint32_t type_index, LLVMValueRef callee_vmctx);
void low_call_stack_check(low_fn *f, bool bounded);
LLVMValueRef low_call_emit(low_fn *f, uint32_t type_index, LLVMValueRef code, LLVMValueRef *args);
/* Lets LLVM make call (of low_call_emit) a sibling call where it is in
 * tail position: only for a call no cycle of the call graph runs through
 * without another, non-tail call, from a function whose frame the
 * runtime can put back in a backtrace (low_tail.c). */
void low_call_allow_tail(LLVMValueRef call);
void low_call_push_results(low_fn *f, uint32_t type_index, LLVMValueRef r);
/* call_indirect through a sealed table holding small functions of its
 * type: a switch of direct calls (low_devirt.c); false when not taken
 * (nothing emitted, index not consumed). */
bool low_devirt_call(low_fn *f, uint32_t type_index, uint32_t table_index, LLVMValueRef index,
                     uint32_t offset);
/* Finds, per sealed table and type, the small functions it holds (after
 * low_sealed_init; low_devirt.c). */
void low_devirt_init(low_module_ctx *mc);
/* The twasm_func * of function func_index (ref.func, low_call.c). */
LLVMValueRef low_func_ref(low_fn *f, uint32_t func_index);
/* Finds the sealed tables and builds their constant images (after the
 * functions are declared; low_sealed.c). */
void low_sealed_init(low_module_ctx *mc);
/* The key sealed images compare: the lowest index of a type equal to t. */
uint32_t low_sealed_key(const wasm_module *m, uint32_t t);
/* call_indirect's checks and code pointer through a sealed table (the
 * callee's vmctx is the caller's), or NULL when the table is not sealed. */
LLVMValueRef low_sealed_code(low_fn *f, uint32_t type_index, uint32_t table_index, LLVMValueRef index,
                             uint32_t offset);
/* Address of element index of table table_index, trapping with trap_code
 * when out of bounds (low_table.c). */
LLVMValueRef low_table_elem_ptr(low_fn *f, uint32_t table_index, LLVMValueRef index,
                                uint32_t trap_code, uint32_t offset);

/* Pointer to the bytes bytes at address + insn's offset, trapping
 * unless all of them lie in memory (explicit mode: here; guard mode:
 * bnd_insert.c (low_memory.c). */
LLVMValueRef low_access_ptr(low_fn *f, const wasm_insn *insn, LLVMValueRef address,
                            unsigned bytes);

/* Emitters by opcode family.  Each returns true when it handled insn (all
 * of them only see reachable code: low_func.c skips dead code). */
bool low_emit_numeric(low_fn *f, const wasm_insn *insn);  /* 0x45..0xC4, 0xFC00..0xFC07 */
bool low_emit_memory(low_fn *f, const wasm_insn *insn);   /* loads, stores, memory.size/grow, memory.init/copy/fill, data.drop */
bool low_emit_control(low_fn *f, const wasm_insn *insn, uint32_t *pc); /* block..return, calls, select, drop */
bool low_emit_variable(low_fn *f, const wasm_insn *insn); /* local.*, global.* */
bool low_emit_table(low_fn *f, const wasm_insn *insn);    /* table.*, elem.drop, ref.* */
bool low_emit_simd(low_fn *f, const wasm_insn *insn);     /* 0xFD prefix (low_simd*.c) */

/* C library routines low_libc.c runs natively where that is exact. */
typedef enum {
  LOW_LIBC_NONE, LOW_LIBC_MEMCMP, LOW_LIBC_STRCMP, LOW_LIBC_STRLEN,
  LOW_LIBC_MEMCPY, LOW_LIBC_MEMMOVE, LOW_LIBC_MEMSET, LOW_LIBC_STPCPY,
} low_libc_kind;
/* The hash of a leaf function's code, or 0 when it is no candidate
 * (low_libc_match.c). */
uint64_t low_libc_fingerprint(const wasm_module *m, const wasm_func *fn);
/* Which known build of a routine fn is, by its fingerprint. */
low_libc_kind low_libc_match(const wasm_module *m, const wasm_func *fn);

/* Sets mc->callees, with wrappers for the routines it recognises (after
 * the functions are declared, before the sealed tables; low_libc.c). */
void low_libc_init(low_module_ctx *mc);

/* Sets mc->stack_scc and mc->stack_depth from the call graph (low_stack.c). */
void low_stack_init(low_module_ctx *mc);
/* Whether a direct call from caller to callee needs a stack check before it. */
bool low_stack_call_checked(const low_module_ctx *mc, uint32_t caller, uint32_t callee);
/* Whether fn's instructions [from, to) make a call that is checked: an
 * indirect one, one to an import, or a direct one low_stack_call_checked names. */
bool low_stack_checked_calls(const low_module_ctx *mc, const wasm_func *fn, uint32_t from, uint32_t to);
/* Whether a call_indirect of type_index through table_index needs a stack
 * check before it; when it needs none it may also be a sibling call. */
bool low_stack_indirect_checked(const low_module_ctx *mc, uint32_t type_index, uint32_t table_index);

/* Picks the functions that may make sibling calls and marks the others
 * "disable-tail-calls" (after low_stack_init; low_tail.c). */
void low_tail_init(low_module_ctx *mc);
/* Whether a direct call from caller to callee may be a sibling call. */
bool low_tail_call(const low_module_ctx *mc, uint32_t caller, uint32_t callee);
/* Whether caller's call_indirect of type_index through table_index may be
 * a sibling call (it needs no stack check either). */
bool low_tail_indirect(const low_module_ctx *mc, uint32_t caller, uint32_t type_index, uint32_t table_index);

/* Lowers the body of defined function func_index into mc->funcs[...]. */
bool low_function(low_module_ctx *mc, uint32_t func_index, tw_diag *d);

#endif
