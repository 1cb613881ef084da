/* off_table.c: the kernel table of an offloaded module as LLVM constants,
 * field for field twasm_kernel_abi of include/twasm_abi.h. */
#include <stdlib.h>
#include <string.h>

#include "off.h"
#include "off_internal.h"
#include "twasm_abi.h"

typedef struct {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMTypeRef i8, i32, i64, ptr;
} ot_ctx;

static LLVMValueRef u32(const ot_ctx *c, uint64_t v) { return LLVMConstInt(c->i32, v, false); }
static LLVMValueRef s64(const ot_ctx *c, int64_t v) { return LLVMConstInt(c->i64, (uint64_t)v, true); }

static LLVMValueRef cstruct(const ot_ctx *c, LLVMValueRef *f, unsigned n) {
  return LLVMConstStructInContext(c->ctx, f, n, false);
}

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

static LLVMValueRef size_abi(const ot_ctx *c, kn_size s) {
  return cstruct(c, (LLVMValueRef[]){s64(c, s.value), u32(c, s.is_param), u32(c, 0)}, 3);
}

static LLVMValueRef range_abi(const ot_ctx *c, const kn_range *r) {
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
  LLVMValueRef f[] = {s64(c, r->addr.c0),
                      LLVMConstArray2(c->i32, pidx, TWASM_KERNEL_ADDR_PARAMS),
                      LLVMConstArray2(c->i64, pcs, TWASM_KERNEL_ADDR_PARAMS),
                      u32(c, r->addr.nparam_terms), u32(c, r->ndims),
                      LLVMConstArray2(c->i64, co, TWASM_KERNEL_RANGE_DIMS),
                      LLVMConstArray2(size_t_, ext, TWASM_KERNEL_RANGE_DIMS),
                      u32(c, r->size), u32(c, r->is_write),
                      LLVMConstArray2(c->i64, pco, TWASM_KERNEL_RANGE_DIMS),
                      LLVMConstArray2(c->i32, pix, TWASM_KERNEL_RANGE_DIMS), u32(c, 0)};
  return cstruct(c, f, sizeof f / sizeof f[0]);
}

static LLVMValueRef launch_abi(const ot_ctx *c, const ptx_launch *l) {
  LLVMValueRef count[3];
  for (int a = 0; a < 3; a++) count[a] = size_abi(c, l->count[a]);
  LLVMValueRef f[] = {u32_array(c, l->block, 3), u32_array(c, l->per_block, 3),
                      u32_array(c, l->max_grid, 3), u32(c, l->result_arg ? l->result_bytes : 0),
                      LLVMConstArray2(LLVMTypeOf(count[0]), count, 3)};
  return cstruct(c, f, sizeof f / sizeof f[0]);
}

/* Array of same-typed constants as a private global, or null when empty. */
static LLVMValueRef array_global(const ot_ctx *c, LLVMValueRef *e, unsigned n, const char *name) {
  if (!n) return LLVMConstNull(c->ptr);
  return private_const(c, LLVMConstArray2(LLVMTypeOf(e[0]), e, n), name);
}

static ot_ctx ctx_of(LLVMModuleRef mod) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  return (ot_ctx){ctx, mod, LLVMInt8TypeInContext(ctx), LLVMInt32TypeInContext(ctx),
                  LLVMInt64TypeInContext(ctx), LLVMPointerTypeInContext(ctx, 0)};
}

LLVMValueRef off_kernel_const(LLVMModuleRef mod, const kn_recog_nest *n, const ptx_out *px,
                              LLVMValueRef *text_at) {
  ot_ctx c = ctx_of(mod);
  const kn_desc *d = &n->desc;
  LLVMValueRef binds[KN_MAX_PARAMS];
  for (unsigned i = 0; i < KN_MAX_PARAMS; i++)
    binds[i] = LLVMConstInt(c.i8, i < d->nparams && n->binds[i].kind == KN_BIND_TRIP, false);
  LLVMValueRef *ranges = n->nranges ? malloc((size_t)n->nranges * sizeof *ranges) : NULL;
  for (int i = 0; i < n->nranges; i++) ranges[i] = range_abi(&c, &n->ranges[i]);
  LLVMValueRef ptx[OFF_MAX_ARCHS];
  unsigned nptx = px->ncodes < OFF_MAX_ARCHS ? px->ncodes : OFF_MAX_ARCHS;
  const ptx_plan *plan = &px->plan;
  for (unsigned i = 0; i < nptx; i++)
    ptx[i] = cstruct(&c, (LLVMValueRef[]){u32(&c, px->codes[i].sm | (px->codes[i].specific ? TWASM_PTX_SM_SPECIFIC : 0)),
                                          u32(&c, px->codes[i].ptx_isa),
                                          text_at[i], u32(&c, plan->codes[i].path),
                                          u32(&c, plan->codes[i].entries)}, 5);
  uint32_t kind = d->kind == KN_MAP ? TWASM_KERNEL_MAP
                  : d->kind == KN_REDUCE ? TWASM_KERNEL_REDUCE : TWASM_KERNEL_MATMUL;
  LLVMValueRef work_abi[TWASM_KERNEL_WORK_DIMS];
  for (int i = 0; i < TWASM_KERNEL_WORK_DIMS; i++) work_abi[i] = size_abi(&c, plan->work[i]);
  LLVMValueRef name = LLVMConstStringInContext2(c.ctx, px->name, strlen(px->name), false);
  LLVMValueRef f[] = {private_const(&c, name, "twasm_kernel_name"),
                      u32(&c, kind), u32(&c, d->nparams),
                      LLVMConstArray2(c.i8, binds, KN_MAX_PARAMS),
                      u32(&c, d->kind == KN_REDUCE ? d->reduce.init_param : 0),
                      u32(&c, n->check_overlap), u32(&c, (uint32_t)n->nranges), u32(&c, nptx),
                      array_global(&c, ranges, (unsigned)n->nranges, "twasm_kernel_ranges"),
                      array_global(&c, ptx, nptx, "twasm_kernel_ptx"),
                      launch_abi(&c, &plan->launch),
                      LLVMConstArray2(LLVMTypeOf(work_abi[0]), work_abi, TWASM_KERNEL_WORK_DIMS),
                      u32(&c, plan->nwork), u32(&c, plan->ops_per_iter), size_abi(&c, plan->batch),
                      u32(&c, plan->tc_elem_bytes), u32(&c, 0)};
  free(ranges);
  return cstruct(&c, f, sizeof f / sizeof f[0]);
}

bool off_attach_table(LLVMModuleRef mod, const char *desc_symbol, LLVMValueRef *kernels,
                      unsigned nkernels) {
  ot_ctx c = ctx_of(mod);
  LLVMValueRef g = LLVMGetNamedGlobal(mod, desc_symbol);
  LLVMValueRef init = g ? LLVMGetInitializer(g) : NULL;
  int n = init ? LLVMGetNumOperands(init) : 0;
  if (n < 3 || n > 64) return false;
  LLVMValueRef f[64];
  for (int i = 0; i < n; i++) f[i] = LLVMGetOperand(init, (unsigned)i);
  f[n - 3] = u32(&c, nkernels);
  f[n - 1] = array_global(&c, kernels, nkernels, "twasm_kernels");
  LLVMSetInitializer(g, cstruct(&c, f, (unsigned)n));
  return true;
}
