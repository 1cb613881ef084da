/* off_table.c: the kernel table of an offloaded module as LLVM constants,
 * each field of twasm_kernel_abi (include/twasm_abi.h) placed at its C
 * offset (ir_abi.h), and the table put where the module descriptor
 * points (the private global IR_KERNEL_TABLE lowering left empty). */
#include <stdlib.h>
#include <string.h>

#include "ir_abi.h"
#include "off.h"
#include "off_internal.h"

typedef struct {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMTypeRef i8, i32, i64, ptr;
  bool broken;             /* a constant disagreed with twasm_abi.h */
} ot_ctx;

/* A constant of ABI struct T from IR_ABI_FIELD(T, ...) initialisers. */
#define ABI_STRUCT(c, T, ...) \
  abi_struct(c, sizeof(T), (const ir_abi_field[]){__VA_ARGS__}, \
             sizeof((const ir_abi_field[]){__VA_ARGS__}) / sizeof(ir_abi_field))

static LLVMValueRef abi_struct(ot_ctx *c, size_t size, const ir_abi_field *f, unsigned n) {
  LLVMValueRef s = ir_abi_struct(c->ctx, size, f, n);
  if (!s) c->broken = true;
  return s ? s : LLVMConstNull(c->i8);
}

static LLVMValueRef u32(const ot_ctx *c, uint64_t v) { return LLVMConstInt(c->i32, v, false); }
static LLVMValueRef s64(const ot_ctx *c, int64_t v) { return LLVMConstInt(c->i64, (uint64_t)v, true); }

static LLVMValueRef u32_array(const ot_ctx *c, const uint32_t *v, unsigned n) {
  LLVMValueRef e[16];
  for (unsigned i = 0; i < n; i++) e[i] = u32(c, v[i]);
  return LLVMConstArray2(c->i32, e, n);
}

static LLVMValueRef private_const(const ot_ctx *c, LLVMValueRef init, const char *name) {
  LLVMValueRef g = LLVMAddGlobal(c->mod, LLVMTypeOf(init), name);
  LLVMSetInitializer(g, init);
  LLVMSetGlobalConstant(g, true);
  LLVMSetLinkage(g, LLVMPrivateLinkage);
  return g;
}

static LLVMValueRef size_abi(ot_ctx *c, kn_size s) {
#define F(field, v) IR_ABI_FIELD(twasm_kernel_size_abi, field, v)
  return ABI_STRUCT(c, twasm_kernel_size_abi, F(value, s64(c, s.value)), F(is_param, u32(c, s.is_param)),
                    F(pad, u32(c, 0)));
#undef F
}

static LLVMValueRef range_abi(ot_ctx *c, const kn_range *r) {
  LLVMValueRef pidx[TWASM_KERNEL_ADDR_PARAMS], pcs[TWASM_KERNEL_ADDR_PARAMS];
  LLVMValueRef co[TWASM_KERNEL_RANGE_DIMS], ext[TWASM_KERNEL_RANGE_DIMS];
  LLVMValueRef pco[TWASM_KERNEL_RANGE_DIMS], pix[TWASM_KERNEL_RANGE_DIMS];
  for (unsigned t = 0; t < TWASM_KERNEL_ADDR_PARAMS; t++) {
    bool used = t < r->addr.nparam_terms;
    pidx[t] = u32(c, used ? r->addr.param_index[t] : 0);
    pcs[t] = s64(c, used ? r->addr.param_coeff[t] : 0);
  }
  for (unsigned d = 0; d < TWASM_KERNEL_RANGE_DIMS; d++) {
    bool used = d < r->ndims;
    co[d] = s64(c, used ? r->coeff[d] : 0);
    pco[d] = s64(c, used ? r->pcoeff[d] : 0);
    pix[d] = u32(c, used ? r->pindex[d] : 0);
    ext[d] = size_abi(c, used ? r->extent[d] : (kn_size){.value = 1});
  }
  LLVMTypeRef size_t_ = LLVMTypeOf(ext[0]);
#define F(field, v) IR_ABI_FIELD(twasm_kernel_range_abi, field, v)
  return ABI_STRUCT(c, twasm_kernel_range_abi, F(c0, s64(c, r->addr.c0)),
                    F(param_index, LLVMConstArray2(c->i32, pidx, TWASM_KERNEL_ADDR_PARAMS)),
                    F(param_coeff, LLVMConstArray2(c->i64, pcs, TWASM_KERNEL_ADDR_PARAMS)),
                    F(nparam_terms, u32(c, r->addr.nparam_terms)), F(ndims, u32(c, r->ndims)),
                    F(coeff, LLVMConstArray2(c->i64, co, TWASM_KERNEL_RANGE_DIMS)),
                    F(extent, LLVMConstArray2(size_t_, ext, TWASM_KERNEL_RANGE_DIMS)),
                    F(size, u32(c, r->size)), F(is_write, u32(c, r->is_write)),
                    F(pcoeff, LLVMConstArray2(c->i64, pco, TWASM_KERNEL_RANGE_DIMS)),
                    F(pindex, LLVMConstArray2(c->i32, pix, TWASM_KERNEL_RANGE_DIMS)),
                    F(forwarded, u32(c, r->forwarded)), F(table_dim, u32(c, r->table_dim)),
                    F(table, size_abi(c, r->table_dim ? r->table : (kn_size){0})));
#undef F
}

static LLVMValueRef launch_abi(ot_ctx *c, const ptx_launch *l) {
  LLVMValueRef count[3];
  for (int a = 0; a < 3; a++) count[a] = size_abi(c, l->count[a]);
#define F(field, v) IR_ABI_FIELD(twasm_kernel_launch_abi, field, v)
  return ABI_STRUCT(c, twasm_kernel_launch_abi, F(block, u32_array(c, l->block, 3)),
                    F(per_block, u32_array(c, l->per_block, 3)), F(max_grid, u32_array(c, l->max_grid, 3)),
                    F(result_bytes, u32(c, l->result_arg ? l->result_bytes : 0)),
                    F(count, LLVMConstArray2(LLVMTypeOf(count[0]), count, 3)));
#undef F
}

/* One PTX module of the kernel: where its text lies and the plan's path
 * and entries for it. */
static LLVMValueRef ptx_abi(ot_ctx *c, const ptx_code *code, const ptx_plan_code *pc, LLVMValueRef text) {
#define F(field, v) IR_ABI_FIELD(twasm_kernel_ptx_abi, field, v)
  return ABI_STRUCT(c, twasm_kernel_ptx_abi,
                    F(sm, u32(c, code->sm | (code->specific ? TWASM_PTX_SM_SPECIFIC : 0))),
                    F(ptx_isa, u32(c, code->ptx_isa)), F(text, text), F(path, u32(c, pc->path)),
                    F(entries, u32(c, pc->entries)));
#undef F
}

/* Array of same-typed constants as a private global, or null when empty. */
static LLVMValueRef array_global(const ot_ctx *c, LLVMValueRef *e, unsigned n, const char *name) {
  if (!n) return LLVMConstNull(c->ptr);
  return private_const(c, LLVMConstArray2(LLVMTypeOf(e[0]), e, n), name);
}

static ot_ctx ctx_of(LLVMModuleRef mod) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  return (ot_ctx){ctx, mod, LLVMInt8TypeInContext(ctx), LLVMInt32TypeInContext(ctx),
                  LLVMInt64TypeInContext(ctx), LLVMPointerTypeInContext(ctx, 0), false};
}

static uint32_t kind_abi(const kn_desc *d) {
  return d->kind == KN_MAP ? TWASM_KERNEL_MAP : d->kind == KN_REDUCE ? TWASM_KERNEL_REDUCE : TWASM_KERNEL_MATMUL;
}

/* The entry, its name and arrays made by the caller. */
static LLVMValueRef kernel_abi(ot_ctx *c, const kn_recog_nest *n, const ptx_out *px, LLVMValueRef name,
                               LLVMValueRef ranges, LLVMValueRef ptx, unsigned nptx, LLVMValueRef store) {
  const kn_desc *d = &n->desc;
  const ptx_plan *plan = &px->plan;
  LLVMValueRef binds[KN_MAX_PARAMS], work[TWASM_KERNEL_WORK_DIMS];
  for (unsigned i = 0; i < KN_MAX_PARAMS; i++)
    binds[i] = LLVMConstInt(c->i8, i < d->nparams && n->binds[i].kind == KN_BIND_TRIP, false);
  for (int i = 0; i < TWASM_KERNEL_WORK_DIMS; i++) work[i] = size_abi(c, plan->work[i]);
#define F(field, v) IR_ABI_FIELD(twasm_kernel_abi, field, v)
  return ABI_STRUCT(c, twasm_kernel_abi, F(name, name),
                    F(kind, u32(c, kind_abi(d))), F(nparams, u32(c, d->nparams)),
                    F(bind_kinds, LLVMConstArray2(c->i8, binds, KN_MAX_PARAMS)),
                    F(init_param, u32(c, d->kind == KN_REDUCE ? d->reduce.init_param : 0)),
                    F(check_overlap, u32(c, n->check_overlap)), F(nranges, u32(c, (uint32_t)n->nranges)),
                    F(nptx, u32(c, nptx)), F(ranges, ranges), F(ptx, ptx), F(launch, launch_abi(c, &plan->launch)),
                    F(work, LLVMConstArray2(LLVMTypeOf(work[0]), work, TWASM_KERNEL_WORK_DIMS)),
                    F(nwork, u32(c, plan->nwork)), F(ops_per_iter, u32(c, plan->ops_per_iter)),
                    F(batch, size_abi(c, plan->batch)), F(tc_elem_bytes, u32(c, plan->tc_elem_bytes)),
                    F(pad, u32(c, 0)), F(ptx_store, store));
#undef F
}

LLVMValueRef off_kernel_const(LLVMModuleRef mod, const kn_recog_nest *n, const ptx_out *px,
                              LLVMValueRef *text_at, LLVMValueRef store) {
  ot_ctx c = ctx_of(mod);
  LLVMValueRef text = LLVMConstStringInContext2(c.ctx, px->name, strlen(px->name), false);
  LLVMValueRef name = private_const(&c, text, "twasm_kernel_name");
  LLVMValueRef *ranges = n->nranges ? malloc((size_t)n->nranges * sizeof *ranges) : NULL;
  for (int i = 0; i < n->nranges; i++) ranges[i] = range_abi(&c, &n->ranges[i]);
  LLVMValueRef ptx[OFF_MAX_ARCHS];
  unsigned nptx = px->ncodes < OFF_MAX_ARCHS ? px->ncodes : OFF_MAX_ARCHS;
  for (unsigned i = 0; i < nptx; i++) ptx[i] = ptx_abi(&c, &px->codes[i], &px->plan.codes[i], text_at[i]);
  LLVMValueRef rg = array_global(&c, ranges, (unsigned)n->nranges, "twasm_kernel_ranges");
  LLVMValueRef entry = kernel_abi(&c, n, px, name, rg, array_global(&c, ptx, nptx, "twasm_kernel_ptx"), nptx,
                                  store);
  free(ranges);
  return c.broken ? NULL : entry;
}

bool off_attach_table(LLVMModuleRef mod, const char *desc_symbol, LLVMValueRef *kernels,
                      unsigned nkernels) {
  ot_ctx c = ctx_of(mod);
  LLVMValueRef desc = LLVMGetNamedGlobal(mod, desc_symbol);
  LLVMValueRef empty = LLVMGetNamedGlobal(mod, IR_KERNEL_TABLE);
  if (!desc || !empty || !nkernels) return false;
  for (unsigned i = 0; i < nkernels; i++)
    if (!kernels[i]) return false;
  LLVMValueRef table = private_const(&c, LLVMConstArray2(LLVMTypeOf(kernels[0]), kernels, nkernels), "");
  LLVMReplaceAllUsesWith(empty, table);
  LLVMDeleteGlobal(empty);
  LLVMSetValueName2(table, IR_KERNEL_TABLE, strlen(IR_KERNEL_TABLE));
  return ir_abi_set_field(desc, offsetof(twasm_module_abi, nkernels), u32(&c, nkernels));
}
