/* kn_recog_call.c: calls inside a nest to pure Wasm functions of the
 * module (issue 19 item 6: expf in a softmax, a sigmoid in SwiGLU).
 *
 * A callee is pure when it, and every function it calls, only computes
 * on its arguments and reads linear memory at addresses bounded by
 * constants (libm's tables): no store, no trap, no call of anything but
 * such functions and exact LLVM intrinsics, no host state but the memory
 * base.  The call becomes a KN_E_CALL node; the bytes its loads may read
 * a read range the runtime checks like any other (in bounds, not written
 * by the nest); its LLVM function, the code the CPU loop calls, is
 * compiled into the kernel (compiler/off/off_calls.c, ptx_target.c). */
#include <string.h>

#include "ir.h"
#include "kn_internal.h"

#define CALL_MAX_FUNCS 16      /* a callee and the functions it calls */
#define CALL_MAX_INSNS 4000    /* instructions of those together */
#define CALL_MAX_DEPTH 4       /* calls below the nest's own */
#define CALL_MAX_SPAN (1 << 20) /* bytes a callee's loads may read */
#define CALL_MAX_ARGS 3        /* kn_expr's a, b, c */

typedef struct {
  LLVMValueRef fns[CALL_MAX_FUNCS];
  int nfns;
  unsigned ninsns;
  int64_t lo, hi;              /* bytes read: [lo, hi); lo >= hi none */
  const char *why;
} pure_info;

static uint64_t type_max(LLVMTypeRef t) {
  unsigned w = LLVMGetIntTypeWidth(t);
  return w >= 64 ? UINT64_MAX : (UINT64_C(1) << w) - 1;
}

/* Unsigned bounds of integer value v, [*lo, *hi]: the whole type where
 * nothing narrower is proven (or the budget of steps, which phis with
 * many incoming values would otherwise multiply, is spent). */
static void ubound(LLVMValueRef v, uint64_t *lo, uint64_t *hi, int depth, unsigned *budget) {
  LLVMTypeRef t = LLVMTypeOf(v);
  *lo = 0;
  *hi = UINT64_MAX;
  if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind) return;
  *hi = type_max(t);
  if (LLVMIsAConstantInt(v)) {
    *lo = *hi = LLVMConstIntGetZExtValue(v);
    return;
  }
  if (depth > 6 || !LLVMIsAInstruction(v) || *budget == 0) return;
  --*budget;
  uint64_t max = *hi, al = 0, ah = max, bl = 0, bh = max;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  if (op == LLVMPHI) {
    uint64_t l = UINT64_MAX, h = 0;
    for (unsigned k = 0; k < LLVMCountIncoming(v); k++) {
      ubound(LLVMGetIncomingValue(v, k), &al, &ah, depth + 1, budget);
      l = al < l ? al : l, h = ah > h ? ah : h;
    }
    *lo = l, *hi = h;
    return;
  }
  if (op == LLVMSelect) {
    ubound(LLVMGetOperand(v, 1), &al, &ah, depth + 1, budget);
    ubound(LLVMGetOperand(v, 2), &bl, &bh, depth + 1, budget);
    *lo = al < bl ? al : bl, *hi = ah > bh ? ah : bh;
    return;
  }
  if (op == LLVMZExt || op == LLVMTrunc || op == LLVMSExt) {
    LLVMValueRef x = LLVMGetOperand(v, 0);
    ubound(x, &al, &ah, depth + 1, budget);
    bool fits = op == LLVMZExt || (op == LLVMTrunc ? ah <= max : ah <= type_max(LLVMTypeOf(x)) >> 1);
    if (fits) *lo = al, *hi = ah;
    return;
  }
  if (!LLVMIsABinaryOperator(v)) return;
  ubound(LLVMGetOperand(v, 0), &al, &ah, depth + 1, budget);
  ubound(LLVMGetOperand(v, 1), &bl, &bh, depth + 1, budget);
  bool bconst = LLVMIsAConstantInt(LLVMGetOperand(v, 1));
  unsigned w = LLVMGetIntTypeWidth(t);
  switch (op) {
  case LLVMAnd: *hi = ah < bh ? ah : bh; break;
  case LLVMOr:
  case LLVMXor: {
    uint64_t m = ah | bh;
    for (unsigned s = 1; s < 64; s <<= 1) m |= m >> s;
    *hi = m;
    if (op == LLVMOr) *lo = al > bl ? al : bl;
    break;
  }
  case LLVMAdd:
    if (ah <= max - bh) *lo = al + bl, *hi = ah + bh;
    break;
  case LLVMSub:
    if (al >= bh) *lo = al - bh, *hi = ah - bl;
    break;
  case LLVMMul:
    if (bh == 0 || ah <= max / bh) *lo = al * bl, *hi = ah * bh;
    break;
  case LLVMShl:
    if (bconst && bl < w && ah <= max >> bl) *lo = al << bl, *hi = ah << bl;
    break;
  case LLVMLShr:
    if (bconst && bl < w) *lo = al >> bl, *hi = ah >> bl;
    else *hi = ah;
    break;
  case LLVMAShr:
    if (bconst && bl < w && ah <= max >> 1) *lo = al >> bl, *hi = ah >> bl;
    break;
  case LLVMURem:
    if (bconst && bl > 0) *hi = ah < bl - 1 ? ah : bl - 1;
    break;
  case LLVMUDiv:
    if (bconst && bl > 0) *lo = al / bl, *hi = ah / bl;
    break;
  default: break;
  }
}

/* The memory base a function loads from its vmctx (param 0), field 0. */
static bool is_mem_base(LLVMValueRef fn, LLVMValueRef v) {
  return LLVMIsALoadInst(v) && LLVMGetOperand(v, 0) == LLVMGetParam(fn, 0) &&
         LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMPointerTypeKind && !LLVMGetVolatile(v);
}

/* A load of linear memory at bounded offsets: [lo, hi) read. */
static bool load_span(LLVMValueRef fn, LLVMTargetDataRef td, LLVMValueRef ld, int64_t *lo, int64_t *hi) {
  if (LLVMGetVolatile(ld) || LLVMGetOrdering(ld) != LLVMAtomicOrderingNotAtomic) return false;
  int64_t l = 0, h = 0;
  LLVMValueRef p = LLVMGetOperand(ld, 0);
  for (int steps = 0; LLVMIsAGetElementPtrInst(p); steps++) {
    if (steps > 8 || LLVMGetNumOperands(p) != 2) return false;
    LLVMTypeRef et = LLVMGetGEPSourceElementType(p);
    if (LLVMGetTypeKind(et) == LLVMStructTypeKind || LLVMGetTypeKind(et) == LLVMArrayTypeKind) return false;
    uint64_t scale = LLVMABISizeOfType(td, et), il, ih;
    LLVMValueRef idx = LLVMGetOperand(p, 1);
    unsigned budget = 512;
    ubound(idx, &il, &ih, 0, &budget);
    /* GEP indices are signed: past the type's signed maximum, unbounded */
    if (ih > type_max(LLVMTypeOf(idx)) >> 1 || ih > (uint64_t)1 << 34 || scale > 64) return false;
    l += (int64_t)(il * scale), h += (int64_t)(ih * scale);
    p = LLVMGetOperand(p, 0);
  }
  if (!is_mem_base(fn, p)) return false;
  uint64_t size = LLVMStoreSizeOfType(td, LLVMTypeOf(ld));
  *lo = l, *hi = h + (int64_t)size;
  return *hi - *lo <= CALL_MAX_SPAN;
}

/* Intrinsics that compute exactly the same on the GPU and touch nothing. */
static bool exact_intrinsic(const char *name) {
  static const char *const ok[] = {
      "llvm.fabs.",  "llvm.copysign.", "llvm.sqrt.",      "llvm.minimum.",   "llvm.maximum.",
      "llvm.minnum.", "llvm.maxnum.",  "llvm.floor.",     "llvm.ceil.",      "llvm.trunc.",
      "llvm.rint.",  "llvm.nearbyint.", "llvm.roundeven.", "llvm.ctlz.",      "llvm.cttz.",
      "llvm.ctpop.", "llvm.fshl.",     "llvm.fshr.",      "llvm.smax.",      "llvm.smin.",
      "llvm.umax.",  "llvm.umin.",     "llvm.abs.",       "llvm.fptosi.sat.", "llvm.fptoui.sat.",
      "llvm.bswap.", "llvm.bitreverse.", "llvm.is.fpclass.", "llvm.assume"};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
    if (strncmp(name, ok[i], strlen(ok[i])) == 0) return true;
  return false;
}

static bool closure(LLVMValueRef fn, LLVMTargetDataRef td, pure_info *pi, int depth);

static bool pure_insn(LLVMValueRef fn, LLVMTargetDataRef td, LLVMValueRef i, pure_info *pi, int depth) {
  LLVMOpcode op = LLVMGetInstructionOpcode(i);
  for (int k = 0; k < LLVMGetNumOperands(i); k++) {
    LLVMValueRef o = LLVMGetOperand(i, (unsigned)k);
    if (LLVMIsAConstantExpr(o) || (LLVMIsAGlobalValue(o) && !(op == LLVMCall && k == LLVMGetNumOperands(i) - 1)))
      return pi->why = "calls a function that reads a global", false;
  }
  switch (op) {
  case LLVMRet: case LLVMBr: case LLVMSwitch: case LLVMPHI: case LLVMSelect: case LLVMICmp: case LLVMFCmp:
  case LLVMAdd: case LLVMFAdd: case LLVMSub: case LLVMFSub: case LLVMMul: case LLVMFMul: case LLVMFDiv:
  case LLVMFRem: case LLVMShl: case LLVMLShr: case LLVMAShr: case LLVMAnd: case LLVMOr: case LLVMXor:
  case LLVMFNeg: case LLVMTrunc: case LLVMZExt: case LLVMSExt: case LLVMFPTrunc: case LLVMFPExt:
  case LLVMSIToFP: case LLVMUIToFP: case LLVMFPToSI: case LLVMFPToUI: case LLVMBitCast: case LLVMFreeze: case LLVMExtractElement:
  case LLVMInsertElement: case LLVMShuffleVector: case LLVMExtractValue:
    return true;
  case LLVMUDiv: case LLVMSDiv: case LLVMURem: case LLVMSRem: {
    /* a divisor LLVM left unchecked is a nonzero constant, else the Wasm trap's test guards it */
    LLVMValueRef d = LLVMGetOperand(i, 1);
    if (LLVMIsAConstantInt(d) && LLVMConstIntGetZExtValue(d) != 0 &&
        !((op == LLVMSDiv || op == LLVMSRem) && LLVMConstIntGetSExtValue(d) == -1))
      return true;
    return pi->why = "calls a function that divides by a value", false;
  }
  case LLVMGetElementPtr: return true; /* only its loads read, checked there */
  case LLVMLoad: {
    if (is_mem_base(fn, i)) return true;
    int64_t lo, hi;
    if (!load_span(fn, td, i, &lo, &hi)) return pi->why = "calls a function that reads memory at an unbounded address", false;
    if (pi->lo >= pi->hi) pi->lo = lo, pi->hi = hi;
    else pi->lo = lo < pi->lo ? lo : pi->lo, pi->hi = hi > pi->hi ? hi : pi->hi;
    if (pi->hi - pi->lo > CALL_MAX_SPAN) return pi->why = "calls a function that reads memory over a wide range", false;
    return true;
  }
  case LLVMCall: {
    LLVMValueRef callee = LLVMGetCalledValue(i);
    if (!LLVMIsAFunction(callee)) return pi->why = "calls a function through a pointer", false;
    size_t len;
    const char *name = LLVMGetValueName2(callee, &len);
    if (strncmp(name, "llvm.", 5) == 0)
      return exact_intrinsic(name) || (pi->why = "calls a function that uses an intrinsic", false);
    if (ir_wasm_index(callee) < 0 || LLVMIsDeclaration(callee))
      return pi->why = "calls a function that calls the runtime (a trap, a check, an import)", false;
    unsigned nargs = (unsigned)LLVMGetNumArgOperands(i);
    if (nargs == 0 || LLVMGetOperand(i, 0) != LLVMGetParam(fn, 0))
      return pi->why = "calls a function that passes another instance", false;
    return closure(callee, td, pi, depth + 1);
  }
  default:
    if (op == LLVMStore) return pi->why = "calls a function that stores", false;
    if (op == LLVMUnreachable) return pi->why = "calls a function that may trap", false;
    return pi->why = "calls a function with an instruction a kernel does not take", false;
  }
}

static bool closure(LLVMValueRef fn, LLVMTargetDataRef td, pure_info *pi, int depth) {
  for (int k = 0; k < pi->nfns; k++)
    if (pi->fns[k] == fn) return depth == 0 || (pi->why = "calls a recursive function", false);
  if (depth > CALL_MAX_DEPTH || pi->nfns == CALL_MAX_FUNCS)
    return pi->why = "calls functions too deep", false;
  if (LLVMCountParams(fn) == 0 || LLVMGetTypeKind(LLVMTypeOf(LLVMGetParam(fn, 0))) != LLVMPointerTypeKind)
    return pi->why = "calls a function without a vmctx", false;
  pi->fns[pi->nfns++] = fn;
  for (unsigned p = 1; p < LLVMCountParams(fn); p++)
    if (LLVMGetTypeKind(LLVMTypeOf(LLVMGetParam(fn, p))) == LLVMPointerTypeKind)
      return pi->why = "calls a function taking a pointer", false;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
      if (++pi->ninsns > CALL_MAX_INSNS) return pi->why = "calls a function too large for a kernel", false;
      if (!pure_insn(fn, td, i, pi, depth)) return false;
    }
  /* a use of the vmctx other than the base's load and calls' vmctx */
  for (LLVMUseRef u = LLVMGetFirstUse(LLVMGetParam(fn, 0)); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    if (!is_mem_base(fn, user) && !(LLVMIsACallInst(user) && LLVMGetOperand(user, 0) == LLVMGetParam(fn, 0)))
      return pi->why = "calls a function that reads host state", false;
  }
  return true;
}

static bool pure_callee(kr_ctx *c, LLVMValueRef call, pure_info *pi) {
  memset(pi, 0, sizeof *pi);
  LLVMValueRef callee = LLVMGetCalledValue(call);
  if (!LLVMIsAFunction(callee) || ir_wasm_index(callee) < 0 || LLVMIsDeclaration(callee))
    return kr_fail(c, "calls a function");
  unsigned nargs = (unsigned)LLVMGetNumArgOperands(call);
  LLVMValueRef caller = LLVMGetBasicBlockParent(LLVMGetInstructionParent(call));
  if (nargs == 0 || LLVMGetOperand(call, 0) != LLVMGetParam(caller, 0) || nargs - 1 > CALL_MAX_ARGS)
    return kr_fail(c, "calls a function");
  LLVMTypeRef rt = LLVMGetReturnType(LLVMGlobalGetValueType(callee));
  kn_type t;
  if (!kr_type_of(rt, &t) || t == KN_I1 || t == KN_I8 || t == KN_I16)
    return kr_fail(c, "calls a function without a scalar result");
  LLVMTargetDataRef td = LLVMGetModuleDataLayout(LLVMGetGlobalParent(callee));
  if (!closure(callee, td, pi, 0)) return kr_fail(c, pi->why);
  return true;
}

bool kr_pure_call(kr_ctx *c, LLVMValueRef call) {
  pure_info pi;
  return pure_callee(c, call, &pi);
}

/* The bytes a callee reads: a read range of their own (one access of
 * that many bytes), checked against memory and the nest's writes. */
static void add_const_range(kr_ctx *c, int64_t lo, int64_t hi) {
  kn_recog_nest *o = c->out;
  for (int i = 0; i < o->nranges; i++) {
    const kn_range *r = &o->ranges[i];
    if (!r->is_write && r->ndims == 0 && r->addr.nparam_terms == 0 && r->addr.c0 == lo && r->size == hi - lo)
      return;
  }
  *kr_range_slot(c) = (kn_range){.addr = {.c0 = lo, .align = 1}, .size = (unsigned)(hi - lo)};
  o->check_overlap = true;
}

int32_t kr_call(kr_ctx *c, LLVMValueRef call, kn_type t) {
  pure_info pi;
  if (!pure_callee(c, call, &pi)) return -1;
  LLVMValueRef callee = LLVMGetCalledValue(call);
  kn_expr e = kr_node(KN_E_CALL, t, -1, -1, -1);
  e.func = (uint32_t)ir_wasm_index(callee);
  int32_t *args[CALL_MAX_ARGS] = {&e.a, &e.b, &e.c};
  unsigned nargs = (unsigned)LLVMGetNumArgOperands(call) - 1;
  for (unsigned k = 0; k < nargs; k++) {
    kn_type at;
    LLVMValueRef arg = LLVMGetOperand(call, k + 1);
    if (!kr_type_of(LLVMTypeOf(arg), &at) || at == KN_I1 || at == KN_I8 || at == KN_I16)
      return kr_fail(c, "calls a function with an argument a kernel does not take"), -1;
    *args[k] = kr_expr(c, arg);
    if (*args[k] < 0) return -1;
  }
  if (pi.lo < pi.hi) add_const_range(c, pi.lo, pi.hi);
  kn_recog_nest *o = c->out;
  for (int k = 0; k < o->ncallees; k++)
    if (o->callees[k] == callee) return kr_push(c, e);
  if (o->ncallees % 4 == 0) {
    LLVMValueRef *grown = tw_arena_alloc(c->arena, (size_t)(o->ncallees + 4) * sizeof *grown);
    for (int k = 0; k < o->ncallees; k++) grown[k] = o->callees[k];
    o->callees = grown;
  }
  o->callees[o->ncallees++] = callee;
  return kr_push(c, e);
}
