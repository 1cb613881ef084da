/* ir_reroll_eval.c: the re-roll pass's evaluation: values of the loop
 * as expressions, substitutions, and the guards evaluated at constants. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_reroll.h"

bool rr_in_loop(const rr_pass *p, LLVMValueRef v) {
  return LLVMIsAInstruction(v) && ir_loop_defines(p->loop, v, &p->cfg);
}

/* Intrinsics without side effects that twasmc's lowering emits. */
bool rr_pure_intrinsic(LLVMValueRef callee) {
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
uint64_t rr_flags_of(LLVMValueRef inst, LLVMOpcode op) {
  uint64_t fmf = LLVMCanValueUseFastMathFlags(inst) ? (uint64_t)LLVMGetFastMathFlags(inst) << 32 : 0;
  return fmf | wrap_flags_of(inst, op);
}



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
  int iter = rr_intern(p, &it);
  int s = rr_eval(p, start, depth + 1), c = rr_eval(p, step, depth + 1);
  return rr_poly_add(p, it.ty, s, rr_poly_mul(p, it.ty, c, iter), 1);
}

/* A shufflevector's mask as a constant <n x i32> (undefined lanes undef):
 * constants are uniqued, so two shuffles have the same mask exactly when
 * these are one value; it stands in the node where a call's callee does. */
static LLVMValueRef shuffle_mask(LLVMValueRef v) {
  unsigned n = LLVMGetNumMaskElements(v);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(LLVMGetTypeContext(LLVMTypeOf(v)));
  LLVMValueRef lanes[64];
  if (n == 0 || n > 64) return NULL;
  for (unsigned k = 0; k < n; k++) {
    int m = LLVMGetMaskValue(v, k);
    lanes[k] = m == LLVMGetUndefMaskElem() ? LLVMGetUndef(i32) : LLVMConstInt(i32, (unsigned)m, false);
  }
  return LLVMConstVector(lanes, n);
}

int rr_eval_inst(rr_pass *p, LLVMValueRef v, int depth) {
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  LLVMTypeRef ty = LLVMTypeOf(v);
  unsigned w = rr_width(ty);
  uint64_t flags = rr_flags_of(v, op);
  if (op == LLVMPHI) {
    int iv = rr_in_loop(p, v) ? -1 : outer_iv(p, v, depth);
    return iv >= 0 ? iv : rr_atom(p, v);
  }
  if (op == LLVMLoad) return rr_atom(p, v);
  bool poly_op = w && w <= 64 && !flags && (op == LLVMAdd || op == LLVMSub || op == LLVMMul);
  if (op == LLVMShl && w && w <= 64 && !flags && LLVMIsAConstantInt(LLVMGetOperand(v, 1)) &&
      LLVMConstIntGetZExtValue(LLVMGetOperand(v, 1)) < w)
    return rr_poly_mul(p, ty, rr_eval(p, LLVMGetOperand(v, 0), depth + 1),
                    rr_poly_const(p, ty, 1ull << LLVMConstIntGetZExtValue(LLVMGetOperand(v, 1))));
  if (poly_op) {
    int a = rr_eval(p, LLVMGetOperand(v, 0), depth + 1), b = rr_eval(p, LLVMGetOperand(v, 1), depth + 1);
    if (op == LLVMMul) return rr_poly_mul(p, ty, a, b);
    return rr_poly_add(p, ty, a, b, op == LLVMSub ? ~0ull : 1);
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
    if (!rr_pure_intrinsic(callee)) return -1;
    nargs = (int)LLVMGetNumArgOperands(v);
    break;
  case LLVMExtractElement: case LLVMInsertElement:
    if (!p->lane_ops) return -1;
    break;
  case LLVMShuffleVector:
    if (!p->lane_ops || !(callee = shuffle_mask(v))) return -1;
    break;
  default:
    return -1;
  }
  if (nargs > RR_MAX_KIDS) return -1;
  int kids[RR_MAX_KIDS];
  for (int i = 0; i < nargs; i++) kids[i] = rr_eval(p, LLVMGetOperand(v, (unsigned)i), depth + 1);
  return rr_op_node(p, v, kids, nargs, flags, callee);
}

static unsigned memo_slot(const rr_pass *p, LLVMValueRef v) {
  unsigned slot = (unsigned)rr_hash_bytes(&v, sizeof v) & (RR_HASH - 1);
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
int rr_eval(rr_pass *p, LLVMValueRef v, int depth) {
  int known = memo_find(p, v);
  if (known != -2) return known;
  int r;
  if (LLVMIsAConstantInt(v) && rr_width(LLVMTypeOf(v)) <= 64)
    r = rr_poly_const(p, LLVMTypeOf(v), LLVMConstIntGetZExtValue(v));
  else if (!LLVMIsAInstruction(v))
    r = rr_atom(p, v);
  else if (depth > RR_MAX_DEPTH)
    r = rr_in_loop(p, v) ? -1 : rr_atom(p, v);
  else {
    r = rr_eval_inst(p, v, depth);
    if (r < 0 && !rr_in_loop(p, v) && p->nnodes < RR_MAX_NODES) r = rr_atom(p, v);
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
int rr_subst_apply(rr_pass *p, int id, const rr_subst *s, int depth) {
  if (id < 0 || depth > 4 * RR_MAX_DEPTH) return -1;
  for (int i = 0; i < s->n; i++)
    if (s->from[i] == id) return s->to[i];
  rr_node n;
  memcpy(&n, &p->nodes[id], sizeof n); /* padding too: nodes compare bytes */
  switch (n.kind) {
  case RR_ATOM: case RR_ITER: return id;
  case RR_OP:
    for (int i = 0; i < n.nk; i++)
      if ((n.k[i] = rr_subst_apply(p, n.k[i], s, depth + 1)) < 0) return -1;
    return rr_intern(p, &n);
  case RR_POLY: {
    int sum = rr_poly_const(p, n.ty, 0);
    for (int i = 0; i < n.nt; i++) {
      int prod = rr_poly_const(p, n.ty, n.t[i].coeff);
      for (int j = 0; j < n.t[i].nf; j++)
        prod = rr_poly_mul(p, n.ty, prod, rr_subst_apply(p, n.t[i].f[j], s, depth + 1));
      sum = rr_poly_add(p, n.ty, sum, prod, 1);
    }
    return sum;
  }
  }
  return -1;
}

bool rr_mentions(const rr_pass *p, int id, int what, int depth) {
  if (id == what) return true;
  if (id < 0 || depth > 4 * RR_MAX_DEPTH) return true;
  const rr_node *n = &p->nodes[id];
  for (int i = 0; i < n->nk; i++)
    if (rr_mentions(p, n->k[i], what, depth + 1)) return true;
  for (int i = 0; i < n->nt; i++)
    for (int j = 0; j < n->t[i].nf; j++)
      if (rr_mentions(p, n->t[i].f[j], what, depth + 1)) return true;
  return false;
}

void rr_subst_add(rr_subst *s, int from, int to) {
  s->from[s->n] = from;
  s->to[s->n++] = to;
}

/* An atom of a value of L (a phi or load there): the expression varies. */
bool rr_varies(const rr_pass *p, int id, int depth) {
  if (id < 0 || depth > 4 * RR_MAX_DEPTH) return true;
  const rr_node *n = &p->nodes[id];
  if (n->kind == RR_ATOM) return rr_in_loop(p, n->val);
  for (int i = 0; i < n->nk; i++)
    if (rr_varies(p, n->k[i], depth + 1)) return true;
  for (int i = 0; i < n->nt; i++)
    for (int j = 0; j < n->t[i].nf; j++)
      if (rr_varies(p, n->t[i].f[j], depth + 1)) return true;
  return false;
}

/* ---- Concrete evaluation of the trip-count conditions ---------------------- */

/* Whether phi y is x + *d at every point: two phis of one block, each
 * entered from every predecessor either with constants (y's minus x's: d)
 * or with y + C and x + C (one constant C), so y - x keeps its first value
 * (a loop's i and i + 1, `j <= i` counted as x = i + 1).  Wrapping adds
 * keep it modulo 2^w. */
static bool twin_phi(LLVMValueRef y, LLVMValueRef x, uint64_t *d) {
  if (!LLVMIsAPHINode(y) || !LLVMIsAPHINode(x) || y == x || LLVMTypeOf(y) != LLVMTypeOf(x) ||
      LLVMGetInstructionParent(y) != LLVMGetInstructionParent(x) || LLVMCountIncoming(y) != LLVMCountIncoming(x))
    return false;
  bool have = false;
  for (unsigned i = 0; i < LLVMCountIncoming(y); i++) {
    LLVMBasicBlockRef in = LLVMGetIncomingBlock(y, i);
    LLVMValueRef vy = LLVMGetIncomingValue(y, i), vx = NULL;
    for (unsigned k = 0; k < LLVMCountIncoming(x); k++)
      if (LLVMGetIncomingBlock(x, k) == in) vx = LLVMGetIncomingValue(x, k);
    if (!vx) return false;
    if (LLVMIsAConstantInt(vy) && LLVMIsAConstantInt(vx)) {
      uint64_t e = LLVMConstIntGetZExtValue(vy) - LLVMConstIntGetZExtValue(vx);
      if (have && e != *d) return false;
      *d = e;
      have = true;
      continue;
    }
    bool stepped = LLVMIsABinaryOperator(vy) && LLVMIsABinaryOperator(vx) &&
                   LLVMGetInstructionOpcode(vy) == LLVMAdd && LLVMGetInstructionOpcode(vx) == LLVMAdd &&
                   LLVMGetOperand(vy, 0) == y && LLVMGetOperand(vx, 0) == x &&
                   LLVMIsAConstantInt(LLVMGetOperand(vy, 1)) &&
                   LLVMGetOperand(vy, 1) == LLVMGetOperand(vx, 1);
    if (!stepped) return false;
  }
  return have;
}

/* v as x + *k: x itself, x + K (a constant K), or a twin phi of x. */
bool rr_offset_of(LLVMValueRef v, LLVMValueRef x, uint64_t *k) {
  *k = 0;
  if (v == x) return true;
  if (LLVMIsABinaryOperator(v) && LLVMGetInstructionOpcode(v) == LLVMAdd && LLVMGetOperand(v, 0) == x &&
      LLVMIsAConstantInt(LLVMGetOperand(v, 1))) {
    *k = LLVMConstIntGetZExtValue(LLVMGetOperand(v, 1));
    return true;
  }
  /* x - C (clang's `w - 1 <u 3` bypass, hoisted out of an outer loop) */
  if (LLVMIsABinaryOperator(v) && LLVMGetInstructionOpcode(v) == LLVMSub && LLVMGetOperand(v, 0) == x &&
      LLVMIsAConstantInt(LLVMGetOperand(v, 1)) && rr_width(LLVMTypeOf(v)) <= 64) {
    *k = (0 - LLVMConstIntGetZExtValue(LLVMGetOperand(v, 1))) & rr_wmask(rr_width(LLVMTypeOf(v)));
    return true;
  }
  return twin_phi(v, x, k);
}

/* Whether v is one of list[0..n). */
bool rr_listed(LLVMValueRef *list, int n, LLVMValueRef v) {
  for (int i = 0; i < n; i++)
    if (list[i] == v) return true;
  return false;
}

/* Whether v is an instruction of block bb. */
bool rr_in_block(LLVMValueRef v, LLVMBasicBlockRef bb) {
  return v && LLVMIsAInstruction(v) && LLVMGetInstructionParent(v) == bb;
}

/* Whether `icmp pred a, b` holds for w-bit values a and b (their low w
 * bits; signed predicates read them as two's complement): 1 or 0, -1
 * for a predicate that is none of the ten. */
int rr_icmp_holds(LLVMIntPredicate pred, uint64_t a, uint64_t b, unsigned w) {
  uint64_t m = rr_wmask(w);
  a &= m, b &= m;
  int64_t sa = w < 64 && (a >> (w - 1) & 1) ? (int64_t)(a | ~m) : (int64_t)a;
  int64_t sb = w < 64 && (b >> (w - 1) & 1) ? (int64_t)(b | ~m) : (int64_t)b;
  switch (pred) {
  case LLVMIntEQ: return a == b;
  case LLVMIntNE: return a != b;
  case LLVMIntUGT: return a > b;
  case LLVMIntUGE: return a >= b;
  case LLVMIntULT: return a < b;
  case LLVMIntULE: return a <= b;
  case LLVMIntSGT: return sa > sb;
  case LLVMIntSGE: return sa >= sb;
  case LLVMIntSLT: return sa < sb;
  case LLVMIntSLE: return sa <= sb;
  default: return -1;
  }
}

/* v at x == xv, for the few operations the guards use. */
static bool ceval(LLVMValueRef v, LLVMValueRef x, uint64_t xv, uint64_t *out, int depth) {
  unsigned w = rr_width(LLVMTypeOf(v));
  if (!w || w > 64 || depth > 16) return false;
  uint64_t m = rr_wmask(w), a = 0, b = 0, c = 0;
  if (v == x) return *out = xv & m, true;
  if (LLVMIsAConstantInt(v)) return *out = LLVMConstIntGetZExtValue(v) & m, true;
  if (twin_phi(v, x, &a)) return *out = (xv + a) & m, true;
  /* x = v + C or v - C (prefix's x = n - 1 under the bypass n - 2 <u 3):
   * v is x - C or x + C, one value per x */
  if (LLVMIsABinaryOperator(x) && LLVMGetOperand(x, 0) == v && LLVMIsAConstantInt(LLVMGetOperand(x, 1)) &&
      LLVMTypeOf(x) == LLVMTypeOf(v)) {
    uint64_t k = LLVMConstIntGetZExtValue(LLVMGetOperand(x, 1));
    if (LLVMGetInstructionOpcode(x) == LLVMAdd) return *out = (xv - k) & m, true;
    if (LLVMGetInstructionOpcode(x) == LLVMSub) return *out = (xv + k) & m, true;
  }
  if (!LLVMIsAInstruction(v)) return false;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  int n = LLVMGetNumOperands(v);
  if (n < 1 || n > 3 || op == LLVMCall || op == LLVMPHI || op == LLVMLoad) return false;
  if (!ceval(LLVMGetOperand(v, 0), x, xv, &a, depth + 1)) return false;
  if (n > 1 && !ceval(LLVMGetOperand(v, 1), x, xv, &b, depth + 1)) return false;
  if (n > 2 && !ceval(LLVMGetOperand(v, 2), x, xv, &c, depth + 1)) return false;
  unsigned wa = rr_width(LLVMTypeOf(LLVMGetOperand(v, 0)));
  int64_t sa = wa < 64 && (a >> (wa - 1) & 1) ? (int64_t)(a | ~rr_wmask(wa)) : (int64_t)a;
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
  case LLVMICmp: {
    int h = rr_icmp_holds(LLVMGetICmpPredicate(v), a, b, wa);
    if (h < 0) return false;
    r = (uint64_t)h;
    break;
  }
  default: return false;
  }
  *out = r & m;
  return true;
}

/* The bits of v known at x == xv where ceval cannot give all of them
 * (another value unknown): *one the bits known set, *zero those known
 * clear.  An or with a side known set, an and with a side known clear, a
 * zext's high bits and an equality whose known bits already differ are
 * decided whatever the unknown value is (clang's `n < 1 | flag == 0` guard
 * of a loop, hoisted out of an outer loop). */
static void cbits(LLVMValueRef v, LLVMValueRef x, uint64_t xv, uint64_t *one, uint64_t *zero, int depth) {
  unsigned w = rr_width(LLVMTypeOf(v));
  uint64_t m = rr_wmask(w), c;
  *one = *zero = 0;
  if (!w || w > 64 || depth > 16) return;
  if (ceval(v, x, xv, &c, depth)) {
    *one = c, *zero = ~c & m;
    return;
  }
  if (!LLVMIsAInstruction(v)) return;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  uint64_t a1, a0, b1, b0;
  switch (op) {
  case LLVMOr:
  case LLVMAnd:
    cbits(LLVMGetOperand(v, 0), x, xv, &a1, &a0, depth + 1);
    cbits(LLVMGetOperand(v, 1), x, xv, &b1, &b0, depth + 1);
    *one = op == LLVMOr ? a1 | b1 : a1 & b1;
    *zero = op == LLVMOr ? a0 & b0 : a0 | b0;
    return;
  case LLVMZExt:
    cbits(LLVMGetOperand(v, 0), x, xv, &a1, &a0, depth + 1);
    *one = a1, *zero = (a0 | ~rr_wmask(rr_width(LLVMTypeOf(LLVMGetOperand(v, 0))))) & m;
    return;
  case LLVMICmp: {
    LLVMIntPredicate pr = LLVMGetICmpPredicate(v);
    if (pr != LLVMIntEQ && pr != LLVMIntNE) return;
    cbits(LLVMGetOperand(v, 0), x, xv, &a1, &a0, depth + 1);
    cbits(LLVMGetOperand(v, 1), x, xv, &b1, &b0, depth + 1);
    if (!((a1 & b0) | (a0 & b1))) return; /* not known to differ */
    *one = pr == LLVMIntNE, *zero = pr == LLVMIntEQ;
    return;
  }
  default:
    return;
  }
}

/* An i1 value at x == xv: 1, 0, or -1 (not decided). */
int rr_bool_at(LLVMValueRef v, LLVMValueRef x, uint64_t xv) {
  uint64_t one, zero;
  cbits(v, x, xv, &one, &zero, 0);
  return one & 1 ? 1 : zero & 1 ? 0 : -1;
}

/* Which successor a conditional branch takes at x == xv: 0, 1, or -1. */
int rr_branch_at(LLVMValueRef br, LLVMValueRef x, uint64_t xv) {
  int v = rr_bool_at(LLVMGetCondition(br), x, xv);
  return v < 0 ? -1 : 1 - v;
}

/* twasmc's lowering tests i1 values as icmp ne (zext c), 0. */
LLVMValueRef rr_strip_bool(LLVMValueRef v, bool *negated) {
  *negated = false;
  while (LLVMIsAICmpInst(v) && LLVMIsAConstantInt(LLVMGetOperand(v, 1)) &&
         LLVMConstIntGetZExtValue(LLVMGetOperand(v, 1)) == 0 &&
         LLVMIsAZExtInst(LLVMGetOperand(v, 0)) &&
         rr_width(LLVMTypeOf(LLVMGetOperand(LLVMGetOperand(v, 0), 0))) == 1 &&
         (LLVMGetICmpPredicate(v) == LLVMIntNE || LLVMGetICmpPredicate(v) == LLVMIntEQ)) {
    *negated ^= LLVMGetICmpPredicate(v) == LLVMIntEQ;
    v = LLVMGetOperand(LLVMGetOperand(v, 0), 0);
  }
  return v;
}

/* x & c with c constant (either side): x, else NULL. */
LLVMValueRef rr_and_const(LLVMValueRef v, uint64_t *c) {
  if (!LLVMIsAInstruction(v) || LLVMGetInstructionOpcode(v) != LLVMAnd) return NULL;
  for (unsigned side = 0; side < 2; side++)
    if (LLVMIsAConstantInt(LLVMGetOperand(v, side)) && rr_width(LLVMTypeOf(v)) <= 64) {
      *c = LLVMConstIntGetZExtValue(LLVMGetOperand(v, side));
      return LLVMGetOperand(v, 1 - side);
    }
  return NULL;
}
