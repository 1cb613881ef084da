/* kn_recog_expr.c: the scalar computation of one loop iteration as
 * descriptor expression nodes, loads becoming affine kn_addr reads. */
#include <string.h>

#include "kn_internal.h"

bool kr_type_of(LLVMTypeRef t, kn_type *out) {
  switch (LLVMGetTypeKind(t)) {
  case LLVMFloatTypeKind: *out = KN_F32; return true;
  case LLVMDoubleTypeKind: *out = KN_F64; return true;
  case LLVMIntegerTypeKind:
    switch (LLVMGetIntTypeWidth(t)) {
    case 1: *out = KN_I1; return true;
    case 8: *out = KN_I8; return true;
    case 16: *out = KN_I16; return true;
    case 32: *out = KN_I32; return true;
    case 64: *out = KN_I64; return true;
    default: return false;
    }
  default: return false;
  }
}

unsigned kr_type_size(kn_type t) {
  static const unsigned size[] = {[KN_I1] = 1, [KN_I8] = 1, [KN_I16] = 2, [KN_I32] = 4,
                                  [KN_I64] = 8, [KN_F32] = 4, [KN_F64] = 8};
  return size[t];
}

int32_t kr_push(kr_ctx *c, kn_expr e) {
  if (c->nnodes == c->cap) {
    unsigned cap = c->cap ? c->cap * 2 : 32;
    kn_expr *grown = tw_arena_alloc(c->arena, cap * sizeof *grown);
    if (c->nnodes) memcpy(grown, c->nodes, c->nnodes * sizeof *grown);
    c->nodes = grown;
    c->cap = cap;
  }
  c->nodes[c->nnodes] = e;
  return (int32_t)c->nnodes++;
}

kn_expr kr_node(kn_op op, kn_type type, int32_t a, int32_t b, int32_t x) {
  kn_expr e;
  memset(&e, 0, sizeof e);
  e.op = op;
  e.type = type;
  e.a = a;
  e.b = b;
  e.c = x;
  return e;
}

/* A load of `mem` bytes, extended to `type`. */
int32_t kr_load(kr_ctx *c, LLVMValueRef ld, kn_type type, bool sign) {
  kn_type mem;
  if (!kr_type_of(LLVMTypeOf(ld), &mem) || mem == KN_I1) return kr_fail(c, "loads an unsupported type"), -1;
  kr_affine a = kr_address(c, LLVMGetOperand(ld, 0));
  if (!a.ok) return kr_fail(c, "non-affine address"), -1;
  return kr_load_at(c, &a, mem, type, sign);
}

int32_t kr_load_at(kr_ctx *c, const kr_affine *at, kn_type mem, kn_type type, bool sign) {
  kr_affine a = *at;
  kn_expr e = kr_node(KN_E_LOAD, type, -1, -1, -1);
  e.load.mem = mem;
  e.load.sign = sign;
  int d0 = c->depth >= 2 ? c->depth - 2 : -1, d1 = c->depth - 1;
  if (c->depth == 1) d0 = 0, d1 = -1;
  if (!kr_to_addr(c, &a, d0, d1, 1, &e.load.addr)) return kr_fail(c, "address uses an outer loop counter"), -1;
  if (!kr_add_range(c, &a, kr_type_size(mem), false)) return -1;
  return kr_push(c, e);
}

static int32_t constant(kr_ctx *c, LLVMValueRef v, kn_type t) {
  kn_expr e = kr_node(KN_E_CONST, t, -1, -1, -1);
  if (LLVMIsAConstantInt(v)) {
    e.bits = LLVMConstIntGetZExtValue(v);
    return kr_push(c, e);
  }
  if (!LLVMIsAConstantFP(v)) return kr_fail(c, "unsupported constant"), -1;
  LLVMBool lost;
  double d = LLVMConstRealGetDouble(v, &lost);
  if (t == KN_F32) {
    float f = (float)d;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    e.bits = u;
  } else {
    memcpy(&e.bits, &d, sizeof d);
  }
  return kr_push(c, e);
}

static const kn_cmp icmp_map[] = {
    [LLVMIntEQ] = KN_CMP_EQ,   [LLVMIntNE] = KN_CMP_NE,   [LLVMIntSLT] = KN_CMP_SLT,
    [LLVMIntSLE] = KN_CMP_SLE, [LLVMIntSGT] = KN_CMP_SGT, [LLVMIntSGE] = KN_CMP_SGE,
    [LLVMIntULT] = KN_CMP_ULT, [LLVMIntULE] = KN_CMP_ULE, [LLVMIntUGT] = KN_CMP_UGT,
    [LLVMIntUGE] = KN_CMP_UGE};

kn_cmp kr_icmp(LLVMIntPredicate p) { return icmp_map[p]; }

bool kr_min_max(LLVMValueRef call, kn_cmp *cmp) {
  static const struct {
    const char *prefix;
    kn_cmp cmp;
  } table[] = {{"llvm.smin.", KN_CMP_SLT}, {"llvm.smax.", KN_CMP_SGT},
               {"llvm.umin.", KN_CMP_ULT}, {"llvm.umax.", KN_CMP_UGT}};
  const char *name = ir_callee_name(call);
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strncmp(name, table[i].prefix, strlen(table[i].prefix)) == 0) return (*cmp = table[i].cmp, true);
  return false;
}

static bool fcmp_of(LLVMRealPredicate p, kn_cmp *out) {
  switch (p) {
  case LLVMRealOEQ: *out = KN_CMP_OEQ; return true;
  case LLVMRealUNE: *out = KN_CMP_UNE; return true;
  case LLVMRealOLT: *out = KN_CMP_OLT; return true;
  case LLVMRealOLE: *out = KN_CMP_OLE; return true;
  case LLVMRealOGT: *out = KN_CMP_OGT; return true;
  case LLVMRealOGE: *out = KN_CMP_OGE; return true;
  case LLVMRealONE: *out = KN_CMP_ONE; return true;
  case LLVMRealUEQ: *out = KN_CMP_UEQ; return true;
  case LLVMRealULT: *out = KN_CMP_ULT_F; return true;
  case LLVMRealULE: *out = KN_CMP_ULE_F; return true;
  case LLVMRealUGT: *out = KN_CMP_UGT_F; return true;
  case LLVMRealUGE: *out = KN_CMP_UGE_F; return true;
  case LLVMRealORD: *out = KN_CMP_ORD; return true;
  case LLVMRealUNO: *out = KN_CMP_UNO; return true;
  default: return false;
  }
}

static kn_op binary_op(LLVMOpcode op) {
  switch (op) {
  case LLVMAdd: case LLVMFAdd: return KN_E_ADD;
  case LLVMSub: case LLVMFSub: return KN_E_SUB;
  case LLVMMul: case LLVMFMul: return KN_E_MUL;
  case LLVMFDiv: return KN_E_DIV;
  case LLVMAnd: return KN_E_AND;
  case LLVMOr: return KN_E_OR;
  case LLVMXor: return KN_E_XOR;
  case LLVMShl: return KN_E_SHL;
  case LLVMLShr: return KN_E_LSHR;
  case LLVMAShr: return KN_E_ASHR;
  default: return KN_E_COUNT;
  }
}

static kn_op cast_op(LLVMOpcode op) {
  switch (op) {
  case LLVMSIToFP: return KN_E_SITOFP;
  case LLVMUIToFP: return KN_E_UITOFP;
  case LLVMFPTrunc: return KN_E_FPTRUNC;
  case LLVMFPExt: return KN_E_FPEXT;
  case LLVMTrunc: return KN_E_TRUNC;
  case LLVMSExt: return KN_E_SEXT;
  case LLVMZExt: return KN_E_ZEXT;
  default: return KN_E_COUNT;
  }
}

/* Intrinsic calls with a descriptor op; NULL name for anything else. */
static int32_t intrinsic(kr_ctx *c, LLVMValueRef call, kn_type t) {
  const char *name = ir_callee_name(call);
  static const struct { const char *prefix; kn_op op; } table[] = {
      {"llvm.fabs.", KN_E_ABS},           {"llvm.sqrt.", KN_E_SQRT},
      {"llvm.minimum.", KN_E_MIN},        {"llvm.maximum.", KN_E_MAX},
      {"llvm.fptosi.sat.", KN_E_FPTOSI_SAT}, {"llvm.fptoui.sat.", KN_E_FPTOUI_SAT}};
  kn_cmp pred;
  if (kr_min_max(call, &pred)) {
    int32_t a = kr_expr(c, LLVMGetOperand(call, 0)), b = a < 0 ? -1 : kr_expr(c, LLVMGetOperand(call, 1));
    if (b < 0) return -1;
    kn_expr cmp = kr_node(KN_E_CMP, KN_I1, a, b, -1);
    cmp.cmp = pred;
    return kr_push(c, kr_node(KN_E_SELECT, t, kr_push(c, cmp), a, b));
  }
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    if (strncmp(name, table[i].prefix, strlen(table[i].prefix)) != 0) continue;
    int32_t a = kr_expr(c, LLVMGetOperand(call, 0));
    if (a < 0) return -1;
    if (table[i].op != KN_E_MIN && table[i].op != KN_E_MAX) return kr_push(c, kr_node(table[i].op, t, a, -1, -1));
    int32_t b = kr_expr(c, LLVMGetOperand(call, 1));
    return b < 0 ? -1 : kr_push(c, kr_node(table[i].op, t, a, b, -1));
  }
  return kr_call(c, call, t);
}

static int32_t instruction(kr_ctx *c, LLVMValueRef v, kn_type t) {
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  if (op == LLVMLoad) return kr_load(c, v, t, false);
  if ((op == LLVMSExt || op == LLVMZExt) && kr_is_mem_load(c, LLVMGetOperand(v, 0)))
    return kr_load(c, LLVMGetOperand(v, 0), t, op == LLVMSExt);
  if (op == LLVMPHI) return kr_fail(c, "loop-carried dependence"), -1;
  if (op == LLVMCall) return intrinsic(c, v, t);
  if (op == LLVMExtractElement) return kr_lane_extract(c, v);
  if (op == LLVMUDiv || op == LLVMSDiv || op == LLVMURem || op == LLVMSRem)
    return kr_divide(c, v, t);
  if ((op == LLVMZExt || op == LLVMSExt || op == LLVMUIToFP || op == LLVMSIToFP) &&
      kr_is_narrow(LLVMGetOperand(v, 0)))
    return kr_widen(c, v, t);
  if (op == LLVMICmp && kr_is_narrow(LLVMGetOperand(v, 0))) return kr_narrow_compare(c, v);
  if (op == LLVMFPToSI || op == LLVMFPToUI) return kr_fail(c, "may trap: float to integer conversion"), -1;
  if (op == LLVMFNeg) {
    int32_t a = kr_expr(c, LLVMGetOperand(v, 0));
    return a < 0 ? -1 : kr_push(c, kr_node(KN_E_NEG, t, a, -1, -1));
  }
  if (binary_op(op) != KN_E_COUNT || op == LLVMICmp || op == LLVMFCmp) {
    int32_t a = kr_expr(c, LLVMGetOperand(v, 0)), b = a < 0 ? -1 : kr_expr(c, LLVMGetOperand(v, 1));
    if (b < 0) return -1;
    if (op != LLVMICmp && op != LLVMFCmp) return kr_push(c, kr_node(binary_op(op), t, a, b, -1));
    kn_expr e = kr_node(KN_E_CMP, KN_I1, a, b, -1);
    if (op == LLVMICmp) e.cmp = icmp_map[LLVMGetICmpPredicate(v)];
    else if (!fcmp_of(LLVMGetFCmpPredicate(v), &e.cmp)) return kr_fail(c, "unsupported float compare"), -1;
    return kr_push(c, e);
  }
  if (op == LLVMSelect) {
    int32_t a = kr_expr(c, LLVMGetOperand(v, 0));
    int32_t b = a < 0 ? -1 : kr_expr(c, LLVMGetOperand(v, 1));
    int32_t x = b < 0 ? -1 : kr_expr(c, LLVMGetOperand(v, 2));
    return x < 0 ? -1 : kr_push(c, kr_node(KN_E_SELECT, t, a, b, x));
  }
  if (cast_op(op) != KN_E_COUNT) {
    LLVMValueRef x = LLVMGetOperand(v, 0);
    kn_type xt;
    /* (u)i8/i16 memory straight to float: load it widened to i32 (zero-
     * or sign-extended as the conversion reads it), then convert: the
     * value is the same, and narrow arithmetic never appears */
    if ((op == LLVMUIToFP || op == LLVMSIToFP) && kr_is_mem_load(c, x) &&
        kr_type_of(LLVMTypeOf(x), &xt) && (xt == KN_I8 || xt == KN_I16)) {
      int32_t a = kr_load(c, x, KN_I32, op == LLVMSIToFP);
      return a < 0 ? -1 : kr_push(c, kr_node(cast_op(op), t, a, -1, -1));
    }
    int32_t a = kr_expr(c, x);
    return a < 0 ? -1 : kr_push(c, kr_node(cast_op(op), t, a, -1, -1));
  }
  return kr_fail(c, "unsupported operation"), -1;
}

int32_t kr_instruction(kr_ctx *c, LLVMValueRef v, kn_type t) { return instruction(c, v, t); }

/* A param node of type t for live value v. */
static int32_t live_param(kr_ctx *c, LLVMValueRef v, kn_type t) {
  int p = kr_param(c, (kn_bind){.kind = KN_BIND_VALUE, .value = v});
  if (p < 0) return kr_fail(c, "too many live values"), -1;
  kn_expr e = kr_node(KN_E_PARAM, t, -1, -1, -1);
  e.param = (unsigned)p;
  return kr_push(c, e);
}

/* A node of type t for i32 live value p (the param holds it in its low
 * bits). */
static int32_t param_node(kr_ctx *c, LLVMValueRef p, kn_type t) {
  kn_type pt;
  if (!kr_type_of(LLVMTypeOf(p), &pt) || (pt != KN_I32 && pt != KN_I64)) return -1;
  int32_t r = live_param(c, p, pt);
  return r < 0 || pt == t ? r : kr_push(c, kr_node(KN_E_TRUNC, t, r, -1, -1));
}

/* A loop counter used as a value (a[i] = i * 0.5f): its affine form over
 * the kernel's iteration indices and live values, in wrapping i32
 * arithmetic, which is exact because the form is exact modulo 2^32.  The
 * kernel's index 0 is chain[depth-2] (chain[0] in a 1-D nest), index 1
 * chain[depth-1], as for loads. */
int32_t kr_counter_value(kr_ctx *c, const kr_affine *form, kn_type t) {
  /* the counters' terms first, then the live values' in their order: one
   * tree for one value however the form was summed (a scalar counter's
   * start and step, a vector counter's lanes times 3 plus a splat) */
  kr_affine a = {.ok = form->ok, .c = form->c};
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < form->n; i++)
      if ((form->t[i].param != NULL) == pass) a.t[a.n++] = form->t[i];
  kn_expr k = kr_node(KN_E_CONST, t, -1, -1, -1);
  k.bits = (uint32_t)a.c;
  int32_t acc = kr_push(c, k);
  for (int i = 0; i < a.n; i++) {
    const kr_term *term = &a.t[i];
    int32_t x = -1;
    if (term->dim >= 0) {
      int iv = c->depth == 1 ? 0 : term->dim - (c->depth - 2);
      if (iv < 0 || iv > 1) return kr_fail(c, "uses an outer loop counter as a value"), -1;
      kn_expr e = kr_node(KN_E_IV, t, -1, -1, -1);
      e.iv = (unsigned)iv;
      x = kr_push(c, e);
    }
    if (term->param) {
      int32_t p = param_node(c, term->param, t);
      if (p < 0) return c->reason ? -1 : (kr_fail(c, "uses a loop counter as a value"), -1);
      x = x < 0 ? p : kr_push(c, kr_node(KN_E_MUL, t, x, p, -1));
    }
    k.bits = (uint32_t)term->coeff;
    int32_t coeff = kr_push(c, k);
    x = x < 0 ? coeff : kr_push(c, kr_node(KN_E_MUL, t, x, coeff, -1));
    acc = kr_push(c, kr_node(KN_E_ADD, t, acc, x, -1));
  }
  return acc;
}

/* An i32 counter, or integer arithmetic on counters, as one normalised
 * affine form (so that the unrolled copies of `i + k` agree). */
static bool counts(kr_ctx *c, LLVMValueRef v, kn_type t, kr_affine *form) {
  if (t != KN_I32) return false;
  if (!ir_iv_of(c->chain[c->depth - 1], v)) {
    if (!LLVMIsABinaryOperator(v)) return false;
    LLVMOpcode op = LLVMGetInstructionOpcode(v);
    if (op != LLVMAdd && op != LLVMSub && op != LLVMMul && op != LLVMShl && op != LLVMOr)
      return false;
  }
  *form = kr_int(c, v);
  if (!form->ok) return false;
  for (int i = 0; i < form->n; i++)
    if (form->t[i].dim >= 0) return true;
  return false;
}

/* v's index in c->stored: a value stored there, an LCSSA phi of one, or
 * a phi joining such values of one element (the bounds copies of the
 * loop storing it, each leaving right after its store: whichever copy
 * ran, memory holds the value the phi takes); -1 otherwise. */
static int stored_index(const kr_ctx *c, LLVMValueRef v, int depth) {
  if (LLVMIsAPHINode(v) && depth < 2) {
    int s = -1;
    for (unsigned k = 0; k < LLVMCountIncoming(v); k++) {
      int x = stored_index(c, LLVMGetIncomingValue(v, k), depth + 1);
      if (x < 0 || (s >= 0 && !kr_same_affine(&c->stored_at[s], &c->stored_at[x]))) return -1;
      s = x;
    }
    return s;
  }
  for (int s = 0; s < c->nstored; s++)
    if (c->stored[s] == v) return s;
  return -1;
}

int32_t kr_expr(kr_ctx *c, LLVMValueRef v) {
  kr_affine form;
  kn_type t;
  if (LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMVectorTypeKind) return kr_lane_expr(c, v);
  if (!kr_type_of(LLVMTypeOf(v), &t)) return kr_fail(c, "unsupported value type"), -1;
  for (int i = 0; i < c->nmemo; i++)
    if (c->memo_key[i] == v) return c->memo_val[i];
  int32_t r;
  /* i8/i16 values are i32 nodes holding their zero extension */
  kn_type nt = t == KN_I8 || t == KN_I16 ? KN_I32 : t;
  int s = c->nstored ? stored_index(c, v, 0) : -1;
  if (s >= 0 && t != KN_I1 && nt == t) {
    /* an epilogue's read of what the inner loop stored last */
    r = kr_load_at(c, &c->stored_at[s], t, t, false);
    if (r < 0) return -1;
  } else if (LLVMIsAConstant(v)) {
    r = constant(c, v, nt);
  } else if (!ir_loop_defines(kr_nest(c), v, c->cfg)) {
    r = live_param(c, v, nt);
    if (r < 0) return -1;
  } else if (counts(c, v, t, &form)) {
    r = kr_counter_value(c, &form, t);
  } else if (ir_iv_of(c->chain[c->depth - 1], v)) {
    return kr_fail(c, "uses a loop counter as a value"), -1;
  } else if (t == KN_I8 || t == KN_I16) {
    r = kr_narrow(c, v, t);
  } else {
    r = instruction(c, v, t);
  }
  if (r >= 0 && c->nmemo < 64) {
    c->memo_key[c->nmemo] = v;
    c->memo_val[c->nmemo++] = r;
  }
  return r;
}

bool kr_same_strides(const kn_addr *x, const kn_addr *y) {
  for (int d = 0; d < KN_MAX_DIMS; d++)
    if (x->iv_coeff[d] != y->iv_coeff[d] || x->iv_pcoeff[d] != y->iv_pcoeff[d] ||
        (x->iv_pcoeff[d] && x->iv_pindex[d] != y->iv_pindex[d]))
      return false;
  return true;
}

static bool same_addr(const kn_addr *x, const kn_addr *y) {
  if (x->c0 != y->c0 || x->nparam_terms != y->nparam_terms || x->align != y->align ||
      !kr_same_strides(x, y))
    return false;
  for (unsigned t = 0; t < x->nparam_terms; t++)
    if (x->param_index[t] != y->param_index[t] || x->param_coeff[t] != y->param_coeff[t]) return false;
  return true;
}

/* Operand i of a copy starting at node `base`, relative to that start. */
static int32_t rel(int32_t i, unsigned base) { return i >= (int32_t)base ? i - (int32_t)base : i; }

bool kr_same_nodes(const kr_ctx *c, unsigned a0, unsigned b0, unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    const kn_expr *x = &c->nodes[a0 + i], *y = &c->nodes[b0 + i];
    if (x->op != y->op || x->type != y->type || x->cmp != y->cmp || rel(x->a, a0) != rel(y->a, b0) ||
        rel(x->b, a0) != rel(y->b, b0) || rel(x->c, a0) != rel(y->c, b0))
      return false;
    bool same = true;
    switch (x->op) {
    case KN_E_CONST: same = x->bits == y->bits; break;
    case KN_E_PARAM: same = x->param == y->param; break;
    case KN_E_IV: same = x->iv == y->iv; break;
    case KN_E_CALL: same = x->func == y->func; break;
    case KN_E_LOAD:
      same = x->load.mem == y->load.mem && x->load.sign == y->load.sign && same_addr(&x->load.addr, &y->load.addr);
      break;
    default: break;
    }
    if (!same) return false;
  }
  return true;
}

/* The predicate true exactly where p is false (NaN operands included):
 * KN_CMP_COUNT when none is listed. */
static kn_cmp complement(kn_cmp p) {
  static const kn_cmp pairs[][2] = {
      {KN_CMP_EQ, KN_CMP_NE},      {KN_CMP_SLT, KN_CMP_SGE},  {KN_CMP_SLE, KN_CMP_SGT},
      {KN_CMP_ULT, KN_CMP_UGE},    {KN_CMP_ULE, KN_CMP_UGT},  {KN_CMP_OEQ, KN_CMP_UNE},
      {KN_CMP_OLT, KN_CMP_UGE_F},  {KN_CMP_OLE, KN_CMP_UGT_F}, {KN_CMP_OGT, KN_CMP_ULE_F},
      {KN_CMP_OGE, KN_CMP_ULT_F},  {KN_CMP_ONE, KN_CMP_UEQ},  {KN_CMP_ORD, KN_CMP_UNO}};
  for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
    for (int k = 0; k < 2; k++)
      if (pairs[i][k] == p) return pairs[i][1 - k];
  return KN_CMP_COUNT;
}

/* Whether node k is a float constant that is no NaN. */
static bool not_nan_const(const kr_ctx *c, int32_t k) {
  if (k < 0 || c->nodes[k].op != KN_E_CONST) return false;
  uint64_t bits = c->nodes[k].bits;
  if (c->nodes[k].type == KN_F32) return ((bits >> 23) & 0xff) != 0xff || (bits & 0x7fffff) == 0;
  if (c->nodes[k].type == KN_F64) return ((bits >> 52) & 0x7ff) != 0x7ff || (bits & 0xfffffffffffffULL) == 0;
  return false;
}

/* A region's proof at the top of a function (kn_recog_top.c): the forms
 * clang's vectoriser gives V for the scalar loop R's expression.  x - y
 * as x + (-y), either order (IEEE 754 defines subtraction as that
 * addition: the same result for every operand, signed zeros and rounding
 * included; a NaN result's sign and payload are the GPU arithmetic's
 * anyway, as for any NaN a kernel stores); select(p, t, f) as
 * select(!p, f, t), !p p's complement on the same operands (exactly where
 * p is false, unordered compares included); R's NaN-propagating add of
 * a constant, and its `isnan(t) ? t + t : y` of an operation y on t, as
 * V's plain add and y (below).  x is R's node (the reference), y V's. */
static bool same_rewritten(const kr_ctx *c, const kn_expr *a, const kn_expr *b, int depth) {
  if (a->type != b->type) return false;
  if (a->op == KN_E_SUB && b->op == KN_E_ADD && (a->type == KN_F32 || a->type == KN_F64))
    for (int o = 0; o < 2; o++) {
      int32_t neg = o ? b->b : b->a, other = o ? b->a : b->b;
      if (neg >= 0 && c->nodes[neg].op == KN_E_NEG && kr_same_tree(c, a->b, c->nodes[neg].a, depth + 1) &&
          kr_same_tree(c, a->a, other, depth + 1))
        return true;
    }
  /* t + (isnan(t) ? t : k) (the lowering's NaN-propagating add of a
   * constant, `fcmp uno t, k0`, k0 no NaN) as t + k, either order: the
   * same sum for every t that is no NaN, a NaN for a NaN t */
  if (a->op == KN_E_ADD && b->op == KN_E_ADD && (a->type == KN_F32 || a->type == KN_F64))
    for (int o = 0; o < 2; o++) {
      int32_t t = o ? a->b : a->a, sel = o ? a->a : a->b;
      if (t < 0 || sel < 0 || c->nodes[sel].op != KN_E_SELECT || c->nodes[sel].a < 0) continue;
      const kn_expr *s = &c->nodes[sel], *p = &c->nodes[s->a];
      if (p->op != KN_E_CMP || p->cmp != KN_CMP_UNO || !not_nan_const(c, p->b) || !kr_same_tree(c, t, p->a, depth + 1) ||
          !kr_same_tree(c, t, s->b, depth + 1))
        continue;
      for (int q = 0; q < 2; q++)
        if (kr_same_tree(c, t, q ? b->b : b->a, depth + 1) && kr_same_tree(c, s->c, q ? b->a : b->b, depth + 1))
          return true;
    }
  /* isnan(t) ? t + t : y, y an add, subtraction, product or quotient
   * with t an operand (the lowering's NaN-propagating `k / t`), as V's
   * plain y: the same for every t that is no NaN, a NaN for a NaN t (IEEE
   * arithmetic on a NaN gives a NaN, whose sign and payload are the GPU
   * arithmetic's anyway) */
  if (a->op == KN_E_SELECT && a->a >= 0 && a->b >= 0 && a->c >= 0 && (a->type == KN_F32 || a->type == KN_F64)) {
    const kn_expr *p = &c->nodes[a->a], *twice = &c->nodes[a->b], *y = &c->nodes[a->c];
    bool arith = y->op == KN_E_ADD || y->op == KN_E_SUB || y->op == KN_E_MUL || y->op == KN_E_DIV;
    bool of_t = arith && p->op == KN_E_CMP && p->cmp == KN_CMP_UNO && not_nan_const(c, p->b) &&
                twice->op == KN_E_ADD && kr_same_tree(c, twice->a, p->a, depth + 1) &&
                kr_same_tree(c, twice->b, p->a, depth + 1);
    of_t = of_t && (kr_same_tree(c, y->a, p->a, depth + 1) || kr_same_tree(c, y->b, p->a, depth + 1));
    if (of_t && kr_same_tree(c, a->c, (int32_t)(b - c->nodes), depth + 1)) return true;
  }
  if (a->op == KN_E_SELECT && b->op == KN_E_SELECT && a->a >= 0 && b->a >= 0) {
    const kn_expr *p = &c->nodes[a->a], *q = &c->nodes[b->a];
    return p->op == KN_E_CMP && q->op == KN_E_CMP && q->cmp == complement(p->cmp) &&
           kr_same_tree(c, p->a, q->a, depth + 1) && kr_same_tree(c, p->b, q->b, depth + 1) &&
           kr_same_tree(c, a->b, b->c, depth + 1) && kr_same_tree(c, a->c, b->b, depth + 1);
  }
  return false;
}

/* Whether the expressions at nodes x and y are the same, operands of a
 * commutative operation in either order (LLVM orders a product's operands
 * differently in the vector and the scalar loop, and in unrolled copies; IEEE addition and
 * multiplication are commutative, exactly). */
bool kr_same_tree(const kr_ctx *c, int32_t x, int32_t y, int depth) {
  if (x < 0 || y < 0) return x == y;
  if (depth > 64) return false;
  const kn_expr *a = &c->nodes[x], *b = &c->nodes[y];
  if (c->region_proof && c->top && same_rewritten(c, a, b, depth)) return true;
  if (a->op != b->op || a->type != b->type || a->cmp != b->cmp) return false;
  switch (a->op) {
  case KN_E_CONST:
  case KN_E_PARAM:
  case KN_E_IV:
  case KN_E_LOAD:
    return kr_same_nodes(c, (unsigned)x, (unsigned)y, 1);
  case KN_E_CALL:
    if (a->func != b->func) return false;
    return kr_same_tree(c, a->a, b->a, depth + 1) && kr_same_tree(c, a->b, b->b, depth + 1) &&
           kr_same_tree(c, a->c, b->c, depth + 1);
  default:
    break;
  }
  if (kr_same_tree(c, a->a, b->a, depth + 1) && kr_same_tree(c, a->b, b->b, depth + 1) &&
      kr_same_tree(c, a->c, b->c, depth + 1))
    return true;
  bool commutes = a->op == KN_E_ADD || a->op == KN_E_MUL || a->op == KN_E_AND || a->op == KN_E_OR ||
                  a->op == KN_E_XOR;
  return commutes && kr_same_tree(c, a->a, b->b, depth + 1) && kr_same_tree(c, a->b, b->a, depth + 1);
}
