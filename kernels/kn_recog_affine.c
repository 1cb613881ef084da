/* kn_recog_affine.c: addresses and integers of a nest as affine forms over
 * iteration counts t_d and live host values, for the recognisers. */
#include <string.h>

#include "kn_internal.h"

#define MAX_DEPTH 16

static const kr_affine not_affine = {.ok = false};
/* the pseudo dim of a region's s' (int_rec, sprime_drop) */
#define SPRIME (KR_MAX_DIMS + 1)

bool kr_fail(kr_ctx *c, const char *reason) {
  if (!c->reason) c->reason = reason;
  return false;
}

int kr_param(kr_ctx *c, kn_bind b) {
  kn_desc *d = &c->out->desc;
  /* a row pointer moves with its loop: no value the host can pass (in a
   * region's proof, kr_region_prove, only a name: the stores of the
   * region's parts are compared in one iteration of the loop loading it,
   * where it is one value, and the params made there are dropped) */
  for (int r = 0; r < c->nrows && b.kind == KN_BIND_VALUE && !c->region_proof; r++) {
    bool row = b.value == c->rows[r];
    for (int m = 0; m < KN_BIND_MORE; m++) row |= b.more[m] == c->rows[r];
    if (row) {
      kr_fail(c, "a row pointer loaded in the nest used other than as a matrix's row (a row table)");
      return -1;
    }
  }
  for (unsigned i = 0; i < d->nparams; i++) {
    const kn_bind *o = &c->out->binds[i];
    if (o->kind == b.kind && o->value == b.value && o->trip == b.trip && o->scale == b.scale &&
        o->addend == b.addend && o->top_tested == b.top_tested && o->guard == b.guard &&
        o->guard_enters == b.guard_enters && o->coeff == b.coeff &&
        !memcmp(o->more, b.more, sizeof b.more) && !memcmp(o->more_coeff, b.more_coeff, sizeof b.more_coeff))
      return (int)i;
  }
  if (d->nparams == KN_MAX_PARAMS) return -1;
  c->out->binds[d->nparams] = b;
  return (int)d->nparams++;
}

int64_t kr_coeff(const kr_affine *a, int dim) {
  for (int i = 0; i < a->n; i++)
    if (a->t[i].dim == dim && !a->t[i].param) return a->t[i].coeff;
  return 0;
}

static void add_term(kr_affine *a, kr_term t) {
  if (!a->ok || t.coeff == 0) return;
  for (int i = 0; i < a->n; i++) {
    kr_term *u = &a->t[i];
    if (u->dim != t.dim || u->param != t.param) continue;
    if (__builtin_add_overflow(u->coeff, t.coeff, &u->coeff)) a->ok = false;
    if (u->coeff == 0) *u = a->t[--a->n];
    return;
  }
  if (a->n == KR_MAX_TERMS) a->ok = false;
  else a->t[a->n++] = t;
}

/* a += k * b, where b's terms may take one more param factor `param`. */
static void add_scaled(kr_affine *a, const kr_affine *b, int64_t k, LLVMValueRef param) {
  if (!b->ok) {
    a->ok = false;
    return;
  }
  int64_t c;
  if (__builtin_mul_overflow(b->c, k, &c)) a->ok = false;
  if (param) add_term(a, (kr_term){c, -1, param});
  else if (__builtin_add_overflow(a->c, c, &a->c)) a->ok = false;
  for (int i = 0; i < b->n && a->ok; i++) {
    kr_term t = b->t[i];
    if ((param && t.param) || __builtin_mul_overflow(t.coeff, k, &t.coeff)) a->ok = false;
    if (param) t.param = param;
    add_term(a, t);
  }
}

void kr_affine_add(kr_affine *a, const kr_affine *b, int64_t k) { add_scaled(a, b, k, NULL); }

static int dim_of(const kr_ctx *c, const ir_loop *l) {
  for (int d = 0; d < c->depth; d++)
    if (c->chain[d] == l) return d;
  return l && l == c->prologue && c->copies == 1 ? c->depth - 1 : -1;
}

static kr_affine int_rec(kr_ctx *c, LLVMValueRef v, int depth);
static LLVMValueRef same_incoming(LLVMValueRef p);
static kr_affine live_value(kr_ctx *c, LLVMValueRef v, int depth);
static kr_affine wasm_address(kr_ctx *c, LLVMValueRef x32);

/* Whether integer arithmetic v of the nest reads a struct field
 * (kr_field_load). */
static bool reads_field(const kr_ctx *c, LLVMValueRef v, int depth) {
  if (kr_field_load(c, v)) return true;
  if (depth > 4 || !LLVMIsABinaryOperator(v) || !ir_loop_defines(kr_nest(c), v, c->cfg)) return false;
  return reads_field(c, LLVMGetOperand(v, 0), depth + 1) || reads_field(c, LLVMGetOperand(v, 1), depth + 1);
}

/* A load in the nest of an integer at an address computed before it (a
 * struct's field, `m->data`, `m->stride`, which clang reloads on each
 * iteration because a store of the nest may change it): a live value the
 * host loads before the launch (off_version.c), its bytes a read range
 * of the kernel (kr_field_ranges) so that the runtime's overlap check
 * refuses a launch whose output covers them; then no store of the nest
 * writes them, and every load in the nest reads what the host read. */
bool kr_field_load(const kr_ctx *c, LLVMValueRef v) {
  if (!v || !LLVMIsALoadInst(v) || !ir_loop_defines(kr_nest(c), v, c->cfg) || LLVMGetVolatile(v) ||
      LLVMGetOrdering(v) != LLVMAtomicOrderingNotAtomic || LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMIntegerTypeKind)
    return false;
  LLVMValueRef ptr = LLVMGetOperand(v, 0);
  if (ir_loop_defines(kr_nest(c), ptr, c->cfg)) return false;
  while (LLVMIsAGetElementPtrInst(ptr)) ptr = LLVMGetOperand(ptr, 0);
  return ptr == c->mem_base;
}

/* A value the host computes before the launch as the nest would: one
 * computed before the nest, a field load (kr_field_load), or integer
 * arithmetic, a compare, an extension or a select of such values in the
 * nest (`m->cols < 1`, `m->cols & INT_MAX` that guard and count an inner
 * loop), no division (it may trap), no phi; off_version.c computes it
 * again in offload.call. */
bool kr_host_value(const kr_ctx *c, LLVMValueRef v, int depth) {
  if (!v || !ir_loop_defines(kr_nest(c), v, c->cfg) || kr_field_load(c, v)) return true;
  if (depth > 6 || LLVMIsAPHINode(v) || LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMIntegerTypeKind) return false;
  if (!ir_int_step_pure(v)) return false;
  for (int k = 0; k < LLVMGetNumOperands(v); k++)
    if (!kr_host_value(c, LLVMGetOperand(v, (unsigned)k), depth + 1)) return false;
  return true;
}

/* A loop-invariant atom of ir_affine: a live value, or an extension (inside
 * the nest) of one, which the host passes as the value itself. */
static LLVMValueRef live_atom(kr_ctx *c, LLVMValueRef inv) {
  if (!ir_loop_defines(kr_nest(c), inv, c->cfg) || kr_field_load(c, inv)) return inv;
  if (LLVMIsAZExtInst(inv) || LLVMIsASExtInst(inv)) {
    LLVMValueRef x = LLVMGetOperand(inv, 0);
    if (!ir_loop_defines(kr_nest(c), x, c->cfg) || kr_field_load(c, x)) return x;
  }
  return NULL;
}

/* t = (v - copy) / copies on the unrolled loop: a's terms in counter d
 * (step iv_step per copy group) rescaled to one iteration; false when the
 * step does not divide among the copies. */
static bool per_copy(const kr_ctx *c, kr_affine *a, int d, int64_t iv_step) {
  if (iv_step % c->copies) return false;
  int64_t per = iv_step / c->copies;
  for (int i = 0; i < a->n; i++)
    if (a->t[i].dim == d && !a->t[i].param) a->t[i].coeff = per;
  a->c -= per * c->copy;
  return true;
}

/* An IV of the innermost loop where it stands for a region: V's IVs as
 * any (their starts are j = 0's values); R's start at s' plus a value
 * that does not vary with s', s' times their step per j (step / U, U
 * copies a trip), read at s' = 0: j then counts from 0 over R's copies. */
static kr_affine kr_region_iv(kr_ctx *c, const ir_iv *iv, int d, int depth) {
  const kr_region *r = kr_region_of(c, iv->loop);
  /* the prologue loop P's counters (read only with prol_j) start at s,
   * one j a trip, as R's at s', U j's a trip */
  bool prol = false;
  for (int k = 0; r && k < r->nprol; k++) prol |= r->prol[k] == iv->loop;
  if (prol && c->prol_j != r) return not_affine;
  LLVMValueRef at = prol ? r->prol_at : r ? r->start : NULL;
  int64_t U = prol ? 1 : r ? r->copies : 1;
  LLVMValueRef marker = c->region_marker;
  c->region_marker = at;
  kr_affine a = int_rec(c, kr_region_widened_start(iv), depth + 1);
  c->region_marker = marker;
  if (!a.ok) return not_affine;
  if (r) {
    int64_t k = 0;
    for (int i = 0; i < a.n; i++)
      if (a.t[i].param == at && a.t[i].dim < 0) k = a.t[i].coeff;
    /* (or, of the region proved, k = 0: a counter of R that does not
     * start at s', an offset from 0 with s' in the address beside it: a
     * row of R in a nest, or clang's runtime unroll by 4 at the top of a
     * function, kn_recog_top.c; sprime_drop then checks the address's s'
     * part, all of it SPRIME, against its part in j) */
    if (k * U != iv->step && !(k == 0 && r == c->region && !prol && (c->top || c->depth >= 2))) return not_affine;
    add_term(&a, (kr_term){-k, -1, at});
    /* R of a loop from j0 (kr_region.j0) is read at s' = j0, its first j
     * (the inner region's in sprime_drop) */
    if (!prol && r != c->region && __builtin_add_overflow(a.c, k * r->j0, &a.c)) return not_affine;
    /* the inner region's: s' kept as SPRIME, checked with the address's
     * other parts in s' (sprime_drop) */
    if (r == c->region) add_term(&a, (kr_term){k, SPRIME, NULL});
  }
  for (int i = 0; r && i < a.n; i++)
    if (a.t[i].param == at) return not_affine;
  add_term(&a, (kr_term){iv->step, d, NULL});
  if (c->copies > 1 && !per_copy(c, &a, d, iv->step)) return not_affine;
  return a;
}

/* iv = start + step * t_d, with the start expanded in the enclosing loops. */
static kr_affine expand_iv(kr_ctx *c, const ir_iv *iv, int depth) {
  int d = dim_of(c, iv->loop);
  if (d < 0) return not_affine;
  if (c->region && d == c->depth - 1 && kr_region_of(c, iv->loop) == c->region) c->r_ivs++;
  if ((c->region || c->pregion) && d == c->depth - 1 && !iv->step_inv) return kr_region_iv(c, iv, d, depth);
  kr_affine a = int_rec(c, iv->start, depth + 1);
  if (iv->step_inv) {
    /* start + t_d * (s0 + sum k * param): each part of the step gains t_d */
    /* (copies rescale the innermost counter only) */
    /* a region's R unrolled U times (kn_lanes_region.c): copy u of trip
     * t is j = U t + u, so step * t reads (step / U) * (j - u) */
    bool per_j = c->copies > 1 && d == c->depth - 1 && c->region;
    if (c->copies > 1 && !per_j && (d == c->depth - 1 || !(c->region || c->pregion))) return not_affine;
    if (c->tri && c->tri_upper && d == c->tri_dim) return not_affine;
    kr_affine s = int_rec(c, iv->step_inv, depth + 1);
    if (!s.ok) return not_affine;
    int64_t U = per_j ? c->copies : 1;
    if (s.c % U) return not_affine;
    add_term(&a, (kr_term){s.c / U, d, NULL});
    a.c -= s.c / U * (per_j ? c->copy : 0);
    for (int i = 0; i < s.n; i++) {
      if (s.t[i].dim >= 0 || s.t[i].coeff % U) return not_affine;
      add_term(&a, (kr_term){s.t[i].coeff / U, d, s.t[i].param});
      if (per_j) add_term(&a, (kr_term){-(s.t[i].coeff / U) * c->copy, -1, s.t[i].param});
    }
    return a;
  }
  if (c->tri && c->tri_upper && d == c->tri_dim) {
    /* an upper triangle's row loop (upper_trip) counts t_d from t_o +
     * add: its dim stands for the column jj = t_o + add + t_d, so start +
     * step * t_d reads start - step * (t_o + add) + step * jj */
    add_term(&a, (kr_term){-iv->step, c->tri_outer, NULL});
    if (__builtin_mul_overflow(iv->step, c->tri_add, &(int64_t){0}) || __builtin_sub_overflow(a.c, iv->step * c->tri_add, &a.c))
      return not_affine;
  }
  add_term(&a, (kr_term){iv->step, d, NULL});
  if (d == c->depth - 1 && c->copies > 1 && !per_copy(c, &a, d, iv->step)) return not_affine;
  return a;
}

/* One step of split_scale: p = `x << s` or `x * C` with x computed before
 * the nest, as x and the factor; or a phi (GVN's merge of one such value
 * computed on two paths) whose incoming values all are the same x times
 * the same factor. */
static bool scale_step(kr_ctx *c, LLVMValueRef p, LLVMValueRef *x_out, int64_t *f_out, bool phi_ok) {
  if (phi_ok && LLVMIsAPHINode(p) && LLVMCountIncoming(p) > 0) {
    for (unsigned i = 0; i < LLVMCountIncoming(p); i++) {
      LLVMValueRef x;
      int64_t f;
      if (!scale_step(c, LLVMGetIncomingValue(p, i), &x, &f, false)) return false;
      if (i > 0 && (x != *x_out || f != *f_out)) return false;
      *x_out = x;
      *f_out = f;
    }
    return true;
  }
  if (!LLVMIsABinaryOperator(p)) return false;
  LLVMOpcode op = LLVMGetInstructionOpcode(p);
  LLVMValueRef x = LLVMGetOperand(p, 0), k = LLVMGetOperand(p, 1);
  if (op == LLVMMul && LLVMIsAConstantInt(x)) {
    LLVMValueRef t = x;
    x = k;
    k = t;
  }
  if ((op != LLVMShl && op != LLVMMul) || !LLVMIsAConstantInt(k) || ir_loop_defines(kr_nest(c), x, c->cfg))
    return false;
  int64_t kv = LLVMConstIntGetSExtValue(k);
  if (op == LLVMShl && (kv < 0 || kv > 30)) return false;
  *x_out = x;
  *f_out = op == LLVMShl ? INT64_C(1) << kv : kv;
  return true;
}

/* A live factor `x << s` or `x * C` (computed before the nest) as x and a
 * constant scale, so that `i * (n << 2)` gives the descriptor 4 * n per i:
 * exact modulo 2^32 like every form here. */
static LLVMValueRef split_scale(kr_ctx *c, LLVMValueRef p, int64_t *coeff) {
  LLVMValueRef x;
  int64_t f, scaled;
  for (int n = 0; n < 4 && scale_step(c, p, &x, &f, true); n++) {
    if (__builtin_mul_overflow(*coeff, f, &scaled)) break;
    *coeff = scaled;
    p = x;
  }
  return p;
}

static kr_affine convert(kr_ctx *c, const ir_affine *k, int depth) {
  if (!k->ok) return not_affine;
  kr_affine a = {.ok = true, .c = k->constant};
  for (int i = 0; i < k->nterms && a.ok; i++) {
    ir_term tt = k->terms[i];
    const ir_term *t = &tt;
    LLVMValueRef p = t->inv ? live_atom(c, t->inv) : NULL;
    if (t->inv && !p) return not_affine;
    if (p) p = split_scale(c, p, &tt.coeff);
    if (!t->iv) {
      add_term(&a, (kr_term){t->coeff, -1, p});
      continue;
    }
    kr_affine e = expand_iv(c, t->iv, depth);
    add_scaled(&a, &e, t->coeff, p);
  }
  return a;
}

/* Largest value of a, when it only counts upwards from c >= 0 over loops
 * with constant trip counts; -1 otherwise. */
static int64_t upper_bound(const kr_ctx *c, const kr_affine *a) {
  int64_t max = a->c;
  if (max < 0) return -1;
  for (int i = 0; i < a->n; i++) {
    const kr_term *t = &a->t[i];
    const ir_trip *trip = t->dim >= 0 ? &c->chain[t->dim]->trip : NULL;
    /* On the unrolled loop, t_d is the virtual counter over copies * count. */
    uint64_t copies = t->dim == c->depth - 1 ? (uint64_t)c->copies : 1;
    if (t->param || !trip || trip->kind != IR_TRIP_CONST || t->coeff < 0 || trip->count > INT32_MAX ||
        __builtin_add_overflow(max, t->coeff * (int64_t)(trip->count * copies - 1), &max))
      return -1;
  }
  return max;
}

static bool multiple_of(const kr_affine *a, int64_t m) {
  if (a->c % m) return false;
  for (int i = 0; i < a->n; i++)
    if (a->t[i].param || a->t[i].coeff % m) return false;
  return true;
}

/* `x | y` is `x + y` when x stays below a power of two that divides y:
 * Wasm code packs (k << 2) | (i << 7) this way, without LLVM's disjoint
 * flag. */
static kr_affine or_as_add(kr_ctx *c, LLVMValueRef v, int depth) {
  kr_affine x = int_rec(c, LLVMGetOperand(v, 0), depth + 1);
  kr_affine y = int_rec(c, LLVMGetOperand(v, 1), depth + 1);
  if (!x.ok || !y.ok) return not_affine;
  for (int k = 0; k < 2; k++) {
    const kr_affine *lo = k ? &y : &x, *hi = k ? &x : &y;
    int64_t max = upper_bound(c, lo), pow = 1;
    while (max >= 0 && pow <= max && pow < (INT64_C(1) << 40)) pow <<= 1;
    if (max >= 0 && multiple_of(hi, pow)) {
      kr_affine sum = *hi;
      add_scaled(&sum, lo, 1, NULL);
      return sum;
    }
  }
  return not_affine;
}

/* A value computed before the nest: `x << k`, `x * k` (or GVN's phi of
 * one such value computed on two paths) and `x + k` (k a constant) are
 * taken apart, so that strides such as 4*n reach the descriptor as 4 times
 * the param n; anything else is one param.  Exact modulo 2^32 like every
 * form here: the runtime's range check catches a wrap. */
/* The incoming value of phi p (in loop L's header) from outside L and
 * from L's one latch; false unless p has exactly those two. */
static bool outer_phi(const kr_ctx *c, const ir_loop *L, LLVMValueRef p, LLVMValueRef *init, LLVMValueRef *next) {
  if (!LLVMIsAPHINode(p) || LLVMCountIncoming(p) != 2 || L->nlatches != 1 ||
      LLVMGetInstructionParent(p) != c->cfg->blocks[L->header].bb)
    return false;
  *init = *next = NULL;
  for (unsigned k = 0; k < 2; k++) {
    int b = ir_cfg_index(c->cfg, LLVMGetIncomingBlock(p, k));
    if (b == L->latches[0]) *next = LLVMGetIncomingValue(p, k);
    else if (b >= 0 && !L->in_body[b]) *init = LLVMGetIncomingValue(p, k);
  }
  return *init && *next;
}

/* A region's proof (kn_lanes_region.c) in a nest inside a loop L: v =
 * p * K + B (an i32 add and mul, operands in either order), p L's trip
 * counter (0, then p + 1 along L's latch) and K, B invariant in L, is
 * the phi x of L's header that starts at B and steps by K (clang's
 * strength-reduced column pointer beside the peel's `j * ldc4 + C`):
 * x_t = B + t K = v_t modulo 2^32 on L's trip t, both wrapping i32
 * arithmetic.  x, or NULL. */
static LLVMValueRef outer_iv_alias(const kr_ctx *c, LLVMValueRef v) {
  if (!c->region_proof || !LLVMIsABinaryOperator(v) || LLVMGetInstructionOpcode(v) != LLVMAdd ||
      LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(LLVMTypeOf(v)) != 32)
    return NULL;
  for (int o = 0; o < 2; o++) {
    LLVMValueRef m = LLVMGetOperand(v, (unsigned)o), B = LLVMGetOperand(v, (unsigned)(1 - o));
    if (!LLVMIsABinaryOperator(m) || LLVMGetInstructionOpcode(m) != LLVMMul) continue;
    for (int q = 0; q < 2; q++) {
      LLVMValueRef p = LLVMGetOperand(m, (unsigned)q), K = LLVMGetOperand(m, (unsigned)(1 - q)), init, next;
      /* (or the i32 truncation of L's widened i64 counter: t modulo 2^32 too) */
      if (LLVMIsATruncInst(p)) p = LLVMGetOperand(p, 0);
      for (const ir_loop *L = c->chain[0]->parent; L; L = L->parent) {
        if (!outer_phi(c, L, p, &init, &next)) continue;
        if (!LLVMIsAConstantInt(init) || LLVMConstIntGetZExtValue(init) != 0 || !LLVMIsABinaryOperator(next) ||
            LLVMGetInstructionOpcode(next) != LLVMAdd || LLVMGetOperand(next, 0) != p ||
            !LLVMIsAConstantInt(LLVMGetOperand(next, 1)) || LLVMConstIntGetZExtValue(LLVMGetOperand(next, 1)) != 1 ||
            ir_loop_defines(L, K, c->cfg) || ir_loop_defines(L, B, c->cfg))
          break;
        for (LLVMValueRef x = LLVMGetFirstInstruction(c->cfg->blocks[L->header].bb); x && LLVMIsAPHINode(x);
             x = LLVMGetNextInstruction(x)) {
          LLVMValueRef xi, xn;
          if (x == p || LLVMTypeOf(x) != LLVMTypeOf(v) || !outer_phi(c, L, x, &xi, &xn) || xi != B ||
              !LLVMIsABinaryOperator(xn) || LLVMGetInstructionOpcode(xn) != LLVMAdd)
            continue;
          LLVMValueRef a = LLVMGetOperand(xn, 0), b = LLVMGetOperand(xn, 1);
          if ((a == x && b == K) || (b == x && a == K)) return x;
        }
        break;
      }
    }
  }
  return NULL;
}

static kr_affine live_value(kr_ctx *c, LLVMValueRef v, int depth) {
  kr_affine atom = {.ok = true, .n = 1, .t = {{1, -1, v}}}, out = {.ok = true};
  if (depth > MAX_DEPTH) return atom;
  /* zext(x) of an i32 x in an address (the start of an i64 IV, as
   * ir_reroll_full.c's loop steps a memarg offset `zext(x) + C`): x's
   * form, as index_rec reads a zext(x) it finds in an index, so that it
   * compares with the lanes addressed `zext(x + C)` */
  if (c->in_address && LLVMIsAZExtInst(v) && LLVMGetIntTypeWidth(LLVMTypeOf(LLVMGetOperand(v, 0))) == 32)
    return wasm_address(c, LLVMGetOperand(v, 0));
  /* a phi of copies of zext(x) (GVN's PRE of an array's base on each
   * path into a join, inlined kernels back to back): x's form, as for
   * zext(x); x, used on every path into the join, dominates it (and so
   * the nest), where the copies do not */
  LLVMValueRef same = c->in_address && LLVMIsAPHINode(v) ? same_incoming(v) : NULL;
  if (same && LLVMIsAZExtInst(same) && LLVMGetIntTypeWidth(LLVMTypeOf(LLVMGetOperand(same, 0))) == 32)
    return wasm_address(c, LLVMGetOperand(same, 0));
  LLVMValueRef x = outer_iv_alias(c, v);
  if (x) return (kr_affine){.ok = true, .n = 1, .t = {{1, -1, x}}};
  int64_t f;
  if (scale_step(c, v, &x, &f, true)) {
    kr_affine inner = int_rec(c, x, depth + 1);
    if (!inner.ok) return atom;
    add_scaled(&out, &inner, f, NULL);
    return out.ok ? out : atom;
  }
  /* a region's proof (kn_lanes_region.c): a sum or difference of live
   * values, the same of their forms (exact modulo 2^width, as the
   * integer arithmetic is), so that forms built on different live values
   * compare (a stencil's V starts from the row `a + 4 n i`, its R from
   * `a + 4 n - 4` that clang computed before the nest) */
  /* (`or disjoint` has no carries: an add) */
  LLVMOpcode vop = LLVMIsABinaryOperator(v) ? LLVMGetInstructionOpcode(v) : LLVMRet;
  if (vop == LLVMOr && LLVMGetIsDisjoint(v)) vop = LLVMAdd;
  if (c->region_proof && (vop == LLVMAdd || vop == LLVMSub)) {
    kr_affine a = int_rec(c, LLVMGetOperand(v, 0), depth + 1), b = int_rec(c, LLVMGetOperand(v, 1), depth + 1);
    add_scaled(&a, &b, vop == LLVMAdd ? 1 : -1, NULL);
    return a.ok ? a : atom;
  }
  if (!LLVMIsABinaryOperator(v) || LLVMGetInstructionOpcode(v) != LLVMAdd) return atom;
  x = LLVMGetOperand(v, 0);
  LLVMValueRef k = LLVMGetOperand(v, 1);
  if (LLVMIsAConstantInt(x)) {
    LLVMValueRef t = x;
    x = k;
    k = t;
  }
  if (!LLVMIsAConstantInt(k)) return atom;
  kr_affine inner = int_rec(c, x, depth + 1);
  if (!inner.ok) return atom;
  add_scaled(&out, &inner, 1, NULL);
  if (__builtin_add_overflow(out.c, LLVMConstIntGetSExtValue(k), &out.c)) return atom;
  return out.ok ? out : atom;
}

/* Whether x and y compute the same: one value, or instructions of one
 * opcode (no phi, no memory access) on operands that do. */
static bool same_computation(LLVMValueRef x, LLVMValueRef y, int depth) {
  if (x == y) return true;
  if (depth > 3 || !LLVMIsAInstruction(x) || !LLVMIsAInstruction(y) || LLVMIsAPHINode(x) ||
      LLVMGetInstructionOpcode(x) != LLVMGetInstructionOpcode(y) || LLVMTypeOf(x) != LLVMTypeOf(y) ||
      LLVMGetNumOperands(x) != LLVMGetNumOperands(y) || LLVMIsALoadInst(x) || LLVMIsACallInst(x) ||
      LLVMIsAICmpInst(x) || LLVMIsAFCmpInst(x))
    return false;
  if (!LLVMIsABinaryOperator(x) && !LLVMIsACastInst(x)) return false;
  for (int k = 0; k < LLVMGetNumOperands(x); k++)
    if (!same_computation(LLVMGetOperand(x, (unsigned)k), LLVMGetOperand(y, (unsigned)k), depth + 1)) return false;
  return true;
}

/* The one computation every incoming value of phi p is a copy of, or
 * NULL. */
static LLVMValueRef same_incoming(LLVMValueRef p) {
  unsigned n = LLVMCountIncoming(p);
  if (n < 2) return NULL;
  LLVMValueRef first = LLVMGetIncomingValue(p, 0);
  if (first == p) return NULL;
  for (unsigned i = 1; i < n; i++)
    if (!same_computation(first, LLVMGetIncomingValue(p, i), 0)) return NULL;
  return first;
}

static kr_affine int_rec(kr_ctx *c, LLVMValueRef v, int depth) {
  if (depth > MAX_DEPTH) return not_affine;
  /* a region's s (the peeled iteration's j) and s' (kn_lanes_region.c) */
  if (c->peel_j && v == c->peel_j->peel_at) return (kr_affine){.ok = true, .n = 1, .t = {{1, c->depth - 1, NULL}}};
  if (c->region_marker && v == c->region_marker) return (kr_affine){.ok = true, .n = 1, .t = {{1, -1, v}}};
  /* s' outside a counter's start (R's address adding s' * x to a counter
   * that starts without it): the pseudo dim SPRIME, which sprime_drop
   * checks and drops */
  if (!c->region_marker && c->region && v == c->region->start)
    return (kr_affine){.ok = true, .n = 1, .t = {{1, SPRIME, NULL}}};
  /* the same for s while reading the prologue loop P (it starts there) */
  if (!c->region_marker && c->prol_j && c->prol_j == c->region && v == c->prol_j->prol_at)
    return (kr_affine){.ok = true, .n = 1, .t = {{1, SPRIME, NULL}}};
  if (LLVMIsABinaryOperator(v) && ir_loop_defines(kr_nest(c), v, c->cfg)) {
    LLVMOpcode op = LLVMGetInstructionOpcode(v);
    if (op == LLVMOr && !LLVMGetIsDisjoint(v)) return or_as_add(c, v, depth);
    if (op == LLVMAdd || op == LLVMSub) {
      kr_affine x = int_rec(c, LLVMGetOperand(v, 0), depth + 1);
      kr_affine y = int_rec(c, LLVMGetOperand(v, 1), depth + 1);
      add_scaled(&x, &y, op == LLVMAdd ? 1 : -1, NULL);
      return x;
    }
    /* (x | y) << 3 (Wasm packing indices, then scaling to bytes): the or
     * only comes apart here, before ir_affine_of sees the shift */
    LLVMValueRef k = LLVMGetOperand(v, 1);
    if (op == LLVMShl && LLVMIsAConstantInt(k) && LLVMConstIntGetZExtValue(k) < 31) {
      kr_affine x = int_rec(c, LLVMGetOperand(v, 0), depth + 1), out = {.ok = true};
      add_scaled(&out, &x, INT64_C(1) << LLVMConstIntGetZExtValue(k), NULL);
      return out;
    }
    /* s' * 1536 (a region's R counter over rows of a stride that is no
     * power of two, syrk's A[j][k]; the peel's s * 1536): s' and s are markers
     * ir_affine_of cannot see */
    /* (s' + k) * x, x a live value: SPRIME and the constant times x; the
     * peel's s * x (s its counter, int_rec above) */
    if (op == LLVMMul && !LLVMIsAConstantInt(k) && (c->region || c->peel_j) && !c->region_marker)
      for (int o = 0; o < 2; o++) {
        LLVMValueRef y = LLVMGetOperand(v, 1 - o);
        if (ir_loop_defines(kr_nest(c), y, c->cfg)) continue;
        kr_affine x = int_rec(c, LLVMGetOperand(v, o), depth + 1), out = {.ok = true};
        bool sp = false;
        for (int i = 0; x.ok && i < x.n; i++) {
          bool counter = x.t[i].dim == SPRIME || (c->peel_j && x.t[i].dim == c->depth - 1);
          sp |= counter;
          if (x.t[i].param || (x.t[i].dim >= 0 && !counter)) x.ok = false;
        }
        if (!x.ok || !sp) continue;
        int64_t f = 1;
        LLVMValueRef p = split_scale(c, y, &f);
        add_scaled(&out, &x, f, p);
        return out;
      }
    /* x * f, f a struct field loaded in the nest (kr_field_load, `i *
     * m->stride`): x's terms times the field, which ir_affine_of cannot
     * take for a value of the nest */
    for (int o = 0; op == LLVMMul && o < 2; o++) {
      LLVMValueRef f = LLVMGetOperand(v, 1 - o);
      if (!kr_field_load(c, f)) continue;
      kr_affine x = int_rec(c, LLVMGetOperand(v, o), depth + 1), out = {.ok = true};
      add_scaled(&out, &x, 1, f);
      return out;
    }
    if (op == LLVMMul && LLVMIsAConstantInt(k) && (c->region_marker || c->peel_j)) {
      kr_affine x = int_rec(c, LLVMGetOperand(v, 0), depth + 1), out = {.ok = true};
      add_scaled(&out, &x, LLVMConstIntGetSExtValue(k), NULL);
      return out;
    }
  }
  if (LLVMIsAConstantInt(v)) return (kr_affine){.ok = true, .c = LLVMConstIntGetSExtValue(v)};
  if (!ir_loop_defines(kr_nest(c), v, c->cfg)) return live_value(c, v, depth);
  if (kr_field_load(c, v)) return (kr_affine){.ok = true, .n = 1, .t = {{1, -1, v}}};
  /* a row pointer (`A[i]`): a term of its own, which only a matrix's
   * layout and a range take (kr_row_term) */
  if (c->in_address && kr_row_load(c, v, NULL, NULL)) return (kr_affine){.ok = true, .n = 1, .t = {{1, -1, v}}};
  /* zext(x), x an i32 address computed in the nest from a struct field
   * (an IV's start `zext(m->data + i * m->stride)`): x's form, exact
   * modulo 2^32 as a Wasm address is (wasm_address) */
  if (LLVMIsAZExtInst(v) && LLVMGetIntTypeWidth(LLVMTypeOf(LLVMGetOperand(v, 0))) == 32 &&
      reads_field(c, LLVMGetOperand(v, 0), 0))
    return wasm_address(c, LLVMGetOperand(v, 0));
  /* zext(r), r a row pointer (an IV's start `zext(A[i])` without
   * unrolling): r's term; the runtime's check of every row keeps the i64
   * sums in [0, 2^32), where they equal the Wasm address */
  if (c->in_address && LLVMIsAZExtInst(v) && kr_row_load(c, LLVMGetOperand(v, 0), NULL, NULL))
    return (kr_affine){.ok = true, .n = 1, .t = {{1, -1, LLVMGetOperand(v, 0)}}};
  /* a phi of copies of one computation (GVN's PRE computing `4 * j` on
   * each path into a join, mm_rows's store address): that computation */
  LLVMValueRef same = LLVMIsAPHINode(v) ? same_incoming(v) : NULL;
  if (same) return int_rec(c, same, depth + 1);
  /* Decompose in the innermost chain loop holding v, so ir_iv_of sees the
   * IVs of that loop and of every loop around it. */
  const ir_loop *at = kr_nest(c);
  for (int d = c->top ? 0 : 1; d < c->depth; d++)
    if (ir_loop_defines(c->chain[d], v, c->cfg)) at = c->chain[d];
  if (c->prologue && ir_loop_defines(c->prologue, v, c->cfg)) at = c->prologue;
  ir_affine k = ir_affine_of(v, at, c->cfg, c->td);
  return convert(c, &k, depth);
}

/* a with c->unit_param read as 1 (kr_region_prove, a region's V): each
 * term's factor x dropped, terms that become alike merged. */
static kr_affine unit_subst(const kr_ctx *c, kr_affine a) {
  if (!c->unit_param || !a.ok) return a;
  kr_affine out = {.ok = true, .c = a.c};
  for (int i = 0; i < a.n; i++) {
    kr_term t = a.t[i];
    if (t.param == c->unit_param) t.param = NULL;
    if (t.dim < 0 && !t.param) {
      if (__builtin_add_overflow(out.c, t.coeff, &out.c)) return not_affine;
      continue;
    }
    add_term(&out, t);
  }
  return out;
}

/* a read at s' = 0 (kn_lanes_region.c, R starting at s'): an address
 * of R at (s', t) must be its address at (0, t + s'), so its part in s'
 * (the SPRIME terms: s' times a factor, from counters' starts and
 * offsets) must equal its part in j (the innermost counter's terms; per
 * trip, read with one copy, U times that), factor by factor; the SPRIME
 * terms are then dropped.  With none of R's counters read (`r_ivs` did
 * not grow: the peel, V), only SPRIME terms are checked. */
static kr_affine sprime_drop(const kr_ctx *c, kr_affine a, int r_ivs) {
  if (!a.ok) return a;
  int64_t U = c->region && c->copies == 1 && !c->prol_j ? c->region->copies : 1;
  bool both = c->r_ivs > r_ivs;
  kr_affine out = {.ok = true, .c = a.c};
  for (int i = 0; i < a.n; i++) {
    const kr_term *t = &a.t[i];
    if (t->dim != SPRIME && !(both && t->dim == c->depth - 1)) {
      add_term(&out, *t);
      continue;
    }
    int64_t sp = 0, j = 0;
    for (int k = 0; k < a.n; k++)
      if (a.t[k].param == t->param) {
        if (a.t[k].dim == SPRIME) sp = a.t[k].coeff;
        else if (a.t[k].dim == c->depth - 1) j = a.t[k].coeff;
      }
    if (sp * U != j) return not_affine;
    if (t->dim != SPRIME) add_term(&out, *t);
    /* read at s' = j0 (kr_region.j0; P's s, prol_j, at 0) */
    else if (c->region && !c->prol_j && c->region->j0 && t->param)
      add_term(&out, (kr_term){t->coeff * c->region->j0, -1, t->param});
    else if (c->region && !c->prol_j && __builtin_add_overflow(out.c, t->coeff * c->region->j0, &out.c))
      return not_affine;
  }
  return out;
}

kr_affine kr_int(kr_ctx *c, LLVMValueRef v) {
  int r_ivs = c->r_ivs;
  kr_affine a = int_rec(c, v, 0);
  return unit_subst(c, sprime_drop(c, a, r_ivs));
}

/* Wasm address arithmetic is i32 and wraps: keep the constant in the signed
 * 32-bit range; the runtime range check proves no iteration wrapped. */
static kr_affine wasm_address(kr_ctx *c, LLVMValueRef x32) {
  kr_affine a = int_rec(c, x32, 0);
  a.c = (int64_t)(int32_t)(uint32_t)a.c;
  return a;
}

/* x & m with m = 2^32 - 2^k (k < 8) and every part of x's form a multiple
 * of 2^k: the low 32 bits of x, as zext(trunc x) is, which LLVM writes so
 * once the bounds versioning widened an address sum to i64
 * (compiler/bnd_widen.c: zext(trunc(iv) << 2) becomes
 * (iv << 2) & 0xfffffffc).  Like a Wasm address, the runtime range check proves that
 * the form stays in [0, 2^32), where it equals its low 32 bits. */
static kr_affine masked_address(kr_ctx *c, LLVMValueRef idx) {
  LLVMValueRef x = LLVMGetOperand(idx, 0), m = LLVMGetOperand(idx, 1);
  if (!LLVMIsAConstantInt(m) || LLVMGetIntTypeWidth(LLVMTypeOf(m)) != 64) return not_affine;
  uint64_t mask = LLVMConstIntGetZExtValue(m), low = ~mask & UINT32_MAX;
  if ((mask >> 32) != 0 || (low & (low + 1)) != 0 || low > 0xff) return not_affine;
  kr_affine a = int_rec(c, x, 0);
  bool multiple = a.ok && ((uint64_t)a.c & low) == 0;
  for (int i = 0; multiple && i < a.n; i++) multiple = ((uint64_t)a.t[i].coeff & low) == 0;
  return multiple ? a : not_affine;
}

/* x when every incoming value of phi p is zext(x), x one i32 value (GVN
 * joins copies of an extension it made on two paths); else NULL. */
static LLVMValueRef same_zext(LLVMValueRef p) {
  LLVMValueRef x = NULL;
  for (unsigned i = 0; i < LLVMCountIncoming(p); i++) {
    LLVMValueRef v = LLVMGetIncomingValue(p, i);
    if (!LLVMIsAZExtInst(v) || LLVMGetIntTypeWidth(LLVMTypeOf(LLVMGetOperand(v, 0))) != 32 ||
        (x && LLVMGetOperand(v, 0) != x))
      return NULL;
    x = LLVMGetOperand(v, 0);
  }
  return x;
}

/* An i64 GEP index: constants, zext of an i32 Wasm address (or a phi of
 * copies of one), and sums. */
static kr_affine index_rec(kr_ctx *c, LLVMValueRef idx, int depth) {
  if (depth > MAX_DEPTH) return not_affine;
  if (LLVMIsAConstantInt(idx)) return (kr_affine){.ok = true, .c = LLVMConstIntGetSExtValue(idx)};
  LLVMValueRef x = LLVMIsAPHINode(idx) ? same_zext(idx) : NULL;
  if (x) return wasm_address(c, x);
  if (LLVMIsAZExtInst(idx) && LLVMGetIntTypeWidth(LLVMTypeOf(LLVMGetOperand(idx, 0))) == 32)
    return wasm_address(c, LLVMGetOperand(idx, 0));
  if (LLVMIsABinaryOperator(idx) && LLVMGetInstructionOpcode(idx) == LLVMAnd)
    return masked_address(c, idx);
  if (LLVMIsABinaryOperator(idx) && LLVMGetInstructionOpcode(idx) == LLVMAdd) {
    kr_affine a = index_rec(c, LLVMGetOperand(idx, 0), depth + 1);
    kr_affine b = index_rec(c, LLVMGetOperand(idx, 1), depth + 1);
    add_scaled(&a, &b, 1, NULL);
    return a;
  }
  return int_rec(c, idx, 0);
}

static kr_affine address_rec(kr_ctx *c, LLVMValueRef ptr);

/* (a row pointer, kr_row_load, is a term of an address only, never of
 * an integer value the nest computes) */
kr_affine kr_address(kr_ctx *c, LLVMValueRef ptr) {
  c->in_address++;
  kr_affine a = address_rec(c, ptr);
  c->in_address--;
  return a;
}

static kr_affine address_rec(kr_ctx *c, LLVMValueRef ptr) {
  kr_affine a = {.ok = true};
  int r_ivs = c->r_ivs;
  for (int n = 0; LLVMIsAGetElementPtrInst(ptr) && n < MAX_DEPTH && a.ok; n++) {
    LLVMTypeRef ty = LLVMGetGEPSourceElementType(ptr);
    if (LLVMGetNumOperands(ptr) != 2 || LLVMGetTypeKind(ty) != LLVMIntegerTypeKind ||
        LLVMGetIntTypeWidth(ty) != 8)
      return not_affine;
    kr_affine i = index_rec(c, LLVMGetOperand(ptr, 1), 0);
    add_scaled(&a, &i, 1, NULL);
    ptr = LLVMGetOperand(ptr, 0);
  }
  return ptr == c->mem_base ? unit_subst(c, sprime_drop(c, a, r_ivs)) : not_affine;
}

bool kr_to_addr(kr_ctx *c, const kr_affine *a, int d0, int d1, unsigned align, kn_addr *out) {
  *out = (kn_addr){.c0 = a->c, .align = align};
  for (int i = 0; i < a->n; i++) {
    const kr_term *t = &a->t[i];
    if (t->dim >= 0 && t->dim != d0 && t->dim != d1 && c->region_proof) {
      /* (kn_lanes_region.c) an outer counter (times a live value) as a
       * pseudo live value: its loop's header (and that value), one each */
      LLVMValueRef dim_marker = LLVMBasicBlockAsValue(c->cfg->blocks[c->chain[t->dim]->header].bb);
      int p = kr_param(c, (kn_bind){.kind = KN_BIND_VALUE, .value = dim_marker,
                                    .addend = (int64_t)(intptr_t)t->param});
      if (p < 0 || out->nparam_terms == KN_MAX_ADDR_PARAMS) return kr_fail(c, "too many live values");
      out->param_index[out->nparam_terms] = (unsigned)p;
      out->param_coeff[out->nparam_terms++] = t->coeff;
      continue;
    }
    if (t->dim >= 0) {
      if (t->dim != d0 && t->dim != d1) return false;
      int k = t->dim == d0 ? 0 : 1;
      if (!t->param) {
        out->iv_coeff[k] += t->coeff;
        continue;
      }
      /* a run-time stride: counter times one live value */
      int p = kr_param(c, (kn_bind){.kind = KN_BIND_VALUE, .value = t->param});
      if (p < 0) return kr_fail(c, "too many live values");
      if (out->iv_pcoeff[k] && out->iv_pindex[k] != (unsigned)p)
        return kr_fail(c, "a loop counter scaled by two live values");
      out->iv_pcoeff[k] += t->coeff;
      out->iv_pindex[k] = (unsigned)p;
      continue;
    }
    int p = kr_param(c, (kn_bind){.kind = KN_BIND_VALUE, .value = t->param});
    if (p < 0 || out->nparam_terms == KN_MAX_ADDR_PARAMS) return kr_fail(c, "too many live values");
    out->param_index[out->nparam_terms] = (unsigned)p;
    out->param_coeff[out->nparam_terms++] = t->coeff;
  }
  /* kr_region_prove compares addresses whose forms list terms in another
   * order: by param index there */
  for (unsigned i = 1; c->region_proof && i < out->nparam_terms; i++)
    for (unsigned k = i; k > 0 && out->param_index[k - 1] > out->param_index[k]; k--) {
      unsigned pi = out->param_index[k];
      int64_t pc = out->param_coeff[k];
      out->param_index[k] = out->param_index[k - 1];
      out->param_coeff[k] = out->param_coeff[k - 1];
      out->param_index[k - 1] = pi;
      out->param_coeff[k - 1] = pc;
    }
  return true;
}

bool kr_assign_copies(const int64_t *keys, int n, int64_t step, int *copy_of) {
  if (n == 1) return (copy_of[0] = 0, true);
  if (step % n) return false;
  int64_t per = step / n, lo = keys[0];
  for (int i = 1; i < n; i++)
    if (per > 0 ? keys[i] < lo : keys[i] > lo) lo = keys[i];
  uint32_t seen = 0;
  for (int i = 0; i < n; i++) {
    int64_t d = keys[i] - lo;
    if (per == 0 || d % per || d / per < 0 || d / per >= n || n > 32) return false;
    copy_of[i] = (int)(d / per);
    if (seen & (1u << copy_of[i])) return false;
    seen |= 1u << copy_of[i];
  }
  return true;
}

bool kr_row_load(kr_ctx *c, LLVMValueRef v, kr_affine *table, int *dim) {
  if (c->row_reading || !v || !LLVMIsALoadInst(v) || !ir_loop_defines(kr_nest(c), v, c->cfg) ||
      LLVMGetVolatile(v) || LLVMGetOrdering(v) != LLVMAtomicOrderingNotAtomic ||
      LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(LLVMTypeOf(v)) != 32)
    return false;
  c->row_reading = true;
  kr_affine a = kr_address(c, LLVMGetOperand(v, 0));
  c->row_reading = false;
  if (!a.ok) return false;
  int d = -1;
  kr_affine rest = {.ok = true, .c = a.c};
  for (int i = 0; i < a.n; i++) {
    const kr_term *t = &a.t[i];
    if (t->dim < 0) {
      if (kr_field_load(c, t->param) || !ir_loop_defines(kr_nest(c), t->param, c->cfg)) {
        rest.t[rest.n++] = *t;
        continue;
      }
      return false;
    }
    if (d >= 0 || t->param || t->coeff != 4) return false;
    d = t->dim;
  }
  if (d < 0) return false;
  int k = 0;
  while (k < c->nrows && c->rows[k] != v) k++;
  if (k == c->nrows) {
    if (c->nrows == KR_MAX_DIMS) return false;
    c->rows[c->nrows++] = v;
  }
  if (table) *table = rest;
  if (dim) *dim = d;
  return true;
}

bool kr_row_term(kr_ctx *c, const kr_affine *a, LLVMValueRef *row) {
  *row = NULL;
  for (int i = 0; i < a->n; i++) {
    const kr_term *t = &a->t[i];
    bool is_row = false;
    for (int r = 0; r < c->nrows; r++) is_row |= t->param == c->rows[r];
    if (!is_row) continue;
    if (*row || t->dim >= 0 || t->coeff != 1)
      return kr_fail(c, "an address adds a row pointer twice, or scaled: no row table");
    *row = t->param;
  }
  return true;
}

bool kr_live_size(kr_ctx *c, const kr_affine *a, kn_size *out) {
  if (a->n == 0) return (*out = (kn_size){false, a->c}, true);
  if (a->n > KN_BIND_MORE + 1) return kr_fail(c, "matrix layout not expressible");
  kn_bind b = {.kind = KN_BIND_VALUE, .addend = a->c};
  for (int i = 0; i < a->n; i++) {
    if (a->t[i].dim >= 0) return kr_fail(c, "matrix layout not expressible");
    if (i == 0) {
      b.value = a->t[0].param;
      b.coeff = a->t[0].coeff == 1 ? 0 : a->t[0].coeff;
    } else {
      b.more[i - 1] = a->t[i].param;
      b.more_coeff[i - 1] = a->t[i].coeff;
    }
  }
  int p = kr_param(c, b);
  if (p < 0) return kr_fail(c, "too many live values");
  *out = (kn_size){true, p};
  return true;
}

bool kr_same_affine(const kr_affine *x, const kr_affine *y) {
  if (x->c != y->c || x->n != y->n) return false;
  for (int i = 0; i < x->n; i++) {
    bool found = false;
    for (int k = 0; k < y->n; k++)
      found |= x->t[i].coeff == y->t[k].coeff && x->t[i].dim == y->t[k].dim && x->t[i].param == y->t[k].param;
    if (!found) return false;
  }
  return true;
}

kn_range *kr_range_slot(kr_ctx *c) {
  kn_recog_nest *o = c->out;
  if (o->nranges % 8 == 0) {
    kn_range *grown = tw_arena_alloc(c->arena, (size_t)(o->nranges + 8) * sizeof *grown);
    for (int i = 0; i < o->nranges; i++) grown[i] = o->ranges[i];
    o->ranges = grown;
  }
  return &o->ranges[o->nranges++];
}

bool kr_add_range(kr_ctx *c, const kr_affine *a, unsigned size, bool is_write) {
  kn_range r = {.size = size, .is_write = is_write, .ndims = (unsigned)c->depth};
  for (int f = 0; f < c->nforward && !is_write; f++) r.forwarded |= kr_same_affine(a, &c->forward[f]);
  r.forwarded |= is_write && c->forward_writes;
  kr_affine rest = *a;
  /* rows through a table (kr_row_load): the row pointer's term out, its
   * loop's dim the table's (no other term may move with it), and the
   * table's own 4 bytes per row a read range of their own */
  LLVMValueRef row;
  if (!kr_row_term(c, a, &row)) return false;
  if (row) {
    kr_affine table;
    int td;
    if (!kr_row_load(c, row, &table, &td)) return kr_fail(c, "a row pointer's table not expressible");
    for (int i = 0; i < rest.n; i++)
      if (rest.t[i].param == row) rest.t[i--] = rest.t[--rest.n];
    for (int i = 0; i < rest.n; i++)
      if (rest.t[i].dim == td) return kr_fail(c, "rows through a table that also move with the row's loop");
    if (!kr_live_size(c, &table, &r.table)) return false;
    r.table_dim = (unsigned)td + 1;
    kr_affine own = table;
    own.t[own.n++] = (kr_term){4, td, NULL};
    if (!kr_add_range(c, &own, 4, false)) return false;
  }
  for (int d = 0; d < c->depth; d++) {
    r.extent[d] = c->trips[d];
    for (int i = 0; i < rest.n; i++) {
      const kr_term *t = &rest.t[i];
      if (t->dim != d) continue;
      if (!t->param) {
        r.coeff[d] += t->coeff;
      } else {
        int p = kr_param(c, (kn_bind){.kind = KN_BIND_VALUE, .value = t->param});
        if (p < 0) return kr_fail(c, "too many live values");
        if (r.pcoeff[d] && r.pindex[d] != (unsigned)p)
          return kr_fail(c, "a loop counter scaled by two live values");
        r.pcoeff[d] += t->coeff;
        r.pindex[d] = (unsigned)p;
      }
      rest.t[i--] = rest.t[--rest.n];
    }
  }
  if (!kr_to_addr(c, &rest, -1, -1, 1, &r.addr)) return kr_fail(c, "accessed range not expressible");
  *kr_range_slot(c) = r;
  return true;
}

/* The field loads v is computed from (kr_host_value): each one's bytes a
 * read range. */
static bool field_ranges_of(kr_ctx *c, LLVMValueRef v, int depth, LLVMValueRef *done, int *ndone) {
  if (!v || !ir_loop_defines(kr_nest(c), v, c->cfg)) return true;
  if (!kr_field_load(c, v)) {
    if (depth > 6 || !kr_host_value(c, v, depth)) return kr_fail(c, "a live value is computed in the loop");
    for (int k = 0; k < LLVMGetNumOperands(v); k++)
      if (!field_ranges_of(c, LLVMGetOperand(v, (unsigned)k), depth + 1, done, ndone)) return false;
    return true;
  }
  for (int k = 0; k < *ndone; k++)
    if (done[k] == v) return true;
  if (*ndone == KN_MAX_PARAMS * 2) return kr_fail(c, "too many fields loaded in the nest");
  done[(*ndone)++] = v;
  kr_affine a = kr_address(c, LLVMGetOperand(v, 0));
  unsigned size = LLVMGetIntTypeWidth(LLVMTypeOf(v)) / 8;
  if (!a.ok) return kr_fail(c, "a field loaded in the nest at an address not expressible");
  if (!kr_add_range(c, &a, size, false)) return false;
  c->out->check_overlap = true;
  /* a written range of the same form would pass the runtime's overlap
   * check as the output read in place (reads_own_output) */
  const kn_range *f = &c->out->ranges[c->out->nranges - 1];
  for (int r = 0; r < c->out->nranges - 1; r++) {
    const kn_range *w = &c->out->ranges[r];
    bool same = w->is_write && w->addr.c0 == f->addr.c0 && w->addr.nparam_terms == f->addr.nparam_terms &&
                !memcmp(w->addr.param_index, f->addr.param_index, sizeof f->addr.param_index) &&
                !memcmp(w->addr.param_coeff, f->addr.param_coeff, sizeof f->addr.param_coeff);
    for (unsigned d = 0; same && d < w->ndims; d++) same = w->coeff[d] == 0 && w->pcoeff[d] == 0;
    if (same) return kr_fail(c, "the nest stores to a struct field it reads its layout from");
  }
  return true;
}

/* field_ranges_of through the min/max calls a guard's value may hold
 * (kr_guard_host_value). */
static bool guard_field_ranges(kr_ctx *c, LLVMValueRef v, int depth, LLVMValueRef *done, int *ndone) {
  if (depth < 4 && kr_guard_min_max(c, v))
    return guard_field_ranges(c, LLVMGetOperand(v, 0), depth + 1, done, ndone) &&
           guard_field_ranges(c, LLVMGetOperand(v, 1), depth + 1, done, ndone);
  return field_ranges_of(c, v, 0, done, ndone);
}

/* Each field load a param of the kernel reads (kr_field_load): its bytes
 * a read range, and the output checked against them before a launch. */
bool kr_field_ranges(kr_ctx *c) {
  kn_recog_nest *o = c->out;
  LLVMValueRef done[KN_MAX_PARAMS * 2];
  int ndone = 0;
  for (unsigned i = 0; i < o->desc.nparams; i++) {
    const kn_bind *b = &o->binds[i];
    LLVMValueRef vals[2 + KN_BIND_MORE] = {NULL};
    if (b->kind == KN_BIND_VALUE) {
      vals[0] = b->value;
      for (int k = 0; k < KN_BIND_MORE; k++) vals[1 + k] = b->more[k];
    } else {
      vals[0] = b->trip->start;
      vals[1] = b->trip->bound;
      vals[2] = b->guard;
    }
    for (int k = 0; k < 2 + KN_BIND_MORE; k++)
      if (!field_ranges_of(c, vals[k], 0, done, &ndone)) return false;
  }
  /* the fields a guard's check reads (kn_recog_guard.c) */
  for (int i = 0; i < o->nguards; i++) {
    const kn_guard *g = &o->guards[i];
    if (!guard_field_ranges(c, g->bound, 0, done, &ndone)) return false;
    for (int k = 0; k < g->nterms; k++)
      if (!guard_field_ranges(c, g->param[k], 0, done, &ndone)) return false;
  }
  return true;
}

bool kr_is_mem_load(const kr_ctx *c, LLVMValueRef v) {
  return LLVMIsALoadInst(v) && ir_loop_defines(kr_nest(c), v, c->cfg);
}
