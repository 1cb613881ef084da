/* bnd_phifn.c: a phi that is, on every edge into its block, the same
 * function of another phi of that block (`zext((x << 2) + 1024)` of the
 * pc phi, `x + 1`) becomes that function computed once after the phis.
 *
 * Why here: loop rotation copies the check of a loop's first access into
 * every block entering the loop's header, and GVN then carries the
 * checked address (and `pc + 1`, computed beside it) into the header as
 * phis of values computed in each predecessor.  Once bnd_late.c has left
 * those checks to the guard pages nothing but the access reads them, but
 * the phis stay: each predecessor computes the address and `pc + 1`, and
 * the old pc is kept live beside the new one (vm's dispatch loop: two
 * more instructions at each of its 56 M trips).  LLVM's InstCombine folds
 * a phi of like operations only where each has one use.
 *
 * Sound by induction over the edges taken: if P_k == f(Q_k) on every edge
 * k into B, then P == f(Q) in B.  An incoming pair of phis of one block
 * is matched the same way (recursively, a pair being matched assumed to
 * hold: a cycle of edges adds no other value), constants by evaluating f.
 * The new instructions carry no wrap flags: where P_k was poison, P gets
 * a value, which refines it. */
#include <stdint.h>

#include "bnd.h"

#define PF_MAX_STEPS 6
#define PF_MAX_PAIRS 64

typedef struct {
  LLVMOpcode op;
  LLVMValueRef k;    /* the constant operand of a binary step, else NULL */
  unsigned var_pos;  /* the varying operand's position */
  LLVMTypeRef type;  /* the step's result type */
} pf_step;

typedef struct {
  pf_step s[PF_MAX_STEPS]; /* outermost first */
  int n;
  LLVMTypeRef leaf;        /* the type f is applied to */
  LLVMValueRef pairs[PF_MAX_PAIRS][2];
  int npairs;
} pf_fn;

static bool int_type(LLVMTypeRef t, unsigned *bits) {
  if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind) return false;
  *bits = LLVMGetIntTypeWidth(t);
  return *bits <= 64;
}

static bool const_int(LLVMValueRef v) { return v && LLVMIsAConstantInt(v) != NULL; }

/* One step of f at v: its opcode and, for a binary operation, which
 * operand varies (the other a constant). */
static bool step_of(LLVMValueRef v, pf_step *st) {
  unsigned bits;
  if (!LLVMIsAInstruction(v) || !int_type(LLVMTypeOf(v), &bits)) return false;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  st->op = op;
  st->type = LLVMTypeOf(v);
  st->k = NULL;
  st->var_pos = 0;
  switch (op) {
  case LLVMZExt:
  case LLVMSExt:
  case LLVMTrunc:
    return int_type(LLVMTypeOf(LLVMGetOperand(v, 0)), &bits);
  case LLVMAdd:
  case LLVMSub:
  case LLVMMul:
  case LLVMShl:
  case LLVMAnd:
  case LLVMOr:
  case LLVMXor: {
    bool c0 = const_int(LLVMGetOperand(v, 0)), c1 = const_int(LLVMGetOperand(v, 1));
    if (c0 == c1) return false;
    st->var_pos = c0 ? 1 : 0;
    st->k = LLVMGetOperand(v, c0 ? 0 : 1);
    return true;
  }
  default:
    return false;
  }
}

static uint64_t mask(unsigned bits) { return bits == 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1; }

/* f at constant x (x's value zero-extended); false where a step would be
 * poison or is not evaluated (a shift past the width). */
static bool eval(const pf_fn *f, LLVMValueRef x, uint64_t *out) {
  unsigned w;
  if (!int_type(LLVMTypeOf(x), &w)) return false;
  uint64_t v = LLVMConstIntGetZExtValue(x) & mask(w);
  for (int d = f->n - 1; d >= 0; d--) {
    const pf_step *st = &f->s[d];
    unsigned to = 64;
    if (!int_type(st->type, &to)) return false;
    uint64_t k = st->k ? LLVMConstIntGetZExtValue(st->k) & mask(to) : 0;
    uint64_t a = st->var_pos ? k : v, b = st->var_pos ? v : k;
    switch (st->op) {
    case LLVMZExt: break;
    case LLVMSExt:
      if (w < 64 && (v >> (w - 1) & 1)) v |= ~mask(w);
      break;
    case LLVMTrunc: break;
    case LLVMAdd: v = a + b; break;
    case LLVMSub: v = a - b; break;
    case LLVMMul: v = a * b; break;
    case LLVMShl:
      if (st->var_pos != 0 || b >= to) return false;
      v = a << b;
      break;
    case LLVMAnd: v = a & b; break;
    case LLVMOr: v = a | b; break;
    case LLVMXor: v = a ^ b; break;
    default: return false;
    }
    v &= mask(to);
    w = to;
  }
  *out = v;
  return true;
}

/* Whether p is f applied to x, step by step from depth d. */
static bool applies(const pf_fn *f, int d, LLVMValueRef p, LLVMValueRef x) {
  if (d == f->n) return p == x;
  pf_step st;
  if (!step_of(p, &st) || st.op != f->s[d].op || st.type != f->s[d].type || st.k != f->s[d].k ||
      st.var_pos != f->s[d].var_pos)
    return false;
  return applies(f, d + 1, LLVMGetOperand(p, st.var_pos), x);
}

static bool matches(pf_fn *f, LLVMValueRef P, LLVMValueRef Q);

/* One edge's pair: p == f(q). */
static bool edge_holds(pf_fn *f, LLVMValueRef p, LLVMValueRef q) {
  if (!p || !q) return false;
  if (const_int(p) && const_int(q)) {
    uint64_t v;
    unsigned w;
    return eval(f, q, &v) && int_type(LLVMTypeOf(p), &w) && (LLVMConstIntGetZExtValue(p) & mask(w)) == v;
  }
  if (LLVMIsAPHINode(p) && LLVMIsAPHINode(q) && LLVMGetInstructionParent(p) == LLVMGetInstructionParent(q))
    return matches(f, p, q);
  return applies(f, 0, p, q);
}

/* P == f(Q) for phis of one block, over every edge into it. */
static bool matches(pf_fn *f, LLVMValueRef P, LLVMValueRef Q) {
  for (int k = 0; k < f->npairs; k++)
    if (f->pairs[k][0] == P && f->pairs[k][1] == Q) return true;
  if (f->npairs == PF_MAX_PAIRS || LLVMTypeOf(P) != f->s[0].type || LLVMTypeOf(Q) != f->leaf) return false;
  f->pairs[f->npairs][0] = P;
  f->pairs[f->npairs][1] = Q;
  f->npairs++;
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(P);
  unsigned n = LLVMCountIncoming(P);
  for (unsigned k = 0; k < n; k++) {
    LLVMBasicBlockRef from = LLVMGetIncomingBlock(P, k);
    if (!edge_holds(f, LLVMGetIncomingValue(P, k), ir_incoming_from(Q, from))) return false;
  }
  return LLVMCountIncoming(Q) == n && bb == LLVMGetInstructionParent(Q);
}

/* The phi of P's block that P is a function of, f filled; NULL if none.
 * f is read off P's first incoming value that is an instruction: each
 * value down its chain of steps is tried as the leaf, outermost first. */
static LLVMValueRef find(LLVMValueRef P, pf_fn *f) {
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(P);
  unsigned n = LLVMCountIncoming(P);
  for (unsigned k = 0; k < n; k++) {
    LLVMValueRef v = LLVMGetIncomingValue(P, k);
    if (LLVMIsAPHINode(v) || !LLVMIsAInstruction(v)) continue;
    LLVMBasicBlockRef from = LLVMGetIncomingBlock(P, k);
    f->n = 0;
    pf_step st;
    while (f->n < PF_MAX_STEPS && step_of(v, &st)) {
      f->s[f->n++] = st;
      v = LLVMGetOperand(v, st.var_pos);
      f->leaf = LLVMTypeOf(v);
      for (LLVMValueRef Q = LLVMGetFirstInstruction(bb); Q && LLVMIsAPHINode(Q); Q = LLVMGetNextInstruction(Q)) {
        if (Q == P || ir_incoming_from(Q, from) != v) continue;
        f->npairs = 0;
        if (matches(f, P, Q)) return Q;
      }
    }
    return NULL;
  }
  return NULL;
}

/* f(Q) built before `at`, without wrap flags. */
static LLVMValueRef build(LLVMBuilderRef b, const pf_fn *f, LLVMValueRef Q) {
  LLVMValueRef v = Q;
  for (int d = f->n - 1; d >= 0; d--) {
    const pf_step *st = &f->s[d];
    if (!st->k) {
      v = LLVMBuildCast(b, st->op, v, st->type, "");
      continue;
    }
    LLVMValueRef a = st->var_pos ? st->k : v, c = st->var_pos ? v : st->k;
    v = LLVMBuildBinOp(b, st->op, a, c, "");
  }
  return v;
}

static bool pure(LLVMValueRef i) {
  return LLVMIsABinaryOperator(i) || LLVMIsACastInst(i) || LLVMIsAICmpInst(i) ||
         LLVMIsAGetElementPtrInst(i) || LLVMIsASelectInst(i);
}

/* Phis whose every use is by such phis (cycles included) and pure
 * values no longer used go. */
static void sweep(LLVMValueRef fn) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
      LLVMValueRef i = LLVMGetFirstInstruction(bb);
      while (i) {
        LLVMValueRef next = LLVMGetNextInstruction(i);
        bool dead = !LLVMGetFirstUse(i) && (pure(i) || LLVMIsAPHINode(i));
        if (!dead && LLVMIsAPHINode(i)) {
          dead = true; /* used by itself only */
          for (LLVMUseRef u = LLVMGetFirstUse(i); u && dead; u = LLVMGetNextUse(u))
            dead = LLVMGetUser(u) == i;
          if (dead) LLVMReplaceAllUsesWith(i, LLVMGetPoison(LLVMTypeOf(i)));
        }
        if (dead) {
          LLVMInstructionEraseFromParent(i);
          changed = true;
        }
        i = next;
      }
    }
  }
}

unsigned bnd_phi_functions(LLVMValueRef fn) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetTypeContext(LLVMTypeOf(fn)));
  unsigned n = 0;
  pf_fn f;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef P = LLVMGetFirstInstruction(bb);
    while (P && LLVMIsAPHINode(P)) {
      LLVMValueRef next = LLVMGetNextInstruction(P), Q;
      unsigned bits;
      if (int_type(LLVMTypeOf(P), &bits) && (Q = find(P, &f)) != NULL) {
        LLVMValueRef at = LLVMGetFirstInstruction(bb);
        while (at && LLVMIsAPHINode(at)) at = LLVMGetNextInstruction(at);
        if (at && !LLVMIsALandingPadInst(at)) {
          LLVMPositionBuilderBefore(b, at);
          LLVMReplaceAllUsesWith(P, build(b, &f, Q));
          LLVMInstructionEraseFromParent(P);
          n++;
        }
      }
      P = next;
    }
  }
  if (n) sweep(fn);
  LLVMDisposeBuilder(b);
  return n;
}
