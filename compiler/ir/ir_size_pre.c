/* ir_size_pre.c: late, on optimised IR: a load of the linear memory's
 * size (vmctx->mem->size_bytes, what guard mode's exact bounds checks
 * compare with) in a block of several predecessors is replaced by a phi
 * of the value each predecessor already holds, where one does, and of a
 * load at the end of each that does not (a partial-redundancy
 * elimination of that one load across any number of predecessors).
 *
 * Why: a bytecode loop's handlers branch back to one block that loads
 * the size for the next opcode's checks (Lua 5.4's luaV_execute: 78
 * predecessors, `mov 0x8(%rbx),%rcx` per opcode).  The handlers that
 * call a function must load it again (a callee may run memory.grow);
 * the others hold the value loaded before.  LLVM's GVN makes a load
 * partially redundant only where one predecessor lacks the value; here
 * most handlers hold it and the calling ones do not.
 *
 * Exact: only memory.grow changes the size, and only through a call (the
 * runtime's); a store carrying a TBAA tag is lowering's store to linear
 * memory, a global or a table, never to the host's memory object.  A
 * value v is the size at the end of block x when, going back from x's
 * end, v's definition comes before any call that may write memory
 * (anything but an intrinsic, the `asm` statements bnd_late.c puts around
 * accesses the guard pages check, which run no instruction: the empty
 * barrier and the pcmap label, or a function whose `memory` attribute writes
 * nothing) or any store without a TBAA tag, on every path (v a phi: each
 * incoming value at the end of its predecessor); a cycle met again is
 * taken as not proved.  The loads put in the predecessors that lack the
 * value are only put in predecessors that branch nowhere else, so no
 * path runs more loads than before. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "ir_pass.h"

/* p is `getelementptr i8, ptr X, i64 8`: *x = X. */
static bool field_8(LLVMValueRef p, LLVMValueRef *x) {
  if (!p || !LLVMIsAGetElementPtrInst(p) || LLVMGetNumOperands(p) != 2) return false;
  LLVMValueRef k = LLVMGetOperand(p, 1);
  if (!LLVMIsAConstantInt(k) || LLVMConstIntGetZExtValue(k) != 8) return false;
  *x = LLVMGetOperand(p, 0);
  return true;
}

typedef struct {
  LLVMValueRef fn, vmctx, obj;
  LLVMTypeRef i64;
  const ir_cfg *cfg;
  unsigned md_tbaa;
  LLVMValueRef gone;   /* the load being replaced: not a definition */
  LLVMValueRef *start, *end; /* [nblocks]: the size where each block begins, ends */
  unsigned nreloads;
} pre_ctx;

/* i is `load i64 (vmctx->mem + 8)`: the size (twasm_abi.h: vmctx field 8
 * is the memory object, loaded once and invariant, its field 8 the size). */
static bool size_load(const pre_ctx *c, LLVMValueRef i, LLVMValueRef *obj) {
  LLVMValueRef o, ctx;
  if (!i || !LLVMIsALoadInst(i) || LLVMTypeOf(i) != c->i64 || LLVMGetVolatile(i)) return false;
  if (!field_8(LLVMGetOperand(i, 0), &o) || !LLVMIsALoadInst(o) || !field_8(LLVMGetOperand(o, 0), &ctx) ||
      ctx != c->vmctx)
    return false;
  if (obj) *obj = o;
  return true;
}

/* Whether i may change the memory's size (see the top of the file). */
static bool clobbers(const pre_ctx *c, LLVMValueRef i) {
  if (LLVMIsAStoreInst(i)) return !LLVMGetMetadata(i, c->md_tbaa);
  if (LLVMIsAAtomicRMWInst(i) || LLVMIsAAtomicCmpXchgInst(i)) return !LLVMGetMetadata(i, c->md_tbaa);
  if (!LLVMIsACallInst(i) && !LLVMIsAInvokeInst(i)) return false;
  LLVMValueRef callee = LLVMGetCalledValue(i);
  if (callee && LLVMIsAInlineAsm(callee)) {
    size_t len;
    const char *s = LLVMGetInlineAsmAsmString(callee, &len);
    static const char pcmap[] = "1:\n.pushsection twasm_pcmap,";
    return !(s && (len == 0 || (len > sizeof pcmap && !strncmp(s, pcmap, sizeof pcmap - 1))));
  }
  if (!callee || !LLVMIsAFunction(callee)) return true;
  if (LLVMGetIntrinsicID(callee)) return false;
  LLVMAttributeRef a =
      LLVMGetEnumAttributeAtIndex(callee, LLVMAttributeFunctionIndex, LLVMGetEnumAttributeKindForName("memory", 6));
  return !(a && (LLVMGetEnumAttributeValue(a) & 0x2aa) == 0);
}

/* The blocks of fn (reachable or not) that branch to bb, each once. */
static int preds_of(LLVMValueRef fn, LLVMBasicBlockRef bb, LLVMBasicBlockRef **out) {
  int n = 0, cap = 16;
  LLVMBasicBlockRef *v = malloc(cap * sizeof *v);
  for (LLVMBasicBlockRef p = LLVMGetFirstBasicBlock(fn); v && p; p = LLVMGetNextBasicBlock(p)) {
    LLVMValueRef t = LLVMGetBasicBlockTerminator(p);
    unsigned ns = t ? LLVMGetNumSuccessors(t) : 0;
    for (unsigned k = 0; k < ns; k++)
      if (LLVMGetSuccessor(t, k) == bb) {
        if (n == cap) {
          LLVMBasicBlockRef *w = realloc(v, (cap *= 2) * sizeof *v);
          if (!w) return free(v), *out = NULL, -1;
          v = w;
        }
        v[n++] = p;
        break;
      }
  }
  *out = v;
  return v ? n : -1;
}

/* A fresh load of the size where b stands. */
static LLVMValueRef reload(pre_ctx *c, LLVMBuilderRef b, LLVMValueRef like) {
  LLVMContextRef ctx = LLVMGetModuleContext(LLVMGetGlobalParent(c->fn));
  LLVMValueRef eight = LLVMConstInt(c->i64, 8, false);
  LLVMValueRef at = LLVMBuildGEP2(b, LLVMInt8TypeInContext(ctx), c->obj, &eight, 1, "size_at");
  LLVMValueRef r = LLVMBuildLoad2(b, c->i64, at, "size_again");
  LLVMSetAlignment(r, LLVMGetAlignment(like));
  size_t nmd;
  LLVMValueMetadataEntry *md = LLVMInstructionGetAllMetadataOtherThanDebugLoc(like, &nmd);
  for (unsigned j = 0; j < nmd; j++)
    LLVMSetMetadata(r, LLVMValueMetadataEntriesGetKind(md, j),
                    LLVMMetadataAsValue(ctx, LLVMValueMetadataEntriesGetMetadata(md, j)));
  if (md) LLVMDisposeValueMetadataEntries(md);
  c->nreloads++;
  return r;
}

static LLVMValueRef at_start(pre_ctx *c, LLVMBuilderRef b, int x);

/* The size where block x ends: its last size load after its last clobber
 * (not c->gone), a load put after that clobber, or what it began with. */
static LLVMValueRef at_end(pre_ctx *c, LLVMBuilderRef b, int x) {
  if (c->end[x]) return c->end[x];
  for (LLVMValueRef i = LLVMGetLastInstruction(c->cfg->blocks[x].bb); i; i = LLVMGetPreviousInstruction(i)) {
    if (i != c->gone && size_load(c, i, NULL)) return c->end[x] = i;
    if (clobbers(c, i)) {
      LLVMValueRef next = LLVMGetNextInstruction(i);
      LLVMPositionBuilderBefore(b, next);
      return c->end[x] = reload(c, b, c->gone);
    }
  }
  return c->end[x] = at_start(c, b, x);
}

/* Every use of phi by v, and the blocks' ends that held it. */
static void replace(pre_ctx *c, LLVMValueRef phi, LLVMValueRef v) {
  LLVMReplaceAllUsesWith(phi, v);
  for (int k = 0; k < c->cfg->nblocks; k++) {
    if (c->end[k] == phi) c->end[k] = v;
    if (c->start[k] == phi) c->start[k] = v;
  }
  LLVMInstructionEraseFromParent(phi);
}

/* phi, when all its incoming values but itself are one value: that value. */
static LLVMValueRef trivial(pre_ctx *c, LLVMValueRef phi) {
  LLVMValueRef same = NULL;
  unsigned n = LLVMCountIncoming(phi);
  for (unsigned k = 0; k < n; k++) {
    LLVMValueRef v = LLVMGetIncomingValue(phi, k);
    if (v == phi || v == same || LLVMIsAPoisonValue(v)) continue;
    if (same) return phi;
    same = v;
  }
  if (!same) return phi;
  /* the phis that used it may become trivial in turn */
  LLVMValueRef users[64];
  int nu = 0;
  for (LLVMUseRef u = LLVMGetFirstUse(phi); u && nu < 64; u = LLVMGetNextUse(u)) {
    LLVMValueRef w = LLVMGetUser(u);
    if (w != phi && LLVMIsAPHINode(w)) users[nu++] = w;
  }
  replace(c, phi, same);
  for (int k = 0; k < nu; k++)
    if (LLVMGetTypeKind(LLVMTypeOf(users[k])) == LLVMIntegerTypeKind) trivial(c, users[k]);
  return same;
}

/* The size where block x begins (Braun et al.'s on-demand SSA
 * construction, the size a variable that each clobber redefines). */
static LLVMValueRef at_start(pre_ctx *c, LLVMBuilderRef b, int x) {
  const ir_block *blk = &c->cfg->blocks[x];
  if (c->start[x]) return c->start[x];
  if (blk->npreds == 0) { /* the entry: loaded once, after the memory object */
    LLVMPositionBuilderBefore(b, LLVMGetNextInstruction(c->obj));
    return c->start[x] = reload(c, b, c->gone);
  }
  if (blk->npreds == 1) return c->start[x] = at_end(c, b, blk->preds[0]);
  LLVMBasicBlockRef bb = blk->bb;
  LLVMPositionBuilderBefore(b, LLVMGetFirstInstruction(bb));
  LLVMValueRef phi = LLVMBuildPhi(b, c->i64, "size");
  c->start[x] = phi; /* before its incoming values: a loop comes back to it */
  LLVMBasicBlockRef *preds;
  int n = preds_of(c->fn, bb, &preds);
  for (int k = 0; k < n; k++) {
    int p = ir_cfg_index(c->cfg, preds[k]);
    LLVMValueRef v = p < 0 ? LLVMGetPoison(c->i64) : at_end(c, b, p);
    LLVMBasicBlockRef from = preds[k];
    LLVMValueRef t = LLVMGetBasicBlockTerminator(preds[k]);
    for (unsigned s = 0; s < LLVMGetNumSuccessors(t); s++)
      if (LLVMGetSuccessor(t, s) == bb) LLVMAddIncoming(phi, &v, &from, 1);
  }
  free(preds);
  trivial(c, phi);
  return c->start[x];
}

/* The size load l (in a block of several predecessors, after no clobber
 * there) as what its predecessors hold.  Whether it was. */
static bool pre_one(pre_ctx *c, LLVMBuilderRef b, LLVMValueRef l) {
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(l);
  int x = ir_cfg_index(c->cfg, bb);
  if (x <= 0 || c->cfg->blocks[x].npreds < 2) return false;
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i != l; i = LLVMGetNextInstruction(i))
    if (clobbers(c, i) || size_load(c, i, NULL)) return false;
  memset(c->start, 0, c->cfg->nblocks * sizeof *c->start);
  memset(c->end, 0, c->cfg->nblocks * sizeof *c->end);
  c->gone = l;
  LLVMValueRef v = at_start(c, b, x);
  LLVMValueRef ptr = LLVMGetOperand(l, 0);
  LLVMReplaceAllUsesWith(l, v);
  LLVMInstructionEraseFromParent(l);
  if (LLVMIsAInstruction(ptr) && !LLVMGetFirstUse(ptr)) LLVMInstructionEraseFromParent(ptr);
  c->gone = NULL;
  return true;
}

unsigned ir_pre_size_loads(LLVMModuleRef mod) {
  unsigned n = 0;
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  unsigned swiftself = LLVMGetEnumAttributeKindForName("swiftself", 9);
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    if (LLVMIsDeclaration(fn) || LLVMCountParams(fn) == 0 || !LLVMGetEnumAttributeAtIndex(fn, 1, swiftself))
      continue;
    pre_ctx c = {.fn = fn, .vmctx = LLVMGetParam(fn, 0), .i64 = LLVMInt64TypeInContext(ctx),
                 .md_tbaa = LLVMGetMDKindIDInContext(ctx, "tbaa", 4)};
    /* the candidates, before any change; the memory object loaded in the
     * entry block (where a load for paths that load none before goes); no
     * invoke (a load goes after each clobber) */
    int nl = 0, cap = 0;
    LLVMValueRef *loads = NULL;
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fn);
    bool fit = true;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); fit && bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); fit && i; i = LLVMGetNextInstruction(i)) {
        LLVMValueRef obj;
        if (LLVMIsAInvokeInst(i)) fit = false;
        if (!size_load(&c, i, &obj)) continue;
        /* the same object wherever loaded (!invariant.load): reloads use
         * the entry block's */
        if (LLVMGetInstructionParent(obj) == entry) c.obj = obj;
        if (nl == cap) {
          LLVMValueRef *w = realloc(loads, (cap = cap ? 2 * cap : 16) * sizeof *w);
          if (!w) {
            fit = false;
            break;
          }
          loads = w;
        }
        loads[nl++] = i;
      }
    if (nl == 0 || !fit || !c.obj) {
      free(loads);
      continue;
    }
    tw_arena arena = {0};
    ir_cfg cfg;
    /* one CFG for the function: the pass adds no blocks nor edges */
    if (ir_cfg_build(&cfg, &arena, fn)) {
      c.cfg = &cfg;
      c.start = calloc(cfg.nblocks, sizeof *c.start);
      c.end = calloc(cfg.nblocks, sizeof *c.end);
      for (int k = 0; c.start && c.end && k < nl; k++)
        if (pre_one(&c, b, loads[k])) n++;
      free(c.start);
      free(c.end);
    }
    if (getenv("SIZEPRE_DEBUG")) fprintf(stderr, "sizepre %s: loads %d replaced %u reloads %u\n", LLVMGetValueName(fn), nl, n, c.nreloads);
    free(loads);
    tw_arena_free(&arena);
  }
  LLVMDisposeBuilder(b);
  return n;
}
