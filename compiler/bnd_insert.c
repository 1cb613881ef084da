/* bnd_insert.c: the exact bounds checks of guard mode, added before LLVM's
 * pipeline (after the rewrites that want plain accesses at -O2 and up):
 * before each marked access,
 *
 *     size = mem->size_bytes          (own TBAA tag, !range min..max)
 *     br (index + bytes > size), trap, cont
 *
 * where trap is one block per function calling twasm_rt_trap with the
 * out-of-bounds code and the access's file offset as a phi (a check then
 * costs the inliner a compare and a branch, not a call).  The guard pages
 * stay as a second line of defence. */
#include "bnd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"
#include "twasm_abi.h"

typedef struct {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  LLVMTypeRef i8, i32, i64, ptr;
  unsigned md_access, md_tbaa, md_range, md_prof, md_invariant;
  LLVMValueRef size_tag, size_range, unlikely, empty;
  uint64_t min_bytes;
  /* per function */
  LLVMValueRef fn, mem_obj, trap_phi, func_phi;
  LLVMBasicBlockRef trap;
  bool in_loop;              /* the block being checked lies in a loop */
  const ir_dom *dom;         /* NULL when the function has no CFG */
  int block;                 /* the block being checked (RPO number), or -1 */
  bnd_map checked;           /* root -> ins_checked list: checks made so far */
} ins_ctx;

/* A check made of root + reach, in block (RPO number). */
typedef struct ins_checked {
  uint64_t reach;
  int block;
  struct ins_checked *next;
} ins_checked;

static LLVMValueRef md_node(LLVMContextRef c, LLVMValueRef *vals, unsigned n) {
  LLVMMetadataRef ops[3];
  for (unsigned i = 0; i < n; i++) ops[i] = LLVMValueAsMetadata(vals[i]);
  return LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, ops, n));
}

static void init(ins_ctx *c, LLVMModuleRef mod, uint64_t min_bytes, uint64_t max_bytes) {
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  *c = (ins_ctx){.ctx = ctx, .mod = mod, .b = LLVMCreateBuilderInContext(ctx), .min_bytes = min_bytes};
  c->i8 = LLVMInt8TypeInContext(ctx);
  c->i32 = LLVMInt32TypeInContext(ctx);
  c->i64 = LLVMInt64TypeInContext(ctx);
  c->ptr = LLVMPointerTypeInContext(ctx, 0);
  c->md_access = LLVMGetMDKindIDInContext(ctx, BND_MD_ACCESS, strlen(BND_MD_ACCESS));
  c->md_tbaa = LLVMGetMDKindIDInContext(ctx, "tbaa", 4);
  c->md_range = LLVMGetMDKindIDInContext(ctx, "range", 5);
  c->md_prof = LLVMGetMDKindIDInContext(ctx, "prof", 4);
  c->md_invariant = LLVMGetMDKindIDInContext(ctx, "invariant.load", 14);
  c->size_tag = low_tbaa_tag(ctx, LOW_TBAA_SIZE);
  LLVMValueRef range[] = {LLVMConstInt(c->i64, min_bytes, false), LLVMConstInt(c->i64, max_bytes + 1, false)};
  c->size_range = min_bytes <= max_bytes ? md_node(ctx, range, 2) : NULL;
  LLVMMetadataRef w[] = {LLVMMDStringInContext2(ctx, "branch_weights", 14),
                         LLVMValueAsMetadata(LLVMConstInt(c->i32, 1, false)),
                         LLVMValueAsMetadata(LLVMConstInt(c->i32, 1048575, false))};
  c->unlikely = LLVMMetadataAsValue(ctx, LLVMMDNodeInContext2(ctx, w, 3));
  c->empty = LLVMMetadataAsValue(ctx, LLVMMDNodeInContext2(ctx, NULL, 0));
}

/* The i32 operands of an access's marker: function, offset, bytes. */
static bool marker(const ins_ctx *c, LLVMValueRef ptr, uint32_t out[3]) {
  LLVMValueRef md = LLVMIsAGetElementPtrInst(ptr) ? LLVMGetMetadata(ptr, c->md_access) : NULL;
  if (!md || LLVMGetMDNodeNumOperands(md) != 3) return false;
  LLVMValueRef ops[3];
  LLVMGetMDNodeOperands(md, ops);
  for (int i = 0; i < 3; i++) {
    if (!ops[i] || !LLVMIsAConstantInt(ops[i])) return false;
    out[i] = (uint32_t)LLVMConstIntGetZExtValue(ops[i]);
  }
  return true;
}

/* The marked address of a load or store, or NULL. */
static LLVMValueRef access_ptr_of(const ins_ctx *c, LLVMValueRef inst, uint32_t m[3]) {
  LLVMValueRef ptr = LLVMIsALoadInst(inst) ? LLVMGetOperand(inst, 0)
                     : LLVMIsAStoreInst(inst) ? LLVMGetOperand(inst, 1) : NULL;
  return ptr && marker(c, ptr, m) ? ptr : NULL;
}

/* The trap block, made on first use: trap(vmctx, OOB, function, offset),
 * the function and offset phis over the branches to it (the accesses of
 * functions inlined before the checks name their own function). */
static LLVMBasicBlockRef trap_block(ins_ctx *c) {
  if (c->trap) return c->trap;
  c->trap = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "bounds_trap");
  LLVMPositionBuilderAtEnd(c->b, c->trap);
  c->func_phi = LLVMBuildPhi(c->b, c->i32, "trap_func");
  c->trap_phi = LLVMBuildPhi(c->b, c->i32, "trap_offset");
  LLVMValueRef fn = LLVMGetNamedFunction(c->mod, "twasm_rt_trap");
  LLVMValueRef args[] = {LLVMGetParam(c->fn, 0), LLVMConstInt(c->i32, TWASM_TRAP_MEMORY_OOB, false),
                         c->func_phi, c->trap_phi};
  LLVMBuildCall2(c->b, LLVMGlobalGetValueType(fn), fn, args, 4, "");
  LLVMBuildUnreachable(c->b);
  return c->trap;
}

/* The memory object (vmctx field 8), loaded once at the function's entry. */
static LLVMValueRef mem_obj(ins_ctx *c) {
  if (c->mem_obj) return c->mem_obj;
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(c->fn);
  LLVMPositionBuilderBefore(c->b, LLVMGetFirstInstruction(entry));
  LLVMValueRef eight = LLVMConstInt(c->i64, 8, false);
  LLVMValueRef at = LLVMBuildInBoundsGEP2(c->b, c->i8, LLVMGetParam(c->fn, 0), &eight, 1, "");
  c->mem_obj = LLVMBuildLoad2(c->b, c->ptr, at, "mem");
  LLVMSetMetadata(c->mem_obj, c->md_invariant, c->empty);
  return c->mem_obj;
}

/* Bytes the access reads or writes: its type's store size, or the width
 * low_memory.c noted, whichever is larger. */
static uint64_t access_bytes(LLVMValueRef inst, uint32_t noted, LLVMTargetDataRef td) {
  LLVMTypeRef t = LLVMTypeOf(LLVMIsALoadInst(inst) ? inst : LLVMGetOperand(inst, 0));
  uint64_t size = LLVMStoreSizeOfType(td, t);
  return size > noted ? size : noted;
}

/* Constant addresses inside the declared minimum need no check. */
static bool always_inside(const ins_ctx *c, LLVMValueRef index, uint64_t bytes) {
  return LLVMIsAConstantInt(index) && LLVMConstIntGetZExtValue(index) + bytes <= c->min_bytes;
}

/* An access that needs a check: index = zext(root) + k (root the i32
 * address), or index itself as root with k = 0. */
typedef struct {
  LLVMValueRef inst, index, root;
  uint64_t k, bytes;
  uint32_t m[3];
  bool is_store;
  int head;      /* first access of its group: one check covers the group */
} ins_access;

static void split_index(ins_access *a) {
  LLVMValueRef x = a->index;
  a->root = x, a->k = 0;
  if (LLVMIsABinaryOperator(x) && LLVMGetInstructionOpcode(x) == LLVMAdd &&
      LLVMIsAConstantInt(LLVMGetOperand(x, 1))) {
    a->k = LLVMConstIntGetZExtValue(LLVMGetOperand(x, 1));
    x = LLVMGetOperand(x, 0);
  }
  if (LLVMIsAZExtInst(x)) a->root = LLVMGetOperand(x, 0);
  else a->root = a->index, a->k = 0;
}

/* Whatever the embedder could see after a trap, or another trap. */
static bool has_effect(LLVMValueRef i) {
  return LLVMIsAStoreInst(i) || LLVMIsACallInst(i) || LLVMIsAFenceInst(i) || LLVMIsAAtomicRMWInst(i) ||
         LLVMIsAAtomicCmpXchgInst(i) || (LLVMIsALoadInst(i) && LLVMGetVolatile(i));
}

/* Memory never shrinks, so a check of the same root with at least this
 * reach made before (earlier in the block, or in a block that dominates
 * it: the root then holds the value checked there) proves x in bounds,
 * whatever calls or stores came between.  LLVM cannot see that across a
 * call, after which it loads the size again. */
static bool implied(const ins_ctx *c, const ins_access *x) {
  if (c->block < 0) return false;
  for (const ins_checked *e = bnd_map_get(&c->checked, x->root); e; e = e->next)
    if (e->reach >= x->k + x->bytes && (e->block == c->block || ir_dominates(c->dom, e->block, c->block)))
      return true;
  return false;
}

static void note_checked(ins_ctx *c, const ins_access *x) {
  if (c->block < 0) return;
  ins_checked *e = tw_arena_alloc(c->checked.arena, sizeof *e);
  *e = (ins_checked){.reach = x->k + x->bytes, .block = c->block, .next = bnd_map_get(&c->checked, x->root)};
  bnd_map_put(&c->checked, x->root, e);
}

/* The accesses of bb that need a check, in order, with their groups: an
 * access joins the group of the one before when both read through the
 * same root and nothing between them (the earlier one included) stores,
 * calls or checks another root.  Then one check before the group's first
 * access, of the largest end, is exact: when it fails, the accesses
 * before the first failing one were loads nobody can see, and the trap
 * block works out which one that is (its offset). */
static ins_access *needing_checks(ins_ctx *c, LLVMBasicBlockRef bb, LLVMTargetDataRef td, unsigned *n) {
  unsigned cap = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) cap++;
  ins_access *a = malloc((cap + 1) * sizeof *a);
  bool clean = false;
  *n = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); a && i; i = LLVMGetNextInstruction(i)) {
    ins_access x = {.inst = i, .is_store = LLVMIsAStoreInst(i) != NULL};
    LLVMValueRef ptr = access_ptr_of(c, i, x.m);
    if (ptr && LLVMGetNumOperands(ptr) == 2) {
      x.index = LLVMGetOperand(ptr, 1);
      x.bytes = access_bytes(i, x.m[2], td);
    }
    if (x.index) split_index(&x);
    if (!x.index || always_inside(c, x.index, x.bytes) || implied(c, &x)) {
      if (has_effect(i)) clean = false;
      continue;
    }
    note_checked(c, &x);
    const ins_access *prev = *n ? &a[*n - 1] : NULL;
    x.head = prev && clean && !prev->is_store && prev->root == x.root ? prev->head : (int)*n;
    a[(*n)++] = x;
    clean = !x.is_store;
  }
  return a;
}

/* base + reach > size; in loops as `base > size - reach` where the
 * memory's declared minimum makes that subtraction safe: the limit is then
 * computed once before the loop, and the check is one compare with the
 * address the access uses anyway (outside loops, where calls make LLVM
 * load the size again, the sum costs less).  base < 2^33 and reach small:
 * the sum cannot wrap. */
static LLVMValueRef out_of_bounds(ins_ctx *c, LLVMValueRef base, uint64_t reach, LLVMValueRef size) {
  LLVMValueRef r = LLVMConstInt(c->i64, reach, false);
  if (c->in_loop && reach <= c->min_bytes)
    return LLVMBuildICmp(c->b, LLVMIntUGT, base, LLVMBuildNUWSub(c->b, size, r, "limit"), "");
  LLVMValueRef end = LLVMBuildNUWAdd(c->b, base, r, "end");
  if (LLVMIsAInstruction(end)) LLVMSetNSW(end, true);
  return LLVMBuildICmp(c->b, LLVMIntUGT, end, size, "");
}

/* zext(root) as i64 (or the index itself when it is the root). */
static LLVMValueRef group_base(ins_ctx *c, const ins_access *a) {
  return a->root == a->index ? a->index : LLVMBuildZExt(c->b, a->root, c->i64, "");
}

/* The trap block's incoming edge from `from`: function and offset. */
static void to_trap(ins_ctx *c, LLVMBasicBlockRef from, LLVMValueRef func, LLVMValueRef offset) {
  LLVMAddIncoming(c->func_phi, &func, &from, 1);
  LLVMAddIncoming(c->trap_phi, &offset, &from, 1);
}

static LLVMValueRef u32(ins_ctx *c, uint32_t v) { return LLVMConstInt(c->i32, v, false); }

/* Which access of the group fails first (its function and offset), in a
 * block of its own on the way to the trap. */
static LLVMBasicBlockRef which(ins_ctx *c, const ins_access *g, unsigned count, LLVMValueRef size) {
  LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "bounds_which");
  LLVMPositionBuilderAtEnd(c->b, bb);
  LLVMValueRef func = u32(c, g[count - 1].m[0]), off = u32(c, g[count - 1].m[1]);
  for (unsigned j = count - 1; j-- > 0;) {
    LLVMValueRef out = out_of_bounds(c, group_base(c, &g[j]), g[j].k + g[j].bytes, size);
    func = LLVMBuildSelect(c->b, out, u32(c, g[j].m[0]), func, "");
    off = LLVMBuildSelect(c->b, out, u32(c, g[j].m[1]), off, "");
  }
  LLVMBuildBr(c->b, c->trap);
  to_trap(c, bb, func, off);
  return bb;
}

/* At the end of block `at`: trap unless every access of the group g
 * (count of them) lies in memory; g[0] continues in `cont`. */
static void emit_check(ins_ctx *c, LLVMBasicBlockRef at, LLVMBasicBlockRef cont, const ins_access *g,
                       unsigned count) {
  trap_block(c);
  LLVMValueRef obj = mem_obj(c);
  LLVMPositionBuilderAtEnd(c->b, at);
  LLVMValueRef eight = LLVMConstInt(c->i64, 8, false);
  LLVMValueRef size_at = LLVMBuildInBoundsGEP2(c->b, c->i8, obj, &eight, 1, "");
  LLVMValueRef size = LLVMBuildLoad2(c->b, c->i64, size_at, "size_bytes");
  LLVMSetMetadata(size, c->md_tbaa, c->size_tag);
  if (c->size_range) LLVMSetMetadata(size, c->md_range, c->size_range);
  uint64_t reach = g->k + g->bytes, first = reach;
  for (unsigned j = 1; j < count; j++)
    if (g[j].k + g[j].bytes > reach) reach = g[j].k + g[j].bytes;
  LLVMValueRef out = count == 1 ? out_of_bounds(c, g->index, g->bytes, size)
                                 : out_of_bounds(c, group_base(c, g), reach, size);
  LLVMBasicBlockRef to = c->trap;
  if (reach > first) to = which(c, g, count, size);
  LLVMPositionBuilderAtEnd(c->b, at);
  LLVMValueRef br = LLVMBuildCondBr(c->b, out, to, cont);
  LLVMSetMetadata(br, c->md_prof, c->unlikely);
  if (to == c->trap) to_trap(c, at, u32(c, g->m[0]), u32(c, g->m[1]));
}

void bnd_move_here(LLVMBuilderRef b, LLVMValueRef inst) {
  size_t len;
  const char *name = LLVMGetValueName2(inst, &len);
  char keep[64];
  snprintf(keep, sizeof keep, "%.*s", (int)(len < 63 ? len : 63), name);
  LLVMInstructionRemoveFromParent(inst);
  LLVMInsertIntoBuilderWithName(b, inst, keep);
}

/* Moves inst to the end of bb, keeping its name. */
static void move_to(ins_ctx *c, LLVMValueRef inst, LLVMBasicBlockRef bb) {
  LLVMPositionBuilderAtEnd(c->b, bb);
  bnd_move_here(c->b, inst);
}

/* A successor's phi rebuilt for the moved terminator: the checks noted
 * for it hold for the fresh phi (the same value), and the old pointer
 * must not stay a key (a value made later may reuse its memory and would
 * then read as checked: found as a nondeterministic missing check). */
static void phi_replaced(void *ctx, LLVMValueRef old, LLVMValueRef fresh) {
  bnd_map *checked = ctx;
  void *e = bnd_map_get(checked, old);
  if (!e) return;
  bnd_map_put(checked, fresh, e);
  bnd_map_put(checked, old, NULL);
}

/* The successors' phis of the terminator that moved from bb to last. */
static void moved_terminator(ins_ctx *c, LLVMBasicBlockRef bb, LLVMBasicBlockRef last) {
  LLVMValueRef term = LLVMGetBasicBlockTerminator(last);
  unsigned ns = term ? LLVMGetNumSuccessors(term) : 0;
  for (unsigned s = 0; s < ns; s++) {
    LLVMBasicBlockRef to = LLVMGetSuccessor(term, s);
    bool seen = false;
    for (unsigned k = 0; k < s; k++) seen |= LLVMGetSuccessor(term, k) == to;
    if (!seen) ir_retarget_phis_notify(to, bb, last, phi_replaced, &c->checked);
  }
}

/* Splits bb before the first access of each group: the group's check ends
 * the part before it.  False when out of memory. */
static bool check_block(ins_ctx *c, LLVMBasicBlockRef bb, LLVMTargetDataRef td) {
  unsigned n, nheads = 0;
  ins_access *a = needing_checks(c, bb, td, &n);
  LLVMBasicBlockRef *parts = malloc((n + 1) * sizeof *parts);
  if (!a || !parts) {
    free(a);
    free(parts);
    return false;
  }
  /* the parts first (the rest of bb moves on each time), then the checks */
  LLVMBasicBlockRef prev = bb;
  for (unsigned j = 0; j < n; j++) {
    if (a[j].head != (int)j) continue;
    parts[j] = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "cont");
    LLVMMoveBasicBlockAfter(parts[j], prev);
    unsigned next_head = j + 1;
    while (next_head < n && a[next_head].head != (int)next_head) next_head++;
    LLVMValueRef stop = next_head < n ? a[next_head].inst : NULL, next;
    for (LLVMValueRef i = a[j].inst; i != stop; i = next) {
      next = LLVMGetNextInstruction(i);
      move_to(c, i, parts[j]);
    }
    prev = parts[j];
    nheads++;
  }
  LLVMBasicBlockRef at = bb;
  for (unsigned j = 0; j < n; j++) {
    if (a[j].head != (int)j) continue;
    unsigned count = 1;
    while (j + count < n && a[j + count].head == (int)j) count++;
    emit_check(c, at, parts[j], &a[j], count);
    at = parts[j];
  }
  free(parts);
  free(a);
  if (nheads) moved_terminator(c, bb, prev);
  return true;
}

/* gep(base, 8) as the only index, a constant: the field at offset 8. */
static bool field_8(LLVMValueRef p, LLVMValueRef *base) {
  if (!LLVMIsAGetElementPtrInst(p) || LLVMGetNumOperands(p) != 2) return false;
  LLVMValueRef k = LLVMGetOperand(p, 1);
  if (!LLVMIsAConstantInt(k) || LLVMConstIntGetZExtValue(k) != 8) return false;
  *base = LLVMGetOperand(p, 0);
  return true;
}

/* Whether call i cannot write memory: an intrinsic (none grows memory),
 * or a function whose memory effects (LLVM's `memory` attribute: two
 * bits per location, the Mod bit the higher) write nothing. */
static bool reads_only(LLVMValueRef i) {
  LLVMValueRef callee = LLVMGetCalledValue(i);
  if (!callee || !LLVMIsAFunction(callee)) return false;
  if (LLVMGetIntrinsicID(callee)) return true;
  LLVMAttributeRef a = LLVMGetEnumAttributeAtIndex(callee, LLVMAttributeFunctionIndex,
                                                   LLVMGetEnumAttributeKindForName("memory", 6));
  return a && (LLVMGetEnumAttributeValue(a) & 0x2aa) == 0;
}

/* Whether loop l calls nothing that may write memory. */
static bool loop_reads_only(const ir_cfg *cfg, const ir_loop *l) {
  for (int k = 0; k < l->nbody; k++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(cfg->blocks[l->body[k]].bb); i; i = LLVMGetNextInstruction(i))
      if (LLVMIsACallInst(i) && !reads_only(i)) return false;
  return true;
}

/* Loads of the size (vmctx->mem->size_bytes) made without the size's
 * TBAA tag and range, which inlined library helpers (low_libc.c's memcmp
 * wrapper) leave out, get them where they lie in a loop that calls
 * nothing that may write memory: untagged, such a load may alias every
 * store to linear memory, so a loop that stores (kvstore's binary search,
 * counting its compares in a global) reloaded the size on every step
 * where GVN, with the tag, takes the value loaded before the loop
 * (29 Nov 2026).  Not elsewhere: in a loop that calls (interp's dispatch
 * loop) GVN then carried the size in more phis around the loop, each a
 * register (interp +99 M instructions, compress +101 M).  The tag says
 * what the load reads (vmctx field 8 is the memory object, its field 8
 * the size: twasm_abi.h), a field nothing but memory.grow's runtime call
 * writes. */
static void tag_size_loads(ins_ctx *c, LLVMValueRef fn, const ir_cfg *cfg, const ir_loops *lp) {
  /* a Wasm function's (or a wrapper's) vmctx is its swiftself parameter */
  if (!LLVMGetEnumAttributeAtIndex(fn, 1, LLVMGetEnumAttributeKindForName("swiftself", 9))) return;
  LLVMValueRef vmctx = LLVMGetParam(fn, 0);
  for (int b = 0; b < cfg->nblocks; b++) {
    const ir_loop *l = lp->innermost[b];
    int quiet = -1; /* whether l calls nothing that writes: unknown yet */
    for (LLVMValueRef i = l ? LLVMGetFirstInstruction(cfg->blocks[b].bb) : NULL; i; i = LLVMGetNextInstruction(i)) {
      LLVMValueRef obj, ctx;
      if (!LLVMIsALoadInst(i) || LLVMTypeOf(i) != c->i64 || LLVMGetVolatile(i) ||
          LLVMGetMetadata(i, c->md_tbaa) || !field_8(LLVMGetOperand(i, 0), &obj) || !LLVMIsALoadInst(obj) ||
          !field_8(LLVMGetOperand(obj, 0), &ctx) || ctx != vmctx)
        continue;
      if (quiet < 0) quiet = loop_reads_only(cfg, l);
      if (!quiet) break;
      LLVMSetMetadata(i, c->md_tbaa, c->size_tag);
      if (c->size_range && !LLVMGetMetadata(i, c->md_range)) LLVMSetMetadata(i, c->md_range, c->size_range);
    }
  }
}

bool bnd_insert_checks(LLVMModuleRef mod, const wasm_module *m) {
  if (m->nmems == 0) return true;
  /* memory never shrinks; an imported one is at least its import's minimum */
  const wasm_limits *l = &m->mems[0].limits;
  uint64_t max_pages = l->has_max && l->max < TWASM_MAX_PAGES ? l->max : TWASM_MAX_PAGES;
  ins_ctx c;
  bool ok = true;
  init(&c, mod, l->min * TWASM_PAGE_SIZE, max_pages * TWASM_PAGE_SIZE);
  LLVMTargetDataRef td = LLVMCreateTargetData(LLVMGetDataLayoutStr(mod));
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); ok && fn; fn = LLVMGetNextFunction(fn)) {
    unsigned nblocks = LLVMCountBasicBlocks(fn);
    if (LLVMCountParams(fn) == 0 || nblocks == 0) continue;
    c.fn = fn;
    c.mem_obj = c.trap_phi = c.func_phi = NULL;
    c.trap = NULL;
    LLVMBasicBlockRef *blocks = malloc(nblocks * sizeof *blocks);
    if (!blocks) {
      ok = false;
      break;
    }
    LLVMGetBasicBlocks(fn, blocks);
    tw_arena arena = {0};
    ir_cfg cfg;
    ir_dom dom;
    ir_loops lp;
    bool loops = ir_cfg_build(&cfg, &arena, fn);
    if (loops) {
      ir_dom_build(&dom, &cfg);
      ir_loops_build(&lp, &cfg, &dom);
    }
    if (loops) tag_size_loads(&c, fn, &cfg, &lp);
    c.dom = loops ? &dom : NULL;
    c.checked = (bnd_map){.arena = &arena};
    /* reachable blocks in reverse post-order (dominators first), then the rest */
    int nreached = loops ? cfg.nblocks : 0;
    for (int i = 0; ok && i < nreached; i++) {
      c.block = i;
      c.in_loop = lp.innermost[i] != NULL;
      ok = check_block(&c, cfg.blocks[i].bb, td);
    }
    for (unsigned i = 0; ok && i < nblocks; i++) {
      if (loops && ir_cfg_index(&cfg, blocks[i]) >= 0) continue;
      c.block = -1;
      c.in_loop = false;
      ok = check_block(&c, blocks[i], td);
    }
    tw_arena_free(&arena);
    free(blocks);
  }
  LLVMDisposeTargetData(td);
  LLVMDisposeBuilder(c.b);
  return ok;
}
