/* off_guard.c: the host's check, before a launch, that no guard exit of
 * the nest (kn_guard: an assert, an abort, a panic on an index) fires
 * anywhere in the box.  The guard's index f = c + sum coeff * [t_d] *
 * [param] takes its extremes at the box's corners; computed in i128 (each
 * param zero-extended, |coeff| < 2^32, counts at most 2^32: no overflow),
 * they must lie in one window of 2^32 values where the i32 compare reads
 * f less a multiple of 2^32 ([0, 2^32) unsigned, [-2^31, 2^31) signed,
 * moved by that multiple) and no value between them may fire.  When the check fails the CPU loop runs and aborts exactly as
 * the Wasm code does. */
#include "off_internal.h"

static LLVMValueRef wide(LLVMContextRef ctx, int64_t v) {
  return LLVMConstInt(LLVMInt128TypeInContext(ctx), (unsigned long long)v, true);
}

static LLVMValueRef ext128(LLVMBuilderRef b, LLVMValueRef v, bool sign) {
  LLVMTypeRef t = LLVMInt128TypeInContext(LLVMGetTypeContext(LLVMTypeOf(v)));
  return sign ? LLVMBuildSExt(b, v, t, "") : LLVMBuildZExt(b, v, t, "");
}

static bool signed_cmp(kn_cmp p) { return p >= KN_CMP_SLT && p <= KN_CMP_SGE; }

/* i1: guard g never fires over the box; params[i]: param i's i64 value. */
static LLVMValueRef one_guard(LLVMBuilderRef b, const kn_guard *g, LLVMValueRef const *params,
                              off_host_fn host, void *ctx) {
  LLVMContextRef cx = LLVMGetModuleContext(LLVMGetGlobalParent(LLVMGetBasicBlockParent(LLVMGetInsertBlock(b))));
  LLVMTypeRef i64 = LLVMInt64TypeInContext(cx);
  LLVMValueRef ok = LLVMConstInt(LLVMInt1TypeInContext(cx), 1, false);
  LLVMValueRef zero = wide(cx, 0), lo = wide(cx, g->c), hi = lo;
  /* the constant part: terms without a counter */
  for (int i = 0; i < g->nterms; i++) {
    if (g->dim[i] >= 0) continue;
    LLVMValueRef v = g->param[i] ? ext128(b, host(ctx, g->param[i]), false) : wide(cx, 1);
    v = LLVMBuildMul(b, v, wide(cx, g->coeff[i]), "");
    lo = LLVMBuildAdd(b, lo, v, "");
    hi = LLVMBuildAdd(b, hi, v, "");
  }
  /* each counter's coefficient times its last value: a corner */
  for (int d = 0; d < g->ndims; d++) {
    LLVMValueRef a = NULL;
    for (int i = 0; i < g->nterms; i++) {
      if (g->dim[i] != d) continue;
      LLVMValueRef v = g->param[i] ? ext128(b, host(ctx, g->param[i]), false) : wide(cx, 1);
      v = LLVMBuildMul(b, v, wide(cx, g->coeff[i]), "");
      a = a ? LLVMBuildAdd(b, a, v, "") : v;
    }
    if (!a) continue;
    LLVMValueRef trip = g->trip[d].is_param ? params[g->trip[d].value] : LLVMConstInt(i64, (uint64_t)g->trip[d].value, true);
    LLVMValueRef in = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSGE, trip, LLVMConstInt(i64, 1, false), ""),
                                   LLVMBuildICmp(b, LLVMIntSLE, trip, LLVMConstInt(i64, UINT64_C(1) << 32, false), ""),
                                   "guard.trip");
    ok = LLVMBuildAnd(b, ok, in, "");
    LLVMValueRef span = LLVMBuildSub(b, ext128(b, trip, true), wide(cx, 1), "");
    LLVMValueRef corner = LLVMBuildMul(b, a, span, "");
    LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntSLT, corner, zero, "");
    lo = LLVMBuildAdd(b, lo, LLVMBuildSelect(b, neg, corner, zero, ""), "");
    hi = LLVMBuildAdd(b, hi, LLVMBuildSelect(b, neg, zero, corner, ""), "");
  }
  /* f is exact modulo 2^bits (a param zero-extended stands for itself
   * less 2^bits where the Wasm code reads it as negative, `0 - n`): both
   * extremes in one window k, [k 2^bits, (k+1) 2^bits) unsigned, shifted
   * down by 2^(bits-1) signed, where the compare reads f - k 2^bits */
  bool sign = signed_cmp(g->fire);
  int64_t half = sign ? INT64_C(1) << (g->bits - 1) : 0;
  LLVMValueRef bits = wide(cx, g->bits);
  LLVMValueRef k = LLVMBuildAShr(b, LLVMBuildAdd(b, lo, wide(cx, half), ""), bits, "guard.window");
  LLVMValueRef k_hi = LLVMBuildAShr(b, LLVMBuildAdd(b, hi, wide(cx, half), ""), bits, "");
  ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntEQ, k, k_hi, ""), "");
  LLVMValueRef base = LLVMBuildShl(b, k, bits, "");
  lo = LLVMBuildSub(b, lo, base, "guard.lo");
  hi = LLVMBuildSub(b, hi, base, "guard.hi");
  LLVMValueRef s = ext128(b, host(ctx, g->bound), sign), never;
  switch (g->fire) {
  case KN_CMP_SLT: case KN_CMP_ULT: never = LLVMBuildICmp(b, LLVMIntSGE, lo, s, ""); break;
  case KN_CMP_SLE: case KN_CMP_ULE: never = LLVMBuildICmp(b, LLVMIntSGT, lo, s, ""); break;
  case KN_CMP_SGT: case KN_CMP_UGT: never = LLVMBuildICmp(b, LLVMIntSLE, hi, s, ""); break;
  case KN_CMP_SGE: case KN_CMP_UGE: never = LLVMBuildICmp(b, LLVMIntSLT, hi, s, ""); break;
  case KN_CMP_EQ:
    never = LLVMBuildOr(b, LLVMBuildICmp(b, LLVMIntSLT, s, lo, ""), LLVMBuildICmp(b, LLVMIntSGT, s, hi, ""), "");
    break;
  default: /* NE: fires unless f is the bound everywhere */
    never = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, s, lo, ""), LLVMBuildICmp(b, LLVMIntEQ, s, hi, ""), "");
    break;
  }
  return LLVMBuildAnd(b, ok, never, "guard.never");
}

LLVMValueRef off_and(LLVMBuilderRef b, LLVMValueRef x, LLVMValueRef y) {
  return x && y ? LLVMBuildAnd(b, x, y, "") : x ? x : y;
}

LLVMValueRef off_guard_ok(LLVMBuilderRef b, const kn_recog_nest *n, LLVMValueRef const *params,
                          off_host_fn host, void *ctx) {
  LLVMValueRef ok = NULL;
  for (int i = 0; i < n->nguards; i++) ok = off_and(b, ok, one_guard(b, &n->guards[i], params, host, ctx));
  return ok;
}
