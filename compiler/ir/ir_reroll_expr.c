/* ir_reroll_expr.c: the re-roll pass's expressions: hash-consed nodes,
 * wrapping integer arithmetic as polynomials modulo 2^width. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_reroll.h"

unsigned rr_width(LLVMTypeRef ty) {
  return LLVMGetTypeKind(ty) == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(ty) : 0;
}

uint64_t rr_wmask(unsigned w) { return w >= 64 ? ~0ull : (1ull << w) - 1; }

/* c / d modulo 2^w for a coefficient c that d divides, c read as signed:
 * of the d values h with d * h == c (mod 2^w), the one an unrolled copy
 * steps by (a counter going down by 10 in two copies steps by -5, not by
 * 2^(w-1) - 5, which also doubles to -10). */
uint64_t rr_coeff_div(uint64_t c, unsigned w, uint64_t d) {
  uint64_t m = rr_wmask(w);
  c &= m;
  int64_t sc = w < 64 && (c >> (w - 1) & 1) ? (int64_t)(c | ~m) : (int64_t)c;
  return (uint64_t)(sc / (int64_t)d) & m;
}

uint64_t rr_hash_bytes(const void *data, size_t len) {
  const unsigned char *b = data;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < len; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* Open addressing over node ids + 1 (0: empty), cleared per loop. */
int rr_intern(rr_pass *p, const rr_node *n) {
  unsigned slot = (unsigned)rr_hash_bytes(n, sizeof *n) & (RR_HASH - 1);
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

int rr_atom(rr_pass *p, LLVMValueRef v) {
  rr_node n;
  memset(&n, 0, sizeof n);
  n.kind = RR_ATOM;
  n.ty = LLVMTypeOf(v);
  n.val = v;
  return rr_intern(p, &n);
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
int rr_make_poly(rr_pass *p, LLVMTypeRef ty, rr_term *t, int nt) {
  uint64_t m = rr_wmask(rr_width(ty));
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
  return rr_intern(p, &n);
}

/* The terms of node id (a lone factor for a non-polynomial). */
int rr_terms_of(const rr_pass *p, int id, rr_term *out) {
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

int rr_poly_const(rr_pass *p, LLVMTypeRef ty, uint64_t c) {
  rr_term t = {.coeff = c, .nf = 0};
  return rr_make_poly(p, ty, &t, 1);
}

/* a + scale * b */
int rr_poly_add(rr_pass *p, LLVMTypeRef ty, int a, int b, uint64_t scale) {
  if (a < 0 || b < 0 || !rr_width(ty)) return -1;
  rr_term t[2 * RR_MAX_TERMS];
  int na = rr_terms_of(p, a, t), nb = rr_terms_of(p, b, t + na);
  for (int i = na; i < na + nb; i++) t[i].coeff *= scale;
  return rr_make_poly(p, ty, t, na + nb);
}

int rr_poly_mul(rr_pass *p, LLVMTypeRef ty, int a, int b) {
  if (a < 0 || b < 0 || !rr_width(ty)) return -1;
  rr_term ta[RR_MAX_TERMS], tb[RR_MAX_TERMS], t[RR_MAX_TERMS * RR_MAX_TERMS];
  int na = rr_terms_of(p, a, ta), nb = rr_terms_of(p, b, tb), nt = 0;
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
  return rr_make_poly(p, ty, t, nt);
}

int rr_op_node(rr_pass *p, LLVMValueRef inst, const int *kids, int nk, uint64_t extra,
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
  return rr_intern(p, &n);
}

/* The constant c with node id == c, if it is one. */
bool rr_const_of(const rr_pass *p, int id, uint64_t *c) {
  if (id < 0) return false;
  const rr_node *n = &p->nodes[id];
  if (n->kind != RR_POLY || n->nt > 1 || (n->nt == 1 && n->t[0].nf != 0)) return false;
  *c = n->nt ? n->t[0].coeff : 0;
  return true;
}
