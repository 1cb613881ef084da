/* kn_recog_reduce.c: reductions into a phi accumulator (integer add, mul,
 * and, or, xor, min, max; float add with fp_reassociate, or without it as
 * a sequential sum when its terms are added in source order), and the
 * accumulator analysis the ijk matmul shares. */
#include <string.h>

#include "kn_internal.h"

#define MAX_TERMS 32

typedef struct {
  LLVMValueRef phi, latch_value;
  kn_red_op op;
  bool is_float;
  bool ordered;            /* a left-deep chain: terms in program order */
  LLVMValueRef terms[MAX_TERMS];
  int nterms;
} accumulator;

/* The reduction operator v applies, or KN_RED_COUNT (also for
 * kn_lanes_region.c's sums in lanes, kr_red_op). */
static kn_red_op op_of(LLVMValueRef v, bool *is_float) {
  *is_float = false;
  if (LLVMIsABinaryOperator(v)) {
    switch (LLVMGetInstructionOpcode(v)) {
    case LLVMAdd: return KN_RED_ADD;
    case LLVMMul: return KN_RED_MUL;
    case LLVMAnd: return KN_RED_AND;
    case LLVMOr: return KN_RED_OR;
    case LLVMXor: return KN_RED_XOR;
    case LLVMFAdd: *is_float = true; return KN_RED_ADD;
    default: return KN_RED_COUNT;
    }
  }
  if (!LLVMIsACallInst(v)) return KN_RED_COUNT;
  const char *name = ir_callee_name(v);
  static const struct { const char *prefix; kn_red_op op; } table[] = {
      {"llvm.smin.", KN_RED_SMIN}, {"llvm.smax.", KN_RED_SMAX},
      {"llvm.umin.", KN_RED_UMIN}, {"llvm.umax.", KN_RED_UMAX}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strncmp(name, table[i].prefix, strlen(table[i].prefix)) == 0) return table[i].op;
  return KN_RED_COUNT;
}

kn_red_op kr_red_op(LLVMValueRef v) {
  bool is_float;
  kn_red_op op = op_of(v, &is_float);
  return is_float ? KN_RED_COUNT : op;
}

static bool is_link(const kr_ctx *c, const accumulator *acc, LLVMValueRef v, const ir_loop *l) {
  bool f;
  return v != acc->phi && op_of(v, &f) == acc->op && f == acc->is_float &&
         ir_loop_defines(l, v, c->cfg) && LLVMGetFirstUse(v) && !LLVMGetNextUse(LLVMGetFirstUse(v));
}

/* Leaves of the operator tree under v; exactly one of them is the phi. */
static bool collect(kr_ctx *c, accumulator *acc, LLVMValueRef v, const ir_loop *l, int *phis) {
  for (int k = 0; k < 2; k++) {
    LLVMValueRef x = LLVMGetOperand(v, (unsigned)k);
    if (x == acc->phi) (*phis)++;
    else if (is_link(c, acc, x, l)) {
      if (!collect(c, acc, x, l, phis)) return false;
    } else if (acc->nterms == MAX_TERMS) return kr_fail(c, "reduction too long");
    else acc->terms[acc->nterms++] = x;
  }
  return true;
}

/* A chain op(op(op(phi, t0), t1), t2): terms in program order. */
static bool chain(const kr_ctx *c, accumulator *acc, const ir_loop *l) {
  LLVMValueRef v = acc->latch_value;
  int n = 0;
  while (v != acc->phi) {
    LLVMValueRef a = LLVMGetOperand(v, 0), b = LLVMGetOperand(v, 1);
    bool la = a == acc->phi || is_link(c, acc, a, l);
    bool lb = b == acc->phi || is_link(c, acc, b, l);
    if (la == lb || n == MAX_TERMS) return false;
    acc->terms[n++] = la ? b : a;
    v = la ? a : b;
  }
  for (int i = 0; i < n / 2; i++) {
    LLVMValueRef t = acc->terms[i];
    acc->terms[i] = acc->terms[n - 1 - i];
    acc->terms[n - 1 - i] = t;
  }
  acc->nterms = n;
  return true;
}

/* Whether v is the phi, or a link whose operands reach it through links. */
static bool reaches_phi(const kr_ctx *c, const accumulator *acc, LLVMValueRef v, const ir_loop *l, int depth) {
  if (v == acc->phi) return true;
  if (depth > MAX_TERMS || !is_link(c, acc, v, l)) return false;
  return reaches_phi(c, acc, LLVMGetOperand(v, 0), l, depth + 1) ||
         reaches_phi(c, acc, LLVMGetOperand(v, 1), l, depth + 1);
}

/* A float sum's chain: at each add one operand leads to the phi, the other
 * is a whole term, whatever it adds inside (`s = (s + a[i]) + (b[i] +
 * c[i])`: the terms a[i], then b[i] + c[i]), in program order; so each
 * step of the sum is `sum = sum + term`, one rounding, as chain() reads an
 * integer one, where an add inside a term would be a link. */
static bool float_chain(const kr_ctx *c, accumulator *acc, const ir_loop *l) {
  LLVMValueRef v = acc->latch_value;
  int n = 0;
  while (v != acc->phi) {
    LLVMValueRef a = LLVMGetOperand(v, 0), b = LLVMGetOperand(v, 1);
    bool ra = reaches_phi(c, acc, a, l, 0), rb = reaches_phi(c, acc, b, l, 0);
    if (ra == rb || n == MAX_TERMS) return false;
    acc->terms[n++] = ra ? b : a;
    v = ra ? a : b;
  }
  for (int i = 0; i < n / 2; i++) {
    LLVMValueRef t = acc->terms[i];
    acc->terms[i] = acc->terms[n - 1 - i];
    acc->terms[n - 1 - i] = t;
  }
  acc->nterms = n;
  acc->ordered = true;
  return true;
}

static bool find_accumulator(kr_ctx *c, const ir_loop *l, accumulator *acc) {
  LLVMBasicBlockRef h = c->cfg->blocks[l->header].bb;
  LLVMBasicBlockRef latch = c->cfg->blocks[l->latches[0]].bb;
  memset(acc, 0, sizeof *acc);
  for (LLVMValueRef p = LLVMGetFirstInstruction(h); p && LLVMIsAPHINode(p); p = LLVMGetNextInstruction(p)) {
    if (ir_iv_of(l, p)) continue;
    if (acc->phi) return kr_fail(c, "more than one value carried between iterations");
    acc->phi = p;
  }
  if (!acc->phi) return kr_fail(c, "no accumulator");
  for (unsigned i = 0; i < LLVMCountIncoming(acc->phi); i++)
    if (LLVMGetIncomingBlock(acc->phi, i) == latch) acc->latch_value = LLVMGetIncomingValue(acc->phi, i);
  acc->op = op_of(acc->latch_value, &acc->is_float);
  if (acc->op == KN_RED_COUNT || !ir_loop_defines(l, acc->latch_value, c->cfg))
    return kr_fail(c, "loop-carried dependence");
  acc->ordered = chain(c, acc, l);
  if (acc->ordered) return true;
  int phis = 0;
  acc->nterms = 0;
  if (!collect(c, acc, acc->latch_value, l, &phis)) return false;
  return phis == 1 ? true : kr_fail(c, "loop-carried dependence");
}

/* The first load in v's operand tree, for numbering unrolled copies. */
static LLVMValueRef first_load(const kr_ctx *c, LLVMValueRef v, int depth) {
  if (depth > 16 || !LLVMIsAInstruction(v) || !ir_loop_defines(c->chain[0], v, c->cfg)) return NULL;
  if (LLVMIsALoadInst(v)) return v;
  for (int k = 0; k < LLVMGetNumOperands(v); k++) {
    LLVMValueRef l = first_load(c, LLVMGetOperand(v, (unsigned)k), depth + 1);
    if (l) return l;
  }
  return NULL;
}

/* The key of a term for numbering unrolled copies: the first load's
 * address constant, moved to the lowest (the highest when the loop steps
 * down) of the term's loads with the same step.  A copy's loads all move
 * by its copy number times that step, so the extreme moves alike, where
 * the first load need not: clang commutes a copy's operands
 * (`x[i+3] * x[i+4]` after `x[i+2] * x[i+3]`).  Only a numbering:
 * build_terms proves every copy equal to copy 0. */
static void term_key(kr_ctx *c, LLVMValueRef v, int depth, int64_t step, int64_t *key) {
  if (depth > 16 || !LLVMIsAInstruction(v) || !ir_loop_defines(c->chain[0], v, c->cfg)) return;
  if (LLVMIsALoadInst(v)) {
    kr_affine a = kr_address(c, LLVMGetOperand(v, 0));
    if (a.ok && kr_coeff(&a, c->depth - 1) == step && (step > 0 ? a.c < *key : a.c > *key)) *key = a.c;
    return;
  }
  for (int k = 0; k < LLVMGetNumOperands(v); k++) term_key(c, LLVMGetOperand(v, (unsigned)k), depth + 1, step, key);
}

/* Numbers the terms as unrolled copies; the float chain must keep order. */
static bool number_terms(kr_ctx *c, const accumulator *acc, int *copy_of) {
  int64_t keys[MAX_TERMS], step = 0;
  c->copies = 1;
  for (int i = 0; i < acc->nterms; i++) {
    LLVMValueRef ld = first_load(c, acc->terms[i], 0);
    kr_affine a = ld ? kr_address(c, LLVMGetOperand(ld, 0)) : (kr_affine){0};
    if (!a.ok) return kr_fail(c, ld ? "non-affine address" : "reduction term reads no memory");
    keys[i] = a.c;
    step = kr_coeff(&a, c->depth - 1);
    if (step) term_key(c, acc->terms[i], 0, step, &keys[i]);
  }
  if (!kr_assign_copies(keys, acc->nterms, step, copy_of)) return kr_fail(c, "unrolled copies differ");
  for (int i = 0; i < acc->nterms; i++)
    if (acc->is_float && copy_of[i] != i) return kr_fail(c, "float terms out of order");
  return true;
}

/* Builds every copy's term; true when all equal copy 0, whose root is *value. */
static bool build_terms(kr_ctx *c, const accumulator *acc, const int *copy_of, int32_t *value) {
  unsigned first = c->nnodes, count = 0;
  for (int copy = 0; copy < acc->nterms; copy++) {
    int t = 0;
    while (copy_of[t] != copy) t++;
    c->copy = copy;
    c->nmemo = 0;
    unsigned start = c->nnodes;
    int nranges = c->out->nranges;
    int32_t root = kr_expr(c, acc->terms[t]);
    if (root < 0) return false;
    if (copy == 0) {
      *value = root;
      count = c->nnodes - start;
      continue;
    }
    /* the same nodes, or the same tree with a commutative operation's
     * operands swapped (integer and IEEE add and mul commute exactly) */
    if (c->nnodes - start != count ||
        !(kr_same_nodes(c, first, start, count) || kr_same_tree(c, *value, root, 0)))
      return kr_fail(c, "unrolled copies differ");
    c->nnodes = start;
    c->out->nranges = nranges;
  }
  return true;
}

bool kr_reduce(kr_ctx *c) {
  accumulator acc;
  int copy_of[MAX_TERMS];
  if (!find_accumulator(c, c->chain[0], &acc)) return false;
  /* Without --fp-reassociate a float sum stays exact: a chain of adds to
   * the running sum, each term in program order (number_terms proves
   * unrolled copies in order), becomes a sequential sum, which one GPU
   * thread adds in that same order. */
  bool sequential = acc.is_float && !c->opts->fp_reassociate;
  if (sequential && !acc.ordered && !float_chain(c, &acc, c->chain[0]))
    return kr_fail(c, "float sum not a chain of adds in program order: needs --fp-reassociate");
  if (!number_terms(c, &acc, copy_of)) return false;
  kn_type type;
  if (!kr_type_of(LLVMTypeOf(acc.phi), &type) || type == KN_I1 || type == KN_I8 || type == KN_I16)
    return kr_fail(c, "unsupported reduction type");
  c->copies = acc.nterms;
  if (!kr_set_trips(c, (unsigned)acc.nterms)) return false;
  kn_reduce *r = &c->out->desc.reduce;
  *r = (kn_reduce){.trip = c->trips[0], .op = acc.op, .type = type, .reassociate = acc.is_float && !sequential,
                    .sequential = sequential};
  if (!build_terms(c, &acc, copy_of, &r->value)) return false;
  LLVMValueRef init = NULL;
  for (unsigned i = 0; i < LLVMCountIncoming(acc.phi); i++)
    if (!ir_loop_contains_block(c->chain[0], LLVMGetIncomingBlock(acc.phi, i), c->cfg))
      init = LLVMGetIncomingValue(acc.phi, i);
  /* R of a sum region at the top of a function (kn_recog_top.c (g)):
   * the region's sum starts at its X0, not at R's start (V's lanes
   * summed), and ends in the done block's phi */
  const kr_region *sr = c->region && c->region->sum && c->region->rep == c->chain[0] ? c->region : NULL;
  if (sr && acc.op != sr->sum_op) return kr_fail(c, "vectorised integer reduction: its lanes combine otherwise than its remainder");
  if (sr) init = sr->init;
  int p = init ? kr_param(c, (kn_bind){.kind = KN_BIND_VALUE, .value = init}) : -1;
  if (p < 0) return kr_fail(c, "too many live values");
  r->init_param = (unsigned)p;
  c->out->desc.kind = KN_REDUCE;
  c->out->result = sr ? sr->result : acc.latch_value;
  return true;
}

/* For kn_recog_matmul.c: the innermost loop's accumulator as an in-order
 * sum of terms; returns the phi, its initial value and the terms. */
bool kr_sum_terms(kr_ctx *c, LLVMValueRef *phi, LLVMValueRef *latch_value, LLVMValueRef *terms,
                  int *nterms, int *copy_of) {
  accumulator acc;
  if (!find_accumulator(c, c->chain[c->depth - 1], &acc)) return false;
  if (acc.op != KN_RED_ADD || !acc.ordered) return kr_fail(c, "not a sum of products in order");
  if (!number_terms(c, &acc, copy_of)) return false;
  *phi = acc.phi;
  *latch_value = acc.latch_value;
  *nterms = acc.nterms;
  memcpy(terms, acc.terms, (size_t)acc.nterms * sizeof *terms);
  return true;
}
