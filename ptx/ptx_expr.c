/* ptx_expr.c: type-checks a descriptor's expression nodes and lowers them
 * to exact NVPTX IR (no fast-math flags, Wasm semantics). */
#include <stdio.h>

#include "ptx_internal.h"

/* Type classes a node's result or operand may belong to. */
enum { T_BOOL = 1, T_INT = 2, T_FLOAT = 4, T_VALUE = T_INT | T_FLOAT };

/* Operand shape of each op: how many operands, which classes, and for
 * conversions how the width changes (<0 narrower, >0 wider, 0 any). */
typedef struct {
  unsigned nops;
  unsigned result, operand;
  int widen;
  bool same;               /* result and operands share one type */
} op_shape;

static const op_shape shapes[KN_E_COUNT] = {
  [KN_E_CONST] = {0, T_VALUE, 0, 0, false},
  [KN_E_PARAM] = {0, T_VALUE, 0, 0, false},
  [KN_E_IV] = {0, T_INT, 0, 0, false},
  [KN_E_LOAD] = {0, T_VALUE, 0, 0, false},
  [KN_E_ADD] = {2, T_VALUE, T_VALUE, 0, true},
  [KN_E_SUB] = {2, T_VALUE, T_VALUE, 0, true},
  [KN_E_MUL] = {2, T_VALUE, T_VALUE, 0, true},
  [KN_E_AND] = {2, T_INT, T_INT, 0, true},
  [KN_E_OR] = {2, T_INT, T_INT, 0, true},
  [KN_E_XOR] = {2, T_INT, T_INT, 0, true},
  [KN_E_SHL] = {2, T_INT, T_INT, 0, true},
  [KN_E_LSHR] = {2, T_INT, T_INT, 0, true},
  [KN_E_ASHR] = {2, T_INT, T_INT, 0, true},
  [KN_E_DIV] = {2, T_FLOAT, T_FLOAT, 0, true},
  [KN_E_MIN] = {2, T_FLOAT, T_FLOAT, 0, true},
  [KN_E_MAX] = {2, T_FLOAT, T_FLOAT, 0, true},
  [KN_E_SQRT] = {1, T_FLOAT, T_FLOAT, 0, true},
  [KN_E_ABS] = {1, T_FLOAT, T_FLOAT, 0, true},
  [KN_E_NEG] = {1, T_FLOAT, T_FLOAT, 0, true},
  [KN_E_CMP] = {2, T_BOOL, T_VALUE, 0, false},
  [KN_E_SELECT] = {3, T_VALUE, T_BOOL, 0, false},
  [KN_E_SITOFP] = {1, T_FLOAT, T_INT, 0, false},
  [KN_E_UITOFP] = {1, T_FLOAT, T_INT, 0, false},
  [KN_E_FPTRUNC] = {1, T_FLOAT, T_FLOAT, -1, false},
  [KN_E_FPEXT] = {1, T_FLOAT, T_FLOAT, 1, false},
  [KN_E_TRUNC] = {1, T_INT, T_INT, -1, false},
  [KN_E_SEXT] = {1, T_INT, T_INT | T_BOOL, 1, false},
  [KN_E_ZEXT] = {1, T_INT, T_INT | T_BOOL, 1, false},
  [KN_E_FPTOSI_SAT] = {1, T_INT, T_FLOAT, 0, false},
  [KN_E_FPTOUI_SAT] = {1, T_INT, T_FLOAT, 0, false},
  [KN_E_UDIV] = {2, T_INT, T_INT, 0, true},
  [KN_E_SDIV] = {2, T_INT, T_INT, 0, true},
  [KN_E_UREM] = {2, T_INT, T_INT, 0, true},
  [KN_E_SREM] = {2, T_INT, T_INT, 0, true},
  [KN_E_CALL] = {0, T_VALUE, T_VALUE, 0, false},  /* its arguments: kn_call_nargs */
};

static unsigned nops(const kn_expr *e) { return e->op == KN_E_CALL ? kn_call_nargs(e) : shapes[e->op].nops; }

static unsigned type_class(kn_type t) {
  switch (t) {
  case KN_I1: return T_BOOL;
  case KN_I32: case KN_I64: return T_INT;
  case KN_F32: case KN_F64: return T_FLOAT;
  default: return 0;       /* I8/I16 exist only in memory */
  }
}

bool ptx_size_check(const kn_desc *d, kn_size s, const char *what, tw_diag *diag) {
  if (s.is_param && (s.value < 0 || (uint64_t)s.value >= d->nparams))
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "kernel %s uses param %lld of %u", what,
                   (long long)s.value, d->nparams);
  return true;
}

bool ptx_addr_check(const kn_desc *d, const kn_addr *a, const char *what, tw_diag *diag) {
  if (a->nparam_terms > KN_MAX_ADDR_PARAMS)
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "kernel %s: too many address terms", what);
  for (unsigned t = 0; t < a->nparam_terms; t++)
    if (a->param_index[t] >= d->nparams)
      return tw_fail(diag, TW_DIAG_NO_OFFSET, "kernel %s: address uses param %u of %u", what,
                     a->param_index[t], d->nparams);
  if (a->align & (a->align - 1))
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "kernel %s: alignment %u is not a power of 2",
                   what, a->align);
  return true;
}

static bool check_leaf(const kn_desc *d, const kn_expr *e, unsigned i, unsigned ndims,
                       tw_diag *diag) {
  switch (e->op) {
  case KN_E_PARAM:
    if (e->param >= d->nparams)
      return tw_fail(diag, TW_DIAG_NO_OFFSET, "kernel node %u: param %u of %u", i, e->param,
                     d->nparams);
    return true;
  case KN_E_IV:
    if (e->iv >= ndims)
      return tw_fail(diag, TW_DIAG_NO_OFFSET, "kernel node %u: iv %u of %u", i, e->iv, ndims);
    return true;
  case KN_E_LOAD: {
    unsigned mem = e->load.mem == KN_I8 || e->load.mem == KN_I16 ? T_INT
                                                                    : type_class(e->load.mem);
    bool fits = e->load.mem == e->type ||
                (mem == T_INT && type_class(e->type) == T_INT &&
                 ptx_type_bytes(e->load.mem) < ptx_type_bytes(e->type));
    if (e->load.mem == KN_I1 || !fits)
      return tw_fail(diag, TW_DIAG_NO_OFFSET, "kernel node %u: load type mismatch", i);
    return ptx_addr_check(d, &e->load.addr, "load", diag);
  }
  default:
    return true;
  }
}

static bool check_operands(const kn_desc *d, const kn_expr *e, unsigned i, tw_diag *diag) {
  const op_shape *s = &shapes[e->op];
  int32_t ops[3] = {e->a, e->b, e->c};
  if (e->op == KN_E_CALL && !d->calls_bc)
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "kernel node %u: a call without its callee's code", i);
  for (unsigned k = 0; k < nops(e); k++) {
    if (ops[k] < 0 || (unsigned)ops[k] >= i)
      return tw_fail(diag, TW_DIAG_NO_OFFSET, "kernel node %u: operand %u is not an earlier node",
                     i, k);
    kn_type t = d->nodes[ops[k]].type;
    bool ok;
    if (e->op == KN_E_SELECT) ok = k == 0 ? t == KN_I1 : t == e->type;
    else if (e->op == KN_E_CALL) ok = (type_class(t) & T_VALUE) != 0;
    else if (e->op == KN_E_CMP) ok = (type_class(t) & T_VALUE) && t == d->nodes[e->a].type;
    else if (s->same) ok = t == e->type;
    else {
      long diff = (long)ptx_type_bytes(e->type) - (long)ptx_type_bytes(t);
      ok = (type_class(t) & s->operand) &&
           (s->widen == 0 || (s->widen < 0 ? diff < 0 : diff > 0 || t == KN_I1));
    }
    if (!ok)
      return tw_fail(diag, TW_DIAG_NO_OFFSET, "kernel node %u: operand %u has the wrong type", i,
                     k);
  }
  if (e->op >= KN_E_UDIV && e->op <= KN_E_SREM) {
    /* a GPU division by 0 gives garbage where Wasm traps */
    const kn_expr *dv = &d->nodes[e->b];
    unsigned bits = ptx_type_bytes(e->type) * 8;
    uint64_t mask = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    bool is_signed = e->op == KN_E_SDIV || e->op == KN_E_SREM;
    if (dv->op != KN_E_CONST || (dv->bits & mask) == 0 || (is_signed && (dv->bits & mask) == mask))
      return tw_fail(diag, TW_DIAG_NO_OFFSET, "kernel node %u: divisor that may trap", i);
  }
  if (e->op == KN_E_CMP) {
    bool float_pred = e->cmp >= KN_CMP_OEQ;
    if (e->cmp >= KN_CMP_COUNT || float_pred != (type_class(d->nodes[e->a].type) == T_FLOAT))
      return tw_fail(diag, TW_DIAG_NO_OFFSET, "kernel node %u: predicate does not fit", i);
  }
  return true;
}

bool ptx_expr_check(const kn_desc *d, int32_t root, tw_diag *diag) {
  unsigned ndims = d->kind == KN_MAP ? d->map.ndims : 1;
  if (root < 0 || (unsigned)root >= d->nnodes || !d->nodes)
    return tw_fail(diag, TW_DIAG_NO_OFFSET, "kernel value node %d out of range", (int)root);
  for (unsigned i = 0; i <= (unsigned)root; i++) {
    const kn_expr *e = &d->nodes[i];
    if ((unsigned)e->op >= KN_E_COUNT || !(type_class(e->type) & shapes[e->op].result))
      return tw_fail(diag, TW_DIAG_NO_OFFSET, "kernel node %u: bad op or result type", i);
    if (!check_leaf(d, e, i, ndims, diag) || !check_operands(d, e, i, diag)) return false;
  }
  return true;
}

/* ---- lowering ----------------------------------------------------------- */

static const LLVMIntPredicate int_preds[] = {
  [KN_CMP_EQ] = LLVMIntEQ, [KN_CMP_NE] = LLVMIntNE, [KN_CMP_SLT] = LLVMIntSLT,
  [KN_CMP_SLE] = LLVMIntSLE, [KN_CMP_SGT] = LLVMIntSGT, [KN_CMP_SGE] = LLVMIntSGE,
  [KN_CMP_ULT] = LLVMIntULT, [KN_CMP_ULE] = LLVMIntULE, [KN_CMP_UGT] = LLVMIntUGT,
  [KN_CMP_UGE] = LLVMIntUGE,
};

static const LLVMRealPredicate real_preds[] = {
  [KN_CMP_OEQ] = LLVMRealOEQ, [KN_CMP_UNE] = LLVMRealUNE, [KN_CMP_OLT] = LLVMRealOLT,
  [KN_CMP_OLE] = LLVMRealOLE, [KN_CMP_OGT] = LLVMRealOGT, [KN_CMP_OGE] = LLVMRealOGE,
  [KN_CMP_ONE] = LLVMRealONE, [KN_CMP_UEQ] = LLVMRealUEQ, [KN_CMP_ULT_F] = LLVMRealULT,
  [KN_CMP_ULE_F] = LLVMRealULE, [KN_CMP_UGT_F] = LLVMRealUGT, [KN_CMP_UGE_F] = LLVMRealUGE,
  [KN_CMP_ORD] = LLVMRealORD, [KN_CMP_UNO] = LLVMRealUNO,
};

static const char *fsuffix(kn_type t) { return t == KN_F32 ? "f32" : "f64"; }
static const char *isuffix(kn_type t) { return t == KN_I32 ? "i32" : "i64"; }

static LLVMValueRef float_call(ptx_gen *g, const char *fn, kn_type t, LLVMValueRef *args,
                               unsigned n) {
  char name[48];
  snprintf(name, sizeof name, "llvm.%s.%s", fn, fsuffix(t));
  return ptx_call(g, name, ptx_type(g, t), args, n);
}

static LLVMValueRef build_const(ptx_gen *g, const kn_expr *e) {
  if (e->type == KN_F32)
    return LLVMConstBitCast(LLVMConstInt(g->i32, e->bits & 0xffffffffu, false), g->f32);
  if (e->type == KN_F64) return LLVMConstBitCast(LLVMConstInt(g->i64, e->bits, false), g->f64);
  return LLVMConstInt(ptx_type(g, e->type), e->bits, false);
}

/* Params arrive as i64 slots: i32 in the low half, floats as bit patterns. */
static LLVMValueRef build_param(ptx_gen *g, const kn_expr *e) {
  LLVMValueRef p = g->params[e->param];
  switch (e->type) {
  case KN_I32: return LLVMBuildTrunc(g->b, p, g->i32, "");
  case KN_F32: return LLVMBuildBitCast(g->b, LLVMBuildTrunc(g->b, p, g->i32, ""), g->f32, "");
  case KN_F64: return LLVMBuildBitCast(g->b, p, g->f64, "");
  default: return p;
  }
}

LLVMValueRef ptx_expr_extend(ptx_gen *g, const kn_expr *e, LLVMValueRef v) {
  if (e->load.mem == e->type) return v;
  return e->load.sign ? LLVMBuildSExt(g->b, v, ptx_type(g, e->type), "")
                      : LLVMBuildZExt(g->b, v, ptx_type(g, e->type), "");
}

static LLVMValueRef build_load(ptx_gen *g, const kn_expr *e, const LLVMValueRef *ivs) {
  LLVMValueRef p = ptx_addr(g, &e->load.addr, ivs);
  unsigned align = ptx_access_align(g, &e->load.addr, e->load.mem);
  LLVMValueRef v = ptx_load(g, ptx_type(g, e->load.mem), p, align);
  return ptx_expr_extend(g, e, v);
}

/* Wasm shifts use the count modulo the width; LLVM's would be poison. */
static LLVMValueRef shift_count(ptx_gen *g, const kn_expr *e, LLVMValueRef n) {
  unsigned bits = ptx_type_bytes(e->type) * 8;
  return LLVMBuildAnd(g->b, n, LLVMConstInt(ptx_type(g, e->type), bits - 1, false), "");
}

static LLVMValueRef build_arith(ptx_gen *g, const kn_expr *e, LLVMValueRef a, LLVMValueRef b) {
  bool fl = type_class(e->type) == T_FLOAT;
  switch (e->op) {
  case KN_E_ADD: return fl ? LLVMBuildFAdd(g->b, a, b, "") : LLVMBuildAdd(g->b, a, b, "");
  case KN_E_SUB: return fl ? LLVMBuildFSub(g->b, a, b, "") : LLVMBuildSub(g->b, a, b, "");
  case KN_E_MUL: return fl ? LLVMBuildFMul(g->b, a, b, "") : LLVMBuildMul(g->b, a, b, "");
  case KN_E_AND: return LLVMBuildAnd(g->b, a, b, "");
  case KN_E_OR: return LLVMBuildOr(g->b, a, b, "");
  case KN_E_XOR: return LLVMBuildXor(g->b, a, b, "");
  case KN_E_SHL: return LLVMBuildShl(g->b, a, shift_count(g, e, b), "");
  case KN_E_LSHR: return LLVMBuildLShr(g->b, a, shift_count(g, e, b), "");
  case KN_E_ASHR: return LLVMBuildAShr(g->b, a, shift_count(g, e, b), "");
  case KN_E_DIV: return LLVMBuildFDiv(g->b, a, b, "");
  case KN_E_UDIV: return LLVMBuildUDiv(g->b, a, b, "");
  case KN_E_SDIV: return LLVMBuildSDiv(g->b, a, b, "");
  case KN_E_UREM: return LLVMBuildURem(g->b, a, b, "");
  case KN_E_SREM: return LLVMBuildSRem(g->b, a, b, "");
  default: break;
  }
  LLVMValueRef args[2] = {a, b};
  return float_call(g, e->op == KN_E_MIN ? "minimum" : "maximum", e->type, args, 2);
}

static LLVMValueRef build_convert(ptx_gen *g, const kn_expr *e, LLVMValueRef a, kn_type from) {
  LLVMTypeRef to = ptx_type(g, e->type);
  switch (e->op) {
  case KN_E_SITOFP: return LLVMBuildSIToFP(g->b, a, to, "");
  case KN_E_UITOFP: return LLVMBuildUIToFP(g->b, a, to, "");
  case KN_E_FPTRUNC: return LLVMBuildFPTrunc(g->b, a, to, "");
  case KN_E_FPEXT: return LLVMBuildFPExt(g->b, a, to, "");
  case KN_E_TRUNC: return LLVMBuildTrunc(g->b, a, to, "");
  case KN_E_SEXT: return LLVMBuildSExt(g->b, a, to, "");
  case KN_E_ZEXT: return LLVMBuildZExt(g->b, a, to, "");
  default: break;
  }
  char name[48];
  snprintf(name, sizeof name, "llvm.%s.sat.%s.%s", e->op == KN_E_FPTOSI_SAT ? "fptosi" : "fptoui",
           isuffix(e->type), fsuffix(from));
  return ptx_call(g, name, to, &a, 1);
}

/* The callee (linked in from the descriptor's bitcode, ptx_target.c)
 * takes a vmctx whose first field is the memory base: a private copy in
 * the kernel's entry block, which inlining and SROA dissolve. */
LLVMValueRef ptx_callee(const ptx_gen *g, uint32_t func) {
  char name[32];
  snprintf(name, sizeof name, KN_CALLEE_NAME, func);
  return LLVMGetNamedFunction(g->mod, name);
}

static LLVMValueRef build_call(ptx_gen *g, const kn_expr *e, LLVMValueRef *vals) {
  LLVMValueRef fn = ptx_callee(g, e->func);
  if (!fn) return NULL;
  LLVMValueRef cur = LLVMGetBasicBlockParent(LLVMGetInsertBlock(g->b));
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(cur);
  LLVMBuilderRef at = LLVMCreateBuilderInContext(g->ctx);
  LLVMValueRef first = LLVMGetFirstInstruction(entry);
  if (first) LLVMPositionBuilderBefore(at, first);
  else LLVMPositionBuilderAtEnd(at, entry);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(g->ctx, 0);
  LLVMValueRef vmctx = LLVMBuildAlloca(at, LLVMArrayType2(g->i64, 8), "vmctx");
  LLVMBuildStore(at, LLVMBuildAddrSpaceCast(at, LLVMGetParam(cur, 0), ptr, ""), vmctx);
  LLVMDisposeBuilder(at);
  LLVMValueRef args[4] = {vmctx};
  int32_t ops[3] = {e->a, e->b, e->c};
  unsigned n = kn_call_nargs(e);
  for (unsigned k = 0; k < n; k++) args[k + 1] = vals[ops[k]];
  return LLVMBuildCall2(g->b, LLVMGlobalGetValueType(fn), fn, args, n + 1, "");
}

static LLVMValueRef build_node(ptx_gen *g, const kn_expr *e, LLVMValueRef *vals,
                               const LLVMValueRef *ivs) {
  LLVMValueRef a = e->a >= 0 ? vals[e->a] : NULL;
  LLVMValueRef b = e->b >= 0 ? vals[e->b] : NULL;
  switch (e->op) {
  case KN_E_CONST: return build_const(g, e);
  case KN_E_PARAM: return build_param(g, e);
  case KN_E_IV:
    return e->type == KN_I64 ? ivs[e->iv] : LLVMBuildTrunc(g->b, ivs[e->iv], g->i32, "");
  case KN_E_LOAD: return build_load(g, e, ivs);
  case KN_E_SQRT: return float_call(g, "sqrt", e->type, &a, 1);
  case KN_E_ABS: return float_call(g, "fabs", e->type, &a, 1);
  case KN_E_NEG: return LLVMBuildFNeg(g->b, a, "");
  case KN_E_CMP:
    if (e->cmp >= KN_CMP_OEQ) return LLVMBuildFCmp(g->b, real_preds[e->cmp], a, b, "");
    return LLVMBuildICmp(g->b, int_preds[e->cmp], a, b, "");
  case KN_E_SELECT: return LLVMBuildSelect(g->b, a, b, vals[e->c], "");
  case KN_E_CALL: return build_call(g, e, vals);
  default: break;
  }
  if (shapes[e->op].nops == 2) return build_arith(g, e, a, b);
  return build_convert(g, e, a, g->d->nodes[e->a].type);
}

void ptx_expr_used(const kn_desc *d, int32_t root, bool *used) {
  for (int32_t i = 0; i <= root; i++) used[i] = i == root;
  for (int32_t i = root; i >= 0; i--) {
    if (!used[i]) continue;
    const kn_expr *e = &d->nodes[i];
    int32_t ops[3] = {e->a, e->b, e->c};
    for (unsigned k = 0; k < nops(e); k++) used[ops[k]] = true;
  }
}

/* Builds only the nodes root depends on, in array order (operands come
 * first), so unused loads never touch memory. */
LLVMValueRef ptx_expr_build(ptx_gen *g, int32_t root, const LLVMValueRef *ivs) {
  LLVMValueRef vals[root + 1];
  bool used[root + 1];
  ptx_expr_used(g->d, root, used);
  for (int32_t i = 0; i <= root; i++) {
    LLVMValueRef given = g->preset ? g->preset[i] : NULL;
    vals[i] = !used[i] ? NULL : given ? given : build_node(g, &g->d->nodes[i], vals, ivs);
  }
  return vals[root];
}
