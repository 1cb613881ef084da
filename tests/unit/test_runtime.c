/* test_runtime.c: Check suite "runtime": libtwasm-rt driven by hand-written
 * modules whose "generated" functions are C functions following the ABI. */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "twasm_abi.h"

/* ---- hand-written "generated code" -------------------------------------- */

typedef int32_t (*fn_i_i)(void *, int32_t);
typedef int32_t (*fn_ii_i)(void *, int32_t, int32_t);

static twasm_vmctx *vm(void *vmctx) { return vmctx; }

static int32_t w_add(void *vmctx, int32_t a, int32_t b) { (void)vmctx; return a + b; }
static void w_nop(void *vmctx) { (void)vmctx; }
static void w_div_trap(void *vmctx) { twasm_rt_trap(vmctx, TWASM_TRAP_INT_DIV_ZERO, 1, 0x42); }

static int32_t w_load(void *vmctx, int32_t addr) {
  return *(volatile int32_t *)(vm(vmctx)->mem_base + (uint32_t)addr);
}

/* A guard-mode access with a large static offset. */
static void w_load_far(void *vmctx) { (void)*(volatile uint8_t *)(vm(vmctx)->mem_base + (5ull << 30)); }

static int32_t w_store(void *vmctx, int32_t addr, int32_t value) {
  *(volatile int32_t *)(vm(vmctx)->mem_base + (uint32_t)addr) = value;
  return 0;
}

static int32_t w_grow(void *vmctx, int32_t delta) { return twasm_rt_memory_grow(vmctx, 0, (uint32_t)delta); }

/* Calls imported function 0 through its record, as call does. */
static int32_t w_call_import(void *vmctx, int32_t x) {
  twasm_func_abi *f = vm(vmctx)->funcs[0];
  return ((fn_i_i)f->code)(f->vmctx, x);
}

/* call_indirect (type 2) through table 0. */
static int32_t w_call_indirect(void *vmctx, int32_t index, int32_t x) {
  twasm_table_abi *t = vm(vmctx)->tables[0];
  if ((uint32_t)index >= t->size) twasm_rt_trap(vmctx, TWASM_TRAP_UNDEFINED_ELEMENT, 0, 0);
  twasm_func_abi *f = t->elems[index];
  if (!f) twasm_rt_trap(vmctx, TWASM_TRAP_UNINITIALIZED_ELEMENT, 0, 0);
  if (f->sig_id != vm(vmctx)->sig_ids[2]) twasm_rt_trap(vmctx, TWASM_TRAP_INDIRECT_TYPE_MISMATCH, 0, 0);
  return ((fn_i_i)f->code)(f->vmctx, x);
}

static int32_t w_double(void *vmctx, int32_t x) { (void)vmctx; return 2 * x; }

/* Recursion that checks the stack limit at entry, as generated code does. */
static __attribute__((noinline)) int32_t w_recurse(void *vmctx, int32_t n) {
  volatile char frame[256];
  if ((uintptr_t)frame < twasm_rt_stack_limit) twasm_rt_trap(vmctx, TWASM_TRAP_STACK_EXHAUSTED, 0, 0);
  frame[0] = (char)n;
  return n == 0 ? 0 : 1 + w_recurse(vmctx, n - 1) + frame[0] * 0;
}

/* Recursion without the check: only the guard page stops it. */
static __attribute__((noinline)) int32_t w_recurse_unchecked(void *vmctx, int32_t n) {
  volatile char frame[4096];
  frame[0] = (char)n;
  if (n < 0) return 0; /* never reached: the stack ends long before */
  int32_t depth = w_recurse_unchecked(vmctx, n + 1);
  __asm__ volatile("" : : "r"(frame) : "memory"); /* no tail call, frame kept */
  return depth + 1;
}

/* ---- invokers and host trampolines per type ----------------------------- */

static void inv_ii_i(void *code, void *vmctx, const twasm_slot *args, twasm_slot *results) {
  results[0] = (uint32_t)((fn_ii_i)code)(vmctx, (int32_t)args[0], (int32_t)args[1]);
}
static void inv_v(void *code, void *vmctx, const twasm_slot *args, twasm_slot *results) {
  (void)args, (void)results;
  ((void (*)(void *))code)(vmctx);
}
static void inv_i_i(void *code, void *vmctx, const twasm_slot *args, twasm_slot *results) {
  results[0] = (uint32_t)((fn_i_i)code)(vmctx, (int32_t)args[0]);
}

static int32_t tramp_ii_i(void *vmctx, int32_t a, int32_t b) {
  twasm_slot args[2] = {(uint32_t)a, (uint32_t)b}, results[1];
  twasm_rt_call_host(vmctx, args, results);
  return (int32_t)results[0];
}
static void tramp_v(void *vmctx) {
  twasm_slot args[1] = {0}, results[1];
  twasm_rt_call_host(vmctx, args, results);
}
static int32_t tramp_i_i(void *vmctx, int32_t x) {
  twasm_slot args[1] = {(uint32_t)x}, results[1];
  twasm_rt_call_host(vmctx, args, results);
  return (int32_t)results[0];
}

/* ---- module descriptors -------------------------------------------------- */

enum { T_II_I, T_V, T_I_I, NTYPES };
static const uint8_t ty_ii_i[] = {TWASM_I32, TWASM_I32, TWASM_I32};
static const uint8_t ty_i_i[] = {TWASM_I32, TWASM_I32};
static const twasm_functype_abi types[NTYPES] = {{2, 1, ty_ii_i}, {0, 0, NULL}, {1, 1, ty_i_i}};
static const twasm_invoke_fn invokers[NTYPES] = {inv_ii_i, inv_v, inv_i_i};
static void *const trampolines[NTYPES] = {(void *)tramp_ii_i, (void *)tramp_v, (void *)tramp_i_i};

#define MODULE_TYPES .abi_version = TWASM_ABI_VERSION, .ntypes = NTYPES, .types = types, \
                     .invokers = invokers, .host_trampolines = trampolines
#define MODULE_BASE MODULE_TYPES, .start_func = -1
#define EXPORT(str, k, i) {.name = str, .name_len = sizeof str - 1, .kind = k, .index = i}
#define IMPORT_FUNC(str, t) {.module = "env", .name = str, .module_len = 3, .name_len = sizeof str - 1, \
                             .kind = TWASM_EXTERN_FUNC, .type_index = t}
#define CE_I32(v) {.op = TWASM_CE_I32, .value = (uint32_t)(v)}
#define CE_FUNC(i) {.op = TWASM_CE_REF_FUNC, .value = i}

/* Module "a": arithmetic, traps, one memory of 1..2 pages, all exported. */
static const twasm_func_def_abi a_funcs[] = {
    {(void *)w_add, T_II_I, 0}, {(void *)w_div_trap, T_V, 0}, {(void *)w_load, T_I_I, 0},
    {(void *)w_load_far, T_V, 0}, {(void *)w_grow, T_I_I, 0}, {(void *)w_recurse, T_I_I, 0},
    {(void *)w_recurse_unchecked, T_I_I, 0}, {(void *)w_store, T_II_I, 0},
};
static const char *const a_names[] = {"add", "div", "load", "load_far", "grow", "recurse", "unchecked", "store"};
static const twasm_memory_def_abi a_mem = {.has_max = 1, .min = 1, .max = 2};
static const uint8_t a_bytes[] = {1, 2, 3, 4};
static const twasm_data_abi a_data[] = {{.mode = TWASM_SEG_ACTIVE, .offset = CE_I32(16), .bytes = a_bytes, .size = 4}};
static const twasm_export_abi a_exports[] = {
    EXPORT("add", 0, 0), EXPORT("div", 0, 1), EXPORT("load", 0, 2), EXPORT("load_far", 0, 3),
    EXPORT("grow", 0, 4), EXPORT("recurse", 0, 5), EXPORT("unchecked", 0, 6), EXPORT("store", 0, 7),
    EXPORT("mem", TWASM_EXTERN_MEMORY, 0), EXPORT("nul\0name", 0, 0),
};
static const twasm_module_abi mod_a = {
    MODULE_BASE, .name = "a", .nfuncs = 8, .funcs = a_funcs, .nmemories = 1, .memories = &a_mem,
    .ndatas = 1, .datas = a_data, .nexports = 10, .exports = a_exports, .func_names = a_names, .nfuncs_total = 8,
};

/* Module "b": imports a function (i32)->i32 and a memory, calls the former,
 * stores into the latter, and re-exports the import. */
static const twasm_import_abi b_imports[] = {
    IMPORT_FUNC("f", T_I_I),
    {.module = "env", .name = "mem", .module_len = 3, .name_len = 3, .kind = TWASM_EXTERN_MEMORY, .min = 1},
};
static const twasm_func_def_abi b_funcs[] = {{(void *)w_call_import, T_I_I, 0}, {(void *)w_store, T_II_I, 0}};
static const twasm_export_abi b_exports[] = {EXPORT("call", 0, 1), EXPORT("store", 0, 2), EXPORT("f", 0, 0)};
static const twasm_module_abi mod_b = {
    MODULE_BASE, .name = "b", .nimports = 2, .imports = b_imports, .nfuncs = 2, .funcs = b_funcs,
    .nexports = 3, .exports = b_exports, .nfuncs_total = 3,
};

/* Module "c": a table of 4 with an active and a passive segment. */
static const twasm_func_def_abi c_funcs[] = {{(void *)w_call_indirect, T_II_I, 0}, {(void *)w_double, T_I_I, 0},
                                             {(void *)w_nop, T_V, 0}};
static const twasm_table_def_abi c_table = {.elem_type = TWASM_FUNCREF, .has_max = 1, .min = 4, .max = 6};
static const twasm_constexpr_abi c_items[] = {CE_FUNC(1), CE_FUNC(2)};
static const twasm_elem_abi c_elems[] = {
    {.mode = TWASM_SEG_ACTIVE, .offset = CE_I32(1), .elem_type = TWASM_FUNCREF, .count = 2, .items = c_items},
    {.mode = TWASM_SEG_PASSIVE, .elem_type = TWASM_FUNCREF, .count = 2, .items = c_items},
};
static const twasm_export_abi c_exports[] = {EXPORT("ci", 0, 0), EXPORT("tab", TWASM_EXTERN_TABLE, 0)};
static const twasm_module_abi mod_c = {
    MODULE_BASE, .name = "c", .nfuncs = 3, .funcs = c_funcs, .ntables = 1, .tables = &c_table,
    .nelems = 2, .elems = c_elems, .nexports = 2, .exports = c_exports, .nfuncs_total = 3,
};

/* ---- helpers ------------------------------------------------------------- */

static twasm_val i32v(int32_t v) { return (twasm_val){.kind = TWASM_I32, .of.i32 = v}; }

static twasm_func *export_func(twasm_instance *inst, const char *name) {
  twasm_extern ex;
  ck_assert_msg(twasm_instance_export(inst, name, (uint32_t)strlen(name), &ex), "no export %s", name);
  ck_assert_int_eq(ex.kind, TWASM_EXTERN_FUNC);
  return ex.of.func;
}

static twasm_instance *new_a(void) {
  twasm_trap err;
  twasm_instance *inst = twasm_instance_new(&mod_a, NULL, 0, &err);
  ck_assert_msg(inst != NULL, "instantiation failed: %s", err.message);
  return inst;
}

static uint32_t call1(twasm_func *f, int32_t arg, int32_t *result, twasm_trap *trap) {
  twasm_val a = i32v(arg), r;
  uint32_t code = twasm_call(f, &a, 1, &r, 1, trap);
  if (code == 0) *result = r.of.i32;
  return code;
}

/* ---- tests --------------------------------------------------------------- */

START_TEST(trap_messages_use_spec_wording) {
  static const struct { uint32_t code; const char *text; } cases[] = {
      {TWASM_TRAP_UNREACHABLE, "unreachable"},
      {TWASM_TRAP_INT_DIV_ZERO, "integer divide by zero"},
      {TWASM_TRAP_INT_OVERFLOW, "integer overflow"},
      {TWASM_TRAP_INVALID_CONVERSION, "invalid conversion to integer"},
      {TWASM_TRAP_MEMORY_OOB, "out of bounds memory access"},
      {TWASM_TRAP_TABLE_OOB, "out of bounds table access"},
      {TWASM_TRAP_UNDEFINED_ELEMENT, "undefined element"},
      {TWASM_TRAP_UNINITIALIZED_ELEMENT, "uninitialized element"},
      {TWASM_TRAP_INDIRECT_TYPE_MISMATCH, "indirect call type mismatch"},
      {TWASM_TRAP_STACK_EXHAUSTED, "call stack exhausted"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    ck_assert_str_eq(twasm_trap_message(cases[i].code), cases[i].text);
}
END_TEST

START_TEST(call_export_returns_result) {
  twasm_instance *inst = new_a();
  twasm_val args[2] = {i32v(2), i32v(3)}, r;
  twasm_trap trap;
  ck_assert_uint_eq(twasm_call(export_func(inst, "add"), args, 2, &r, 1, &trap), 0);
  ck_assert_int_eq(r.kind, TWASM_I32);
  ck_assert_int_eq(r.of.i32, 5);
  twasm_instance_delete(inst);
}
END_TEST

START_TEST(call_with_wrong_arg_kinds_fails) {
  twasm_instance *inst = new_a();
  twasm_val args[2] = {i32v(2), {.kind = TWASM_I64}}, r;
  ck_assert_uint_ne(twasm_call(export_func(inst, "add"), args, 2, &r, 1, NULL), 0);
  twasm_instance_delete(inst);
}
END_TEST

START_TEST(export_names_compare_with_length) {
  twasm_instance *inst = new_a();
  twasm_extern ex;
  ck_assert(twasm_instance_export(inst, "nul\0name", 8, &ex));
  ck_assert(!twasm_instance_export(inst, "nul", 3, &ex));
  ck_assert(!twasm_instance_export(inst, "ad", 2, &ex));
  ck_assert_uint_eq(twasm_module_export_count(&mod_a), 10);
  twasm_instance_delete(inst);
}
END_TEST

START_TEST(trap_unwinds_with_location) {
  twasm_instance *inst = new_a();
  twasm_trap trap;
  ck_assert_uint_eq(twasm_call(export_func(inst, "div"), NULL, 0, NULL, 0, &trap), TWASM_TRAP_INT_DIV_ZERO);
  ck_assert_str_eq(trap.message, "integer divide by zero");
  ck_assert_str_eq(trap.func_name, "div");
  ck_assert_uint_eq(trap.offset, 0x42);
  /* The thread is usable again after unwinding. */
  int32_t r;
  ck_assert_uint_eq(call1(export_func(inst, "grow"), 0, &r, &trap), 0);
  twasm_instance_delete(inst);
}
END_TEST

START_TEST(memory_data_segment_applied) {
  twasm_instance *inst = new_a();
  int32_t r;
  ck_assert_uint_eq(call1(export_func(inst, "load"), 16, &r, NULL), 0);
  ck_assert_int_eq(r, 0x04030201);
  ck_assert_uint_eq(twasm_memory_size(twasm_instance_memory(inst, 0)), 65536);
  twasm_instance_delete(inst);
}
END_TEST

START_TEST(memory_grow_respects_max) {
  twasm_instance *inst = new_a();
  twasm_func *grow = export_func(inst, "grow");
  int32_t r;
  ck_assert_uint_eq(call1(grow, 1, &r, NULL), 0);
  ck_assert_int_eq(r, 1);
  ck_assert_uint_eq(call1(grow, 1, &r, NULL), 0);
  ck_assert_int_eq(r, -1);
  ck_assert_uint_eq(call1(grow, 0, &r, NULL), 0);
  ck_assert_int_eq(r, 2);
  /* The grown page is usable at once. */
  ck_assert_uint_eq(call1(export_func(inst, "load"), 65536 + 100, &r, NULL), 0);
  twasm_instance_delete(inst);
}
END_TEST

START_TEST(memory_access_past_size_traps) {
  twasm_instance *inst = new_a();
  twasm_trap trap;
  int32_t r;
  ck_assert_uint_eq(call1(export_func(inst, "load"), 65536, &r, &trap), TWASM_TRAP_MEMORY_OOB);
  ck_assert_str_eq(trap.message, "out of bounds memory access");
  ck_assert_str_eq(trap.func_name, "load");
  ck_assert_uint_eq(twasm_call(export_func(inst, "load_far"), NULL, 0, NULL, 0, &trap), TWASM_TRAP_MEMORY_OOB);
  ck_assert_str_eq(trap.message, "out of bounds memory access");
  twasm_instance_delete(inst);
}
END_TEST

START_TEST(stack_limit_traps_deep_recursion) {
  twasm_instance *inst = new_a();
  twasm_trap trap;
  int32_t r;
  ck_assert_uint_eq(call1(export_func(inst, "recurse"), 100, &r, &trap), 0);
  ck_assert_int_eq(r, 100);
  ck_assert_uint_eq(call1(export_func(inst, "recurse"), 1 << 30, &r, &trap), TWASM_TRAP_STACK_EXHAUSTED);
  ck_assert_str_eq(trap.message, "call stack exhausted");
  ck_assert_uint_eq(twasm_rt_stack_limit, 0);
  twasm_instance_delete(inst);
}
END_TEST

START_TEST(stack_overflow_fault_traps) {
  twasm_instance *inst = new_a();
  twasm_trap trap;
  int32_t r;
  ck_assert_uint_eq(call1(export_func(inst, "unchecked"), 0, &r, &trap), TWASM_TRAP_STACK_EXHAUSTED);
  ck_assert_uint_eq(call1(export_func(inst, "recurse"), 10, &r, &trap), 0);
  twasm_instance_delete(inst);
}
END_TEST

START_TEST(fault_outside_wasm_is_not_caught) {
  new_a(); /* installs the handler */
  int *volatile wild = (int *)(uintptr_t)16;
  *wild = 1;
}
END_TEST

/* Host functions. */
static int host_triple(void *env, twasm_instance *caller, const twasm_val *args, twasm_val *results,
                       twasm_trap *trap) {
  (void)trap;
  *(twasm_instance **)env = caller;
  results[0].of.i32 = 3 * args[0].of.i32;
  return 0;
}

static int host_fail(void *env, twasm_instance *caller, const twasm_val *args, twasm_val *results,
                     twasm_trap *trap) {
  (void)env, (void)caller, (void)results;
  if (args[0].of.i32 == 7) {
    trap->code = TWASM_TRAP_EXIT;
    trap->exit_status = 3;
    return 1;
  }
  strcpy(trap->message, "boom");
  return 1;
}

static const twasm_valkind k_i32[] = {TWASM_I32};
static const twasm_functype ft_i_i = {1, 1, k_i32, k_i32};

static twasm_instance *new_b(twasm_func *f, twasm_memory *mem, twasm_trap *err) {
  twasm_extern imports[2] = {{.kind = TWASM_EXTERN_FUNC, .of.func = f},
                             {.kind = TWASM_EXTERN_MEMORY, .of.memory = mem}};
  return twasm_instance_new(&mod_b, imports, 2, err);
}

START_TEST(host_function_called_from_wasm_sees_caller) {
  twasm_instance *seen = NULL;
  twasm_func *host = twasm_func_new_host(&ft_i_i, host_triple, &seen);
  twasm_memory *mem = twasm_memory_new(1, 0, false);
  twasm_trap err;
  twasm_instance *b = new_b(host, mem, &err);
  ck_assert_msg(b != NULL, "%s", err.message);
  int32_t r;
  ck_assert_uint_eq(call1(export_func(b, "call"), 5, &r, &err), 0);
  ck_assert_int_eq(r, 15);
  ck_assert_ptr_eq(seen, b);
  /* Directly from the host there is no caller. */
  ck_assert_uint_eq(call1(host, 2, &r, &err), 0);
  ck_assert_int_eq(r, 6);
  ck_assert_ptr_null(seen);
  twasm_instance_delete(b);
  twasm_memory_delete(mem);
  twasm_func_delete(host);
}
END_TEST

START_TEST(host_trap_unwinds_wasm) {
  twasm_func *host = twasm_func_new_host(&ft_i_i, host_fail, NULL);
  twasm_memory *mem = twasm_memory_new(1, 0, false);
  twasm_instance *b = new_b(host, mem, NULL);
  ck_assert_ptr_nonnull(b);
  twasm_trap trap;
  int32_t r;
  ck_assert_uint_eq(call1(export_func(b, "call"), 1, &r, &trap), TWASM_TRAP_HOST);
  ck_assert_str_eq(trap.message, "boom");
  ck_assert_uint_eq(call1(export_func(b, "call"), 7, &r, &trap), TWASM_TRAP_EXIT);
  ck_assert_int_eq(trap.exit_status, 3);
  twasm_instance_delete(b);
  twasm_memory_delete(mem);
  twasm_func_delete(host);
}
END_TEST

START_TEST(instances_link_function_and_memory) {
  twasm_instance *a = new_a();
  twasm_extern mem;
  ck_assert(twasm_instance_export(a, "mem", 3, &mem));
  twasm_trap err;
  twasm_instance *b = new_b(export_func(a, "grow"), mem.of.memory, &err);
  ck_assert_msg(b != NULL, "%s", err.message);
  twasm_val args[2] = {i32v(32), i32v(77)}, r;
  ck_assert_uint_eq(twasm_call(export_func(b, "store"), args, 2, &r, 1, &err), 0);
  int32_t v;
  ck_assert_uint_eq(call1(export_func(a, "load"), 32, &v, &err), 0);
  ck_assert_int_eq(v, 77);
  /* b calls a's memory.grow through the import; a sees the new size. */
  ck_assert_uint_eq(call1(export_func(b, "call"), 1, &v, &err), 0);
  ck_assert_int_eq(v, 1);
  ck_assert_uint_eq(twasm_memory_size(twasm_instance_memory(a, 0)), 2 * 65536);
  /* A re-exported import is the exporter's own record. */
  ck_assert_ptr_eq(export_func(b, "f"), export_func(a, "grow"));
  /* b keeps a's memory alive after a is deleted. */
  twasm_instance_delete(a);
  args[1] = i32v(78);
  ck_assert_uint_eq(twasm_call(export_func(b, "store"), args, 2, &r, 1, &err), 0);
  twasm_instance_delete(b);
}
END_TEST

START_TEST(import_checks_reject_mismatches) {
  twasm_instance *a = new_a();
  twasm_memory *mem = twasm_memory_new(1, 0, false);
  twasm_memory *small = twasm_memory_new(0, 0, false);
  twasm_trap err;
  ck_assert_ptr_null(new_b(export_func(a, "add"), mem, &err));
  ck_assert_str_eq(err.message, "incompatible import type");
  ck_assert_ptr_null(new_b(export_func(a, "grow"), small, &err));
  ck_assert_str_eq(err.message, "incompatible import type");
  ck_assert_ptr_null(new_b(NULL, mem, &err));
  ck_assert_str_eq(err.message, "unknown import");
  twasm_extern wrong_kind[2] = {{.kind = TWASM_EXTERN_MEMORY, .of.memory = mem},
                                {.kind = TWASM_EXTERN_MEMORY, .of.memory = mem}};
  ck_assert_ptr_null(twasm_instance_new(&mod_b, wrong_kind, 2, &err));
  ck_assert_str_eq(err.message, "incompatible import type");
  ck_assert_ptr_null(twasm_instance_new(&mod_b, wrong_kind, 1, &err));
  twasm_memory_delete(small);
  twasm_memory_delete(mem);
  twasm_instance_delete(a);
}
END_TEST

START_TEST(equal_types_share_signature_ids) {
  twasm_instance *a = new_a();
  twasm_func *host = twasm_func_new_host(&ft_i_i, host_triple, NULL);
  ck_assert_uint_eq(((twasm_func_abi *)export_func(a, "grow"))->sig_id, ((twasm_func_abi *)host)->sig_id);
  ck_assert_uint_ne(((twasm_func_abi *)export_func(a, "add"))->sig_id, ((twasm_func_abi *)host)->sig_id);
  twasm_functype ft;
  twasm_func_type(export_func(a, "add"), &ft);
  ck_assert_uint_eq(ft.nparams, 2);
  ck_assert_uint_eq(ft.nresults, 1);
  twasm_func_delete(host);
  twasm_instance_delete(a);
}
END_TEST

START_TEST(call_indirect_through_element_segment) {
  twasm_instance *c = twasm_instance_new(&mod_c, NULL, 0, NULL);
  ck_assert_ptr_nonnull(c);
  twasm_func *ci = export_func(c, "ci");
  twasm_val args[2] = {i32v(1), i32v(21)}, r;
  twasm_trap trap;
  ck_assert_uint_eq(twasm_call(ci, args, 2, &r, 1, &trap), 0);
  ck_assert_int_eq(r.of.i32, 42);
  static const struct { int32_t index; uint32_t code; } cases[] = {
      {0, TWASM_TRAP_UNINITIALIZED_ELEMENT}, {2, TWASM_TRAP_INDIRECT_TYPE_MISMATCH}, {4, TWASM_TRAP_UNDEFINED_ELEMENT}};
  for (size_t i = 0; i < 3; i++) {
    args[0] = i32v(cases[i].index);
    ck_assert_uint_eq(twasm_call(ci, args, 2, &r, 1, &trap), cases[i].code);
  }
  twasm_instance_delete(c);
}
END_TEST

START_TEST(table_bulk_ops_check_bounds) {
  twasm_instance *c = twasm_instance_new(&mod_c, NULL, 0, NULL);
  ck_assert_ptr_nonnull(c);
  /* The active segment was dropped; the passive one is still whole. */
  ck_assert_uint_eq(twasm_rt_table_init(c, 0, 0, 0, 0, 1), TWASM_TRAP_TABLE_OOB);
  ck_assert_uint_eq(twasm_rt_table_init(c, 0, 0, 0, 0, 0), 0);
  ck_assert_uint_eq(twasm_rt_table_init(c, 0, 1, 3, 0, 2), TWASM_TRAP_TABLE_OOB);
  ck_assert_uint_eq(twasm_rt_table_init(c, 0, 1, 2, 0, 2), 0);
  ck_assert_uint_eq(twasm_rt_table_init(c, 0, 1, 4, 2, 0), 0);
  ck_assert_uint_eq(twasm_rt_table_init(c, 0, 1, 5, 0, 0), TWASM_TRAP_TABLE_OOB);
  twasm_rt_elem_drop(c, 1);
  ck_assert_uint_eq(twasm_rt_table_init(c, 0, 1, 0, 0, 1), TWASM_TRAP_TABLE_OOB);
  ck_assert_uint_eq(twasm_rt_table_copy(c, 0, 0, 0, 1, 3), 0);
  ck_assert_uint_eq(twasm_rt_table_copy(c, 0, 0, 0, 2, 3), TWASM_TRAP_TABLE_OOB);
  ck_assert_uint_eq(twasm_rt_table_fill(c, 0, 3, NULL, 2), TWASM_TRAP_TABLE_OOB);
  ck_assert_uint_eq(twasm_rt_table_fill(c, 0, 3, NULL, 1), 0);
  ck_assert_int_eq(twasm_rt_table_grow(c, 0, NULL, 2), 4);
  ck_assert_int_eq(twasm_rt_table_grow(c, 0, NULL, 1), -1);
  twasm_extern tab;
  ck_assert(twasm_instance_export(c, "tab", 3, &tab));
  ck_assert_uint_eq(twasm_table_size(tab.of.table), 6);
  twasm_instance_delete(c);
}
END_TEST

START_TEST(memory_bulk_ops_check_bounds) {
  twasm_instance *a = new_a();
  ck_assert_uint_eq(twasm_rt_memory_fill(a, 65535, 0xab, 1), 0);
  ck_assert_uint_eq(twasm_rt_memory_fill(a, 65535, 0xab, 2), TWASM_TRAP_MEMORY_OOB);
  ck_assert_uint_eq(twasm_rt_memory_fill(a, 65536, 0, 0), 0);
  ck_assert_uint_eq(twasm_rt_memory_fill(a, 65537, 0, 0), TWASM_TRAP_MEMORY_OOB);
  ck_assert_uint_eq(twasm_rt_memory_copy(a, 0, 16, 4), 0);
  ck_assert_uint_eq(twasm_rt_memory_copy(a, 65534, 0, 4), TWASM_TRAP_MEMORY_OOB);
  ck_assert_uint_eq(twasm_rt_memory_copy(a, 0, 0xffffffffu, 2), TWASM_TRAP_MEMORY_OOB);
  uint8_t *base = twasm_memory_data(twasm_instance_memory(a, 0));
  ck_assert_uint_eq(base[0], 1);
  ck_assert_uint_eq(base[65535], 0xab);
  /* Active data segments are dropped after instantiation. */
  ck_assert_uint_eq(twasm_rt_memory_init(a, 0, 0, 0, 1), TWASM_TRAP_MEMORY_OOB);
  ck_assert_uint_eq(twasm_rt_memory_init(a, 0, 0, 0, 0), 0);
  twasm_instance_delete(a);
}
END_TEST

/* Module "d": imports a memory and has two data segments, the second out
 * of bounds: instantiation fails, the first segment's bytes stay. */
static const uint8_t d_bytes[] = {9, 9};
static const twasm_import_abi d_imports[] = {
    {.module = "env", .name = "mem", .module_len = 3, .name_len = 3, .kind = TWASM_EXTERN_MEMORY, .min = 1}};
static const twasm_data_abi d_data[] = {{.mode = TWASM_SEG_ACTIVE, .offset = CE_I32(0), .bytes = d_bytes, .size = 2},
                                        {.mode = TWASM_SEG_ACTIVE, .offset = CE_I32(65535), .bytes = d_bytes, .size = 2}};
static const twasm_module_abi mod_d = {
    MODULE_BASE, .name = "d", .nimports = 1, .imports = d_imports, .ndatas = 2, .datas = d_data,
};

START_TEST(failed_data_segment_keeps_earlier_writes) {
  twasm_memory *mem = twasm_memory_new(1, 0, false);
  twasm_extern im = {.kind = TWASM_EXTERN_MEMORY, .of.memory = mem};
  twasm_trap err;
  ck_assert_ptr_null(twasm_instance_new(&mod_d, &im, 1, &err));
  ck_assert_uint_eq(err.code, TWASM_TRAP_MEMORY_OOB);
  ck_assert_str_eq(err.message, "out of bounds memory access");
  ck_assert_uint_eq(twasm_memory_data(mem)[1], 9);
  twasm_memory_delete(mem);
}
END_TEST

/* Module "e": a start function that traps. */
static const twasm_func_def_abi e_funcs[] = {{(void *)w_div_trap, T_V, 0}};
static const twasm_module_abi mod_e = {MODULE_TYPES, .name = "e", .nfuncs = 1, .funcs = e_funcs, .start_func = 0};

START_TEST(start_function_trap_fails_instantiation) {
  twasm_trap err;
  ck_assert_ptr_null(twasm_instance_new(&mod_e, NULL, 0, &err));
  ck_assert_uint_eq(err.code, TWASM_TRAP_INT_DIV_ZERO);
  ck_assert_str_eq(err.message, "integer divide by zero");
}
END_TEST

/* Module "g": globals initialised from an import and from ref.func. */
static const twasm_import_abi g_imports[] = {{.module = "env", .name = "g", .module_len = 3, .name_len = 1,
                                              .kind = TWASM_EXTERN_GLOBAL, .valtype = TWASM_I64}};
static const twasm_func_def_abi g_funcs[] = {{(void *)w_nop, T_V, 0}};
static const twasm_global_def_abi g_globals[] = {
    {.valtype = TWASM_I64, .mutable_ = 1, .init = {.op = TWASM_CE_GLOBAL_GET, .value = 0}},
    {.valtype = TWASM_FUNCREF, .init = CE_FUNC(0)},
};
static const twasm_export_abi g_exports[] = {EXPORT("copy", TWASM_EXTERN_GLOBAL, 1), EXPORT("fref", TWASM_EXTERN_GLOBAL, 2),
                                             EXPORT("nop", 0, 0)};
static const twasm_module_abi mod_g = {
    MODULE_BASE, .name = "g", .nimports = 1, .imports = g_imports, .nfuncs = 1, .funcs = g_funcs,
    .nglobals = 2, .globals = g_globals, .nexports = 3, .exports = g_exports,
};

START_TEST(globals_initialised_and_checked) {
  twasm_global *g = twasm_global_new(TWASM_I64, false, (twasm_val){.kind = TWASM_I64, .of.i64 = -5});
  twasm_global *gm = twasm_global_new(TWASM_I64, true, (twasm_val){.kind = TWASM_I64, .of.i64 = 0});
  twasm_extern im = {.kind = TWASM_EXTERN_GLOBAL, .of.global = gm};
  twasm_trap err;
  ck_assert_ptr_null(twasm_instance_new(&mod_g, &im, 1, &err));
  ck_assert_str_eq(err.message, "incompatible import type");
  im.of.global = g;
  twasm_instance *inst = twasm_instance_new(&mod_g, &im, 1, &err);
  ck_assert_ptr_nonnull(inst);
  twasm_extern ex;
  ck_assert(twasm_instance_export(inst, "copy", 4, &ex));
  ck_assert_int_eq(twasm_global_get(ex.of.global).of.i64, -5);
  ck_assert(twasm_instance_export(inst, "fref", 4, &ex));
  ck_assert_ptr_eq(twasm_global_get(ex.of.global).of.ref, export_func(inst, "nop"));
  twasm_instance_delete(inst);
  twasm_global_delete(gm);
  twasm_global_delete(g);
}
END_TEST

/* Module "f": imports a table; its second element segment is out of
 * bounds, after the first placed a function of f in the table. */
static const twasm_import_abi f_imports[] = {{.module = "env", .name = "tab", .module_len = 3, .name_len = 3,
                                              .kind = TWASM_EXTERN_TABLE, .valtype = TWASM_FUNCREF, .min = 2}};
static const twasm_func_def_abi f_funcs[] = {{(void *)w_double, T_I_I, 0}};
static const twasm_constexpr_abi f_items[] = {CE_FUNC(0)};
static const twasm_elem_abi f_elems[] = {
    {.mode = TWASM_SEG_ACTIVE, .offset = CE_I32(0), .elem_type = TWASM_FUNCREF, .count = 1, .items = f_items},
    {.mode = TWASM_SEG_ACTIVE, .offset = CE_I32(2), .elem_type = TWASM_FUNCREF, .count = 1, .items = f_items},
};
static const twasm_module_abi mod_f = {
    MODULE_BASE, .name = "f", .nimports = 1, .imports = f_imports, .nfuncs = 1, .funcs = f_funcs,
    .nelems = 2, .elems = f_elems,
};

START_TEST(failed_elem_segment_keeps_functions_callable) {
  twasm_table *tab = twasm_table_new(TWASM_FUNCREF, 2, 0, false, NULL);
  twasm_extern im = {.kind = TWASM_EXTERN_TABLE, .of.table = tab};
  twasm_trap err;
  ck_assert_ptr_null(twasm_instance_new(&mod_f, &im, 1, &err));
  ck_assert_str_eq(err.message, "out of bounds table access");
  void *ref;
  ck_assert(twasm_table_get(tab, 0, &ref));
  ck_assert_ptr_nonnull(ref);
  int32_t r;
  ck_assert_uint_eq(call1(ref, 4, &r, &err), 0);
  ck_assert_int_eq(r, 8);
  twasm_table_delete(tab);
}
END_TEST

static void *thread_load_far(void *inst) {
  twasm_trap trap;
  uintptr_t code = twasm_call(export_func(inst, "load_far"), NULL, 0, NULL, 0, &trap);
  return (void *)code;
}

START_TEST(guard_fault_traps_on_other_thread) {
  twasm_instance *a = new_a();
  pthread_t t;
  void *code;
  ck_assert_int_eq(pthread_create(&t, NULL, thread_load_far, a), 0);
  ck_assert_int_eq(pthread_join(t, &code), 0);
  ck_assert_uint_eq((uintptr_t)code, TWASM_TRAP_MEMORY_OOB);
  twasm_instance_delete(a);
}
END_TEST

/* Huge pages of a memory grown a page at a time (rt_huge.c): NULL when the
 * kernel can collapse none, else why not in *why. */
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
static bool huge_pages_usable(const char **why) {
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  char line[128] = "";
  if (f) {
    if (!fgets(line, sizeof line, f)) line[0] = 0;
    fclose(f);
  }
  if (!f || strstr(line, "[never]")) {
    *why = "transparent huge pages are off on this host";
    return false;
  }
  size_t huge = 2u << 20;
  uint8_t *raw = mmap(NULL, 2 * huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  uint8_t *p = (uint8_t *)(((uintptr_t)raw + huge - 1) & ~(uintptr_t)(huge - 1));
  p[0] = 1;
  int r = madvise(p, huge, MADV_COLLAPSE);
  munmap(raw, 2 * huge);
  if (r != 0) *why = "MADV_COLLAPSE fails here (Linux before 6.1, or no free huge page)";
  return r == 0;
}

/* AnonHugePages (KiB) of the mappings inside [lo, hi). */
static unsigned long huge_kib_in(uintptr_t lo, uintptr_t hi) {
  FILE *f = fopen("/proc/self/smaps", "r");
  ck_assert_ptr_nonnull(f);
  char line[256];
  unsigned long start = 0, end = 0, s, e, kib, total = 0;
  while (fgets(line, sizeof line, f)) {
    /* Into s and e first: "AnonHugePages" begins with a hex digit. */
    if (sscanf(line, "%lx-%lx ", &s, &e) == 2) {
      start = s, end = e;
      continue;
    }
    if (sscanf(line, "AnonHugePages: %lu kB", &kib) == 1 && start >= lo && end <= hi) total += kib;
  }
  fclose(f);
  return total;
}

START_TEST(memory_grown_by_pages_gets_huge_pages) {
  const char *why = NULL;
  if (!huge_pages_usable(&why)) {
    printf("memory_grown_by_pages_gets_huge_pages: skipped: %s\n", why);
    return;
  }
  /* The collapse is asked for (off by default: it runs on the program's
   * thread).  As wasi-libc's allocator does: a page more, written at once. */
  setenv("TWASM_HUGE_COLLAPSE", "1", 1);
  twasm_memory *mem = twasm_memory_new(1, 0, false);
  uint8_t *base = twasm_memory_data(mem);
  base[0] = 1;
  for (int i = 1; i <= 128; i++) {
    ck_assert_int_eq(twasm_memory_grow(mem, 1), i);
    base[(size_t)i * 65536] = 1;
  }
  ck_assert_uint_eq((uintptr_t)base % (2u << 20), 0);
  /* [0, 8 MiB) is whole: the four 2 MiB ranges each cut by the growing
   * end were collapsed when the end passed them (8192 KiB here; at least
   * one asked, since a collapse may fail when no huge page is free). */
  ck_assert_uint_ge(huge_kib_in((uintptr_t)base, (uintptr_t)base + twasm_memory_size(mem)), 2048);
  twasm_memory_delete(mem);
}
END_TEST

static Suite *runtime_suite(void) {
  Suite *s = suite_create("runtime");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, trap_messages_use_spec_wording);
  tcase_add_test(tc, call_export_returns_result);
  tcase_add_test(tc, call_with_wrong_arg_kinds_fails);
  tcase_add_test(tc, export_names_compare_with_length);
  tcase_add_test(tc, trap_unwinds_with_location);
  tcase_add_test(tc, memory_data_segment_applied);
  tcase_add_test(tc, memory_grow_respects_max);
  tcase_add_test(tc, memory_access_past_size_traps);
  tcase_add_test(tc, stack_limit_traps_deep_recursion);
  tcase_add_test(tc, stack_overflow_fault_traps);
  tcase_add_test(tc, host_function_called_from_wasm_sees_caller);
  tcase_add_test(tc, host_trap_unwinds_wasm);
  tcase_add_test(tc, instances_link_function_and_memory);
  tcase_add_test(tc, import_checks_reject_mismatches);
  tcase_add_test(tc, equal_types_share_signature_ids);
  tcase_add_test(tc, call_indirect_through_element_segment);
  tcase_add_test(tc, table_bulk_ops_check_bounds);
  tcase_add_test(tc, memory_bulk_ops_check_bounds);
  tcase_add_test(tc, failed_data_segment_keeps_earlier_writes);
  tcase_add_test(tc, start_function_trap_fails_instantiation);
  tcase_add_test(tc, globals_initialised_and_checked);
  tcase_add_test(tc, failed_elem_segment_keeps_functions_callable);
  tcase_add_test(tc, guard_fault_traps_on_other_thread);
  tcase_add_test(tc, memory_grown_by_pages_gets_huge_pages);
  suite_add_tcase(s, tc);
  /* Apart, so that CK_FORK=no CK_RUN_CASE=core runs the rest in-process. */
  TCase *faults = tcase_create("faults");
  tcase_add_test_raise_signal(faults, fault_outside_wasm_is_not_caught, SIGSEGV);
  suite_add_tcase(s, faults);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(runtime_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
