/* bnd_late.c: guard mode, after the last IR pass: the exact checks whose
 * access comes right after them are left to the guard pages.
 *
 * A check (bnd_insert.c) exists to keep LLVM's IR passes from deleting,
 * sinking or reordering an access that may fault.  Once they have run, a
 * check `br (end > size), trap, cont` whose own access is the first thing
 * in cont with an effect (every store, call, or load of linear memory
 * counts; computations, loads of the instance's own structures and the
 * frame's allocas do not) tells no more than the guard page the access
 * hits: the access reaches exactly the check's end, every linear memory
 * is reserved with PROT_NONE pages past its size for any index plus
 * offset plus width (8 GiB + 64 KiB: an i32 address, a u32 offset, 16
 * bytes at most), and memory never shrinks.  Code generation still could
 * move or drop the access, so in place of the check it gets
 *
 *   - volatile: never deleted, narrowed, widened or merged by the DAG
 *     combiner, never sunk or hoisted by the machine passes;
 *   - before it, `asm sideeffect` with a memory clobber (no instruction):
 *     a barrier no memory access crosses in either direction, whose label
 *     goes to section TWASM_PCMAP_SECTION with the access's file offset,
 *     so that a fault there names the access (runtime/rt_pcmap.c);
 *   - after it, the same barrier without a label where a store follows in
 *     the block (as code generation sees it: fall-through blocks merged),
 *     since the DAG combiner may move a store it proves disjoint above a
 *     volatile access;
 *   - before its block's terminator, the barrier where no inline asm
 *     follows it in the block: the branch folder's tail merging stops at
 *     inline asm, so the access never ends up in a tail shared with
 *     another block's same load away from its label.
 *
 * Where loop rotation or tail duplication copied an access's check into
 * every block entering the access's block (an interpreter's dispatch
 * load: checks in the preheader and the latch, the access at the header
 * through a phi of the checked indices), all the copies go together when
 * each edge's check guards exactly the access on that edge.
 *
 * A check of a group of accesses (a `bounds_which` block picks the one
 * that fails) goes when the group's accesses come first in its
 * continuation, in order, each ending where the which block tests it:
 * each then gets a label of its own (bnd_group.c).  Checks of a vector
 * store of a loaded value stay (X86's store-forwarding fix splits such a
 * copy into pieces, which would write part of a store that must trap).
 * Last, a guarded byte and the plain load of the byte before it may
 * become one 16-bit load (bnd_pair.c).  What these files share:
 * bnd_late.h. */
#include "bnd_late.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "twasm_abi.h"

/* ---- what lies between a check and its access --------------------------- */

/* An intrinsic that reads and writes no memory and returns (llvm.umin,
 * llvm.fshl, ...): the rest of the calls are effects. */
static bool pure_call(const late_ctx *c, LLVMValueRef call) {
  LLVMValueRef callee = LLVMGetCalledValue(call);
  if (!callee || !LLVMIsAFunction(callee) || !LLVMGetIntrinsicID(callee)) return false;
  LLVMAttributeRef mem = LLVMGetEnumAttributeAtIndex(callee, LLVMAttributeFunctionIndex, c->memory_kind);
  LLVMAttributeRef ret = LLVMGetEnumAttributeAtIndex(callee, LLVMAttributeFunctionIndex, c->willreturn_kind);
  return mem && LLVMGetEnumAttributeValue(mem) == 0 && ret;
}

/* Computes a value and nothing else. */
bool late_pure(const late_ctx *c, LLVMValueRef i) {
  if (LLVMIsACallInst(i)) return pure_call(c, i);
  return !(LLVMIsALoadInst(i) || LLVMIsAStoreInst(i) || LLVMIsAFenceInst(i) || LLVMIsAAtomicRMWInst(i) ||
           LLVMIsAAtomicCmpXchgInst(i) || LLVMIsAVAArgInst(i) || LLVMIsATerminatorInst(i) ||
           LLVMIsAInvokeInst(i));
}

/* What a pointer is an offset from (GEPs stripped). */
static LLVMValueRef pointer_root(LLVMValueRef p) {
  while (LLVMIsAGetElementPtrInst(p) || (LLVMIsAConstantExpr(p) && LLVMGetConstOpcode(p) == LLVMGetElementPtr))
    p = LLVMGetOperand(p, 0);
  return p;
}

/* The load of memory 0's base from the instance (vmctx field 0). */
static bool is_base_load(const late_ctx *c, LLVMValueRef v) {
  return LLVMIsALoadInst(v) && LLVMGetOperand(v, 0) == LLVMGetParam(c->fn, 0);
}

/* Memory 0's base: its load, or GVN's phi of such loads (the base
 * reloaded after a call on one path: bintrees' inlined malloc), through
 * other such phis, up to LATE_MAX_BASE_PHIS of them.  The base never
 * moves (the reservation is made once), so every load of it gives the
 * same pointer, and so does a phi of them. */
#define LATE_MAX_BASE_PHIS 16

static bool base_leaf(void *ctx, LLVMValueRef v) {
  return is_base_load(ctx, v);
}

static bool is_mem_base(const late_ctx *c, LLVMValueRef v) {
  return bnd_phi_web(v, LATE_MAX_BASE_PHIS, base_leaf, (void *)c);
}

/* A load that cannot fault on a guard page: of the instance's own
 * structures (vmctx fields, the memory object, globals, tables: pointers
 * the runtime made), of a constant global, or of the frame. */
bool late_safe_load(const late_ctx *c, LLVMValueRef i) {
  if (LLVMGetVolatile(i) || LLVMGetOrdering(i) != LLVMAtomicOrderingNotAtomic) return false;
  LLVMValueRef root = pointer_root(LLVMGetOperand(i, 0));
  if (root == LLVMGetParam(c->fn, 0) || LLVMIsAGlobalVariable(root) || LLVMIsAAllocaInst(root)) return true;
  return LLVMIsALoadInst(root) && !is_mem_base(c, root) && LLVMGetTypeKind(LLVMTypeOf(root)) == LLVMPointerTypeKind;
}

/* A store nobody can see after a trap: to the frame. */
bool late_frame_store(LLVMValueRef i) {
  return !LLVMGetVolatile(i) && LLVMIsAAllocaInst(pointer_root(LLVMGetOperand(i, 1)));
}

/* ---- the access a check guards ----------------------------------------- */

/* v as x + k (adds of constants peeled; i32 adds only with nuw, so that
 * the sum is exact). */
LLVMValueRef late_peel(LLVMValueRef v, int64_t *k) {
  *k = 0;
  while (LLVMIsABinaryOperator(v) && LLVMGetInstructionOpcode(v) == LLVMAdd &&
         LLVMIsAConstantInt(LLVMGetOperand(v, 1)) && LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMIntegerTypeKind) {
    bool wide = LLVMGetIntTypeWidth(LLVMTypeOf(v)) == 64;
    if (!wide && !LLVMGetNUW(v)) break;
    *k += LLVMConstIntGetSExtValue(LLVMGetOperand(v, 1));
    v = LLVMGetOperand(v, 0);
  }
  return v;
}

/* v as x + k with x NULL for a constant. */
static LLVMValueRef peel_const(LLVMValueRef v, int64_t *k) {
  v = late_peel(v, k);
  if (!LLVMIsAConstantInt(v)) return v;
  *k += LLVMConstIntGetSExtValue(v);
  return NULL;
}

/* A phi of addresses whose every incoming value is mem_base + x + k where
 * an i64 phi q of the same block has x + k - s on the same edge (s one
 * constant for all edges; x NULL where both are constants): the address
 * is mem_base + q + s on every way in.  GVN makes such pairs where it
 * carries an address and its index around a loop (vm's `frames[fp]`
 * pointer and index, reloaded where fp changes). */
static bool paired_phi(const late_ctx *c, LLVMValueRef p, LLVMValueRef *index, int64_t *k) {
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(p);
  unsigned n = LLVMCountIncoming(p);
  for (LLVMValueRef q = LLVMGetFirstInstruction(bb); q && LLVMIsAPHINode(q); q = LLVMGetNextInstruction(q)) {
    LLVMTypeRef t = LLVMTypeOf(q);
    if (q == p || LLVMGetTypeKind(t) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(t) != 64) continue;
    bool same = true;
    int64_t shift = 0;
    for (unsigned e = 0; e < n && same; e++) {
      LLVMValueRef in = LLVMGetIncomingValue(p, e), at, x;
      LLVMBasicBlockRef from = LLVMGetIncomingBlock(p, e);
      int64_t kp, kq;
      same = !LLVMIsAPHINode(in) && late_split_address(c, in, &at, &kp);
      LLVMValueRef qin = same ? late_on_edge(q, bb, from) : NULL;
      same = same && qin && (x = peel_const(qin, &kq)) == at && (e == 0 || kp - kq == shift);
      shift = kp - kq;
    }
    if (same) {
      *index = q, *k = shift;
      return true;
    }
  }
  return false;
}

/* A linear-memory access's address as mem_base + index + k, index an i64
 * value (NULL: none); false for other forms. */
bool late_split_address(const late_ctx *c, LLVMValueRef p, LLVMValueRef *index, int64_t *k) {
  *index = NULL, *k = 0;
  if (LLVMIsAPHINode(p) && LLVMGetTypeKind(LLVMTypeOf(p)) == LLVMPointerTypeKind && !is_mem_base(c, p))
    return paired_phi(c, p, index, k);
  while (LLVMIsAGetElementPtrInst(p)) {
    if (LLVMGetNumOperands(p) != 2) return false;
    uint64_t scale = LLVMABISizeOfType(c->td, LLVMGetGEPSourceElementType(p));
    LLVMValueRef x = LLVMGetOperand(p, 1);
    if (LLVMIsAConstantInt(x)) {
      *k += LLVMConstIntGetSExtValue(x) * (int64_t)scale;
    } else {
      LLVMTypeRef t = LLVMTypeOf(x);
      if (*index || scale != 1 || LLVMGetTypeKind(t) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(t) != 64)
        return false;
      int64_t more;
      *index = late_peel(x, &more);
      *k += more;
    }
    p = LLVMGetOperand(p, 0);
  }
  return is_mem_base(c, p);
}

/* Where access i ends: mem_base + *index + *end (index NULL: none). */
bool late_access_end(const late_ctx *c, LLVMValueRef i, LLVMValueRef *index, int64_t *end) {
  bool store = LLVMIsAStoreInst(i) != NULL;
  if (LLVMGetVolatile(i) || LLVMGetOrdering(i) != LLVMAtomicOrderingNotAtomic) return false;
  if (!late_split_address(c, LLVMGetOperand(i, store ? 1 : 0), index, end)) return false;
  *end += (int64_t)LLVMStoreSizeOfType(c->td, LLVMTypeOf(store ? LLVMGetOperand(i, 0) : i));
  return true;
}

/* ---- equal low halves ---------------------------------------------------- */

/* v's low 32 bits as those of the returned root plus *k (mod 2^32; root
 * NULL: the constant *k), through truncations to i32, zero extensions of
 * an i32, `and` with 0xffffffff and adds of a constant (flags or not:
 * sums mod 2^32 are exact).  Other values are their own root. */
static LLVMValueRef low32(LLVMValueRef v, uint32_t *k) {
  *k = 0;
  for (int steps = 0; steps < 16; steps++) {
    LLVMTypeRef t = LLVMTypeOf(v);
    if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(t) < 32) return v;
    if (LLVMIsAConstantInt(v)) {
      *k += (uint32_t)LLVMConstIntGetZExtValue(v);
      return NULL;
    }
    if (LLVMIsATruncInst(v) && LLVMGetIntTypeWidth(t) == 32) {
      v = LLVMGetOperand(v, 0);
    } else if (LLVMIsAZExtInst(v) && LLVMGetIntTypeWidth(LLVMTypeOf(LLVMGetOperand(v, 0))) == 32) {
      v = LLVMGetOperand(v, 0);
    } else if (LLVMIsABinaryOperator(v) && LLVMGetInstructionOpcode(v) == LLVMAnd &&
               LLVMIsAConstantInt(LLVMGetOperand(v, 1)) &&
               (LLVMConstIntGetZExtValue(LLVMGetOperand(v, 1)) & 0xffffffffu) == 0xffffffffu) {
      v = LLVMGetOperand(v, 0);
    } else if (LLVMIsABinaryOperator(v) && LLVMGetInstructionOpcode(v) == LLVMAdd &&
               LLVMIsAConstantInt(LLVMGetOperand(v, 1))) {
      *k += (uint32_t)LLVMConstIntGetZExtValue(LLVMGetOperand(v, 1));
      v = LLVMGetOperand(v, 0);
    } else {
      return v;
    }
  }
  return v;
}

#define LOW_MAX_HYP 4

typedef struct {
  LLVMValueRef a[LOW_MAX_HYP], b[LOW_MAX_HYP];
  uint32_t d[LOW_MAX_HYP];
  int n;
} low_hyp;

/* Whether lo(a) == lo(b) + d mod 2^32 wherever both are defined.  Two
 * phis of one block are taken by induction over the block's visits (both
 * take their values on the same visit, so a use of either anywhere reads
 * the same visit's pair): assumed for the pair, proved on every edge in
 * (LLVM's i32 counter next to its i64 one: `trunc(iv) == iv32`). */
static bool low_equal(LLVMValueRef a, LLVMValueRef b, uint32_t d, low_hyp *h, int depth) {
  uint32_t ka, kb;
  LLVMValueRef ra = low32(a, &ka), rb = low32(b, &kb);
  uint32_t delta = kb + d - ka; /* ra == rb + delta is what remains */
  if (ra == rb) return delta == 0;
  if (!ra || !rb) return false;
  for (int i = 0; i < h->n; i++)
    if ((h->a[i] == ra && h->b[i] == rb && h->d[i] == delta) ||
        (h->a[i] == rb && h->b[i] == ra && h->d[i] == (uint32_t)0 - delta))
      return true;
  if (!LLVMIsAPHINode(ra) || !LLVMIsAPHINode(rb) || depth >= 3 || h->n == LOW_MAX_HYP) return false;
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(ra);
  if (LLVMGetInstructionParent(rb) != bb || LLVMCountIncoming(ra) != LLVMCountIncoming(rb)) return false;
  int at = h->n++;
  h->a[at] = ra, h->b[at] = rb, h->d[at] = delta;
  bool ok = true;
  for (unsigned e = 0; e < LLVMCountIncoming(ra) && ok; e++) {
    LLVMBasicBlockRef from = LLVMGetIncomingBlock(ra, e);
    LLVMValueRef inb = late_on_edge(rb, bb, from);
    ok = inb && low_equal(LLVMGetIncomingValue(ra, e), inb, delta, h, depth + 1);
  }
  h->n = at;
  return ok;
}

/* An i64 value below 2^32 by its form: zext of an i32, or `and` with
 * 0xffffffff; its low half then is all of it. */
static bool u32_form(LLVMValueRef v) {
  if (LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(LLVMTypeOf(v)) != 64)
    return false;
  if (LLVMIsAZExtInst(v)) {
    LLVMTypeRef t = LLVMTypeOf(LLVMGetOperand(v, 0));
    return LLVMGetTypeKind(t) == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) <= 32;
  }
  return LLVMIsABinaryOperator(v) && LLVMGetInstructionOpcode(v) == LLVMAnd &&
         LLVMIsAConstantInt(LLVMGetOperand(v, 1)) && LLVMConstIntGetZExtValue(LLVMGetOperand(v, 1)) == 0xffffffffu;
}

/* Whether the i64 values a and b are equal: both below 2^32 by their
 * form, their low halves equal (json's whitespace loops: the preheader
 * checks zext(trunc(iv) + 1), the header's phi starts at zext(iv32 + 1)
 * of the i32 counter LLVM keeps beside iv). */
static bool same_u32(LLVMValueRef a, LLVMValueRef b) {
  low_hyp h = {.n = 0};
  return u32_form(a) && u32_form(b) && low_equal(a, b, 0, &h, 0);
}

/* Whether check ch is on mem_base + index (index NULL: a constant end),
 * up to *reach: it traps iff index + reach > size, sums exact (addresses
 * are the Wasm address plus offset, below 2^33). */
static bool check_reach(const bnd_check *ch, LLVMValueRef index, int64_t *reach) {
  int64_t d;
  LLVMValueRef end = late_peel(ch->end, &d);
  if (!index) {
    if (!LLVMIsAConstantInt(end)) return false;
    d += (int64_t)LLVMConstIntGetZExtValue(end);
  } else if (ch->narrow) {
    /* an i32 end: the access indexes by the zero extension of it plus a
     * constant (an exact i32 add: LLVM compares `i < size - 2` for the
     * index `i + 1` of the next iteration) */
    int64_t more;
    if (!LLVMIsAZExtInst(index) || late_peel(LLVMGetOperand(index, 0), &more) != end) return false;
    d -= more;
  } else if (index != end && !same_u32(index, end)) {
    /* an i64 index a constant past the check's (LLVM's widened counter:
     * the next iteration's index iv + 1 checked as `size - 1 > iv`) */
    int64_t more;
    if (late_peel(index, &more) != end || more == 0) return false;
    d -= more;
  }
  *reach = d + ch->plus;
  return true;
}

/* Whether the access i ends where check ch does. */
static bool reaches(const late_ctx *c, LLVMValueRef i, const bnd_check *ch) {
  LLVMValueRef index;
  int64_t end, reach;
  return late_access_end(c, i, &index, &end) && check_reach(ch, index, &reach) && end == reach;
}

/* The block whose terminator is the only branch to bb, or NULL. */
static LLVMBasicBlockRef single_pred(LLVMBasicBlockRef bb) {
  LLVMUseRef u = LLVMGetFirstUse(LLVMBasicBlockAsValue(bb));
  if (!u || LLVMGetNextUse(u)) return NULL;
  LLVMValueRef term = LLVMGetUser(u);
  return LLVMIsAInstruction(term) && LLVMIsATerminatorInst(term) ? LLVMGetInstructionParent(term) : NULL;
}

bool late_is_pinned(const late_ctx *c, LLVMValueRef br) {
  for (unsigned k = 0; k < c->npinned; k++)
    if (c->pinned[k] == br) return true;
  return false;
}

/* The immediate dominator of bb (the function's CFG built at the first
 * call), or NULL.  Built once per function: the late stage only deletes
 * edges and trap blocks, which keeps every dominance it found true. */
static LLVMBasicBlockRef late_idom(late_ctx *c, LLVMBasicBlockRef bb) {
  if (c->dom_state == 0) {
    c->dom_state = ir_cfg_build(&c->cfg, &c->arena, c->fn) ? 1 : -1;
    if (c->dom_state > 0) ir_dom_build(&c->dom, &c->cfg);
  }
  int k = c->dom_state > 0 ? ir_cfg_index(&c->cfg, bb) : -1;
  return k > 0 ? c->cfg.blocks[c->dom.idom[k]].bb : NULL;
}

/* An access of linear memory before load on every way to it (earlier in
 * its block, or in a block dominating it), on the same index, ending at
 * least where load does: where it runs without fault (or, left to a guard
 * page, faults first), memory, which never shrinks, holds the load too.
 * Volatile ones count: a guarded access still runs before the load.  A
 * dominating block D is enough, joins between included: the index's
 * definition dominates D (D uses it), so after its last run before the
 * load every way on passes D, whose access then read that same value
 * (a way from there around D would give one from the entry to the load
 * around D).  A hash table's rehash copies an entry whose 4-byte tag and
 * fields it read before the probe loop, a join away. */
static bool after_access(late_ctx *c, LLVMValueRef load, LLVMValueRef index, int64_t end) {
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(load);
  LLVMValueRef i = LLVMGetPreviousInstruction(load);
  for (int hops = 0; hops < 32; hops++) {
    for (; i; i = LLVMGetPreviousInstruction(i)) {
      bool store = LLVMIsAStoreInst(i) != NULL;
      if ((!store && !LLVMIsALoadInst(i)) || LLVMGetOrdering(i) != LLVMAtomicOrderingNotAtomic) continue;
      LLVMValueRef at;
      int64_t e;
      if (!late_split_address(c, LLVMGetOperand(i, store ? 1 : 0), &at, &e) || at != index) continue;
      e += (int64_t)LLVMStoreSizeOfType(c->td, LLVMTypeOf(store ? LLVMGetOperand(i, 0) : i));
      if (e >= end) return true;
    }
    LLVMBasicBlockRef up = single_pred(bb);
    if (!up) up = late_idom(c, bb);
    if (!up || up == bb) return false;
    bb = up;
    i = LLVMGetLastInstruction(bb);
  }
  return false;
}

/* A load of linear memory proved inside memory: by an earlier access
 * (after_access), or by a check kept in place: one on its index with at
 * least its end, whose way on (the edge into its continuation, which only
 * it enters) dominates the load (memory never shrinks; the index's
 * definition dominates the check, so after its last run before the load
 * every way on passes that edge, as for after_access's accesses), other
 * than the check being removed (the load would then fault before the
 * access that names the trap).  The walk goes up through single
 * predecessors and, at a join, to the immediate dominator (a loop's
 * header: a check LICM left before the loop proves the loop's loads of
 * the same fields; 30 Nov 2026, SQLite's binary search over a page's
 * cells).  That check is pinned: it may not be removed later. */
bool late_anchored(late_ctx *c, LLVMValueRef load) {
  LLVMValueRef index;
  int64_t end, reach;
  if (!late_access_end(c, load, &index, &end)) return false;
  if (after_access(c, load, index, end)) return true;
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(load), pred, up;
  for (int hops = 0; hops < 64; hops++, bb = up) {
    pred = single_pred(bb);
    up = pred ? pred : late_idom(c, bb);
    if (!up || up == bb) return false;
    if (!pred) continue;
    LLVMValueRef term = LLVMGetBasicBlockTerminator(pred);
    bnd_check ch;
    if (term == c->self || !bnd_check_match(term, &ch) || LLVMGetSuccessor(term, !ch.trap_succ) != bb) continue;
    if (!check_reach(&ch, index, &reach) || reach < end) continue;
    if (late_is_pinned(c, term)) return true;
    LLVMValueRef *p = realloc(c->pinned, (c->npinned + 1) * sizeof *p);
    if (!p) return false;
    c->pinned = p;
    c->pinned[c->npinned++] = term;
    return true;
  }
  return false;
}

/* A vector store of a loaded value: X86's store-forwarding fix may split
 * the copy into pieces. */
bool late_copies_vector(LLVMValueRef i) {
  if (!LLVMIsAStoreInst(i)) return false;
  LLVMValueRef v = LLVMGetOperand(i, 0);
  return LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMVectorTypeKind && LLVMIsALoadInst(v);
}

/* The call to twasm_rt_trap(vmctx, OOB, func, offset) at the head of trap
 * (phis only before it), and the offset it gets from block `from`. */
static bool trap_offset(LLVMBasicBlockRef trap, LLVMBasicBlockRef from, uint32_t *offset) {
  LLVMValueRef i = LLVMGetFirstInstruction(trap);
  while (i && LLVMIsAPHINode(i)) i = LLVMGetNextInstruction(i);
  if (!i || !LLVMIsACallInst(i) || LLVMGetNumArgOperands(i) != 4) return false;
  LLVMValueRef code = LLVMGetOperand(i, 1), off = LLVMGetOperand(i, 3);
  if (strcmp(ir_callee_name(i), "twasm_rt_trap") || !LLVMIsAConstantInt(code) ||
      LLVMConstIntGetZExtValue(code) != TWASM_TRAP_MEMORY_OOB)
    return false;
  if (LLVMIsAPHINode(off) && LLVMGetInstructionParent(off) == trap) {
    LLVMValueRef in = NULL;
    for (unsigned k = 0; k < LLVMCountIncoming(off); k++)
      if (LLVMGetIncomingBlock(off, k) == from) in = LLVMGetIncomingValue(off, k);
    off = in;
  }
  if (!off || !LLVMIsAConstantInt(off)) return false;
  *offset = (uint32_t)LLVMConstIntGetZExtValue(off);
  return true;
}

/* bb is the only block that branches to `to`. */
bool late_only_from(LLVMBasicBlockRef to, LLVMValueRef term) {
  LLVMUseRef u = LLVMGetFirstUse(LLVMBasicBlockAsValue(to));
  if (!u || LLVMGetUser(u) != term) return false;
  for (u = LLVMGetNextUse(u); u; u = LLVMGetNextUse(u))
    if (LLVMGetUser(u) != term) return false;
  return true;
}

/* The checks a scan for an access may pass (LLVM sinks loads past the
 * checks of later accesses); a load found behind them moves up. */
#define LATE_MAX_CROSSED 8

/* The continuation of check br when it traps straight to the trap block
 * and is the only way into its continuation, else NULL. */
static LLVMBasicBlockRef check_cont(late_ctx *c, LLVMValueRef br, uint32_t *offset) {
  bnd_check ch;
  if (!bnd_check_match(br, &ch) || late_is_pinned(c, br)) return NULL;
  LLVMBasicBlockRef trap = LLVMGetSuccessor(br, ch.trap_succ), cont = LLVMGetSuccessor(br, !ch.trap_succ);
  if (trap == cont || !trap_offset(trap, LLVMGetInstructionParent(br), offset) || !late_only_from(cont, br))
    return NULL;
  return cont;
}

/* v's definition and the ones it uses in the blocks `crossed`, operands
 * first, into order[]; false when one of them is not a plain computation. */
static bool collect_defs(late_ctx *c, LLVMValueRef v, LLVMBasicBlockRef *crossed, int ncrossed,
                         LLVMValueRef *order, int *n, int cap) {
  if (!LLVMIsAInstruction(v)) return true;
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(v);
  bool inside = false;
  for (int k = 0; k < ncrossed; k++) inside |= crossed[k] == bb;
  if (!inside) return true;
  for (int k = 0; k < *n; k++)
    if (order[k] == v) return true;
  if (LLVMIsAPHINode(v) || !late_pure(c, v) || LLVMIsACallInst(v) || *n == cap) return false;
  for (int k = 0; k < LLVMGetNumOperands(v); k++)
    if (!collect_defs(c, LLVMGetOperand(v, k), crossed, ncrossed, order, n, cap)) return false;
  order[(*n)++] = v;
  return true;
}

static void move_before(late_ctx *c, LLVMValueRef inst, LLVMValueRef at) {
  LLVMPositionBuilderBefore(c->b, at);
  bnd_move_here(c->b, inst);
}

/* Moves load (and what its address needs from the crossed blocks) to just
 * before `at`, the first crossed check: where its own check put it. */
static bool hoist_load(late_ctx *c, LLVMValueRef load, LLVMValueRef at, LLVMBasicBlockRef *crossed, int ncrossed) {
  enum { CAP = 32 };
  LLVMValueRef order[CAP];
  int n = 0;
  if (!collect_defs(c, LLVMGetOperand(load, 0), crossed, ncrossed, order, &n, CAP)) return false;
  for (int k = 0; k < n; k++) move_before(c, order[k], at);
  move_before(c, load, at);
  return true;
}

/* The continuation of br when it is a branch to another trap (the
 * stack check before a call: twasm_rt_trap, then unreachable) and the
 * only way into that continuation, else NULL.  A load behind it moves up
 * above it, where its own check was: it then faults before that trap can
 * happen, as the Wasm order has it. */
static LLVMBasicBlockRef other_trap_cont(LLVMValueRef br) {
  if (!LLVMIsABranchInst(br) || !LLVMIsConditional(br)) return NULL;
  for (unsigned s = 0; s < 2; s++) {
    LLVMBasicBlockRef trap = LLVMGetSuccessor(br, s), cont = LLVMGetSuccessor(br, !s);
    LLVMValueRef i = LLVMGetFirstInstruction(trap), term = LLVMGetBasicBlockTerminator(trap);
    if (trap == cont || !term || !LLVMIsAUnreachableInst(term) || !i || !LLVMIsACallInst(i)) continue;
    if (!strcmp(ir_callee_name(i), "twasm_rt_trap") && late_only_from(cont, br)) return cont;
  }
  return NULL;
}

/* A read of the stack pointer (the stack check's). */
static bool reads_register(LLVMValueRef i) {
  return !strncmp(ir_callee_name(i), "llvm.read_register.", 19);
}

/* The access check br guards when it is the first effect of its
 * continuation (past other checks, for a load), else NULL; *offset: the
 * trap's. */
static LLVMValueRef guarded(late_ctx *c, LLVMValueRef br, uint32_t *offset) {
  bnd_check ch;
  LLVMBasicBlockRef bb = check_cont(c, br, offset), crossed[LATE_MAX_CROSSED];
  LLVMValueRef first_crossed = NULL;
  int ncrossed = 0;
  if (!bb) return NULL;
  bnd_check_match(br, &ch);
  c->self = br;
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i;) {
    if ((LLVMIsALoadInst(i) || LLVMIsAStoreInst(i)) && reaches(c, i, &ch)) {
      if (late_copies_vector(i)) return NULL;
      if (!ncrossed) return i;
      return LLVMIsALoadInst(i) && hoist_load(c, i, first_crossed, crossed, ncrossed) ? i : NULL;
    }
    if (LLVMIsAPHINode(i) || late_pure(c, i) || (LLVMIsALoadInst(i) && (late_safe_load(c, i) || late_anchored(c, i))) ||
        (LLVMIsAStoreInst(i) && late_frame_store(i)) || reads_register(i)) {
      i = LLVMGetNextInstruction(i);
      continue;
    }
    uint32_t other;
    LLVMBasicBlockRef next = ncrossed < LATE_MAX_CROSSED && LLVMIsATerminatorInst(i) ? check_cont(c, i, &other) : NULL;
    if (!next && ncrossed < LATE_MAX_CROSSED && LLVMIsATerminatorInst(i)) next = other_trap_cont(i);
    if (!next) return NULL;
    if (!ncrossed) first_crossed = i;
    crossed[ncrossed++] = next;
    i = LLVMGetFirstInstruction(next);
  }
  return NULL;
}

/* ---- an access at a join of checks ------------------------------------- */

/* Loop rotation and tail duplication copy an access's check into every
 * block that enters the access's block (an interpreter's dispatch load:
 * its check in the preheader and in the latch, the access at the header
 * through a phi of the checked indices).  Then no check is the only way
 * into the access's block, but each edge in is the continuation of a
 * check of the value the access indexes by on that edge, with the same
 * reach and trap offset, and nothing with an effect lies between: the
 * guard page tells as much as any of them. */

/* How many edges into a join are looked at. */
#define LATE_MAX_JOIN 32

typedef struct {
  LLVMValueRef br[LATE_MAX_JOIN];   /* the check of each edge */
  LLVMBasicBlockRef via[LATE_MAX_JOIN]; /* the block entering the join */
  int n;
} late_join;

/* A load that cannot fault: of the instance's own structures, or of linear
 * memory inside a check kept in place or an earlier access (late_anchored,
 * which pins that check).  Lua's luaV_execute reads L->hookmask, checked at
 * entry, in the preheader LLVM splits off between the check of the first
 * frame's `ci` and the frame loop's access to it: with only pure
 * computations allowed there, the rotated checks of `ci` stayed, 5
 * instructions at every return to a Lua caller (PERFORMANCE.md, "cpu17"). */
static bool proved_load(late_ctx *c, LLVMValueRef i) {
  return LLVMIsALoadInst(i) && (late_safe_load(c, i) || late_anchored(c, i));
}

/* The check above the edge from bb into its successor: bb's terminator, or
 * that of the single predecessor of a block that only computes values (and
 * loads that cannot fault) and branches on (the preheader LLVM splits off);
 * NULL when there is none. */
static LLVMValueRef edge_check(late_ctx *c, LLVMBasicBlockRef bb, LLVMBasicBlockRef to, uint32_t *offset) {
  for (int hops = 0; hops < 4; hops++) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
    bnd_check ch;
    if (bnd_check_match(term, &ch)) {
      LLVMBasicBlockRef trap = LLVMGetSuccessor(term, ch.trap_succ);
      if (late_is_pinned(c, term) || LLVMGetSuccessor(term, !ch.trap_succ) != to || trap == to ||
          !trap_offset(trap, bb, offset))
        return NULL;
      return term;
    }
    if (!LLVMIsABranchInst(term) || LLVMIsConditional(term)) return NULL;
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i != term; i = LLVMGetNextInstruction(i))
      if (LLVMIsAPHINode(i) || !(late_pure(c, i) || proved_load(c, i))) return NULL;
    LLVMBasicBlockRef pred = single_pred(bb);
    if (!pred) return NULL;
    to = bb, bb = pred;
  }
  return NULL;
}

/* The value v has on the edge from `from` into its block's join (a phi
 * there: its incoming value; else v). */
LLVMValueRef late_on_edge(LLVMValueRef v, LLVMBasicBlockRef join, LLVMBasicBlockRef from) {
  if (!v || !LLVMIsAPHINode(v) || LLVMGetInstructionParent(v) != join) return v;
  for (unsigned k = 0; k < LLVMCountIncoming(v); k++)
    if (LLVMGetIncomingBlock(v, k) == from) return LLVMGetIncomingValue(v, k);
  return NULL;
}

/* The smallest memory size a check's size load allows (its !range), or 0. */
static uint64_t min_size(const bnd_check *ch) {
  LLVMValueRef load = ch->size_load;
  if (!load || !LLVMIsALoadInst(load)) return 0;
  LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(load));
  LLVMValueRef md = LLVMGetMetadata(load, LLVMGetMDKindIDInContext(ctx, "range", 5));
  if (!md || LLVMGetMDNodeNumOperands(md) < 2) return 0;
  LLVMValueRef ops[2];
  LLVMGetMDNodeOperands(md, ops);
  return ops[0] && LLVMIsAConstantInt(ops[0]) ? LLVMConstIntGetZExtValue(ops[0]) : 0;
}

/* bb holds nothing but phis and computations (loads of the instance's
 * own structures among them) and branches on to one block. */
static bool passes_on(late_ctx *c, LLVMBasicBlockRef bb) {
  LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
  if (!term || !LLVMIsABranchInst(term) || LLVMIsConditional(term)) return false;
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i != term; i = LLVMGetNextInstruction(i))
    if (!LLVMIsAPHINode(i) && !late_pure(c, i) && !(LLVMIsALoadInst(i) && late_safe_load(c, i))) return false;
  return true;
}

/* What every path into a join needs: a check of the access's index as it
 * is on that edge, reaching exactly the access's end (the checks into
 * j), or a constant index inside the memory's smallest size (*need: the
 * largest such end).  Where an edge comes from a block that only passes
 * values on (a preheader, a latch merged from several others: an
 * interpreter's dispatch reached from the ends of its cases and of its
 * loops), the paths into that block, up to 3 deep. */
typedef struct {
  late_join j;
  uint32_t offset;
  uint64_t need, min;
} late_cover;

static bool covered(late_ctx *c, LLVMBasicBlockRef to, LLVMValueRef index, int64_t end, late_cover *cv, int depth) {
  /* an index computed in `to` would be last round's value in a check
   * on an edge back into it */
  if (index && LLVMIsAInstruction(index) && !LLVMIsAPHINode(index) && LLVMGetInstructionParent(index) == to)
    return false;
  int edges = 0;
  for (LLVMUseRef u = LLVMGetFirstUse(LLVMBasicBlockAsValue(to)); u; u = LLVMGetNextUse(u), edges++) {
    LLVMValueRef term = LLVMGetUser(u);
    if (!LLVMIsAInstruction(term) || !LLVMIsATerminatorInst(term) || cv->j.n == LATE_MAX_JOIN) return false;
    LLVMBasicBlockRef from = LLVMGetInstructionParent(term);
    for (LLVMUseRef v = LLVMGetFirstUse(LLVMBasicBlockAsValue(to)); v != u; v = LLVMGetNextUse(v))
      if (LLVMGetInstructionParent(LLVMGetUser(v)) == from) return false; /* two edges from one block */
    LLVMValueRef at = late_on_edge(index, to, from);
    if (index && !at) return false;
    if (!at || LLVMIsAConstantInt(at)) {
      int64_t k = at ? LLVMConstIntGetSExtValue(at) : 0;
      if (k >= 0 && k + end > 0) {
        if ((uint64_t)(k + end) > cv->need) cv->need = (uint64_t)(k + end);
        continue;
      }
    }
    uint32_t off = 0;
    LLVMValueRef br = edge_check(c, from, to, &off);
    if (br) {
      bnd_check ch;
      int64_t reach;
      bnd_check_match(br, &ch);
      if ((cv->j.n && off != cv->offset) || !check_reach(&ch, at, &reach) || reach != end) return false;
      for (int k = 0; k < cv->j.n; k++)
        if (cv->j.br[k] == br) return false;
      uint64_t m = min_size(&ch);
      if (!cv->j.n || m < cv->min) cv->min = m;
      cv->offset = off;
      cv->j.br[cv->j.n] = br, cv->j.via[cv->j.n] = from, cv->j.n++;
      continue;
    }
    if (depth >= 3 || !passes_on(c, from) || !covered(c, from, at, end, cv, depth + 1)) return false;
  }
  return edges > 0;
}

/* The access at the head of join bb (first effect) that every path's
 * check guards exactly, else NULL. */
static LLVMValueRef join_guarded(late_ctx *c, LLVMBasicBlockRef bb, late_join *j, uint32_t *offset) {
  int preds = 0;
  for (LLVMUseRef u = LLVMGetFirstUse(LLVMBasicBlockAsValue(bb)); u; u = LLVMGetNextUse(u)) preds++;
  if (preds < 2) return NULL;
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
    if (LLVMIsALoadInst(i) || LLVMIsAStoreInst(i)) {
      LLVMValueRef index;
      int64_t end;
      if (late_access_end(c, i, &index, &end) && !late_copies_vector(i)) {
        late_cover cv = {.j.n = 0};
        /* a load on an edge proved by one of the join's own checks would
         * fault before the access once that check goes: such a check is
         * pinned on the way (late_anchored), and the join then stays */
        LLVMValueRef self = c->self;
        c->self = NULL;
        bool ok = covered(c, bb, index, end, &cv, 0);
        c->self = self;
        for (int k = 0; ok && k < cv.j.n; k++) ok = !late_is_pinned(c, cv.j.br[k]);
        if (ok && cv.j.n > 0 && cv.need <= cv.min) {
          *j = cv.j;
          *offset = cv.offset;
          return i;
        }
      }
    }
    if (LLVMIsAPHINode(i) || late_pure(c, i) || (LLVMIsALoadInst(i) && late_safe_load(c, i)) ||
        (LLVMIsAStoreInst(i) && late_frame_store(i)))
      continue;
    return NULL;
  }
  return NULL;
}

/* ---- the rewrite -------------------------------------------------------- */

/* Deletes v and then the operands it alone used, while each computes a
 * value only (the compare, the end, the size load). */
void late_erase_dead(const late_ctx *c, LLVMValueRef v) {
  if (!v || !LLVMIsAInstruction(v) || LLVMGetFirstUse(v) || LLVMIsAPHINode(v)) return;
  if (!late_pure(c, v) && !(LLVMIsALoadInst(v) && !LLVMGetVolatile(v))) return;
  unsigned n = (unsigned)LLVMGetNumOperands(v);
  LLVMValueRef ops[4];
  if (n > 4) n = 0;
  for (unsigned k = 0; k < n; k++) ops[k] = LLVMGetOperand(v, k);
  LLVMInstructionEraseFromParent(v);
  for (unsigned k = 0; k < n; k++) late_erase_dead(c, ops[k]);
}

/* The label asm: code address and file offset into the table. */
static LLVMValueRef label_asm(const late_ctx *c, uint32_t offset) {
  char text[160];
  int len = snprintf(text, sizeof text,
                     "1:\n.pushsection %s,\"a\"\n.p2align 2\n.long 1b - .\n.long %u\n.popsection",
                     TWASM_PCMAP_SECTION, offset);
  return LLVMGetInlineAsm(c->asm_type, text, (size_t)len, "~{memory}", 9, true, false,
                          LLVMInlineAsmDialectATT, false);
}

static void call_asm(late_ctx *c, LLVMValueRef fn_asm) {
  LLVMBuildCall2(c->b, c->asm_type, fn_asm, NULL, 0, "");
}

/* Check br becomes a branch to its continuation; its trap block goes
 * when nothing else leads there (bnd_group.c, which also takes the blocks
 * after it that only that block entered). */
static void drop_check(late_ctx *c, LLVMValueRef br) {
  late_drop_group_check(c, br);
}

/* Access i, its check gone: the label (offset) before it, volatile. */
static void give_to_guard(late_ctx *c, LLVMValueRef i, uint32_t offset) {
  LLVMPositionBuilderBefore(c->b, i);
  call_asm(c, label_asm(c, offset));
  LLVMSetVolatile(i, true);
  if (c->nmarked == c->cap) {
    unsigned cap = c->cap ? 2 * c->cap : 64;
    LLVMValueRef *m = realloc(c->marked, cap * sizeof *m);
    if (!m) { /* out of memory: the barrier after it whatever follows */
      LLVMPositionBuilderBefore(c->b, LLVMGetNextInstruction(i));
      call_asm(c, c->barrier);
      return;
    }
    c->marked = m, c->cap = cap;
  }
  c->marked[c->nmarked++] = i;
}

/* The block after bb as code generation sees it: its single successor
 * when bb is that block's only predecessor (CodeGenPrepare merges them). */
static LLVMBasicBlockRef falls_into(LLVMBasicBlockRef bb) {
  LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
  if (!term || !LLVMIsABranchInst(term) || LLVMIsConditional(term)) return NULL;
  LLVMBasicBlockRef next = LLVMGetSuccessor(term, 0);
  return next != bb && late_only_from(next, term) ? next : NULL;
}

/* Whether a store may follow access i before a barrier (a call other
 * than a pure intrinsic, a fence, the end of what codegen sees as i's
 * block). */
static bool store_follows(const late_ctx *c, LLVMValueRef i) {
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(i);
  for (int hops = 0; bb && hops < 64; hops++) {
    for (i = i ? LLVMGetNextInstruction(i) : LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      if (LLVMIsAStoreInst(i) || LLVMIsAAtomicRMWInst(i) || LLVMIsAAtomicCmpXchgInst(i)) return true;
      if (LLVMIsATerminatorInst(i)) break;
      if (LLVMIsACallInst(i) && !pure_call(c, i)) return false;
      if (LLVMIsAFenceInst(i)) return false;
    }
    i = NULL;
    bb = falls_into(bb);
  }
  return bb != NULL;
}

/* Whether an inline asm (another access's label, a barrier) lies
 * between access i and its block's terminator. */
static bool asm_follows(LLVMValueRef i) {
  for (i = LLVMGetNextInstruction(i); i && !LLVMIsATerminatorInst(i); i = LLVMGetNextInstruction(i)) {
    if (LLVMIsACallInst(i) && LLVMIsAInlineAsm(LLVMGetCalledValue(i))) return true;
  }
  return false;
}

/* A barrier before the terminator of access i's block where no inline
 * asm follows i there: the branch folder's tail merging stops at inline
 * asm, so no block tail holding i is merged with another block's equal
 * tail (the same load without the label: a fault there would name no
 * access or another one; tests/spec/traps/joined.wast "pairs"). */
static void end_tail(late_ctx *c, LLVMValueRef i) {
  if (asm_follows(i)) return;
  LLVMPositionBuilderBefore(c->b, LLVMGetBasicBlockTerminator(LLVMGetInstructionParent(i)));
  call_asm(c, c->barrier);
}

static unsigned late_function(late_ctx *c, LLVMValueRef fn) {
  c->fn = fn;
  c->nmarked = c->npinned = 0;
  c->dom_state = 0;
  unsigned n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef br = LLVMGetBasicBlockTerminator(bb), access;
    uint32_t offset;
    if (br && (access = guarded(c, br, &offset)) != NULL) {
      drop_check(c, br);
      give_to_guard(c, access, offset);
      n++;
      continue;
    }
    late_group g;
    LLVMValueRef acc[LATE_MAX_GROUP];
    int count = br ? late_group_guarded(c, br, &g, acc) : 0;
    if (count) {
      late_drop_group_check(c, br);
      for (int k = 0; k < count; k++) give_to_guard(c, acc[k], g.offset[k]);
      n++;
    }
  }
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    late_join j;
    uint32_t offset = 0;
    LLVMValueRef access = join_guarded(c, bb, &j, &offset);
    if (!access) continue;
    for (int k = 0; k < j.n; k++) drop_check(c, j.br[k]);
    give_to_guard(c, access, offset);
    n += (unsigned)j.n;
  }
  n += late_drop_dominated(c);
  c->dom_state = 0;
  tw_arena_free(&c->arena);
  late_unversion(c);

  c->dom_state = 0; /* bnd_fresh_sizes and what follows change the CFG */
  tw_arena_free(&c->arena);
  bnd_fresh_sizes(fn);
  for (unsigned k = 0; k < c->nmarked; k++) {
    LLVMValueRef w = late_pair_bytes(c, c->marked[k]);
    if (w) c->marked[k] = w;
  }
  for (unsigned k = 0; k < c->nmarked; k++) late_plain_compared(c, c->marked[k]);
  for (unsigned k = 0; k < c->nmarked; k++) {
    LLVMValueRef i = c->marked[k];
    if (store_follows(c, i)) {
      LLVMPositionBuilderBefore(c->b, LLVMGetNextInstruction(i));
      call_asm(c, c->barrier);
    }
    end_tail(c, i);
  }
  if (n) {
    bnd_phi_functions(fn);
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
      late_exit_first(LLVMGetBasicBlockTerminator(bb));
  }
  /* again: after the steps since the first call, size phis may be left
   * that loads of their own can stand for (bnd_fresh.c's refresh and
   * settle).  Lua's dispatch loop carried the size in a header phi whose
   * latch loaded it at every dispatch, for one nest's test and one inner
   * loop's phi; the second call's settle step removes it (without it the
   * executable is the first call's; PERFORMANCE.md, "cpu17") */
  bnd_fresh_sizes(fn);
  return n;
}

unsigned bnd_late(LLVMModuleRef mod) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  late_ctx c = {.ctx = ctx, .b = LLVMCreateBuilderInContext(ctx), .td = LLVMGetModuleDataLayout(mod)};
  c.asm_type = LLVMFunctionType(LLVMVoidTypeInContext(ctx), NULL, 0, false);
  c.barrier = LLVMGetInlineAsm(c.asm_type, "", 0, "~{memory}", 9, true, false, LLVMInlineAsmDialectATT, false);
  c.memory_kind = LLVMGetEnumAttributeKindForName("memory", 6);
  c.willreturn_kind = LLVMGetEnumAttributeKindForName("willreturn", 10);
  unsigned n = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
    if (LLVMCountBasicBlocks(fn) && LLVMCountParams(fn)) n += late_function(&c, fn);
  free(c.marked);
  free(c.pinned);
  LLVMDisposeBuilder(c.b);
  return n;
}
