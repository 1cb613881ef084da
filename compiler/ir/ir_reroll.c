/* ir_reroll.c: after mem2reg, re-rolls loops that clang unrolled by two
 * (two copies of one iteration per trip) into one loop doing one iteration
 * per trip, where it proves the result exact.
 *
 * Why: clang -O2 turns `for (j = 0; j < n; j++) body(j)` with a run-time n
 * into (blocks after twasmc's lowering; wasm-opt adds empty else arms)
 *
 *   H: br bypass, E, P              bypass: x == 1 (n < 2 under n > 0)
 *   P: br L                         (pure instructions allowed)
 *   L: body(j); body(j + 1); j += 2; br j != M, L, X      M = x & mask
 *   X: br E
 *   E: jf = phi [s, H], [j, X]; br odd, Q, J              odd: x & 1
 *   Q: body(jf); br J
 *   J: ...
 *
 * and a loop with a constant count into L alone, stepping to a constant.
 * The tensor recogniser does not take such nests apart, and the loop
 * vectoriser does poorly on the interleaved copies (matrix: 2.0x native).
 * The rewrite: `L': body(j); j += 1; br j != N, L', J` with N = x & (mask|1)
 * (a constant: that constant), and H takes the bypass only for the x it
 * leaves nothing to do; where the bypass set is not a few constants the
 * bypass path (H -> E -> Q -> J) stays as it was.
 *
 * How it is proved: every value of L, Q and the function around them is
 * evaluated to a hash-consed expression: integer add/sub/mul/shl-by-constant
 * without wrap flags are polynomials modulo 2^width (exact: the i32 sums
 * wrap as the polynomial does), every other pure instruction a node of its
 * opcode, flags and operands, and loads, arguments, other phis opaque atoms.
 * A phi of an enclosing loop that steps by an invariant c is s + c * t
 * (t: that loop's back edges taken), true at every point of one trip of it.
 * Two values with equal expressions are equal at run time.
 *
 * Let P be the values of L's phis at the top of a trip.  L's loads and
 * stores (nothing else with an effect is allowed) are paired into a first
 * and a second half.  With f(phi) = phi + step/2 for a phi that steps by an
 * invariant step, and for any other phi a value v of L (not reading the
 * second half) proven to give phi's next value as v(v(P)), we check that
 * each access of the second half is its partner evaluated at f(P) (same
 * kind, type, alignment, metadata, address and stored value, the first
 * half's loads read as the second half's), that every next value is
 * f(f(P)), and that the old order is first half then second half except
 * where two loads pass each other (a load changes nothing; a trap then
 * still comes before the same stores, and every out-of-bounds access is
 * the same trap).  Then one old trip is exactly two trips of `first half,
 * then P := f(P)`.  Q must be the first half at the state E holds (the
 * counter jf, each other phi's value after the loop), and J's phis the
 * values after it: then the odd iteration is the next trip of the new loop.
 *
 * Trip counts: j starts at an even constant s and steps by 2 to M (even),
 * so the old loop runs (M - s) mod 2^32 single iterations (2^32 for 0), as
 * does the new one to N when x is even (N == M).  When x is odd the old
 * code runs one more (Q), and the new one does too, unless M == s, where
 * the old ran 2^32 + 1.  The pass lists the few odd x with x & mask == s
 * and requires each to take the bypass, or to contradict a branch that
 * dominates H (clang's n > 0 guard; the last such branch before H decided
 * on the same x, as x's definition dominates it).  A bypassed odd x enters
 * the new loop only where x & mask == s: one trip, the old Q.  With a
 * constant end C, the counter from s by 2h meets C after d / 2h trips,
 * d = (C - s) mod 2^w, and by h after d / h when 2h divides d.
 *
 * Any other shape, a call other than a pure intrinsic, a volatile or
 * atomic access, a value of L or Q used elsewhere, more than one block,
 * exit or step: the loop stays. */
#include "ir_pass.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "ir.h"

#define RR_MAX_TERMS 8
#define RR_MAX_FACTORS 3
#define RR_MAX_KIDS 3
#define RR_MAX_DEPTH 48
#define RR_MAX_EFFECTS 64
#define RR_MAX_PHIS 16
#define RR_MAX_NODES 8192
#define RR_HASH 16384 /* twice RR_MAX_NODES: short probes, never full */
#define RR_MAX_BODY_E 64

typedef enum { RR_ATOM, RR_ITER, RR_POLY, RR_OP } rr_kind;

/* coeff * f[0] * ... * f[nf - 1] (node ids, ascending); nf == 0: constant. */
typedef struct {
  uint64_t coeff;
  int nf;
  int f[RR_MAX_FACTORS];
} rr_term;

/* Zeroed before filling, so that equal nodes compare equal with memcmp. */
typedef struct {
  rr_kind kind;
  LLVMTypeRef ty;
  LLVMValueRef val;     /* ATOM: the value; OP: the callee of a call */
  LLVMBasicBlockRef bb; /* ITER: the loop header */
  LLVMTypeRef aux;      /* OP: GEP source element type */
  int op;               /* OP: LLVMOpcode */
  int nk;
  uint64_t extra;       /* OP: predicate or flags */
  int k[RR_MAX_KIDS];
  int nt;
  rr_term t[RR_MAX_TERMS];
} rr_node;

typedef struct {
  LLVMValueRef from;
  int to;
} rr_memo;

/* A substitution: atom node -> image node. */
typedef struct {
  int from[2 * RR_MAX_EFFECTS + RR_MAX_PHIS], to[2 * RR_MAX_EFFECTS + RR_MAX_PHIS];
  int n;
} rr_subst;

typedef struct {
  LLVMValueRef inst;
  bool is_store;
  int addr, value; /* expressions; value: stores only */
} rr_effect;

/* One L phi: its next value, step (IVs) and role after the loop. */
typedef struct {
  LLVMValueRef phi, init, next;
  int atom;
  bool is_iv;
  int half;            /* IVs: step / 2 */
  LLVMValueRef f_val;  /* the value giving f(phi) in the new loop */
  int f;               /* f(phi) as an expression */
  LLVMValueRef after;  /* its phi in E, or NULL */
} rr_phi;

typedef struct {
  LLVMContextRef ctx;
  LLVMBuilderRef b;
  tw_arena arena;
  ir_cfg cfg;
  ir_dom dom;
  ir_loops lp;
  const ir_loop *loop; /* L */
  rr_node *nodes;
  int nnodes, cap;
  int node_hash[RR_HASH];
  rr_memo *memo;
  int nmemo, memo_cap;
  int memo_hash[RR_HASH]; /* memo index + 1 by value */
  bool failed;         /* an expression of L or Q could not be built */
  unsigned rerolled;
} rr_pass;

/* ---- Expressions ---------------------------------------------------------- */

static unsigned width_of(LLVMTypeRef ty) {
  return LLVMGetTypeKind(ty) == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(ty) : 0;
}

static uint64_t wmask(unsigned w) { return w >= 64 ? ~0ull : (1ull << w) - 1; }

static uint64_t hash_bytes(const void *data, size_t len) {
  const unsigned char *b = data;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < len; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* Open addressing over node ids + 1 (0: empty), cleared per loop. */
static int intern(rr_pass *p, const rr_node *n) {
  unsigned slot = (unsigned)hash_bytes(n, sizeof *n) & (RR_HASH - 1);
  for (; p->node_hash[slot]; slot = (slot + 1) & (RR_HASH - 1))
    if (memcmp(&p->nodes[p->node_hash[slot] - 1], n, sizeof *n) == 0) return p->node_hash[slot] - 1;
  if (p->nnodes == RR_MAX_NODES) return -1;
  if (p->nnodes == p->cap) {
    p->cap = p->cap ? 2 * p->cap : 256;
    p->nodes = realloc(p->nodes, (size_t)p->cap * sizeof *p->nodes);
    if (!p->nodes) abort();
  }
  p->nodes[p->nnodes] = *n;
  p->node_hash[slot] = p->nnodes + 1;
  return p->nnodes++;
}

static int atom(rr_pass *p, LLVMValueRef v) {
  rr_node n;
  memset(&n, 0, sizeof n);
  n.kind = RR_ATOM;
  n.ty = LLVMTypeOf(v);
  n.val = v;
  return intern(p, &n);
}

static int cmp_term(const void *a, const void *b) {
  const rr_term *x = a, *y = b;
  if (x->nf != y->nf) return x->nf - y->nf;
  for (int i = 0; i < x->nf; i++)
    if (x->f[i] != y->f[i]) return x->f[i] - y->f[i];
  return 0;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* Normal form of sum(terms) in ty: monomials merged, sorted, zeros dropped;
 * a lone factor with coefficient 1 is that factor's node. */
static int make_poly(rr_pass *p, LLVMTypeRef ty, rr_term *t, int nt) {
  uint64_t m = wmask(width_of(ty));
  for (int i = 0; i < nt; i++) qsort(t[i].f, (size_t)t[i].nf, sizeof(int), cmp_int);
  qsort(t, (size_t)nt, sizeof *t, cmp_term);
  rr_node n;
  memset(&n, 0, sizeof n);
  n.kind = RR_POLY;
  n.ty = ty;
  for (int i = 0; i < nt; i++) {
    if (n.nt && cmp_term(&n.t[n.nt - 1], &t[i]) == 0) {
      n.t[n.nt - 1].coeff = (n.t[n.nt - 1].coeff + t[i].coeff) & m;
    } else {
      if (n.nt == RR_MAX_TERMS) return -1;
      n.t[n.nt] = t[i];
      n.t[n.nt++].coeff &= m;
    }
    if (n.t[n.nt - 1].coeff == 0) memset(&n.t[--n.nt], 0, sizeof *n.t);
  }
  if (n.nt == 1 && n.t[0].nf == 1 && n.t[0].coeff == 1) return n.t[0].f[0];
  return intern(p, &n);
}

/* The terms of node id (a lone factor for a non-polynomial). */
static int terms_of(const rr_pass *p, int id, rr_term *out) {
  const rr_node *n = &p->nodes[id];
  if (n->kind == RR_POLY) {
    memcpy(out, n->t, (size_t)n->nt * sizeof *out);
    return n->nt;
  }
  memset(out, 0, sizeof *out);
  out->coeff = 1;
  out->nf = 1;
  out->f[0] = id;
  return 1;
}

static int poly_const(rr_pass *p, LLVMTypeRef ty, uint64_t c) {
  rr_term t = {.coeff = c, .nf = 0};
  return make_poly(p, ty, &t, 1);
}

/* a + scale * b */
static int poly_add(rr_pass *p, LLVMTypeRef ty, int a, int b, uint64_t scale) {
  if (a < 0 || b < 0 || !width_of(ty)) return -1;
  rr_term t[2 * RR_MAX_TERMS];
  int na = terms_of(p, a, t), nb = terms_of(p, b, t + na);
  for (int i = na; i < na + nb; i++) t[i].coeff *= scale;
  return make_poly(p, ty, t, na + nb);
}

static int poly_mul(rr_pass *p, LLVMTypeRef ty, int a, int b) {
  if (a < 0 || b < 0 || !width_of(ty)) return -1;
  rr_term ta[RR_MAX_TERMS], tb[RR_MAX_TERMS], t[RR_MAX_TERMS * RR_MAX_TERMS];
  int na = terms_of(p, a, ta), nb = terms_of(p, b, tb), nt = 0;
  for (int i = 0; i < na; i++)
    for (int j = 0; j < nb; j++) {
      if (ta[i].nf + tb[j].nf > RR_MAX_FACTORS) return -1;
      rr_term *r = &t[nt++];
      memset(r, 0, sizeof *r);
      r->coeff = ta[i].coeff * tb[j].coeff;
      r->nf = ta[i].nf + tb[j].nf;
      memcpy(r->f, ta[i].f, (size_t)ta[i].nf * sizeof(int));
      memcpy(r->f + ta[i].nf, tb[j].f, (size_t)tb[j].nf * sizeof(int));
    }
  return make_poly(p, ty, t, nt);
}

static int op_node(rr_pass *p, LLVMValueRef inst, const int *kids, int nk, uint64_t extra,
                   LLVMValueRef callee) {
  rr_node n;
  memset(&n, 0, sizeof n);
  n.kind = RR_OP;
  n.ty = LLVMTypeOf(inst);
  n.op = (int)LLVMGetInstructionOpcode(inst);
  n.val = callee;
  n.extra = extra;
  if (LLVMIsAGetElementPtrInst(inst)) n.aux = LLVMGetGEPSourceElementType(inst);
  n.nk = nk;
  for (int i = 0; i < nk; i++) {
    if (kids[i] < 0) return -1;
    n.k[i] = kids[i];
  }
  return intern(p, &n);
}

/* ---- Evaluation ------------------------------------------------------------ */

static bool in_loop(const rr_pass *p, LLVMValueRef v) {
  return LLVMIsAInstruction(v) && ir_loop_defines(p->loop, v, &p->cfg);
}

/* Intrinsics without side effects that twasmc's lowering emits. */
static bool is_pure_intrinsic(LLVMValueRef callee) {
  static const char *const names[] = {
      "llvm.sqrt.",    "llvm.fabs.",    "llvm.copysign.", "llvm.floor.", "llvm.ceil.",
      "llvm.trunc.",   "llvm.nearbyint.", "llvm.rint.",   "llvm.roundeven.", "llvm.minimum.",
      "llvm.maximum.", "llvm.minnum.",  "llvm.maxnum.",   "llvm.ctlz.",  "llvm.cttz.",
      "llvm.ctpop.",   "llvm.fshl.",    "llvm.fshr.",     "llvm.fma.",   "llvm.fmuladd."};
  if (!callee || !LLVMIsAFunction(callee) || !LLVMGetIntrinsicID(callee)) return false;
  size_t len;
  const char *name = LLVMGetValueName2(callee, &len);
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strncmp(name, names[i], strlen(names[i])) == 0) return true;
  return false;
}

/* Wrap, exactness, predicate and inbounds flags. */
static uint64_t wrap_flags_of(LLVMValueRef inst, LLVMOpcode op) {
  switch (op) {
  case LLVMAdd: case LLVMSub: case LLVMMul: case LLVMShl:
    return (uint64_t)LLVMGetNUW(inst) | (uint64_t)LLVMGetNSW(inst) << 1;
  case LLVMUDiv: case LLVMSDiv: case LLVMLShr: case LLVMAShr: return (uint64_t)LLVMGetExact(inst);
  case LLVMOr: return (uint64_t)LLVMGetIsDisjoint(inst);
  case LLVMZExt: case LLVMUIToFP: return (uint64_t)LLVMGetNNeg(inst);
  case LLVMICmp: return (uint64_t)LLVMGetICmpPredicate(inst);
  case LLVMFCmp: return (uint64_t)LLVMGetFCmpPredicate(inst);
  case LLVMGetElementPtr: return (uint64_t)LLVMIsInBounds(inst);
  default: return 0;
  }
}

/* Flags that change an instruction's result (poison), part of its node. */
static uint64_t flags_of(LLVMValueRef inst, LLVMOpcode op) {
  uint64_t fmf = LLVMCanValueUseFastMathFlags(inst) ? (uint64_t)LLVMGetFastMathFlags(inst) << 32 : 0;
  return fmf | wrap_flags_of(inst, op);
}


static int eval(rr_pass *p, LLVMValueRef v, int depth);

/* A phi of a loop strictly enclosing L that steps by an invariant:
 * s + c * t.  -1 when it is not one. */
static int outer_iv(rr_pass *p, LLVMValueRef phi, int depth) {
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(phi);
  int b = ir_cfg_index(&p->cfg, bb);
  if (b < 0 || !p->lp.innermost[b]) return -1;
  const ir_loop *outer = p->lp.innermost[b];
  if (outer->header != b || outer == p->loop ||
      !outer->in_body[p->loop->header])
    return -1;
  LLVMValueRef start = NULL, next = NULL;
  for (unsigned i = 0; i < LLVMCountIncoming(phi); i++) {
    LLVMValueRef in = LLVMGetIncomingValue(phi, i);
    int from = ir_cfg_index(&p->cfg, LLVMGetIncomingBlock(phi, i));
    if (from < 0) return -1;
    LLVMValueRef *slot = outer->in_body[from] ? &next : &start;
    if (*slot && *slot != in) return -1;
    *slot = in;
  }
  if (!start || !next || !LLVMIsAInstruction(next) ||
      LLVMGetInstructionOpcode(next) != LLVMAdd || LLVMGetNUW(next) || LLVMGetNSW(next))
    return -1;
  LLVMValueRef step = LLVMGetOperand(next, 0) == phi ? LLVMGetOperand(next, 1)
                      : LLVMGetOperand(next, 1) == phi ? LLVMGetOperand(next, 0)
                                                       : NULL;
  if (!step || (LLVMIsAInstruction(step) && ir_loop_defines(outer, step, &p->cfg)) ||
      (LLVMIsAInstruction(start) && ir_loop_defines(outer, start, &p->cfg)))
    return -1;
  rr_node it;
  memset(&it, 0, sizeof it);
  it.kind = RR_ITER;
  it.ty = LLVMTypeOf(phi);
  it.bb = bb;
  int iter = intern(p, &it);
  int s = eval(p, start, depth + 1), c = eval(p, step, depth + 1);
  return poly_add(p, it.ty, s, poly_mul(p, it.ty, c, iter), 1);
}

static int eval_inst(rr_pass *p, LLVMValueRef v, int depth) {
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  LLVMTypeRef ty = LLVMTypeOf(v);
  unsigned w = width_of(ty);
  uint64_t flags = flags_of(v, op);
  if (op == LLVMPHI) {
    int iv = in_loop(p, v) ? -1 : outer_iv(p, v, depth);
    return iv >= 0 ? iv : atom(p, v);
  }
  if (op == LLVMLoad) return atom(p, v);
  bool poly_op = w && w <= 64 && !flags && (op == LLVMAdd || op == LLVMSub || op == LLVMMul);
  if (op == LLVMShl && w && w <= 64 && !flags && LLVMIsAConstantInt(LLVMGetOperand(v, 1)) &&
      LLVMConstIntGetZExtValue(LLVMGetOperand(v, 1)) < w)
    return poly_mul(p, ty, eval(p, LLVMGetOperand(v, 0), depth + 1),
                    poly_const(p, ty, 1ull << LLVMConstIntGetZExtValue(LLVMGetOperand(v, 1))));
  if (poly_op) {
    int a = eval(p, LLVMGetOperand(v, 0), depth + 1), b = eval(p, LLVMGetOperand(v, 1), depth + 1);
    if (op == LLVMMul) return poly_mul(p, ty, a, b);
    return poly_add(p, ty, a, b, op == LLVMSub ? ~0ull : 1);
  }
  LLVMValueRef callee = NULL;
  int nargs = LLVMGetNumOperands(v);
  switch (op) {
  case LLVMAdd: case LLVMSub: case LLVMMul: case LLVMShl: case LLVMLShr: case LLVMAShr:
  case LLVMAnd: case LLVMOr: case LLVMXor: case LLVMFAdd: case LLVMFSub: case LLVMFMul:
  case LLVMFDiv: case LLVMFRem: case LLVMFNeg: case LLVMICmp: case LLVMFCmp: case LLVMSelect:
  case LLVMZExt: case LLVMSExt: case LLVMTrunc: case LLVMSIToFP: case LLVMUIToFP:
  case LLVMFPToSI: case LLVMFPToUI: case LLVMFPExt: case LLVMFPTrunc: case LLVMBitCast:
  case LLVMGetElementPtr:
    break;
  case LLVMCall:
    callee = LLVMGetCalledValue(v);
    if (!is_pure_intrinsic(callee)) return -1;
    nargs = (int)LLVMGetNumArgOperands(v);
    break;
  default:
    return -1;
  }
  if (nargs > RR_MAX_KIDS) return -1;
  int kids[RR_MAX_KIDS];
  for (int i = 0; i < nargs; i++) kids[i] = eval(p, LLVMGetOperand(v, (unsigned)i), depth + 1);
  return op_node(p, v, kids, nargs, flags, callee);
}

static unsigned memo_slot(const rr_pass *p, LLVMValueRef v) {
  unsigned slot = (unsigned)hash_bytes(&v, sizeof v) & (RR_HASH - 1);
  while (p->memo_hash[slot] && p->memo[p->memo_hash[slot] - 1].from != v)
    slot = (slot + 1) & (RR_HASH - 1);
  return slot;
}

static int memo_find(const rr_pass *p, LLVMValueRef v) {
  int i = p->memo_hash[memo_slot(p, v)];
  return i ? p->memo[i - 1].to : -2;
}

/* v's expression.  Values outside L that cannot be taken apart are atoms
 * (an SSA value is one value wherever L and Q see it); inside L, or past
 * the depth limit inside L, the loop is refused (p->failed). */
static int eval(rr_pass *p, LLVMValueRef v, int depth) {
  int known = memo_find(p, v);
  if (known != -2) return known;
  int r;
  if (LLVMIsAConstantInt(v) && width_of(LLVMTypeOf(v)) <= 64)
    r = poly_const(p, LLVMTypeOf(v), LLVMConstIntGetZExtValue(v));
  else if (!LLVMIsAInstruction(v))
    r = atom(p, v);
  else if (depth > RR_MAX_DEPTH)
    r = in_loop(p, v) ? -1 : atom(p, v);
  else {
    r = eval_inst(p, v, depth);
    if (r < 0 && !in_loop(p, v) && p->nnodes < RR_MAX_NODES) r = atom(p, v);
  }
  if (r < 0) {
    p->failed = true;
    return -1;
  }
  if (p->nmemo == RR_MAX_NODES) return r; /* unremembered: only slower */
  if (p->nmemo == p->memo_cap) {
    p->memo_cap = p->memo_cap ? 2 * p->memo_cap : 256;
    p->memo = realloc(p->memo, (size_t)p->memo_cap * sizeof *p->memo);
    if (!p->memo) abort();
  }
  p->memo_hash[memo_slot(p, v)] = p->nmemo + 1;
  p->memo[p->nmemo++] = (rr_memo){v, r};
  return r;
}

/* Simultaneous substitution of atoms (images are not substituted again). */
static int subst(rr_pass *p, int id, const rr_subst *s, int depth) {
  if (id < 0 || depth > 4 * RR_MAX_DEPTH) return -1;
  for (int i = 0; i < s->n; i++)
    if (s->from[i] == id) return s->to[i];
  rr_node n;
  memcpy(&n, &p->nodes[id], sizeof n); /* padding too: nodes compare bytes */
  switch (n.kind) {
  case RR_ATOM: case RR_ITER: return id;
  case RR_OP:
    for (int i = 0; i < n.nk; i++)
      if ((n.k[i] = subst(p, n.k[i], s, depth + 1)) < 0) return -1;
    return intern(p, &n);
  case RR_POLY: {
    int sum = poly_const(p, n.ty, 0);
    for (int i = 0; i < n.nt; i++) {
      int prod = poly_const(p, n.ty, n.t[i].coeff);
      for (int j = 0; j < n.t[i].nf; j++)
        prod = poly_mul(p, n.ty, prod, subst(p, n.t[i].f[j], s, depth + 1));
      sum = poly_add(p, n.ty, sum, prod, 1);
    }
    return sum;
  }
  }
  return -1;
}

static bool mentions(const rr_pass *p, int id, int what, int depth) {
  if (id == what) return true;
  if (id < 0 || depth > 4 * RR_MAX_DEPTH) return true;
  const rr_node *n = &p->nodes[id];
  for (int i = 0; i < n->nk; i++)
    if (mentions(p, n->k[i], what, depth + 1)) return true;
  for (int i = 0; i < n->nt; i++)
    for (int j = 0; j < n->t[i].nf; j++)
      if (mentions(p, n->t[i].f[j], what, depth + 1)) return true;
  return false;
}

static void subst_add(rr_subst *s, int from, int to) {
  s->from[s->n] = from;
  s->to[s->n++] = to;
}

/* An atom of a value of L (a phi or load there): the expression varies. */
static bool varies(const rr_pass *p, int id, int depth) {
  if (id < 0 || depth > 4 * RR_MAX_DEPTH) return true;
  const rr_node *n = &p->nodes[id];
  if (n->kind == RR_ATOM) return in_loop(p, n->val);
  for (int i = 0; i < n->nk; i++)
    if (varies(p, n->k[i], depth + 1)) return true;
  for (int i = 0; i < n->nt; i++)
    for (int j = 0; j < n->t[i].nf; j++)
      if (varies(p, n->t[i].f[j], depth + 1)) return true;
  return false;
}

/* ---- Concrete evaluation of the trip-count conditions ---------------------- */

/* v at x == xv, for the few operations the guards use. */
static bool ceval(LLVMValueRef v, LLVMValueRef x, uint64_t xv, uint64_t *out, int depth) {
  unsigned w = width_of(LLVMTypeOf(v));
  if (!w || w > 64 || depth > 16) return false;
  uint64_t m = wmask(w), a = 0, b = 0, c = 0;
  if (v == x) return *out = xv & m, true;
  if (LLVMIsAConstantInt(v)) return *out = LLVMConstIntGetZExtValue(v) & m, true;
  if (!LLVMIsAInstruction(v)) return false;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  int n = LLVMGetNumOperands(v);
  if (n < 1 || n > 3 || op == LLVMCall || op == LLVMPHI || op == LLVMLoad) return false;
  if (!ceval(LLVMGetOperand(v, 0), x, xv, &a, depth + 1)) return false;
  if (n > 1 && !ceval(LLVMGetOperand(v, 1), x, xv, &b, depth + 1)) return false;
  if (n > 2 && !ceval(LLVMGetOperand(v, 2), x, xv, &c, depth + 1)) return false;
  unsigned wa = width_of(LLVMTypeOf(LLVMGetOperand(v, 0)));
  int64_t sa = wa < 64 && (a >> (wa - 1) & 1) ? (int64_t)(a | ~wmask(wa)) : (int64_t)a;
  int64_t sb = wa < 64 && (b >> (wa - 1) & 1) ? (int64_t)(b | ~wmask(wa)) : (int64_t)b;
  uint64_t r;
  switch (op) {
  case LLVMAdd: r = a + b; break;
  case LLVMSub: r = a - b; break;
  case LLVMAnd: r = a & b; break;
  case LLVMOr: r = a | b; break;
  case LLVMXor: r = a ^ b; break;
  case LLVMZExt: r = a; break;
  case LLVMSExt: r = (uint64_t)sa; break;
  case LLVMTrunc: r = a; break;
  case LLVMSelect: r = a ? b : c; break;
  case LLVMICmp:
    switch (LLVMGetICmpPredicate(v)) {
    case LLVMIntEQ: r = a == b; break;
    case LLVMIntNE: r = a != b; break;
    case LLVMIntUGT: r = a > b; break;
    case LLVMIntUGE: r = a >= b; break;
    case LLVMIntULT: r = a < b; break;
    case LLVMIntULE: r = a <= b; break;
    case LLVMIntSGT: r = sa > sb; break;
    case LLVMIntSGE: r = sa >= sb; break;
    case LLVMIntSLT: r = sa < sb; break;
    case LLVMIntSLE: r = sa <= sb; break;
    default: return false;
    }
    break;
  default: return false;
  }
  *out = r & m;
  return true;
}

/* Which successor a conditional branch takes at x == xv: 0, 1, or -1. */
static int branch_at(LLVMValueRef br, LLVMValueRef x, uint64_t xv) {
  uint64_t c;
  if (!ceval(LLVMGetCondition(br), x, xv, &c, 0)) return -1;
  return c ? 0 : 1;
}

/* twasmc's lowering tests i1 values as icmp ne (zext c), 0. */
static LLVMValueRef strip_bool(LLVMValueRef v, bool *negated) {
  *negated = false;
  while (LLVMIsAICmpInst(v) && LLVMIsAConstantInt(LLVMGetOperand(v, 1)) &&
         LLVMConstIntGetZExtValue(LLVMGetOperand(v, 1)) == 0 &&
         LLVMIsAZExtInst(LLVMGetOperand(v, 0)) &&
         width_of(LLVMTypeOf(LLVMGetOperand(LLVMGetOperand(v, 0), 0))) == 1 &&
         (LLVMGetICmpPredicate(v) == LLVMIntNE || LLVMGetICmpPredicate(v) == LLVMIntEQ)) {
    *negated ^= LLVMGetICmpPredicate(v) == LLVMIntEQ;
    v = LLVMGetOperand(LLVMGetOperand(v, 0), 0);
  }
  return v;
}

/* x & c with c constant (either side): x, else NULL. */
static LLVMValueRef and_const(LLVMValueRef v, uint64_t *c) {
  if (!LLVMIsAInstruction(v) || LLVMGetInstructionOpcode(v) != LLVMAnd) return NULL;
  for (unsigned side = 0; side < 2; side++)
    if (LLVMIsAConstantInt(LLVMGetOperand(v, side)) && width_of(LLVMTypeOf(v)) <= 64) {
      *c = LLVMConstIntGetZExtValue(LLVMGetOperand(v, side));
      return LLVMGetOperand(v, 1 - side);
    }
  return NULL;
}

/* ---- The loop shape ------------------------------------------------------------- */

typedef struct {
  LLVMBasicBlockRef H, P, L, X, E, Q, J; /* P, X: NULL when absent */
  LLVMBasicBlockRef HE, EJ; /* E's pred on the bypass (H or an empty arm), J's from E */
  LLVMBasicBlockRef pre, out; /* L's entry and exit blocks */
  bool const_end;           /* the exit test compares with a constant: no Q */
  LLVMValueRef end;         /* const_end: that constant */
  int e_side;               /* the successor of H's branch towards E */
  LLVMValueRef x, M;                     /* M = x & mask, the old exit value */
  uint64_t mask;
  rr_phi phis[RR_MAX_PHIS];
  int nphis, counter;
  rr_effect eff[2 * RR_MAX_EFFECTS], qeff[RR_MAX_EFFECTS];
  int neff, nqeff;
  rr_effect a[RR_MAX_EFFECTS], b[RR_MAX_EFFECTS], qa[RR_MAX_EFFECTS]; /* paired */
  int pos_a[RR_MAX_EFFECTS], pos_b[RR_MAX_EFFECTS], k;
  bool merge;          /* the bypass joins the loop too: Q goes */
  LLVMValueRef hoist[RR_MAX_BODY_E];
  int nhoist;
} rr_shape;

static int bb_index(const rr_pass *p, LLVMBasicBlockRef bb) { return ir_cfg_index(&p->cfg, bb); }

static int npreds(const rr_pass *p, LLVMBasicBlockRef bb) {
  return p->cfg.blocks[bb_index(p, bb)].npreds;
}

static LLVMBasicBlockRef pred0(const rr_pass *p, LLVMBasicBlockRef bb) {
  return p->cfg.blocks[p->cfg.blocks[bb_index(p, bb)].preds[0]].bb;
}

/* The target of bb's unconditional branch, else NULL. */
static LLVMBasicBlockRef jump_target(LLVMBasicBlockRef bb) {
  LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
  if (!t || !LLVMIsABranchInst(t) || LLVMIsConditional(t)) return NULL;
  return LLVMGetSuccessor(t, 0);
}

/* A block holding only an unconditional branch: its target. */
static LLVMBasicBlockRef trivial_target(LLVMBasicBlockRef bb) {
  return LLVMGetFirstInstruction(bb) == LLVMGetBasicBlockTerminator(bb) ? jump_target(bb) : NULL;
}

static LLVMValueRef cond_br(LLVMBasicBlockRef bb) {
  LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
  return t && LLVMIsABranchInst(t) && LLVMIsConditional(t) ? t : NULL;
}

/* bb itself, or the block a trivial block bb (reached only from `from`)
 * leads to: wasm-opt turns br_if into if/else with empty arms. */
static LLVMBasicBlockRef through(const rr_pass *p, LLVMBasicBlockRef bb, LLVMBasicBlockRef from) {
  LLVMBasicBlockRef t = trivial_target(bb);
  return t && npreds(p, bb) == 1 && pred0(p, bb) == from ? t : bb;
}

/* L: one block, one exit, entered from one block (s->pre). */
static bool match_loop(rr_pass *p, rr_shape *s) {
  const ir_loop *l = p->loop;
  if (l->nbody != 1 || l->nexits != 1 || l->nchildren) return false;
  s->L = p->cfg.blocks[l->header].bb;
  s->out = p->cfg.blocks[l->exits[0].to].bb;
  if (npreds(p, s->L) != 2) return false;
  const ir_block *lb = &p->cfg.blocks[l->header];
  s->pre = p->cfg.blocks[lb->preds[0] == l->header ? lb->preds[1] : lb->preds[0]].bb;
  return true;
}

/* A block of pure instructions branching to L only (P; it then runs for
 * the odd x of the bypass too, to no effect). */
static bool pure_block(rr_pass *p, LLVMBasicBlockRef bb) {
  LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
  if (!jump_target(bb)) return false;
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i != t; i = LLVMGetNextInstruction(i))
    if (LLVMIsAPHINode(i) || LLVMIsALoadInst(i) || eval_inst(p, i, 0) < 0) return false;
  return true;
}

/* H, E, Q, J around L (the picture at the top of the file). */
static bool match_blocks(rr_pass *p, rr_shape *s) {
  const ir_loop *l = p->loop;
  LLVMBasicBlockRef out = s->out, entry = s->pre;
  s->X = npreds(p, out) == 1 ? out : NULL;
  s->E = s->X ? trivial_target(s->X) : out;
  if (!s->E) return false;
  s->P = pure_block(p, entry) && npreds(p, entry) == 1 ? entry : NULL;
  s->H = s->P ? pred0(p, s->P) : entry;
  LLVMValueRef hb = cond_br(s->H), eb = cond_br(s->E);
  LLVMBasicBlockRef into = s->P ? s->P : s->L;
  if (!hb || !eb || npreds(p, s->E) != 2) return false;
  for (unsigned i = 0; i < 2; i++)
    if (LLVMGetSuccessor(hb, 1 - i) == into && through(p, LLVMGetSuccessor(hb, i), s->H) == s->E) {
      s->e_side = (int)i;
      s->HE = LLVMGetSuccessor(hb, i) == s->E ? s->H : LLVMGetSuccessor(hb, i);
    }
  if (!s->HE) return false;
  for (unsigned i = 0; i < 2; i++) {
    LLVMBasicBlockRef q = LLVMGetSuccessor(eb, i), other = LLVMGetSuccessor(eb, 1 - i);
    LLVMBasicBlockRef j = through(p, other, s->E);
    if (q != other && npreds(p, q) == 1 && jump_target(q) == j && j != q)
      s->Q = q, s->J = j, s->EJ = other == j ? s->E : other;
  }
  if (!s->Q) return false;
  LLVMBasicBlockRef all[] = {s->H, s->P, s->X, s->E, s->Q, s->J,
                             s->HE == s->H ? NULL : s->HE, s->EJ == s->E ? NULL : s->EJ};
  for (unsigned i = 0; i < sizeof all / sizeof *all; i++) {
    if (!all[i]) continue;
    int b = bb_index(p, all[i]);
    if (b < 0 || all[i] == s->L || p->lp.innermost[b] != l->parent) return false;
    for (unsigned k = 0; k < i; k++)
      if (all[k] == all[i]) return false;
  }
  return true;
}

/* Loads and stores of bb in order; false on anything else with an effect. */
static bool collect_effects(rr_pass *p, LLVMBasicBlockRef bb, rr_effect *eff, int cap, int *n) {
  *n = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
    bool load = LLVMIsALoadInst(i), store = LLVMIsAStoreInst(i);
    if (i == LLVMGetBasicBlockTerminator(bb) || LLVMIsAPHINode(i)) continue;
    if (!load && !store) {
      if (eval_inst(p, i, 0) < 0) return false;
      continue;
    }
    if (*n == cap || LLVMGetVolatile(i) || LLVMGetOrdering(i) != LLVMAtomicOrderingNotAtomic)
      return false;
    rr_effect *e = &eff[(*n)++];
    e->inst = i;
    e->is_store = store;
    e->addr = eval(p, LLVMGetOperand(i, store ? 1 : 0), 0);
    e->value = store ? eval(p, LLVMGetOperand(i, 0), 0) : atom(p, i);
    if (e->addr < 0 || e->value < 0) return false;
  }
  return !p->failed;
}

static bool same_metadata(LLVMValueRef a, LLVMValueRef b) {
  size_t na, nb;
  LLVMValueMetadataEntry *ma = LLVMInstructionGetAllMetadataOtherThanDebugLoc(a, &na);
  LLVMValueMetadataEntry *mb = LLVMInstructionGetAllMetadataOtherThanDebugLoc(b, &nb);
  bool same = na == nb;
  for (unsigned i = 0; same && i < na; i++)
    same = LLVMValueMetadataEntriesGetKind(ma, i) == LLVMValueMetadataEntriesGetKind(mb, i) &&
           LLVMValueMetadataEntriesGetMetadata(ma, i) == LLVMValueMetadataEntriesGetMetadata(mb, i);
  if (ma) LLVMDisposeValueMetadataEntries(ma);
  if (mb) LLVMDisposeValueMetadataEntries(mb);
  return same;
}

/* b is a evaluated under s: same access, address and stored value. */
static bool same_access(rr_pass *p, const rr_effect *a, const rr_effect *b, const rr_subst *s) {
  if (a->is_store != b->is_store) return false;
  LLVMValueRef va = a->is_store ? LLVMGetOperand(a->inst, 0) : a->inst;
  LLVMValueRef vb = b->is_store ? LLVMGetOperand(b->inst, 0) : b->inst;
  if (LLVMTypeOf(va) != LLVMTypeOf(vb) || LLVMGetAlignment(a->inst) != LLVMGetAlignment(b->inst) ||
      !same_metadata(a->inst, b->inst))
    return false;
  int addr = subst(p, a->addr, s, 0);
  if (addr < 0 || addr != b->addr) return false;
  if (!a->is_store) return true;
  int value = subst(p, a->value, s, 0);
  return value >= 0 && value == b->value;
}

/* L's phis: init and next values, IV steps.  The counter is the phi the
 * exit test reads. */
static bool match_phis(rr_pass *p, rr_shape *s) {
  LLVMBasicBlockRef into = s->pre;
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->L); i && LLVMIsAPHINode(i);
       i = LLVMGetNextInstruction(i)) {
    if (s->nphis == RR_MAX_PHIS || LLVMCountIncoming(i) != 2) return false;
    rr_phi *f = &s->phis[s->nphis++];
    memset(f, 0, sizeof *f);
    f->phi = i;
    if ((f->atom = atom(p, i)) < 0) return false;
    for (unsigned k = 0; k < 2; k++) {
      LLVMBasicBlockRef from = LLVMGetIncomingBlock(i, k);
      if (from == s->L) f->next = LLVMGetIncomingValue(i, k);
      else if (from == into) f->init = LLVMGetIncomingValue(i, k);
    }
    if (!f->next || !f->init || !in_loop(p, f->next)) return false;
    if (!width_of(LLVMTypeOf(i)) || width_of(LLVMTypeOf(i)) > 64) continue;
    int d = poly_add(p, LLVMTypeOf(i), eval(p, f->next, 0), f->atom, ~0ull);
    if (d < 0 || varies(p, d, 0)) continue;
    rr_term t[RR_MAX_TERMS];
    int nt = terms_of(p, d, t);
    bool even = true;
    for (int k = 0; k < nt; k++) {
      even &= (t[k].coeff & 1) == 0;
      t[k].coeff >>= 1;
    }
    if (!even) continue;
    f->is_iv = true;
    f->half = make_poly(p, LLVMTypeOf(i), t, nt);
    f->f = poly_add(p, LLVMTypeOf(i), f->atom, f->half, 1);
    if (f->half < 0 || f->f < 0) return false;
  }
  return !p->failed;
}

/* The exit test `counter.next != end`: either end = x & mask (even), the
 * counter from an even constant by 2; or end a constant the counter, from a
 * constant by 2h, meets after an even number of steps of h. */
static bool match_exit(rr_pass *p, rr_shape *s) {
  LLVMValueRef br = cond_br(s->L);
  if (!br) return false;
  bool negated;
  LLVMValueRef c = strip_bool(LLVMGetCondition(br), &negated);
  if (!LLVMIsAICmpInst(c)) return false;
  LLVMIntPredicate pred = LLVMGetICmpPredicate(c);
  bool stay_if_true = LLVMGetSuccessor(br, 0) == s->L;
  if (pred != LLVMIntNE && pred != LLVMIntEQ) return false;
  /* stays while the operands differ */
  if ((pred == LLVMIntNE) != (stay_if_true != negated)) return false;
  for (int k = 0; k < s->nphis; k++) {
    rr_phi *f = &s->phis[k];
    for (unsigned side = 0; side < 2; side++) {
      if (LLVMGetOperand(c, side) != f->next) continue;
      LLVMValueRef M = LLVMGetOperand(c, 1 - side);
      LLVMTypeRef ty = LLVMTypeOf(f->phi);
      unsigned w = width_of(ty);
      if (!f->is_iv || !LLVMIsAConstantInt(f->init) || w > 64) return false;
      uint64_t start = LLVMConstIntGetZExtValue(f->init);
      s->counter = k;
      if (LLVMIsAConstantInt(M)) {
        /* h * t first reaches d at t = d / h when h * t does not wrap
         * before; d / h even: the old loop, by 2h, stops there too. */
        const rr_node *h = &p->nodes[f->half];
        uint64_t step = h->kind == RR_POLY && h->nt == 1 && h->t[0].nf == 0 ? h->t[0].coeff : 0;
        uint64_t d = (LLVMConstIntGetZExtValue(M) - start) & wmask(w);
        s->const_end = true;
        s->end = M;
        return step && step <= wmask(w) / 2 && d && d % (2 * step) == 0;
      }
      s->x = and_const(M, &s->mask);
      if (!s->x || in_loop(p, M) || f->half != poly_const(p, ty, 1) || (start & 1) ||
          (s->mask & 1))
        return false;
      s->M = M;
      return true;
    }
  }
  return false;
}

/* Q runs exactly when x is odd; and an odd x with x & mask == start (the
 * old loop's 2^32 iterations, then Q) never reaches L: it takes the bypass
 * or contradicts a branch on the way to H. */
static bool counts_agree(rr_pass *p, const rr_shape *s) {
  LLVMValueRef eb = cond_br(s->E), hb = cond_br(s->H);
  bool negated;
  LLVMValueRef c = strip_bool(LLVMGetCondition(eb), &negated);
  uint64_t one;
  if (!LLVMIsAICmpInst(c) || !LLVMIsAConstantInt(LLVMGetOperand(c, 1)) ||
      LLVMConstIntGetZExtValue(LLVMGetOperand(c, 1)) != 0 ||
      and_const(LLVMGetOperand(c, 0), &one) != s->x || one != 1)
    return false;
  int q_side = LLVMGetSuccessor(eb, 0) == s->Q ? 0 : 1;
  if (branch_at(eb, s->x, 1) != q_side || branch_at(eb, s->x, 0) != 1 - q_side) return false;
  unsigned w = width_of(LLVMTypeOf(s->x));
  uint64_t start = LLVMConstIntGetZExtValue(s->phis[s->counter].init);
  uint64_t free_bits = ~(s->mask | 1) & wmask(w);
  if (start & ~s->mask & wmask(w)) return true; /* M never equals start */
  if (__builtin_popcountll(free_bits) > 4) return false;
  int e_side = s->e_side;
  for (uint64_t sub = free_bits;; sub = (sub - 1) & free_bits) {
    uint64_t xv = start | 1 | sub;
    bool unreachable = branch_at(hb, s->x, xv) == e_side;
    /* branches that dominate H: S's only way in is from its idom D */
    for (int b = bb_index(p, s->H); !unreachable && b != 0; b = p->dom.idom[b]) {
      int d = p->dom.idom[b];
      LLVMValueRef br = cond_br(p->cfg.blocks[d].bb);
      if (p->cfg.blocks[b].npreds != 1 || !br ||
          LLVMGetSuccessor(br, 0) == LLVMGetSuccessor(br, 1))
        continue;
      int taken = branch_at(br, s->x, xv);
      unreachable = taken >= 0 && LLVMGetSuccessor(br, (unsigned)taken) != p->cfg.blocks[b].bb;
    }
    if (!unreachable) return false;
    if (!sub) break;
  }
  return true;
}

/* ---- The proof ------------------------------------------------------------------ */

static bool mentions_any_load(const rr_pass *p, int id, const rr_effect *eff, int from, int to) {
  for (int i = from; i < to; i++)
    if (!eff[i].is_store && mentions(p, id, eff[i].value, 0)) return true;
  return false;
}

/* f(phi) for a phi that is not an IV: a value v of L reading only the first
 * half's loads and no other such phi, with next == v(v(P)). */
static bool find_step(rr_pass *p, rr_shape *s, rr_phi *f, rr_subst *sub) {
  int next = eval(p, f->next, 0);
  for (LLVMValueRef v = LLVMGetFirstInstruction(s->L); v; v = LLVMGetNextInstruction(v)) {
    if (LLVMIsAPHINode(v) || LLVMIsAStoreInst(v) || LLVMTypeOf(v) != LLVMTypeOf(f->phi) ||
        v == LLVMGetBasicBlockTerminator(s->L))
      continue;
    int e = eval(p, v, 0);
    if (e < 0 || mentions_any_load(p, e, s->b, 0, s->k)) continue;
    bool other = false;
    for (int i = 0; i < s->nphis; i++)
      other |= !s->phis[i].is_iv && &s->phis[i] != f && mentions(p, e, s->phis[i].atom, 0);
    if (other) continue;
    subst_add(sub, f->atom, e);
    if (subst(p, e, sub, 0) == next) {
      f->f = e;
      f->f_val = v;
      return true;
    }
    sub->n--;
  }
  return false;
}

/* An existing value of L equal to f(phi) for an IV, else NULL. */
static LLVMValueRef find_value(rr_pass *p, const rr_shape *s, int id) {
  for (LLVMValueRef v = LLVMGetFirstInstruction(s->L); v; v = LLVMGetNextInstruction(v))
    if (!LLVMIsAPHINode(v) && !LLVMIsALoadInst(v) && !LLVMIsAStoreInst(v) &&
        v != LLVMGetBasicBlockTerminator(s->L) && eval(p, v, 0) == id)
      return v;
  return NULL;
}

/* Pairs each access of `from` (in order) with the first unpaired access of
 * `to` at the address it has under sub, a load's result then read as its
 * partner's.  Stores pair in order; *role: 0 first half, 1 second, -1 open
 * (to may be from). */
static bool pair_up(rr_pass *p, const rr_effect *from, int nfrom, const rr_effect *to, int nto,
                    rr_subst *sub, int *partner) {
  bool used[2 * RR_MAX_EFFECTS] = {false};
  for (int i = 0; i < nfrom; i++) {
    partner[i] = -1;
    int addr = subst(p, from[i].addr, sub, 0);
    for (int j = 0; j < nto && partner[i] < 0 && addr >= 0; j++)
      if (!used[j] && to[j].is_store == from[i].is_store && to[j].addr == addr &&
          to[j].inst != from[i].inst)
        partner[i] = j;
    if (partner[i] < 0) return false;
    used[partner[i]] = true;
    if (!from[i].is_store) subst_add(sub, from[i].value, to[partner[i]].value);
  }
  return true;
}

/* Effects of the first and second half, in place: the stores split in the
 * middle; a load before the last store of the first half is of the first
 * half, one after the first store of the second half of the second; each
 * load between goes to the first half unless an earlier load of the first
 * half claims it as its partner. */
static bool split_halves(rr_pass *p, rr_shape *s, rr_subst *sub) {
  int nstores = 0, last_a = -1, first_b = s->neff, seen = 0;
  for (int i = 0; i < s->neff; i++) nstores += s->eff[i].is_store;
  if (nstores % 2 || s->neff % 2 || s->neff / 2 > RR_MAX_EFFECTS) return false;
  for (int i = 0; i < s->neff; i++)
    if (s->eff[i].is_store && ++seen == nstores / 2) last_a = i;
    else if (s->eff[i].is_store && seen == nstores / 2 + 1) first_b = i;
  int role[2 * RR_MAX_EFFECTS];
  seen = 0;
  for (int i = 0; i < s->neff; i++) {
    if (s->eff[i].is_store) role[i] = seen++ < nstores / 2 ? 0 : 1;
    else role[i] = i < last_a ? 0 : i > first_b ? 1 : -1;
  }
  s->k = 0;
  for (int i = 0; i < s->neff; i++) {
    if (role[i] == 1) continue;
    int addr = subst(p, s->eff[i].addr, sub, 0), found = -1;
    for (int j = 0; j < s->neff && found < 0 && addr >= 0; j++)
      if (role[j] != 0 && j != i && s->eff[j].is_store == s->eff[i].is_store &&
          s->eff[j].addr == addr)
        found = j;
    if (found < 0) {
      if (role[i] == 0) return false;
      continue;
    }
    role[i] = 0;
    role[found] = 1;
    s->pos_a[s->k] = i, s->pos_b[s->k] = found;
    s->a[s->k] = s->eff[i], s->b[s->k++] = s->eff[found];
    if (!s->eff[i].is_store) subst_add(sub, s->eff[i].value, s->eff[found].value);
  }
  if (2 * s->k != s->neff) return false;
  /* One trip of the new loop runs the first half in its order, the next
   * the second: the old order may differ from that only where two loads
   * pass each other (a load does not change memory; a trap then comes
   * before the same stores). */
  for (int i = 0; i < s->k; i++)
    for (int j = 0; j < s->k; j++) {
      bool loads = !s->a[i].is_store && !s->a[j].is_store;
      if (s->pos_b[i] < s->pos_a[j] && !(loads && !s->b[i].is_store)) return false;
      if (i < j && s->pos_b[j] < s->pos_b[i] && !loads) return false;
    }
  return true;
}

/* The two halves of L are one iteration at P and at f(P). */
static bool prove_halves(rr_pass *p, rr_shape *s) {
  if (!collect_effects(p, s->L, s->eff, 2 * RR_MAX_EFFECTS, &s->neff)) return false;
  rr_subst sub = {.n = 0};
  for (int i = 0; i < s->nphis; i++)
    if (s->phis[i].is_iv) subst_add(&sub, s->phis[i].atom, s->phis[i].f);
  if (!split_halves(p, s, &sub)) return false;
  for (int i = 0; i < s->nphis; i++)
    if (!s->phis[i].is_iv && !find_step(p, s, &s->phis[i], &sub)) return false;
  for (int i = 0; i < s->k; i++)
    if (!same_access(p, &s->a[i], &s->b[i], &sub)) return false;
  for (int i = 0; i < s->nphis; i++) {
    rr_phi *f = &s->phis[i];
    if (subst(p, f->f, &sub, 0) != eval(p, f->next, 0)) return false;
    if (f->is_iv && i != s->counter) {
      f->f_val = find_value(p, s, f->f);
      const rr_node *h = &p->nodes[f->half];
      if (!f->f_val && !(h->kind == RR_POLY && (h->nt == 0 || (h->nt == 1 && h->t[0].nf == 0))))
        return false;
    }
  }
  return !p->failed;
}

/* Q is the first half at the state E holds; J's phis are phis of L after it. */
static bool prove_tail(rr_pass *p, rr_shape *s, LLVMValueRef *jphi_of) {
  LLVMBasicBlockRef from_loop = s->X ? s->X : s->L;
  int k = s->k;
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->E); i; i = LLVMGetNextInstruction(i)) {
    if (i == LLVMGetBasicBlockTerminator(s->E)) break;
    if (!LLVMIsAPHINode(i)) {
      if (LLVMIsALoadInst(i) || LLVMIsAStoreInst(i) || eval_inst(p, i, 0) < 0) return false;
      continue;
    }
    LLVMValueRef vh = NULL, vx = NULL;
    for (unsigned n = 0; n < LLVMCountIncoming(i); n++) {
      LLVMBasicBlockRef b = LLVMGetIncomingBlock(i, n);
      *(b == from_loop ? &vx : &vh) = LLVMGetIncomingValue(i, n);
    }
    bool found = false;
    for (int n = 0; n < s->nphis && !found; n++)
      if (s->phis[n].next == vx && s->phis[n].init == vh) s->phis[n].after = i, found = true;
    if (LLVMCountIncoming(i) != 2 || !found) return false;
  }
  if (!collect_effects(p, s->Q, s->qeff, RR_MAX_EFFECTS, &s->nqeff) || s->nqeff != k) return false;
  const rr_phi *c = &s->phis[s->counter];
  rr_subst sub = {.n = 0};
  int done = c->after ? poly_add(p, LLVMTypeOf(c->phi), atom(p, c->after), eval(p, c->init, 0), ~0ull)
                      : -1;
  for (int i = 0; i < s->nphis; i++) {
    const rr_phi *f = &s->phis[i];
    if (f->after)
      subst_add(&sub, f->atom, atom(p, f->after));
    else if (f->is_iv && done >= 0 && LLVMTypeOf(f->phi) == LLVMTypeOf(c->phi))
      subst_add(&sub, f->atom,
                poly_add(p, LLVMTypeOf(f->phi), eval(p, f->init, 0), poly_mul(p, LLVMTypeOf(f->phi), f->half, done), 1));
  }
  int nstate = sub.n;
  int partner[RR_MAX_EFFECTS];
  if (!pair_up(p, s->a, k, s->qeff, k, &sub, partner)) return false;
  for (int i = 0; i < k; i++) {
    s->qa[i] = s->qeff[partner[i]];
    if (!same_access(p, &s->a[i], &s->qa[i], &sub)) return false;
    for (int j = 0; j < i; j++)
      if (partner[i] < partner[j] && (s->a[i].is_store || s->a[j].is_store)) return false;
  }
  int n = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->J); i && LLVMIsAPHINode(i);
       i = LLVMGetNextInstruction(i), n++) {
    LLVMValueRef ve = NULL, vq = NULL;
    for (unsigned m = 0; m < LLVMCountIncoming(i); m++)
      if (LLVMGetIncomingBlock(i, m) == s->Q) vq = LLVMGetIncomingValue(i, m);
      else if (LLVMGetIncomingBlock(i, m) == s->EJ) ve = LLVMGetIncomingValue(i, m);
    if (n == RR_MAX_PHIS || !ve || !vq) return false;
    jphi_of[n] = NULL;
    for (int m = 0; m < nstate && !jphi_of[n]; m++) {
      const rr_phi *f = NULL;
      for (int q = 0; q < s->nphis; q++)
        if (s->phis[q].atom == sub.from[m]) f = &s->phis[q];
      if (eval(p, ve, 0) == sub.to[m] && eval(p, vq, 0) == subst(p, f->f, &sub, 0))
        jphi_of[n] = f->phi;
    }
    if (!jphi_of[n]) return false;
  }
  return !p->failed;
}

static bool used_only_in(LLVMValueRef v, LLVMBasicBlockRef a, LLVMBasicBlockRef b,
                         LLVMBasicBlockRef phis_of) {
  for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    LLVMBasicBlockRef bb = LLVMIsAInstruction(user) ? LLVMGetInstructionParent(user) : NULL;
    if (!bb || !(bb == a || bb == b || (bb == phis_of && LLVMIsAPHINode(user)))) return false;
  }
  return true;
}

static bool in_list(LLVMValueRef const *list, int n, LLVMValueRef v) {
  for (int i = 0; i < n; i++)
    if (list[i] == v) return true;
  return false;
}

/* L's values reach E's phis only; Q's stay in Q and J's phis; E's too,
 * except pure ones that read no phi of E, which move up to H (H dominates
 * E, and they have no effect where they did not run before). */
static bool uses_confined(rr_pass *p, rr_shape *s) {
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->L); i; i = LLVMGetNextInstruction(i))
    if (!used_only_in(i, s->L, s->L, s->E)) return false;
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->Q); i; i = LLVMGetNextInstruction(i))
    if (!used_only_in(i, s->Q, s->Q, s->J)) return false;
  s->nhoist = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->E); i; i = LLVMGetNextInstruction(i)) {
    if (i == LLVMGetBasicBlockTerminator(s->E)) break;
    bool movable = !LLVMIsAPHINode(i) && !LLVMIsALoadInst(i) && eval_inst(p, i, 0) >= 0 &&
                   s->nhoist < RR_MAX_BODY_E;
    for (int k = 0; movable && k < LLVMGetNumOperands(i); k++) {
      LLVMValueRef op = LLVMGetOperand(i, (unsigned)k);
      movable = !(LLVMIsAInstruction(op) && LLVMGetInstructionParent(op) == s->E) ||
                in_list(s->hoist, s->nhoist, op);
    }
    if (movable) s->hoist[s->nhoist++] = i;
    else if (!used_only_in(i, s->E, s->Q, s->J)) return false;
  }
  return true;
}

/* The bypass H -> E is taken for a few x only (x == C, x < C): then each
 * odd one starts the loop at x & mask == start, one trip to N = start + 1,
 * and the even ones skip it; Q is then never needed. */
static bool bypass_joins(const rr_shape *s) {
  LLVMValueRef hb = cond_br(s->H);
  bool negated;
  LLVMValueRef c = strip_bool(LLVMGetCondition(hb), &negated);
  if (!LLVMIsAICmpInst(c) || LLVMGetOperand(c, 0) != s->x || !LLVMIsAConstantInt(LLVMGetOperand(c, 1)))
    return false;
  unsigned w = width_of(LLVMTypeOf(s->x));
  uint64_t bound = LLVMConstIntGetZExtValue(LLVMGetOperand(c, 1)), lo, hi;
  int e_side = s->e_side;
  LLVMIntPredicate pred = LLVMGetICmpPredicate(c);
  if ((e_side == 0) == negated) pred = LLVMGetICmpPredicate(c) == LLVMIntNE ? LLVMIntEQ
                                      : pred == LLVMIntUGE ? LLVMIntULT
                                      : pred == LLVMIntUGT ? LLVMIntULE : LLVMIntSGT;
  if (pred == LLVMIntEQ) lo = hi = bound;
  else if (pred == LLVMIntULT && bound > 0 && bound <= 64) lo = 0, hi = bound - 1;
  else if (pred == LLVMIntULE && bound < 64) lo = 0, hi = bound;
  else return false;
  uint64_t start = LLVMConstIntGetZExtValue(s->phis[s->counter].init);
  for (uint64_t xv = lo; xv <= hi; xv++) {
    if (branch_at(hb, s->x, xv) != e_side || xv > wmask(w)) return false;
    if ((xv & 1) && (xv & s->mask) != start) return false;
  }
  return true;
}
/* ---- The rewrite ------------------------------------------------------------------ */

#define RR_MAX_BODY 1024

typedef struct {
  LLVMValueRef v[RR_MAX_BODY];
  int n;
} rr_set;

static bool in_set(const rr_set *set, LLVMValueRef v) {
  for (int i = 0; i < set->n; i++)
    if (set->v[i] == v) return true;
  return false;
}

/* Marks v and what it reads in L; false when that reaches the second half. */
static bool keep(const rr_shape *s, rr_set *set, LLVMValueRef v) {
  if (!v || !LLVMIsAInstruction(v) || LLVMGetInstructionParent(v) != s->L || LLVMIsAPHINode(v) ||
      in_set(set, v))
    return true;
  for (int i = 0; i < s->k; i++)
    if (s->b[i].inst == v) return false;
  if (set->n == RR_MAX_BODY) return false;
  set->v[set->n++] = v;
  for (int i = 0; i < LLVMGetNumOperands(v); i++)
    if (!keep(s, set, LLVMGetOperand(v, (unsigned)i))) return false;
  return true;
}

static void set_incoming(LLVMValueRef phi, LLVMBasicBlockRef from, LLVMValueRef v) {
  for (unsigned i = 0; i < LLVMCountIncoming(phi); i++)
    if (LLVMGetIncomingBlock(phi, i) == from) LLVMSetOperand(phi, i, v);
}

/* Each phi's next value is f(phi): an IV's step is halved. */
static void build_nexts(rr_pass *p, rr_shape *s, rr_set *kept) {
  for (int i = 0; i < s->nphis; i++) {
    rr_phi *f = &s->phis[i];
    if (!f->f_val) {
      const rr_node *h = &p->nodes[f->half];
      uint64_t c = h->nt ? h->t[0].coeff : 0;
      f->f_val = LLVMBuildAdd(p->b, f->phi, LLVMConstInt(LLVMTypeOf(f->phi), c, false), "reroll.next");
      kept->v[kept->n++] = f->f_val;
    }
  }
  for (int i = 0; i < s->nphis; i++) set_incoming(s->phis[i].phi, s->L, s->phis[i].f_val);
}

/* The second half and the old steps and test: nothing uses them now. */
static void erase_unkept(const rr_shape *s, const rr_set *kept) {
  for (LLVMValueRef i = LLVMGetLastInstruction(s->L), prev; i; i = prev) {
    prev = LLVMGetPreviousInstruction(i);
    if (!LLVMIsAPHINode(i) && !in_set(kept, i)) LLVMInstructionEraseFromParent(i);
  }
}

/* H takes the bypass only for an even x; E goes straight to J; Q goes. */
void ir_retarget_phis(LLVMBasicBlockRef bb, LLVMBasicBlockRef from, LLVMBasicBlockRef to) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetTypeContext(LLVMTypeOf(LLVMBasicBlockAsValue(bb))));
  LLVMValueRef next;
  for (LLVMValueRef phi = LLVMGetFirstInstruction(bb); phi && LLVMIsAPHINode(phi); phi = next) {
    next = LLVMGetNextInstruction(phi);
    LLVMPositionBuilderBefore(b, phi);
    LLVMValueRef fresh = LLVMBuildPhi(b, LLVMTypeOf(phi), "");
    for (unsigned k = 0; k < LLVMCountIncoming(phi); k++) {
      LLVMValueRef v = LLVMGetIncomingValue(phi, k);
      LLVMBasicBlockRef in = LLVMGetIncomingBlock(phi, k);
      if (in == from) in = to;
      if (in) LLVMAddIncoming(fresh, &v, &in, 1);
    }
    LLVMReplaceAllUsesWith(phi, fresh);
    size_t len;
    const char *name = LLVMGetValueName2(phi, &len);
    char keep[256];
    snprintf(keep, sizeof keep, "%.*s", (int)(len < 255 ? len : 255), name);
    LLVMInstructionEraseFromParent(phi);
    LLVMSetValueName2(fresh, keep, strlen(keep));
  }
  LLVMDisposeBuilder(b);
}

static void merge_bypass(rr_pass *p, rr_shape *s) {
  LLVMBuilderRef b = p->b;
  LLVMValueRef hb = LLVMGetBasicBlockTerminator(s->H);
  LLVMTypeRef ty = LLVMTypeOf(s->x);
  LLVMPositionBuilderBefore(b, hb);
  LLVMValueRef low = LLVMBuildAnd(b, s->x, LLVMConstInt(ty, 1, false), "");
  LLVMValueRef cond = LLVMGetCondition(hb);
  if (s->e_side == 0)
    cond = LLVMBuildAnd(b, cond, LLVMBuildICmp(b, LLVMIntEQ, low, LLVMConstInt(ty, 0, false), ""), "reroll.bypass");
  else
    cond = LLVMBuildOr(b, cond, LLVMBuildICmp(b, LLVMIntNE, low, LLVMConstInt(ty, 0, false), ""), "reroll.loop");
  LLVMSetCondition(hb, cond);
  LLVMInstructionEraseFromParent(LLVMGetBasicBlockTerminator(s->E));
  LLVMPositionBuilderAtEnd(b, s->E);
  LLVMBuildBr(b, s->EJ == s->E ? s->J : s->EJ);
  ir_retarget_phis(s->J, s->Q, NULL);
  LLVMDeleteBasicBlock(s->Q);
}

static void rewrite(rr_pass *p, rr_shape *s, rr_set *kept, const LLVMValueRef *jphi_of) {
  LLVMBuilderRef b = p->b;
  LLVMTypeRef ty = LLVMTypeOf(s->M);
  LLVMPositionBuilderBefore(b, LLVMGetNextInstruction(s->M));
  LLVMValueRef end = LLVMBuildAnd(b, s->x, LLVMConstInt(ty, s->mask | 1, false), "reroll.end");
  LLVMValueRef term = LLVMGetBasicBlockTerminator(s->L);
  LLVMPositionBuilderBefore(b, term);
  build_nexts(p, s, kept);
  LLVMValueRef stay = LLVMBuildICmp(b, LLVMIntNE, s->phis[s->counter].f_val, end, "reroll.stay");
  kept->v[kept->n++] = stay;
  LLVMBasicBlockRef out = s->X;
  if (out) {
    LLVMInstructionEraseFromParent(LLVMGetBasicBlockTerminator(out));
  } else {
    out = LLVMInsertBasicBlockInContext(p->ctx, s->E, "reroll.exit");
  }
  LLVMValueRef br = LLVMBuildCondBr(b, stay, s->L, out);
  kept->v[kept->n++] = br;
  LLVMInstructionEraseFromParent(term);
  LLVMPositionBuilderAtEnd(b, out);
  LLVMBuildBr(b, s->J);
  int n = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->J); i && LLVMIsAPHINode(i);
       i = LLVMGetNextInstruction(i), n++)
    for (int k = 0; k < s->nphis; k++)
      if (s->phis[k].phi == jphi_of[n]) LLVMAddIncoming(i, &s->phis[k].f_val, &out, 1);
  LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(s->H));
  for (int i = 0; i < s->nhoist; i++) {
    LLVMInstructionRemoveFromParent(s->hoist[i]);
    LLVMInsertIntoBuilder(b, s->hoist[i]);
  }
  if (s->merge) merge_bypass(p, s);
  /* E is now reached from H only: its phis are their values from H. */
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->E), next; i && LLVMIsAPHINode(i); i = next) {
    next = LLVMGetNextInstruction(i);
    LLVMValueRef vh = LLVMGetIncomingBlock(i, 0) == s->HE ? LLVMGetIncomingValue(i, 0)
                                                          : LLVMGetIncomingValue(i, 1);
    LLVMReplaceAllUsesWith(i, vh);
    LLVMInstructionEraseFromParent(i);
  }
  erase_unkept(s, kept);
}

/* const_end: L's values reach past L only as a phi's next value (the old
 * last trip's end state is the new last trip's), which the new next value
 * then replaces there. */
static bool uses_after_const(const rr_shape *s) {
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->L); i; i = LLVMGetNextInstruction(i)) {
    bool is_next = false;
    for (int k = 0; k < s->nphis; k++) is_next |= s->phis[k].next == i && !LLVMIsAPHINode(i);
    for (LLVMUseRef u = LLVMGetFirstUse(i); u; u = LLVMGetNextUse(u)) {
      LLVMValueRef user = LLVMGetUser(u);
      if (!LLVMIsAInstruction(user)) return false;
      if (LLVMGetInstructionParent(user) != s->L && !is_next) return false;
    }
  }
  return true;
}

static void replace_after(const rr_shape *s, LLVMValueRef old, LLVMValueRef now) {
  LLVMValueRef users[64];
  int n = 0;
  for (LLVMUseRef u = LLVMGetFirstUse(old); u && n < 64; u = LLVMGetNextUse(u))
    if (LLVMGetInstructionParent(LLVMGetUser(u)) != s->L) users[n++] = LLVMGetUser(u);
  for (int i = 0; i < n; i++)
    for (int k = 0; k < LLVMGetNumOperands(users[i]); k++)
      if (LLVMGetOperand(users[i], (unsigned)k) == old) LLVMSetOperand(users[i], (unsigned)k, now);
}

static void rewrite_const(rr_pass *p, rr_shape *s, rr_set *kept) {
  LLVMBuilderRef b = p->b;
  LLVMValueRef term = LLVMGetBasicBlockTerminator(s->L);
  LLVMPositionBuilderBefore(b, term);
  build_nexts(p, s, kept);
  LLVMValueRef stay = LLVMBuildICmp(b, LLVMIntNE, s->phis[s->counter].f_val, s->end, "reroll.stay");
  kept->v[kept->n++] = stay;
  kept->v[kept->n++] = LLVMBuildCondBr(b, stay, s->L, s->out);
  LLVMInstructionEraseFromParent(term);
  for (int i = 0; i < s->nphis; i++)
    if (s->phis[i].next != s->phis[i].f_val)
      replace_after(s, s->phis[i].next, s->phis[i].f_val);
  erase_unkept(s, kept);
}

static bool try_loop(rr_pass *p, const ir_loop *l) {
  rr_shape *s = tw_arena_alloc(&p->arena, sizeof *s);
  LLVMValueRef jphi_of[RR_MAX_PHIS];
  p->loop = l;
  p->nnodes = p->nmemo = 0;
  memset(p->node_hash, 0, sizeof p->node_hash);
  memset(p->memo_hash, 0, sizeof p->memo_hash);
  p->failed = false;
  if (!match_loop(p, s) || !match_phis(p, s) || !match_exit(p, s)) return false;
  if (s->const_end ? !prove_halves(p, s) || !uses_after_const(s)
                   : !match_blocks(p, s) || !counts_agree(p, s) || !prove_halves(p, s) ||
                         !prove_tail(p, s, jphi_of) || !uses_confined(p, s))
    return false;
  rr_set *kept = tw_arena_alloc(&p->arena, sizeof *kept);
  for (int i = 0; i < s->k; i++)
    if (!keep(s, kept, s->a[i].inst)) return false;
  for (int i = 0; i < s->nphis; i++)
    if (!keep(s, kept, s->phis[i].f_val)) return false;
  if (kept->n + s->nphis + 3 > RR_MAX_BODY) return false;
  if (s->const_end) {
    rewrite_const(p, s, kept);
  } else {
    s->merge = bypass_joins(s);
    rewrite(p, s, kept, jphi_of);
  }
  return true;
}

/* One loop at a time: a rewrite changes the CFG the analyses describe. */
static bool reroll_one(rr_pass *p, LLVMValueRef fn) {
  bool done = false;
  if (ir_cfg_build(&p->cfg, &p->arena, fn)) {
    ir_dom_build(&p->dom, &p->cfg);
    ir_loops_build(&p->lp, &p->cfg, &p->dom);
    for (int i = 0; i < p->lp.nloops && !done; i++) done = try_loop(p, p->lp.loops[i]);
  }
  tw_arena_free(&p->arena);
  return done;
}

unsigned ir_reroll_loops(LLVMModuleRef mod) {
  rr_pass *p = calloc(1, sizeof *p);
  if (!p) return 0;
  p->ctx = LLVMGetModuleContext(mod);
  p->b = LLVMCreateBuilderInContext(p->ctx);
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
    while (reroll_one(p, fn)) p->rerolled++;
  unsigned n = p->rerolled;
  LLVMDisposeBuilder(p->b);
  free(p->nodes);
  free(p->memo);
  free(p);
  return n;
}
