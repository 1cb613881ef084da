/* rt_func.c: function records: host functions, their bindings to importing
 * instances, and the entry generated code calls them through. */
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

/* Enough for any realistic signature without touching the heap. */
#define RT_INLINE_VALS 16u

twasm_func *twasm_func_new_host(const twasm_functype *type, twasm_host_fn fn, void *env) {
  uint32_t n = type->nparams + type->nresults;
  uint8_t inline_types[RT_INLINE_VALS];
  uint8_t *types = n <= RT_INLINE_VALS ? inline_types : malloc(n);
  if (!types) return NULL;
  for (uint32_t i = 0; i < type->nparams; i++) types[i] = (uint8_t)type->params[i];
  for (uint32_t i = 0; i < type->nresults; i++) types[type->nparams + i] = (uint8_t)type->results[i];
  const rt_sig *sig = rt_sig_intern(type->nparams, type->nresults, types);
  if (types != inline_types) free(types);
  rt_func *f = sig ? calloc(1, sizeof *f) : NULL;
  if (!f) return NULL;
  /* code stays NULL until an importing module lends its trampoline for the
   * type: only then can generated code call it through a table. */
  f->abi.vmctx = f;
  f->abi.sig_id = sig->id;
  f->kind = RT_FUNC_HOST;
  f->sig = sig;
  f->host_fn = fn;
  f->env = env;
  return (twasm_func *)f;
}

void twasm_func_delete(twasm_func *func) {
  rt_func *f = (rt_func *)func;
  if (f && f->kind == RT_FUNC_HOST) free(f);
}

void twasm_func_type(const twasm_func *func, twasm_functype *out) {
  const rt_sig *sig = ((const rt_func *)func)->sig;
  out->nparams = sig->nparams;
  out->nresults = sig->nresults;
  out->params = sig->kinds;
  out->results = sig->kinds + sig->nparams;
}

rt_func *rt_func_bind_host(rt_instance *importer, rt_func *host, uint32_t type_index) {
  const twasm_module_abi *m = importer->module;
  void *tramp = m->host_trampolines ? m->host_trampolines[type_index] : NULL;
  rt_func *b = rt_arena_alloc(&importer->arena, sizeof *b);
  if (!b) return NULL;
  if (!host->abi.code) host->abi.code = tramp;
  b->abi.code = tramp;
  b->abi.vmctx = b;
  b->abi.sig_id = host->sig->id;
  b->kind = RT_FUNC_BINDING;
  b->sig = host->sig;
  b->host = host;
  b->owner = importer;
  return b;
}

uint32_t rt_slot_count(const twasm_valkind *kinds, uint32_t n) {
  uint32_t slots = 0;
  for (uint32_t i = 0; i < n; i++) slots += kinds[i] == TWASM_V128 ? 2 : 1;
  return slots;
}

/* Each value in its slot, a v128 in two (twasm_abi.h). */
void rt_slots_from_vals(const twasm_val *vals, uint32_t n, twasm_slot *out) {
  for (uint32_t i = 0; i < n; i++, out++) {
    const twasm_val *v = &vals[i];
    switch (v->kind) {
    case TWASM_I32: *out = (uint32_t)v->of.i32; break;
    case TWASM_I64: *out = (uint64_t)v->of.i64; break;
    case TWASM_F32: {
      uint32_t bits;
      memcpy(&bits, &v->of.f32, sizeof bits);
      *out = bits;
      break;
    }
    case TWASM_F64: memcpy(out, &v->of.f64, sizeof *out); break;
    case TWASM_V128: memcpy(out++, &v->of.v128, sizeof v->of.v128); break;
    default: *out = (uintptr_t)v->of.ref; break;
    }
  }
}

void rt_vals_from_slots(const twasm_valkind *kinds, const twasm_slot *slots, uint32_t n, twasm_val *out) {
  for (uint32_t i = 0; i < n; i++, slots++) {
    twasm_val *v = &out[i];
    v->kind = kinds[i];
    switch (kinds[i]) {
    case TWASM_I32: v->of.i32 = (int32_t)(uint32_t)*slots; break;
    case TWASM_I64: v->of.i64 = (int64_t)*slots; break;
    case TWASM_F32: {
      uint32_t bits = (uint32_t)*slots;
      memcpy(&v->of.f32, &bits, sizeof bits);
      break;
    }
    case TWASM_F64: memcpy(&v->of.f64, slots, sizeof *slots); break;
    case TWASM_V128: memcpy(&v->of.v128, slots++, sizeof v->of.v128); break;
    default: v->of.ref = (void *)(uintptr_t)*slots; break;
    }
  }
}

/* A host function called from Wasm code; a trap it reports unwinds to the
 * innermost twasm_call like any other. */
void twasm_rt_call_host(void *vmctx, const twasm_slot *args, twasm_slot *results) {
  rt_func *self = vmctx;
  rt_func *host = self->kind == RT_FUNC_BINDING ? self->host : self;
  twasm_instance *caller = self->kind == RT_FUNC_BINDING ? self->owner : NULL;
  const rt_sig *sig = host->sig;
  twasm_val inline_vals[2 * RT_INLINE_VALS];
  uint32_t n = sig->nparams + sig->nresults;
  twasm_val *vals = n <= 2 * RT_INLINE_VALS ? inline_vals : malloc(n * sizeof *vals);
  twasm_trap trap;
  if (!vals) {
    rt_trap_fill(&trap, TWASM_TRAP_HOST, NULL, UINT32_MAX, 0);
    rt_trap_raise(&trap);
  }
  twasm_val *res = vals + sig->nparams;
  rt_vals_from_slots(sig->kinds, args, sig->nparams, vals);
  for (uint32_t i = 0; i < sig->nresults; i++) res[i] = (twasm_val){.kind = sig->kinds[sig->nparams + i]};
  memset(&trap, 0, sizeof trap);
  trap.func_index = UINT32_MAX;
  int failed = host->host_fn(host->env, caller, vals, res, &trap);
  if (!failed) rt_slots_from_vals(res, sig->nresults, results);
  if (vals != inline_vals) free(vals);
  if (failed) {
    if (trap.code == TWASM_TRAP_NONE) trap.code = TWASM_TRAP_HOST;
    if (!trap.message[0]) strcpy(trap.message, twasm_trap_message(trap.code));
    rt_trap_raise(&trap);
  }
}
