/* dec_code.c: the code section: function bodies, their locals and code. */
#include "dec_internal.h"

/* Far below the spec's 2^32-1: every local becomes a stack slot, and a
 * limit keeps a hostile module from asking for gigabytes of them. */
#define DEC_MAX_LOCALS 50000
/* Each local costs a byte here; tiny bodies declaring 50000 locals each
 * would otherwise turn a megabyte of input into gigabytes. */
#define DEC_MAX_MODULE_LOCALS (1u << 24)

/* Locals are run-length encoded; the first pass sums the runs (refusing an
 * absurd total before anything is allocated), the second expands them. */
static bool locals(dec_reader *r, wasm_func *f) {
  uint32_t nruns, n;
  uint64_t total = 0;
  uint8_t t;
  if (!dec_count(r, &nruns)) return false;
  size_t runs_at = r->pos;
  for (uint32_t i = 0; i < nruns; i++) {
    size_t at = r->pos;
    if (!dec_u32r(r, &n)) return false;
    total += n;
    if (total > DEC_MAX_LOCALS) return tw_fail(r->d, (uint32_t)at, "too many locals");
    if (!dec_valtype(r, &t)) return false;
  }
  r->module_locals += total;
  if (r->module_locals > DEC_MAX_MODULE_LOCALS)
    return tw_fail(r->d, (uint32_t)runs_at, "too many locals");
  uint8_t *types = tw_arena_alloc(r->arena, (size_t)total + 1);
  r->pos = runs_at;
  for (uint32_t i = 0, k = 0; i < nruns; i++) {
    dec_u32r(r, &n);
    dec_byte(r, &t);
    for (uint32_t j = 0; j < n; j++) types[k++] = t;
  }
  f->locals = types;
  f->nlocals = (uint32_t)total;
  return true;
}

static bool body(dec_reader *r, wasm_func *f) {
  uint32_t size;
  f->body_offset = (uint32_t)r->pos;
  if (!dec_bytes_len(r, &size)) return false;
  f->body_size = size;
  size_t section_end = r->end;
  r->end = r->pos + size;
  if (!locals(r, f) || !dec_insns(r, true, &f->code, &f->ncode)) return false;
  if (r->pos != r->end) return tw_fail(r->d, (uint32_t)r->pos, "END opcode expected");
  r->end = section_end;
  return true;
}

bool dec_code_section(dec_reader *r) {
  wasm_module *m = r->m;
  uint32_t n;
  size_t at = r->pos;
  r->has_code_section = true;
  if (!dec_u32r(r, &n)) return false;
  if (n != r->ndefined_funcs)
    return tw_fail(r->d, (uint32_t)at, "function and code section have inconsistent lengths");
  wasm_func *defined = m->funcs + (m->nfuncs - n);
  for (uint32_t i = 0; i < n; i++)
    if (!body(r, &defined[i])) return false;
  return true;
}
