/* low_devirt.c: call_indirect through a sealed table as a switch of direct
 * calls.  A sealed table's contents are known (low_sealed.c), so the
 * functions a call_indirect of type T can reach are the entries of T's
 * key.  Those that are small leaves (no calls, no loops, a few dozen
 * instructions: a getter, a comparator, a virtual method of a shape, an
 * event handler) get a case of a switch on the table index, each case a
 * direct call that LLVM is told to inline; the switch's default is the
 * sealed call as before (bounds, null and type checked, an indirect call),
 * so every other index, in bounds or not, behaves and traps as it did.
 * An inlined case costs a jump through the switch's table instead of the
 * checks, the call, the callee's frame and the return: what C compilers
 * cannot do for a function pointer, a closed Wasm table allows. */
#include <string.h>

#include "ir_pass.h"
#include "low_internal.h"

/* A site switches over at most this many distinct small functions, and
 * that many table indices, so code grows by a bounded amount per site;
 * the module's growth is bounded too: the instructions of the inlined
 * copies, all sites together, stay under half the module's code (plus a
 * floor for small modules). */
#define DEVIRT_MAX_FUNCS 16u
#define DEVIRT_MAX_CASES 64u
#define DEVIRT_BUDGET_FLOOR 8192u
/* Instructions (the final end included) of a small leaf. */
#define SMALL_LEAF_CODE 40u

typedef struct low_devirt_set {
  uint32_t nfuncs, ncases;
  uint32_t code;                         /* instructions of the funcs together */
  uint32_t funcs[DEVIRT_MAX_FUNCS];
  uint32_t case_index[DEVIRT_MAX_CASES]; /* table index of each case */
  uint8_t case_func[DEVIRT_MAX_CASES];   /* its position in funcs */
} low_devirt_set;

/* The empty set: no switch at sites of this table and key. */
static low_devirt_set none;

static bool small_leaf(const wasm_func *fn) {
  if (fn->imported || fn->ncode > SMALL_LEAF_CODE) return false;
  for (uint32_t i = 0; i < fn->ncode; i++) {
    uint16_t op = fn->code[i].op;
    if (op == OP_CALL || op == OP_CALL_INDIRECT || op == OP_LOOP) return false;
  }
  return true;
}

void low_devirt_init(low_module_ctx *mc) {
  const wasm_module *m = mc->m;
  size_t n = (size_t)m->ntables * m->ntypes;
  mc->devirt = tw_arena_alloc(&mc->arena, (n + 1) * sizeof *mc->devirt);
  memset(mc->devirt, 0, (n + 1) * sizeof *mc->devirt);
  mc->small_leaf = tw_arena_alloc(&mc->arena, m->nfuncs + 1);
  uint64_t code = 0;
  for (uint32_t i = 0; i < m->nfuncs; i++) {
    mc->small_leaf[i] = mc->opt->devirt && small_leaf(&m->funcs[i]);
    code += m->funcs[i].imported ? 0 : m->funcs[i].ncode;
  }
  mc->devirt_budget = code / 2 + DEVIRT_BUDGET_FLOOR;
}

/* The small functions table t holds for key, with their indices; the
 * empty set when there are none or too many to switch over. */
static const low_devirt_set *set_of(low_module_ctx *mc, uint32_t t, uint32_t key) {
  const wasm_module *m = mc->m;
  low_devirt_set **slot = &mc->devirt[(size_t)t * m->ntypes + key];
  if (*slot) return *slot;
  *slot = &none;
  const uint32_t *image = mc->sealed_funcs[t];
  if (!image) return &none;
  low_devirt_set *s = tw_arena_alloc(&mc->arena, sizeof *s);
  s->nfuncs = s->ncases = s->code = 0;
  uint32_t size = (uint32_t)m->tables[t].limits.min;
  for (uint32_t i = 0; i < size; i++) {
    if (!image[i]) continue;
    uint32_t fi = image[i] - 1;
    if (!mc->small_leaf[fi] || low_sealed_key(m, m->funcs[fi].type_index) != key) continue;
    uint32_t k = 0;
    while (k < s->nfuncs && s->funcs[k] != fi) k++;
    if (k == DEVIRT_MAX_FUNCS || s->ncases == DEVIRT_MAX_CASES) return &none;
    if (k == s->nfuncs) {
      s->funcs[s->nfuncs++] = fi;
      s->code += m->funcs[fi].ncode;
    }
    s->case_index[s->ncases] = i;
    s->case_func[s->ncases++] = (uint8_t)k;
  }
  *slot = s;
  return s;
}

static void force_inline(low_module_ctx *mc, LLVMValueRef call) {
  unsigned kind = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
  LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(mc->ctx, kind, 0));
}

bool low_devirt_call(low_fn *f, uint32_t type_index, uint32_t table_index, LLVMValueRef index,
                     uint32_t offset) {
  low_module_ctx *mc = f->mc;
  if (!mc->sealed[table_index]) return false;
  const low_devirt_set *s = set_of(mc, table_index, low_sealed_key(mc->m, type_index));
  if (s->nfuncs == 0 || s->code > mc->devirt_budget) return false;
  mc->devirt_budget -= s->code;
  LLVMValueRef *args = low_call_pop_args(f, type_index, f->vmctx);
  LLVMBasicBlockRef other = LLVMAppendBasicBlockInContext(mc->ctx, f->fn, "devirt_other");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(mc->ctx, f->fn, "devirt_join");
  LLVMValueRef sw = LLVMBuildSwitch(f->b, index, other, s->ncases);
  LLVMSetMetadata(sw, LLVMGetMDKindIDInContext(mc->ctx, IR_MD_DEVIRT, strlen(IR_MD_DEVIRT)),
                  LLVMMetadataAsValue(mc->ctx, LLVMMDNodeInContext2(mc->ctx, NULL, 0)));
  LLVMValueRef results[DEVIRT_MAX_FUNCS + 1];
  LLVMBasicBlockRef from[DEVIRT_MAX_FUNCS + 1];
  for (uint32_t k = 0; k < s->nfuncs; k++) {
    LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(mc->ctx, f->fn, "devirt_direct");
    for (uint32_t c = 0; c < s->ncases; c++)
      if (s->case_func[c] == k) LLVMAddCase(sw, LLVMConstInt(mc->t_i32, s->case_index[c], false), bb);
    LLVMPositionBuilderAtEnd(f->b, bb);
    results[k] = low_call_emit(f, type_index, mc->callees[s->funcs[k]], args);
    force_inline(mc, results[k]);
    from[k] = bb;
    LLVMBuildBr(f->b, join);
  }
  /* Only the default case may recurse: its stack check is its own, and
   * dominates nothing after the join. */
  LLVMPositionBuilderAtEnd(f->b, other);
  bool checked = f->stack_checked;
  bool bounded = !low_stack_indirect_checked(mc, type_index, table_index);
  low_call_stack_check(f, bounded);
  f->stack_checked = checked;
  LLVMValueRef code = low_sealed_code(f, type_index, table_index, index, offset);
  results[s->nfuncs] = low_call_emit(f, type_index, code, args);
  if (low_tail_indirect(mc, f->func_index, type_index, table_index)) low_call_allow_tail(results[s->nfuncs]);
  from[s->nfuncs] = LLVMGetInsertBlock(f->b);
  LLVMBuildBr(f->b, join);
  LLVMPositionBuilderAtEnd(f->b, join);
  LLVMTypeRef ret = LLVMGetReturnType(mc->fn_types[type_index]);
  if (ret == mc->t_void) return true;
  LLVMValueRef phi = LLVMBuildPhi(f->b, ret, "devirt_result");
  LLVMAddIncoming(phi, results, from, s->nfuncs + 1);
  low_call_push_results(f, type_index, phi);
  return true;
}
