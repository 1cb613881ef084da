/* rt_global.c: globals created by the host. */
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

twasm_global *twasm_global_new(twasm_valkind kind, bool mutable_, twasm_val init) {
  twasm_global *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  g->kind = kind;
  g->mutable_ = mutable_;
  twasm_global_set(g, init);
  return g;
}

/* Globals of instances live in their instances (rt_own_global). */
void twasm_global_delete(twasm_global *g) {
  if (g && !g->owner) free(g);
}

twasm_val twasm_global_get(const twasm_global *g) {
  twasm_val v = {.kind = g->kind};
  switch (g->kind) {
  case TWASM_I32: v.of.i32 = g->cell.i32; break;
  case TWASM_I64: v.of.i64 = g->cell.i64; break;
  case TWASM_F32: v.of.f32 = g->cell.f32; break;
  case TWASM_F64: v.of.f64 = g->cell.f64; break;
  case TWASM_V128: v.of.v128 = g->cell.v128; break;
  default: v.of.ref = g->cell.ref; break;
  }
  return v;
}

/* Ignores the mutability flag: the host may initialise what it created. */
void twasm_global_set(twasm_global *g, twasm_val v) {
  memset(&g->cell, 0, sizeof g->cell);
  switch (g->kind) {
  case TWASM_I32: g->cell.i32 = v.of.i32; break;
  case TWASM_I64: g->cell.i64 = v.of.i64; break;
  case TWASM_F32: g->cell.f32 = v.of.f32; break;
  case TWASM_F64: g->cell.f64 = v.of.f64; break;
  case TWASM_V128: g->cell.v128 = v.of.v128; break;
  default: g->cell.ref = v.of.ref; break;
  }
}
