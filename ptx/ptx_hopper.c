/* ptx_hopper.c: the sm_90a primitives the Hopper kernels (ptx_wgmma.c,
 * ptx_tc.c) are built from, as inline PTX: wgmma matrix descriptors, one
 * wgmma.mma_async of a matmul's types, wgmma.wait_group, prmt, and the
 * tf32 rounding every tf32 path shares.  A leaf: it calls only ptx_ir.c. */
#include <stdio.h>
#include <string.h>

#include "ptx_internal.h"

static LLVMValueRef i32c(ptx_gen *g, uint32_t v) { return LLVMConstInt(g->i32, v, false); }

LLVMValueRef ptx_asm(ptx_gen *g, LLVMTypeRef ret, const char *text, const char *cons, LLVMValueRef *args,
                     unsigned n, bool side_effects) {
  LLVMTypeRef types[2 * PTX_WGMMA_REGS + 4];
  for (unsigned i = 0; i < n; i++) types[i] = LLVMTypeOf(args[i]);
  LLVMTypeRef fty = LLVMFunctionType(ret, types, n, false);
  LLVMValueRef fn = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), side_effects,
                                     false, LLVMInlineAsmDialectATT, false);
  return LLVMBuildCall2(g->b, fty, fn, args, n, "");
}

void ptx_asm_void(ptx_gen *g, const char *text) {
  ptx_asm(g, LLVMVoidTypeInContext(g->ctx), text, "~{memory}", NULL, 0, true);
}

LLVMValueRef ptx_prmt(ptx_gen *g, LLVMValueRef a, LLVMValueRef b, LLVMValueRef sel) {
  LLVMValueRef args[3] = {a, b, sel};
  return ptx_asm(g, g->i32, "prmt.b32 $0, $1, $2, $3;", "=r,r,r,r", args, 3, false);
}

LLVMValueRef ptx_round_tf32(ptx_gen *g, LLVMValueRef f) {
  return ptx_call(g, "llvm.nvvm.f2tf32.rna", g->i32, &f, 1);
}

LLVMValueRef ptx_round_tf32x4(ptx_gen *g, LLVMValueRef v4f) {
  LLVMValueRef r = LLVMGetUndef(LLVMVectorType(g->i32, 4));
  for (unsigned e = 0; e < 4; e++)
    r = LLVMBuildInsertElement(g->b, r, ptx_round_tf32(g, LLVMBuildExtractElement(g->b, v4f, i32c(g, e), "")),
                               i32c(g, e), "");
  return r;
}

LLVMValueRef ptx_wgmma_desc(ptx_gen *g, LLVMValueRef base, LLVMValueRef byte_off, unsigned lead,
                            unsigned stride) {
  LLVMValueRef addr = LLVMBuildAdd(g->b, LLVMBuildPtrToInt(g->b, base, g->i64, ""), byte_off, "");
  LLVMValueRef lo = LLVMBuildAnd(g->b, LLVMBuildLShr(g->b, addr, ptx_i64(g, 4), ""), ptx_i64(g, 0x3fff), "");
  uint64_t fields = ((uint64_t)(lead >> 4) << 16) | ((uint64_t)(stride >> 4) << 32);
  return LLVMBuildOr(g->b, lo, LLVMConstInt(g->i64, fields, false), "");
}

LLVMValueRef ptx_wgmma_op(ptx_gen *g, LLVMTypeRef acc_ty, LLVMValueRef acc, LLVMValueRef da,
                          LLVMValueRef db) {
  const kn_matmul *m = &g->d->matmul;
  bool tf32 = m->type == KN_MM_F32;
  char text[2048], cons[1024];
  int n = snprintf(text, sizeof text, "{\n.reg .pred p;\nsetp.ne.b32 p, $%u, 0;\n%s {", PTX_WGMMA_REGS + 2,
                   tf32 ? "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"
                   : m->a_signed
                       ? (m->b_signed ? "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8"
                                      : "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.u8")
                       : (m->b_signed ? "wgmma.mma_async.sync.aligned.m64n128k32.s32.u8.s8"
                                      : "wgmma.mma_async.sync.aligned.m64n128k32.s32.u8.u8"));
  for (unsigned r = 0; r < PTX_WGMMA_REGS; r++) n += snprintf(text + n, sizeof text - (size_t)n, "%s$%u", r ? "," : "", r);
  snprintf(text + n, sizeof text - (size_t)n, "}, $%u, $%u, p%s;\n}", PTX_WGMMA_REGS, PTX_WGMMA_REGS + 1, tf32 ? ", 1, 1" : "");
  const char *rc = tf32 ? "=f" : "=r";
  n = 0;
  for (unsigned r = 0; r < PTX_WGMMA_REGS; r++) n += snprintf(cons + n, sizeof cons - (size_t)n, "%s,", rc);
  n += snprintf(cons + n, sizeof cons - (size_t)n, "l,l,r");
  for (unsigned r = 0; r < PTX_WGMMA_REGS; r++) n += snprintf(cons + n, sizeof cons - (size_t)n, ",%u", r);
  LLVMValueRef args[PTX_WGMMA_REGS + 3];
  args[0] = da;
  args[1] = db;
  args[2] = i32c(g, 1);
  for (unsigned r = 0; r < PTX_WGMMA_REGS; r++) args[3 + r] = LLVMBuildExtractValue(g->b, acc, r, "");
  return ptx_asm(g, acc_ty, text, cons, args, PTX_WGMMA_REGS + 3, true);
}

LLVMValueRef ptx_wgmma_wait(ptx_gen *g, LLVMTypeRef acc_ty, LLVMValueRef acc, unsigned pending) {
  char cons[1024], text[64];
  int n = 0;
  const char *rc = g->d->matmul.type == KN_MM_F32 ? "=f" : "=r";
  for (unsigned r = 0; r < PTX_WGMMA_REGS; r++) n += snprintf(cons + n, sizeof cons - (size_t)n, "%s%s", r ? "," : "", rc);
  for (unsigned r = 0; r < PTX_WGMMA_REGS; r++) n += snprintf(cons + n, sizeof cons - (size_t)n, ",%u", r);
  snprintf(cons + n, sizeof cons - (size_t)n, ",~{memory}");
  snprintf(text, sizeof text, "wgmma.wait_group.sync.aligned %u;", pending);
  LLVMValueRef args[PTX_WGMMA_REGS];
  for (unsigned r = 0; r < PTX_WGMMA_REGS; r++) args[r] = LLVMBuildExtractValue(g->b, acc, r, "");
  return ptx_asm(g, acc_ty, text, cons, args, PTX_WGMMA_REGS, true);
}
