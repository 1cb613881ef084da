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
  LLVMValueRef fn, vmctx;
  LLVMTypeRef i64;
  const ir_cfg *cfg;
  const ir_dom *dom;
  unsigned md_tbaa;
  int budget;          /* blocks the proofs may still visit for this load */
  LLVMValueRef *vals;  /* values whose memo rows are in memo */
  signed char *memo;   /* [nvals][nblocks]: 0 unknown, 1 in progress, 2 no,
                        * 3 yes, 4 in progress and assumed yes meanwhile */
  bool wrong;          /* a claim assumed yes turned out no */
  int nvals, capvals;
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

static signed char *memo_row(pre_ctx *c, LLVMValueRef v) {
  for (int k = 0; k < c->nvals; k++)
    if (c->vals[k] == v) return c->memo + (size_t)k * c->cfg->nblocks;
  if (c->nvals == c->capvals) {
    int cap = c->capvals ? 2 * c->capvals : 8;
    LLVMValueRef *vals = realloc(c->vals, cap * sizeof *vals);
    signed char *memo = vals ? realloc(c->memo, (size_t)cap * c->cfg->nblocks) : NULL;
    if (vals) c->vals = vals;
    if (!memo) return NULL;
    c->memo = memo, c->capvals = cap;
  }
  signed char *row = c->memo + (size_t)c->nvals * c->cfg->nblocks;
  memset(row, 0, c->cfg->nblocks);
  c->vals[c->nvals++] = v;
  return row;
}

static bool size_at(pre_ctx *c, LLVMValueRef v, int x);

/* v holds the size where x begins. */
static bool size_at_start(pre_ctx *c, LLVMValueRef v, int x) {
  LLVMBasicBlockRef bb = c->cfg->blocks[x].bb;
  const ir_block *blk = &c->cfg->blocks[x];
  if (LLVMIsAPHINode(v) && LLVMGetInstructionParent(v) == bb) {
    unsigned n = LLVMCountIncoming(v);
    for (unsigned k = 0; k < n; k++) {
      int p = ir_cfg_index(c->cfg, LLVMGetIncomingBlock(v, k));
      if (p < 0) continue; /* an unreachable predecessor */
      LLVMValueRef in = LLVMGetIncomingValue(v, k);
      if (!(size_load(c, in, NULL) || LLVMIsAPHINode(in)) || !size_at(c, in, p)) return false;
    }
    return true;
  }
  if (!LLVMIsAInstruction(v) || x == 0) return false;
  /* v's block strictly dominates x, so it dominates every predecessor */
  int d = ir_cfg_index(c->cfg, LLVMGetInstructionParent(v));
  if (d < 0 || d == x || !ir_dominates(c->dom, d, x)) return false;
  for (int k = 0; k < blk->npreds; k++)
    if (!size_at(c, v, blk->preds[k])) return false;
  return blk->npreds > 0;
}

/* v holds the size where x ends. */
static bool size_at(pre_ctx *c, LLVMValueRef v, int x) {
  signed char *row = memo_row(c, v);
  if (!row || row[x] == 2) return false;
  if (row[x] == 3 || row[x] == 4) return true;
  if (row[x] == 1) return row[x] = 4, true; /* a cycle: assumed, checked below */
  if (--c->budget < 0) return false;
  row[x] = 1;
  bool ok = false, done = false;
  for (LLVMValueRef i = LLVMGetLastInstruction(c->cfg->blocks[x].bb); i && !done; i = LLVMGetPreviousInstruction(i)) {
    if (i == v) ok = done = !LLVMIsAPHINode(v); /* a phi: its incoming values */
    else if (clobbers(c, i)) { done = true; if (getenv("SIZEPRE_DEBUG")) { char *t = LLVMPrintValueToString(i); fprintf(stderr, "  clobber for %s in %s: %.150s\n", LLVMGetValueName(v), LLVMGetBasicBlockName(c->cfg->blocks[x].bb), t); LLVMDisposeMessage(t);} }
    if (i == v) break;
  }
  if (!done) ok = size_at_start(c, v, x);
  row = memo_row(c, v); /* memo may have moved */
  if (row) {
    if (row[x] == 4 && !ok) c->wrong = true;
    row[x] = ok ? 3 : 2;
  }
  return ok;
}

/* size_at, the greatest solution: claims on a cycle are assumed until
 * disproved; when one that was assumed is disproved, the claims proved
 * meanwhile are dropped and the proof runs again (a "no" stays: claims
 * taken as true only add to what is true).  Sound because each claim
 * rests on claims about earlier points of any execution (a predecessor's
 * end, or a phi's incoming value at its predecessor's end), so an
 * execution reaching a point where a claim fails would reach an earlier
 * one first, down to the function's entry, where none is assumed. */
static bool size_at_fix(pre_ctx *c, LLVMValueRef v, int x) {
  for (;;) {
    c->wrong = false;
    bool ok = size_at(c, v, x);
    if (!c->wrong) return ok;
    if (c->budget < 0) return false;
    for (size_t k = 0; k < (size_t)c->nvals * c->cfg->nblocks; k++)
      if (c->memo[k] != 2) c->memo[k] = 0;
  }
}

/* A value already holding the size at the end of block p: a size load or
 * a phi in p or a block dominating it (nearest first), not `not`. */
static LLVMValueRef available(pre_ctx *c, int p, LLVMValueRef not) {
  for (int d = p;; d = c->dom->idom[d]) {
    LLVMBasicBlockRef bb = c->cfg->blocks[d].bb;
    for (LLVMValueRef i = LLVMGetLastInstruction(bb); i; i = LLVMGetPreviousInstruction(i)) {
      if (i == not || !(size_load(c, i, NULL) || (LLVMIsAPHINode(i) && LLVMTypeOf(i) == c->i64))) continue;
      bool r = size_at_fix(c, i, p);
      if (getenv("SIZEPRE_DEBUG2")) fprintf(stderr, "  cand %s at %s: %d\n", LLVMGetValueName(i), LLVMGetBasicBlockName(c->cfg->blocks[p].bb), r);
      if (r) return i;
    }
    if (d == 0) return NULL;
  }
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

/* The size load l (in a block of several predecessors, after no clobber
 * in it) as a phi of what its predecessors hold.  Whether it did. */
static bool pre_one(pre_ctx *c, LLVMBuilderRef b, LLVMValueRef l, LLVMValueRef obj) {
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(l);
  int x = ir_cfg_index(c->cfg, bb);
  if (x <= 0 || c->cfg->blocks[x].npreds < 2) return false;
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i != l; i = LLVMGetNextInstruction(i))
    if (clobbers(c, i) || size_load(c, i, NULL)) return false;
  /* the memory object must be there in every predecessor */
  if (!LLVMIsAInstruction(obj) || !ir_dominates(c->dom, ir_cfg_index(c->cfg, LLVMGetInstructionParent(obj)), x) ||
      LLVMGetInstructionParent(obj) == bb)
    return false;
  LLVMBasicBlockRef *preds;
  int n = preds_of(c->fn, bb, &preds);
  if (n < 2) return free(preds), false;
  LLVMValueRef *in = calloc(n, sizeof *in);
  int held = 0;
  bool ok = in != NULL;
  c->budget = 200000;
  for (int k = 0; ok && k < n; k++) {
    int p = ir_cfg_index(c->cfg, preds[k]);
    if (p < 0) continue; /* unreachable: poison */
    in[k] = available(c, p, l);
    if (in[k]) held++;
    else if (c->cfg->blocks[p].nsuccs != 1) ok = false; /* a load there would run on other paths too */
  }
  if (getenv("SIZEPRE_DEBUG")) fprintf(stderr, "sizepre %s: preds %d held %d ok %d budget %d vals %d\n", LLVMGetValueName(c->fn), n, held, ok, c->budget, c->nvals);
  c->nvals = 0;
  if (!ok || held == 0) return free(in), free(preds), false;
  for (int k = 0; k < n; k++) {
    if (in[k] || ir_cfg_index(c->cfg, preds[k]) < 0) continue;
    LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(preds[k]));
    LLVMValueRef eight = LLVMConstInt(c->i64, 8, false);
    LLVMValueRef at = LLVMBuildGEP2(b, LLVMInt8TypeInContext(LLVMGetModuleContext(LLVMGetGlobalParent(c->fn))), obj,
                                    &eight, 1, "size_at");
    LLVMValueRef r = LLVMBuildLoad2(b, c->i64, at, "size_again");
    LLVMSetAlignment(r, LLVMGetAlignment(l));
    size_t nmd;
    LLVMValueMetadataEntry *md = LLVMInstructionGetAllMetadataOtherThanDebugLoc(l, &nmd);
    for (unsigned j = 0; j < nmd; j++)
      LLVMSetMetadata(r, LLVMValueMetadataEntriesGetKind(md, j),
                      LLVMMetadataAsValue(LLVMGetModuleContext(LLVMGetGlobalParent(c->fn)),
                                          LLVMValueMetadataEntriesGetMetadata(md, j)));
    if (md) LLVMDisposeValueMetadataEntries(md);
    in[k] = r;
  }
  LLVMPositionBuilderBefore(b, LLVMGetFirstInstruction(bb));
  LLVMValueRef phi = LLVMBuildPhi(b, c->i64, "size");
  for (int k = 0; k < n; k++) {
    LLVMValueRef v = in[k] ? in[k] : LLVMGetPoison(c->i64);
    LLVMBasicBlockRef from = preds[k];
    LLVMAddIncoming(phi, &v, &from, 1);
    /* a switch may reach bb from one block through several cases */
    LLVMValueRef t = LLVMGetBasicBlockTerminator(preds[k]);
    unsigned seen = 0;
    for (unsigned s = 0; s < LLVMGetNumSuccessors(t); s++)
      if (LLVMGetSuccessor(t, s) == bb && seen++) LLVMAddIncoming(phi, &v, &from, 1);
  }
  LLVMValueRef ptr = LLVMGetOperand(l, 0);
  LLVMReplaceAllUsesWith(l, phi);
  LLVMInstructionEraseFromParent(l);
  if (LLVMIsAInstruction(ptr) && !LLVMGetFirstUse(ptr)) LLVMInstructionEraseFromParent(ptr);
  free(in);
  free(preds);
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
    /* the candidates, before any change (blocks of several predecessors) */
    int nl = 0, cap = 0;
    LLVMValueRef *loads = NULL;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
        if (!size_load(&c, i, NULL)) continue;
        if (nl == cap) {
          LLVMValueRef *w = realloc(loads, (cap = cap ? 2 * cap : 16) * sizeof *w);
          if (!w) break;
          loads = w;
        }
        loads[nl++] = i;
      }
    if (nl == 0) {
      free(loads);
      continue;
    }
    tw_arena arena = {0};
    ir_cfg cfg;
    ir_dom dom;
    /* one CFG for the function: the pass adds no blocks nor edges */
    if (ir_cfg_build(&cfg, &arena, fn)) {
      ir_dom_build(&dom, &cfg);
      c.cfg = &cfg, c.dom = &dom;
      for (int k = 0; k < nl; k++) {
        LLVMValueRef obj;
        if (size_load(&c, loads[k], &obj) && pre_one(&c, b, loads[k], obj)) n++;
      }
    }
    free(c.vals);
    free(c.memo);
    free(loads);
    tw_arena_free(&arena);
  }
  LLVMDisposeBuilder(b);
  return n;
}
