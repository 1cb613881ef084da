/* test_abi.c: Check suite "abi": every struct constant the compiler emits
 * for the runtime (the module descriptor and what it points to, the kernel
 * table) has, as the host target lays it out (LLVMOffsetOfElement,
 * LLVMStoreSizeOfType), exactly the fields of its C struct in
 * include/twasm_abi.h at their offsetof and sizeof, nested structs
 * included. */
#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/IRReader.h>
#include <llvm-c/Target.h>

#include "driver.h"
#include "twasm_abi.h"

typedef struct layout layout;
typedef struct {
  const char *name;
  size_t offset, size;
  const layout *nested;    /* a struct field (or an array of structs) */
} field;
struct layout {
  const char *name;
  size_t size;
  unsigned nfields;
  field fields[40];
};

#define FIELD(T, f, nested) {#f, offsetof(T, f), sizeof(((T *)0)->f), nested}
#define LAYOUT(T, ...) {#T, sizeof(T), sizeof((field[]){__VA_ARGS__}) / sizeof(field), {__VA_ARGS__}}

#define C(f) FIELD(twasm_constexpr_abi, f, NULL)
static const layout constexpr_l = LAYOUT(twasm_constexpr_abi, C(op), C(pad), C(value));
#undef C
#define F(f) FIELD(twasm_functype_abi, f, NULL)
static const layout functype_l = LAYOUT(twasm_functype_abi, F(nparams), F(nresults), F(types));
#undef F
#define F(f) FIELD(twasm_import_abi, f, NULL)
static const layout import_l = LAYOUT(twasm_import_abi, F(module), F(name), F(module_len), F(name_len), F(kind),
                                      F(type_index), F(valtype), F(mutable_), F(has_max), F(pad), F(pad2),
                                      F(min), F(max));
#undef F
#define F(f) FIELD(twasm_export_abi, f, NULL)
static const layout export_l = LAYOUT(twasm_export_abi, F(name), F(name_len), F(kind), F(index), F(pad));
#undef F
#define F(f) FIELD(twasm_func_def_abi, f, NULL)
static const layout func_def_l = LAYOUT(twasm_func_def_abi, F(code), F(type_index), F(pad));
#undef F
#define F(f) FIELD(twasm_table_def_abi, f, NULL)
static const layout table_def_l = LAYOUT(twasm_table_def_abi, F(elem_type), F(has_max), F(pad), F(min), F(max));
#undef F
#define F(f) FIELD(twasm_memory_def_abi, f, NULL)
static const layout memory_def_l = LAYOUT(twasm_memory_def_abi, F(has_max), F(pad), F(min), F(max));
#undef F
#define F(f, n) FIELD(twasm_global_def_abi, f, n)
static const layout global_def_l = LAYOUT(twasm_global_def_abi, F(valtype, NULL), F(mutable_, NULL),
                                          F(pad, NULL), F(init, &constexpr_l));
#undef F
#define F(f, n) FIELD(twasm_elem_abi, f, n)
static const layout elem_l = LAYOUT(twasm_elem_abi, F(mode, NULL), F(table_index, NULL), F(offset, &constexpr_l),
                                    F(elem_type, NULL), F(count, NULL), F(items, NULL));
#undef F
#define F(f, n) FIELD(twasm_data_abi, f, n)
static const layout data_l = LAYOUT(twasm_data_abi, F(mode, NULL), F(mem_index, NULL), F(offset, &constexpr_l),
                                    F(bytes, NULL), F(size, NULL));
#undef F
#define F(f) FIELD(twasm_module_abi, f, NULL)
static const layout module_l = LAYOUT(twasm_module_abi, F(abi_version), F(bounds_mode), F(name), F(ntypes),
                                      F(nimports), F(types), F(imports), F(nfuncs), F(ntables), F(funcs),
                                      F(tables), F(nmemories), F(nglobals), F(memories), F(globals),
                                      F(nexports), F(nelems), F(exports), F(elems), F(ndatas), F(start_func),
                                      F(datas), F(invokers), F(host_trampolines), F(func_names),
                                      F(nfuncs_total), F(pad), F(filename), F(func_offsets), F(nkernels),
                                      F(pad2), F(kernels), F(pcmap), F(pcmap_end));
#undef F
#define F(f) FIELD(twasm_kernel_size_abi, f, NULL)
static const layout size_l = LAYOUT(twasm_kernel_size_abi, F(value), F(is_param), F(pad));
#undef F
#define F(f, n) FIELD(twasm_kernel_range_abi, f, n)
static const layout range_l = LAYOUT(twasm_kernel_range_abi, F(c0, NULL), F(param_index, NULL),
                                     F(param_coeff, NULL), F(nparam_terms, NULL), F(ndims, NULL),
                                     F(coeff, NULL), F(extent, &size_l), F(size, NULL), F(is_write, NULL),
                                     F(pcoeff, NULL), F(pindex, NULL), F(forwarded, NULL), F(table_dim, NULL),
                                     F(table, &size_l));
#undef F
#define F(f, n) FIELD(twasm_kernel_launch_abi, f, n)
static const layout launch_l = LAYOUT(twasm_kernel_launch_abi, F(block, NULL), F(per_block, NULL),
                                      F(max_grid, NULL), F(result_bytes, NULL), F(count, &size_l));
#undef F
#define F(f) FIELD(twasm_kernel_ptx_abi, f, NULL)
static const layout ptx_l = LAYOUT(twasm_kernel_ptx_abi, F(sm), F(ptx_isa), F(text), F(path), F(entries));
#undef F
#define F(f) FIELD(twasm_ptx_store_abi, f, NULL)
static const layout store_l = LAYOUT(twasm_ptx_store_abi, F(zstd), F(zstd_size), F(text), F(size), F(state), F(pad));
#undef F
#define F(f, n) FIELD(twasm_kernel_abi, f, n)
static const layout kernel_l = LAYOUT(twasm_kernel_abi, F(name, NULL), F(kind, NULL), F(nparams, NULL),
                                      F(bind_kinds, NULL), F(init_param, NULL), F(check_overlap, NULL),
                                      F(nranges, NULL), F(nptx, NULL), F(ranges, NULL), F(ptx, NULL),
                                      F(launch, &launch_l), F(work, &size_l), F(nwork, NULL),
                                      F(ops_per_iter, NULL), F(batch, &size_l), F(tc_elem_bytes, NULL),
                                      F(pad, NULL), F(ptx_store, NULL));
#undef F

/* Each private global the compiler emits, by name, and its C struct. */
static const struct {
  const char *global;
  const layout *l;
} globals[] = {
  {"twasm_module", &module_l},     {"twasm_types", &functype_l},       {"twasm_imports", &import_l},
  {"twasm_funcs", &func_def_l},    {"twasm_tables", &table_def_l},     {"twasm_memories", &memory_def_l},
  {"twasm_globals", &global_def_l}, {"twasm_exports", &export_l},      {"twasm_elems", &elem_l},
  {"twasm_datas", &data_l},        {"twasm_elem_items", &constexpr_l}, {"twasm_kernels", &kernel_l},
  {"twasm_kernel_ranges", &range_l}, {"twasm_kernel_ptx", &ptx_l},   {"twasm_ptx_store", &store_l},
};

/* Every kind of import, definition and segment, and a loop that becomes a
 * kernel. */
static const char wat[] =
    "(module\n"
    "  (import \"env\" \"f\" (func (param i32)))\n"
    "  (import \"env\" \"t\" (table 1 funcref))\n"
    "  (import \"env\" \"g\" (global i32))\n"
    "  (memory 1 2)\n"
    "  (table $t2 2 8 funcref)\n"
    "  (global (mut i64) (i64.const 7))\n"
    "  (elem (table $t2) (i32.const 0) func $k)\n"
    "  (data (i32.const 16) \"abc\")\n"
    "  (func $k (export \"k\") (param i32) (local i32)\n"
    "    (loop (i32.store (local.get 1) (local.get 0))\n"
    "      (local.set 1 (i32.add (local.get 1) (i32.const 4)))\n"
    "      (br_if 0 (i32.lt_u (local.get 1) (i32.const 4000))))))\n";

static LLVMContextRef ctx;
static LLVMModuleRef mod;
static LLVMTargetDataRef td;

static void setup(void) {
  char path[] = "/tmp/twasm-abi-XXXXXX.wat";
  int fd = mkstemps(path, 4);
  ck_assert_int_ge(fd, 0);
  ck_assert(write(fd, wat, sizeof wat - 1) == (ssize_t)(sizeof wat - 1));
  close(fd);
  uint8_t *bytes;
  size_t size;
  tw_diag d = {.offset = TW_DIAG_NO_OFFSET};
  ck_assert_msg(drv_read_input(path, &bytes, &size, &d) == DRV_OK, "%s", d.msg);
  unlink(path);
  drv_options o;
  drv_options_default(&o);
  char *ir = NULL;
  ck_assert_msg(drv_emit_llvm(bytes, size, "abi.wasm", &o, &ir, &d) == DRV_OK, "%s", d.msg);
  free(bytes);
  ctx = LLVMContextCreate();
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, strlen(ir), "abi");
  free(ir);
  char *msg = NULL;
  if (LLVMParseIRInContext(ctx, buf, &mod, &msg)) ck_abort_msg("bad IR: %s", msg);
  td = LLVMCreateTargetData(LLVMGetDataLayoutStr(mod));
}

static void teardown(void) {
  LLVMDisposeTargetData(td);
  LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
}

/* t (a struct type, or an array of them) lays out l's fields exactly. */
static void check(LLVMTypeRef t, const layout *l, const char *where) {
  while (LLVMGetTypeKind(t) == LLVMArrayTypeKind) t = LLVMGetElementType(t);
  ck_assert_msg(LLVMGetTypeKind(t) == LLVMStructTypeKind, "%s: not a struct", where);
  ck_assert_msg(LLVMABISizeOfType(td, t) == l->size, "%s: %llu bytes, %s has %zu", where,
                (unsigned long long)LLVMABISizeOfType(td, t), l->name, l->size);
  bool seen[40] = {0};
  for (unsigned i = 0; i < LLVMCountStructElementTypes(t); i++) {
    LLVMTypeRef e = LLVMStructGetTypeAtIndex(t, i);
    unsigned long long off = LLVMOffsetOfElement(td, t, i), size = LLVMStoreSizeOfType(td, e);
    unsigned f = 0;
    while (f < l->nfields && l->fields[f].offset != off) f++;
    ck_assert_msg(f < l->nfields, "%s: element %u at offset %llu is no field of %s", where, i, off, l->name);
    ck_assert_msg(size == l->fields[f].size, "%s.%s: %llu bytes, C has %zu", where, l->fields[f].name, size,
                  l->fields[f].size);
    seen[f] = true;
    char inner[256];
    snprintf(inner, sizeof inner, "%s.%s", where, l->fields[f].name);
    if (l->fields[f].nested) check(e, l->fields[f].nested, inner);
  }
  for (unsigned f = 0; f < l->nfields; f++)
    ck_assert_msg(seen[f], "%s: field %s of %s (offset %zu) missing", where, l->fields[f].name, l->name,
                  l->fields[f].offset);
}

START_TEST(emitted_structs_match_c) {
  LLVMValueRef g = LLVMGetNamedGlobal(mod, globals[_i].global);
  ck_assert_msg(g != NULL, "no global %s", globals[_i].global);
  check(LLVMGlobalGetValueType(g), globals[_i].l, globals[_i].global);
}
END_TEST

/* The descriptor points at the kernel table under its fixed name and
 * counts its entries. */
START_TEST(kernel_table_attached) {
  LLVMValueRef desc = LLVMGetInitializer(LLVMGetNamedGlobal(mod, "twasm_module"));
  LLVMTypeRef t = LLVMTypeOf(desc);
  LLVMValueRef table = LLVMGetNamedGlobal(mod, "twasm_kernels"), nkernels = NULL, kernels = NULL;
  for (unsigned i = 0; i < LLVMCountStructElementTypes(t); i++) {
    if (LLVMOffsetOfElement(td, t, i) == offsetof(twasm_module_abi, nkernels)) nkernels = LLVMGetOperand(desc, i);
    if (LLVMOffsetOfElement(td, t, i) == offsetof(twasm_module_abi, kernels)) kernels = LLVMGetOperand(desc, i);
  }
  ck_assert(nkernels && kernels && table);
  ck_assert_ptr_eq(kernels, table);
  ck_assert_uint_eq(LLVMConstIntGetZExtValue(nkernels), LLVMGetArrayLength2(LLVMGlobalGetValueType(table)));
  ck_assert_uint_eq(LLVMConstIntGetZExtValue(nkernels), 1);
}
END_TEST

static Suite *abi_suite(void) {
  Suite *s = suite_create("abi");
  TCase *tc = tcase_create("layout");
  tcase_set_timeout(tc, 60);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, emitted_structs_match_c, 0, sizeof globals / sizeof globals[0]);
  tcase_add_test(tc, kernel_table_attached);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(abi_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
