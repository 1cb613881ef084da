/* off_calls.c: the code of a nest's pure callees (kernels/kn_recog_call.c)
 * for its kernel: each callee and every Wasm function it calls copied,
 * instruction by instruction, into a module of their own, written as
 * LLVM bitcode that kernel generation links in (ptx_target.c). */
#include <llvm-c/Analysis.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/DebugInfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "off_internal.h"

#define CALLS_MAX_FUNCS 32

/* Old value -> its copy, open addressing on the pointer. */
typedef struct {
  LLVMValueRef *key, *val;
  size_t cap;
} vmap;

static size_t slot(const vmap *m, LLVMValueRef k) {
  size_t h = ((uintptr_t)k >> 4) * 0x9e3779b97f4a7c15u;
  for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1))
    if (!m->key[i] || m->key[i] == k) return i;
}

static void put(vmap *m, LLVMValueRef k, LLVMValueRef v) {
  size_t i = slot(m, k);
  m->key[i] = k, m->val[i] = v;
}

static LLVMValueRef get(const vmap *m, LLVMValueRef k) {
  size_t i = slot(m, k);
  return m->key[i] ? m->val[i] : NULL;
}

/* The callees and the Wasm functions they call, transitively. */
static int closure(LLVMValueRef *fns, int n) {
  for (int k = 0; k < n; k++)
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fns[k]); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
        if (!LLVMIsACallInst(i)) continue;
        LLVMValueRef f = LLVMGetCalledValue(i);
        size_t len;
        if (!LLVMIsAFunction(f) || LLVMIsDeclaration(f) || !strncmp(LLVMGetValueName2(f, &len), "llvm.", 5))
          continue;
        if (ir_wasm_index(f) < 0) return -1;
        int j = 0;
        while (j < n && fns[j] != f) j++;
        if (j < n) continue;
        if (n == CALLS_MAX_FUNCS) return -1;
        fns[n++] = f;
      }
  return n;
}

static size_t count_values(LLVMValueRef *fns, int n) {
  size_t count = 0;
  for (int k = 0; k < n; k++) {
    count += LLVMCountParams(fns[k]) + 1;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fns[k]); bb; bb = LLVMGetNextBasicBlock(bb)) {
      count++;
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) count++;
    }
  }
  return count;
}

/* The function of `mod` standing for f, declared with f's type if new:
 * a Wasm function as `wasm_f<index>` (the name KN_E_CALL's kernel
 * looks up), an intrinsic by its own name. */
static LLVMValueRef same_function(LLVMModuleRef mod, LLVMValueRef f) {
  size_t len;
  const char *name = LLVMGetValueName2(f, &len);
  char own[32];
  int64_t idx = ir_wasm_index(f);
  if (idx >= 0) snprintf(own, sizeof own, KN_CALLEE_NAME, (unsigned)idx), name = own;
  LLVMValueRef g = LLVMGetNamedFunction(mod, name);
  return g ? g : LLVMAddFunction(mod, name, LLVMGlobalGetValueType(f));
}

/* Copies f's body into nf (already declared in mod). */
static void copy_body(LLVMModuleRef mod, LLVMValueRef f, LLVMValueRef nf, vmap *m, LLVMBuilderRef b) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  for (unsigned p = 0; p < LLVMCountParams(f); p++) put(m, LLVMGetParam(f, p), LLVMGetParam(nf, p));
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
    put(m, LLVMBasicBlockAsValue(bb), LLVMBasicBlockAsValue(LLVMAppendBasicBlockInContext(ctx, nf, "")));
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMPositionBuilderAtEnd(b, LLVMValueAsBasicBlock(get(m, LLVMBasicBlockAsValue(bb))));
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      LLVMValueRef c;
      if (LLVMIsAPHINode(i)) {
        c = LLVMBuildPhi(b, LLVMTypeOf(i), "");
      } else {
        c = LLVMInstructionClone(i);
        LLVMInsertIntoBuilder(b, c);
        size_t nmd;
        LLVMValueMetadataEntry *md = LLVMInstructionGetAllMetadataOtherThanDebugLoc(c, &nmd);
        for (size_t k = 0; k < nmd; k++) LLVMSetMetadata(c, LLVMValueMetadataEntriesGetKind(md, (unsigned)k), NULL);
        if (md) LLVMDisposeValueMetadataEntries(md);
        LLVMInstructionSetDebugLoc(c, NULL);
      }
      put(m, i, c);
    }
  }
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      LLVMValueRef c = get(m, i);
      if (LLVMIsAPHINode(i)) {
        for (unsigned k = 0; k < LLVMCountIncoming(i); k++) {
          LLVMValueRef v = LLVMGetIncomingValue(i, k), nv = get(m, v);
          LLVMBasicBlockRef from = LLVMValueAsBasicBlock(get(m, LLVMBasicBlockAsValue(LLVMGetIncomingBlock(i, k))));
          LLVMAddIncoming(c, nv ? &nv : &v, &from, 1);
        }
        continue;
      }
      for (int k = 0; k < LLVMGetNumOperands(c); k++) {
        LLVMValueRef o = LLVMGetOperand(c, (unsigned)k), no = get(m, o);
        if (!no && LLVMIsAFunction(o)) no = same_function(mod, o);
        if (no) LLVMSetOperand(c, (unsigned)k, no);
      }
    }
}

bool off_calls_bitcode(LLVMValueRef *callees, int ncallees, tw_arena *arena, const void **bc, size_t *len) {
  LLVMValueRef fns[CALLS_MAX_FUNCS];
  if (ncallees <= 0 || ncallees > CALLS_MAX_FUNCS) return false;
  memcpy(fns, callees, (size_t)ncallees * sizeof *fns);
  int n = closure(fns, ncallees);
  if (n < 0) return false;
  LLVMModuleRef host = LLVMGetGlobalParent(fns[0]);
  LLVMContextRef ctx = LLVMGetModuleContext(host);
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("twasm_calls", ctx);
  vmap m = {0};
  for (m.cap = 64; m.cap < 2 * count_values(fns, n);) m.cap *= 2;
  m.key = calloc(m.cap, sizeof *m.key);
  m.val = calloc(m.cap, sizeof *m.val);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  bool ok = m.key && m.val;
  for (int k = 0; ok && k < n; k++) same_function(mod, fns[k]);
  for (int k = 0; ok && k < n; k++) copy_body(mod, fns[k], same_function(mod, fns[k]), &m, b);
  LLVMDisposeBuilder(b);
  free(m.key);
  free(m.val);
  char *msg = NULL;
  ok = ok && !LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg);
  LLVMDisposeMessage(msg);
  if (ok) {
    LLVMMemoryBufferRef buf = LLVMWriteBitcodeToMemoryBuffer(mod);
    *len = LLVMGetBufferSize(buf);
    void *copy = tw_arena_alloc(arena, *len);
    memcpy(copy, LLVMGetBufferStart(buf), *len);
    *bc = copy;
    LLVMDisposeMemoryBuffer(buf);
  }
  LLVMDisposeModule(mod);
  return ok;
}
